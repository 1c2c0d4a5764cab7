//===- ONNXTextOps.cpp - ONNX TfIdfVectorizer -----------------------------===//
//
// TfIdfVectorizer (9) -> TOSA for integer inputs (pool_int64s; string
// pools are refused with the rest of Kiln's string support): the n-gram
// pool is constant, so each (gram length n, skip s) is one comparison of
// the n shifted views x[i + j (s + 1)] with the pool's j-th items, an AND
// over j, and a count over the start positions i; unigrams are counted
// once whatever the skip (as ONNX Runtime counts them). The counts of all
// pool n-grams are then placed into their ngram_indexes columns and
// weighted (TF counts, IDF weight where the count is non-zero, TFIDF count
// x weight) by one tosa.matmul with a constant [pool, columns] table.
//
//===----------------------------------------------------------------------===//
#include "ONNXConverter.h"

#include <algorithm>
#include <string>
#include <vector>

using namespace mlir;

namespace kiln::onnx {
namespace {

/// The most comparison elements (batch x positions x pool n-grams) one
/// (n, skip) builds.
constexpr int64_t kMaxCompare = int64_t(1) << 24;

LogicalResult convertTfIdfVectorizer(NodeContext &ctx) {
  std::vector<int64_t> xs = ctx.inputShape(0);
  int32_t type = ctx.inputType(0);
  if ((xs.size() != 1 && xs.size() != 2) || (type != kInt32 && type != kInt64))
    return ctx.fail("input " + shapeString(xs) + " of " + dataTypeName(type) +
                    " is not supported; Kiln takes int32 or int64 [C] or [N, C]");
  if (ctx.hasAttr("pool_strings"))
    return ctx.fail("pool_strings is not supported; Kiln takes pool_int64s");
  int64_t minN = ctx.attrInt("min_gram_length", 1), maxN = ctx.attrInt("max_gram_length", 1);
  int64_t maxSkip = ctx.attrInt("max_skip_count", 0);
  std::string mode = ctx.attrString("mode", "TF");
  std::vector<int64_t> counts = ctx.attrInts("ngram_counts"),
                       indexes = ctx.attrInts("ngram_indexes");
  std::vector<int64_t> pool = ctx.attrInts("pool_int64s");
  std::vector<float> weights = ctx.attrFloats("weights");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF")
    return ctx.fail("mode '" + mode + "' is not one of TF, IDF, TFIDF");
  if (minN < 1 || maxN < minN || maxSkip < 0 || int64_t(counts.size()) != maxN)
    return ctx.fail("min_gram_length " + llvm::Twine(minN) + ", max_gram_length " +
                    llvm::Twine(maxN) + ", max_skip_count " + llvm::Twine(maxSkip) + " and " +
                    llvm::Twine(counts.size()) + " ngram_counts do not fit together");
  // Pool n-grams by length: [start, end) item offsets from ngram_counts.
  std::vector<int64_t> grams(maxN + 1, 0); // n-grams of length n
  int64_t totalGrams = 0;
  for (int64_t n = 1; n <= maxN; ++n) {
    int64_t begin = counts[n - 1];
    int64_t end = n < maxN ? counts[n] : int64_t(pool.size());
    if (begin < 0 || end < begin || end > int64_t(pool.size()) || (end - begin) % n != 0)
      return ctx.fail("ngram_counts " + shapeString(counts) + " do not split the " +
                      llvm::Twine(pool.size()) + " pool items into n-grams");
    grams[n] = (end - begin) / n;
    totalGrams += grams[n];
  }
  if (int64_t(indexes.size()) != totalGrams ||
      (!weights.empty() && int64_t(weights.size()) != totalGrams))
    return ctx.fail("ngram_indexes (and weights) need one value per pool n-gram (" +
                    llvm::Twine(totalGrams) + ")");
  int64_t columns = 0;
  for (int64_t k : indexes) {
    if (k < 0)
      return ctx.fail("ngram_indexes holds " + llvm::Twine(k));
    columns = std::max(columns, k + 1);
  }
  FailureOr<Value> x = ctx.input(0);
  if (failed(x))
    return failure();
  int64_t b = xs.size() == 2 ? xs[0] : 1, len = xs.back();
  Value rows = ctx.reshape(*x, {b, len});
  Type element = rows.getType().cast<RankedTensorType>().getElementType();
  auto &builder = ctx.builder();
  auto boolType = [&](llvm::ArrayRef<int64_t> s) {
    return RankedTensorType::get(s, builder.getI1Type());
  };
  // Counts of every pool n-gram, in pool order: [b, totalGrams].
  llvm::SmallVector<Value> parts;
  for (int64_t n = 1; n <= maxN; ++n) {
    int64_t g = grams[n];
    if (g == 0)
      continue;
    Value count;
    if (n >= minN)
      for (int64_t s = 0; s <= (n == 1 ? 0 : maxSkip); ++s) {
        int64_t span = (n - 1) * (s + 1), positions = len - span;
        if (positions < 1)
          break;
        if (b * positions * g > kMaxCompare)
          return ctx.fail("the n-gram comparison of " + llvm::Twine(b * positions * g) +
                          " elements is above the " + llvm::Twine(kMaxCompare) +
                          " Kiln's TfIdfVectorizer builds");
        Value match;
        for (int64_t j = 0; j < n; ++j) {
          std::vector<int64_t> items;
          for (int64_t k = 0; k < g; ++k)
            items.push_back(pool[counts[n - 1] + k * n + j]);
          Value column =
              element.isInteger(32)
                  ? ctx.constI32({1, 1, g}, std::vector<int32_t>(items.begin(), items.end()))
                  : ctx.constI64({1, 1, g}, items);
          Value view =
              ctx.reshape(ctx.slice(rows, {0, j * (s + 1)}, {b, positions}), {b, positions, 1});
          Value eq = ctx.create<tosa::EqualOp>(boolType({b, positions, g}), view, column);
          match =
              match ? ctx.create<tosa::LogicalAndOp>(boolType({b, positions, g}), match, eq) : eq;
        }
        Value ones = ctx.create<tosa::CastOp>(
            RankedTensorType::get({b, positions, g}, builder.getI32Type()), match);
        Value c =
            ctx.create<tosa::ReduceSumOp>(RankedTensorType::get({b, 1, g}, builder.getI32Type()),
                                          ones, builder.getI64IntegerAttr(1));
        count = count ? ctx.create<tosa::AddOp>(c.getType(), count, c) : c;
      }
    Value f = count ? ctx.create<tosa::CastOp>(ctx.f32Type({b, 1, g}), count)
                    : ctx.constF32({b, 1, g}, {0.0f});
    if (mode == "IDF")
      f = ctx.create<tosa::SelectOp>(
          f.getType(),
          ctx.create<tosa::GreaterOp>(boolType({b, 1, g}), f, ctx.constF32({1, 1, 1}, {0.0f})),
          ctx.constF32({1, 1, 1}, {1.0f}), ctx.constF32({1, 1, 1}, {0.0f}));
    parts.push_back(ctx.reshape(f, {b, g}));
  }
  Value all = parts.size() == 1 ? parts[0]
                                : ctx.create<tosa::ConcatOp>(ctx.f32Type({b, totalGrams}), parts,
                                                             builder.getI64IntegerAttr(1));
  std::vector<float> table(totalGrams * columns, 0.0f);
  for (int64_t k = 0; k < totalGrams; ++k)
    table[k * columns + indexes[k]] += mode == "TF" || weights.empty() ? 1.0f : weights[k];
  Value y =
      ctx.create<tosa::MatMulOp>(ctx.f32Type({1, b, columns}), ctx.reshape(all, {1, b, totalGrams}),
                                 ctx.constF32({1, totalGrams, columns}, table));
  std::vector<int64_t> out =
      xs.size() == 2 ? std::vector<int64_t>{b, columns} : std::vector<int64_t>{columns};
  return ctx.setOutput(0, ctx.reshape(y, out));
}

} // namespace

void registerTextOps(ConverterTable &table) { table["TfIdfVectorizer"] = convertTfIdfVectorizer; }

} // namespace kiln::onnx
