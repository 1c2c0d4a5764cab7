//===- ONNXResizeOps.cpp - ONNX Resize converters -----------------------------===//
#include "ONNXConverter.h"

using namespace mlir;

namespace kiln::onnx {

void registerResizeOps(ConverterTable &table) {}

} // namespace kiln::onnx
