//===- TFLiteModel.h - A TFLite flatbuffer, verified -----------*- C++ -*-===//
//
// The one reader of a TFLite file's bytes (schema: core/schema/tflite.fbs,
// flatc's generated code): the file identifier "TFL3", flatbuffers
// verification, at least one subgraph. The importer (TFLiteImporter.cpp),
// the model-inputs reader (ModelInputs.cpp) and the source graph
// (SourceGraph.cpp) all read models through it.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CORE_IMPORT_TFLITEMODEL_H
#define KILN_CORE_IMPORT_TFLITEMODEL_H

#include "tflite_generated.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kiln::tfl {

/// The model in the `size` bytes at `data`, or null with `error` set to one
/// line without the file name (the caller prefixes it): "the file is empty
/// (0 bytes); ...", "not a TFLite model: the flatbuffer file identifier
/// 'TFL3' is missing ...", "the TFLite flatbuffer is truncated or corrupted
/// (N bytes; flatbuffers verification failed)", "the model has no
/// subgraph". The model points into `data`, which must outlive it.
const ::kiln::tflite::Model *readTFLiteModel(const uint8_t *data, size_t size, std::string &error);

/// One entry point of a TFLite model: a SignatureDef (schema v3's
/// signature_defs: a key, the subgraph it runs and its inputs and outputs as
/// {name, tensor_index} TensorMaps), or subgraph 0 with its tensors' names
/// when none is asked for. `inputs` and `outputs` are (name, tensor index
/// in `subgraph`) in the order the signature lists them, the order and the
/// names TFLite's SignatureRunner exposes
/// (tensorflow/lite/signature_runner.h; the interpreter reads the maps in
/// tensorflow/lite/interpreter_builder.cc ParseSignatureDefs).
struct TFLiteEntry {
  /// The signature_key; empty for a model without SignatureDefs.
  std::string key;
  int subgraph = 0;
  std::vector<std::pair<std::string, int>> inputs;
  std::vector<std::pair<std::string, int>> outputs;
};

/// Every SignatureDef of `model` in file order, as read (unchecked: a
/// tensor index may name no input; tfliteEntry checks the one compiled).
std::vector<TFLiteEntry> tfliteSignatures(const ::kiln::tflite::Model *model);

/// The entry point `signature` names: a signature_key, or "" for subgraph 0
/// with its tensors' names (also when the model has SignatureDefs: the
/// names builds, projects and --fix-shape flags used before signatures
/// were read stay valid). Null with `error`
/// set to one line without the file name: an unknown key (listing the
/// model's signatures), a subgraph index out of range, a TensorMap whose
/// tensor is not an input (output) of the subgraph, or a signature that
/// does not list each of the subgraph's inputs (outputs) exactly once.
std::optional<TFLiteEntry> tfliteEntry(const ::kiln::tflite::Model *model,
                                       const std::string &signature, std::string &error);

} // namespace kiln::tfl

#endif
