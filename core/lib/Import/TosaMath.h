//===- TosaMath.h - Elementwise math both importers lower alike -*- C++ -*-===//
//
// Elementwise lowerings that TOSA 0.60 (MLIR 16) has no single op for, shared
// by the ONNX and TFLite converters so that the two front ends compute them
// the same way: round half to even, sine and cosine by range reduction and a
// series, ELU, float -> integer casts that truncate, and remainders (floored
// or truncated) for float32 and int32. Plus the small builders they are made
// of (broadcasting binary ops, comparisons, select, splat constants).
//
// Operands of the binary builders have one rank (TosaBuilder::broadcastRank);
// results take the broadcast of the operand shapes, which must be static.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CORE_IMPORT_TOSAMATH_H
#define KILN_CORE_IMPORT_TOSAMATH_H

#include "TosaBuilder.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/ArrayRef.h"

namespace kiln::tosa_math {

/// Element type and rank of a ranked tensor value.
mlir::Type elementOf(mlir::Value v);
int64_t rankOf(mlir::Value v);

/// The broadcast result type of two equal-rank operands, of `element`.
mlir::RankedTensorType resultType(mlir::Value a, mlir::Value b, mlir::Type element);

/// A binary TOSA op whose result has `a`'s element type.
template <typename OpTy> mlir::Value binary(TosaBuilder &b, mlir::Value x, mlir::Value y) {
  return b.builder().create<OpTy>(b.loc(), resultType(x, y, elementOf(x)), x, y).getResult();
}

/// A comparison (tosa.equal / greater / greater_equal): an i1 result.
template <typename OpTy> mlir::Value compare(TosaBuilder &b, mlir::Value x, mlir::Value y) {
  return b.builder()
      .create<OpTy>(b.loc(), resultType(x, y, b.builder().getI1Type()), x, y)
      .getResult();
}

/// A unary TOSA op of `x`'s type.
template <typename OpTy> mlir::Value unary(TosaBuilder &b, mlir::Value x) {
  return b.builder().create<OpTy>(b.loc(), x.getType(), x).getResult();
}

/// tosa.mul with shift 0 (float, int32 or int64), broadcast.
mlir::Value mul(TosaBuilder &b, mlir::Value x, mlir::Value y);

/// tosa.select(cond, x, y), all three of one rank, broadcast.
mlir::Value select(TosaBuilder &b, mlir::Value cond, mlir::Value x, mlir::Value y);

/// The most time steps times directions a recurrent operator is unrolled
/// to (ONNX LSTM/GRU/RNN, TFLite UNIDIRECTIONAL_SEQUENCE_LSTM/_RNN,
/// BIDIRECTIONAL_SEQUENCE_LSTM). Each step is ~15-25 TOSA ops and the
/// compile time grows about quadratically with the steps (100 steps: ~12 s,
/// 600: over 8 minutes on one core), so longer sequences are refused rather
/// than left to compile for hours.
constexpr int64_t kMaxUnrolledSteps = 512;

/// x [M, K] times w^T (w [N, K], f32) plus `bias` ([N], or null): the
/// matrix product of a recurrent cell's gates. One tosa.fully_connected
/// when w (and bias) are constants, whose [N, K] weight layout they are
/// already in; else tosa.transpose and tosa.matmul, then the bias added.
mlir::Value linear(TosaBuilder &b, mlir::Value x, mlir::Value w, mlir::Value bias);

/// A ones-shaped tensor of `like`'s rank and element type (f32, i1, i32 or
/// i64) holding `value`.
mlir::Value scalarLike(TosaBuilder &b, double value, mlir::Value like);

/// Round half to even of a float32 tensor (numpy.round, ONNX Round, TFLite
/// ROUND: tensorflow/lite/kernels/internal/reference/round.h RoundToNearest).
/// TOSA 0.60 has no round: f = floor(x), d = x - f (exact), y = d > 0.5 or
/// (d == 0.5 and f odd) ? f + 1 : f. Integral x gives d = 0; +-inf and NaN
/// are kept.
mlir::Value roundHalfEven(TosaBuilder &b, mlir::Value x);

/// x = k pi + r with integral k and |r| <= pi/2, by Cody-Waite reduction:
/// pi = C1 + C2 + C3 (Cephes' sinf split, times 4), k * C1 exact for
/// |k| < 2^16; accurate to about 1e-7 * |k|. `odd` is true where k is odd.
struct ReducedAngle {
  mlir::Value r, odd;
};
ReducedAngle reduceByPi(TosaBuilder &b, mlir::Value x);

/// sum_k coef[k] r2^k by Horner's rule.
mlir::Value evenPolynomial(TosaBuilder &b, mlir::Value r2, llvm::ArrayRef<double> coef);

/// sin(x) or cos(x) of a float32 tensor (TOSA 0.60 has neither): x = k pi +
/// r (reduceByPi), sin(x) = (-1)^k sin(r), cos(x) = (-1)^k cos(r), with the
/// Maclaurin series of sin to r^11 / cos to r^12 (truncation below 6e-8 on
/// |r| <= pi/2). Large |x| loses accuracy as float32 range reduction does
/// (about 1e-7 |x| / pi: 0.03 at |x| = 1e6; README, "Special values"), and
/// the result is clamped to [-1, 1]. NaN and +-inf give NaN.
mlir::Value sinOrCos(TosaBuilder &b, mlir::Value x, bool cosine);

/// ELU of a float32 tensor: x < 0 ? alpha * (exp(x) - 1) : x (ONNX Elu;
/// TFLite ELU with alpha 1, tensorflow/lite/kernels/elu.cc / activations.cc).
mlir::Value elu(TosaBuilder &b, mlir::Value x, double alpha);

/// Float32 -> integer `to` with truncation toward zero (C's static_cast,
/// ONNX Cast, TFLite CAST; tosa.cast rounds to nearest): ceil for negative
/// values, floor otherwise, then tosa.cast. Out-of-range values saturate
/// (tosa.cast's lowering clamps).
mlir::Value truncatingCast(TosaBuilder &b, mlir::Value v, mlir::RankedTensorType to);

/// Float32 remainder of x / y (equal ranks, broadcast): x - y * floor(x /
/// y) (the divisor's sign: Python's %, TFLite FLOOR_MOD, ONNX Mod fmod = 0
/// as Kiln reads it) or x - y * trunc(x / y) (`truncated`: the dividend's
/// sign, C fmod, ONNX Mod fmod = 1). x / y is x * reciprocal(y) (MLIR 16's
/// tosa.div is int32 only), one extra rounding: an exact integral quotient
/// may land on the neighbouring integer's side, off by |y|.
mlir::Value floatRemainder(TosaBuilder &b, mlir::Value x, mlir::Value y, bool truncated);

/// int32 remainder of x / y (equal ranks, broadcast) from tosa.div, whose
/// divisor y = 0 and y = -1 are replaced by 1 first (no trap, no INT_MIN /
/// -1 overflow; the remainder is then 0): truncated (x's sign, C's %), or
/// `floored` (the divisor's sign: Python's %, TFLite FLOOR_MOD,
/// tensorflow/lite/kernels/floor_mod.cc, which stops with "Division by 0"
/// where Kiln gives 0).
mlir::Value remainderI32(TosaBuilder &b, mlir::Value x, mlir::Value y, bool floored);

/// int32 floor(x / y) (equal ranks, broadcast; Python's //, TFLite
/// FLOOR_DIV, tensorflow/lite/kernels/floor_div.cc): tosa.div's truncated
/// quotient, one less where the remainder is non-zero and of the other sign
/// than y. y = -1 gives -x (INT_MIN stays INT_MIN); y = 0 gives x (TFLite
/// stops with "Division by 0").
mlir::Value floorDivideI32(TosaBuilder &b, mlir::Value x, mlir::Value y);

} // namespace kiln::tosa_math

#endif
