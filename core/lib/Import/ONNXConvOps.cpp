//===- ONNXConvOps.cpp - ONNX convolutions, matmuls, pools, norms ---------===//
//
// Conv, ConvTranspose, Gemm, MatMul, BatchNormalization, MaxPool,
// AveragePool, GlobalAveragePool, GlobalMaxPool, LayerNormalization,
// InstanceNormalization and LRN -> TOSA, float32.
//
// Layout: ONNX is NCHW, TOSA's convolutions and pools are NHWC. Each
// windowed op is emitted as transposeToChannelsLast -> TOSA op ->
// transposeToChannelsFirst (the pattern kiln-sink-transposes cancels between
// consecutive ops). 1-D ops ([N, C, W]) are reshaped to 2-D with H = 1 around
// that pattern; 3-D ones are refused.
//
// Weights: ONNX Conv weights are [M, C/group, KH, KW]; TOSA conv2d wants
// [M, KH, KW, C] (OHWI), depthwise_conv2d [KH, KW, C, M/C] and
// transpose_conv2d [M, KH, KW, C]. Constant weights are rearranged here, in
// C++, so the artifact holds the TOSA layout; weights computed by the graph
// (model inputs in the backend tests) are rearranged with tosa.transpose,
// tosa.slice and tosa.reshape.
//
//===----------------------------------------------------------------------===//
#include "ONNXConverter.h"
#include "ONNXWindow.h"
#include "WindowShape.h"

#include <array>
#include <cmath>
#include <limits>

using namespace mlir;

namespace kiln::onnx {
namespace {

using shapes::shapeOf;

/// Input `i` as an f32 SSA value; fails naming it unless it is a float tensor.
FailureOr<Value> floatInput(NodeContext &ctx, int i) {
  if (!ctx.hasInput(i))
    return ctx.fail("input " + llvm::Twine(i) + " is missing");
  if (!isFloatType(ctx.inputType(i)))
    return ctx.fail("input " + llvm::Twine(i) + " ('" + ctx.node().inputs[i] +
                    "') has element type " + dataTypeName(ctx.inputType(i)) + "; " +
                    ctx.node().opType + " is converted for float tensors only");
  return ctx.input(i);
}

Value mul(NodeContext &ctx, Value a, Value b, llvm::ArrayRef<int64_t> shape) {
  return ctx.create<tosa::MulOp>(ctx.f32Type(shape), a, b, ctx.builder().getI32IntegerAttr(0));
}

/// One TOSA reduction (sum or max) over each axis in `axes`; reduced axes stay
/// as size-1 dimensions.
Value reduce(NodeContext &ctx, Value v, llvm::ArrayRef<int64_t> axes, bool max) {
  for (int64_t axis : axes) {
    std::vector<int64_t> shape = shapeOf(v);
    shape[axis] = 1;
    IntegerAttr attr = ctx.builder().getI64IntegerAttr(axis);
    v = max ? ctx.create<tosa::ReduceMaxOp>(ctx.f32Type(shape), v, attr)
            : ctx.create<tosa::ReduceSumOp>(ctx.f32Type(shape), v, attr);
  }
  return v;
}

// --- Weights rearranged at import ------------------------------------------

/// A weight or bias on its way to a TOSA layout: `data` when known at
/// import (rearranged in C++), else the SSA `value` (rearranged by TOSA ops).
struct Operand {
  std::shared_ptr<Tensor> data;
  Value value;
  std::vector<int64_t> dims;
};

FailureOr<Operand> operand(NodeContext &ctx, int i) {
  if (const Tensor *t = ctx.constant(i)) {
    auto copy = std::make_shared<Tensor>();
    copy->dims = t->dims;
    copy->floats.resize(t->numElements());
    for (int64_t k = 0; k < t->numElements(); ++k)
      copy->floats[k] = float(t->at(k));
    return Operand{copy, Value(), t->dims};
  }
  FailureOr<Value> v = floatInput(ctx, i);
  if (failed(v))
    return failure();
  return Operand{nullptr, *v, shapeOf(*v)};
}

Operand zeros(int64_t n) {
  auto t = std::make_shared<Tensor>();
  t->dims = {n};
  t->floats.assign(n, 0.0f);
  return Operand{t, Value(), {n}};
}

Value valueOf(NodeContext &ctx, const Operand &w) {
  return w.data ? ctx.constF32(w.dims, w.data->floats) : w.value;
}

Operand reshaped(NodeContext &ctx, Operand w, std::vector<int64_t> dims) {
  if (w.data)
    w.data->dims = dims;
  else
    w.value = ctx.reshape(w.value, dims);
  w.dims = std::move(dims);
  return w;
}

/// Output dimension k is input dimension perm[k].
Operand permuted(NodeContext &ctx, const Operand &w, llvm::ArrayRef<int32_t> perm) {
  size_t rank = w.dims.size();
  std::vector<int64_t> dims(rank), inStride(rank, 1);
  for (size_t k = rank; k-- > 1;)
    inStride[k - 1] = inStride[k] * w.dims[k];
  for (size_t k = 0; k < rank; ++k)
    dims[k] = w.dims[perm[k]];
  if (!w.data)
    return Operand{nullptr, ctx.transpose(w.value, perm), dims};
  auto t = std::make_shared<Tensor>();
  t->dims = dims;
  t->floats.resize(w.data->floats.size());
  std::vector<int64_t> index(rank, 0);
  for (size_t out = 0; out < t->floats.size(); ++out) {
    int64_t offset = 0;
    for (size_t k = 0; k < rank; ++k)
      offset += index[k] * inStride[perm[k]];
    t->floats[out] = w.data->floats[offset];
    for (size_t k = rank; k-- > 0;) { // odometer over the output index
      if (++index[k] < dims[k])
        break;
      index[k] = 0;
    }
  }
  return Operand{t, Value(), dims};
}

/// Rows [begin, begin + count) of dimension 0.
Operand rows(NodeContext &ctx, const Operand &w, int64_t begin, int64_t count) {
  std::vector<int64_t> dims = w.dims;
  if (begin == 0 && count == dims[0])
    return w;
  dims[0] = count;
  if (!w.data) {
    std::vector<int64_t> start(dims.size(), 0);
    start[0] = begin;
    return Operand{nullptr, ctx.slice(w.value, start, dims), dims};
  }
  int64_t inner = product(dims) / count;
  auto t = std::make_shared<Tensor>();
  t->dims = dims;
  t->floats.assign(w.data->floats.begin() + begin * inner,
                   w.data->floats.begin() + (begin + count) * inner);
  return Operand{t, Value(), dims};
}

/// An [O, KH, KW, I] kernel dilated by (dh, dw): taps moved apart with zeros
/// between them, [O, (KH-1)*dh+1, (KW-1)*dw+1, I].
Operand dilated(NodeContext &ctx, const Operand &w, int64_t dh, int64_t dw) {
  if (dh == 1 && dw == 1)
    return w;
  int64_t o = w.dims[0], kh = w.dims[1], kw = w.dims[2], i = w.dims[3];
  std::vector<int64_t> dims = {o, (kh - 1) * dh + 1, (kw - 1) * dw + 1, i};
  if (!w.data) {
    // [O,KH,1,KW,1,I] padded to [O,KH,dh,KW,dw,I], merged, cropped.
    Value v = ctx.reshape(w.value, {o, kh, 1, kw, 1, i});
    v = ctx.padZeros(v, {0, 0, 0, 0, 0, 0}, {0, 0, dh - 1, 0, dw - 1, 0});
    v = ctx.reshape(v, {o, kh * dh, kw * dw, i});
    return Operand{nullptr, ctx.slice(v, {0, 0, 0, 0}, dims), dims};
  }
  auto t = std::make_shared<Tensor>();
  t->dims = dims;
  t->floats.assign(product(dims), 0.0f);
  for (int64_t a = 0; a < o; ++a)
    for (int64_t y = 0; y < kh; ++y)
      for (int64_t x = 0; x < kw; ++x)
        for (int64_t c = 0; c < i; ++c)
          t->floats[((a * dims[1] + y * dh) * dims[2] + x * dw) * i + c] =
              w.data->floats[((a * kh + y) * kw + x) * i + c];
  return Operand{t, Value(), dims};
}

} // namespace

// --- Windows -----------------------------------------------------------------

/// Fails unless `rank` is that of a 1-D or 2-D windowed op's input.
LogicalResult checkSpatialRank(NodeContext &ctx, int64_t rank) {
  if (rank == 3 || rank == 4)
    return success();
  if (rank == 5)
    return ctx.fail("3-D " + ctx.node().opType + " (a rank-5 input) is not supported; Kiln "
                    "converts 1-D and 2-D ones (rank-3 and rank-4 inputs)");
  return ctx.fail("input 0 has rank " + llvm::Twine(rank) + "; " + ctx.node().opType +
                  " takes [N, C, W] or [N, C, H, W]");
}

/// Reads an INTS attribute of `count` values per spatial dimension (`count`
/// 1 or 2: pads hold begins then ends) into `dst` lifted to 2-D.
LogicalResult readPerDim(NodeContext &ctx, const std::string &name, int64_t spatial,
                         std::array<int64_t, 2> &dst, std::array<int64_t, 2> *ends,
                         int64_t min) {
  if (!ctx.hasAttr(name))
    return success();
  std::vector<int64_t> v = ctx.attrInts(name);
  size_t want = size_t(spatial) * (ends ? 2 : 1);
  if (v.size() != want)
    return ctx.fail("attribute " + name + " has " + llvm::Twine(v.size()) + " values; the " +
                    llvm::Twine(spatial) + "-D input needs " + llvm::Twine(want));
  for (int64_t x : v)
    if (x < min)
      return ctx.fail("attribute " + name + " holds " + llvm::Twine(x) + "; values below " +
                      llvm::Twine(min) + " are invalid");
  int64_t lift = 2 - spatial;
  for (int64_t j = 0; j < spatial; ++j) {
    dst[lift + j] = v[j];
    if (ends)
      (*ends)[lift + j] = v[spatial + j];
  }
  return success();
}

/// Kernel (from `kernel`, the weight's spatial dims or kernel_shape),
/// strides and dilations of a windowed op on the ONNX input `inShape`.
FailureOr<Window> readWindow(NodeContext &ctx, llvm::ArrayRef<int64_t> inShape,
                             llvm::ArrayRef<int64_t> kernel) {
  int64_t spatial = int64_t(inShape.size()) - 2;
  Window w;
  if (int64_t(kernel.size()) != spatial)
    return ctx.fail("the kernel has " + llvm::Twine(kernel.size()) +
                    " spatial dimensions; the input has " + llvm::Twine(spatial));
  for (int64_t j = 0; j < spatial; ++j) {
    if (kernel[j] < 1)
      return ctx.fail("kernel size " + llvm::Twine(kernel[j]) + " is invalid");
    w.kernel[2 - spatial + j] = kernel[j];
    w.in[2 - spatial + j] = inShape[2 + j];
  }
  if (failed(readPerDim(ctx, "strides", spatial, w.stride, nullptr, 1)) ||
      failed(readPerDim(ctx, "dilations", spatial, w.dilation, nullptr, 1)))
    return failure();
  return w;
}

/// Padding and output size of a convolution or pool (ONNX auto_pad: NOTSET
/// reads `pads`; SAME_UPPER / SAME_LOWER pad to out = ceil(in / stride), the
/// odd element at the end / the beginning; VALID pads nothing), fitted to
/// TOSA by fitWindow (WindowShape.h): input past the last window leaves the
/// end pad; the rest stays unread with an end pad of 0. With
/// `ceilMode` the output size rounds up and the last window's overhang is
/// added to the end padding (pools only).
LogicalResult forwardPadding(NodeContext &ctx, Window &w, bool ceilMode) {
  int64_t spatial = ctx.inputRank(0) - 2;
  std::string autoPad = ctx.attrString("auto_pad", "NOTSET");
  for (int d = 0; d < 2; ++d) {
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      int64_t out = (w.in[d] + w.stride[d] - 1) / w.stride[d];
      int64_t total = std::max<int64_t>((out - 1) * w.stride[d] + w.extent(d) - w.in[d], 0);
      w.padBegin[d] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.padEnd[d] = total - w.padBegin[d];
    } else if (autoPad != "VALID" && autoPad != "NOTSET") {
      return ctx.fail("auto_pad '" + autoPad + "' is not supported; Kiln supports NOTSET, "
                      "SAME_UPPER, SAME_LOWER and VALID");
    }
  }
  if (autoPad != "NOTSET" && ctx.hasAttr("pads"))
    return ctx.fail("attribute pads is given with auto_pad " + autoPad +
                    "; ONNX takes one or the other");
  if (autoPad == "NOTSET" && failed(readPerDim(ctx, "pads", spatial, w.padBegin, &w.padEnd, 0)))
    return failure();
  for (int d = 0; d < 2; ++d) {
    WindowAxis axis{w.in[d], w.kernel[d], w.stride[d], w.dilation[d], w.padBegin[d],
                    w.padEnd[d]};
    if (axis.span() < 0)
      return ctx.fail("the padded input size " + llvm::Twine(axis.span() + w.extent(d)) +
                      " is smaller than the window extent " + llvm::Twine(w.extent(d)) +
                      " (kernel " + llvm::Twine(w.kernel[d]) + ", dilation " +
                      llvm::Twine(w.dilation[d]) + "): there is no output");
    TosaWindowAxis t =
        fitWindow(axis, ceilMode ? WindowRounding::Ceil : WindowRounding::Floor);
    if (!fitsWindows(axis, t))
      return ctx.fail("with pads " + llvm::Twine(w.padBegin[d]) + " and " +
                      llvm::Twine(w.padEnd[d]) + ", stride " + llvm::Twine(w.stride[d]) +
                      " and window extent " + llvm::Twine(w.extent(d)) +
                      " no window reads the input (size " + llvm::Twine(w.in[d]) + ")");
    w.out[d] = t.out;
    w.padEnd[d] = t.padEnd;
    w.overhang[d] = t.overhang;
  }
  return success();
}

