//===- TosaBuilder.cpp - The TOSA builders both importers use -------------===//
#include "TosaBuilder.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace kiln {

using namespace mlir;

RankedTensorType TosaBuilder::f32Type(llvm::ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, b->getF32Type());
}

Value TosaBuilder::constF32(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<float> values) {
  auto type = f32Type(shape);
  return b->create<tosa::ConstOp>(location, type, DenseElementsAttr::get(type, values));
}

Value TosaBuilder::constI32(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int32_t> values) {
  auto type = RankedTensorType::get(shape, b->getI32Type());
  return b->create<tosa::ConstOp>(location, type, DenseElementsAttr::get(type, values));
}

Value TosaBuilder::constI64(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get(shape, b->getI64Type());
  return b->create<tosa::ConstOp>(location, type, DenseElementsAttr::get(type, values));
}

Value TosaBuilder::scalarF32(float value, int64_t rank) {
  return constF32(llvm::SmallVector<int64_t>(rank, 1), {value});
}

Value TosaBuilder::scalarOf(Type element, double value, int64_t rank) {
  llvm::SmallVector<int64_t> shape(rank, 1);
  auto type = RankedTensorType::get(shape, element);
  if (element.isF32())
    return constF32(shape, {float(value)});
  unsigned width = element.getIntOrFloatBitWidth();
  double lo = width == 1 ? 0 : -std::ldexp(1.0, width - 1);
  double hi = width == 1 ? 1 : std::ldexp(1.0, width - 1) - 1;
  // ldexp(1, 63) - 1 rounds to 2^63: clamp in the integer domain.
  int64_t v = value <= lo   ? (width == 64 ? INT64_MIN : int64_t(lo))
              : value >= hi ? (width == 64 ? INT64_MAX : int64_t(hi))
                            : int64_t(value);
  llvm::APInt bits(width, uint64_t(v), /*isSigned=*/width > 1);
  return b->create<tosa::ConstOp>(location, type,
                                  DenseElementsAttr::get(type, llvm::ArrayRef<llvm::APInt>(bits)));
}

Value TosaBuilder::iotaI32(llvm::ArrayRef<int64_t> shape, int64_t axis) {
  int64_t n = 1, inner = 1;
  for (int64_t d : shape)
    n *= d;
  for (size_t d = axis + 1; d < shape.size(); ++d)
    inner *= shape[d];
  std::vector<int32_t> values(n);
  for (int64_t p = 0; p < n; ++p)
    values[p] = int32_t((p / inner) % shape[axis]);
  return constI32(shape, values);
}

Value TosaBuilder::reshape(Value value, llvm::ArrayRef<int64_t> shape) {
  auto type = value.getType().cast<RankedTensorType>();
  if (type.getShape() == shape)
    return value;
  return b->create<tosa::ReshapeOp>(location, RankedTensorType::get(shape, type.getElementType()),
                                    value, b->getDenseI64ArrayAttr(shape));
}

Value TosaBuilder::transpose(Value value, llvm::ArrayRef<int32_t> perm) {
  auto type = value.getType().cast<RankedTensorType>();
  llvm::SmallVector<int64_t> shape;
  bool identity = true;
  for (size_t k = 0; k < perm.size(); ++k) {
    shape.push_back(type.getDimSize(perm[k]));
    identity &= perm[k] == int32_t(k);
  }
  if (identity)
    return value;
  Value perms = constI32({int64_t(perm.size())}, perm);
  return b->create<tosa::TransposeOp>(
      location, RankedTensorType::get(shape, type.getElementType()), value, perms);
}

Value TosaBuilder::slice(Value value, llvm::ArrayRef<int64_t> start, llvm::ArrayRef<int64_t> size) {
  auto type = value.getType().cast<RankedTensorType>();
  if (llvm::all_of(start, [](int64_t s) { return s == 0; }) && type.getShape() == size)
    return value;
  return b->create<tosa::SliceOp>(location, RankedTensorType::get(size, type.getElementType()),
                                  value, b->getDenseI64ArrayAttr(start),
                                  b->getDenseI64ArrayAttr(size));
}

Value TosaBuilder::broadcastRank(Value value, int64_t rank) {
  auto type = value.getType().cast<RankedTensorType>();
  if (type.getRank() >= rank)
    return value;
  llvm::SmallVector<int64_t> shape(rank - type.getRank(), 1);
  shape.append(type.getShape().begin(), type.getShape().end());
  return reshape(value, shape);
}

Value TosaBuilder::padZeros(Value value, llvm::ArrayRef<int64_t> before,
                            llvm::ArrayRef<int64_t> after) {
  auto type = value.getType().cast<RankedTensorType>();
  llvm::SmallVector<int64_t> shape(type.getShape());
  std::vector<int32_t> pads;
  bool any = false;
  for (size_t d = 0; d < shape.size(); ++d) {
    pads.push_back(int32_t(before[d]));
    pads.push_back(int32_t(after[d]));
    shape[d] += before[d] + after[d];
    any |= before[d] != 0 || after[d] != 0;
  }
  if (!any)
    return value;
  Type element = type.getElementType();
  return b->create<tosa::PadOp>(location, RankedTensorType::get(shape, element), value,
                                constI32({int64_t(shape.size()), 2}, pads),
                                scalarOf(element, 0.0, 0), nullptr);
}

