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
#include <string>

namespace kiln::tfl {

/// The model in the `size` bytes at `data`, or null with `error` set to one
/// line without the file name (the caller prefixes it): "the file is empty
/// (0 bytes); ...", "not a TFLite model: the flatbuffer file identifier
/// 'TFL3' is missing ...", "the TFLite flatbuffer is truncated or corrupted
/// (N bytes; flatbuffers verification failed)", "the model has no
/// subgraph". The model points into `data`, which must outlive it.
const ::kiln::tflite::Model *readTFLiteModel(const uint8_t *data, size_t size, std::string &error);

} // namespace kiln::tfl

#endif
