//===- TosaContract.cpp - TOSA 0.60 ERROR_IF checks after import ----------===//
//
// One check function per operator family; each returns the first broken
// condition as text, naming the attribute and both numbers.
//
//===----------------------------------------------------------------------===//
#include "TosaContract.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Matchers.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <tuple>

using namespace mlir;

namespace kiln {
namespace {

std::string str(int64_t v) { return std::to_string(v); }

llvm::ArrayRef<int64_t> ints(Operation *op, llvm::StringRef name) {
  if (auto a = op->getAttrOfType<DenseI64ArrayAttr>(name))
    return a.asArrayRef();
  return {};
}

llvm::ArrayRef<int64_t> shapeOf(Value v) {
  auto t = v.getType().dyn_cast<RankedTensorType>();
  return t ? t.getShape() : llvm::ArrayRef<int64_t>();
}

bool allStatic(llvm::ArrayRef<int64_t> s) {
  return llvm::none_of(s, [](int64_t d) { return ShapedType::isDynamic(d); });
}

/// "<what> v < min" for the first value of `values` below `min`.
std::string atLeast(const char *what, llvm::ArrayRef<int64_t> values, int64_t min) {
  for (int64_t v : values)
    if (v < min)
      return std::string(what) + " " + str(v) + " < " + str(min);
  return "";
}

/// The first of `checks` (what, its values, their lower bound) broken.
std::string atLeastEach(
    std::initializer_list<std::tuple<const char *, llvm::ArrayRef<int64_t>, int64_t>> checks) {
  for (const auto &[what, values, min] : checks)
    if (std::string e = atLeast(what, values, min); !e.empty())
      return e;
  return "";
}

/// True if every value has a static rank-4 shape (the windowed ops' form).
bool staticRank4(std::initializer_list<Value> values) {
  for (Value v : values) {
    llvm::ArrayRef<int64_t> s = shapeOf(v);
    if (s.size() != 4 || !allStatic(s))
      return false;
  }
  return true;
}

const char *axisName(int d) { return d == 0 ? "height" : "width"; }

/// One spatial axis of a windowed op: out == span / stride + 1, span = in
/// + padBegin + padEnd - extent. TOSA's idiv_check asks for no remainder;
/// Kiln allows one (input no window reads, WindowShape.h) only where the
/// end pad is 0: a remainder beside end padding means the importer got
/// the arithmetic wrong (MLIR 16's avg-pool divisors assume none).
std::string tiles(int d, int64_t in, int64_t padBegin, int64_t padEnd, int64_t extent,
                  int64_t stride, int64_t out) {
  int64_t span = in + padBegin + padEnd - extent;
  if (span < 0)
    return std::string("window ") + axisName(d) + " " + str(extent) + " > padded input " +
           str(in + padBegin + padEnd);
  if (span / stride + 1 != out)
    return std::string("output ") + axisName(d) + " " + str(out) + " != (" + str(in) + " + " +
           str(padBegin) + " + " + str(padEnd) + " - " + str(extent) + ") / " + str(stride) +
           " + 1";
  if (span % stride != 0 && padEnd != 0)
    return std::string("end pad ") + str(padEnd) + " beside " + str(span % stride) +
           " unread input " + (d == 0 ? "rows" : "columns") +
           " (the end pad must absorb them first)";
  return "";
}

/// CONV2D (weight OHWI) and DEPTHWISE_CONV2D (weight [KH, KW, C, M]).
std::string checkConvolution(Operation *op, int kernelDim) {
  llvm::ArrayRef<int64_t> pad = ints(op, "pad"), stride = ints(op, "stride"),
                          dilation = ints(op, "dilation");
  if (pad.size() != 4 || stride.size() != 2 || dilation.size() != 2)
    return "pad, stride and dilation need 4, 2 and 2 values";
  if (std::string e = atLeastEach({{"pad", pad, 0}, {"stride", stride, 1}, {"dilation", dilation, 1}});
      !e.empty())
    return e;
  if (!staticRank4({op->getOperand(0), op->getOperand(1), op->getResult(0)}))
    return "";
  llvm::ArrayRef<int64_t> in = shapeOf(op->getOperand(0)), w = shapeOf(op->getOperand(1)),
                          out = shapeOf(op->getResult(0));
  for (int d = 0; d < 2; ++d) {
    int64_t extent = (w[kernelDim + d] - 1) * dilation[d] + 1;
    if (std::string e = tiles(d, in[1 + d], pad[2 * d], pad[2 * d + 1], extent, stride[d],
                              out[1 + d]);
        !e.empty())
      return e;
  }
  return "";
}

/// TRANSPOSE_CONV2D (weight [OC, KH, KW, IC]).
std::string checkTransposeConvolution(Operation *op) {
  llvm::ArrayRef<int64_t> outPad = ints(op, "out_pad"), stride = ints(op, "stride");
  if (outPad.size() != 4 || stride.size() != 2)
    return "out_pad and stride need 4 and 2 values";
  if (std::string e = atLeast("stride", stride, 1); !e.empty())
    return e;
  if (!staticRank4({op->getOperand(0), op->getOperand(1), op->getResult(0)}))
    return "";
  llvm::ArrayRef<int64_t> in = shapeOf(op->getOperand(0)), w = shapeOf(op->getOperand(1)),
                          out = shapeOf(op->getResult(0));
  for (int d = 0; d < 2; ++d) {
    int64_t k = w[1 + d];
    for (int side = 0; side < 2; ++side)
      if (outPad[2 * d + side] <= -k)
        return "out_pad " + str(outPad[2 * d + side]) + " <= -" + str(k) + " (the kernel " +
               axisName(d) + ")";
    int64_t want = (in[1 + d] - 1) * stride[d] + outPad[2 * d] + outPad[2 * d + 1] + k;
    if (out[1 + d] != want)
      return std::string("output ") + axisName(d) + " " + str(out[1 + d]) + " != (" +
             str(in[1 + d]) + " - 1) * " + str(stride[d]) + " + " + str(outPad[2 * d]) + " + " +
             str(outPad[2 * d + 1]) + " + " + str(k);
  }
  return "";
}

/// AVG_POOL2D and MAX_POOL2D.
std::string checkPool(Operation *op) {
  llvm::ArrayRef<int64_t> kernel = ints(op, "kernel"), stride = ints(op, "stride"),
                          pad = ints(op, "pad");
  if (kernel.size() != 2 || stride.size() != 2 || pad.size() != 4)
    return "kernel, stride and pad need 2, 2 and 4 values";
  if (std::string e = atLeastEach({{"kernel", kernel, 1}, {"stride", stride, 1}, {"pad", pad, 0}});
      !e.empty())
    return e;
  for (int i = 0; i < 4; ++i)
    if (pad[i] >= kernel[i / 2])
      return "pad " + str(pad[i]) + " >= kernel " + str(kernel[i / 2]) +
             " (a window would hold padding only)";
  if (!staticRank4({op->getOperand(0), op->getResult(0)}))
    return "";
  llvm::ArrayRef<int64_t> in = shapeOf(op->getOperand(0)), out = shapeOf(op->getResult(0));
  for (int d = 0; d < 2; ++d)
    if (std::string e = tiles(d, in[1 + d], pad[2 * d], pad[2 * d + 1], kernel[d], stride[d],
                              out[1 + d]);
        !e.empty())
      return e;
  return "";
}

/// The integer elements of a constant operand; false if not constant.
bool constantInts(Value v, llvm::SmallVectorImpl<int64_t> &out) {
  DenseIntElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)))
    return false;
  for (const APInt &x : attr.getValues<APInt>())
    out.push_back(x.getSExtValue());
  return true;
}

