//===- ArtifactLoadFuzzer.cpp - Fuzz target: raw bytes as a .kiln ---------===//
//
// Raw bytes -> the artifact gate, kiln_module_load and the compiler's
// artifact readers (ArtifactFuzzing.h). libFuzzer's comparison tracing
// learns the identifier and often the checksum; ArtifactMutateFuzzer
// reaches the checks behind the checksum on purpose.
//
//===----------------------------------------------------------------------===//
#include "ArtifactFuzzing.h"
#include "FuzzSupport.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  kiln::fuzz::fuzzArtifact(data, size);
  return 0;
}
