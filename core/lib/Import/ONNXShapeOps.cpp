//===- ONNXShapeOps.cpp - ONNX Shape converters -----------------------------===//
#include "ONNXConverter.h"

using namespace mlir;

namespace kiln::onnx {

void registerShapeOps(ConverterTable &table) {}

} // namespace kiln::onnx