/// [N, C, W] -> [N, C, 1, W]; rank 4 unchanged.
Value lift2D(NodeContext &ctx, Value x) {
  std::vector<int64_t> s = shapeOf(x);
  return s.size() == 3 ? ctx.reshape(x, {s[0], s[1], 1, s[2]}) : x;
}

/// The NCHW result of a lifted op back to the input's rank.
Value unlift(NodeContext &ctx, Value y, int64_t rank) {
  std::vector<int64_t> s = shapeOf(y);
  return rank == 3 ? ctx.reshape(y, {s[0], s[1], s[3]}) : y;
}

namespace {

// --- Conv ----------------------------------------------------------------------

/// A convolution's operands: the NHWC input, the ONNX weight lifted to rank 4
/// (Conv [M, C/group, KH, KW], ConvTranspose [C, M/group, KH, KW]), the bias
/// [M] (zeros when absent), the window and the group count.
struct ConvOperands {
  Value input;
  Operand weight, bias;
  Window window;
  int64_t group = 1;
};

/// One tosa.conv2d of `in` (NHWC) by the ONNX [Mg, Cg, KH, KW] weight `w`.
Value conv2d(NodeContext &ctx, Value in, const Operand &w, const Operand &bias,
             const Window &win) {
  auto &b = ctx.builder();
  Operand ohwi = permuted(ctx, w, {0, 2, 3, 1});
  int64_t n = shapeOf(in)[0];
  return ctx.create<tosa::Conv2DOp>(
      ctx.f32Type({n, win.out[0], win.out[1], w.dims[0]}), in, valueOf(ctx, ohwi),
      valueOf(ctx, bias), win.tosaPad(b), b.getDenseI64ArrayAttr(win.stride),
      b.getDenseI64ArrayAttr(win.dilation), nullptr);
}

/// tosa.depthwise_conv2d: group == C, weight [C*mult, 1, KH, KW] ->
/// [KH, KW, C, mult] (output channel c*mult + j reads input channel c).
Value depthwise(NodeContext &ctx, const ConvOperands &op) {
  auto &b = ctx.builder();
  const std::vector<int64_t> &d = op.weight.dims;
  int64_t c = op.group, mult = d[0] / op.group;
  Operand w = reshaped(ctx, permuted(ctx, op.weight, {2, 3, 0, 1}), {d[2], d[3], c, mult});
  int64_t n = shapeOf(op.input)[0];
  return ctx.create<tosa::DepthwiseConv2DOp>(
      ctx.f32Type({n, op.window.out[0], op.window.out[1], d[0]}), op.input, valueOf(ctx, w),
      valueOf(ctx, op.bias), op.window.tosaPad(b), b.getDenseI64ArrayAttr(op.window.stride),
      b.getDenseI64ArrayAttr(op.window.dilation), nullptr);
}

/// Grouped convolution as `group` convolutions of channel slices,
/// concatenated along channels.
Value groupedConv(NodeContext &ctx, const ConvOperands &op) {
  std::vector<int64_t> in = shapeOf(op.input);
  int64_t cg = in[3] / op.group, mg = op.weight.dims[0] / op.group;
  llvm::SmallVector<Value> parts;
  for (int64_t g = 0; g < op.group; ++g) {
    Value x = ctx.slice(op.input, {0, 0, 0, g * cg}, {in[0], in[1], in[2], cg});
    parts.push_back(conv2d(ctx, x, rows(ctx, op.weight, g * mg, mg),
                           rows(ctx, op.bias, g * mg, mg), op.window));
  }
  std::vector<int64_t> out = shapeOf(parts[0]);
  out[3] = op.weight.dims[0];
  return ctx.create<tosa::ConcatOp>(ctx.f32Type(out), parts, ctx.builder().getI64IntegerAttr(3));
}

/// Reads the weight (input 1, lifted to rank 4) and the bias (input 2, or
/// zeros) of Conv / ConvTranspose; `outChannels` is the bias length.
LogicalResult readWeights(NodeContext &ctx, ConvOperands &op, int64_t outChannels) {
  FailureOr<Operand> w = operand(ctx, 1);
  if (failed(w))
    return failure();
  if (w->dims.size() != size_t(ctx.inputRank(0)))
    return ctx.fail("the weight (input 1) has shape " + shapeString(w->dims) +
                    "; for an input of rank " + llvm::Twine(ctx.inputRank(0)) +
                    " it needs the same rank");
  if (w->dims.size() == 3)
    *w = reshaped(ctx, *w, {w->dims[0], w->dims[1], 1, w->dims[2]});
  op.weight = *w;
  op.bias = zeros(outChannels);
  if (ctx.hasInput(2)) {
    FailureOr<Operand> bias = operand(ctx, 2);
    if (failed(bias))
      return failure();
    if (bias->dims != std::vector<int64_t>{outChannels})
      return ctx.fail("the bias (input 2) has shape " + shapeString(bias->dims) +
                      "; it needs [" + llvm::Twine(outChannels) + "]");
    op.bias = *bias;
  }
  return success();
}

} // namespace

/// Fails if kernel_shape is given and differs from the weight's spatial
/// dimensions `kernel`.
LogicalResult checkKernelShape(NodeContext &ctx, llvm::ArrayRef<int64_t> kernel) {
  if (ctx.hasAttr("kernel_shape") && llvm::ArrayRef(ctx.attrInts("kernel_shape")) != kernel)
    return ctx.fail("kernel_shape " + shapeString(ctx.attrInts("kernel_shape")) +
                    " differs from the weight's spatial dimensions " + shapeString(kernel));
  return success();
}

