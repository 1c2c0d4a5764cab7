//===- TFLiteDynamicInputs.cpp - Dynamic inputs without --fix-shape ---------===//
//
// A model input with dynamic dimensions (-1 in its shape_signature) whose
// shape records a size in each of them compiles at that recorded shape, as
// TFLite and TFLite Micro run it (their interpreters allocate tensors at
// `shape`; the signature only says a caller may resize), with one warning.
// An input that records no size (-1 or 0 in `shape`, as old converters
// wrote), or whose recorded shape does not compile, cannot compile without
// sizes: the error says which input and dimensions, and suggests sizes that
// import: the recorded shape, or each size the model mentions, tried in
// turn.
//
//===----------------------------------------------------------------------===//
#include "TFLiteModelImporter.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace kiln::tfl {

/// "dimension 0" / "dimensions 0 and 1" / "dimensions 0, 1 and 3".
static std::string dimensionList(llvm::ArrayRef<int64_t> dims) {
  std::string s = dims.size() == 1 ? "a dynamic dimension " : "dynamic dimensions ";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i == 0 ? "" : i + 1 == dims.size() ? " and " : ", ") + std::to_string(dims[i]);
  return s;
}

/// "1x16000".
static std::string dimsText(llvm::ArrayRef<int64_t> dims) {
  std::string s;
  for (size_t d = 0; d < dims.size(); ++d)
    s += (d ? "x" : "") + std::to_string(dims[d]);
  return s;
}

/// Sizes worth trying for dynamic dimensions: every positive dimension the
/// model mentions (tensor shapes and signatures, RESHAPE new shapes), small
/// ones first, at most `limit`.
static std::vector<int64_t> candidateSizes(const ModelImporter &m, size_t limit) {
  std::set<int64_t> sizes;
  auto add = [&](int64_t d) {
    if (d > 1 && d <= (int64_t(1) << 24))
      sizes.insert(d);
  };
  for (const schema::Tensor *t : *m.graph->tensors()) {
    for (const auto *dims : {t->shape(), t->shape_signature()})
      if (dims)
        for (int32_t d : *dims)
          add(d);
  }
  if (m.graph->operators())
    for (const schema::Operator *op : *m.graph->operators())
      if (const auto *o = op->builtin_options_as<schema::ReshapeOptions>())
        if (o->new_shape())
          for (int32_t d : *o->new_shape())
            add(d);
  std::vector<int64_t> out(sizes.begin(), sizes.end());
  if (out.size() > limit)
    out.resize(limit);
  return out;
}

/// The dynamic dimensions of `in` (-1 in its signature or shape).
static llvm::SmallVector<int64_t> openDimensions(const ModelImporter::UnfixedInput &in) {
  llvm::SmallVector<int64_t> open;
  for (size_t d = 0; d < in.signature.size(); ++d)
    if (in.signature[d] < 0 || in.shape[d] < 0)
      open.push_back(d);
  return open;
}

std::optional<std::vector<ShapeFix>> recordedShapeFixes(const ModelImporter &failed) {
  std::vector<ShapeFix> out;
  for (const auto &in : failed.unfixed) {
    if (in.shape.size() != in.signature.size() ||
        llvm::any_of(in.shape, [](int64_t d) { return d < 1; }))
      return std::nullopt;
    out.push_back({in.name, in.shape});
  }
  return out;
}

std::string recordedShapeWarning(const ModelImporter &failed) {
  std::string text;
  for (const auto &in : failed.unfixed) {
    // One letter per dynamic dimension ("NxM" for [-1,-1]: each its own size).
    std::string other;
    int letter = 0;
    for (size_t d = 0; d < in.shape.size(); ++d)
      other += (d ? "x" : "") + (llvm::is_contained(openDimensions(in), int64_t(d))
                                     ? std::string(1, "NMKLPQ"[std::min(letter++, 5)])
                                     : std::to_string(in.shape[d]));
    text += std::string(text.empty() ? "" : "; ") + "input '" + in.name + "' (input " +
            std::to_string(in.position) + ") has " + dimensionList(openDimensions(in)) +
            " (shape signature " + shapeString(in.signature) +
            "): compiled at its recorded shape " + dimsText(in.shape) +
            ", as TFLite runs it; for another size give --fix-shape=" + in.name + "=" + other;
  }
  return text;
}

