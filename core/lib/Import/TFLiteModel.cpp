//===- TFLiteModel.cpp - A TFLite flatbuffer, verified -------------------===//
#include "TFLiteModel.h"

#include <algorithm>
#include <tuple>

namespace kiln::tfl {

const ::kiln::tflite::Model *readTFLiteModel(const uint8_t *data, size_t size, std::string &error) {
  namespace schema = ::kiln::tflite;
  if (size == 0) {
    error = "the file is empty (0 bytes); expected a TFLite, ONNX or TOSA .mlir model";
    return nullptr;
  }
  if (size < 8 || !flatbuffers::BufferHasIdentifier(data, schema::ModelIdentifier())) {
    error = "not a TFLite model: the flatbuffer file identifier 'TFL3' is "
            "missing (supported inputs: .tflite, .onnx, TOSA .mlir)";
    return nullptr;
  }
  flatbuffers::Verifier verifier(data, size, /*max_depth=*/128, /*max_tables=*/10000000);
  if (!schema::VerifyModelBuffer(verifier)) {
    error = "the TFLite flatbuffer is truncated or corrupted (" + std::to_string(size) +
            " bytes; flatbuffers verification failed)";
    return nullptr;
  }
  const schema::Model *model = schema::GetModel(data);
  if (!model->subgraphs() || model->subgraphs()->size() == 0) {
    error = "the model has no subgraph";
    return nullptr;
  }
  return model;
}

} // namespace kiln::tfl

namespace kiln::tfl {

namespace {
namespace schema = ::kiln::tflite;

/// "tensorN" for a tensor without a name, as the importer names it.
std::string nameOf(const schema::SubGraph *graph, int index) {
  const schema::Tensor *t =
      graph && graph->tensors() && index >= 0 && unsigned(index) < graph->tensors()->size()
          ? graph->tensors()->Get(index)
          : nullptr;
  return t && t->name() && t->name()->size() ? t->name()->str() : "tensor" + std::to_string(index);
}

std::vector<std::pair<std::string, int>>
tensorMaps(const flatbuffers::Vector<flatbuffers::Offset<schema::TensorMap>> *maps) {
  std::vector<std::pair<std::string, int>> out;
  if (maps)
    for (const schema::TensorMap *m : *maps)
      out.push_back({m && m->name() ? m->name()->str() : "", m ? int(m->tensor_index()) : -1});
  return out;
}

/// The reason `listed` is not a permutation of the subgraph's `io` tensors
/// (`what`: "input" or "output"), empty when it is.
std::string permutationReason(const std::string &key, int subgraph,
                              const std::vector<std::pair<std::string, int>> &listed,
                              const flatbuffers::Vector<int32_t> *io, const char *what) {
  std::vector<int> tensors = io ? std::vector<int>(io->begin(), io->end()) : std::vector<int>();
  std::string who = "signature '" + key + "'";
  for (const auto &[name, index] : listed) {
    if (std::find(tensors.begin(), tensors.end(), index) == tensors.end())
      return who + " lists " + what + " '" + name + "' as tensor " + std::to_string(index) +
             ", which is not an " + what + " of subgraph " + std::to_string(subgraph);
    for (const auto &[other, otherIndex] : listed)
      if (&other != &name && otherIndex == index)
        return who + " lists tensor " + std::to_string(index) + " twice ('" + name + "' and '" +
               other + "')";
  }
  if (listed.size() != tensors.size())
    return who + " lists " + std::to_string(listed.size()) + " " + what + "s; subgraph " +
           std::to_string(subgraph) + " has " + std::to_string(tensors.size()) +
           " (Kiln compiles a signature that names each of them)";
  return "";
}
} // namespace

std::vector<TFLiteEntry> tfliteSignatures(const schema::Model *model) {
  std::vector<TFLiteEntry> out;
  if (!model || !model->signature_defs())
    return out;
  for (const schema::SignatureDef *def : *model->signature_defs()) {
    if (!def)
      continue;
    TFLiteEntry e;
    e.key = def->signature_key() ? def->signature_key()->str() : "";
    e.subgraph = int(def->subgraph_index());
    e.inputs = tensorMaps(def->inputs());
    e.outputs = tensorMaps(def->outputs());
    out.push_back(std::move(e));
  }
  return out;
}

std::optional<TFLiteEntry> tfliteEntry(const schema::Model *model, const std::string &signature,
                                       std::string &error) {
  std::vector<TFLiteEntry> all = tfliteSignatures(model);
  if (all.empty() && !signature.empty()) {
    error = "--signature='" + signature +
            "': the model has no signatures (no SignatureDef); it compiles subgraph 0 "
            "without --signature";
    return std::nullopt;
  }
  // Without --signature: subgraph 0 with its tensors' names, as before
  // signatures were read, so the names existing models' builds, projects
  // and --fix-shape flags use stay valid (converter models carry a
  // 'serving_default' signature renaming 'serving_default_input_1:0' to
  // 'input_1').
  if (signature.empty()) {
    const schema::SubGraph *graph = model->subgraphs()->Get(0);
    TFLiteEntry e;
    if (graph && graph->inputs())
      for (int index : *graph->inputs())
        e.inputs.push_back({nameOf(graph, index), index});
    if (graph && graph->outputs())
      for (int index : *graph->outputs())
        e.outputs.push_back({nameOf(graph, index), index});
    return e;
  }
  const TFLiteEntry *chosen = nullptr;
  std::string keys;
  for (const TFLiteEntry &e : all) {
    keys += (keys.empty() ? "'" : ", '") + e.key + "'";
    if (e.key == signature && !chosen)
      chosen = &e;
  }
  if (!chosen) {
    error = "--signature='" + signature + "' is not a signature of the model (it has " + keys + ")";
    return std::nullopt;
  }
  int count = int(model->subgraphs()->size());
  if (chosen->subgraph < 0 || chosen->subgraph >= count) {
    error = "signature '" + chosen->key + "' runs subgraph " + std::to_string(chosen->subgraph) +
            ", which does not exist (the model has " + std::to_string(count) + ")";
    return std::nullopt;
  }
  const schema::SubGraph *graph = model->subgraphs()->Get(chosen->subgraph);
  for (auto [listed, io, what] : {std::tuple{&chosen->inputs, graph->inputs(), "input"},
                                  std::tuple{&chosen->outputs, graph->outputs(), "output"}}) {
    error = permutationReason(chosen->key, chosen->subgraph, *listed, io, what);
    if (!error.empty())
      return std::nullopt;
  }
  return *chosen;
}

} // namespace kiln::tfl