namespace {

// --- 3-D Conv ----------------------------------------------------------------

/// The per-axis window of a 3-D Conv: kernel, stride, dilation and the ONNX
/// pads (auto_pad NOTSET reads `pads`, VALID pads nothing, SAME_UPPER /
/// SAME_LOWER pad to out = ceil(in / stride)), each axis fitted to TOSA by
/// fitWindow with `rounding` (ceil_mode pools: Ceil). Index 0 is D, 1 H, 2 W.
FailureOr<std::array<WindowAxis, 3>> readWindow3D(NodeContext &ctx, llvm::ArrayRef<int64_t> xs,
                                                  llvm::ArrayRef<int64_t> kernel,
                                                  std::array<TosaWindowAxis, 3> &fitted,
                                                  WindowRounding rounding) {
  auto ints = [&](const char *name, int64_t count, int64_t def,
                  int64_t min) -> FailureOr<std::vector<int64_t>> {
    std::vector<int64_t> v = ctx.attrInts(name, std::vector<int64_t>(count, def));
    if (int64_t(v.size()) != count)
      return ctx.fail(llvm::Twine("attribute ") + name + " has " + llvm::Twine(v.size()) +
                      " values; the 3-D input needs " + llvm::Twine(count));
    for (int64_t x : v)
      if (x < min)
        return ctx.fail(llvm::Twine("attribute ") + name + " holds " + llvm::Twine(x) +
                        "; values below " + llvm::Twine(min) + " are invalid");
    return v;
  };
  auto strides = ints("strides", 3, 1, 1), dilations = ints("dilations", 3, 1, 1),
       pads = ints("pads", 6, 0, 0);
  if (failed(strides) || failed(dilations) || failed(pads))
    return failure();
  std::string autoPad = ctx.attrString("auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER")
    return ctx.fail("auto_pad '" + autoPad +
                    "' is not supported; Kiln supports NOTSET, "
                    "SAME_UPPER, SAME_LOWER and VALID");
  if (autoPad != "NOTSET" && ctx.hasAttr("pads"))
    return ctx.fail("attribute pads is given with auto_pad " + autoPad +
                    "; ONNX takes one or the other");
  std::array<WindowAxis, 3> axes;
  for (int d = 0; d < 3; ++d) {
    WindowAxis &a = axes[d];
    a = WindowAxis{xs[2 + d], kernel[d], (*strides)[d], (*dilations)[d], 0, 0};
    if (autoPad == "NOTSET") {
      a.padBegin = (*pads)[d];
      a.padEnd = (*pads)[3 + d];
    } else if (autoPad != "VALID") {
      int64_t out = (a.in + a.stride - 1) / a.stride;
      int64_t total = std::max<int64_t>((out - 1) * a.stride + a.extent() - a.in, 0);
      a.padBegin = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      a.padEnd = total - a.padBegin;
    }
    if (a.span() < 0)
      return ctx.fail("the padded input size " + llvm::Twine(a.span() + a.extent()) +
                      " is smaller than the window extent " + llvm::Twine(a.extent()) +
                      ": there is no output");
    fitted[d] = fitWindow(a, rounding);
    if (!fitsWindows(a, fitted[d]))
      return ctx.fail("with pads " + llvm::Twine(a.padBegin) + " and " + llvm::Twine(a.padEnd) +
                      " and stride " + llvm::Twine(a.stride) + " no window reads the input");
  }
  return axes;
}

/// Conv with a rank-5 input (3-D): X [N, C, D, H, W], W [M, C/group, KD,
/// KH, KW], B [M]. Decomposed into 2-D convolutions, one per depth tap kd:
/// Y[n, :, od] = B + sum over kd of conv2d(Xp[n, :, od*sd + kd*dd], W[:, :, kd])
/// where Xp is X zero-padded along D. The output depths of one tap are
/// folded into the batch ([N*OD, H, W, C]), so each tap is one 2-D
/// convolution (grouped and depthwise as in 2-D), summed over the taps.
LogicalResult convertConv3D(NodeContext &ctx, Value x) {
  std::vector<int64_t> xs = ctx.inputShape(0), ws = ctx.inputShape(1);
  ConvOperands op;
  op.group = ctx.attrInt("group", 1);
  if (ws.size() != 5)
    return ctx.fail("the weight (input 1) has shape " + shapeString(ws) + "; it needs rank 5");
  if (op.group < 1 || xs[1] % op.group != 0 || ws[0] % op.group != 0 || ws[1] * op.group != xs[1])
    return ctx.fail("group " + llvm::Twine(op.group) + " does not fit input channels " +
                    llvm::Twine(xs[1]) + " and weight shape " + shapeString(ws) +
                    " (W must be [M, C/group, ...] with M a multiple of group)");
  std::vector<int64_t> kernel(ws.begin() + 2, ws.end());
  if (failed(checkKernelShape(ctx, kernel)))
    return failure();
  FailureOr<Operand> weight = operand(ctx, 1);
  if (failed(weight))
    return failure();
  Operand bias = zeros(ws[0]);
  if (ctx.hasInput(2)) {
    FailureOr<Operand> b = operand(ctx, 2);
    if (failed(b))
      return failure();
    if (b->dims != std::vector<int64_t>{ws[0]})
      return ctx.fail("the bias (input 2) has shape " + shapeString(b->dims) + "; it needs [" +
                      llvm::Twine(ws[0]) + "]");
    bias = *b;
  }
  std::array<TosaWindowAxis, 3> fit;
  FailureOr<std::array<WindowAxis, 3>> axes =
      readWindow3D(ctx, xs, kernel, fit, WindowRounding::Floor);
  if (failed(axes))
    return failure();
  const WindowAxis &depth = (*axes)[0];
  const int64_t n = xs[0], c = xs[1], od = fit[0].out;
  for (int d = 0; d < 2; ++d) {
    const WindowAxis &a = (*axes)[1 + d];
    op.window.kernel[d] = a.kernel;
    op.window.stride[d] = a.stride;
    op.window.dilation[d] = a.dilation;
    op.window.padBegin[d] = a.padBegin;
    op.window.padEnd[d] = fit[1 + d].padEnd;
    op.window.in[d] = a.in;
    op.window.out[d] = fit[1 + d].out;
  }
  // NDHWC, zero-padded along D.
  Value cl = ctx.transposeToChannelsLast(x);
  Value padded = ctx.padZeros(cl, {0, depth.padBegin, 0, 0, 0}, {0, depth.padEnd, 0, 0, 0});
  // W [M, Cg, KD, KH, KW] -> [KD, M, Cg, KH, KW]: tap kd is rows kd.
  Operand taps = permuted(ctx, *weight, {2, 0, 1, 3, 4});
  Value sum;
  for (int64_t kd = 0; kd < depth.kernel; ++kd) {
    llvm::SmallVector<Value> planes;
    for (int64_t o = 0; o < od; ++o)
      planes.push_back(ctx.slice(padded, {0, o * depth.stride + kd * depth.dilation, 0, 0, 0},
                                 {n, 1, xs[3], xs[4], c}));
    Value stacked = planes.size() == 1
                        ? planes[0]
                        : ctx.create<tosa::ConcatOp>(ctx.f32Type({n, od, xs[3], xs[4], c}), planes,
                                                     ctx.builder().getI64IntegerAttr(1));
    op.input = ctx.reshape(stacked, {n * od, xs[3], xs[4], c});
    op.weight = reshaped(ctx, rows(ctx, taps, kd, 1), {ws[0], ws[1], ws[3], ws[4]});
    op.bias = kd == 0 ? bias : zeros(ws[0]);
    Value y;
    if (op.group == 1)
      y = conv2d(ctx, op.input, op.weight, op.bias, op.window);
    else if (op.group == c)
      y = depthwise(ctx, op);
    else
      y = groupedConv(ctx, op);
    sum = sum ? ctx.create<tosa::AddOp>(y.getType(), sum, y) : y;
  }
  Value y = ctx.reshape(sum, {n, od, op.window.out[0], op.window.out[1], ws[0]});
  return ctx.setOutput(0, ctx.transposeToChannelsFirst(y));
}

/// Conv (opsets 1, 11): Y[n, m] = B[m] + sum over the m's group of input
/// channels c and kernel taps k of X[n, c, s*o + d*k - pad_begin] * W[m, c, k].
/// X [N, C, (H,) W], W [M, C/group, (KH,) KW], B [M] optional; auto_pad,
/// pads, strides, dilations as forwardPadding reads them. group 1 is one
/// tosa.conv2d, group == C (W [C*mult, 1, ...]) a tosa.depthwise_conv2d, other
/// groups one conv2d per group. A rank-5 input (3-D) goes to convertConv3D.
LogicalResult convertConv(NodeContext &ctx) {
  FailureOr<Value> x = floatInput(ctx, 0);
  if (succeeded(x) && ctx.inputRank(0) == 5)
    return convertConv3D(ctx, *x);
  if (failed(x) || failed(checkSpatialRank(ctx, ctx.inputRank(0))))
    return failure();
  std::vector<int64_t> xs = ctx.inputShape(0), ws = ctx.inputShape(1);
  ConvOperands op;
  op.group = ctx.attrInt("group", 1);
  if (ws.size() != xs.size() || ws.empty())
    return ctx.fail("the weight (input 1) has shape " + shapeString(ws) + "; it needs rank " +
                    llvm::Twine(xs.size()));
  if (op.group < 1 || xs[1] % op.group != 0 || ws[0] % op.group != 0 ||
      ws[1] * op.group != xs[1])
    return ctx.fail("group " + llvm::Twine(op.group) + " does not fit input channels " +
                    llvm::Twine(xs[1]) + " and weight shape " + shapeString(ws) +
                    " (W must be [M, C/group, ...] with M a multiple of group)");
  std::vector<int64_t> kernel(ws.begin() + 2, ws.end());
  if (failed(checkKernelShape(ctx, kernel)) || failed(readWeights(ctx, op, ws[0])))
    return failure();
  FailureOr<Window> win = readWindow(ctx, xs, kernel);
  if (failed(win) || failed(forwardPadding(ctx, *win, false)))
    return failure();
  op.window = *win;
  op.input = ctx.transposeToChannelsLast(lift2D(ctx, *x));
  Value y;
  if (op.group == 1)
    y = conv2d(ctx, op.input, op.weight, op.bias, op.window);
  else if (op.group == xs[1])
    y = depthwise(ctx, op);
  else
    y = groupedConv(ctx, op);
  return ctx.setOutput(0, unlift(ctx, ctx.transposeToChannelsFirst(y), int64_t(xs.size())));
}

// --- ConvTranspose -----------------------------------------------------------

/// Padding and output size of ConvTranspose per dimension (ONNX spec):
/// out = stride*(in-1) + output_padding + extent - pad_begin - pad_end, or
/// output_shape given (then total = stride*(in-1) + output_padding + extent
/// - out is split as auto_pad says: SAME_UPPER puts floor(total/2) first,
/// otherwise the larger half goes first). auto_pad SAME_* without
/// output_shape makes out = in * stride.
LogicalResult transposePadding(NodeContext &ctx, Window &w) {
  int64_t spatial = ctx.inputRank(0) - 2;
  std::string autoPad = ctx.attrString("auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER")
    return ctx.fail("auto_pad '" + autoPad + "' is not supported; Kiln supports NOTSET, "
                    "SAME_UPPER, SAME_LOWER and VALID");
  std::array<int64_t, 2> outPad{0, 0};
  if (failed(readPerDim(ctx, "output_padding", spatial, outPad, nullptr, 0)))
    return failure();
  std::vector<int64_t> outShape = ctx.attrInts("output_shape");
  if (outShape.size() == size_t(spatial) + 2) // given with N and C
    outShape.erase(outShape.begin(), outShape.begin() + 2);
  if (!outShape.empty() && outShape.size() != size_t(spatial))
    return ctx.fail("output_shape has " + llvm::Twine(outShape.size()) + " values; the " +
                    llvm::Twine(spatial) + "-D input needs " + llvm::Twine(spatial));
  bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
  if (outShape.empty() && !same) {
    if (autoPad == "NOTSET" &&
        failed(readPerDim(ctx, "pads", spatial, w.padBegin, &w.padEnd, 0)))
      return failure();
  }
  for (int d = 0; d < 2; ++d) {
    int64_t full = w.stride[d] * (w.in[d] - 1) + outPad[d] + w.extent(d);
    bool given = !outShape.empty() && d >= 2 - spatial;
    if (given || same) {
      int64_t out = given ? outShape[d - (2 - spatial)] : w.in[d] * w.stride[d];
      int64_t total = full - out;
      int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2); // floor
      w.padBegin[d] = autoPad == "SAME_UPPER" ? half : total - half;
      w.padEnd[d] = total - w.padBegin[d];
    }
    w.out[d] = full - w.padBegin[d] - w.padEnd[d];
    if (w.out[d] < 1)
      return ctx.fail("the output size " + llvm::Twine(w.out[d]) +
                      " is not positive (pads too large)");
  }
  return success();
}

