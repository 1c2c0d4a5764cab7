//===- TfliteCompileFuzzer.cpp - Fuzz target: TFLite bytes -> .kiln -------===//
//
// Bytes -> kiln::compile (the whole pipeline `kiln compile` runs: import,
// TOSA -> linalg, dispatches, bufferization, schedule and memory plan, LLVM
// code generation, artifact writer) -> the artifact gate -> kiln_module_load
// -> one invocation on zero inputs. Invariants: an error is one line and
// never an internal error; an artifact the compiler writes passes the gate,
// loads and runs.
//
// Size cap: a well-formed model may legitimately ask for tensors of
// gigabytes, which would only make the fuzzer run out of memory. Inputs
// holding a tensor of more than kMaxTensorElements elements, or more than
// kMaxModelElements in all, are skipped before compiling (the importer
// target, TfliteImportFuzzer, takes them).
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "kiln/Compiler.h"
#include "kiln/runtime.h"
#include "tflite_generated.h"

#include <algorithm>
#include <memory>
#include <new>
#include <vector>

using kiln::fuzz::fuzzCheck;

namespace {

constexpr uint64_t kMaxTensorElements = uint64_t(1) << 16;
constexpr uint64_t kMaxModelElements = uint64_t(1) << 20;

/// Whether every tensor the model declares (shape and shape signature; a
/// dynamic -1 counts as 1) fits the cap. Unverifiable bytes pass: the
/// compiler must refuse them itself.
bool withinSizeCap(const uint8_t *data, size_t size) {
  flatbuffers::Verifier verifier(data, size);
  if (!kiln::tflite::VerifyModelBuffer(verifier))
    return true;
  const kiln::tflite::Model *model = kiln::tflite::GetModel(data);
  if (!model->subgraphs())
    return true;
  uint64_t total = 0;
  for (const kiln::tflite::SubGraph *graph : *model->subgraphs()) {
    if (!graph || !graph->tensors())
      continue;
    for (const kiln::tflite::Tensor *tensor : *graph->tensors()) {
      if (!tensor)
        continue;
      for (const auto *shape : {tensor->shape(), tensor->shape_signature()}) {
        uint64_t elements = 1;
        if (shape)
          for (int32_t d : *shape)
            if (d > 0 && __builtin_mul_overflow(elements, uint64_t(d), &elements))
              return false;
        if (elements > kMaxTensorElements)
          return false;
        total += elements;
      }
    }
  }
  return total <= kMaxModelElements;
}

/// A zero-filled buffer of exactly `bytes` bytes, 64-byte aligned.
struct ZeroBuffer {
  explicit ZeroBuffer(size_t bytes)
      : data(static_cast<uint8_t *>(::operator new(bytes ? bytes : 1, std::align_val_t(64)))) {
    std::fill(data, data + bytes, 0);
  }
  ~ZeroBuffer() { ::operator delete(data, std::align_val_t(64)); }
  uint8_t *data;
};

/// Loads the compiler's artifact and runs it once on zero inputs.
void loadAndRun(const std::vector<uint8_t> &artifact) {
  kiln_status_t verified = kiln_artifact_verify(artifact.data(), artifact.size(), nullptr);
  fuzzCheck(verified.code == KILN_OK,
            std::string("the compiler wrote an artifact the gate refuses: ") + verified.message);
  ZeroBuffer image(artifact.size());
  std::copy(artifact.begin(), artifact.end(), image.data);
  kiln_module_t *raw = nullptr;
  kiln_status_t loaded = kiln_module_load(image.data, artifact.size(), &raw);
  fuzzCheck(loaded.code == KILN_OK,
            std::string("the compiler wrote an artifact that does not load: ") + loaded.message);
  std::unique_ptr<kiln_module_t, void (*)(kiln_module_t *)> module(raw, kiln_module_release);
  std::vector<std::unique_ptr<ZeroBuffer>> buffers;
  std::vector<const void *> inputs;
  std::vector<void *> outputs;
  std::vector<size_t> inputSizes, outputSizes;
  for (size_t i = 0; i < kiln_module_input_count(raw); ++i) {
    kiln_tensor_info_t info;
    fuzzCheck(kiln_module_input_info(raw, i, &info).code == KILN_OK, "input info");
    buffers.push_back(std::make_unique<ZeroBuffer>(info.byte_size));
    inputs.push_back(buffers.back()->data);
    inputSizes.push_back(info.byte_size);
  }
  for (size_t i = 0; i < kiln_module_output_count(raw); ++i) {
    kiln_tensor_info_t info;
    fuzzCheck(kiln_module_output_info(raw, i, &info).code == KILN_OK, "output info");
    buffers.push_back(std::make_unique<ZeroBuffer>(info.byte_size));
    outputs.push_back(buffers.back()->data);
    outputSizes.push_back(info.byte_size);
  }
  ZeroBuffer arena(kiln_module_arena_bytes(raw));
  kiln_invocation_t invocation = {};
  invocation.inputs = inputs.data();
  invocation.input_sizes = inputSizes.data();
  invocation.input_count = inputs.size();
  invocation.outputs = outputs.data();
  invocation.output_sizes = outputSizes.data();
  invocation.output_count = outputs.size();
  invocation.arena = arena.data;
  invocation.arena_size = kiln_module_arena_bytes(raw);
  kiln_status_t ran = kiln_module_invoke(raw, &invocation);
  fuzzCheck(ran.code == KILN_OK,
            std::string("the compiler wrote an artifact that does not run: ") + ran.message);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);
  if (!withinSizeCap(data, size))
    return -1; // not added to the corpus
  std::string path = kiln::fuzz::writeScratchFile(data, size, ".tflite");
  kiln::CompileOptions options;
  auto result = kiln::compile(path, options);
  if (!result) {
    kiln::fuzz::expectOneLineError(result.takeError(), "compile", input);
    return 0;
  }
  loadAndRun(result->artifact);
  return 0;
}
