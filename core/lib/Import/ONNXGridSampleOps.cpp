//===- ONNXGridSampleOps.cpp - ONNX GridSample, RoiAlign ------------------===//
//
// Sampling at locations computed at run time: RoiAlign (below) and
// GridSample (16) -> TOSA: X [N, C, H, W] sampled at the grid's
// normalized (x, y) locations (grid [N, Ho, Wo, 2], computed at run time),
// as PyTorch's grid_sample computes it (the ONNX test data are its
// outputs):
//   - the location unnormalized: align_corners = 1 maps -1 and 1 to the
//     corner pixels' centers, (g + 1) / 2 * (size - 1); 0 to the corner
//     pixels' outer edges, ((g + 1) * size - 1) / 2;
//   - padding_mode border clamps the location into [0, size - 1],
//     reflection reflects it about the edges (align_corners: the corner
//     centers, else the outer edges) and then clamps; zeros leaves it, and
//     taps outside the input read 0 (bicubic applies the padding to each
//     tap's integer coordinate instead, as PyTorch does);
//   - mode nearest rounds (halves to even), bilinear weights the 4 pixels
//     around it, bicubic the 4 x 4 with the cubic convolution kernel of
//     A = -0.75.
// Every tap is one tosa.gather of X viewed as [N, H * W, C] at a row index
// computed in float32 (exact below 2^24 pixels) and converted to i32.
//
//===----------------------------------------------------------------------===//
#include "ONNXConverter.h"

#include <array>
#include <string>
#include <vector>

using namespace mlir;

namespace kiln::onnx {
namespace {

/// f32 elementwise arithmetic on [N, P, 1] tensors (TOSA broadcasts).
struct Arith {
  NodeContext &ctx;
  std::vector<int64_t> shape;

