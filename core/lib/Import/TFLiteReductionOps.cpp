//===- TFLiteReductionOps.cpp - Reductions and softmax --------------------===//
#include "TFLiteConverter.h"

using namespace mlir;

namespace kiln::tfl {
namespace {} // namespace

void registerReductionOps(ConverterTable &table) { (void)table; }

} // namespace kiln::tfl
