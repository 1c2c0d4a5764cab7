//===- ONNXGridSampleOps.cpp - GridSample, RoiAlign, AffineGrid, DeformConv ===//
//
// Sampling at locations computed at run time: RoiAlign, DeformConv (its
// bilinear taps are GridSample's: bilinearTaps, gatherTaps), AffineGrid
// (the grids GridSample reads; below) and
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

/// The 4 bilinear taps around the pixel location (px, py), [N, P, 1]
/// each: the corners floor(.) and floor(.) + 1, weighted by the distance
/// to the opposite corner.
std::vector<Tap> bilinearTaps(Arith &a, Value px, Value py) {
  Value x0 = a.floor(px), y0 = a.floor(py);
  Value fx = a.sub(px, x0), fy = a.sub(py, y0), one = a.c(1);
  Value x1 = a.add(x0, one), y1 = a.add(y0, one);
  Value gx = a.sub(one, fx), gy = a.sub(one, fy);
  return {{x0, y0, a.mul(gx, gy)},
          {x1, y0, a.mul(fx, gy)},
          {x0, y1, a.mul(gx, fy)},
          {x1, y1, a.mul(fx, fy)}};
}

/// The weighted sum of `taps` ([N, P, 1] coordinates and weights, `a`'s
/// shape) read from `values` [N, h * w, C] (planes of h x w pixels,
/// row-major): a tap outside the plane reads 0. One tosa.gather per tap
/// at a row index computed in float32 (callers keep h * w below 2^24).
/// Result [N, P, C].
Value gatherTaps(NodeContext &ctx, Arith &a, Value values, llvm::ArrayRef<Tap> taps, int64_t h,
                 int64_t w) {
  auto &b = ctx.builder();
  int64_t n = a.shape[0], p = a.shape[1];
  int64_t ch = values.getType().cast<RankedTensorType>().getShape()[2];
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
  return sum;
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
    taps = bilinearTaps(a, px, py);
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
  Value sum = gatherTaps(ctx, a, values, taps, h, w);
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

// --- AffineGrid -----------------------------------------------------------------

/// AffineGrid (20; onnx docs/Operators.md): theta [N, 2, 3] and size
/// [N, C, H, W] (a constant) -> grid [N, H, W, 2]; theta [N, 3, 4] and size
/// [N, C, D, H, W] -> grid [N, D, H, W, 3]. Each output location is
/// theta[n] times the base location (x, y[, z], 1), x along W, y along H,
/// z along D, each in [-1, 1]: with align_corners 1 the corner pixels'
/// centers, -1 + 2 i / (S - 1); with 0 their outer edges, (2 i + 1) / S - 1.
/// One tosa.matmul of the constant base [N, P, k + 1] by theta^T [N, k + 1,
/// k] (k spatial axes, P their product).
LogicalResult convertAffineGrid(NodeContext &ctx) {
  if (ctx.numInputs() != 2 || !ctx.hasInput(0) || !ctx.hasInput(1))
    return ctx.fail("takes 2 inputs (theta, size); it has " + llvm::Twine(ctx.numInputs()));
  if (!isFloatType(ctx.inputType(0)))
    return ctx.fail("theta has element type " + dataTypeName(ctx.inputType(0)) +
                    "; Kiln's AffineGrid takes float32");
  FailureOr<std::vector<int64_t>> size = ctx.constantInts(1);
  if (failed(size))
    return failure();
  std::vector<int64_t> sz = *size, ts = ctx.inputShape(0);
  if (sz.size() != 4 && sz.size() != 5)
    return ctx.fail("size holds " + llvm::Twine(sz.size()) +
                    " values; it must be [N, C, H, W] (2-D) or [N, C, D, H, W] (3-D)");
  const int64_t k = int64_t(sz.size()) - 2, n = sz[0];
  for (int64_t d : sz)
    if (d < 1)
      return ctx.fail("size " + shapeString(sz) + " holds a dimension below 1");
  if (ts != std::vector<int64_t>{n, k, k + 1})
    return ctx.fail("theta has shape " + shapeString(ts) + "; with size " + shapeString(sz) +
                    " it must be " + shapeString({n, k, k + 1}));
  int64_t align = ctx.attrInt("align_corners", 0);
  if (align != 0 && align != 1)
    return ctx.fail("attribute align_corners is " + llvm::Twine(align) + "; it must be 0 or 1");
  std::vector<int64_t> spatial(sz.begin() + 2, sz.end());
  // A single location along an axis with align_corners 1: the spec's
  // formula divides by S - 1 = 0; its reference (np.linspace) puts it at
  // -1, PyTorch's affine_grid at 0 and ONNX Runtime 1.30 at 1 (checked with
  // an identity theta). With no agreed value Kiln refuses it.
  if (align == 1 && llvm::is_contained(spatial, int64_t(1)))
    return ctx.fail("align_corners 1 with a spatial size of 1 (size " + shapeString(sz) +
                    ") is not supported: the ONNX reference, ONNX Runtime and PyTorch place "
                    "that location differently");
  const int64_t p = product(spatial);
  if (p > (int64_t(1) << 24) / n / (k + 1))
    return ctx.fail("size " + shapeString(sz) + " asks a base grid of more than 2^24 values, " +
                    "above what Kiln's AffineGrid holds as a constant");
  FailureOr<Value> theta = ctx.input(0);
  if (failed(theta))
    return failure();
  auto coord = [&](int64_t i, int64_t s) {
    return align ? (s == 1 ? 0.0 : -1.0 + 2.0 * double(i) / double(s - 1))
                 : (2.0 * double(i) + 1.0) / double(s) - 1.0;
  };
  std::vector<float> base;
  base.reserve(size_t(n * p * (k + 1)));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t q = 0; q < p; ++q) {
      // Location q's index per axis, the last (W) fastest: (x, y, z, 1).
      int64_t rest = q;
      std::vector<float> loc(size_t(k + 1), 1.0f);
      for (int64_t d = k - 1; d >= 0; --d) {
        loc[size_t(k - 1 - d)] = float(coord(rest % spatial[d], spatial[d]));
        rest /= spatial[d];
      }
      base.insert(base.end(), loc.begin(), loc.end());
    }
  Value thetaT = ctx.transpose(*theta, {0, 2, 1});
  Value grid =
      ctx.create<tosa::MatMulOp>(ctx.f32Type({n, p, k}), ctx.constF32({n, p, k + 1}, base), thetaT);
  std::vector<int64_t> out = {n};
  out.insert(out.end(), spatial.begin(), spatial.end());
  out.push_back(k);
  return ctx.setOutput(0, ctx.reshape(grid, out));
}

