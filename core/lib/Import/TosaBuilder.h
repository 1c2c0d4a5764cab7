//===- TosaBuilder.h - The TOSA builders both importers use ----*- C++ -*-===//
//
// Constants, reshapes, transposes, slices, rank broadcasts and clamps as both front
// ends emit them (TOSA 0.60, MLIR 16's tosa dialect). The TFLite OpContext
// and the ONNX NodeContext derive from TosaBuilder, so a converter of
// either front end calls ctx.reshape(...), ctx.clamp(...) alike and the two
// cannot drift apart. Multi-axis reductions are in TosaReduce.h.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CORE_IMPORT_TOSABUILDER_H
#define KILN_CORE_IMPORT_TOSABUILDER_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace kiln {

/// Builds TOSA ops at one location (the source operator's) with one
/// OpBuilder; every result has a static shape computed here.
class TosaBuilder {
public:
  TosaBuilder(mlir::OpBuilder &builder, mlir::Location loc) : b(&builder), location(loc) {}

  mlir::OpBuilder &builder() { return *b; }
  mlir::Location loc() const { return location; }

  /// f32 tensor type of `shape`.
  mlir::RankedTensorType f32Type(llvm::ArrayRef<int64_t> shape);
  /// tosa.const of `shape` holding `values` (one value per element, or one
  /// for a splat).
  mlir::Value constF32(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<float> values);
  mlir::Value constI32(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int32_t> values);
  mlir::Value constI64(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> values);
  /// A rank-`rank` f32 tensor of shape [1, ..., 1] holding `value` (an
  /// operand TOSA's elementwise ops broadcast).
  mlir::Value scalarF32(float value, int64_t rank);
  /// The same of element type `element` (f32, i1, i8, i16, i32 or i64;
  /// `value` converted, saturated to an integer type's range).
  mlir::Value scalarOf(mlir::Type element, double value, int64_t rank);
  /// A constant i32 tensor of `shape` whose element at each position is its
  /// coordinate along `axis` (0, 1, ..., shape[axis] - 1).
  mlir::Value iotaI32(llvm::ArrayRef<int64_t> shape, int64_t axis);
  /// tosa.reshape of `value` to `shape` (same element count); `value`
  /// itself when it has that shape already.
  mlir::Value reshape(mlir::Value value, llvm::ArrayRef<int64_t> shape);
  /// tosa.transpose: result dimension k is input dimension perm[k]; `value`
  /// itself for the identity permutation.
  mlir::Value transpose(mlir::Value value, llvm::ArrayRef<int32_t> perm);
  /// tosa.slice of `value` from `start`, `size` elements per dimension (the
  /// element type kept); `value` itself when that is all of it.
  mlir::Value slice(mlir::Value value, llvm::ArrayRef<int64_t> start, llvm::ArrayRef<int64_t> size);
  /// Reshapes `value` to `rank` by prepending 1s (numpy broadcasting);
  /// `value` itself when its rank is `rank` or more.
  mlir::Value broadcastRank(mlir::Value value, int64_t rank);
  /// tosa.pad of `value` by before[d] and after[d] elements per dimension
  /// (one entry per dimension), with zeros of its element type; `value`
  /// itself when nothing is padded.
  mlir::Value padZeros(mlir::Value value, llvm::ArrayRef<int64_t> before,
                       llvm::ArrayRef<int64_t> after);
  /// `shape` viewed as rank 3 around dimension `d`: [prod(shape[:d]),
  /// shape[d], prod(shape[d+1:])] (TOSA's reverse and tile take ranks 1 to
  /// 4, so any rank works through this view).
  static llvm::SmallVector<int64_t, 3> axisView(llvm::ArrayRef<int64_t> shape, int64_t d);
  /// tosa.reverse of dimension `d` of `value` (on its axisView); `value`
  /// itself when that dimension has size 1.
  mlir::Value reverseAxis(mlir::Value value, int64_t d);
  /// Dimension `d` of `value` repeated `times` times (tosa.tile on the
  /// axisView): element o comes from o[d] % shape[d].
  mlir::Value tileAxis(mlir::Value value, int64_t d, int64_t times);
  /// `value` with dimension d repeated repeats[d] times (one entry per
  /// dimension): one tosa.tile for ranks 1 to 4, one tileAxis per repeated
  /// dimension above; `value` itself when every repeat is 1.
  mlir::Value tile(mlir::Value value, llvm::ArrayRef<int64_t> repeats);
  /// `value` broadcast (numpy rules) to `shape`, which has rank >= its rank
  /// and, per dimension, either its size or a size where it has 1: a
  /// reshape to the rank (broadcastRank), then tile().
  mlir::Value broadcastTo(mlir::Value value, llvm::ArrayRef<int64_t> shape);
  /// tosa.concat of `parts` (same shape off `axis`) along `axis`; the one
  /// part itself.
  mlir::Value concat(llvm::ArrayRef<mlir::Value> parts, int64_t axis);
  /// Index (i32, shaped [outer, 1, inner]) of the first maximum along
  /// dimension 1 of an f32 [outer, K, inner] `value` (the last maximum with
  /// `last`: tosa.argmax of the reversed axis, k - 1 - index). tosa.argmax
  /// returns the first of equal maxima, as TFLite's arg_min_max.h and ONNX
  /// ArgMax (select_last_index 0) do.
  mlir::Value argMaxMiddle(mlir::Value value, bool last);
  /// GatherND's gather: `values` [B, K, C] read at rows given by index
  /// tuples `tuples` (i32 [B, L, m], each component in range) that address
  /// K as m dimensions with row-major `strides` (m entries): the tuples
  /// dotted with the strides (tosa.mul, tosa.reduce_sum), one tosa.gather.
  /// Result [B, L, C]. ONNX GatherND and TFLite GATHER_ND.
  mlir::Value gatherTuples(mlir::Value values, mlir::Value tuples, llvm::ArrayRef<int32_t> strides);
  /// tosa.clamp of a float tensor to [lo, hi] (either may be infinite). The
  /// integer bounds TOSA 0.60 also takes (unused for float inputs) are the
  /// float bounds saturated to [-2^31, 2^31 - 1], so the op reads the same
  /// range whatever its element type.
  mlir::Value clamp(mlir::Value value, float lo, float hi);

protected:
  mlir::OpBuilder *b;
  mlir::Location location;
};

} // namespace kiln

#endif
