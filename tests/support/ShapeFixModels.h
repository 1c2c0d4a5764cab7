//===- ShapeFixModels.h - Small .tflite models with dynamic dimensions -*- C++ -*-===//
//
// Hand-built TFLite models (the TFLite schema's object API, flatbuffers) for
// the --fix-shape tests of the CLI (tests/model/ShapeFixTest.cpp) and the
// workbench (tests/gui/ShapeFixGuiTest.cpp). Each records 1 in `shape` for
// a dynamic dimension and -1 in `shape_signature`, as TFLite's converter
// writes them.
//
//   audioModel()  input 'audio' [-1,-1] (batch, samples):
//                   #0 MUL by 2 -> scaled [-1,-1]
//                   #1 SUM over axis 1 -> 'sums' [-1]              (output 0)
//                   #2 RESHAPE to [-1,2000] -> frames [-1,2000]
//                   #3 FULLY_CONNECTED, weights [3,2000] (row 0 all 1,
//                      row 1 all 0.5, row 2 +1,-1,+1,...), bias [1,2,3]
//                      -> 'features' [-1,3]                        (output 1)
//   pairModel()   inputs 'a' and 'b', both [-1,4] (a shared batch):
//                   #0 ADD -> 'sum' [-1,4]
//   imageModel()  input 'image' [1,-1,-1,1]:
//                   #0 CONV_2D 3x3 VALID stride 1, two filters (all 1, all
//                      0.5), bias [0.5,-1] -> 'conv' [1,-1,-1,2]
//   framesModel() input 'frames' [-1,1,-1,4] (batch, 1, frames, bins):
//                   #0 BATCH_MATMUL by the constant [4,3] weights
//                      w[k][n] = (k + 1) * (n + 1) -> 'mel' [-1,1,-1,3]
//                      (a rank-4 by rank-2 product, as openWakeWord's
//                      melspectrogram has)
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TESTS_SHAPEFIXMODELS_H
#define KILN_TESTS_SHAPEFIXMODELS_H

#include "tflite_generated.h"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace kiln::test {

/// Builds one single-subgraph float32 TFLite model.
class TinyTflite {
public:
  TinyTflite() {
    model.version = 3;
    model.buffers.push_back(std::make_unique<tflite::BufferT>()); // buffer 0: empty
    model.subgraphs.push_back(std::make_unique<tflite::SubGraphT>());
  }

  /// A computed tensor: recorded `shape`, and `signature` (-1 = dynamic).
  int tensor(const std::string &name, std::vector<int32_t> shape, std::vector<int32_t> signature) {
    auto t = std::make_unique<tflite::TensorT>();
    t->name = name;
    t->type = tflite::TensorType::FLOAT32;
    t->shape = std::move(shape);
    t->shape_signature = std::move(signature);
    graph().tensors.push_back(std::move(t));
    return static_cast<int>(graph().tensors.size()) - 1;
  }

  /// A constant tensor of `type` holding `bytes`.
  int constant(const std::string &name, std::vector<int32_t> shape, tflite::TensorType type,
               const void *bytes, size_t size) {
    auto b = std::make_unique<tflite::BufferT>();
    b->data.resize(size);
    std::memcpy(b->data.data(), bytes, size);
    model.buffers.push_back(std::move(b));
    int t = tensor(name, shape, shape);
    graph().tensors[t]->type = type;
    graph().tensors[t]->buffer = static_cast<uint32_t>(model.buffers.size() - 1);
    return t;
  }
  int constF32(const std::string &name, std::vector<int32_t> shape, const std::vector<float> &v) {
    return constant(name, std::move(shape), tflite::TensorType::FLOAT32, v.data(), v.size() * 4);
  }
  int constI32(const std::string &name, std::vector<int32_t> shape, const std::vector<int32_t> &v) {
    return constant(name, std::move(shape), tflite::TensorType::INT32, v.data(), v.size() * 4);
  }

  /// Operator `code` from `inputs` to `outputs` with `options` (a *OptionsT
  /// or nothing).
  template <typename Options = std::nullptr_t>
  void op(tflite::BuiltinOperator code, std::vector<int32_t> inputs, std::vector<int32_t> outputs,
          Options options = nullptr) {
    auto o = std::make_unique<tflite::OperatorT>();
    o->opcode_index = codeIndex(code);
    o->inputs = std::move(inputs);
    o->outputs = std::move(outputs);
    if constexpr (!std::is_same_v<Options, std::nullptr_t>)
      o->builtin_options.Set(std::move(options));
    graph().operators.push_back(std::move(o));
  }

  void io(std::vector<int32_t> inputs, std::vector<int32_t> outputs) {
    graph().inputs = std::move(inputs);
    graph().outputs = std::move(outputs);
  }

  /// The model's bytes.
  std::vector<uint8_t> finish() {
    flatbuffers::FlatBufferBuilder fbb;
    fbb.Finish(tflite::Model::Pack(fbb, &model), tflite::ModelIdentifier());
    return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
  }

