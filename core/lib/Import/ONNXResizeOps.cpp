//===- ONNXResizeOps.cpp - Resize, Upsample, DepthToSpace, SpaceToDepth ---===//
//
// Resize and Upsample on float32 tensors of any rank. Shapes are static and
// scales / sizes / roi constant, so the importer works out, for every
// resized axis, which input elements each output element reads and with
// which weights (the ONNX coordinate transformation, then the nearest,
// linear or cubic taps, computed in double). Resize is separable: each axis
// is one tosa.gather of its T taps (nearest 1, linear 2, cubic 4) with
// constant indices, then a weighted sum over the taps with a constant weight
// tensor (tosa.mul + tosa.reduce_sum). Out-of-range taps read the edge
// element; tf_crop_and_resize outputs outside the input get
// extrapolation_value (weights 0 plus a constant bias, which the later axes'
// weights, summing to 1, carry through). tosa.resize is not used: it covers
// only 2-D NHWC nearest/bilinear with rational scales and its own rounding.
//
// DepthToSpace and SpaceToDepth are reshape + transpose + reshape.
//
//===----------------------------------------------------------------------===//
#include "ONNXConverter.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

using namespace mlir;

namespace kiln::onnx {
namespace {

llvm::ArrayRef<int64_t> shapeOf(Value v) {
  return v.getType().cast<RankedTensorType>().getShape();
}


/// "0.6" for messages.
std::string number(double v) { return llvm::formatv("{0}", v).str(); }

enum class Interp { Nearest, Linear, Cubic };

/// A Resize / Upsample node's attributes, checked.
struct ResizeAttrs {
  Interp mode = Interp::Nearest;
  std::string coordinates = "half_pixel";
  std::string nearestMode = "round_prefer_floor";
  double cubicA = -0.75;
  bool excludeOutside = false;
  float extrapolation = 0.0f;
};

/// Per-axis sizes and the region of interest (tf_crop_and_resize).
struct AxisRequest {
  int64_t in = 1, out = 1;
  double scale = 1.0;          ///< Given scale, or out / in with sizes.
  double lengthResized = 1.0;  ///< in * scale (the reference's output width).
  double roiStart = 0.0, roiEnd = 1.0;
};

/// How one axis samples its input: output o = sum over taps t of
/// weights[t * out + o] * x[indices[t * out + o]] + bias[o] (bias only where
/// `extrapolates`).
struct AxisSampling {
  int64_t taps = 1;
  std::vector<int32_t> indices;
  std::vector<float> weights;
  std::vector<float> bias;
  bool extrapolates = false;
};

/// The input coordinate of output index `o` under `mode`; nullopt where
/// tf_crop_and_resize falls outside the input (extrapolation).
std::optional<double> sourceCoordinate(const std::string &mode, const AxisRequest &a, int64_t o) {
  double x = double(o), in = double(a.in);
  if (mode == "half_pixel")
    return (x + 0.5) / a.scale - 0.5;
  if (mode == "pytorch_half_pixel")
    return a.lengthResized > 1 ? (x + 0.5) / a.scale - 0.5 : -0.5;
  if (mode == "align_corners")
    return a.lengthResized == 1 ? 0.0 : x * (in - 1) / (a.lengthResized - 1);
  if (mode == "asymmetric")
    return x / a.scale;
  if (mode == "tf_half_pixel_for_nn")
    return (x + 0.5) / a.scale;
  // tf_crop_and_resize
  double span = (a.roiEnd - a.roiStart) * (in - 1);
  double c = a.lengthResized == 1 ? span / 2 : x * span / (a.lengthResized - 1);
  c += a.roiStart * (in - 1);
  if (c < 0 || c > in - 1)
    return std::nullopt;
  return c;
}

/// Tap weights for fractional position `ratio` in (0, 1] past the tap
/// before the sample: linear [1-r, r]; cubic (Keys, coefficient A) over the
/// four taps around; nearest one of the two neighbours by `nearestMode`.
std::vector<double> tapWeights(const ResizeAttrs &attrs, double r, bool integral) {
  if (attrs.mode == Interp::Linear)
    return {1 - r, r};
  if (attrs.mode == Interp::Cubic) {
    double A = attrs.cubicA, s = 1 - r;
    return {((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A,
            ((A + 2) * r - (A + 3)) * r * r + 1, ((A + 2) * s - (A + 3)) * s * s + 1,
            ((A * (s + 1) - 5 * A) * (s + 1) + 8 * A) * (s + 1) - 4 * A};
  }
  const std::string &m = attrs.nearestMode;
  bool upper = integral || m == "ceil" || (m == "round_prefer_floor" && r > 0.5) ||
               (m == "round_prefer_ceil" && r >= 0.5);
  return {upper ? 0.0 : 1.0, upper ? 1.0 : 0.0};
}

/// Indices and weights of one axis (see AxisSampling), following the ONNX
/// reference: the sample at coordinate c lies `ratio` in (0, 1] past tap
/// base = c - ratio (ratio 1 for integral c); taps are base - T/2 + 1 ...
/// base + T/2, clamped to the input (edge padding); exclude_outside zeroes
/// the taps outside and renormalizes.
AxisSampling sampleAxis(const ResizeAttrs &attrs, const AxisRequest &a) {
  AxisSampling s;
  int64_t taps = attrs.mode == Interp::Cubic ? 4 : 2;
  s.taps = attrs.mode == Interp::Nearest ? 1 : taps;
  s.indices.assign(s.taps * a.out, 0);
  s.weights.assign(s.taps * a.out, 0.0f);
  s.bias.assign(a.out, 0.0f);
  for (int64_t o = 0; o < a.out; ++o) {
    std::optional<double> c = sourceCoordinate(attrs.coordinates, a, o);
    if (!c) {
      s.bias[o] = attrs.extrapolation;
      s.extrapolates = true;
      continue;
    }
    double fl = std::floor(*c);
    bool integral = fl == *c;
    double ratio = integral ? 1.0 : *c - fl;
    int64_t base = int64_t(integral ? fl - 1 : fl) - (taps / 2 - 1);
    std::vector<double> w = tapWeights(attrs, ratio, integral);
    if (attrs.excludeOutside) {
      double sum = 0;
      for (int64_t t = 0; t < taps; ++t) {
        if (base + t < 0 || base + t >= a.in)
          w[t] = 0;
        sum += w[t];
      }
      for (double &v : w)
        v = sum != 0 ? v / sum : 0;
    }
    for (int64_t t = 0; t < taps; ++t) {
      int64_t idx = std::clamp<int64_t>(base + t, 0, a.in - 1);
      if (attrs.mode == Interp::Nearest) {
        if (w[t] != 0) {
          s.indices[o] = int32_t(idx);
          s.weights[o] = 1.0f;
        }
        continue;
      }
      s.indices[t * a.out + o] = int32_t(idx);
      s.weights[t * a.out + o] = float(w[t]);
    }
  }
  return s;
}

/// True if `s` maps an axis of size `in` onto itself unchanged.
bool isIdentity(const AxisSampling &s, int64_t in) {
  if (s.extrapolates || int64_t(s.indices.size()) / s.taps != in)
    return false;
  for (int64_t t = 0; t < s.taps; ++t)
    for (int64_t o = 0; o < in; ++o) {
      float w = s.weights[t * in + o];
      if (w != 0 && (w != 1 || s.indices[t * in + o] != o))
        return false;
    }
  return true;
}

/// Indices repeated for each of `rows` gather batches: above this many the
/// axis is transposed to the front instead (one batch).
constexpr int64_t kMaxRepeatedIndices = 1 << 16;

/// Resamples dimension `axis` of `v` as `s` says (see the file comment). The
/// tensor is viewed as [outer, K, inner] (indices repeated per outer row), or
/// transposed to [K, rest] first when that repetition would be large.
Value resampleAxis(NodeContext &ctx, Value v, int64_t axis, const AxisSampling &s) {
  llvm::SmallVector<int64_t> shape(shapeOf(v));
  int64_t rank = int64_t(shape.size()), k = shape[axis], t = s.taps;
  int64_t w = int64_t(s.bias.size());
  llvm::ArrayRef<int64_t> dims(shape);
  int64_t outer = product(dims.take_front(axis)), inner = product(dims.drop_front(axis + 1));
  bool front = outer > 1 && outer * t * w > kMaxRepeatedIndices;
  llvm::SmallVector<int32_t> perm = {int32_t(axis)};
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      perm.push_back(int32_t(d));
  int64_t n = front ? 1 : outer, c = front ? outer * inner : inner;
  Value values = ctx.reshape(front ? ctx.transpose(v, perm) : v, {n, k, c});
  std::vector<int32_t> indices;
  for (int64_t r = 0; r < n; ++r)
    indices.insert(indices.end(), s.indices.begin(), s.indices.end());
  Value g = ctx.create<tosa::GatherOp>(ctx.f32Type({n, t * w, c}), values,
                                       ctx.constI32({n, t * w}, indices));
  bool weighted = t > 1 || llvm::any_of(s.weights, [](float x) { return x != 1.0f; });
  if (weighted) {
    g = ctx.reshape(g, {n, t, w, c});
    g = ctx.create<tosa::MulOp>(g.getType(), g, ctx.constF32({1, t, w, 1}, s.weights),
                                ctx.builder().getI32IntegerAttr(0));
    if (t > 1)
      g = ctx.create<tosa::ReduceSumOp>(ctx.f32Type({n, 1, w, c}), g,
                                        ctx.builder().getI64IntegerAttr(1));
  }
  g = ctx.reshape(g, {n, w, c});
  if (s.extrapolates)
    g = ctx.create<tosa::AddOp>(g.getType(), g, ctx.constF32({1, w, 1}, s.bias));
  shape[axis] = w;
  if (!front)
    return ctx.reshape(g, shape);
  llvm::SmallVector<int64_t> moved;
  for (int32_t p : perm)
    moved.push_back(shape[p]);
  llvm::SmallVector<int32_t> inverse(rank);
  for (int64_t d = 0; d < rank; ++d)
    inverse[perm[d]] = int32_t(d);
  return ctx.transpose(ctx.reshape(g, moved), inverse);
}

/// Reads mode, coordinate_transformation_mode, nearest_mode, cubic_coeff_a,
/// exclude_outside and extrapolation_value; Upsample and Resize-10 have only
/// mode (nearest / linear) and sample as asymmetric with floor.
FailureOr<ResizeAttrs> readAttrs(NodeContext &ctx, bool legacy) {
  ResizeAttrs a;
  std::string mode = ctx.attrString("mode", "nearest");
  if (mode == "nearest")
    a.mode = Interp::Nearest;
  else if (mode == "linear" || (legacy && mode == "bilinear"))
    a.mode = Interp::Linear;
  else if (mode == "cubic" && !legacy)
    a.mode = Interp::Cubic;
  else
    return ctx.fail("mode '" + mode + "' is not supported; Kiln supports " +
                    (legacy ? "nearest and linear" : "nearest, linear and cubic"));
  if (legacy) {
    a.coordinates = "asymmetric";
    a.nearestMode = "floor";
    return a;
  }
  a.coordinates = ctx.attrString("coordinate_transformation_mode", "half_pixel");
  static const llvm::StringRef kCoordinates[] = {
      "half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn",
      "tf_crop_and_resize"};
  if (!llvm::is_contained(kCoordinates, a.coordinates))
    return ctx.fail("coordinate_transformation_mode '" + a.coordinates +
                    "' is not supported; Kiln supports half_pixel, pytorch_half_pixel, "
                    "align_corners, asymmetric, tf_half_pixel_for_nn and tf_crop_and_resize");
  a.nearestMode = ctx.attrString("nearest_mode", "round_prefer_floor");
  static const llvm::StringRef kNearest[] = {"round_prefer_floor", "round_prefer_ceil",
                                             "floor", "ceil"};
  if (!llvm::is_contained(kNearest, a.nearestMode))
    return ctx.fail("nearest_mode '" + a.nearestMode + "' is not supported; Kiln supports "
                    "round_prefer_floor, round_prefer_ceil, floor and ceil");
  // Resize-18: antialias (a widened filter when downsampling), axes and
  // keep_aspect_ratio_policy are not implemented; their defaults are.
  if (ctx.attrInt("antialias", 0) != 0)
    return ctx.fail("attribute antialias is 1; Kiln resizes without antialiasing only");
  if (ctx.hasAttr("axes"))
    return ctx.fail("attribute axes is not supported; give scales or sizes for every axis");
  std::string policy = ctx.attrString("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch")
    return ctx.fail("keep_aspect_ratio_policy '" + policy +
                    "' is not supported; Kiln supports stretch");
  a.cubicA = ctx.attrFloat("cubic_coeff_a", -0.75f);
  a.excludeOutside = ctx.attrInt("exclude_outside", 0) != 0;
  a.extrapolation = ctx.attrFloat("extrapolation_value", 0.0f);
  return a;
}

/// A constant input `i` that may be absent or empty: its values, or an empty
/// vector.
FailureOr<std::vector<float>> optionalFloats(NodeContext &ctx, int i) {
  if (!ctx.hasInput(i))
    return std::vector<float>();
  return ctx.constantFloats(i);
}

/// Per-axis requests from scales (output floor(in * scale)) or sizes.
FailureOr<std::vector<AxisRequest>> axisRequests(NodeContext &ctx, llvm::ArrayRef<int64_t> in,
                                                 const std::vector<float> &scales,
                                                 const std::vector<float> &sizes,
                                                 const std::vector<float> &roi) {
  size_t rank = in.size();
  bool bySize = !sizes.empty();
  const char *what = bySize ? "sizes" : "scales";
  if ((bySize ? sizes : scales).size() != rank)
    return ctx.fail(llvm::Twine(what) + " holds " +
                    llvm::Twine((bySize ? sizes : scales).size()) +
                    " values; it needs one per input dimension (" + llvm::Twine(rank) + ")");
  if (!roi.empty() && roi.size() != 2 * rank)
    return ctx.fail("roi holds " + llvm::Twine(roi.size()) + " values; it needs 2 * rank (" +
                    llvm::Twine(2 * rank) + ")");
  std::vector<AxisRequest> axes(rank);
  for (size_t d = 0; d < rank; ++d) {
    AxisRequest &a = axes[d];
    a.in = in[d];
    double v = bySize ? sizes[d] : scales[d];
    if (!(v > 0))
      return ctx.fail(llvm::Twine(what) + "[" + llvm::Twine(d) + "] is " +
                      (bySize ? std::to_string(int64_t(v)) : number(v)) + "; it must be positive");
    a.out = bySize ? int64_t(v) : int64_t(std::floor(double(a.in) * v));
    if (a.out <= 0)
      return ctx.fail("output dimension " + llvm::Twine(d) + " would be empty (input " +
                      llvm::Twine(a.in) + ", scale " + number(v) + ")");
    a.scale = bySize ? double(a.out) / double(a.in) : v;
    a.lengthResized = bySize ? double(a.out) : double(a.in) * v;
    if (!roi.empty())
      a.roiStart = roi[d], a.roiEnd = roi[rank + d];
  }
  return axes;
}

/// Applies `axes` to input 0 and binds output 0.
LogicalResult resizeWith(NodeContext &ctx, const ResizeAttrs &attrs,
                         const std::vector<AxisRequest> &axes) {
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  Value v = *x;
  for (size_t d = 0; d < axes.size(); ++d) {
    AxisSampling s = sampleAxis(attrs, axes[d]);
    if (!isIdentity(s, axes[d].in))
      v = resampleAxis(ctx, v, int64_t(d), s);
  }
  return ctx.setOutput(0, v);
}

/// Fails unless input 0 is a float tensor of rank 1 or more.
LogicalResult checkData(NodeContext &ctx) {
  if (ctx.hasInput(0) && !isFloatType(ctx.inputType(0)))
    return ctx.fail("input 0 has element type " + dataTypeName(ctx.inputType(0)) +
                    "; Kiln resizes float tensors only");
  if (ctx.inputRank(0) == 0)
    return ctx.fail("input 0 is a scalar; Resize needs rank 1 or more");
  return success();
}

/// Resize, any rank, constant scales / sizes / roi.
///  - opset 10: (X, scales); mode nearest / linear; sampled as Upsample
///    (asymmetric coordinates, nearest rounds down).
///  - opsets 11 and 13: (X, roi, scales, sizes), roi and scales optional
///    from 13; exactly one of scales / sizes non-empty. Output dimension
///    floor(in * scale), or sizes. Attributes: mode (nearest, linear,
///    cubic), coordinate_transformation_mode (default half_pixel),
///    nearest_mode, cubic_coeff_a, exclude_outside, extrapolation_value.
///    With scales the coordinate formulas use the given scale (and
///    in * scale as the resized length), as the ONNX reference does.
LogicalResult convertResize(NodeContext &ctx) {
  if (failed(checkData(ctx)))
    return failure();
  bool legacy = ctx.opset() < 11;
  auto attrs = readAttrs(ctx, legacy);
  if (failed(attrs))
    return failure();
  auto scales = optionalFloats(ctx, legacy ? 1 : 2);
  if (failed(scales))
    return failure();
  std::vector<float> sizes, roi;
  if (!legacy) {
    auto s = optionalFloats(ctx, 3);
    if (failed(s))
      return failure();
    sizes = *s;
    if (attrs->coordinates == "tf_crop_and_resize") {
      auto r = optionalFloats(ctx, 1);
      if (failed(r))
        return failure();
      roi = *r;
    }
  }
  if (!sizes.empty() && !scales->empty())
    return ctx.fail("both scales and sizes are given; exactly one may be non-empty");
  if (sizes.empty() && scales->empty())
    return ctx.fail("neither scales nor sizes is given; one of them must be a non-empty "
                    "constant");
  auto axes = axisRequests(ctx, ctx.inputShape(0), *scales, sizes, roi);
  if (failed(axes))
    return failure();
  return resizeWith(ctx, *attrs, *axes);
}

/// Upsample (opsets 7-9): output dimension floor(in * scale), scales from the
/// attribute (opset 7) or the constant input 1 (opset 9), each >= 1; mode
/// nearest (asymmetric coordinates, rounding down: repeats for integer
/// scales) or linear (asymmetric, the last input element repeated past the
/// edge).
LogicalResult convertUpsample(NodeContext &ctx) {
  if (failed(checkData(ctx)))
    return failure();
  auto attrs = readAttrs(ctx, true);
  if (failed(attrs))
    return failure();
  std::vector<float> scales;
  if (ctx.opset() < 9) {
    scales = ctx.attrFloats("scales");
  } else {
    auto s = ctx.constantFloats(1);
    if (failed(s))
      return failure();
    scales = *s;
  }
  for (float s : scales)
    if (s < 1)
      return ctx.fail("scales value " + number(s) + " is below 1; Upsample only enlarges "
                      "(use Resize to shrink)");
  auto axes = axisRequests(ctx, ctx.inputShape(0), scales, {}, {});
  if (failed(axes))
    return failure();
  return resizeWith(ctx, *attrs, *axes);
}

/// The [N, C, H, W] input and blocksize of DepthToSpace / SpaceToDepth.
struct BlockView {
  Value x;
  int64_t n, c, h, w, b;
};

FailureOr<BlockView> blockInput(NodeContext &ctx, bool toSpace) {
  if (ctx.inputRank(0) != 4)
    return ctx.fail("input 0 has rank " + llvm::Twine(ctx.inputRank(0)) +
                    "; it must be 4-D [N, C, H, W]");
  if (!ctx.hasAttr("blocksize"))
    return ctx.fail("the blocksize attribute is missing");
  auto x = ctx.input(0);
  if (failed(x))
    return failure();
  auto s = shapeOf(*x);
  BlockView v{*x, s[0], s[1], s[2], s[3], ctx.attrInt("blocksize", 0)};
  if (v.b <= 0)
    return ctx.fail("blocksize " + llvm::Twine(v.b) + " must be positive");
  if (toSpace && v.c % (v.b * v.b) != 0)
    return ctx.fail("channels " + llvm::Twine(v.c) + " are not divisible by blocksize^2 (" +
                    llvm::Twine(v.b * v.b) + ")");
  if (!toSpace && (v.h % v.b != 0 || v.w % v.b != 0))
    return ctx.fail("height " + llvm::Twine(v.h) + " and width " + llvm::Twine(v.w) +
                    " must be divisible by blocksize " + llvm::Twine(v.b));
  return v;
}

/// DepthToSpace (opsets 1-13), [N, C, H, W] -> [N, C/b^2, H*b, W*b]: mode DCR
/// (default; channel index (by*b + bx) * C/b^2 + c) views the input as
/// [N, b, b, C/b^2, H, W] and transposes to [N, C/b^2, H, b, W, b]; mode CRD
/// (from opset 11; channel index c * b^2 + by*b + bx) views it as
/// [N, C/b^2, b, b, H, W].
LogicalResult convertDepthToSpace(NodeContext &ctx) {
  auto v = blockInput(ctx, true);
  if (failed(v))
    return failure();
  std::string mode = ctx.attrString("mode", "DCR");
  int64_t b = v->b, c = v->c / (b * b);
  Value t;
  if (mode == "DCR")
    t = ctx.transpose(ctx.reshape(v->x, {v->n, b, b, c, v->h, v->w}), {0, 3, 4, 1, 5, 2});
  else if (mode == "CRD")
    t = ctx.transpose(ctx.reshape(v->x, {v->n, c, b, b, v->h, v->w}), {0, 1, 4, 2, 5, 3});
  else
    return ctx.fail("mode '" + mode + "' is not supported; DepthToSpace has DCR and CRD");
  return ctx.setOutput(0, ctx.reshape(t, {v->n, c, v->h * b, v->w * b}));
}

/// SpaceToDepth (opsets 1-13), [N, C, H, W] -> [N, C*b^2, H/b, W/b], the
/// inverse of DepthToSpace DCR: view [N, C, H/b, b, W/b, b], transpose to
/// [N, b, b, C, H/b, W/b].
LogicalResult convertSpaceToDepth(NodeContext &ctx) {
  auto v = blockInput(ctx, false);
  if (failed(v))
    return failure();
  int64_t b = v->b, h = v->h / b, w = v->w / b;
  Value t = ctx.transpose(ctx.reshape(v->x, {v->n, v->c, h, b, w, b}), {0, 3, 5, 1, 2, 4});
  return ctx.setOutput(0, ctx.reshape(t, {v->n, v->c * b * b, h, w}));
}

} // namespace

void registerResizeOps(ConverterTable &table) {
  table["Resize"] = convertResize;
  table["Upsample"] = convertUpsample;
  table["DepthToSpace"] = convertDepthToSpace;
  table["SpaceToDepth"] = convertSpaceToDepth;
}

} // namespace kiln::onnx
