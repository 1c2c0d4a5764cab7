//===- TosaReduce.cpp - Multi-axis reductions in TOSA ---------------------===//
#include "TosaReduce.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

using namespace mlir;

namespace kiln {

static Value reshape(OpBuilder &b, Location loc, Value value, llvm::ArrayRef<int64_t> shape) {
  auto type = value.getType().cast<RankedTensorType>();
  if (type.getShape() == shape)
    return value;
  return b.create<tosa::ReshapeOp>(loc, RankedTensorType::get(shape, type.getElementType()),
                                   value, b.getDenseI64ArrayAttr(shape));
}

static Value transpose(OpBuilder &b, Location loc, Value value, llvm::ArrayRef<int32_t> perm) {
  auto type = value.getType().cast<RankedTensorType>();
  llvm::SmallVector<int64_t> shape;
  for (int32_t p : perm)
    shape.push_back(type.getDimSize(p));
  auto permType = RankedTensorType::get({int64_t(perm.size())}, b.getI32Type());
  Value permValue =
      b.create<tosa::ConstOp>(loc, permType, DenseElementsAttr::get(permType, perm));
  return b.create<tosa::TransposeOp>(loc, RankedTensorType::get(shape, type.getElementType()),
                                     value, permValue);
}

/// One TOSA reduction over `axis`, which stays as a size-1 dimension.
static Value reduceAxis(OpBuilder &b, Location loc, Value value, int64_t axis,
                        TosaReduction kind) {
  auto type = value.getType().cast<RankedTensorType>();
  llvm::SmallVector<int64_t> shape(type.getShape());
  shape[axis] = 1;
  auto result = RankedTensorType::get(shape, type.getElementType());
  IntegerAttr attr = b.getI64IntegerAttr(axis);
  switch (kind) {
  case TosaReduction::Max: return b.create<tosa::ReduceMaxOp>(loc, result, value, attr);
  case TosaReduction::Min: return b.create<tosa::ReduceMinOp>(loc, result, value, attr);
  case TosaReduction::Prod: return b.create<tosa::ReduceProdOp>(loc, result, value, attr);
  case TosaReduction::Sum: break;
  }
  return b.create<tosa::ReduceSumOp>(loc, result, value, attr);
}

Value reduceDims(OpBuilder &b, Location loc, Value value, llvm::ArrayRef<bool> reduced,
                 TosaReduction kind) {
  llvm::SmallVector<int64_t> shape(value.getType().cast<RankedTensorType>().getShape());
  llvm::SmallVector<int64_t> keepShape;
  for (size_t i = 0; i < shape.size(); ++i)
    keepShape.push_back(reduced[i] ? 1 : shape[i]);
  // Runs of equally flagged dimensions merge; size-1 dimensions drop out.
  llvm::SmallVector<int64_t> groups;
  llvm::SmallVector<bool> groupReduced;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1)
      continue;
    if (!groups.empty() && groupReduced.back() == reduced[i]) {
      groups.back() *= shape[i];
    } else {
      groups.push_back(shape[i]);
      groupReduced.push_back(reduced[i]);
    }
  }
  if (!llvm::is_contained(groupReduced, true))
    return reshape(b, loc, value, keepShape);
  value = reshape(b, loc, value, groups);
  if (groups.size() > 4) {
    // Alternating kept/reduced groups: kept ones first (in order), so the
    // [kept, reduced] view reduces to keepShape's layout.
    llvm::SmallVector<int32_t> perm;
    int64_t kept = 1, folded = 1;
    for (bool pickReduced : {false, true})
      for (size_t g = 0; g < groups.size(); ++g)
        if (groupReduced[g] == pickReduced) {
          perm.push_back(int32_t(g));
          (pickReduced ? folded : kept) *= groups[g];
        }
    value = reshape(b, loc, transpose(b, loc, value, perm), {kept, folded});
    groupReduced = {false, true};
  }
  for (size_t g = 0; g < groupReduced.size(); ++g)
    if (groupReduced[g])
      value = reduceAxis(b, loc, value, int64_t(g), kind);
  return reshape(b, loc, value, keepShape);
}

} // namespace kiln
