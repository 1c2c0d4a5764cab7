//===- TuningFuzzer.cpp - Fuzz target: tuning JSON files ------------------===//
//
// Bytes -> kiln::parseTuning (core/lib/Compiler.cpp; what `kiln compile
// --tuning=FILE` reads). Invariants: errors are one line; what is accepted
// is dispatch ids and tile sizes >= 0.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "kiln/Compiler.h"

using kiln::fuzz::fuzzCheck;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  kiln::CompileOptions options;
  if (llvm::Error err = kiln::parseTuning(text, "tuning.json", options)) {
    kiln::fuzz::expectOneLineError(std::move(err), "parseTuning", text);
    return 0;
  }
  for (int64_t id : options.noFusion)
    fuzzCheck(id >= 0, "accepted a negative no_fusion id");
  for (const auto &[id, sizes] : options.tileSizes) {
    fuzzCheck(id >= 0, "accepted a negative dispatch id");
    for (int64_t s : sizes)
      fuzzCheck(s >= 0, "accepted a negative tile size");
  }
  return 0;
}