/// The 2-D transposed convolution of the NHWC `input` by `weight` [C,
/// M/group, KH, KW] with window `w` (one tosa.transpose_conv2d per group,
/// concatenated), plus `bias` [M] (null: none): NHWC [N, OH, OW, M].
Value transposeConv2D(NodeContext &ctx, Value input, const Operand &weight, const Operand *bias,
                      const Window &w, int64_t group) {
  std::vector<int64_t> in = shapeOf(input);
  int64_t cg = in[3] / group, mg = weight.dims[1], outChannels = mg * group;
  bool strided = w.stride[0] != 1 || w.stride[1] != 1;
  auto &b = ctx.builder();
  llvm::SmallVector<Value> parts;
  for (int64_t g = 0; g < group; ++g) {
    Value xg = ctx.slice(input, {0, 0, 0, g * cg}, {in[0], in[1], in[2], cg});
    Operand wg = permuted(ctx, rows(ctx, weight, g * cg, cg), {1, 2, 3, 0});
    wg = dilated(ctx, wg, w.dilation[0], w.dilation[1]);
    // MLIR 16's strided transpose_conv2d decomposition adds a rank-1 bias to
    // a rank-4 result that tosa-to-linalg cannot lower: strided ones get a
    // zero bias and the bias is added afterwards.
    Operand gb = strided || !bias ? zeros(mg) : rows(ctx, *bias, g * mg, mg);
    llvm::SmallVector<int64_t> pad;
    for (int d = 0; d < 2; ++d) {
      TosaTransposeAxis t =
          fitTransposeWindow({w.in[d], wg.dims[1 + d], w.stride[d], w.padBegin[d], w.out[d]});
      pad.append({t.outPadBegin, t.outPadEnd});
    }
    std::vector<int64_t> outShape = {in[0], w.out[0], w.out[1], mg};
    parts.push_back(ctx.create<tosa::TransposeConv2DOp>(
        ctx.f32Type(outShape), xg, valueOf(ctx, wg), valueOf(ctx, gb), b.getDenseI64ArrayAttr(pad),
        b.getDenseI64ArrayAttr(w.stride), b.getDenseI64ArrayAttr(outShape), nullptr));
  }
  std::vector<int64_t> outShape = {in[0], w.out[0], w.out[1], outChannels};
  Value y = parts.size() == 1
                ? parts[0]
                : ctx.create<tosa::ConcatOp>(ctx.f32Type(outShape), parts, b.getI64IntegerAttr(3));
  if (strided && bias)
    y = ctx.create<tosa::AddOp>(ctx.f32Type(outShape), y,
                                ctx.reshape(valueOf(ctx, *bias), {1, 1, 1, outChannels}));
  return y;
}

/// ConvTranspose with a rank-5 input (3-D): X [N, C, D, H, W], W [C,
/// M/group, KD, KH, KW]; strides, dilations, pads and output_padding
/// (auto_pad SAME and output_shape are refused in 3-D). Per depth tap kd,
/// every input depth plane (folded into the batch) goes through the 2-D
/// transposed convolution by W[:, :, kd]; the planes are spread along D by
/// the stride (zeros between), shifted by kd * dilation, summed over the
/// taps, and the depth padding cropped: Y[n, m, s*i + d*kd - pad_begin]
/// += plane i of tap kd.
LogicalResult convertConvTranspose3D(NodeContext &ctx, Value x) {
  std::vector<int64_t> xs = ctx.inputShape(0), ws = ctx.inputShape(1);
  int64_t group = ctx.attrInt("group", 1);
  if (ws.size() != 5 || group < 1 || ws[0] != xs[1] || xs[1] % group != 0)
    return ctx.fail("group " + llvm::Twine(group) + " does not fit input channels " +
                    llvm::Twine(xs[1]) + " and weight shape " + shapeString(ws) +
                    " (W must be [C, M/group, KD, KH, KW])");
  std::string autoPad = ctx.attrString("auto_pad", "NOTSET");
  if ((autoPad != "NOTSET" && autoPad != "VALID") || ctx.hasAttr("output_shape"))
    return ctx.fail("auto_pad " + autoPad +
                    (ctx.hasAttr("output_shape") ? " with output_shape" : "") +
                    " is not supported for a 3-D ConvTranspose; Kiln takes pads (NOTSET) "
                    "or VALID there");
  auto ints = [&](const char *name, size_t count, int64_t def) {
    std::vector<int64_t> v = ctx.attrInts(name, std::vector<int64_t>(count, def));
    return v.size() == count ? v : std::vector<int64_t>();
  };
  std::vector<int64_t> strides = ints("strides", 3, 1), dil = ints("dilations", 3, 1),
                       pads = autoPad == "VALID" ? std::vector<int64_t>(6, 0) : ints("pads", 6, 0),
                       outPad = ints("output_padding", 3, 0);
  if (strides.empty() || dil.empty() || pads.empty() || outPad.empty())
    return ctx.fail("strides, dilations, pads and output_padding need 3 (pads 6) values for a "
                    "3-D ConvTranspose");
  std::vector<int64_t> kernel(ws.begin() + 2, ws.end());
  if (failed(checkKernelShape(ctx, kernel)))
    return failure();
  for (int64_t v : strides)
    if (v < 1)
      return ctx.fail("strides must be >= 1");
  for (int64_t v : dil)
    if (v < 1)
      return ctx.fail("dilations must be >= 1");
  std::vector<int64_t> full(3), out(3);
  for (int d = 0; d < 3; ++d) {
    full[d] = strides[d] * (xs[2 + d] - 1) + outPad[d] + (kernel[d] - 1) * dil[d] + 1;
    out[d] = full[d] - pads[d] - pads[3 + d];
    if (out[d] < 1 || pads[d] < 0 || pads[3 + d] < 0)
      return ctx.fail("the output size " + llvm::Twine(out[d]) +
                      " is not positive (pads too large)");
  }
  FailureOr<Operand> weight = operand(ctx, 1);
  if (failed(weight))
    return failure();
  int64_t outChannels = ws[1] * group;
  Operand bias = zeros(outChannels);
  if (ctx.hasInput(2)) {
    FailureOr<Operand> bv = operand(ctx, 2);
    if (failed(bv))
      return failure();
    if (bv->dims != std::vector<int64_t>{outChannels})
      return ctx.fail("the bias (input 2) has shape " + shapeString(bv->dims) + "; it needs [" +
                      llvm::Twine(outChannels) + "]");
    bias = *bv;
  }
  Window w;
  for (int d = 0; d < 2; ++d) {
    w.kernel[d] = kernel[1 + d];
    w.stride[d] = strides[1 + d];
    w.dilation[d] = dil[1 + d];
    w.padBegin[d] = pads[1 + d];
    w.padEnd[d] = pads[4 + d];
    w.in[d] = xs[3 + d];
    w.out[d] = out[1 + d];
  }
  const int64_t n = xs[0], depth = xs[2], sd = strides[0];
  Value planes = ctx.reshape(ctx.transposeToChannelsLast(x), {n * depth, xs[3], xs[4], xs[1]});
  Operand taps = permuted(ctx, *weight, {2, 0, 1, 3, 4}); // [KD, C, M/g, KH, KW]
  const int64_t inner = out[1] * out[2] * outChannels;
  const int64_t spread = (depth - 1) * sd + 1;
  Value sum;
  for (int64_t kd = 0; kd < kernel[0]; ++kd) {
    Operand wk = reshaped(ctx, rows(ctx, taps, kd, 1), {ws[0], ws[1], ws[3], ws[4]});
    Value y =
        ctx.reshape(transposeConv2D(ctx, planes, wk, nullptr, w, group), {n, depth, 1, inner});
    // Spread along D: [n, depth, sd, inner] with zeros, the first `spread` rows.
    y = ctx.reshape(ctx.padZeros(y, {0, 0, 0, 0}, {0, 0, sd - 1, 0}), {n, depth * sd, inner});
    y = ctx.slice(y, {0, 0, 0}, {n, spread, inner});
    int64_t shift = kd * dil[0];
    y = ctx.padZeros(y, {0, shift, 0}, {0, full[0] - spread - shift, 0});
    sum = sum ? ctx.create<tosa::AddOp>(y.getType(), sum, y) : y;
  }
  Value y = ctx.slice(sum, {0, pads[0], 0}, {n, out[0], inner});
  y = ctx.reshape(y, {n, out[0], out[1], out[2], outChannels});
  if (ctx.hasInput(2))
    y = ctx.create<tosa::AddOp>(y.getType(), y,
                                ctx.reshape(valueOf(ctx, bias), {1, 1, 1, 1, outChannels}));
  return ctx.setOutput(0, ctx.transposeToChannelsFirst(y));
}

/// ConvTranspose (opsets 1, 11): Y[n, m, s*i + d*k - pad_begin] +=
/// X[n, c, i] * W[c, m', k] within each group (m = g*M/group + m'),
/// plus B[m]. X [N, C, (H,) W], W [C, M/group, (KH,) KW], B [M] optional.
/// Dilations are applied by spreading the kernel taps (zeros between them);
/// groups become one tosa.transpose_conv2d per group, concatenated.
/// TOSA's out_pad comes from fitTransposeWindow (WindowShape.h). A rank-5
/// input (3-D) goes to convertConvTranspose3D.
LogicalResult convertConvTranspose(NodeContext &ctx) {
  FailureOr<Value> x = floatInput(ctx, 0);
  if (succeeded(x) && ctx.inputRank(0) == 5)
    return convertConvTranspose3D(ctx, *x);
  if (failed(x) || failed(checkSpatialRank(ctx, ctx.inputRank(0))))
    return failure();
  std::vector<int64_t> xs = ctx.inputShape(0), ws = ctx.inputShape(1);
  ConvOperands op;
  op.group = ctx.attrInt("group", 1);
  if (ws.size() != xs.size())
    return ctx.fail("the weight (input 1) has shape " + shapeString(ws) + "; it needs rank " +
                    llvm::Twine(xs.size()));
  if (op.group < 1 || ws[0] != xs[1] || xs[1] % op.group != 0)
    return ctx.fail("group " + llvm::Twine(op.group) + " does not fit input channels " +
                    llvm::Twine(xs[1]) + " and weight shape " + shapeString(ws) +
                    " (W must be [C, M/group, ...])");
  int64_t outChannels = ws[1] * op.group;
  std::vector<int64_t> kernel(ws.begin() + 2, ws.end());
  if (failed(checkKernelShape(ctx, kernel)) || failed(readWeights(ctx, op, outChannels)))
    return failure();
  FailureOr<Window> win = readWindow(ctx, xs, kernel);
  if (failed(win) || failed(transposePadding(ctx, *win)))
    return failure();
  op.window = *win;
  op.input = ctx.transposeToChannelsLast(lift2D(ctx, *x));
  Value y = transposeConv2D(ctx, op.input, op.weight, ctx.hasInput(2) ? &op.bias : nullptr,
                            op.window, op.group);
  return ctx.setOutput(0, unlift(ctx, ctx.transposeToChannelsFirst(y), int64_t(xs.size())));
}