// --- DeformConv -----------------------------------------------------------------

/// DeformConv's shapes and attributes, checked.
struct DeformShape {
  int64_t n = 0, c = 0, h = 0, w = 0, oc = 0, kh = 0, kw = 0, oh = 0, ow = 0;
  int64_t group = 1, offsetGroup = 1;
  std::vector<int64_t> strides, dilations, pads;
};

/// Reads and checks DeformConv's inputs and attributes (see
/// convertDeformConv); fails naming what is wrong.
LogicalResult readDeformConv(NodeContext &ctx, DeformShape &s) {
  int inputs = ctx.numInputs();
  if (inputs < 3 || inputs > 5 || !ctx.hasInput(0) || !ctx.hasInput(1) || !ctx.hasInput(2))
    return ctx.fail("takes 3 to 5 inputs (X, W, offset[, B[, mask]]); it has " +
                    llvm::Twine(inputs));
  for (int i = 0; i < inputs; ++i)
    if (ctx.hasInput(i) && !isFloatType(ctx.inputType(i)))
      return ctx.fail("input " + llvm::Twine(i) + " ('" + ctx.node().inputs[i] +
                      "') has element type " + dataTypeName(ctx.inputType(i)) +
                      "; DeformConv takes float32");
  std::vector<int64_t> xs = ctx.inputShape(0), ws = ctx.inputShape(1), os = ctx.inputShape(2);
  if (xs.size() != 4)
    return ctx.fail("X has shape " + shapeString(xs) +
                    "; Kiln converts 2-D DeformConv (X [N, C, H, W])");
  s.group = ctx.attrInt("group", 1);
  s.offsetGroup = ctx.attrInt("offset_group", 1);
  s.n = xs[0], s.c = xs[1], s.h = xs[2], s.w = xs[3];
  if (s.group < 1 || s.offsetGroup < 1)
    return ctx.fail("group " + llvm::Twine(s.group) + " and offset_group " +
                    llvm::Twine(s.offsetGroup) + " must be positive");
  if (ws.size() != 4 || ws[1] * s.group != s.c || ws[0] % s.group != 0)
    return ctx.fail("W has shape " + shapeString(ws) + "; with X " + shapeString(xs) +
                    " and group " + llvm::Twine(s.group) +
                    " it must be [oC, C / group, kH, kW] with oC a multiple of group");
  if (s.c % s.offsetGroup != 0)
    return ctx.fail("offset_group " + llvm::Twine(s.offsetGroup) + " does not divide the " +
                    llvm::Twine(s.c) + " channels of X");
  s.oc = ws[0], s.kh = ws[2], s.kw = ws[3];
  if (ctx.hasAttr("kernel_shape") && ctx.attrInts("kernel_shape") != std::vector{s.kh, s.kw})
    return ctx.fail("kernel_shape " + shapeString(ctx.attrInts("kernel_shape")) +
                    " is not W's spatial shape " + shapeString({s.kh, s.kw}));
  auto ints = [&](const char *name, size_t count, int64_t def, int64_t min,
                  std::vector<int64_t> &dst) -> LogicalResult {
    dst = ctx.attrInts(name, std::vector<int64_t>(count, def));
    if (dst.size() != count)
      return ctx.fail(llvm::Twine("attribute ") + name + " has " + llvm::Twine(dst.size()) +
                      " values; the 2-D DeformConv needs " + llvm::Twine(count));
    for (int64_t v : dst)
      if (v < min)
        return ctx.fail(llvm::Twine("attribute ") + name + " holds " + llvm::Twine(v) +
                        "; values below " + llvm::Twine(min) + " are invalid");
    return success();
  };
  if (failed(ints("strides", 2, 1, 1, s.strides)) ||
      failed(ints("dilations", 2, 1, 1, s.dilations)) || failed(ints("pads", 4, 0, 0, s.pads)))
    return failure();
  int64_t spanH = s.h + s.pads[0] + s.pads[2] - (s.kh - 1) * s.dilations[0] - 1;
  int64_t spanW = s.w + s.pads[1] + s.pads[3] - (s.kw - 1) * s.dilations[1] - 1;
  if (spanH < 0 || spanW < 0)
    return ctx.fail("the padded input " +
                    shapeString({s.h + s.pads[0] + s.pads[2], s.w + s.pads[1] + s.pads[3]}) +
                    " is smaller than the dilated kernel: there is no output");
  s.oh = spanH / s.strides[0] + 1, s.ow = spanW / s.strides[1] + 1;
  const int64_t taps = s.offsetGroup * s.kh * s.kw;
  if (os != std::vector<int64_t>{s.n, taps * 2, s.oh, s.ow})
    return ctx.fail("offset has shape " + shapeString(os) + "; it must be [N, offset_group * kH " +
                    "* kW * 2, oH, oW] = " + shapeString({s.n, taps * 2, s.oh, s.ow}));
  if (ctx.hasInput(3) && ctx.inputShape(3) != std::vector<int64_t>{s.oc})
    return ctx.fail("B has shape " + shapeString(ctx.inputShape(3)) + "; it must be [" +
                    llvm::Twine(s.oc) + "]");
  if (ctx.hasInput(4) && ctx.inputShape(4) != std::vector<int64_t>{s.n, taps, s.oh, s.ow})
    return ctx.fail("mask has shape " + shapeString(ctx.inputShape(4)) + "; it must be " +
                    shapeString({s.n, taps, s.oh, s.ow}));
  if (s.oh * s.ow >= (int64_t(1) << 24))
    return ctx.fail("an output of " + llvm::Twine(s.oh * s.ow) +
                    " pixels per plane is above the 2^24 Kiln's DeformConv samples");
  if (s.h * s.w >= (int64_t(1) << 24))
    return ctx.fail("an input of " + llvm::Twine(s.h * s.w) +
                    " pixels per plane is above the 2^24 Kiln's DeformConv indexes exactly");
  return success();
}

