//===- ONNXTensorFolding.cpp - ONNX data movement on constant tensors -----===//
//
// See ONNXTensorFolding.h.
//
//===----------------------------------------------------------------------===//
#include "ONNXTensorFolding.h"
#include "ONNXConverter.h" // product

#include <cmath>
#include <limits>

namespace kiln::onnx::fold {

/// The most elements a result folded at import may have (2^24, 64 MiB of
/// float32): larger results of constant inputs are computed by TOSA ops at
/// run time instead, where the tensor size limits apply.
bool foldable(llvm::ArrayRef<int64_t> dims) { return product(dims) <= kMaxFoldElements; }

/// Row-major strides of `dims`.
std::vector<int64_t> stridesOf(llvm::ArrayRef<int64_t> dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t d = int64_t(dims.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * dims[d + 1];
  return strides;
}

/// An empty tensor of `type` and `dims` (data to be appended).
Tensor emptyTensor(int32_t type, std::vector<int64_t> dims) {
  Tensor t;
  t.dataType = type;
  t.dims = std::move(dims);
  return t;
}

/// A tensor of `type` and `dims` holding `values` (ints, or floats for a
/// float type).
Tensor makeTensor(int32_t type, std::vector<int64_t> dims, llvm::ArrayRef<double> values) {
  Tensor t = emptyTensor(type, std::move(dims));
  for (double v : values) {
    if (t.isFloat())
      t.floats.push_back(float(v));
    else
      t.ints.push_back(int64_t(v));
  }
  return t;
}

Tensor int64Tensor(std::vector<int64_t> dims, std::vector<int64_t> values) {
  Tensor t = emptyTensor(kInt64, std::move(dims));
  t.ints = std::move(values);
  return t;
}

/// Appends element `i` of `src` to `dst` (same storage kind).
void appendElement(Tensor &dst, const Tensor &src, int64_t i) {
  if (src.isFloat())
    dst.floats.push_back(src.floats[i]);
  else
    dst.ints.push_back(src.ints[i]);
}

/// Output flat index -> input flat index, given the output multi-index; -1
/// selects the fill value (Pad's constant).

/// The tensor of `outDims` whose element at multi-index o is
/// src[map(o)] (or `fill` where map gives -1): every data-movement fold.
Tensor remap(const Tensor &src, std::vector<int64_t> outDims, IndexMap map, double fill) {
  Tensor out = emptyTensor(src.dataType, outDims);
  int64_t count = product(outDims);
  std::vector<int64_t> index(outDims.size(), 0);
  for (int64_t n = 0; n < count; ++n) {
    int64_t from = map(index);
    if (from < 0) {
      if (out.isFloat())
        out.floats.push_back(float(fill));
      else
        out.ints.push_back(int64_t(fill));
    } else {
      appendElement(out, src, from);
    }
    for (int64_t d = int64_t(index.size()) - 1; d >= 0; --d) {
      if (++index[d] < outDims[d])
        break;
      index[d] = 0;
    }
  }
  return out;
}

/// `src` with new dims (same elements in the same order).
Tensor reshapedTensor(const Tensor &src, std::vector<int64_t> dims) {
  Tensor out = src;
  out.dims = std::move(dims);
  return out;
}

/// Concatenation of same-typed `parts` along `axis` into `outDims`.
Tensor concatTensors(llvm::ArrayRef<const Tensor *> parts, int64_t axis,
                     std::vector<int64_t> outDims) {
  Tensor out = emptyTensor(parts.front()->dataType, outDims);
  int64_t outer = product(llvm::ArrayRef<int64_t>(outDims).take_front(axis));
  for (int64_t o = 0; o < outer; ++o)
    for (const Tensor *part : parts) {
      int64_t chunk = product(llvm::ArrayRef<int64_t>(part->dims).drop_front(axis));
      for (int64_t i = 0; i < chunk; ++i)
        appendElement(out, *part, o * chunk + i);
    }
  return out;
}

/// `v` wrapped to the range of integer type `type` (two's complement, as a
/// C cast does); bool is v != 0.
int64_t wrapInt(int64_t v, int32_t type) {
  switch (type) {
  case kBool:
    return v != 0;
  case kInt8:
    return int8_t(v);
  case kUInt8:
    return uint8_t(v);
  case kInt16:
    return int16_t(v);
  case kUInt16:
    return uint16_t(v);
  case kInt32:
    return int32_t(v);
  case kUInt32:
    return uint32_t(v);
  default:
    return v;
  }
}

/// Float -> integer as ONNX Cast does: truncation toward zero (NaN and
/// out-of-range values, which ONNX leaves undefined, saturate; NaN gives 0).
int64_t truncateToInt(float f) {
  if (std::isnan(f))
    return 0;
  double t = std::trunc(double(f));
  if (t >= 9.2233720368547758e18)
    return std::numeric_limits<int64_t>::max();
  if (t <= -9.2233720368547758e18)
    return std::numeric_limits<int64_t>::min();
  return int64_t(t);
}

/// `src` converted to element type `to` (ONNX Cast on constants). Float
/// types are all held as float32 (see ONNXModel.h).
Tensor castTensor(const Tensor &src, int32_t to) {
  Tensor out = emptyTensor(to, src.dims);
  int64_t n = src.numElements();
  for (int64_t i = 0; i < n; ++i) {
    if (out.isFloat())
      out.floats.push_back(src.isFloat() ? src.floats[i] : float(src.ints[i]));
    else if (src.isFloat())
      out.ints.push_back(to == kBool ? int64_t(src.floats[i] != 0.0f)
                                     : wrapInt(truncateToInt(src.floats[i]), to));
    else
      out.ints.push_back(wrapInt(src.ints[i], to));
  }
  return out;
}

} // namespace kiln::onnx::fold