// --- Gemm and MatMul -----------------------------------------------------------

/// Adds beta * C (input 2, unidirectionally broadcast to `y`'s [M, N]).
FailureOr<Value> addGemmBias(NodeContext &ctx, Value y, float beta) {
  FailureOr<Value> c = floatInput(ctx, 2);
  if (failed(c))
    return failure();
  std::vector<int64_t> ys = shapeOf(y), cs = ctx.inputShape(2);
  auto joint = broadcastShapes(cs, ys);
  if (cs.size() > 2 || !joint || *joint != ys)
    return ctx.fail("C (input 2) of shape " + shapeString(cs) + " does not broadcast to " +
                    shapeString(ys));
  Value cv = ctx.broadcastRank(*c, 2);
  if (beta != 1.0f)
    cv = mul(ctx, cv, ctx.scalarF32(beta, 2), shapeOf(cv));
  return ctx.create<tosa::AddOp>(ctx.f32Type(ys), y, cv);
}

/// Gemm (opsets 7, 9, 11, 13): Y = alpha * A' * B' + beta * C with
/// A' = transA ? A^T : A ([M, K]), B' = transB ? B^T : B ([K, N]) and C
/// (optional since opset 11) unidirectionally broadcast to [M, N]. A
/// constant B becomes tosa.fully_connected's [N, K] weight with alpha folded
/// in; otherwise tosa.matmul on [1, M, K] x [1, K, N] and a multiply by
/// alpha. C is added after (tosa.add), beta folded into a constant C.
LogicalResult convertGemm(NodeContext &ctx) {
  float alpha = ctx.attrFloat("alpha", 1.0f), beta = ctx.attrFloat("beta", 1.0f);
  bool transA = ctx.attrInt("transA", 0) != 0, transB = ctx.attrInt("transB", 0) != 0;
  FailureOr<Operand> a = operand(ctx, 0), b = operand(ctx, 1);
  if (failed(a) || failed(b))
    return failure();
  if (a->dims.size() != 2 || b->dims.size() != 2)
    return ctx.fail("A and B must be matrices; they have shapes " + shapeString(a->dims) +
                    " and " + shapeString(b->dims));
  Operand lhs = transA ? permuted(ctx, *a, {1, 0}) : *a;
  int64_t m = lhs.dims[0], k = lhs.dims[1];
  int64_t kb = transB ? b->dims[1] : b->dims[0], n = transB ? b->dims[0] : b->dims[1];
  if (kb != k)
    return ctx.fail("A' is [" + llvm::Twine(m) + ", " + llvm::Twine(k) + "] and B' is [" +
                    llvm::Twine(kb) + ", " + llvm::Twine(n) + "]: inner sizes differ");
  Value y;
  if (b->data) {
    Operand w = transB ? *b : permuted(ctx, *b, {1, 0});
    for (float &v : w.data->floats)
      v *= alpha;
    y = ctx.create<tosa::FullyConnectedOp>(ctx.f32Type({m, n}), valueOf(ctx, lhs),
                                           valueOf(ctx, w), valueOf(ctx, zeros(n)), nullptr);
  } else {
    Operand rhs = transB ? permuted(ctx, *b, {1, 0}) : *b;
    y = ctx.create<tosa::MatMulOp>(ctx.f32Type({1, m, n}),
                                   ctx.reshape(valueOf(ctx, lhs), {1, m, k}),
                                   ctx.reshape(valueOf(ctx, rhs), {1, k, n}));
    y = ctx.reshape(y, {m, n});
    if (alpha != 1.0f)
      y = mul(ctx, y, ctx.scalarF32(alpha, 2), {m, n});
  }
  if (!ctx.hasInput(2) || beta == 0.0f)
    return ctx.setOutput(0, y);
  FailureOr<Value> sum = addGemmBias(ctx, y, beta);
  if (failed(sum))
    return failure();
  return ctx.setOutput(0, *sum);
}

/// `v` is [prod(src), rows, cols] with batch dimensions `src` (aligned to
/// `dst`, each equal or 1); returns [prod(dst), rows, cols] with size-1 batch
/// dimensions repeated by tosa.tile (adjacent dimensions that are both kept
/// or both repeated merged, keeping the tile's rank low).
Value broadcastBatch(NodeContext &ctx, Value v, llvm::ArrayRef<int64_t> src,
                     llvm::ArrayRef<int64_t> dst) {
  if (src == dst)
    return v;
  std::vector<int64_t> s = shapeOf(v);
  llvm::SmallVector<int64_t> dims, multiples;
  auto push = [&](int64_t dim, int64_t multiple) {
    if (!dims.empty() && (multiple > 1) == (multiples.back() > 1)) {
      dims.back() *= dim;
      multiples.back() *= multiple;
      return;
    }
    dims.push_back(dim);
    multiples.push_back(multiple);
  };
  for (size_t i = 0; i < src.size(); ++i)
    push(src[i], src[i] == dst[i] ? 1 : dst[i]);
  push(s[1] * s[2], 1);
  llvm::SmallVector<int64_t> tiled;
  for (size_t i = 0; i < dims.size(); ++i)
    tiled.push_back(dims[i] * multiples[i]);
  Value r = ctx.create<tosa::TileOp>(ctx.f32Type(tiled), ctx.reshape(v, dims),
                                     ctx.builder().getDenseI64ArrayAttr(multiples));
  return ctx.reshape(r, {product(dst), s[1], s[2]});
}

/// MatMul (opsets 1, 9, 13): numpy.matmul. A 1-D A [K] is read as [1, K]
/// and a 1-D B [K] as [K, 1], the added dimension dropped from the result;
/// the batch dimensions (all but the last two) broadcast. TOSA matmul is
/// rank 3: a B without batch dimensions takes A's batches as rows
/// ([1, B*M, K] x [1, K, N], or tosa.fully_connected when B is constant);
/// otherwise size-1 batch dimensions are tiled and tosa.matmul runs
/// [B, M, K] x [B, K, N].
LogicalResult convertMatMul(NodeContext &ctx) {
  FailureOr<Value> a = floatInput(ctx, 0);
  FailureOr<Operand> b = failed(a) ? FailureOr<Operand>(failure()) : operand(ctx, 1);
  if (failed(a) || failed(b))
    return failure();
  std::vector<int64_t> as = ctx.inputShape(0), bs = b->dims;
  if (as.empty() || bs.empty())
    return ctx.fail("MatMul operands must have rank 1 or more; they have shapes " +
                    shapeString(as) + " and " + shapeString(bs));
  std::vector<int64_t> a2 = as, b2 = bs;
  if (as.size() == 1)
    a2 = {1, as[0]};
  if (bs.size() == 1)
    b2 = {bs[0], 1};
  size_t nb = std::max(a2.size(), b2.size()) - 2;
  std::vector<int64_t> ba(nb - (a2.size() - 2), 1), bb(nb - (b2.size() - 2), 1), bo;
  ba.insert(ba.end(), a2.begin(), a2.end() - 2);
  bb.insert(bb.end(), b2.begin(), b2.end() - 2);
  for (size_t i = 0; i < nb; ++i) {
    if (ba[i] != bb[i] && ba[i] != 1 && bb[i] != 1)
      return ctx.fail("batch dimensions of " + shapeString(as) + " and " + shapeString(bs) +
                      " do not broadcast");
    bo.push_back(std::max(ba[i], bb[i]));
  }
  int64_t m = a2[a2.size() - 2], k = a2.back(), n = b2.back();
  if (b2[b2.size() - 2] != k)
    return ctx.fail("inner sizes differ: A " + shapeString(as) + ", B " + shapeString(bs));
  std::vector<int64_t> outShape = bo;
  if (as.size() > 1)
    outShape.push_back(m);
  if (bs.size() > 1)
    outShape.push_back(n);
  Value y;
  if (product(bb) == 1) {
    int64_t rowsA = product(ba) * m;
    Value lhs = ctx.reshape(*a, {rowsA, k});
    Operand rhs = reshaped(ctx, *b, {k, n});
    if (rhs.data)
      y = ctx.create<tosa::FullyConnectedOp>(
          ctx.f32Type({rowsA, n}), lhs, valueOf(ctx, permuted(ctx, rhs, {1, 0})),
          valueOf(ctx, zeros(n)), nullptr);
    else
      y = ctx.create<tosa::MatMulOp>(ctx.f32Type({1, rowsA, n}), ctx.reshape(lhs, {1, rowsA, k}),
                                     ctx.reshape(rhs.value, {1, k, n}));
  } else {
    Value lhs = broadcastBatch(ctx, ctx.reshape(*a, {product(ba), m, k}), ba, bo);
    Value rhs = broadcastBatch(ctx, ctx.reshape(valueOf(ctx, *b), {product(bb), k, n}), bb, bo);
    y = ctx.create<tosa::MatMulOp>(ctx.f32Type({product(bo), m, n}), lhs, rhs);
  }
  return ctx.setOutput(0, ctx.reshape(y, outShape));
}

// --- BatchNormalization ----------------------------------------------------------

