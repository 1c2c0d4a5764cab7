//===- ONNXMaxPoolIndexOps.cpp - ONNX MaxPool with its Indices output -----===//
//
// MaxPool (8, 10, 11, 12) with output 1, Indices, -> TOSA (ONNXConvOps.cpp
// converts MaxPool without it and hands this case here): 1-D and 2-D
// windows, every tap one tosa.gather of the planes at constant positions,
// a running maximum that takes a tap only where it is strictly greater
// (the first maximum in row-major window order wins, as ONNX Runtime's
// loop keeps it) and the tap's constant flat index alongside. Indices
// count over the whole input, N and C included: ((n C + c) H + h) W + w,
// or with storage_order = 1 (n C + c) H W + w H + h. Taps in the padding
// never win.
//
//===----------------------------------------------------------------------===//
#include "ONNXConverter.h"

#include <limits>
#include <string>
#include <vector>

using namespace mlir;

namespace kiln::onnx {

/// The most gathered elements (taps x planes x outputs) this builds.
constexpr int64_t kMaxIndexedTaps = int64_t(1) << 24;

LogicalResult convertMaxPoolWithIndices(NodeContext &ctx) {
  std::vector<int64_t> xs = ctx.inputShape(0);
  int64_t rank = xs.size(), spatial = rank - 2;
  if ((rank != 3 && rank != 4) || !isFloatType(ctx.inputType(0)))
    return ctx.fail("the Indices output is converted for float32 1-D and 2-D pools ([N, C, W] "
                    "or [N, C, H, W]), not input " +
                    shapeString(xs));
  std::string autoPad = ctx.attrString("auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "VALID")
    return ctx.fail("auto_pad " + autoPad + " with the Indices output is not supported");
  if (ctx.attrInt("ceil_mode", 0) != 0)
    return ctx.fail("ceil_mode with the Indices output is not supported");
  auto ints = [&](const char *name, size_t count, int64_t def) {
    std::vector<int64_t> v = ctx.attrInts(name, std::vector<int64_t>(count, def));
    return v.size() == count ? v : std::vector<int64_t>();
  };
  std::vector<int64_t> kernel = ints("kernel_shape", spatial, 0),
                       strides = ints("strides", spatial, 1), dil = ints("dilations", spatial, 1),
                       pads = autoPad == "VALID" ? std::vector<int64_t>(2 * spatial, 0)
                                                 : ints("pads", 2 * spatial, 0);
  if (kernel.empty() || strides.empty() || dil.empty() || pads.empty())
    return ctx.fail("kernel_shape, strides, dilations and pads need one value (pads two) per "
                    "spatial axis");
  // Lift 1-D to 2-D: H = 1.
  int64_t h = spatial == 2 ? xs[2] : 1, w = xs.back();
  int64_t kh = spatial == 2 ? kernel[0] : 1, kw = kernel.back();
  int64_t sh = spatial == 2 ? strides[0] : 1, sw = strides.back();
  int64_t dh = spatial == 2 ? dil[0] : 1, dw = dil.back();
  int64_t ph = spatial == 2 ? pads[0] : 0, pw = pads[spatial - 1];
  int64_t eh = spatial == 2 ? pads[2] : 0, ew = pads[2 * spatial - 1];
  if (kh < 1 || kw < 1 || sh < 1 || sw < 1 || dh < 1 || dw < 1)
    return ctx.fail("kernel, strides and dilations must be >= 1");
  int64_t oh = (h + ph + eh - ((kh - 1) * dh + 1)) / sh + 1;
  int64_t ow = (w + pw + ew - ((kw - 1) * dw + 1)) / sw + 1;
  if (oh < 1 || ow < 1)
    return ctx.fail("the window does not fit the padded input");
  int64_t planes = xs[0] * xs[1], outputs = oh * ow;
  if (kh * kw * planes * outputs > kMaxIndexedTaps)
    return ctx.fail("the pool gathers " + llvm::Twine(kh * kw * planes * outputs) +
                    " elements, above the " + llvm::Twine(kMaxIndexedTaps) +
                    " Kiln's MaxPool with Indices builds");
  bool columnMajor = ctx.attrInt("storage_order", 0) != 0;
  FailureOr<Value> x = ctx.input(0);
  if (failed(x))
    return failure();
  auto &b = ctx.builder();
  Value values = ctx.reshape(*x, {planes, h * w, 1});
  auto f32 = ctx.f32Type({planes, outputs, 1});
  auto i64 = RankedTensorType::get({planes, outputs, 1}, b.getI64Type());
  auto i1 = RankedTensorType::get({planes, outputs, 1}, b.getI1Type());
  Value best, index;
  for (int64_t i = 0; i < kh; ++i)
    for (int64_t j = 0; j < kw; ++j) {
      std::vector<int32_t> rows(planes * outputs);
      std::vector<int64_t> flat(planes * outputs);
      std::vector<int32_t> inside(outputs);
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xo = 0; xo < ow; ++xo) {
          int64_t hy = y * sh - ph + i * dh, wx = xo * sw - pw + j * dw;
          bool in = hy >= 0 && hy < h && wx >= 0 && wx < w;
          inside[y * ow + xo] = in;
          int64_t cell = in ? hy * w + wx : 0;
          int64_t stored = in ? (columnMajor ? wx * h + hy : hy * w + wx) : -1;
          for (int64_t p = 0; p < planes; ++p) {
            rows[p * outputs + y * ow + xo] = int32_t(cell);
            flat[p * outputs + y * ow + xo] = stored < 0 ? -1 : p * h * w + stored;
          }
        }
      Value tap = ctx.create<tosa::GatherOp>(f32, values, ctx.constI32({planes, outputs}, rows));
      Value valid = ctx.create<tosa::EqualOp>(RankedTensorType::get({1, outputs, 1}, b.getI1Type()),
                                              ctx.constI32({1, outputs, 1}, inside),
                                              ctx.constI32({1, 1, 1}, {1}));
      tap = ctx.create<tosa::SelectOp>(f32, valid, tap,
                                       ctx.scalarF32(-std::numeric_limits<float>::infinity(), 3));
      Value tapIndex = ctx.constI64({planes, outputs, 1}, flat);
      if (!best) {
        best = tap;
        index = tapIndex;
        continue;
      }
      Value greater = ctx.create<tosa::GreaterOp>(i1, tap, best);
      best = ctx.create<tosa::SelectOp>(f32, greater, tap, best);
      index = ctx.create<tosa::SelectOp>(i64, greater, tapIndex, index);
    }
  std::vector<int64_t> out = xs;
  if (spatial == 2)
    out[2] = oh;
  out.back() = ow;
  if (failed(ctx.setOutput(0, ctx.reshape(best, out))))
    return failure();
  return ctx.setOutput(1, ctx.reshape(index, out));
}

} // namespace kiln::onnx
