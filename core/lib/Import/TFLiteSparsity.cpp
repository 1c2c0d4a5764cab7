//===- TFLiteSparsity.cpp - Sparse TFLite constants, densified at import --===//
//
// A TFLite constant may be stored sparse (schema v3 SparsityParameters: the
// TACO-style encoding TensorFlow's model optimization toolkit writes for
// pruned weights). Kiln densifies each such constant once, before any TOSA
// is built: the dense bytes replace the stored ones for every reader
// (ModelImporter::constantData), so FULLY_CONNECTED and the rest take the
// weights as an ordinary constant, and the DENSIFY operator's output is the
// same dense constant (no dispatch). Each densified tensor adds one warning
// with its stored and dense sizes.
//
// The format, as TFLite's sparsity_format_converter.cc reads it
// (tensorflow/lite/kernels/internal/utils/; Kiln's code is its own): a
// tensor of rank R with B blocked dimensions is traversed as R + B levels.
// block_map[j] names the dimension block j divides; traversal_order lists
// the R (blocked) dimensions first, then the B block dimensions (R + j is
// block j). dim_metadata[l] describes level l, which iterates expanded
// dimension traversal_order[l]: DENSE levels visit 0 .. dense_size - 1;
// SPARSE_CSR levels visit, for parent position p, the coordinates
// array_indices[array_segments[p] .. array_segments[p + 1]). The stored
// values are the leaves in that visiting order. Dimension d's coordinate
// is its blocked coordinate times the block size plus its in-block one.
//
//===----------------------------------------------------------------------===//
#include "TFLiteModelImporter.h"

#include <cstring>