  /// Writes the model to `path`; false if it could not.
  bool write(const std::string &path) {
    std::vector<uint8_t> bytes = finish();
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return static_cast<bool>(out);
  }

private:
  tflite::SubGraphT &graph() { return *model.subgraphs[0]; }
  uint32_t codeIndex(tflite::BuiltinOperator code) {
    for (size_t i = 0; i < model.operator_codes.size(); ++i)
      if (model.operator_codes[i]->builtin_code == code)
        return static_cast<uint32_t>(i);
    auto c = std::make_unique<tflite::OperatorCodeT>();
    c->builtin_code = code;
    c->deprecated_builtin_code = static_cast<int8_t>(std::min<int>(static_cast<int>(code), 127));
    c->version = 1;
    model.operator_codes.push_back(std::move(c));
    return static_cast<uint32_t>(model.operator_codes.size() - 1);
  }

  tflite::ModelT model;
};

/// Raw audio [-1,-1] -> per-batch sums and 2000-sample frame features (see
/// the file comment).
inline bool writeAudioModel(const std::string &path) {
  using Op = tflite::BuiltinOperator;
  TinyTflite m;
  int audio = m.tensor("audio", {1, 1}, {-1, -1});
  int two = m.constF32("two", {1}, {2.0f});
  int scaled = m.tensor("scaled", {1, 1}, {-1, -1});
  int axes = m.constI32("axes", {1}, {1});
  int sums = m.tensor("sums", {1}, {-1});
  int newShape = m.constI32("new_shape", {2}, {-1, 2000});
  int frames = m.tensor("frames", {1, 2000}, {-1, 2000});
  std::vector<float> w(3 * 2000);
  for (int j = 0; j < 2000; ++j) {
    w[j] = 1.0f;
    w[2000 + j] = 0.5f;
    w[4000 + j] = j % 2 ? -1.0f : 1.0f;
  }
  int weights = m.constF32("weights", {3, 2000}, w);
  int bias = m.constF32("bias", {3}, {1.0f, 2.0f, 3.0f});
  int features = m.tensor("features", {1, 3}, {-1, 3});
  m.op(Op::MUL, {audio, two}, {scaled}, tflite::MulOptionsT());
  tflite::ReducerOptionsT reducer;
  reducer.keep_dims = false;
  m.op(Op::SUM, {scaled, axes}, {sums}, reducer);
  tflite::ReshapeOptionsT reshape;
  reshape.new_shape = {-1, 2000};
  m.op(Op::RESHAPE, {scaled, newShape}, {frames}, reshape);
  m.op(Op::FULLY_CONNECTED, {frames, weights, bias}, {features}, tflite::FullyConnectedOptionsT());
  m.io({audio}, {sums, features});
  return m.write(path);
}

/// Two inputs [-1,4] sharing a batch dimension, added. `recorded` is the
/// size `shape` records for the batch (1, as TFLite's converter writes it;
/// -1, as old converters did: no recorded size).
inline bool writePairModel(const std::string &path, int32_t recorded = 1) {
  TinyTflite m;
  int a = m.tensor("a", {recorded, 4}, {-1, 4});
  int b = m.tensor("b", {recorded, 4}, {-1, 4});
  int sum = m.tensor("sum", {recorded, 4}, {-1, 4});
  m.op(tflite::BuiltinOperator::ADD, {a, b}, {sum}, tflite::AddOptionsT());
  m.io({a, b}, {sum});
  return m.write(path);
}

/// writePairModel with no recorded batch size (shape [-1,4]).
inline bool writeUnrecordedPairModel(const std::string &path) { return writePairModel(path, -1); }

/// An image [1,-1,-1,1] through a 3x3 VALID CONV_2D with two filters.
inline bool writeImageModel(const std::string &path) {
  TinyTflite m;
  int image = m.tensor("image", {1, 1, 1, 1}, {1, -1, -1, 1});
  std::vector<float> f(2 * 9);
  for (int i = 0; i < 9; ++i) {
    f[i] = 1.0f;
    f[9 + i] = 0.5f;
  }
  int filter = m.constF32("filter", {2, 3, 3, 1}, f);
  int bias = m.constF32("conv_bias", {2}, {0.5f, -1.0f});
  int conv = m.tensor("conv", {1, 1, 1, 2}, {1, -1, -1, 2});
  tflite::Conv2DOptionsT options;
  options.padding = tflite::Padding::VALID;
  options.stride_h = options.stride_w = 1;
  m.op(tflite::BuiltinOperator::CONV_2D, {image, filter, bias}, {conv}, options);
  m.io({image}, {conv});
  return m.write(path);
}

/// Frames [-1,1,-1,4] times a constant [4,3] (BATCH_MATMUL, rank 4 by 2).
inline bool writeFramesModel(const std::string &path) {
  TinyTflite m;
  int frames = m.tensor("frames", {1, 1, 1, 4}, {-1, 1, -1, 4});
  std::vector<float> w(12);
  for (int k = 0; k < 4; ++k)
    for (int n = 0; n < 3; ++n)
      w[k * 3 + n] = static_cast<float>((k + 1) * (n + 1));
  int weights = m.constF32("weights", {4, 3}, w);
  int mel = m.tensor("mel", {1, 1, 1, 3}, {-1, 1, -1, 3});
  m.op(tflite::BuiltinOperator::BATCH_MATMUL, {frames, weights}, {mel},
       tflite::BatchMatMulOptionsT());
  m.io({frames}, {mel});
  return m.write(path);
}

} // namespace kiln::test

#endif
