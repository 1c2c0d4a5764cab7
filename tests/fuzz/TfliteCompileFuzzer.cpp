//===- TfliteCompileFuzzer.cpp - Fuzz target: TFLite bytes -> .kiln -------===//
//
// Bytes -> kiln::compile (the whole pipeline `kiln compile` runs: import,
// TOSA -> linalg, dispatches, bufferization, schedule and memory plan, LLVM
// code generation, artifact writer) -> the artifact gate -> kiln::runArtifact
// on random inputs (what `kiln run` does). Invariants: an error is one line
// and never an internal error; an artifact the compiler writes passes the
// gate, loads and runs.
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
#include "kiln/Run.h"
#include "kiln/runtime.h"
#include "tflite_generated.h"

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

/// Runs the compiler's artifact once the way `kiln run` does (the artifact
/// gate, load, seeded random inputs of its own signature, local-sync).
void loadAndRun(const std::vector<uint8_t> &artifact) {
  kiln_status_t verified = kiln_artifact_verify(artifact.data(), artifact.size(), nullptr);
  fuzzCheck(verified.code == KILN_OK,
            std::string("the compiler wrote an artifact the gate refuses: ") + verified.message);
  kiln::RunOptions options;
  options.randomInputs = true;
  auto ran = kiln::runArtifact(artifact, {}, options);
  fuzzCheck(static_cast<bool>(ran), "the compiler wrote an artifact that does not run: " +
                                        (ran ? std::string() : llvm::toString(ran.takeError())));
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
