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
#include <utility>
#include <vector>

#include "kiln/Plan.h"
#include "kiln/TensorTypes.h"
#include "kiln/runtime.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

namespace kiln {

struct CompilationPlan;

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

/// Latency of timed runs, milliseconds, and where they ran: plain data
/// here, measured by kiln_host (kiln/Run.h: latencyOf, benchmarkPair). The
/// one summary every tool prints (`kiln run --benchmark`, `kiln diff
/// --benchmark`, the workbench's Run and Compare).
struct LatencyStats {
  /// Median (the mean of the middle two for an even count), fastest and
  /// slowest run; negative when nothing was measured.
  double medianMs = -1, minMs = -1, maxMs = -1;
  unsigned runs = 0;
  /// HAL device and its thread count.
  std::string device = "local-sync";
  unsigned threads = 1;
};

/// What `kiln diff` and the workbench's Compare view put side by side.
struct BuildSummary {
  /// The file or build it describes ("a.kiln", "default").
  std::string name;
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
  /// Latency on this host (LatencyStats::medianMs < 0: not measured).
  LatencyStats latency;
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

/// One dispatch command as the artifact stores it (kept by every profile).
struct DispatchRecord {
  /// Index in the command list.
  int64_t command = 0;
  /// Entry point name in its executable ("main_dispatch_3"); deduplicated
  /// dispatches share one.
  std::string entryPoint;
  /// Workgroup grid (x, y, z).
  std::vector<uint32_t> workgroups;
  int64_t bindings = 0;
  /// Barrier-separated wave the command belongs to.
  int64_t wave = 0;
};

/// What a .kiln artifact is, read from the parts every profile keeps (as
/// iree-dump-module shows a .vmfb): versions, signature, target, sections,
/// plan counts and the dispatch commands. `kiln inspect ARTIFACT` prints it
/// before the plan (which needs the reflection section).
struct ArtifactDescription {
  uint32_t formatMajor = 0, formatMinor = 0;
  /// Kiln version that wrote it and the model it was compiled from; ""
  /// when the artifact does not record them.
  std::string producer, source;
  /// The I/O signature (the `io` section, kept by every profile). The
  /// runtime requires each buffer aligned to its element size.
  std::vector<IOInfo> inputs, outputs;
  /// The model inputs fixed to values (--fix-value), from the io section;
  /// not part of the signature.
  std::vector<FixedInput> fixedInputs;
  /// Target of the executables: triple, CPU and the CPU features their
  /// code requires (x86-64 records them; empty elsewhere).
  std::string triple, cpu;
  std::vector<std::string> requiredFeatures;
  /// HAL the plan was made for (the device section), e.g. "local".
  std::string hal;
  /// Whether the reflection section (the plan) and the kernels' symbol
  /// tables are present, and the build profile they imply: "default"
  /// (both), "stripped" (neither) or "custom".
  bool reflection = false;
  bool debugSymbols = false;
  /// Whether the kernels were built with --check-bounds (their code exports
  /// the bounds report record).
  bool boundsChecked = false;
  std::string profile;
  SectionSizes sizes;
  int64_t executables = 0, entryPoints = 0, constants = 0;
  /// Machine code and weights, bytes.
  uint64_t codeBytes = 0, constantBytes = 0;
  uint64_t arenaBytes = 0, lowerBoundBytes = 0;
  /// The state variables and their persistent region (format 1.3's
  /// MemoryPlan.state; StateVariable::buffer is -1 here); empty for a
  /// stateless artifact.
  std::vector<StateVariable> state;
  uint64_t persistentBytes = 0;
  int64_t commands = 0, waves = 0, largestWave = 0;
  std::vector<DispatchRecord> dispatches;
};

/// Rows "input N" and "output N": name, shape x type, bytes and the
/// alignment the runtime requires (the element size), as `kiln inspect`
/// prints a signature; then one "fixed" row per input fixed to a value
/// (kiln/ModelInputs.h formatFixedInputs).
std::string formatSignature(const std::vector<IOInfo> &inputs, const std::vector<IOInfo> &outputs,
                            const std::vector<FixedInput> &fixed = {});

/// The tensors as JSON: [{name, element_type, shape, bytes, alignment}],
/// a quantized one with "quantization": {"scales": [...], "zero_points":
/// [...], "quantized_dimension": -1 or the channel dimension}.
llvm::json::Array signatureToJson(const std::vector<IOInfo> &tensors);

/// Describes the artifact `bytes` the gate verified (`info` from
/// verifyArtifact on the same bytes). Never needs reflection. Errors: those
/// of sectionSizesOf, naming `what`.
llvm::Expected<ArtifactDescription> artifactDescriptionOf(const kiln_artifact_info_t &info,
                                                     llvm::ArrayRef<uint8_t> bytes,
                                                     const std::string &what);

/// The description as the head of `kiln inspect` (rows "format", "target",
/// "profile", "sections", "input N", "output N", "arena", "commands" and,
/// when `withDispatches`, one row per dispatch command with its entry point,
/// workgroup grid and wave: `kiln inspect` asks for them when the artifact
/// has no reflection; otherwise the plan's rows show the grids).
std::string formatArtifactDescription(const ArtifactDescription &d, bool withDispatches);

/// The description as one JSON object (`kiln inspect --json`'s "artifact"
/// member): keys as ArtifactDescription's fields in snake case.
llvm::json::Value artifactDescriptionToJson(const ArtifactDescription &d);

/// What `kiln inspect` of an artifact without the reflection section shows
/// in place of the plan: which rows need reflection and how to keep it (the
/// "plan_missing" member of inspectArtifactJson, the "plan" row of the
/// table).
llvm::StringRef planMissingReason();

/// The `kiln inspect ARTIFACT --json` document (also the Python package's
/// kiln.inspect(artifact) and Artifact.plan): the plan's keys (planToJson of
/// `plan`) plus "artifact" (artifactDescriptionToJson of `d`). Without a
/// plan (`plan` null: the artifact has no reflection section) it is
/// {"artifact": ..., "plan": null, "plan_missing": planMissingReason()}.
/// Errors: "<what>: the plan does not parse: ...".
llvm::Expected<llvm::json::Value> inspectArtifactJson(const ArtifactDescription &d,
                                                      const CompilationPlan *plan,
                                                      const std::string &what);

/// The `kiln inspect MODEL --json` document (also the Python package's
/// kiln.inspect(model) and a C module's Artifact.plan): the plan's keys
/// (planToJson) plus "signature": {"inputs": [...], "outputs": [...]}
/// (signatureToJson), with "fixed_values": [...] (kiln/ModelInputs.h
/// fixedInputsJson) when inputs are fixed to values, and "control_flow":
/// [...] (controlFlowJson) for an ONNX model with If, Loop or Scan. Errors
/// as inspectArtifactJson.
llvm::Expected<llvm::json::Value>
inspectModelJson(const CompilationPlan &plan, const std::vector<IOInfo> &inputs,
                 const std::vector<IOInfo> &outputs, const std::string &what,
                 const std::vector<FixedInput> &fixed = {},
                 const std::vector<ControlFlowDecision> &controlFlow = {});

} // namespace kiln

#endif