/// PAD: paddings [rank, 2] >= 0 and the output shape they give.
std::string checkPad(tosa::PadOp op) {
  llvm::SmallVector<int64_t> pads;
  if (!constantInts(op.getPadding(), pads))
    return "";
  if (std::string e = atLeast("padding", pads, 0); !e.empty())
    return e;
  llvm::ArrayRef<int64_t> in = shapeOf(op.getInput1()), out = shapeOf(op.getResult());
  if (pads.size() != 2 * in.size())
    return "padding has " + str(int64_t(pads.size())) + " values for rank " +
           str(int64_t(in.size()));
  for (size_t d = 0; d < in.size() && d < out.size(); ++d)
    if (!ShapedType::isDynamic(in[d]) && !ShapedType::isDynamic(out[d]) &&
        out[d] != in[d] + pads[2 * d] + pads[2 * d + 1])
      return "output dimension " + str(int64_t(d)) + " " + str(out[d]) + " != " + str(in[d]) +
             " + " + str(pads[2 * d]) + " + " + str(pads[2 * d + 1]);
  return "";
}

/// SLICE: start >= 0, size >= 1, start + size <= input.
std::string checkSlice(Operation *op) {
  llvm::ArrayRef<int64_t> start = ints(op, "start"), size = ints(op, "size"),
                          in = shapeOf(op->getOperand(0));
  if (std::string e = atLeast("start", start, 0); !e.empty())
    return e;
  if (std::string e = atLeast("size", size, 1); !e.empty())
    return e;
  for (size_t d = 0; d < start.size() && d < size.size() && d < in.size(); ++d)
    if (!ShapedType::isDynamic(in[d]) && start[d] + size[d] > in[d])
      return "start " + str(start[d]) + " + size " + str(size[d]) + " > input dimension " +
             str(int64_t(d)) + " of " + str(in[d]);
  return "";
}

