//===- ONNXEinsumOps.cpp - ONNX Einsum ------------------------------------===//
//
// Einsum (12) -> TOSA: the equation is parsed at import ("bij,bjk->bik",
// "...ii->...i", implicit outputs as numpy forms them), then
//   1. per operand: diagonals of repeated letters (the two dimensions
//      flattened, padded by one row and sliced: element i * (n + 1)), and
//      sums over letters no other operand or the output has;
//   2. operands combined left to right, two at a time: letters of both that
//      are still needed are the batch, letters of both that are not are
//      contracted; float32 as one tosa.matmul of [batch, M, K] x
//      [batch, K, N] between transposes and reshapes, int32/int64 (which
//      tosa.matmul does not take) as a broadcast multiply and a sum;
//   3. the result transposed to the output's letter order.
// A letter's size must be the same wherever it occurs (no size-1
// broadcasting between operands).
//
//===----------------------------------------------------------------------===//
#include "ONNXConverter.h"
#include "TosaReduce.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <vector>

using namespace mlir;

namespace kiln::onnx {
namespace {

llvm::ArrayRef<int64_t> shapeOf(Value v) { return v.getType().cast<RankedTensorType>().getShape(); }
Type elementOf(Value v) { return v.getType().cast<RankedTensorType>().getElementType(); }

/// An operand during the lowering: its value and one label per dimension
/// (letters; ellipsis dimensions get labels 1, 2, ... below 'A').
struct Term {
  Value value;
  std::string labels;
};

/// Permutes `t` so that its labels read `order` (a permutation of them).
Term permute(NodeContext &ctx, Term t, const std::string &order) {
  std::vector<int32_t> perm;
  for (char c : order)
    perm.push_back(int32_t(t.labels.find(c)));
  return Term{ctx.transpose(t.value, perm), order};
}

/// Sums `t` over the labels for which `drop` holds, removing them.
Term sumOut(NodeContext &ctx, Term t, llvm::function_ref<bool(char)> drop) {
  llvm::SmallVector<bool> reduced;
  std::string kept;
  std::vector<int64_t> shape;
  bool any = false;
  for (size_t k = 0; k < t.labels.size(); ++k) {
    bool r = drop(t.labels[k]);
    reduced.push_back(r);
    any |= r;
    if (!r) {
      kept += t.labels[k];
      shape.push_back(shapeOf(t.value)[k]);
    }
  }
  if (!any)
    return t;
  Value v = reduceDims(ctx.builder(), ctx.loc(), t.value, reduced, TosaReduction::Sum);
  return Term{ctx.reshape(v, shape), kept};
}

/// Takes the diagonal of every label repeated in `t` (one dimension left).
Term diagonals(NodeContext &ctx, Term t) {
  for (size_t i = 0; i < t.labels.size(); ++i) {
    size_t j = t.labels.find(t.labels[i], i + 1);
    if (j == std::string::npos)
      continue;
    // Move the pair last: [..., n, n] -> [..., n * n] -> pad n -> [..., n, n + 1] -> column 0.
    std::string order;
    for (size_t k = 0; k < t.labels.size(); ++k)
      if (k != i && k != j)
        order += t.labels[k];
    std::vector<int32_t> perm;
    for (size_t k = 0; k < t.labels.size(); ++k)
      if (k != i && k != j)
        perm.push_back(int32_t(k));
    perm.push_back(int32_t(i));
    perm.push_back(int32_t(j));
    Value v = ctx.transpose(t.value, perm);
    std::vector<int64_t> shape(shapeOf(v));
    int64_t n = shape.back(), rest = product(shape) / (n * n);
    v = ctx.reshape(v, {rest, n * n});
    Value padding = ctx.constI32({2, 2}, {0, 0, 0, int32_t(n)});
    v = ctx.create<tosa::PadOp>(RankedTensorType::get({rest, n * (n + 1)}, elementOf(v)), v,
                                padding, ctx.scalarOf(elementOf(v), 0, 0), nullptr);
    v = ctx.slice(ctx.reshape(v, {rest, n, n + 1}), {0, 0, 0}, {rest, n, 1});
    shape.pop_back();
    t = Term{ctx.reshape(v, shape), order + t.labels[i]};
    i = std::string::npos; // start over: the labels moved
  }
  return t;
}

/// The product of the sizes of `labels` in `t`.
int64_t sizeOf(const Term &t, const std::string &labels) {
  int64_t n = 1;
  for (char c : labels)
    n *= shapeOf(t.value)[t.labels.find(c)];
  return n;
}

/// Combines two operands, keeping the labels for which `needed` holds.
Term contract(NodeContext &ctx, Term a, Term b, llvm::function_ref<bool(char)> needed) {
  std::string batch, sum, aOnly, bOnly;
  for (char c : a.labels) {
    bool inB = b.labels.find(c) != std::string::npos;
    if (inB)
      (needed(c) ? batch : sum) += c;
    else
      aOnly += c;
  }
  for (char c : b.labels)
    if (a.labels.find(c) == std::string::npos)
      bOnly += c;
  a = permute(ctx, a, batch + aOnly + sum);
  b = permute(ctx, b, batch + sum + bOnly);
  int64_t nb = sizeOf(a, batch), m = sizeOf(a, aOnly), k = sizeOf(a, sum), n = sizeOf(b, bOnly);
  std::vector<int64_t> shape;
  for (char c : batch + aOnly)
    shape.push_back(shapeOf(a.value)[a.labels.find(c)]);
  for (char c : bOnly)
    shape.push_back(shapeOf(b.value)[b.labels.find(c)]);
  Type element = elementOf(a.value);
  Value out;
  if (element.isF32()) {
    out = ctx.create<tosa::MatMulOp>(RankedTensorType::get({nb, m, n}, element),
                                     ctx.reshape(a.value, {nb, m, k}),
                                     ctx.reshape(b.value, {nb, k, n}));
  } else {
    Value prod = ctx.create<tosa::MulOp>(
        RankedTensorType::get({nb, m, k, n}, element), ctx.reshape(a.value, {nb, m, k, 1}),
        ctx.reshape(b.value, {nb, 1, k, n}), ctx.builder().getI32IntegerAttr(0));
    out = ctx.create<tosa::ReduceSumOp>(RankedTensorType::get({nb, m, 1, n}, element), prod,
                                        ctx.builder().getI64IntegerAttr(2));
  }
  return Term{ctx.reshape(out, shape), batch + aOnly + bOnly};
}

/// Einsum (12): see the file comment.
LogicalResult convertEinsum(NodeContext &ctx) {
  std::string eq;
  for (char c : ctx.attrString("equation", ""))
    if (c != ' ')
      eq += c;
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  bool explicitOut = arrow != std::string::npos;
  std::string rhs = explicitOut ? eq.substr(arrow + 2) : "";
  std::vector<std::string> specs;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    specs.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  if (int(specs.size()) != ctx.numInputs())
    return ctx.fail("equation '" + eq + "' has " + llvm::Twine(specs.size()) +
                    " operands for the node's " + llvm::Twine(ctx.numInputs()) + " inputs");
  // Ellipsis dimensions: labels '\x01', '\x02', ... (right-aligned).
  int64_t ellipsis = 0;
  std::vector<Term> terms;
  std::map<char, int64_t> sizes;
  auto bad = [&](const llvm::Twine &why) { return ctx.fail("equation '" + eq + "': " + why); };
  std::vector<int64_t> ellipsisDims(specs.size(), 0);
  for (size_t i = 0; i < specs.size(); ++i) {
    std::string s = specs[i];
    size_t dots = s.find("...");
    int64_t letters = int64_t(s.size()) - (dots == std::string::npos ? 0 : 3);
    int64_t rank = ctx.inputRank(int(i));
    if (dots == std::string::npos ? letters != rank : letters > rank)
      return bad("operand " + llvm::Twine(i) + " '" + s + "' does not match its rank " +
                 llvm::Twine(rank));
    if (dots != std::string::npos)
      ellipsisDims[i] = rank - letters;
    ellipsis = std::max(ellipsis, ellipsisDims[i]);
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    std::string s = specs[i], labels;
    size_t dots = s.find("...");
    for (size_t k = 0; k < s.size(); ++k) {
      if (k == dots) {
        for (int64_t e = ellipsis - ellipsisDims[i]; e < ellipsis; ++e)
          labels += char(1 + e);
        k += 2;
      } else if (std::isalpha(static_cast<unsigned char>(s[k]))) {
        labels += s[k];
      } else {
        return bad("'" + llvm::Twine(s[k]) + "' is not a letter");
      }
    }
    int32_t type = ctx.inputType(int(i));
    if (!isFloatType(type) && type != kInt32 && type != kInt64)
      return bad("operand " + llvm::Twine(i) + " has element type " + dataTypeName(type) +
                 "; Einsum is converted for float32, int32 and int64");
    if (i > 0 && type != ctx.inputType(0) && !(isFloatType(type) && isFloatType(ctx.inputType(0))))
      return bad("the operands have different element types");
    std::vector<int64_t> shape = ctx.inputShape(int(i));
    for (size_t k = 0; k < labels.size(); ++k) {
      auto [it, inserted] = sizes.emplace(labels[k], shape[k]);
      if (!inserted && it->second != shape[k])
        return bad("label '" + std::string(1, labels[k] < 'A' ? '.' : labels[k]) + "' has sizes " +
                   llvm::Twine(it->second) + " and " + llvm::Twine(shape[k]) +
                   "; Kiln's Einsum takes one size per label (no broadcasting)");
    }
    FailureOr<Value> v = ctx.input(int(i));
    if (failed(v))
      return failure();
    terms.push_back(Term{*v, labels});
  }
  std::string out;
  if (explicitOut) {
    size_t dots = rhs.find("...");
    for (size_t k = 0; k < rhs.size(); ++k) {
      if (k == dots) {
        for (int64_t e = 0; e < ellipsis; ++e)
          out += char(1 + e);
        k += 2;
      } else if (std::isalpha(static_cast<unsigned char>(rhs[k])) && !sizes.count(rhs[k])) {
        return bad("output label '" + llvm::Twine(rhs[k]) + "' is in no operand");
      } else if (std::isalpha(static_cast<unsigned char>(rhs[k])) &&
                 out.find(rhs[k]) == std::string::npos) {
        out += rhs[k];
      } else {
        return bad("the output '" + rhs + "' is not a list of distinct letters");
      }
    }
  } else {
    // numpy: the ellipsis dimensions, then the letters used once, sorted.
    for (int64_t e = 0; e < ellipsis; ++e)
      out += char(1 + e);
    std::map<char, int> uses;
    for (const Term &t : terms)
      for (char c : t.labels)
        ++uses[c];
    for (auto [c, n] : uses)
      if (c >= 'A' && n == 1)
        out += c;
  }
  auto inLater = [&](char c, size_t from) {
    if (out.find(c) != std::string::npos)
      return true;
    for (size_t j = from; j < terms.size(); ++j)
      if (terms[j].labels.find(c) != std::string::npos)
        return true;
    return false;
  };
  for (size_t i = 0; i < terms.size(); ++i) {
    terms[i] = diagonals(ctx, terms[i]);
    terms[i] = sumOut(ctx, terms[i], [&](char c) {
      for (size_t j = 0; j < terms.size(); ++j)
        if (j != i && terms[j].labels.find(c) != std::string::npos)
          return false;
      return out.find(c) == std::string::npos;
    });
  }
  Term acc = terms[0];
  for (size_t i = 1; i < terms.size(); ++i)
    acc = contract(ctx, acc, terms[i], [&](char c) { return inLater(c, i + 1); });
  acc = sumOut(ctx, acc, [&](char c) { return out.find(c) == std::string::npos; });
  acc = permute(ctx, acc, out);
  std::vector<int64_t> shape;
  for (char c : out)
    shape.push_back(sizes[c]);
  return ctx.setOutput(0, ctx.reshape(acc.value, shape));
}

} // namespace

void registerEinsumOps(ConverterTable &table) { table["Einsum"] = convertEinsum; }

} // namespace kiln::onnx
