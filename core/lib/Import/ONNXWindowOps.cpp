//===- ONNXWindowOps.cpp - HannWindow, HammingWindow, BlackmanWindow -----===//
//
// The window generators of opset 17 (signal processing front ends: STFT
// and mel spectrogram graphs). Their only input is the window length, a
// scalar that sets the output's shape, so it must be known when the model
// is compiled; the window is then a constant folded at import.
//
//===----------------------------------------------------------------------===//
#include "ONNXConverter.h"

#include <cmath>

using namespace mlir;

namespace kiln::onnx {
namespace {

/// The largest window Kiln folds (elements).
constexpr int64_t kMaxWindow = int64_t(1) << 24;

/// A cosine-sum window (ONNX Operators.md, opset 17): w[n] = a0 - a1
/// cos(2 pi n / N1) + a2 cos(4 pi n / N1), N1 = size with periodic = 1
/// (the default), size - 1 with periodic = 0. Hann a0 = a1 = 1/2; Hamming
/// a0 = 25/46, a1 = 21/46; Blackman a0 = 0.42, a1 = 0.5, a2 = 0.08.
/// Computed in double, stored as float32 (output_datatype 1, the default;
/// others are refused). Output [size].
LogicalResult convertCosineWindow(NodeContext &ctx, double a0, double a1, double a2) {
  if (ctx.numInputs() != 1 || !ctx.hasInput(0))
    return ctx.fail("takes one input, the window length");
  const Tensor *size = ctx.constant(0);
  if (!size || size->isFloat() || size->numElements() != 1)
    return ctx.fail("the window length (input 0) must be an integer scalar known when the "
                    "model is compiled (it sets the output's shape)");
  int64_t n = size->ints[0];
  if (n < 1 || n > kMaxWindow)
    return ctx.fail("window length " + llvm::Twine(n) + " is outside 1 to " +
                    llvm::Twine(kMaxWindow));
  int64_t type = ctx.attrInt("output_datatype", kFloat);
  if (type != kFloat)
    return ctx.fail("output_datatype " + llvm::Twine(type) +
                    " is not supported; Kiln builds float32 windows (1)");
  int64_t periodic = ctx.attrInt("periodic", 1);
  if (periodic != 0 && periodic != 1)
    return ctx.fail("periodic must be 0 or 1, not " + llvm::Twine(periodic));
  double n1 = double(periodic ? n : n - 1);
  Tensor out;
  out.dataType = kFloat;
  out.dims = {n};
  for (int64_t k = 0; k < n; ++k) {
    // A symmetric window of length 1 is [1] (n1 = 0).
    double phase = n1 > 0 ? 2.0 * M_PI * double(k) / n1 : 0.0;
    out.floats.push_back(float(a0 - a1 * std::cos(phase) + a2 * std::cos(2 * phase)));
  }
  return ctx.setConstant(0, std::move(out));
}

LogicalResult convertHannWindow(NodeContext &ctx) {
  return convertCosineWindow(ctx, 0.5, 0.5, 0.0);
}
LogicalResult convertHammingWindow(NodeContext &ctx) {
  return convertCosineWindow(ctx, 25.0 / 46.0, 21.0 / 46.0, 0.0);
}
LogicalResult convertBlackmanWindow(NodeContext &ctx) {
  return convertCosineWindow(ctx, 0.42, 0.5, 0.08);
}

} // namespace

void registerWindowOps(ConverterTable &table) {
  table["HannWindow"] = convertHannWindow;
  table["HammingWindow"] = convertHammingWindow;
  table["BlackmanWindow"] = convertBlackmanWindow;
}

} // namespace kiln::onnx