namespace kiln::tfl {

namespace {

/// One traversal level of a sparse tensor: what it iterates and, when
/// SPARSE_CSR, its segment and index arrays (widened to int64).
struct SparseLevel {
  int dimension = 0; ///< expanded dimension: < rank a tensor dimension, else rank + block
  int64_t size = 0;  ///< coordinates along it (blocked size or block size)
  bool sparse = false;
  std::vector<int64_t> segments, indices;
};

/// A decoded, checked sparse tensor.
struct SparseLayout {
  std::vector<int64_t> shape;      ///< the dense shape (the tensor's `shape`)
  std::vector<int64_t> blockSizes; ///< per tensor dimension, 1 when not blocked
  std::vector<int64_t> blockMap;   ///< the dimension block j divides
  std::vector<SparseLevel> levels;
  int64_t leaves = 0;     ///< values the layout stores
  int64_t indexBytes = 0; ///< bytes of the segment and index arrays
};

/// The values of a SparseIndexVector (Int32Vector, Uint16Vector or
/// Uint8Vector), or nothing when absent.
std::optional<std::vector<int64_t>> indexVector(schema::SparseIndexVector type, const void *table,
                                                int64_t &bytes) {
  std::vector<int64_t> out;
  auto take = [&](auto *vector, int width) -> std::optional<std::vector<int64_t>> {
    if (!vector || !vector->values())
      return std::nullopt;
    for (auto v : *vector->values())
      out.push_back(static_cast<int64_t>(v));
    bytes += width * static_cast<int64_t>(out.size());
    return out;
  };
  switch (type) {
  case schema::SparseIndexVector::Int32Vector:
    return take(static_cast<const schema::Int32Vector *>(table), 4);
  case schema::SparseIndexVector::Uint16Vector:
    return take(static_cast<const schema::Uint16Vector *>(table), 2);
  case schema::SparseIndexVector::Uint8Vector:
    return take(static_cast<const schema::Uint8Vector *>(table), 1);
  default:
    return std::nullopt;
  }
}

std::string listString(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

/// "812 bytes", "1.4 KiB", "4 KiB", "2.5 MiB".
std::string byteString(int64_t bytes) {
  if (bytes < 1024)
    return std::to_string(bytes) + " bytes";
  int64_t unit = bytes >= (1 << 20) ? (1 << 20) : 1024;
  const char *name = unit == 1024 ? " KiB" : " MiB";
  if (bytes % unit == 0)
    return std::to_string(bytes / unit) + name;
  char text[48];
  std::snprintf(text, sizeof text, "%.1f", static_cast<double>(bytes) / static_cast<double>(unit));
  return text + std::string(name);
}

/// The dense size of the sparse tensor `t` above which Kiln refuses to
/// densify it (the weights would not fit an artifact anyway).
constexpr int64_t kMaxDenseBytes = int64_t(1) << 31;

/// Decodes and checks `t`'s SparsityParameters against its dense shape:
/// traversal_order a permutation of the R + B levels with the tensor
/// dimensions first, block_map increasing tensor dimensions whose size the
/// block size divides, block levels DENSE, each DENSE level's dense_size the
/// size of its dimension, each SPARSE_CSR level's segments (one per parent
/// position, plus one) starting at 0, non-decreasing and ending at the
/// index count, every index inside its dimension and increasing within its
/// segment. An error names the field,
/// the level and the bad value; `who` names the tensor.
llvm::Expected<SparseLayout> decodeLayout(const schema::Tensor &t, const std::string &who) {
  const schema::SparsityParameters &sp = *t.sparsity();
  SparseLayout layout;
  if (t.shape())
    layout.shape.assign(t.shape()->begin(), t.shape()->end());
  const int64_t rank = layout.shape.size();
  std::vector<int64_t> order;
  std::vector<int64_t> &blockMap = layout.blockMap;
  if (sp.traversal_order())
    order.assign(sp.traversal_order()->begin(), sp.traversal_order()->end());
  if (sp.block_map())
    blockMap.assign(sp.block_map()->begin(), sp.block_map()->end());
  const int64_t levels = rank + static_cast<int64_t>(blockMap.size());
  auto bad = [&](const llvm::Twine &what) { return makeError(who + ": " + what); };
  int64_t dense = 1;
  for (int64_t d : layout.shape) {
    if (d < 0)
      return bad("has a negative dimension in shape " + listString(layout.shape));
    dense = d == 0 || dense <= kMaxDenseBytes / d ? dense * d : kMaxDenseBytes + 1;
  }
  if (dense * static_cast<int64_t>(tensorTypeSize(t.type())) > kMaxDenseBytes)
    return bad("is " + shapeString(layout.shape) + " dense, over the 2 GiB Kiln densifies");
  if (static_cast<int64_t>(order.size()) != levels)
    return bad("traversal_order " + listString(order) + " has " + llvm::Twine(order.size()) +
               " entries; a rank-" + llvm::Twine(rank) + " tensor with " +
               llvm::Twine(blockMap.size()) + " block dimensions needs " + llvm::Twine(levels));
  for (int64_t l = 0; l < levels; ++l) {
    bool seen = std::count(order.begin(), order.end(), order[l]) != 1;
    if (order[l] < 0 || order[l] >= levels || seen || (l < rank) != (order[l] < rank))
      return bad("traversal_order " + listString(order) + " is not a permutation of 0.." +
                 llvm::Twine(levels - 1) + " listing the " + llvm::Twine(rank) +
                 " tensor dimensions before the block dimensions");
  }
  if (!sp.dim_metadata() || static_cast<int64_t>(sp.dim_metadata()->size()) != levels)
    return bad("has " + llvm::Twine(sp.dim_metadata() ? sp.dim_metadata()->size() : 0) +
               " dim_metadata entries; its traversal order has " + llvm::Twine(levels) + " levels");
  // Block j divides dimension block_map[j] by the dense_size of its level.
  layout.blockSizes.assign(rank, 1);
  for (size_t j = 0; j < blockMap.size(); ++j) {
    if (blockMap[j] < 0 || blockMap[j] >= rank || (j > 0 && blockMap[j] <= blockMap[j - 1]))
      return bad("block_map " + listString(blockMap) + " must list increasing dimensions of 0.." +
                 llvm::Twine(rank - 1));
    int64_t level = std::find(order.begin(), order.end(), rank + int64_t(j)) - order.begin();
    const schema::DimensionMetadata *m = sp.dim_metadata()->Get(level);
    int64_t size = m ? m->dense_size() : 0;
    int64_t dim = layout.shape[blockMap[j]];
    if (!m || m->format() != schema::DimensionType::DENSE || size <= 0 || dim % size != 0)
      return bad("block " + llvm::Twine(j) + " (level " + llvm::Twine(level) +
                 ") must be DENSE with a dense_size dividing dimension " +
                 llvm::Twine(blockMap[j]) + " (size " + llvm::Twine(dim) + "); it has " +
                 (m && m->format() == schema::DimensionType::DENSE
                      ? "dense_size " + std::to_string(size)
                      : std::string("format SPARSE_CSR")));
    layout.blockSizes[blockMap[j]] = size;
  }
  int64_t positions = 1; // parent positions of the current level
  for (int64_t l = 0; l < levels; ++l) {
    const schema::DimensionMetadata *m = sp.dim_metadata()->Get(l);
    SparseLevel level;
    level.dimension = order[l];
    level.size = level.dimension < rank
                     ? layout.shape[level.dimension] / layout.blockSizes[level.dimension]
                     : layout.blockSizes[blockMap[level.dimension - rank]];
    std::string where = "level " + std::to_string(l) + " (dimension " +
                        std::to_string(level.dimension) + ", size " + std::to_string(level.size) +
                        ")";
    if (!m)
      return bad("has no dim_metadata for " + where);
    if (m->format() == schema::DimensionType::DENSE) {
      if (m->dense_size() != level.size)
        return bad(where + " is DENSE with dense_size " + llvm::Twine(m->dense_size()) +
                   "; the shape " + shapeString(layout.shape) + " gives " +
                   llvm::Twine(level.size));
      positions *= level.size;
      layout.levels.push_back(std::move(level));
      continue;
    }
    if (m->format() != schema::DimensionType::SPARSE_CSR)
      return bad(where + " has the unknown format " + llvm::Twine(static_cast<int>(m->format())));
    level.sparse = true;
    auto segments = indexVector(m->array_segments_type(), m->array_segments(), layout.indexBytes);
    auto indices = indexVector(m->array_indices_type(), m->array_indices(), layout.indexBytes);
    if (!segments || !indices)
      return bad(where + " is SPARSE_CSR without " +
                 (segments ? "array_indices" : "array_segments"));
    level.segments = std::move(*segments);
    level.indices = std::move(*indices);
    int64_t count = level.indices.size();
    if (static_cast<int64_t>(level.segments.size()) != positions + 1)
      return bad(where + " has " + llvm::Twine(level.segments.size()) + " array_segments; its " +
                 llvm::Twine(positions) + " parent positions need " + llvm::Twine(positions + 1));
    for (int64_t p = 0; p <= positions; ++p) {
      int64_t s = level.segments[p];
      if ((p == 0 && s != 0) || (p > 0 && s < level.segments[p - 1]) || s > count ||
          (p == positions && s != count))
        return bad(where + " array_segments[" + llvm::Twine(p) + "] = " + llvm::Twine(s) +
                   " breaks the segments: they start at 0, never decrease and end at the " +
                   llvm::Twine(count) + " array_indices");
    }
    // Coordinates lie inside the dimension and increase within a segment
    // (as TFLite's converter writes them), so no two values share a place
    // and no level has more positions than the dense tensor has elements.
    for (int64_t p = 0; p < positions; ++p)
      for (int64_t k = level.segments[p]; k < level.segments[p + 1]; ++k) {
        int64_t v = level.indices[k];
        if (v < 0 || v >= level.size)
          return bad(where + " array_indices[" + llvm::Twine(k) + "] = " + llvm::Twine(v) +
                     " is out of range: the dimension has " + llvm::Twine(level.size) +
                     " coordinates (shape " + shapeString(layout.shape) + ")");
        if (k > level.segments[p] && v <= level.indices[k - 1])
          return bad(where + " array_indices[" + llvm::Twine(k) + "] = " + llvm::Twine(v) +
                     " does not increase within its segment (array_indices[" + llvm::Twine(k - 1) +
                     "] = " + llvm::Twine(level.indices[k - 1]) + ")");
      }
    positions = count;
    layout.levels.push_back(std::move(level));
  }
  layout.leaves = positions;
  return layout;
}

/// Copies the stored values `stored` (element size `width`, in traversal
/// order) to their places in `dense` (row-major over layout.shape): a
/// depth-first walk of the levels, as TFLite's FormatConverter::Populate.
/// `coords[l]` is level l's coordinate; `next` the next stored value.
void scatter(const SparseLayout &layout, llvm::ArrayRef<uint8_t> stored, size_t width,
             std::vector<uint8_t> &dense, size_t level, int64_t position,
             std::vector<int64_t> &coords, int64_t &next) {
  const int64_t rank = layout.shape.size();
  if (level == layout.levels.size()) {
    // Tensor dimension d: blocked coordinate x block size + in-block one.
    std::vector<int64_t> index(rank, 0);
    for (size_t l = 0; l < layout.levels.size(); ++l)
      if (layout.levels[l].dimension < rank)
        index[layout.levels[l].dimension] +=
            coords[l] * layout.blockSizes[layout.levels[l].dimension];
    for (size_t l = 0; l < layout.levels.size(); ++l)
      if (int64_t e = layout.levels[l].dimension; e >= rank)
        index[layout.blockMap[e - rank]] += coords[l];
    int64_t flat = 0;
    for (int64_t d = 0; d < rank; ++d)
      flat = flat * layout.shape[d] + index[d];
    std::memcpy(dense.data() + flat * width, stored.data() + next * width, width);
    ++next;
    return;
  }
  const SparseLevel &l = layout.levels[level];
  if (!l.sparse) {
    for (int64_t i = 0; i < l.size; ++i) {
      coords[level] = i;
      scatter(layout, stored, width, dense, level + 1, position * l.size + i, coords, next);
    }
    return;
  }
  for (int64_t k = l.segments[position]; k < l.segments[position + 1]; ++k) {
    coords[level] = l.indices[k];
    scatter(layout, stored, width, dense, level + 1, k, coords, next);
  }
}

} // namespace

llvm::Error ModelImporter::densifySparseTensors() {
  int n = graph->tensors() ? graph->tensors()->size() : 0;
  for (int i = 0; i < n; ++i) {
    const schema::Tensor *t = graph->tensors()->Get(i);
    if (!t->sparsity() || densified.count(t))
      continue;
    std::string who = "sparse tensor '" + tensorName(t, i) + "' (index " + std::to_string(i) +
                      ", " + schema::EnumNameTensorType(t->type()) + " " + shapeString(shapeOf(i)) +
                      ")";
    llvm::ArrayRef<uint8_t> stored = constantData(i);
    schema::TensorType type = t->type();
    if (type != schema::TensorType::FLOAT32 && type != schema::TensorType::FLOAT16 &&
        type != schema::TensorType::INT8 && type != schema::TensorType::UINT8)
      return fail(who + ": Kiln densifies sparse FLOAT32, FLOAT16, INT8 and UINT8 constants");
    if (stored.empty())
      return fail(who + " holds no data; Kiln densifies sparse constants only (a sparse "
                        "activation is not supported)");
    auto layout = decodeLayout(*t, who);
    if (!layout)
      return fail(llvm::toString(layout.takeError()));
    size_t width = tensorTypeSize(type);
    if (stored.size() != layout->leaves * width)
      return fail(who + " stores " + llvm::Twine(stored.size()) + " bytes; its sparsity " +
                  "describes " + llvm::Twine(layout->leaves) + " values (" +
                  llvm::Twine(layout->leaves * width) + " bytes)");
    int64_t count = 1;
    for (int64_t d : layout->shape)
      count *= d;
    std::vector<uint8_t> dense(count * width, 0); // TFLite fills with T(0)
    std::vector<int64_t> coords(layout->levels.size(), 0);
    int64_t next = 0;
    if (count > 0)
      scatter(*layout, stored, width, dense, 0, 0, coords, next);
    // "1x4 blocks" (one size per dimension) or "CSR".
    std::string blocks;
    for (int64_t b : layout->blockSizes)
      blocks += (blocks.empty() ? "" : "x") + std::to_string(b);
    bool blocked = t->sparsity()->block_map() && t->sparsity()->block_map()->size();
    densifyNotes.push_back("tensor '" + tensorName(t, i) + "' (sparse " +
                           schema::EnumNameTensorType(type) + " " + shapeString(layout->shape) +
                           ", " + (blocked ? blocks + " blocks" : std::string("CSR")) + ", " +
                           std::to_string(layout->leaves) + " of " + std::to_string(count) +
                           " values stored, " + byteString(stored.size() + layout->indexBytes) +
                           " with its indices) densified at import to " + byteString(dense.size()));
    densified[t] = std::move(dense);
  }
  // DENSIFY (TFLite's densify.cc) turns a sparse constant into its dense
  // form: its output is that constant, read as if the model stored it.
  if (!graph->operators())
    return llvm::Error::success();
  int index = 0;
  for (const schema::Operator *op : *graph->operators()) {
    BuiltinOperator code = effectiveCode(model->operator_codes()->Get(op->opcode_index()));
    if (code == BuiltinOperator::DENSIFY) {
      std::string where = "operator #" + std::to_string(index) + " (DENSIFY)";
      const schema::Tensor *in =
          op->inputs() && op->inputs()->size() == 1 ? tensor(op->inputs()->Get(0)) : nullptr;
      const schema::Tensor *out =
          op->outputs() && op->outputs()->size() == 1 ? tensor(op->outputs()->Get(0)) : nullptr;
      if (!in || !out)
        return fail(where + " takes one input and gives one output");
      int inIndex = op->inputs()->Get(0), outIndex = op->outputs()->Get(0);
      if (!densified.count(in))
        return fail(where + ": its input '" + tensorName(in, inIndex) +
                    "' is not a sparse constant; DENSIFY takes a sparse constant tensor");
      if (in->type() != out->type() || shapeOf(inIndex) != shapeOf(outIndex))
        return fail(where + ": the output '" + tensorName(out, outIndex) + "' " +
                    schema::EnumNameTensorType(out->type()) + " " + shapeString(shapeOf(outIndex)) +
                    " differs from the input " + schema::EnumNameTensorType(in->type()) + " " +
                    shapeString(shapeOf(inIndex)) + "; DENSIFY keeps the type and shape");
      densified[out] = densified[in];
    }
    ++index;
  }
  return llvm::Error::success();
}

/// DENSIFY: nothing to build. densifySparseTensors made its output the
/// dense constant, which each reader materializes (OpContext::input).
static mlir::LogicalResult convertDensify(OpContext &ctx) {
  if (!ctx.isConstant(0) || !ctx.outputTensor(0))
    return ctx.fail("the input must be a sparse constant");
  return mlir::success();
}

void registerSparsityOps(ConverterTable &table) {
  table[BuiltinOperator::DENSIFY] = convertDensify;
}

} // namespace kiln::tfl
