//===- ONNXTensorFolding.h - ONNX data movement on constant tensors -*- C++ -*-===//
//
// ONNX models compute shapes at run time (Shape -> Gather -> Concat ->
// Reshape); Kiln's shapes are static, so the shape and data-movement
// converters (ONNXShapeOps.cpp) compute such results at import when their
// inputs are constants. These functions do that index arithmetic on
// onnx::Tensor (ONNXModel.h) once for all operators: a data-movement
// operator is "output element at multi-index o = input element at flat
// index f(o)" (remap). Element conversions follow ONNX Cast (opset 13-21).
// The results are bound with NodeContext::setConstant; this header needs
// no MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CORE_IMPORT_ONNXTENSORFOLDING_H
#define KILN_CORE_IMPORT_ONNXTENSORFOLDING_H

#include "ONNXModel.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstdint>
#include <vector>

namespace kiln::onnx::fold {

/// The most elements a result folded at import may have (2^24, 64 MiB of
/// float32): larger results of constant inputs are computed by TOSA ops at
/// run time instead, where the tensor size limits apply.
constexpr int64_t kMaxFoldElements = int64_t(1) << 24;

/// True when a result of `dims` is small enough to fold (kMaxFoldElements).
bool foldable(llvm::ArrayRef<int64_t> dims);

/// Row-major strides of `dims`.
std::vector<int64_t> stridesOf(llvm::ArrayRef<int64_t> dims);

/// An empty tensor of `type` and `dims` (data to be appended).
Tensor emptyTensor(int32_t type, std::vector<int64_t> dims);

/// A tensor of `type` and `dims` holding `values` (ints, or floats for a
/// float type).
Tensor makeTensor(int32_t type, std::vector<int64_t> dims, llvm::ArrayRef<double> values);

/// An int64 tensor of `dims` holding `values`.
Tensor int64Tensor(std::vector<int64_t> dims, std::vector<int64_t> values);

/// Appends element `i` of `src` to `dst` (same storage kind).
void appendElement(Tensor &dst, const Tensor &src, int64_t i);

/// Output flat index -> input flat index, given the output multi-index; -1
/// selects the fill value (Pad's constant).
using IndexMap = llvm::function_ref<int64_t(llvm::ArrayRef<int64_t> outIndex)>;

/// The tensor of `outDims` whose element at multi-index o is
/// src[map(o)] (or `fill` where map gives -1): every data-movement fold.
Tensor remap(const Tensor &src, std::vector<int64_t> outDims, IndexMap map, double fill = 0);

/// `src` with new dims (same elements in the same order).
Tensor reshapedTensor(const Tensor &src, std::vector<int64_t> dims);

/// Concatenation of same-typed `parts` along `axis` into `outDims`.
Tensor concatTensors(llvm::ArrayRef<const Tensor *> parts, int64_t axis,
                     std::vector<int64_t> outDims);

/// `v` wrapped to the range of integer type `type` (two's complement, as a
/// C cast does); bool is v != 0.
int64_t wrapInt(int64_t v, int32_t type);

/// Float -> integer as ONNX Cast does: truncation toward zero (NaN and
/// out-of-range values, which ONNX leaves undefined, saturate; NaN gives 0).
int64_t truncateToInt(float f);

/// `src` converted to element type `to` (ONNX Cast on constants). Float
/// types are all held as float32 (see ONNXModel.h).
Tensor castTensor(const Tensor &src, int32_t to);

} // namespace kiln::onnx::fold

#endif
