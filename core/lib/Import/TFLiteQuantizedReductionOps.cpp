//===- TFLiteQuantizedReductionOps.cpp - int8 reductions and SOFTMAX --------===//
//
// MEAN (TFLite's integer mean and requantization), SOFTMAX (TFLite's
// exp lookup table and fixed-point normalization), REDUCE_MAX / REDUCE_MIN.
// Semantics: tensorflow/lite/kernels (reference integer kernels); see
// TFLiteQuantizedOps.h for the shared builders.
//
//===----------------------------------------------------------------------===//
#include "TFLiteQuantizedOps.h"
#include "TFLiteWindow.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;

namespace kiln::tfl {
namespace {
using namespace quant;

// --- MEAN ---------------------------------------------------------------------

/// Binds output 0 to table[s + 128 n] for each int32 sum s of `sum` (sums
/// of n int8 values, so s + 128 n indexes the 255 n + 1 entries), reshaped
/// to `resultShape`: a tosa.gather from the table as an i8 constant.
LogicalResult bindSumTable(OpContext &ctx, Value sum, int64_t n,
                           llvm::ArrayRef<int64_t> resultShape, llvm::ArrayRef<int8_t> table) {
  llvm::ArrayRef<int64_t> kept = shapeOf(sum);
  int64_t total = 1;
  for (int64_t d : kept)
    total *= d;
  llvm::SmallVector<int64_t> ones(kept.size(), 1);
  auto i32 = tensorOf(kept, i32Type(ctx));
  Value index = ctx.create<tosa::AddOp>(i32, sum, ctx.constI32(ones, {int32_t(128 * n)}));
  Value values = ctx.reshape(constI8(ctx, {static_cast<int64_t>(table.size())}, table),
                             {1, static_cast<int64_t>(table.size()), 1});
  Value gathered = ctx.create<tosa::GatherOp>(tensorOf({1, total, 1}, i8Type(ctx)), values,
                                              ctx.reshape(index, {1, total}));
  return ctx.setOutput(0, ctx.reshape(gathered, resultShape));
}

/// MEAN on int8 (TFLite 2.9 reduce.cc EvalMean), by case:
/// - keep_dims over the H and W of a 4-D input (reference_integer_ops::Mean):
///   s = sum(x - zi); s = MBQM(s, si / so); s rounded-divided (half away
///   from zero) by the element count; plus zo.
/// - equal input and output quantization (reference_ops::Mean): the int32
///   sum of the raw values divided by the count, truncating.
/// - otherwise (QuantizedMeanOrSum): round(float(sum) / n * (si / so) -
///   zi * (si / so)) + zo in float; evaluated at import for every possible
///   sum into a table (counts up to 1024).
LogicalResult convertMean(OpContext &ctx) {
  const auto *opts = ctx.options<schema::ReducerOptions>();
  bool keepDims = opts && opts->keep_dims();
  auto in = inQuant(ctx, 0), out = outQuant(ctx);
  auto input = ctx.input(0);
  auto axesOr = ctx.constantInts(1);
  if (failed(in) || failed(out) || failed(input) || failed(axesOr))
    return failure();
  const TensorQuant &i = **in, &o = **out;
  llvm::ArrayRef<int64_t> shape = shapeOf(*input);
  int64_t rank = shape.size();
  std::vector<int64_t> axes;
  for (int64_t a : *axesOr) {
    int64_t axis = a < 0 ? a + rank : a;
    if (axis < 0 || axis >= rank)
      return ctx.fail("axis " + llvm::Twine(a) + " is out of range for rank " + llvm::Twine(rank));
    if (!llvm::is_contained(axes, axis))
      axes.push_back(axis);
  }
  std::sort(axes.begin(), axes.end());
  auto b = ctx.builder();
  // The int32 sum of the raw values over `axes`, kept as size-1 dimensions.
  Value sum = ctx.create<tosa::CastOp>(tensorOf(shape, i32Type(ctx)), *input);
  llvm::SmallVector<int64_t> kept(shape);
  int64_t n = 1;
  for (int64_t axis : axes) {
    n *= shape[axis];
    kept[axis] = 1;
    sum =
        ctx.create<tosa::ReduceSumOp>(tensorOf(kept, i32Type(ctx)), sum, b.getI64IntegerAttr(axis));
  }
  if (n <= 0)
    return ctx.fail("MEAN over zero elements");
  // The result's own shape (keep_dims or not): setOutput checks it against
  // the shape the model declares, never a reshape to the declared one.
  llvm::SmallVector<int64_t> resultShape;
  for (int64_t d = 0; d < rank; ++d)
    if (keepDims || !llvm::is_contained(axes, d))
      resultShape.push_back(kept[d]);
  auto i32 = tensorOf(kept, i32Type(ctx));
  llvm::SmallVector<int64_t> ones(rank, 1);
  Value result;
  bool spatial = keepDims && rank == 4 && axes == std::vector<int64_t>{1, 2};
  if (spatial) {
    Value centered =
        ctx.create<tosa::SubOp>(i32, sum, ctx.constI32(ones, {int32_t(i.zeroPoint() * n)}));
    auto scaled = rescale(ctx, centered, i32Type(ctx), 0, 0,
                          {static_cast<double>(i.scale()) / static_cast<double>(o.scale())});
    if (failed(scaled))
      return failure();
    Value positive = ctx.create<tosa::GreaterOp>(tensorOf(kept, b.getI1Type()), *scaled,
                                                 ctx.constI32(ones, {0}));
    Value nudge = ctx.create<tosa::SelectOp>(i32, positive, ctx.constI32(ones, {int32_t(n / 2)}),
                                             ctx.constI32(ones, {-int32_t(n / 2)}));
    Value divided = ctx.create<tosa::DivOp>(i32, ctx.create<tosa::AddOp>(i32, *scaled, nudge),
                                            ctx.constI32(ones, {int32_t(n)}));
    result = ctx.create<tosa::AddOp>(i32, divided, ctx.constI32(ones, {o.zeroPoint()}));
  } else if (i.scales == o.scales && i.zeroPoints == o.zeroPoints) {
    result = ctx.create<tosa::DivOp>(i32, sum, ctx.constI32(ones, {int32_t(n)}));
  } else {
    if (n > 1024)
      return ctx.fail("MEAN over " + llvm::Twine(n) +
                      " elements with a requantized "
                      "output is not supported (at most 1024)");
    const float scale = i.scale() / o.scale();
    const float bias = -static_cast<float>(i.zeroPoint() + (i.fromUint8 ? 128 : 0)) * scale;
    const int32_t shift = i.fromUint8 ? 128 : 0, outShift = o.fromUint8 ? 128 : 0;
    std::vector<int8_t> table(255 * n + 1);
    for (int64_t s = -128 * n; s <= 127 * n; ++s) {
      // The sum TFLite sees is of the stored values (uint8: + 128 each).
      int64_t stored = s + shift * n;
      float mean = static_cast<float>(stored) / static_cast<float>(n);
      float r = std::round(mean * scale + bias) + static_cast<float>(o.zeroPoint() + outShift);
      r = std::min(r, static_cast<float>(o.fromUint8 ? 255 : 127));
      r = std::max(r, static_cast<float>(o.fromUint8 ? 0 : -128));
      table[s + 128 * n] = static_cast<int8_t>(static_cast<int32_t>(r) - outShift);
    }
    return bindSumTable(ctx, sum, n, resultShape, table);
  }
  Value clamped = clampInt(ctx, result, -128, 127);
  Value narrow = ctx.create<tosa::CastOp>(tensorOf(kept, i8Type(ctx)), clamped);
  return ctx.setOutput(0, ctx.reshape(narrow, resultShape));
}

// --- SOFTMAX ----------------------------------------------------------------

/// SOFTMAX on int8 as TFLite's optimized kernel computes it
/// (optimized_ops::Softmax with PopulateSoftmaxLookupTable): a 256-entry
/// float table t[255 - d] = expf(-input_scale * beta * d); per row, with m
/// the row's largest input, e_j = t[255 - m + x_j], sum = sum of e_j in
/// order, p_j = e_j * (1 / (sum * output_scale)), output round(p_j) +
/// zero_point, saturated. The output must be scale 1/256, zero point -128.
LogicalResult convertSoftmax(OpContext &ctx) {
  const auto *opts = ctx.options<schema::SoftmaxOptions>();
  float beta = opts ? opts->beta() : 1.0f;
  auto in = inQuant(ctx, 0), out = outQuant(ctx);
  auto input = ctx.input(0);
  if (failed(in) || failed(out) || failed(input))
    return failure();
  if (ctx.inputShape(0).empty())
    return ctx.fail("expects an input of rank 1 or more");
  if ((*out)->scale() != 1.0f / 256 || (*out)->zeroPoint() != -128)
    return ctx.fail("the int8 output must have scale 1/256 and zero point -128 "
                    "(TFLite's requirement), it has " +
                    describeQuant(**out));
  llvm::ArrayRef<int64_t> shape = shapeOf(*input);
  int64_t rank = shape.size(), total = 1;
  for (int64_t d : shape)
    total *= d;
  std::vector<float> table(256);
  const float scale = -(*in)->scale() * beta;
  for (int32_t v = 0; v <= 255; ++v)
    table[255 - v] = std::exp(scale * static_cast<float>(v));
  auto b = ctx.builder();
  Type f32 = b.getF32Type();
  llvm::SmallVector<int64_t> rowShape(shape);
  rowShape.back() = 1;
  Value rowMax = ctx.create<tosa::ReduceMaxOp>(tensorOf(rowShape, i8Type(ctx)), *input,
                                               b.getI64IntegerAttr(rank - 1));
  Value x32 = ctx.create<tosa::CastOp>(tensorOf(shape, i32Type(ctx)), *input);
  Value max32 = ctx.create<tosa::CastOp>(tensorOf(rowShape, i32Type(ctx)), rowMax);
  Value diff = ctx.create<tosa::SubOp>(tensorOf(shape, i32Type(ctx)), x32, max32);
  llvm::SmallVector<int64_t> ones(rank, 1);
  Value index =
      ctx.create<tosa::AddOp>(tensorOf(shape, i32Type(ctx)), diff, ctx.constI32(ones, {255}));
  Value values = ctx.constF32({1, 256, 1}, table);
  Value gathered = ctx.create<tosa::GatherOp>(tensorOf({1, total, 1}, f32), values,
                                              ctx.reshape(index, {1, total}));
  Value e = ctx.reshape(gathered, shape);
  Value sum =
      ctx.create<tosa::ReduceSumOp>(tensorOf(rowShape, f32), e, b.getI64IntegerAttr(rank - 1));
  Value scaled = ctx.create<tosa::MulOp>(
      tensorOf(rowShape, f32), sum, ctx.constF32(ones, {(*out)->scale()}), b.getI32IntegerAttr(0));
  Value inv = ctx.create<tosa::ReciprocalOp>(tensorOf(rowShape, f32), scaled);
  Value p = ctx.create<tosa::MulOp>(tensorOf(shape, f32), e, inv, b.getI32IntegerAttr(0));
  // round(p) for p >= 0, half away from zero, exactly: floor(p) plus one
  // when the (exact) fraction p - floor(p) is at least 1/2.
  Value whole = ctx.create<tosa::FloorOp>(tensorOf(shape, f32), p);
  Value fraction = ctx.create<tosa::SubOp>(tensorOf(shape, f32), p, whole);
  Value up = ctx.create<tosa::GreaterEqualOp>(tensorOf(shape, b.getI1Type()), fraction,
                                              ctx.constF32(ones, {0.5f}));
  Value step = ctx.create<tosa::SelectOp>(tensorOf(shape, f32), up, ctx.constF32(ones, {1.0f}),
                                          ctx.constF32(ones, {0.0f}));
  Value rounded = ctx.create<tosa::AddOp>(tensorOf(shape, f32), whole, step);
  Value q = ctx.create<tosa::CastOp>(tensorOf(shape, i32Type(ctx)), rounded);
  Value shifted =
      ctx.create<tosa::AddOp>(tensorOf(shape, i32Type(ctx)), q, ctx.constI32(ones, {-128}));
  Value clamped = clampInt(ctx, shifted, -128, 127);
  return ctx.setOutput(0, ctx.create<tosa::CastOp>(tensorOf(shape, i8Type(ctx)), clamped));
}

// --- SUM ---------------------------------------------------------------------

/// SUM on int8/uint8 with an output quantized differently from the input
/// (TFLite 2.9 reduce.cc EvalSum -> QuantizedMeanOrSum with compute_sum):
/// scale = si / so and bias = -zi * scale * n in float32, output
/// round(sum * scale + bias) + zo, sum the int32 sum of the stored values,
/// then cast to the 8-bit type WITHOUT saturation (2.9 wraps a result
/// beyond the type's range; sum_hw_keepdims_saturating shows it); evaluated
/// at import for every possible sum into a table (at most 1024 elements). An output quantized as
/// the input makes TFLite sum the raw int8 values with int8 wraparound: refused.
LogicalResult convertSum(OpContext &ctx) {
  const auto *opts = ctx.options<schema::ReducerOptions>();
  bool keepDims = opts && opts->keep_dims();
  auto in = inQuant(ctx, 0), out = outQuant(ctx);
  auto input = ctx.input(0);
  auto axesOr = ctx.constantInts(1);
  if (failed(in) || failed(out) || failed(input) || failed(axesOr))
    return failure();
  const TensorQuant &i = **in, &o = **out;
  if (i.scales == o.scales && i.zeroPoints == o.zeroPoints)
    return ctx.fail("an output quantized as the input is not supported (TFLite then adds the "
                    "raw int8 values with wraparound); give the output its own scale");
  llvm::ArrayRef<int64_t> shape = shapeOf(*input);
  int64_t rank = shape.size();
  llvm::SmallVector<int64_t> kept(shape), resultShape;
  llvm::SmallVector<bool> reduced(rank, false);
  for (int64_t a : *axesOr) {
    if (a < -rank || a >= rank)
      return ctx.fail("axis " + llvm::Twine(a) + " is out of range for rank " + llvm::Twine(rank));
    reduced[a < 0 ? a + rank : a] = true;
  }
  int64_t n = 1;
  Value sum = ctx.create<tosa::CastOp>(tensorOf(shape, i32Type(ctx)), *input);
  for (int64_t d = 0; d < rank; ++d) {
    if (reduced[d]) {
      n *= shape[d];
      kept[d] = 1;
      sum = ctx.create<tosa::ReduceSumOp>(tensorOf(kept, i32Type(ctx)), sum,
                                          ctx.builder().getI64IntegerAttr(d));
    }
  }
  for (int64_t d = 0; d < rank; ++d)
    if (keepDims || !reduced[d])
      resultShape.push_back(kept[d]);
  if (n <= 0 || n > 1024)
    return ctx.fail("SUM over " + llvm::Twine(n) +
                    " elements is not supported (1 to 1024 with an int8 output)");
  const float scale = i.scale() / o.scale();
  const int32_t shift = i.fromUint8 ? 128 : 0, outShift = o.fromUint8 ? 128 : 0;
  const float bias = -static_cast<float>(i.zeroPoint() + shift) * scale * static_cast<float>(n);
  std::vector<int8_t> table(255 * n + 1);
  for (int64_t s = -128 * n; s <= 127 * n; ++s) {
    float stored = static_cast<float>(s + shift * n); // the sum TFLite sees
    int64_t v = static_cast<int64_t>(std::round(stored * scale + bias)) + o.zeroPoint() + outShift;
    int64_t byte = ((v % 256) + 256) % 256; // static_cast<int8_t / uint8_t>: wraps
    table[s + 128 * n] =
        static_cast<int8_t>(o.fromUint8 ? byte - 128 : (byte >= 128 ? byte - 256 : byte));
  }
  return bindSumTable(ctx, sum, n, resultShape, table);
}

// --- REDUCE_MAX / REDUCE_MIN ---------------------------------------------------

/// REDUCE_MAX / REDUCE_MIN on int8/uint8 (reduce.cc EvalType on the raw
/// values): the float converter (tosa.reduce_max / reduce_min on i8) once
/// the output has the input's scale and zero point, which TFLite 2.9
/// requires for int8 max and min (reduce.cc:721, checked at Eval).
LogicalResult convertReduceMaxMin(OpContext &ctx) {
  auto in = inQuant(ctx, 0);
  auto out = outQuant(ctx);
  if (failed(in) || failed(out))
    return failure();
  if ((*in)->scales != (*out)->scales || (*in)->zeroPoints != (*out)->zeroPoints)
    return ctx.fail("the output (" + describeQuant(**out) +
                    ") has another quantization than the input (" + describeQuant(**in) +
                    "); TFLite's int8 " + ctx.name() + " requires them equal (reduce.cc)");
  return converters().at(ctx.code())(ctx);
}

} // namespace

void registerQuantizedReductionOps(ConverterTable &table) {
  table[BuiltinOperator::MEAN] = convertMean;
  table[BuiltinOperator::SOFTMAX] = convertSoftmax;
  table[BuiltinOperator::SUM] = convertSum;
  table[BuiltinOperator::REDUCE_MAX] = convertReduceMaxMin;
  table[BuiltinOperator::REDUCE_MIN] = convertReduceMaxMin;
}

} // namespace kiln::tfl
