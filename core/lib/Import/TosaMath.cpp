//===- TosaMath.cpp - Elementwise math both importers lower alike ---------===//
#include "TosaMath.h"

#include <algorithm>
#include <cmath>

namespace kiln::tosa_math {

using namespace mlir;

Type elementOf(Value v) { return v.getType().cast<ShapedType>().getElementType(); }
int64_t rankOf(Value v) { return v.getType().cast<RankedTensorType>().getRank(); }

RankedTensorType resultType(Value a, Value b, Type element) {
  auto ta = a.getType().cast<RankedTensorType>(), tb = b.getType().cast<RankedTensorType>();
  llvm::SmallVector<int64_t> shape;
  for (int64_t k = 0; k < ta.getRank(); ++k)
    shape.push_back(ta.getDimSize(k) == 1 ? tb.getDimSize(k) : ta.getDimSize(k));
  return RankedTensorType::get(shape, element);
}

Value mul(TosaBuilder &b, Value x, Value y) {
  return b.builder()
      .create<tosa::MulOp>(b.loc(), resultType(x, y, elementOf(x)), x, y,
                           b.builder().getI32IntegerAttr(0))
      .getResult();
}

Value linear(TosaBuilder &b, Value x, Value w, Value bias) {
  auto dims = [](Value v) { return v.getType().cast<RankedTensorType>().getShape(); };
  int64_t m = dims(x)[0], k = dims(x)[1], n = dims(w)[0];
  OpBuilder &ob = b.builder();
  if (w.getDefiningOp<tosa::ConstOp>() && (!bias || bias.getDefiningOp<tosa::ConstOp>())) {
    Value bb = bias ? bias : b.constF32({n}, {0.0f});
    return ob.create<tosa::FullyConnectedOp>(b.loc(), b.f32Type({m, n}), x, w, bb, nullptr)
        .getResult();
  }
  Value wt = b.reshape(b.transpose(w, {1, 0}), {1, k, n});
  Value y = ob.create<tosa::MatMulOp>(b.loc(), b.f32Type({1, m, n}), b.reshape(x, {1, m, k}), wt)
                .getResult();
  y = b.reshape(y, {m, n});
  return bias ? binary<tosa::AddOp>(b, y, b.reshape(bias, {1, n})) : y;
}

Value select(TosaBuilder &b, Value cond, Value x, Value y) {
  llvm::SmallVector<int64_t> shape;
  for (int64_t k = 0; k < rankOf(x); ++k) {
    int64_t d = 1;
    for (Value v : {cond, x, y})
      d = std::max(d, v.getType().cast<RankedTensorType>().getDimSize(k));
    shape.push_back(d);
  }
  return b.builder()
      .create<tosa::SelectOp>(b.loc(), RankedTensorType::get(shape, elementOf(x)), cond, x, y)
      .getResult();
}

Value scalarLike(TosaBuilder &b, double value, Value like) {
  Type element = elementOf(like);
  int64_t rank = rankOf(like);
  llvm::SmallVector<int64_t> ones(rank, 1);
  if (element.isF32())
    return b.scalarF32(float(value), rank);
  if (element.isInteger(32))
    return b.constI32(ones, {int32_t(value)});
  if (element.isInteger(1))
    return b.scalarOf(element, value, rank);
  return b.constI64(ones, {int64_t(value)});
}

Value roundHalfEven(TosaBuilder &b, Value x) {
  Value f = unary<tosa::FloorOp>(b, x);
  Value d = binary<tosa::SubOp>(b, x, f);
  Value half = scalarLike(b, 0.5, x);
  Value halfF = mul(b, f, half);
  Value odd = compare<tosa::GreaterOp>(b, halfF, unary<tosa::FloorOp>(b, halfF));
  Value tie = binary<tosa::LogicalAndOp>(b, compare<tosa::EqualOp>(b, d, half), odd);
  Value up = binary<tosa::LogicalOrOp>(b, compare<tosa::GreaterOp>(b, d, half), tie);
  Value rounded = select(b, up, binary<tosa::AddOp>(b, f, scalarLike(b, 1, x)), f);
  // inf - floor(inf) is NaN: keep x where it is not finite.
  Value finite = compare<tosa::EqualOp>(b, d, d);
  return select(b, finite, rounded, x);
}

ReducedAngle reduceByPi(TosaBuilder &b, Value x) {
  static constexpr double c1 = 3.140625, c2 = 9.67502593994140625e-4, c3 = 1.509957990978376432e-7;
  Value k = unary<tosa::FloorOp>(
      b, binary<tosa::AddOp>(b, mul(b, x, scalarLike(b, M_1_PI, x)), scalarLike(b, 0.5, x)));
  Value r = x;
  for (double part : {c1, c2, c3})
    r = binary<tosa::SubOp>(b, r, mul(b, k, scalarLike(b, part, x)));
  Value halfK = mul(b, k, scalarLike(b, 0.5, x));
  return {r, compare<tosa::GreaterOp>(b, halfK, unary<tosa::FloorOp>(b, halfK))};
}

Value evenPolynomial(TosaBuilder &b, Value r2, llvm::ArrayRef<double> coef) {
  Value p = scalarLike(b, coef.back(), r2);
  for (int k = int(coef.size()) - 2; k >= 0; --k)
    p = binary<tosa::AddOp>(b, mul(b, p, r2), scalarLike(b, coef[k], r2));
  return p;
}

Value sinOrCos(TosaBuilder &b, Value x, bool cosine) {
  ReducedAngle a = reduceByPi(b, x);
  Value r2 = mul(b, a.r, a.r);
  Value y =
      cosine
          ? evenPolynomial(
                b, r2,
                {1.0, -1.0 / 2, 1.0 / 24, -1.0 / 720, 1.0 / 40320, -1.0 / 3628800, 1.0 / 479001600})
          : mul(b, a.r,
                evenPolynomial(
                    b, r2, {1.0, -1.0 / 6, 1.0 / 120, -1.0 / 5040, 1.0 / 362880, -1.0 / 39916800}));
  return b.clamp(select(b, a.odd, unary<tosa::NegateOp>(b, y), y), -1.0f, 1.0f);
}

Value elu(TosaBuilder &b, Value x, double alpha) {
  Value expm1 = binary<tosa::SubOp>(b, unary<tosa::ExpOp>(b, x), scalarLike(b, 1, x));
  Value negative = compare<tosa::GreaterOp>(b, scalarLike(b, 0, x), x);
  return select(b, negative, mul(b, expm1, scalarLike(b, alpha, x)), x);
}

Value truncatingCast(TosaBuilder &b, Value v, RankedTensorType to) {
  Value negative = compare<tosa::GreaterOp>(b, scalarLike(b, 0, v), v);
  Value truncated = select(b, negative, unary<tosa::CeilOp>(b, v), unary<tosa::FloorOp>(b, v));
  return b.builder().create<tosa::CastOp>(b.loc(), to, truncated).getResult();
}

Value floatRemainder(TosaBuilder &b, Value x, Value y, bool truncated) {
  Value q = mul(b, x, unary<tosa::ReciprocalOp>(b, y));
  Value whole = unary<tosa::FloorOp>(b, q);
  if (truncated)
    whole = select(b, compare<tosa::GreaterOp>(b, scalarLike(b, 0, q), q),
                   unary<tosa::CeilOp>(b, q), whole);
  return binary<tosa::SubOp>(b, x, mul(b, y, whole));
}

namespace {
/// tosa.div of x by y with y = 0 and y = -1 replaced by 1: the truncated
/// quotient, the remainder (x's sign), the divisor used.
struct IntDivision {
  Value quotient, remainder, divisor;
};
IntDivision safeDivide(TosaBuilder &b, Value x, Value y) {
  Value unsafe = binary<tosa::LogicalOrOp>(b, compare<tosa::EqualOp>(b, y, scalarLike(b, 0, y)),
                                           compare<tosa::EqualOp>(b, y, scalarLike(b, -1, y)));
  Value divisor = select(b, unsafe, scalarLike(b, 1, y), y);
  Value q = binary<tosa::DivOp>(b, x, divisor);
  return {q, binary<tosa::SubOp>(b, x, mul(b, q, divisor)), divisor};
}

/// Where a non-zero remainder `r`'s sign differs from the divisor's (floor
/// division then rounds the quotient down one step and adds y to `r`).
Value needsFloorFix(TosaBuilder &b, Value r, Value divisor) {
  Value zero = scalarLike(b, 0, r);
  Value rNeg = compare<tosa::GreaterOp>(b, zero, r);
  Value yNeg = compare<tosa::GreaterOp>(b, zero, divisor);
  Value differ = binary<tosa::LogicalXorOp>(b, rNeg, yNeg);
  Value nonZero = unary<tosa::LogicalNotOp>(b, compare<tosa::EqualOp>(b, r, zero));
  return binary<tosa::LogicalAndOp>(b, differ, nonZero);
}
} // namespace

Value remainderI32(TosaBuilder &b, Value x, Value y, bool floored) {
  IntDivision d = safeDivide(b, x, y);
  if (!floored)
    return d.remainder;
  Value fix = needsFloorFix(b, d.remainder, d.divisor);
  return select(b, fix, binary<tosa::AddOp>(b, d.remainder, d.divisor), d.remainder);
}

Value floorDivideI32(TosaBuilder &b, Value x, Value y) {
  IntDivision d = safeDivide(b, x, y);
  Value fix = needsFloorFix(b, d.remainder, d.divisor);
  Value q = select(b, fix, binary<tosa::SubOp>(b, d.quotient, scalarLike(b, 1, y)), d.quotient);
  // x / -1 is -x (INT_MIN wraps to itself), not the x that dividing by the
  // replaced divisor 1 gave.
  Value byMinusOne = compare<tosa::EqualOp>(b, y, scalarLike(b, -1, y));
  return select(b, byMinusOne, unary<tosa::NegateOp>(b, x), q);
}

} // namespace kiln::tosa_math
