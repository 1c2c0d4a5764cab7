//===- TFLiteModel.cpp - A TFLite flatbuffer, verified -------------------===//
#include "TFLiteModel.h"

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