llvm::SmallVector<int64_t, 3> TosaBuilder::axisView(llvm::ArrayRef<int64_t> shape, int64_t d) {
  auto product = [](llvm::ArrayRef<int64_t> dims) {
    int64_t n = 1;
    for (int64_t x : dims)
      n *= x;
    return n;
  };
  return {product(shape.take_front(d)), shape[d], product(shape.drop_front(d + 1))};
}

Value TosaBuilder::reverseAxis(Value value, int64_t d) {
  llvm::SmallVector<int64_t> shape(value.getType().cast<RankedTensorType>().getShape());
  if (shape[d] == 1)
    return value;
  Value view = reshape(value, axisView(shape, d));
  view = b->create<tosa::ReverseOp>(location, view.getType(), view, b->getI64IntegerAttr(1));
  return reshape(view, shape);
}

Value TosaBuilder::tileAxis(Value value, int64_t d, int64_t times) {
  if (times == 1)
    return value;
  auto type = value.getType().cast<RankedTensorType>();
  llvm::SmallVector<int64_t> shape(type.getShape());
  auto view = axisView(shape, d);
  Value x = reshape(value, view);
  llvm::SmallVector<int64_t> tiled = {view[0], view[1] * times, view[2]};
  x = b->create<tosa::TileOp>(location, RankedTensorType::get(tiled, type.getElementType()), x,
                              b->getDenseI64ArrayAttr({1, times, 1}));
  shape[d] *= times;
  return reshape(x, shape);
}

Value TosaBuilder::tile(Value value, llvm::ArrayRef<int64_t> repeats) {
  if (llvm::all_of(repeats, [](int64_t r) { return r == 1; }))
    return value;
  if (repeats.size() <= 4) {
    auto type = value.getType().cast<RankedTensorType>();
    llvm::SmallVector<int64_t> shape(type.getShape());
    for (size_t d = 0; d < shape.size(); ++d)
      shape[d] *= repeats[d];
    return b->create<tosa::TileOp>(location, RankedTensorType::get(shape, type.getElementType()),
                                   value, b->getDenseI64ArrayAttr(repeats));
  }
  for (size_t d = 0; d < repeats.size(); ++d)
    value = tileAxis(value, d, repeats[d]);
  return value;
}

Value TosaBuilder::broadcastTo(Value value, llvm::ArrayRef<int64_t> shape) {
  value = broadcastRank(value, shape.size());
  auto in = value.getType().cast<RankedTensorType>().getShape();
  llvm::SmallVector<int64_t> repeats;
  for (size_t d = 0; d < shape.size(); ++d)
    repeats.push_back(in[d] == shape[d] ? 1 : shape[d]);
  return tile(value, repeats);
}

Value TosaBuilder::concat(llvm::ArrayRef<Value> parts, int64_t axis) {
  if (parts.size() == 1)
    return parts.front();
  auto type = parts.front().getType().cast<RankedTensorType>();
  llvm::SmallVector<int64_t> shape(type.getShape());
  shape[axis] = 0;
  for (Value p : parts)
    shape[axis] += p.getType().cast<RankedTensorType>().getDimSize(axis);
  return b->create<tosa::ConcatOp>(location, RankedTensorType::get(shape, type.getElementType()),
                                   parts, b->getI64IntegerAttr(axis));
}

Value TosaBuilder::argMaxMiddle(Value value, bool last) {
  auto shape = value.getType().cast<RankedTensorType>().getShape();
  int64_t outer = shape[0], k = shape[1], inner = shape[2];
  if (last) // the first maximum of the reversed axis is the last one
    value = b->create<tosa::ReverseOp>(location, value.getType(), value, b->getI64IntegerAttr(1));
  Value idx =
      b->create<tosa::ArgMaxOp>(location, RankedTensorType::get({outer, inner}, b->getI32Type()),
                                value, b->getI64IntegerAttr(1));
  idx = reshape(idx, {outer, 1, inner});
  if (last)
    idx =
        b->create<tosa::SubOp>(location, idx.getType(), constI32({1, 1, 1}, {int32_t(k - 1)}), idx);
  return idx;
}

Value TosaBuilder::gatherTuples(Value values, Value tuples, llvm::ArrayRef<int32_t> strides) {
  auto tupleType = tuples.getType().cast<RankedTensorType>();
  int64_t batch = tupleType.getDimSize(0), l = tupleType.getDimSize(1);
  int64_t m = static_cast<int64_t>(strides.size());
  Value scaled = b->create<tosa::MulOp>(location, tupleType, tuples, constI32({1, 1, m}, strides),
                                        b->getI32IntegerAttr(0));
  Value rows =
      b->create<tosa::ReduceSumOp>(location, RankedTensorType::get({batch, l, 1}, b->getI32Type()),
                                   scaled, b->getI64IntegerAttr(2));
  auto valuesType = values.getType().cast<RankedTensorType>();
  return b->create<tosa::GatherOp>(
      location,
      RankedTensorType::get({batch, l, valuesType.getDimSize(2)}, valuesType.getElementType()),
      values, reshape(rows, {batch, l}));
}

Value TosaBuilder::clamp(Value value, float lo, float hi) {
  // Saturating float -> int32 (NaN bounds do not occur: callers pass
  // literal or attribute bounds the converters checked).
  auto saturate = [](float v) {
    return int64_t(std::clamp(double(v), -2147483648.0, 2147483647.0));
  };
  return b->create<tosa::ClampOp>(location, value.getType(), value,
                                  b->getI64IntegerAttr(saturate(lo)),
                                  b->getI64IntegerAttr(saturate(hi)), b->getF32FloatAttr(lo),
                                  b->getF32FloatAttr(hi));
}

} // namespace kiln