/// REDUCE_*, ARGMAX, CONCAT, REVERSE: axis in [0, rank of input 0).
std::string checkAxis(Operation *op) {
  auto axis = op->getAttrOfType<IntegerAttr>("axis");
  auto in = op->getOperand(0).getType().dyn_cast<RankedTensorType>();
  if (!axis || !in)
    return "";
  int64_t a = axis.getValue().getSExtValue();
  if (a < 0 || a >= std::max<int64_t>(in.getRank(), 1))
    return "axis " + str(a) + " outside [0, " + str(in.getRank()) + ")";
  return "";
}

/// TRANSPOSE: perms a permutation of [0, rank).
std::string checkTranspose(tosa::TransposeOp op) {
  llvm::SmallVector<int64_t> perms;
  if (!constantInts(op.getPerms(), perms))
    return "";
  int64_t rank = int64_t(shapeOf(op.getInput1()).size());
  llvm::SmallVector<bool> seen(rank, false);
  if (int64_t(perms.size()) != rank)
    return "perms has " + str(int64_t(perms.size())) + " values for rank " + str(rank);
  for (int64_t p : perms) {
    if (p < 0 || p >= rank || seen[p])
      return "perms is not a permutation of [0, " + str(rank) + ")";
    seen[p] = true;
  }
  return "";
}

/// RESCALE: shift in [2, 62], multiplier >= 0, counts, zero points.
std::string checkRescale(tosa::RescaleOp op) {
  llvm::ArrayRef<int32_t> m = op.getMultiplier(), s = op.getShift();
  if (m.size() != s.size() || m.empty())
    return "multiplier and shift counts " + str(int64_t(m.size())) + " and " +
           str(int64_t(s.size())) + " differ";
  llvm::ArrayRef<int64_t> in = shapeOf(op.getInput());
  if (op.getPerChannel() && !in.empty() && !ShapedType::isDynamic(in.back()) &&
      int64_t(m.size()) != in.back())
    return "per-channel multipliers " + str(int64_t(m.size())) + " != channels " + str(in.back());
  if (!op.getPerChannel() && m.size() != 1)
    return str(int64_t(m.size())) + " multipliers without per_channel";
  for (int32_t v : s)
    if (v < 2 || v > 62)
      return "shift " + str(v) + " outside [2, 62]";
  for (int32_t v : m)
    if (v < 0)
      return "multiplier " + str(v) + " < 0";
  auto bits = [](Value v) {
    auto t = v.getType().cast<ShapedType>().getElementType();
    return t.isIntOrFloat() ? t.getIntOrFloatBitWidth() : 0u;
  };
  int64_t inZp = op.getInputZpAttr().getValue().getSExtValue();
  int64_t outZp = op.getOutputZpAttr().getValue().getSExtValue();
  if (bits(op.getInput()) != 8 && inZp != 0)
    return "input_zp " + str(inZp) + " != 0 on a " + str(bits(op.getInput())) + "-bit input";
  if (bits(op.getOutput()) != 8 && outZp != 0)
    return "output_zp " + str(outZp) + " != 0 on a " + str(bits(op.getOutput())) + "-bit output";
  if (bits(op.getInput()) == 8 && (inZp < -128 || inZp > 255))
    return "input_zp " + str(inZp) + " outside the 8-bit range";
  if (bits(op.getOutput()) == 8 && (outZp < -128 || outZp > 255))
    return "output_zp " + str(outZp) + " outside the 8-bit range";
  return "";
}

