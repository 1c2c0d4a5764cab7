//===- ONNXSignalOps.cpp - ONNX DFT and STFT ------------------------------===//
//
// DFT (17) and STFT (17) -> TOSA: the discrete Fourier transform along one
// axis as two tosa.matmul by constant cos and sin tables (built at import
// in double precision), the real and imaginary parts recombined:
//   forward  Y[k] = sum_n x[n] e^(-2 pi i k n / L)
//   inverse  Y[k] = 1/L sum_n x[n] e^(+2 pi i k n / L)
// onesided keeps k in [0, L/2]. STFT frames the signal (one slice per
// frame, frame_step apart), multiplies by the window and transforms each
// frame. dft_length, frame_step and frame_length set output shapes and must
// be constants.
//
//===----------------------------------------------------------------------===//
#include "ONNXConverter.h"

#include <cmath>
#include <string>
#include <vector>

using namespace mlir;

namespace kiln::onnx {
namespace {

llvm::ArrayRef<int64_t> shapeOf(Value v) { return v.getType().cast<RankedTensorType>().getShape(); }

/// The most frames STFT slices out.
constexpr int64_t kMaxFrames = 4096;

/// The DFT of `x` [P, N, c] (c = 1 real, 2 complex) over N, `length` points
/// (zero-padded or cut), `bins` outputs: [P, bins, 2].
Value dft(NodeContext &ctx, Value x, int64_t length, int64_t bins, bool inverse) {
  int64_t p = shapeOf(x)[0], n = shapeOf(x)[1], c = shapeOf(x)[2];
  if (n > length)
    x = ctx.slice(x, {0, 0, 0}, {p, length, c});
  else if (n < length) {
    Value padding = ctx.constI32({3, 2}, {0, 0, 0, int32_t(length - n), 0, 0});
    x = ctx.create<tosa::PadOp>(ctx.f32Type({p, length, c}), x, padding, ctx.constF32({}, {0.0f}),
                                nullptr);
  }
  std::vector<float> cosT(length * bins), sinT(length * bins);
  const double pi = 3.14159265358979323846;
  for (int64_t t = 0; t < length; ++t)
    for (int64_t k = 0; k < bins; ++k) {
      double angle = 2 * pi * double((t * k) % length) / double(length);
      cosT[t * bins + k] = float(std::cos(angle));
      sinT[t * bins + k] = float(std::sin(angle));
    }
  auto type = ctx.f32Type({1, p, bins});
  auto matmul = [&](Value part, const std::vector<float> &table) {
    return ctx.create<tosa::MatMulOp>(type, ctx.reshape(part, {1, p, length}),
                                      ctx.constF32({1, length, bins}, table));
  };
  Value re = ctx.slice(x, {0, 0, 0}, {p, length, 1});
  Value reCos = matmul(re, cosT), reSin = matmul(re, sinT);
  Value yRe = reCos, yIm;
  if (c == 2) {
    Value im = ctx.slice(x, {0, 0, 1}, {p, length, 1});
    Value imCos = matmul(im, cosT), imSin = matmul(im, sinT);
    // forward: re cos + im sin, im cos - re sin; inverse: re cos - im sin, im cos + re sin.
    yRe = inverse ? ctx.create<tosa::SubOp>(type, reCos, imSin)
                  : ctx.create<tosa::AddOp>(type, reCos, imSin);
    yIm = inverse ? ctx.create<tosa::AddOp>(type, imCos, reSin)
                  : ctx.create<tosa::SubOp>(type, imCos, reSin);
  } else {
    yIm = inverse ? reSin : ctx.create<tosa::NegateOp>(type, reSin);
  }
  if (inverse) {
    Value scale = ctx.scalarF32(1.0f / float(length), 3);
    yRe = ctx.create<tosa::MulOp>(type, yRe, scale, ctx.builder().getI32IntegerAttr(0));
    yIm = ctx.create<tosa::MulOp>(type, yIm, scale, ctx.builder().getI32IntegerAttr(0));
  }
  llvm::SmallVector<Value> parts{ctx.reshape(yRe, {p, bins, 1}), ctx.reshape(yIm, {p, bins, 1})};
  return ctx.create<tosa::ConcatOp>(ctx.f32Type({p, bins, 2}), parts,
                                    ctx.builder().getI64IntegerAttr(2));
}

/// A constant scalar integer input `i`, or `def` when it is omitted.
FailureOr<int64_t> scalarInput(NodeContext &ctx, int i, int64_t def, const char *what) {
  if (!ctx.hasInput(i))
    return def;
  if (!ctx.constant(i))
    return ctx.fail(llvm::Twine(what) + " (input " + llvm::Twine(i) + " '" + ctx.node().inputs[i] +
                    "') is not known when the model is compiled; it sets the output shape");
  FailureOr<std::vector<int64_t>> v = ctx.constantInts(i);
  if (failed(v) || v->size() != 1)
    return failed(v) ? failure() : ctx.fail(llvm::Twine(what) + " must hold one value");
  return v->front();
}

/// DFT (17; axis 1, inverse 0, onesided 0): input [..., c] with c = 1
/// (real) or 2 (complex), the transform along `axis` (not the last).
LogicalResult convertDFT(NodeContext &ctx) {
  std::vector<int64_t> xs = ctx.inputShape(0);
  int64_t rank = xs.size();
  if (rank < 2 || (xs.back() != 1 && xs.back() != 2) || !isFloatType(ctx.inputType(0)))
    return ctx.fail("input " + shapeString(xs) +
                    " must be float32 [..., 1] (real) or "
                    "[..., 2] (complex)");
  int64_t axis = ctx.attrInt("axis", 1);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank - 1)
    return ctx.fail("axis " + llvm::Twine(ctx.attrInt("axis", 1)) +
                    " must be a signal dimension (not the last, of the real/imaginary parts)");
  bool inverse = ctx.attrInt("inverse", 0) != 0, onesided = ctx.attrInt("onesided", 0) != 0;
  if (inverse && onesided)
    return ctx.fail("onesided with inverse is not supported");
  FailureOr<int64_t> length = scalarInput(ctx, 1, xs[axis], "dft_length");
  if (failed(length))
    return failure();
  if (*length < 1)
    return ctx.fail("dft_length " + llvm::Twine(*length) + " must be positive");
  FailureOr<Value> x = ctx.input(0);
  if (failed(x))
    return failure();
  // [others..., N, c]
  std::vector<int32_t> perm;
  for (int64_t d = 0; d < rank - 1; ++d)
    if (d != axis)
      perm.push_back(int32_t(d));
  perm.push_back(int32_t(axis));
  perm.push_back(int32_t(rank - 1));
  std::vector<int64_t> moved;
  for (int32_t d : perm)
    moved.push_back(xs[d]);
  int64_t p = product(xs) / (xs[axis] * xs.back());
  int64_t bins = onesided ? *length / 2 + 1 : *length;
  Value y = dft(ctx, ctx.reshape(ctx.transpose(*x, perm), {p, xs[axis], xs.back()}), *length, bins,
                inverse);
  moved[rank - 2] = bins;
  moved[rank - 1] = 2;
  std::vector<int32_t> inv(rank);
  for (int64_t d = 0; d < rank; ++d)
    inv[perm[d]] = int32_t(d);
  return ctx.setOutput(0, ctx.transpose(ctx.reshape(y, moved), inv));
}

/// STFT (17; onesided 1): signal [B, L, c], frame_step, window [W]
/// (optional), frame_length (optional; W when both are given): [B, frames,
/// bins, 2] with frames = (L - W) / frame_step + 1.
LogicalResult convertSTFT(NodeContext &ctx) {
  std::vector<int64_t> xs = ctx.inputShape(0);
  if (xs.size() != 3 || (xs[2] != 1 && xs[2] != 2) || !isFloatType(ctx.inputType(0)))
    return ctx.fail("signal " + shapeString(xs) + " must be float32 [B, L, 1] or [B, L, 2]");
  FailureOr<int64_t> step = scalarInput(ctx, 1, 0, "frame_step");
  if (failed(step))
    return failure();
  int64_t windowLength = ctx.hasInput(2) ? product(ctx.inputShape(2)) : 0;
  FailureOr<int64_t> frameLength = scalarInput(ctx, 3, windowLength, "frame_length");
  if (failed(frameLength))
    return failure();
  int64_t w = *frameLength;
  if (*step < 1 || w < 1 || w > xs[1] || (windowLength && windowLength != w))
    return ctx.fail("frame_step " + llvm::Twine(*step) + " and a frame of " + llvm::Twine(w) +
                    " (window " + llvm::Twine(windowLength) + ") do not fit a signal of " +
                    llvm::Twine(xs[1]));
  bool onesided = ctx.attrInt("onesided", 1) != 0;
  if (onesided && xs[2] == 2)
    return ctx.fail("onesided with a complex signal is not supported");
  int64_t b = xs[0], c = xs[2], frames = (xs[1] - w) / *step + 1;
  if (frames > kMaxFrames)
    return ctx.fail(llvm::Twine(frames) + " frames are above the " + llvm::Twine(kMaxFrames) +
                    " Kiln's STFT slices");
  FailureOr<Value> x = ctx.input(0);
  if (failed(x))
    return failure();
  llvm::SmallVector<Value> parts;
  for (int64_t f = 0; f < frames; ++f)
    parts.push_back(ctx.reshape(ctx.slice(*x, {0, f * *step, 0}, {b, w, c}), {b, 1, w, c}));
  Value framed = parts.size() == 1
                     ? parts[0]
                     : ctx.create<tosa::ConcatOp>(ctx.f32Type({b, frames, w, c}), parts,
                                                  ctx.builder().getI64IntegerAttr(1));
  if (ctx.hasInput(2)) {
    FailureOr<Value> window = ctx.input(2);
    if (failed(window) || !isFloatType(ctx.inputType(2)))
      return failed(window) ? failure() : ctx.fail("the window must be float32");
    framed = ctx.create<tosa::MulOp>(ctx.f32Type({b, frames, w, c}), framed,
                                     ctx.reshape(*window, {1, 1, w, 1}),
                                     ctx.builder().getI32IntegerAttr(0));
  }
  int64_t bins = onesided ? w / 2 + 1 : w;
  Value y = dft(ctx, ctx.reshape(framed, {b * frames, w, c}), w, bins, false);
  return ctx.setOutput(0, ctx.reshape(y, {b, frames, bins, 2}));
}

} // namespace

void registerSignalOps(ConverterTable &table) {
  table["DFT"] = convertDFT;
  table["STFT"] = convertSTFT;
}

} // namespace kiln::onnx
