//===- ONNXReductionOps.cpp - ONNX Reduction converters -----------------------------===//
#include "ONNXConverter.h"

using namespace mlir;

namespace kiln::onnx {

void registerReductionOps(ConverterTable &table) {}

} // namespace kiln::onnx