/// The error for model inputs with dynamic dimensions and no --fix-shape,
/// with sizes that import (tried here, so the suggestion always works): the
/// recorded shape first (TFLite records 1 for a dynamic dimension), then
/// each size the model mentions for every dynamic dimension but a leading
/// batch dimension, which keeps its recorded size.
llvm::Error unfixedInputError(MLIRContext &context, llvm::ArrayRef<uint8_t> bytes,
                              llvm::StringRef filename, const std::vector<ShapeFix> &fixes,
                              const ModelImporter &failed) {
  const auto &unfixed = failed.unfixed;
  auto trial = [&](int64_t size) {
    std::vector<ShapeFix> all = fixes;
    for (const auto &in : unfixed) {
      ShapeFix fix{in.name, {}};
      for (size_t d = 0; d < in.signature.size(); ++d) {
        int64_t recorded = std::max<int64_t>(in.shape[d], 1);
        bool open = in.signature[d] < 0 || in.shape[d] < 0;
        bool batch = d == 0 && in.signature.size() > 1;
        fix.shape.push_back(open && size > 0 && !batch ? size : recorded);
      }
      all.push_back(fix);
    }
    return all;
  };
  std::vector<int64_t> sizes = {0}; // 0: the recorded shape
  for (int64_t c : candidateSizes(failed, 16))
    sizes.push_back(c);
  std::optional<std::vector<ShapeFix>> works;
  std::string recordedError;
  for (int64_t size : sizes) {
    std::vector<ShapeFix> all = trial(size);
    ModelImporter attempt(context, bytes, filename, all, failed.signatureName);
    auto module = attempt.run();
    if (module) {
      works = std::vector<ShapeFix>(all.end() - unfixed.size(), all.end());
      break;
    }
    std::string message = llvm::toString(module.takeError());
    if (size == 0)
      recordedError = llvm::StringRef(message).drop_front(filename.size() + 2).str();
  }
  const auto &first = unfixed.front();
  llvm::SmallVector<int64_t> open = openDimensions(first);
  std::string message = filename.str() + ": input '" + first.name + "' (input " +
                        std::to_string(first.position) + ") has " + dimensionList(open) +
                        " (shape signature " + shapeString(first.signature) +
                        "); Kiln compiles static shapes only: ";
  // The same as data (kiln/ModelInputs.h): each unfixed input, its suggestion.
  std::vector<UnfixedInput> data;
  for (size_t i = 0; i < unfixed.size(); ++i) {
    const auto &in = unfixed[i];
    UnfixedInput u;
    u.input.name = in.name;
    u.input.index = in.position;
    const schema::Tensor *t = failed.tensor(failed.entry.inputs[in.position].second);
    u.input.elementType = llvm::StringRef(schema::EnumNameTensorType(t->type())).lower();
    for (size_t d = 0; d < in.signature.size(); ++d)
      u.input.shape.push_back(in.signature[d] < 0 || in.shape[d] < 0 ? -1 : in.signature[d]);
    u.input.dimNames.assign(u.input.shape.size(), "");
    if (works)
      u.suggestion = (*works)[i].shape;
    data.push_back(std::move(u));
  }
  if (!works)
    return llvm::make_error<UnfixedInputError>(
        message +
            "give each dynamic dimension a size with --fix-shape "
            "(the recorded shape " +
            dimsText(trial(0)[fixes.size()].shape) + " does not compile: " + recordedError + ")",
        std::move(data));
  message += "fix it with --fix-shape=" + first.name + "=" + dimsText(works->front().shape);
  for (size_t i = 1; i < works->size(); ++i)
    message += std::string(i == 1 ? " and" : ",") + " input '" + (*works)[i].input +
               "' with --fix-shape=" + (*works)[i].input + "=" + dimsText((*works)[i].shape);
  return llvm::make_error<UnfixedInputError>(message, std::move(data));
}

} // namespace kiln::tfl