/// BatchNormalization (opsets 7, 9, 14, 15), inference form:
/// Y = scale * (X - mean) / sqrt(var + epsilon) + B per channel (dim 1);
/// X [N, C, ...], scale, B, mean, var [C]. Constant parameters fold at
/// import to Y = X * a + b with a = scale / sqrt(var + epsilon) and
/// b = B - mean * a; otherwise a and b are computed by TOSA ops.
/// training_mode = 1 (opset 14+), the running-statistics outputs (training
/// only) and opset 7's spatial = 0 are refused.
LogicalResult convertBatchNorm(NodeContext &ctx) {
  if (ctx.attrInt("training_mode", 0) != 0)
    return ctx.fail("training_mode = 1 is not supported; Kiln converts the inference form "
                    "(training_mode = 0)");
  if (ctx.attrInt("spatial", 1) != 1)
    return ctx.fail("spatial = 0 is not supported; Kiln converts spatial = 1");
  for (int i = 1; i < ctx.numOutputs(); ++i)
    if (ctx.hasOutput(i))
      return ctx.fail("output " + llvm::Twine(i) + " ('" + ctx.node().outputs[i] +
                      "', a training statistic) is not supported; Kiln converts output 0 only");
  FailureOr<Value> x = floatInput(ctx, 0);
  if (failed(x))
    return failure();
  std::vector<int64_t> xs = ctx.inputShape(0);
  if (xs.size() < 2)
    return ctx.fail("X has shape " + shapeString(xs) + "; it needs [N, C, ...]");
  int64_t c = xs[1];
  float eps = ctx.attrFloat("epsilon", 1e-5f);
  std::vector<int64_t> bshape(xs.size(), 1);
  bshape[1] = c;
  Operand p[4];
  for (int i = 0; i < 4; ++i) {
    FailureOr<Operand> o = operand(ctx, i + 1);
    if (failed(o))
      return failure();
    if (product(o->dims) != c)
      return ctx.fail("input " + llvm::Twine(i + 1) + " has shape " + shapeString(o->dims) +
                      "; it needs [" + llvm::Twine(c) + "]");
    p[i] = reshaped(ctx, *o, bshape);
  }
  Value scale, shift;
  if (p[0].data && p[1].data && p[2].data && p[3].data) {
    std::vector<float> a(c), b(c);
    for (int64_t j = 0; j < c; ++j) {
      a[j] = float(p[0].data->floats[j] / std::sqrt(double(p[3].data->floats[j]) + eps));
      b[j] = p[1].data->floats[j] - p[2].data->floats[j] * a[j];
    }
    scale = ctx.constF32(bshape, a);
    shift = ctx.constF32(bshape, b);
  } else {
    Value var = ctx.create<tosa::AddOp>(ctx.f32Type(bshape), valueOf(ctx, p[3]),
                                        ctx.scalarF32(eps, int64_t(xs.size())));
    Value inv = ctx.create<tosa::RsqrtOp>(ctx.f32Type(bshape), var);
    scale = mul(ctx, valueOf(ctx, p[0]), inv, bshape);
    shift = ctx.create<tosa::SubOp>(ctx.f32Type(bshape), valueOf(ctx, p[1]),
                                    mul(ctx, valueOf(ctx, p[2]), scale, bshape));
  }
  Value y = mul(ctx, *x, scale, xs);
  return ctx.setOutput(0, ctx.create<tosa::AddOp>(ctx.f32Type(xs), y, shift));
}

// --- Pools ---------------------------------------------------------------------

/// The maximum over `kernel` taps `dilation` apart along axis `axis` (2 or
/// 3) of the NCHW `x`, every `stride`-th window, `out` windows: tap k is the
/// slice starting at k * dilation that takes every stride-th element (out *
/// stride elements viewed as [out, stride], index 0 kept).
Value dilatedMax1D(NodeContext &ctx, Value x, int axis, int64_t kernel, int64_t dilation,
                   int64_t stride, int64_t out) {
  std::vector<int64_t> s = shapeOf(x);
  std::vector<int64_t> start(4, 0), size = s, result = s;
  size[axis] = out * stride;
  result[axis] = out;
  // [before, out, stride, after] view of the slice along `axis`.
  int64_t before = 1, after = 1;
  for (int d = 0; d < axis; ++d)
    before *= s[d];
  for (int d = axis + 1; d < 4; ++d)
    after *= s[d];
  Value max;
  for (int64_t k = 0; k < kernel; ++k) {
    start[axis] = k * dilation;
    Value v = ctx.reshape(ctx.slice(x, start, size), {before, out, stride, after});
    v = ctx.reshape(ctx.slice(v, {0, 0, 0, 0}, {before, out, 1, after}), result);
    max = max ? ctx.create<tosa::MaximumOp>(ctx.f32Type(result), max, v) : v;
  }
  return max;
}

/// MaxPool with dilations > 1 (no TOSA op has them): the -inf padded NCHW
/// input, then the maximum is taken along W and then along H (a max pool
/// is separable: max over the window = max over rows of the max over
/// columns), so a KH x KW window costs KH + KW strided views, not KH * KW
/// (pytorch-converted/test_MaxPool2d_stride_padding_dilation's 60 x 80
/// window once became 4800 ops).
Value dilatedMaxPool(NodeContext &ctx, Value x, const Window &w) {
  std::vector<int64_t> s = shapeOf(x);
  std::vector<int64_t> padded = s;
  std::vector<int32_t> pads = {0, 0, 0, 0};
  for (int d = 0; d < 2; ++d) {
    // Room for out*stride elements after the last tap's start.
    int64_t need = (w.kernel[d] - 1) * w.dilation[d] + w.out[d] * w.stride[d];
    int64_t end = std::max(need - w.in[d] - w.padBegin[d], w.padEnd[d]);
    pads.push_back(int32_t(w.padBegin[d]));
    pads.push_back(int32_t(end));
    padded[2 + d] += w.padBegin[d] + end;
  }
  Value lowest = ctx.constF32({}, {-std::numeric_limits<float>::infinity()});
  x = ctx.create<tosa::PadOp>(ctx.f32Type(padded), x, ctx.constI32({4, 2}, pads), lowest,
                              nullptr);
  Value columns = dilatedMax1D(ctx, x, 3, w.kernel[1], w.dilation[1], w.stride[1], w.out[1]);
  return dilatedMax1D(ctx, columns, 2, w.kernel[0], w.dilation[0], w.stride[0], w.out[0]);
}

/// One axis of a separable 3-D pool over the NCDHW `x`: the maximum (or the
/// sum) of `a.kernel` taps `a.dilation` apart, every `a.stride`-th window,
/// `out` windows, the input padded along `axis` by a.padBegin before and
/// what the last window needs after with -inf (or 0). Tap k is the slice
/// starting at k * dilation that takes every stride-th element.
Value poolAxis(NodeContext &ctx, Value x, int axis, const WindowAxis &a, int64_t out, bool isMax) {
  std::vector<int64_t> s = shapeOf(x);
  const int64_t rank = int64_t(s.size());
  int64_t need = (a.kernel - 1) * a.dilation + out * a.stride;
  int64_t end = std::max<int64_t>(need - a.in - a.padBegin, 0);
  std::vector<int32_t> pads(2 * rank, 0);
  pads[2 * axis] = int32_t(a.padBegin);
  pads[2 * axis + 1] = int32_t(end);
  std::vector<int64_t> padded = s;
  padded[axis] += a.padBegin + end;
  float fill = isMax ? -std::numeric_limits<float>::infinity() : 0.0f;
  if (a.padBegin || end)
    x = ctx.create<tosa::PadOp>(ctx.f32Type(padded), x, ctx.constI32({rank, 2}, pads),
                                ctx.constF32({}, {fill}), nullptr);
  int64_t before = 1, after = 1;
  for (int d = 0; d < axis; ++d)
    before *= s[d];
  for (int d = axis + 1; d < rank; ++d)
    after *= s[d];
  std::vector<int64_t> start(rank, 0), size = padded, result = s;
  size[axis] = out * a.stride;
  result[axis] = out;
  Value acc;
  for (int64_t k = 0; k < a.kernel; ++k) {
    start[axis] = k * a.dilation;
    Value v = ctx.reshape(ctx.slice(x, start, size), {before, out, a.stride, after});
    v = ctx.reshape(ctx.slice(v, {0, 0, 0, 0}, {before, out, 1, after}), result);
    if (!acc)
      acc = v;
    else if (isMax)
      acc = ctx.create<tosa::MaximumOp>(ctx.f32Type(result), acc, v);
    else
      acc = ctx.create<tosa::AddOp>(ctx.f32Type(result), acc, v);
  }
  return acc;
}

/// Taps of window `o` along axis `a` that AveragePool counts: those inside
/// the input, or with count_include_pad inside the model's padding too (the
/// ceil_mode overhang past the end pad never counts).
int64_t poolCount(const WindowAxis &a, int64_t o, bool includePad) {
  int64_t lo = includePad ? -a.padBegin : 0, hi = includePad ? a.in + a.padEnd : a.in;
  int64_t count = 0;
  for (int64_t k = 0; k < a.kernel; ++k) {
    int64_t pos = o * a.stride + k * a.dilation - a.padBegin;
    count += pos >= lo && pos < hi;
  }
  return count;
}

/// AveragePool as separable 1-D sums (poolAxis, last axis first) over the
/// NC(D)HW `x` with `axes.size()` spatial axes (dilations allowed, opset 19),
/// times 1 / the product of the per-axis counts of poolCount (the taps of
/// a box window inside a box region are a product). `out` holds the output
/// size per axis. Fails when a window reads padding only (count 0).
FailureOr<Value> separableAveragePool(NodeContext &ctx, Value x, llvm::ArrayRef<WindowAxis> axes,
                                      llvm::ArrayRef<int64_t> out) {
  bool includePad = ctx.attrInt("count_include_pad", 0) != 0;
  const size_t spatial = axes.size();
  if (product(out) >= (int64_t(1) << 24))
    return ctx.fail("an output of " + llvm::Twine(product(out)) +
                    " windows per plane is above the 2^24 whose counts Kiln's dilated "
                    "AveragePool holds as a constant");
  std::vector<std::vector<int64_t>> counts(spatial);
  for (size_t d = 0; d < spatial; ++d)
    for (int64_t o = 0; o < out[d]; ++o) {
      counts[d].push_back(poolCount(axes[d], o, includePad));
      if (counts[d].back() == 0)
        return ctx.fail("window " + llvm::Twine(o) + " along spatial axis " + llvm::Twine(d) +
                        " reads padding only (kernel " + llvm::Twine(axes[d].kernel) +
                        ", dilation " + llvm::Twine(axes[d].dilation) +
                        "); Kiln averages windows that hold some input");
    }
  Value y = x;
  for (size_t d = spatial; d-- > 0;)
    y = poolAxis(ctx, y, int(2 + d), axes[d], out[d], false);
  // Window counts over the output, row-major: products of the per-axis ones.
  std::vector<int64_t> windows(1, 1);
  for (size_t d = 0; d < spatial; ++d) {
    std::vector<int64_t> next;
    for (int64_t w : windows)
      for (int64_t c : counts[d])
        next.push_back(w * c);
    windows = next;
  }
  std::vector<float> scale;
  for (int64_t w : windows)
    scale.push_back(1.0f / float(w));
  std::vector<int64_t> shape = {1, 1};
  shape.insert(shape.end(), out.begin(), out.end());
  return mul(ctx, y, ctx.constF32(shape, scale), shapeOf(y));
}

