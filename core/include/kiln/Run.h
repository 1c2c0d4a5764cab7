//===- kiln/Run.h - Run artifacts on the host ------------------*- C++ -*-===//
//
// Host-side driver over the runtime's C API (runtime/include/kiln/runtime.h)
// shared by `kiln run` and the workbench: load an artifact, check and bind
// inputs, invoke, time warm runs.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUN_H
#define KILN_RUN_H

#include "kiln/Npy.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

namespace kiln {

struct CompilationPlan;

/// Description of one model input or output, from the artifact.
struct IOInfo {
  std::string name;
  std::string dtype; ///< NumPy descriptor, e.g. "<f4"
  std::vector<int64_t> shape;
  /// Bytes (the runtime's byte_size: elements x element size).
  uint64_t byteSize = 0;
};

/// How to run: HAL device ("local-sync" or "local-task"), its thread
/// count, warm timed runs after the first, and whether to trace.
struct RunOptions {
  std::string device = "local-sync";
  unsigned threads = 1;
  unsigned benchmarkRuns = 0;
  /// Record every dispatch's and workgroup's start and end: of the first
  /// run, or with benchmarkRuns > 0 of the last benchmark run (warm; the
  /// benchmark runs are then traced too, which adds two clock reads per
  /// workgroup to their times).
  bool trace = false;
  /// Run on randomInputs() of the artifact's own signature (the `inputs`
  /// given are ignored): one load instead of describeArtifact, then run.
  bool randomInputs = false;
};

/// One traced interval (runtime's kiln_trace_event_t): a dispatch command
/// (workgroup -1) or one of its workgroups, on a thread, in ns.
struct TraceEvent {
  int64_t command = 0;
  int64_t workgroup = -1;
  int64_t thread = 0;
  uint64_t startNs = 0;
  uint64_t endNs = 0;
};

/// Outcome of runArtifact.
struct RunResult {
  std::vector<IOInfo> inputs;
  std::vector<IOInfo> outputs;
  /// Output arrays of the last invocation, in signature order.
  std::vector<NpyArray> outputValues;
  /// Wall time of each timed invocation, milliseconds (empty without
  /// benchmarking).
  std::vector<double> timesMs;
  /// Arena the artifact asked for, bytes.
  uint64_t arenaBytes = 0;
  /// Events of the first invocation when tracing.
  std::vector<TraceEvent> trace;
  /// When tracing, the plan the artifact carries as reflection data (it
  /// names the traced commands); null without reflection or tracing.
  std::shared_ptr<const CompilationPlan> plan;
};

/// Writes `events` as a Chrome trace-event JSON document (the format
/// chrome://tracing and Perfetto open): one complete ("X") event per
/// dispatch and workgroup, pid 1, tid = worker thread, microseconds from
/// the first event; `names[command]` labels each command.
std::string traceToChromeJson(const std::vector<TraceEvent> &events,
                              const std::vector<std::string> &names);

/// Parses one `--input=` value: "@file.npy", or "DIMSxTYPE=VALUES" with
/// TYPE f32 or i32 and VALUES one number (broadcast) or a comma-separated
/// list of all elements, e.g. "1x16x96xf32=0.5". Errors explain the syntax.
llvm::Expected<NpyArray> parseInputSpec(const std::string &spec);

/// Loads `artifact` (bytes of a .kiln file), checks `inputs` against its
/// signature (count, dtype, shape: errors name the input and what was
/// expected), runs it once on the chosen device (traced if asked), then
/// `options.benchmarkRuns` more timed runs.
llvm::Expected<RunResult> runArtifact(llvm::ArrayRef<uint8_t> artifact,
                                      const std::vector<NpyArray> &inputs,
                                      const RunOptions &options = {});

/// Reads the I/O signature of an artifact without running it.
llvm::Expected<RunResult> describeArtifact(llvm::ArrayRef<uint8_t> artifact);

/// Deterministic inputs for `infos`: float32 uniform in [-1, 1) from a
/// 64-bit LCG seeded with `seed` (Knuth's MMIX constants), integers 0, bools
/// false. The same seed gives the same bytes on every host. Empty when an
/// input cannot be allocated (RunOptions::randomInputs reports the bytes).
std::vector<NpyArray> randomInputs(const std::vector<IOInfo> &infos, uint64_t seed = 1);

/// Median wall time of `runs` invocations of `artifact` on this host with
/// randomInputs(), milliseconds (after one warm-up run). Errors are the
/// runtime's (wrong host architecture, ...).
llvm::Expected<double> benchmarkArtifact(llvm::ArrayRef<uint8_t> artifact, unsigned runs,
                                         const RunOptions &options = {});

/// How close outputs are to reference outputs, as STM32Cube.AI's validate
/// reports them, per output (float32 only).
struct ValidationMetrics {
  std::string name;
  int64_t elements = 0;
  /// max |got - ref|.
  double maxAbsError = 0;
  /// sqrt(mean((got - ref)^2)).
  double rmse = 0;
  /// <got, ref> / (|got| |ref|); 1 when both are all zero.
  double cosine = 1;
  /// Elements outside 1e-4 x (1 + |ref|), Kiln's test tolerance.
  int64_t outsideTolerance = 0;
};

/// Compares `outputs` with `reference` (same count, dtype "<f4" and shape,
/// in signature order; `names` labels them). Errors name the output whose
/// count, dtype or shape differ.
llvm::Expected<std::vector<ValidationMetrics>>
validateOutputs(const std::vector<NpyArray> &outputs, const std::vector<NpyArray> &reference,
                const std::vector<std::string> &names = {});

} // namespace kiln

#endif
