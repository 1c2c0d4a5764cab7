//===- ArtifactFuzzing.h - One input through every .kiln reader -*- C++ -*-===//
//
// The body both artifact fuzz targets share (ArtifactLoadFuzzer: raw bytes;
// ArtifactMutateFuzzer: mutated valid artifacts, checksum resealed).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TESTS_FUZZ_ARTIFACTFUZZING_H
#define KILN_TESTS_FUZZ_ARTIFACTFUZZING_H

#include "kiln/runtime.h"

#include <cstddef>
#include <cstdint>

namespace kiln::fuzz {

/// Feeds data[0, size) to the artifact gate (kiln_artifact_verify), to
/// kiln_module_load (with FakeExecutableLoader.cpp's loader) and to the
/// compiler's readers (verifyArtifact, section sizes, summary, reflection
/// plan, inspectFile), then invokes a loaded module once on zero-filled
/// buffers (at most kMaxInvokeBytes in all, kMaxInvokeWorkgroups
/// workgroups of dispatches that do nothing). Aborts when a reader crashes or
/// the readers disagree with the gate: every reader refuses what the gate
/// refuses, with the gate's status code, and kiln_module_load never finds
/// damage the gate let through.
void fuzzArtifact(const uint8_t *data, size_t size);

/// Runs `module`, loaded from the verified artifact `artifact`, once on
/// local-sync with zero-filled inputs, outputs and arena of exactly the sizes
/// it reports (AddressSanitizer sees every copy or fill past them). Returns
/// false without running when the buffers pass kMaxInvokeBytes or the
/// dispatches kMaxInvokeWorkgroups; else true with the invocation's status.
bool invokeOnZeros(kiln_module_t *module, const uint8_t *artifact, kiln_status_t *status);

/// Bytes of inputs, outputs and arena above which a loaded module is not
/// invoked (a valid artifact may ask for gigabytes).
constexpr uint64_t kMaxInvokeBytes = uint64_t(64) << 20;

/// Workgroups (all dispatches together) above which a loaded module is not
/// invoked: the gate lets a dispatch have up to 2^32, which even empty
/// dispatches take minutes to run.
constexpr uint64_t kMaxInvokeWorkgroups = uint64_t(1) << 16;

} // namespace kiln::fuzz

#endif