/// DeformConv (19; onnx docs/Operators.md, the deformable convolution of
/// Dai et al. and Zhu et al.), 2-D: X [N, C, H, W], W [oC, C / group, kH,
/// kW], offset [N, offset_group * kH * kW * 2, oH, oW] ((dy, dx) per tap),
/// optional B [oC] and mask [N, offset_group * kH * kW, oH, oW] -> Y [N, oC,
/// oH, oW]. Tap (i, j) of output (y, x) reads X bilinearly (bilinearTaps,
/// gatherTaps: pixels outside the input read 0) at (y * sH - padTop + i *
/// dH + dy, x * sW - padLeft + j * dW + dx), scaled by the mask; the
/// columns [N * oH * oW, kH * kW * C] then meet the weights in one batched
/// tosa.matmul per group.
LogicalResult convertDeformConv(NodeContext &ctx) {
  DeformShape s;
  if (failed(readDeformConv(ctx, s)))
    return failure();
  FailureOr<Value> x = ctx.input(0), weight = ctx.input(1), offset = ctx.input(2);
  if (failed(x) || failed(weight) || failed(offset))
    return failure();
  FailureOr<Value> bias = ctx.hasInput(3) ? ctx.input(3) : FailureOr<Value>(Value());
  FailureOr<Value> mask = ctx.hasInput(4) ? ctx.input(4) : FailureOr<Value>(Value());
  if (failed(bias) || failed(mask))
    return failure();
  const int64_t n = s.n, c = s.c, p = s.oh * s.ow, k = s.kh * s.kw, og = s.offsetGroup;
  const int64_t cog = c / og, g = s.group, cg = c / g, ocg = s.oc / g;
  Value values = ctx.reshape(ctx.transposeToChannelsLast(*x), {n, s.h * s.w, c});
  Value offsets = ctx.reshape(*offset, {n, og * k * 2, p});
  Value masks = *mask ? ctx.reshape(*mask, {n, og * k, p}) : Value();
  Arith a{ctx, {n, p, 1}};
  auto channel = [&](Value v, int64_t index) {
    return ctx.reshape(ctx.slice(v, {0, index, 0}, {n, 1, p}), {n, p, 1});
  };
  std::vector<Value> columns;
  for (int64_t i = 0; i < s.kh; ++i)
    for (int64_t j = 0; j < s.kw; ++j) {
      // The tap's undeformed locations, constant per output pixel.
      std::vector<float> by, bx;
      for (int64_t y = 0; y < s.oh; ++y)
        for (int64_t xx = 0; xx < s.ow; ++xx) {
          by.push_back(float(y * s.strides[0] - s.pads[0] + i * s.dilations[0]));
          bx.push_back(float(xx * s.strides[1] - s.pads[1] + j * s.dilations[1]));
        }
      Value baseY = ctx.constF32({1, p, 1}, by), baseX = ctx.constF32({1, p, 1}, bx);
      std::vector<Value> parts;
      for (int64_t o = 0; o < og; ++o) {
        int64_t tap = o * k + i * s.kw + j;
        Value py = a.add(baseY, channel(offsets, 2 * tap));
        Value px = a.add(baseX, channel(offsets, 2 * tap + 1));
        Value plane = ctx.slice(values, {0, 0, o * cog}, {n, s.h * s.w, cog});
        Value sampled = gatherTaps(ctx, a, plane, bilinearTaps(a, px, py), s.h, s.w);
        if (masks)
          sampled = ctx.create<tosa::MulOp>(ctx.f32Type({n, p, cog}), sampled, channel(masks, tap),
                                            ctx.builder().getI32IntegerAttr(0));
        parts.push_back(sampled);
      }
      Value all = parts.size() == 1
                      ? parts[0]
                      : ctx.create<tosa::ConcatOp>(ctx.f32Type({n, p, c}), parts,
                                                   ctx.builder().getI64IntegerAttr(2));
      columns.push_back(ctx.reshape(all, {n, p, 1, c}));
    }
  Value cols = columns.size() == 1 ? columns[0]
                                   : ctx.create<tosa::ConcatOp>(ctx.f32Type({n, p, k, c}), columns,
                                                                ctx.builder().getI64IntegerAttr(2));
  // [N * P, K, group, C / group] -> [group, N * P, K * C / group].
  cols = ctx.transpose(ctx.reshape(cols, {n * p, k, g, cg}), {2, 0, 1, 3});
  cols = ctx.reshape(cols, {g, n * p, k * cg});
  // W [oC, C / group, kH, kW] -> [group, K * C / group, oC / group].
  Value wt = ctx.transpose(ctx.reshape(*weight, {g, ocg, cg, k}), {0, 3, 2, 1});
  wt = ctx.reshape(wt, {g, k * cg, ocg});
  Value y = ctx.create<tosa::MatMulOp>(ctx.f32Type({g, n * p, ocg}), cols, wt);
  y = ctx.transpose(ctx.reshape(y, {g, n, p, ocg}), {1, 0, 3, 2});
  y = ctx.reshape(y, {n, s.oc, s.oh, s.ow});
  if (*bias)
    y = ctx.create<tosa::AddOp>(ctx.f32Type({n, s.oc, s.oh, s.ow}), y,
                                ctx.reshape(*bias, {1, s.oc, 1, 1}));
  return ctx.setOutput(0, y);
}

} // namespace

void registerGridSampleOps(ConverterTable &table) {
  table["AffineGrid"] = convertAffineGrid;
  table["DeformConv"] = convertDeformConv;
  table["GridSample"] = convertGridSample;
  table["RoiAlign"] = convertRoiAlign;
}

} // namespace kiln::onnx