  RankedTensorType type() { return ctx.f32Type(shape); }
  RankedTensorType boolType() { return RankedTensorType::get(shape, ctx.builder().getI1Type()); }
  Value c(double v) { return ctx.scalarF32(float(v), int64_t(shape.size())); }
  Value add(Value a, Value b) { return ctx.create<tosa::AddOp>(type(), a, b); }
  Value sub(Value a, Value b) { return ctx.create<tosa::SubOp>(type(), a, b); }
  Value mul(Value a, Value b) {
    return ctx.create<tosa::MulOp>(type(), a, b, ctx.builder().getI32IntegerAttr(0));
  }
  Value floor(Value a) { return ctx.create<tosa::FloorOp>(type(), a); }
  Value abs(Value a) { return ctx.create<tosa::AbsOp>(type(), a); }
  Value gt(Value a, Value b) { return ctx.create<tosa::GreaterOp>(boolType(), a, b); }
  Value ge(Value a, Value b) { return ctx.create<tosa::GreaterEqualOp>(boolType(), a, b); }
  Value eq(Value a, Value b) { return ctx.create<tosa::EqualOp>(boolType(), a, b); }
  Value both(Value a, Value b) { return ctx.create<tosa::LogicalAndOp>(boolType(), a, b); }
  Value select(Value c, Value a, Value b) { return ctx.create<tosa::SelectOp>(type(), c, a, b); }
  Value clamp(Value a, float lo, float hi) { return ctx.clamp(a, lo, hi); }
  /// Halves to even, as std::nearbyint (convertRound's form).
  Value round(Value x) {
    Value f = floor(x), d = sub(x, f);
    Value halfF = mul(f, c(0.5));
    Value odd = gt(halfF, floor(halfF));
    Value tie = both(eq(d, c(0.5)), odd);
    Value up = ctx.create<tosa::LogicalOrOp>(boolType(), gt(d, c(0.5)), tie);
    return select(up, add(f, c(1)), f);
  }
};

/// PyTorch's reflect_coordinates: `x` reflected into [low, high] (twice
/// the bounds given, as PyTorch passes them).
Value reflect(Arith &a, Value x, double twiceLow, double twiceHigh) {
  if (twiceLow == twiceHigh)
    return a.c(0);
  double lo = twiceLow / 2, span = (twiceHigh - twiceLow) / 2;
  Value d = a.abs(a.sub(x, a.c(lo)));
  Value flips = a.floor(a.mul(d, a.c(1 / span)));
  Value extra = a.sub(d, a.mul(flips, a.c(span)));
  Value halfFlips = a.mul(flips, a.c(0.5));
  Value even = a.eq(halfFlips, a.floor(halfFlips));
  return a.select(even, a.add(extra, a.c(lo)), a.sub(a.c(span + lo), extra));
}

/// The padding of a location (or a bicubic tap's coordinate) along an axis
/// of `size`: border clamps, reflection reflects and clamps, zeros keeps.
Value pad(Arith &a, Value x, int64_t size, const std::string &mode, bool alignCorners) {
  if (mode == "border")
    return a.clamp(x, 0, float(size - 1));
  if (mode == "reflection") {
    x = alignCorners ? reflect(a, x, 0, 2.0 * (size - 1)) : reflect(a, x, -1, 2.0 * size - 1);
    return a.clamp(x, 0, float(size - 1));
  }
  return x;
}

/// One tap: integral coordinates and its weight.
struct Tap {
  Value x, y, weight;
};

/// The cubic convolution weights of the 4 taps around t in [0, 1)
/// (PyTorch's get_cubic_upsample_coefficients, A = -0.75).
std::array<Value, 4> cubicWeights(Arith &a, Value t) {
  const double k = -0.75;
  auto near = [&](Value x) { // ((A + 2) x - (A + 3)) x^2 + 1, |x| <= 1
    return a.add(a.mul(a.sub(a.mul(a.c(k + 2), x), a.c(k + 3)), a.mul(x, x)), a.c(1));
  };
  auto far = [&](Value x) { // ((A x - 5A) x + 8A) x - 4A, 1 < |x| < 2
    return a.sub(a.mul(a.add(a.mul(a.sub(a.mul(a.c(k), x), a.c(5 * k)), x), a.c(8 * k)), x),
                 a.c(4 * k));
  };
  Value one = a.c(1);
  return {far(a.add(t, one)), near(t), near(a.sub(one, t)), far(a.sub(a.c(2), t))};
}

/// GridSample (16; mode bilinear, padding_mode zeros, align_corners 0):
/// see the file comment. 4-D inputs only (opset 20's N-D form is refused).
LogicalResult convertGridSample(NodeContext &ctx) {
  std::vector<int64_t> xs = ctx.inputShape(0), gs = ctx.inputShape(1);
  if (xs.size() != 4 || gs.size() != 4 || gs[0] != xs[0] || gs[3] != 2)
    return ctx.fail("X " + shapeString(xs) + " and grid " + shapeString(gs) +
                    " must be [N, C, H, W] and [N, Ho, Wo, 2]; Kiln samples 2-D grids");
  if (!isFloatType(ctx.inputType(0)) || !isFloatType(ctx.inputType(1)))
    return ctx.fail("X and grid must be float32");
  std::string mode = ctx.attrString("mode", "bilinear");
  if (mode == "linear")
    mode = "bilinear";
  if (mode == "cubic")
    mode = "bicubic";
  std::string padding = ctx.attrString("padding_mode", "zeros");
  bool align = ctx.attrInt("align_corners", 0) != 0;
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic")
    return ctx.fail("mode '" + mode +
                    "' is not supported; Kiln takes bilinear, nearest and "
                    "bicubic");
  if (padding != "zeros" && padding != "border" && padding != "reflection")
    return ctx.fail("padding_mode '" + padding + "' is not one of zeros, border, reflection");
  int64_t n = xs[0], ch = xs[1], h = xs[2], w = xs[3], p = gs[1] * gs[2];
  if (h * w >= (int64_t(1) << 24))
    return ctx.fail("an input of " + llvm::Twine(h * w) +
                    " pixels per plane is above the "
                    "2^24 Kiln's GridSample indexes exactly");
  FailureOr<Value> x = ctx.input(0), grid = ctx.input(1);
  if (failed(x) || failed(grid))
    return failure();
  Value values = ctx.reshape(ctx.transposeToChannelsLast(*x), {n, h * w, ch});
  Value g = ctx.reshape(*grid, {n, p, 2});
  Arith a{ctx, {n, p, 1}};
  auto unnormalize = [&](Value v, int64_t size) {
    Value one = a.c(1);
    if (align)
      return a.mul(a.add(v, one), a.c(0.5 * double(size - 1)));
    return a.mul(a.sub(a.mul(a.add(v, one), a.c(double(size))), one), a.c(0.5));
  };
  Value px = unnormalize(ctx.slice(g, {0, 0, 0}, {n, p, 1}), w);
  Value py = unnormalize(ctx.slice(g, {0, 0, 1}, {n, p, 1}), h);
  std::vector<Tap> taps;
  bool tapPadding = mode == "bicubic"; // padding per tap coordinate
  if (!tapPadding) {
    px = pad(a, px, w, padding, align);
    py = pad(a, py, h, padding, align);
  }
  if (mode == "nearest") {
    taps.push_back({a.round(px), a.round(py), a.c(1)});
  } else if (mode == "bilinear") {
    Value x0 = a.floor(px), y0 = a.floor(py);
    Value fx = a.sub(px, x0), fy = a.sub(py, y0), one = a.c(1);
    Value x1 = a.add(x0, one), y1 = a.add(y0, one);
    Value gx = a.sub(one, fx), gy = a.sub(one, fy);
    taps = {{x0, y0, a.mul(gx, gy)},
            {x1, y0, a.mul(fx, gy)},
            {x0, y1, a.mul(gx, fy)},
            {x1, y1, a.mul(fx, fy)}};
  } else {
    Value x0 = a.floor(px), y0 = a.floor(py);
    std::array<Value, 4> wx = cubicWeights(a, a.sub(px, x0)), wy = cubicWeights(a, a.sub(py, y0));
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 4; ++i) {
        Value tx = pad(a, a.add(x0, a.c(i - 1)), w, padding, align);
        Value ty = pad(a, a.add(y0, a.c(j - 1)), h, padding, align);
        taps.push_back({tx, ty, a.mul(wx[i], wy[j])});
      }
  }
  auto &b = ctx.builder();
  auto outType = ctx.f32Type({n, p, ch});
  Value sum;
  for (const Tap &t : taps) {
    Value inside = a.both(a.both(a.ge(t.x, a.c(0)), a.ge(a.c(double(w - 1)), t.x)),
                          a.both(a.ge(t.y, a.c(0)), a.ge(a.c(double(h - 1)), t.y)));
    Value cx = a.clamp(t.x, 0, float(w - 1)), cy = a.clamp(t.y, 0, float(h - 1));
    Value row = a.add(a.mul(cy, a.c(double(w))), cx);
    Value index = ctx.create<tosa::CastOp>(RankedTensorType::get({n, p, 1}, b.getI32Type()), row);
    Value picked = ctx.create<tosa::GatherOp>(outType, values, ctx.reshape(index, {n, p}));
    Value weighted = ctx.create<tosa::MulOp>(outType, picked, t.weight, b.getI32IntegerAttr(0));
    Value term = ctx.create<tosa::SelectOp>(outType, inside, weighted, ctx.scalarF32(0, 3));
    sum = sum ? ctx.create<tosa::AddOp>(outType, sum, term) : term;
  }
  Value y = ctx.reshape(sum, {n, gs[1], gs[2], ch});
  return ctx.setOutput(0, ctx.transposeToChannelsFirst(y));
}

// --- RoiAlign -------------------------------------------------------------------

/// RoiAlign (10, 16; mode avg, output_height/width 1, sampling_ratio 0,
/// spatial_scale 1, coordinate_transformation_mode half_pixel from 16,
/// output_half_pixel before): X [N, C, H, W], rois [R, 4] (x1, y1, x2, y2)
/// and batch_indices [R], both computed at run time; output [R, C, oh,
/// ow]. Each bin averages (or, mode max, takes the largest weighted
/// corner of) sampling_ratio x sampling_ratio bilinear samples, as ONNX
/// Runtime computes them: a sample more than one pixel outside the map
/// reads 0, others clamp to the map's last row and column. sampling_ratio
/// 0 (samples from the ROI's run-time size) is refused.
LogicalResult convertRoiAlign(NodeContext &ctx) {
  std::vector<int64_t> xs = ctx.inputShape(0), rs = ctx.inputShape(1), bs = ctx.inputShape(2);
  if (xs.size() != 4 || rs.size() != 2 || rs[1] != 4 || bs != std::vector<int64_t>{rs[0]})
    return ctx.fail("X " + shapeString(xs) + ", rois " + shapeString(rs) + " and batch_indices " +
                    shapeString(bs) + " must be [N, C, H, W], [R, 4] and [R]");
  if (!isFloatType(ctx.inputType(0)) || !isFloatType(ctx.inputType(1)))
    return ctx.fail("X and rois must be float32");
  int64_t oh = ctx.attrInt("output_height", 1), ow = ctx.attrInt("output_width", 1);
  int64_t ratio = ctx.attrInt("sampling_ratio", 0);
  float scale = ctx.attrFloat("spatial_scale", 1.0f);
  std::string mode = ctx.attrString("mode", "avg");
  std::string transform = ctx.attrString("coordinate_transformation_mode",
                                         ctx.opset() >= 16 ? "half_pixel" : "output_half_pixel");
  if (ratio < 1)
    return ctx.fail("sampling_ratio " + llvm::Twine(ratio) +
                    " is not supported: with 0 the samples per bin follow the ROIs' run-time "
                    "size; Kiln takes sampling_ratio >= 1");
  if (oh < 1 || ow < 1 || (mode != "avg" && mode != "max") ||
      (transform != "half_pixel" && transform != "output_half_pixel"))
    return ctx.fail("output " + llvm::Twine(oh) + " x " + llvm::Twine(ow) + ", mode '" + mode +
                    "', coordinate_transformation_mode '" + transform + "' are not supported");
  int64_t n = xs[0], ch = xs[1], h = xs[2], w = xs[3], r = rs[0];
  int64_t samples = ratio * ratio, p = oh * ow * samples;
  if (n * h * w >= (int64_t(1) << 24))
    return ctx.fail("an input of " + llvm::Twine(n * h * w) +
                    " pixels is above the 2^24 "
                    "Kiln's RoiAlign indexes exactly");
  FailureOr<Value> x = ctx.input(0), rois = ctx.input(1), batch = ctx.input(2);
  if (failed(x) || failed(rois) || failed(batch))
    return failure();
  auto &b = ctx.builder();
  Value values = ctx.reshape(ctx.transposeToChannelsLast(*x), {1, n * h * w, ch});
  Arith a{ctx, {r, p, 1}};
  double offset = transform == "half_pixel" ? 0.5 : 0.0;
  auto coord = [&](int64_t k) {
    Value v = ctx.reshape(ctx.slice(*rois, {0, k}, {r, 1}), {r, 1, 1});
    return a.sub(a.mul(v, a.c(scale)), a.c(offset));
  };
  Value x1 = coord(0), y1 = coord(1), x2 = coord(2), y2 = coord(3);
  Value rw = a.sub(x2, x1), rh = a.sub(y2, y1);
  if (transform != "half_pixel") {
    rw = ctx.create<tosa::MaximumOp>(rw.getType(), rw, a.c(1));
    rh = ctx.create<tosa::MaximumOp>(rh.getType(), rh, a.c(1));
  }
  // Per sample: (ph + (iy + 0.5) / ratio) and the same along x, constants.
  std::vector<float> fy(p), fx(p);
  for (int64_t i = 0; i < oh; ++i)
    for (int64_t j = 0; j < ow; ++j)
      for (int64_t iy = 0; iy < ratio; ++iy)
        for (int64_t ix = 0; ix < ratio; ++ix) {
          int64_t k = ((i * ow + j) * ratio + iy) * ratio + ix;
          fy[k] = float((double(i) + (double(iy) + 0.5) / double(ratio)) / double(oh));
          fx[k] = float((double(j) + (double(ix) + 0.5) / double(ratio)) / double(ow));
        }
  Value sy = a.add(y1, a.mul(rh, ctx.constF32({1, p, 1}, fy)));
  Value sx = a.add(x1, a.mul(rw, ctx.constF32({1, p, 1}, fx)));
  Value outside = ctx.create<tosa::LogicalOrOp>(
      a.boolType(),
      ctx.create<tosa::LogicalOrOp>(a.boolType(), a.gt(a.c(-1), sy), a.gt(sy, a.c(double(h)))),
      ctx.create<tosa::LogicalOrOp>(a.boolType(), a.gt(a.c(-1), sx), a.gt(sx, a.c(double(w)))));
  // Clamp as ONNX Runtime's bilinear pre-computation does.
  auto corners = [&](Value v, int64_t size, Value &low, Value &high, Value &frac) {
    v = ctx.create<tosa::MaximumOp>(v.getType(), v, a.c(0));
    Value l = a.floor(v);
    Value last = a.ge(l, a.c(double(size - 1)));
    low = a.select(last, a.c(double(size - 1)), l);
    high = a.select(last, a.c(double(size - 1)), a.add(l, a.c(1)));
    frac = a.select(last, a.c(0), a.sub(v, l));
  };
  Value yl, yh, ly, xl, xh, lx;
  corners(sy, h, yl, yh, ly);
  corners(sx, w, xl, xh, lx);
  Value hy = a.sub(a.c(1), ly), hx = a.sub(a.c(1), lx);
  Value bi = ctx.create<tosa::CastOp>(ctx.f32Type({r}), *batch);
  Value base = a.mul(ctx.reshape(bi, {r, 1, 1}), a.c(double(h * w)));
  auto outType = ctx.f32Type({r, p, ch});
  auto tap = [&](Value yy, Value xx, Value weight) {
    Value row = a.add(base, a.add(a.mul(yy, a.c(double(w))), xx));
    row = a.clamp(row, 0, float(n * h * w - 1));
    Value index = ctx.create<tosa::CastOp>(RankedTensorType::get({r, p, 1}, b.getI32Type()), row);
    Value picked = ctx.create<tosa::GatherOp>(ctx.f32Type({1, r * p, ch}), values,
                                              ctx.reshape(index, {1, r * p}));
    weight = a.select(outside, a.c(0), weight);
    return Value(ctx.create<tosa::MulOp>(outType, ctx.reshape(picked, {r, p, ch}), weight,
                                         b.getI32IntegerAttr(0)));
  };
  std::array<Value, 4> parts = {tap(yl, xl, a.mul(hy, hx)), tap(yl, xh, a.mul(hy, lx)),
                                tap(yh, xl, a.mul(ly, hx)), tap(yh, xh, a.mul(ly, lx))};
  Value y;
  auto bins = ctx.f32Type({r, oh * ow, 1, ch});
  if (mode == "avg") {
    Value sum = parts[0];
    for (int k = 1; k < 4; ++k)
      sum = ctx.create<tosa::AddOp>(outType, sum, parts[k]);
    y = ctx.create<tosa::ReduceSumOp>(bins, ctx.reshape(sum, {r, oh * ow, samples, ch}),
                                      b.getI64IntegerAttr(2));
    y = ctx.create<tosa::MulOp>(bins, y, ctx.scalarF32(1.0f / float(samples), 4),
                                b.getI32IntegerAttr(0));
  } else {
    Value best = parts[0];
    for (int k = 1; k < 4; ++k)
      best = ctx.create<tosa::MaximumOp>(outType, best, parts[k]);
    y = ctx.create<tosa::ReduceMaxOp>(bins, ctx.reshape(best, {r, oh * ow, samples, ch}),
                                      b.getI64IntegerAttr(2));
  }
  return ctx.setOutput(0, ctx.transposeToChannelsFirst(ctx.reshape(y, {r, oh, ow, ch})));
}

} // namespace

void registerGridSampleOps(ConverterTable &table) {
  table["GridSample"] = convertGridSample;
  table["RoiAlign"] = convertRoiAlign;
}

} // namespace kiln::onnx