/// MaxPool and AveragePool with a rank-5 input (3-D, X [N, C, D, H, W]):
/// a box window is separable, so the pool is one 1-D pool per axis
/// (poolAxis: W, then H, then D); AveragePool sums and then multiplies by
/// 1 / (count_d * count_h * count_w), the per-axis counts of poolCount (the
/// elements of a box window inside a box region are a product).
LogicalResult convertPool3D(NodeContext &ctx, Value x, bool isMax) {
  std::vector<int64_t> xs = ctx.inputShape(0);
  if (!ctx.hasAttr("kernel_shape"))
    return ctx.fail("attribute kernel_shape is missing");
  std::vector<int64_t> kernel = ctx.attrInts("kernel_shape");
  if (kernel.size() != 3)
    return ctx.fail("kernel_shape has " + llvm::Twine(kernel.size()) +
                    " values; the 3-D input needs 3");
  for (int64_t k : kernel)
    if (k < 1)
      return ctx.fail("kernel size " + llvm::Twine(k) + " is invalid");
  std::array<TosaWindowAxis, 3> fit;
  bool ceil = ctx.attrInt("ceil_mode", 0) != 0;
  FailureOr<std::array<WindowAxis, 3>> axes =
      readWindow3D(ctx, xs, kernel, fit, ceil ? WindowRounding::Ceil : WindowRounding::Floor);
  if (failed(axes))
    return failure();
  for (const WindowAxis &a : *axes)
    if (a.padBegin >= a.kernel || a.padEnd >= a.kernel)
      return ctx.fail("a pad of " + llvm::Twine(std::max(a.padBegin, a.padEnd)) +
                      " is not smaller than the kernel size " + llvm::Twine(a.kernel) +
                      ": a window would hold padding only; Kiln pools with pads smaller "
                      "than the kernel");
  if (isMax) {
    Value y = x;
    for (int d = 2; d >= 0; --d)
      y = poolAxis(ctx, y, 2 + d, (*axes)[d], fit[d].out, isMax);
    return ctx.setOutput(0, y);
  }
  FailureOr<Value> y = separableAveragePool(ctx, x, *axes, {fit[0].out, fit[1].out, fit[2].out});
  if (failed(y))
    return failure();
  return ctx.setOutput(0, *y);
}

/// MaxPool (opsets 1, 8, 10, 11, 12) and AveragePool (opsets 1, 7, 10, 11,
/// 19): X [N, C, (H,) W], kernel_shape, strides, pads / auto_pad, ceil_mode
/// (opset 10+), MaxPool's dilations (opset 10+), AveragePool's
/// count_include_pad and dilations (opset 19+: separableAveragePool). MaxPool pads with -inf;
/// AveragePool divides by the window's elements inside the input (TOSA avg_pool2d excludes padding)
/// unless count_include_pad = 1, where pads are zeros added by tosa.pad first
/// (the ceil_mode overhang stays excluded). MaxPool's Indices output goes
/// to convertMaxPoolWithIndices. A rank-5 input goes to convertPool3D.
/// A pool's window over the input of shape `xs` (1-D or 2-D spatial):
/// kernel_shape (required), strides, dilations, pads or auto_pad and
/// ceil_mode, read and checked as Conv's are (readWindow, forwardPadding).
FailureOr<Window> poolWindow(NodeContext &ctx, llvm::ArrayRef<int64_t> xs) {
  if (!ctx.hasAttr("kernel_shape"))
    return ctx.fail("attribute kernel_shape is missing");
  FailureOr<Window> win = readWindow(ctx, xs, ctx.attrInts("kernel_shape"));
  if (failed(win) || failed(forwardPadding(ctx, *win, ctx.attrInt("ceil_mode", 0) != 0)))
    return failure();
  return win;
}

LogicalResult convertPool(NodeContext &ctx, bool isMax) {
  if (isMax && ctx.hasOutput(1))
    return convertMaxPoolWithIndices(ctx);
  // An int8 / uint8 MaxPool (what fuseQDQ leaves of DQ -> MaxPool -> Q, as
  // ORT's DropQDQNodes does) pools the i8 storage: q - 128 keeps uint8's
  // order, and tosa.max_pool2d's padding never wins.
  int32_t xType = ctx.inputType(0);
  bool quantized = isMax && (xType == kInt8 || xType == kUInt8);
  FailureOr<Value> x = quantized ? ctx.quantizedInput(0) : floatInput(ctx, 0);
  if (quantized && ctx.inputRank(0) == 5)
    return ctx.fail("an " + dataTypeName(xType) + " MaxPool takes a 1-D or 2-D window");
  if (succeeded(x) && ctx.inputRank(0) == 5)
    return convertPool3D(ctx, *x, isMax);
  if (failed(x) || failed(checkSpatialRank(ctx, ctx.inputRank(0))))
    return failure();
  std::vector<int64_t> xs = ctx.inputShape(0);
  FailureOr<Window> win = poolWindow(ctx, xs);
  if (failed(win))
    return failure();
  Window w = *win;
  Value in = lift2D(ctx, *x);
  if (w.dilation[0] != 1 || w.dilation[1] != 1) {
    if (quantized)
      return ctx.fail("dilations are not supported for an int8 / uint8 MaxPool");
    if (isMax)
      return ctx.setOutput(0, unlift(ctx, dilatedMaxPool(ctx, in, w), int64_t(xs.size())));
    // AveragePool-19's dilations: the model's end pads are the fitted ones
    // less the ceil_mode overhang (what poolCount may count).
    std::array<WindowAxis, 2> axes;
    for (int d = 0; d < 2; ++d)
      axes[d] = WindowAxis{w.in[d],       w.kernel[d],   w.stride[d],
                           w.dilation[d], w.padBegin[d], w.padEnd[d] - w.overhang[d]};
    FailureOr<Value> y = separableAveragePool(ctx, in, axes, {w.out[0], w.out[1]});
    if (failed(y))
      return failure();
    return ctx.setOutput(0, unlift(ctx, *y, int64_t(xs.size())));
  }
  // A window must hold some input (ONNX Runtime asks pads < kernel too);
  // with count_include_pad the pads are zeros added first and only the
  // ceil_mode overhang stays padding.
  bool padsAreZeros = !isMax && ctx.attrInt("count_include_pad", 0) != 0;
  for (int d = 0; d < 2; ++d) {
    int64_t end = padsAreZeros ? w.overhang[d] : w.padEnd[d];
    int64_t begin = padsAreZeros ? 0 : w.padBegin[d];
    if (begin >= w.kernel[d] || end >= w.kernel[d])
      return ctx.fail("a pad of " + llvm::Twine(std::max(begin, end)) +
                      (padsAreZeros ? " (the ceil_mode overhang)" : "") +
                      " is not smaller than the kernel size " + llvm::Twine(w.kernel[d]) +
                      ": a window would hold padding only; Kiln pools with pads smaller "
                      "than the kernel");
  }
  if (padsAreZeros) {
    in = ctx.padZeros(in, {0, 0, w.padBegin[0], w.padBegin[1]},
                      {0, 0, w.padEnd[0] - w.overhang[0], w.padEnd[1] - w.overhang[1]});
    w.padBegin = {0, 0};
    w.padEnd = w.overhang;
  }
  auto &b = ctx.builder();
  Value nhwc = ctx.transposeToChannelsLast(in);
  std::vector<int64_t> s = shapeOf(nhwc);
  auto type = RankedTensorType::get({s[0], w.out[0], w.out[1], s[3]},
                                    quantized ? Type(b.getIntegerType(8)) : Type(b.getF32Type()));
  Value y = isMax ? ctx.create<tosa::MaxPool2dOp>(type, nhwc, b.getDenseI64ArrayAttr(w.kernel),
                                                  b.getDenseI64ArrayAttr(w.stride),
                                                  w.tosaPad(b))
                  : ctx.create<tosa::AvgPool2dOp>(type, nhwc, b.getDenseI64ArrayAttr(w.kernel),
                                                  b.getDenseI64ArrayAttr(w.stride),
                                                  w.tosaPad(b), nullptr);
  return ctx.setOutput(0, unlift(ctx, ctx.transposeToChannelsFirst(y), int64_t(xs.size())));
}

LogicalResult convertMaxPool(NodeContext &ctx) { return convertPool(ctx, true); }
LogicalResult convertAveragePool(NodeContext &ctx) { return convertPool(ctx, false); }

/// LpPool (opsets 2, 11, 18): X [N, C, d1] or [N, C, d1, d2] -> for each
/// window (kernel_shape, strides, pads or auto_pad, dilations and
/// ceil_mode from 18) (sum of |x|^p)^(1/p), pads adding nothing (ONNX
/// Operators.md, LpPool; ONNX Runtime's LpPool computes the same). The
/// window sums are separable 1-D sums (poolAxis) of |x|^p; p >= 1 (default
/// 2).
LogicalResult convertLpPool(NodeContext &ctx) {
  FailureOr<Value> x = floatInput(ctx, 0);
  if (failed(x) || failed(checkSpatialRank(ctx, ctx.inputRank(0))))
    return failure();
  if (ctx.inputRank(0) == 5)
    return ctx.fail("LpPool takes a 1-D or 2-D window (an input of rank 3 or 4)");
  int64_t p = ctx.attrInt("p", 2);
  if (p < 1)
    return ctx.fail("p = " + llvm::Twine(p) + "; LpPool takes p >= 1");
  std::vector<int64_t> xs = ctx.inputShape(0);
  FailureOr<Window> win = poolWindow(ctx, xs);
  if (failed(win))
    return failure();
  const Window &w = *win;
  Value in = lift2D(ctx, *x);
  std::vector<int64_t> s = shapeOf(in);
  const int64_t rank = int64_t(s.size());
  Value powered = ctx.create<tosa::AbsOp>(ctx.f32Type(s), in);
  if (p == 2)
    powered = ctx.create<tosa::MulOp>(ctx.f32Type(s), powered, powered, 0);
  else if (p != 1)
    powered = ctx.create<tosa::PowOp>(ctx.f32Type(s), powered, ctx.scalarF32(float(p), rank));
  Value y = powered;
  for (int d = 1; d >= 0; --d) {
    WindowAxis a{w.in[d],       w.kernel[d],   w.stride[d],
                 w.dilation[d], w.padBegin[d], w.padEnd[d] - w.overhang[d]};
    y = poolAxis(ctx, y, 2 + d, a, w.out[d], /*isMax=*/false);
  }
  if (p != 1)
    y = ctx.create<tosa::PowOp>(y.getType(), y, ctx.scalarF32(1.0f / float(p), rank));
  return ctx.setOutput(0, unlift(ctx, y, int64_t(xs.size())));
}

/// GlobalAveragePool / GlobalMaxPool (opset 1): X [N, C, d1, ...] ->
/// [N, C, 1, ...], the mean / maximum over all spatial dimensions (TOSA
/// reductions over dims 2.., the mean as a sum times 1/count).
LogicalResult convertGlobalPool(NodeContext &ctx, bool isMax) {
  FailureOr<Value> x = floatInput(ctx, 0);
  if (failed(x))
    return failure();
  std::vector<int64_t> xs = ctx.inputShape(0);
  if (xs.size() < 3)
    return ctx.fail("X has shape " + shapeString(xs) + "; it needs [N, C, d1, ...]");
  std::vector<int64_t> axes;
  for (int64_t d = 2; d < int64_t(xs.size()); ++d)
    axes.push_back(d);
  Value y = reduce(ctx, *x, axes, isMax);
  if (!isMax) {
    int64_t count = product(xs) / (xs[0] * xs[1]);
    y = mul(ctx, y, ctx.scalarF32(1.0f / float(count), int64_t(xs.size())), shapeOf(y));
  }
  return ctx.setOutput(0, y);
}

