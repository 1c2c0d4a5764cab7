//===- ONNXConvOps.cpp - ONNX Conv converters -----------------------------===//
#include "ONNXConverter.h"

using namespace mlir;

namespace kiln::onnx {

void registerConvOps(ConverterTable &table) {}

} // namespace kiln::onnx
