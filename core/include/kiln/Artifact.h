//===- kiln/Artifact.h - Reading .kiln files as sections -------*- C++ -*-===//
//
// Section sizes of an artifact (runtime/schema/kiln_artifact.fbs: io,
// commands, memory_plan, executables, device, constants, reflection) as
// recorded by the writer, plus the format overhead, which together add up
// to the file size exactly.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_ARTIFACT_H
#define KILN_ARTIFACT_H

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/runtime.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace kiln {

/// Whether the file `path` holding `bytes` is read as an artifact: by
/// content, the runtime's kiln_artifact_recognize (the 'KILN' identifier);
/// the `.kiln` extension only as a hint, so that such a file without the
/// identifier gets the gate's error ("not a Kiln artifact") rather than an
/// importer's.
bool isArtifact(llvm::StringRef path, llvm::ArrayRef<uint8_t> bytes);

/// isArtifact on the first 8 bytes of the file `path` (what tools that
/// decide before reading a whole file use); a file that cannot be read is
/// judged by its name alone.
bool isArtifactFile(llvm::StringRef path);

/// The artifact gate for the compiler's readers: the runtime's
/// kiln_artifact_verify on `bytes` (magic, checksum trailer, version,
/// flatbuffer, command list, every size and offset). The info's pointers
/// point into `bytes`. Errors read "<what>: <the gate's message>".
llvm::Expected<kiln_artifact_info_t> verifyArtifact(llvm::ArrayRef<uint8_t> bytes,
                                                    llvm::StringRef what);

/// Bytes per section of one artifact.
struct SectionSizes {
  /// (name, bytes) in the writer's order: constants, executables,
  /// commands, memory_plan, device, reflection, io.
  std::vector<std::pair<std::string, int64_t>> sections;
  /// Byte offset of each section in the file (same order). The writer
  /// builds back to front, so the first section ends where the flatbuffer
  /// ends (8 bytes before the file's end) and each next one precedes it.
  std::vector<int64_t> offsets;
  /// Root table, vtables, size table, identifier, padding, checksum, bytes.
  int64_t overhead = 0;
  /// The whole file, bytes.
  int64_t fileBytes = 0;
};

/// Appends the 8-byte trailer every artifact ends with: "KSUM" and the
/// CRC-32 (IEEE 802.3, as zlib computes it) of all bytes before it, little
/// endian (runtime/schema/kiln_artifact.fbs).
void appendChecksumTrailer(std::vector<uint8_t> &flatbuffer);

/// Reads the section sizes of the artifact `bytes`, after passing it
/// through the gate (verifyArtifact). `what` names the file in errors.
llvm::Expected<SectionSizes> readSectionSizes(const std::vector<uint8_t> &bytes,
                                              const std::string &what);

/// Section sizes of an artifact the gate verified (`info` from
/// verifyArtifact); an error naming `what` for format 1.0, which recorded
/// none.
llvm::Expected<SectionSizes> sectionSizesOf(const kiln_artifact_info_t &info,
                                            const std::string &what);

/// Sizes as a table (`name  bytes  percent`) or, with `json`, as
/// {"file_bytes": N, "overhead_bytes": N, "sections": {"io": N, ...}}.
std::string formatSectionSizes(const SectionSizes &sizes, bool json);

/// Per-section difference B - A, as a table or JSON (same shape as
/// formatSectionSizes, with "a", "b" and "delta" per section).
std::string formatSectionDiff(const SectionSizes &a, const SectionSizes &b, bool json);

/// What `kiln diff` and the workbench's Compare view put side by side.
struct BuildSummary {
  SectionSizes sizes;
  int64_t arenaBytes = 0;
  int64_t lowerBoundBytes = 0;
  /// Entries of the command list, and those that are dispatches.
  int64_t commands = 0;
  int64_t dispatches = 0;
  int64_t waves = 0;
  /// Target of the executables (triple, CPU).
  std::string triple;
  std::string cpu;
  /// Median latency on this host, milliseconds; negative when not measured.
  double medianMs = -1;
};

/// Reads the summary of the artifact `bytes` (checked like
/// readSectionSizes). `what` names the file in errors.
llvm::Expected<BuildSummary> summarizeArtifact(const std::vector<uint8_t> &bytes,
                                               const std::string &what);

/// The summary of an artifact the gate verified (`info` from
/// verifyArtifact); errors as sectionSizesOf.
llvm::Expected<BuildSummary> summaryOf(const kiln_artifact_info_t &info,
                                       const std::string &what);

/// B - A for sections (as formatSectionDiff) and for the plan: rows
/// "arena_bytes", "lower_bound_bytes", "dispatch_count", "command_count",
/// "wave_count" (named apart from the "commands" section) and,
/// when both were measured, "median_ms". JSON: one object per row with "a",
/// "b" and "delta".
std::string formatBuildDiff(const BuildSummary &a, const BuildSummary &b, bool json);

} // namespace kiln

#endif