/// CLAMP: min <= max (the integer or the float pair, as the type uses).
std::string checkClamp(tosa::ClampOp op) {
  Type element = op.getType().cast<ShapedType>().getElementType();
  if (element.isa<FloatType>()) {
    float lo = op.getMinFpAttr().getValueAsDouble(), hi = op.getMaxFpAttr().getValueAsDouble();
    if (lo > hi)
      return "min_fp " + std::to_string(lo) + " > max_fp " + std::to_string(hi);
    return "";
  }
  int64_t lo = op.getMinIntAttr().getInt(), hi = op.getMaxIntAttr().getInt();
  if (lo > hi)
    return "min_int " + str(lo) + " > max_int " + str(hi);
  return "";
}

/// "Conv "conv1" #3" from the importers' NameLoc("Conv \"conv1\"#3", ...)
/// or "line 7" from a parsed file's location.
std::string describe(Location loc) {
  if (auto name = loc.dyn_cast<NameLoc>()) {
    std::string s = name.getName().str();
    size_t hash = s.rfind('#');
    if (hash != std::string::npos && hash > 0 && s[hash - 1] != ' ')
      s.insert(hash, " ");
    return s;
  }
  if (auto file = loc.dyn_cast<FileLineColLoc>())
    return "line " + std::to_string(file.getLine());
  if (auto fused = loc.dyn_cast<FusedLoc>())
    for (Location l : fused.getLocations())
      if (std::string s = describe(l); !s.empty())
        return s;
  return "";
}

} // namespace

std::string tosaContractViolation(Operation *op) {
  if (isa<tosa::Conv2DOp>(op))
    return checkConvolution(op, 1);
  if (isa<tosa::DepthwiseConv2DOp>(op))
    return checkConvolution(op, 0);
  if (isa<tosa::TransposeConv2DOp>(op))
    return checkTransposeConvolution(op);
  if (isa<tosa::AvgPool2dOp, tosa::MaxPool2dOp>(op))
    return checkPool(op);
  if (auto pad = dyn_cast<tosa::PadOp>(op))
    return checkPad(pad);
  if (isa<tosa::SliceOp>(op))
    return checkSlice(op);
  if (isa<tosa::ReduceSumOp, tosa::ReduceMaxOp, tosa::ReduceMinOp, tosa::ReduceProdOp,
          tosa::ReduceAllOp, tosa::ReduceAnyOp, tosa::ArgMaxOp, tosa::ConcatOp,
          tosa::ReverseOp>(op))
    return checkAxis(op);
  if (auto transpose = dyn_cast<tosa::TransposeOp>(op))
    return checkTranspose(transpose);
  if (auto rescale = dyn_cast<tosa::RescaleOp>(op))
    return checkRescale(rescale);
  if (auto clamp = dyn_cast<tosa::ClampOp>(op))
    return checkClamp(clamp);
  return "";
}

llvm::Error checkTosaContract(ModuleOp module, llvm::StringRef file, bool imported) {
  std::string message;
  module.walk([&](Operation *op) {
    if (!op->getDialect() || op->getDialect()->getNamespace() != "tosa")
      return WalkResult::advance();
    std::string why = tosaContractViolation(op);
    if (why.empty())
      return WalkResult::advance();
    std::string where = describe(op->getLoc());
    std::string opName = op->getName().getStringRef().str();
    if (imported)
      message = "internal error: the importer built an invalid TOSA op for " +
                (where.empty() ? file.str() : where) + " (" + opName + "): " + why;
    else
      message = file.str() + ": " + (where.empty() ? "" : where + ": ") + opName + ": " + why +
                " (TOSA 0.60 ERROR_IF)";
    return WalkResult::interrupt();
  });
  if (message.empty())
    return llvm::Error::success();
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

} // namespace kiln