LogicalResult convertGlobalMaxPool(NodeContext &ctx) { return convertGlobalPool(ctx, true); }
LogicalResult convertGlobalAveragePool(NodeContext &ctx) {
  return convertGlobalPool(ctx, false);
}

// --- Normalizations ---------------------------------------------------------------

/// Mean, X - mean and 1 / sqrt(variance + epsilon) over `axes` (kept as
/// size-1 dimensions); the variance is the biased one (divided by the count).
struct Moments {
  Value mean, centered, invStd;
};

Moments moments(NodeContext &ctx, Value x, llvm::ArrayRef<int64_t> axes, float eps) {
  std::vector<int64_t> xs = shapeOf(x);
  int64_t rank = int64_t(xs.size()), count = 1;
  for (int64_t a : axes)
    count *= xs[a];
  Value inverseCount = ctx.scalarF32(1.0f / float(count), rank);
  Value sum = reduce(ctx, x, axes, false);
  std::vector<int64_t> rs = shapeOf(sum);
  Moments m;
  m.mean = mul(ctx, sum, inverseCount, rs);
  m.centered = ctx.create<tosa::SubOp>(ctx.f32Type(xs), x, m.mean);
  Value squares = reduce(ctx, mul(ctx, m.centered, m.centered, xs), axes, false);
  Value var = mul(ctx, squares, inverseCount, rs);
  var = ctx.create<tosa::AddOp>(ctx.f32Type(rs), var, ctx.scalarF32(eps, rank));
  m.invStd = ctx.create<tosa::RsqrtOp>(ctx.f32Type(rs), var);
  return m;
}

/// y * scale + bias, scale and bias (inputs `si`, `bi`; bias optional) of
/// shape `core` (the normalized dimensions: X.shape[axis:] for LayerNorm,
/// [C] for InstanceNorm) reshaped to `full` (y's rank), or numpy-broadcastable
/// to `full` as they are.
FailureOr<Value> scaleAndShift(NodeContext &ctx, Value y, int si, int bi,
                               llvm::ArrayRef<int64_t> core, llvm::ArrayRef<int64_t> full) {
  std::vector<int64_t> ys = shapeOf(y);
  for (int i : {si, bi}) {
    if (!ctx.hasInput(i))
      continue;
    FailureOr<Value> v = floatInput(ctx, i);
    if (failed(v))
      return failure();
    std::vector<int64_t> vs = ctx.inputShape(i);
    Value p;
    if (llvm::ArrayRef(vs) == core)
      p = ctx.reshape(*v, full);
    else if (vs.size() <= full.size() && broadcastShapes(vs, full) == std::vector<int64_t>(full))
      p = ctx.broadcastRank(*v, int64_t(full.size()));
    else
      return ctx.fail("input " + llvm::Twine(i) + " has shape " + shapeString(vs) +
                      "; it needs " + shapeString(core));
    y = i == si ? mul(ctx, y, p, ys) : ctx.create<tosa::AddOp>(ctx.f32Type(ys), y, p);
  }
  return y;
}

/// LayerNormalization (opset 17): over the dimensions [axis, rank),
/// Y = (X - mean) / sqrt(var + epsilon) * Scale + B, Scale and B (optional)
/// of shape X.shape[axis:] (or broadcastable to it); outputs Mean and
/// InvStdDev (optional) have X's rank with the normalized dimensions of size 1.
LogicalResult convertLayerNorm(NodeContext &ctx) {
  FailureOr<Value> x = floatInput(ctx, 0);
  if (failed(x))
    return failure();
  std::vector<int64_t> xs = ctx.inputShape(0);
  int64_t rank = int64_t(xs.size());
  int64_t axis = normalizeAxis(ctx.attrInt("axis", -1), rank);
  if (axis < 0 || rank == 0)
    return ctx.fail("axis " + llvm::Twine(ctx.attrInt("axis", -1)) + " is out of range for "
                    "an input of rank " + llvm::Twine(rank));
  std::vector<int64_t> axes, normShape(rank, 1);
  for (int64_t d = axis; d < rank; ++d) {
    axes.push_back(d);
    normShape[d] = xs[d];
  }
  Moments m = moments(ctx, *x, axes, ctx.attrFloat("epsilon", 1e-5f));
  Value y = mul(ctx, m.centered, m.invStd, xs);
  FailureOr<Value> out =
      scaleAndShift(ctx, y, 1, 2, std::vector<int64_t>(xs.begin() + axis, xs.end()), normShape);
  if (failed(out) || failed(ctx.setOutput(0, *out)) || failed(ctx.setOutput(1, m.mean)))
    return failure();
  return ctx.setOutput(2, m.invStd);
}

/// InstanceNormalization (opsets 1, 6): per sample and channel, over the
/// spatial dimensions of X [N, C, d1, ...]:
/// Y = scale[c] * (X - mean) / sqrt(var + epsilon) + B[c].
LogicalResult convertInstanceNorm(NodeContext &ctx) {
  FailureOr<Value> x = floatInput(ctx, 0);
  if (failed(x))
    return failure();
  std::vector<int64_t> xs = ctx.inputShape(0);
  if (xs.size() < 3)
    return ctx.fail("X has shape " + shapeString(xs) + "; it needs [N, C, d1, ...]");
  std::vector<int64_t> axes, cshape(xs.size(), 1);
  cshape[1] = xs[1];
  for (int64_t d = 2; d < int64_t(xs.size()); ++d)
    axes.push_back(d);
  Moments m = moments(ctx, *x, axes, ctx.attrFloat("epsilon", 1e-5f));
  FailureOr<Value> out =
      scaleAndShift(ctx, mul(ctx, m.centered, m.invStd, xs), 1, 2, {xs[1]}, cshape);
  if (failed(out))
    return failure();
  return ctx.setOutput(0, *out);
}

/// GroupNormalization (18, 21): X [N, C, d1, ...] in num_groups groups of
/// C / num_groups channels, each normalized over its channels and spatial
/// dimensions: Y = (X - mean) / sqrt(var + epsilon) * scale + bias. scale
/// and bias are per channel [C] from opset 21, per group [num_groups] in
/// 18 (the version ONNX deprecated). stash_type (21) is float32 here.
LogicalResult convertGroupNorm(NodeContext &ctx) {
  FailureOr<Value> x = floatInput(ctx, 0);
  if (failed(x))
    return failure();
  if (ctx.numInputs() != 3 || !ctx.hasInput(1) || !ctx.hasInput(2))
    return ctx.fail("takes 3 inputs (X, scale, bias); it has " + llvm::Twine(ctx.numInputs()));
  std::vector<int64_t> xs = ctx.inputShape(0);
  if (xs.size() < 3)
    return ctx.fail("X has shape " + shapeString(xs) + "; it needs [N, C, d1, ...]");
  if (!ctx.hasAttr("num_groups"))
    return ctx.fail("attribute num_groups is missing");
  int64_t groups = ctx.attrInt("num_groups", 0), channels = xs[1];
  if (groups < 1 || channels % groups != 0)
    return ctx.fail("attribute num_groups is " + llvm::Twine(groups) +
                    "; it must be positive and divide the " + llvm::Twine(channels) + " channels");
  std::vector<int64_t> grouped = {xs[0], groups,
                                  product(llvm::ArrayRef(xs).drop_front(2)) * (channels / groups)};
  Moments m = moments(ctx, ctx.reshape(*x, grouped), {2}, ctx.attrFloat("epsilon", 1e-5f));
  Value y = mul(ctx, m.centered, m.invStd, grouped);
  if (ctx.opset() < 21) {
    FailureOr<Value> out = scaleAndShift(ctx, y, 1, 2, {groups}, {1, groups, 1});
    if (failed(out))
      return failure();
    return ctx.setOutput(0, ctx.reshape(*out, xs));
  }
  std::vector<int64_t> cshape(xs.size(), 1);
  cshape[1] = channels;
  FailureOr<Value> out = scaleAndShift(ctx, ctx.reshape(y, xs), 1, 2, {channels}, cshape);
  if (failed(out))
    return failure();
  return ctx.setOutput(0, *out);
}

/// LRN (opsets 1, 13): across channels (dim 1) of X [N, C, ...],
/// Y = X / (bias + alpha / size * square_sum) ^ beta with square_sum[c] the
/// sum of X^2 over channels [c - floor((size-1)/2), c + ceil((size-1)/2)]
/// (outside channels count as 0): a zero-padded channel axis and the sum of
/// `size` shifted slices.
LogicalResult convertLRN(NodeContext &ctx) {
  FailureOr<Value> x = floatInput(ctx, 0);
  if (failed(x))
    return failure();
  std::vector<int64_t> xs = ctx.inputShape(0);
  int64_t size = ctx.attrInt("size", 0), rank = int64_t(xs.size());
  if (size < 1)
    return ctx.fail("attribute size must be positive (it is " + llvm::Twine(size) + ")");
  if (rank < 3)
    return ctx.fail("X has shape " + shapeString(xs) + "; it needs [N, C, d1, ...]");
  float alpha = ctx.attrFloat("alpha", 1e-4f), beta = ctx.attrFloat("beta", 0.75f),
        bias = ctx.attrFloat("bias", 1.0f);
  std::vector<int64_t> before(rank, 0), after(rank, 0), start(rank, 0);
  before[1] = (size - 1) / 2;
  after[1] = size - 1 - before[1];
  Value squares = ctx.padZeros(mul(ctx, *x, *x, xs), before, after);
  Value sum;
  for (int64_t k = 0; k < size; ++k) {
    start[1] = k;
    Value part = ctx.slice(squares, start, xs);
    sum = sum ? ctx.create<tosa::AddOp>(ctx.f32Type(xs), sum, part) : part;
  }
  Value base = mul(ctx, sum, ctx.scalarF32(alpha / float(size), rank), xs);
  base = ctx.create<tosa::AddOp>(ctx.f32Type(xs), base, ctx.scalarF32(bias, rank));
  Value factor = ctx.create<tosa::PowOp>(ctx.f32Type(xs), base, ctx.scalarF32(-beta, rank));
  return ctx.setOutput(0, mul(ctx, *x, factor, xs));
}

} // namespace

void registerConvOps(ConverterTable &table) {
  table["Conv"] = convertConv;
  table["ConvTranspose"] = convertConvTranspose;
  table["Gemm"] = convertGemm;
  table["MatMul"] = convertMatMul;
  table["BatchNormalization"] = convertBatchNorm;
  table["MaxPool"] = convertMaxPool;
  table["AveragePool"] = convertAveragePool;
  table["LpPool"] = convertLpPool;
  table["GlobalAveragePool"] = convertGlobalAveragePool;
  table["GlobalMaxPool"] = convertGlobalMaxPool;
  table["LayerNormalization"] = convertLayerNorm;
  table["GroupNormalization"] = convertGroupNorm;
  table["InstanceNormalization"] = convertInstanceNorm;
  table["LRN"] = convertLRN;
}

} // namespace kiln::onnx
