//===- kiln/Run.h - Run artifacts on the host ------------------*- C++ -*-===//
//
// Host-side driver over the runtime's C API (runtime/include/kiln/runtime.h)
// shared by `kiln run`, the workbench and the Python package: load an
// artifact, check and bind inputs, invoke, time warm runs, validate against
// reference outputs, compare two builds' latency. Part of kiln_host (host/),
// the library above the compiler and the runtime.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUN_H
#define KILN_RUN_H

#include "kiln/Artifact.h"
#include "kiln/Npy.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

namespace kiln {

struct CompilationPlan;

/// How to run: HAL device ("local-sync" or "local-task"), its thread
/// count, warm timed runs after the first, and whether to trace.
struct RunOptions {
  std::string device = "local-sync";
  unsigned threads = 1;
  unsigned benchmarkRuns = 0;
  /// Record every dispatch's and workgroup's start and end: of the first
  /// run, or with benchmarkRuns > 0 of one more warm run after the timed
  /// ones (the timed runs are never traced: tracing adds two clock reads
  /// per workgroup, which would count in the latency).
  bool trace = false;
  /// Run on randomInputs() of the artifact's own signature (the `inputs`
  /// given are ignored): one load instead of describeArtifact, then run.
  bool randomInputs = false;
  /// Asked from the running thread before each invocation and before each
  /// of its waves (kiln_invocation_t::cancelled): true stops the run with
  /// the error "run cancelled after N of M dispatches" (the caller that
  /// set it knows it cancelled). Empty: runs to the end.
  std::function<bool()> cancelled;
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

/// The median of `values`: the middle value, or the mean of the middle two
/// for an even count; 0 for none. The one median every tool reports
/// (latencyOf, the workbench's run note and timeline, benchmarks).
double medianOf(std::vector<double> values);

/// Summarizes the wall times `timesMs` measured with `options`
/// (LatencyStats::medianMs is medianOf(timesMs)).
LatencyStats latencyOf(std::vector<double> timesMs, const RunOptions &options);

/// How every latency is written on screen: "median 6.61 ms, local-task 2
/// threads, 20 runs" (three significant digits; "1 thread", "1 run"), or
/// "not measured" when `stats.medianMs` < 0.
std::string latencyText(const LatencyStats &stats);

/// Whether the difference between `a` and `b` lies within the measured
/// spread: both measured and their [minMs, maxMs] ranges overlap (timing
/// noise, neither a gain nor a loss). False when either is unmeasured.
bool withinSpread(const LatencyStats &a, const LatencyStats &b);

/// Outcome of runArtifact.
struct RunResult {
  std::vector<IOInfo> inputs;
  std::vector<IOInfo> outputs;
  /// Output arrays of the last invocation (of the first, for a model with
  /// state: see runArtifact), in signature order.
  std::vector<NpyArray> outputValues;
  /// Wall time of each timed invocation, milliseconds (empty without
  /// benchmarking).
  std::vector<double> timesMs;
  /// latencyOf(timesMs, options): the one measurement every tool shows
  /// (`kiln run --benchmark`, benchmarkArtifact, benchmarkPair and so
  /// `kiln diff --benchmark`, the workbench's Run dock, Run on Host and
  /// Compare); medianMs < 0 without benchmarking.
  LatencyStats latency;
  /// Arena the artifact asked for, bytes.
  uint64_t arenaBytes = 0;
  /// Events of the traced invocation (RunOptions::trace) when tracing:
  /// every dispatch and workgroup (a run with more than the first buffer's
  /// 65536 events is traced again into a buffer that fits).
  std::vector<TraceEvent> trace;
  /// Events the trace could not hold (0 unless even the grown buffer was
  /// too small); the workbench says the trace was cut when it is not 0.
  uint64_t traceDropped = 0;
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

/// Parses one `--input=` value: "@file.npy" (any dtype parseNpy reads), or
/// "DIMSxTYPE=VALUES" with TYPE f32, i32, i64, i8, u8 or i1 and VALUES one
/// number (broadcast) or a comma-separated list of all elements, e.g.
/// "1x16x96xf32=0.5", "1x96x96x1xi8=3", "2x3xu8=200"; integers must lie in
/// their type's range (i8 -128..127, u8 0..255, i1 0..1). Or
/// "DIMSxTYPE=@file.bin": raw little-endian bytes (f16 too). Errors explain
/// the syntax and name the type and range.
llvm::Expected<NpyArray> parseInputSpec(const std::string &spec);

/// Loads `artifact` (bytes of a .kiln file), checks `inputs` against its
/// signature (count, dtype, shape: errors name the input and what was
/// expected), runs it once on the chosen device (traced if asked and not
/// benchmarking), then `options.benchmarkRuns` more timed runs, untraced,
/// summarized in RunResult::latency, then, when tracing a benchmark, one
/// more traced run. RunResult::outputValues are the last run's, except for
/// a model with state (CompilationPlan::state), whose later runs start from
/// the state the first left: its outputs are the first run's.
llvm::Expected<RunResult> runArtifact(llvm::ArrayRef<uint8_t> artifact,
                                      const std::vector<NpyArray> &inputs,
                                      const RunOptions &options = {});

/// Runs `artifact` once per entry of `steps` (each the inputs of one
/// invocation, checked as runArtifact checks them), in order, on one
/// loaded module and one arena, so a model with state (TFLite resource
/// variables, LSTM and SVDF state; CompilationPlan::state) carries it from
/// each invocation to the next, starting from the initial values. With
/// `resetBefore` holding step k, kiln_module_reset_state runs before step k.
/// Returns the outputs of every step (RunResult::outputValues holds the
/// last step's). Only options.device and options.threads apply.
llvm::Expected<std::vector<std::vector<NpyArray>>>
runArtifactSteps(llvm::ArrayRef<uint8_t> artifact, const std::vector<std::vector<NpyArray>> &steps,
                 const RunOptions &options = {}, const std::vector<size_t> &resetBefore = {});

/// Reads the I/O signature of an artifact without running it.
llvm::Expected<RunResult> describeArtifact(llvm::ArrayRef<uint8_t> artifact);

/// Deterministic inputs for `infos`: float32 uniform in [-1, 1) and int8 /
/// uint8 bytes uniform over their whole range (the top 24 / 8 bits of each
/// step) from one 64-bit LCG seeded with `seed` (Knuth's MMIX constants),
/// other integers 0, bools false. The same seed gives the same bytes on every host. Empty when an
/// input cannot be allocated (RunOptions::randomInputs reports the bytes).
std::vector<NpyArray> randomInputs(const std::vector<IOInfo> &infos, uint64_t seed = 1);

/// Latency of `runs` invocations of `artifact` on this host with
/// randomInputs() (after one warm-up run): runArtifact's RunResult::latency
/// with `options`' device and threads, never traced. Errors are the
/// runtime's (wrong host architecture, ...).
llvm::Expected<LatencyStats> benchmarkArtifact(llvm::ArrayRef<uint8_t> artifact, unsigned runs,
                                               const RunOptions &options = {});

/// Latency of two artifacts measured in alternation, so that other load on
/// a shared machine falls on both alike: 5 rounds, each running A then B
/// ceil(runs / 5) times after a warm-up run; every timed run of a build is
/// summarized together. Errors start with `nameA` or `nameB`.
llvm::Expected<std::pair<LatencyStats, LatencyStats>>
benchmarkPair(llvm::ArrayRef<uint8_t> a, llvm::ArrayRef<uint8_t> b, unsigned runs,
              const std::string &nameA, const std::string &nameB,
              const RunOptions &options = {});

/// The two summaries `kiln diff` compares (summarizeArtifact), with their
/// latencies measured in alternation (benchmarkPair, `runs` runs each, on
/// `options`' device and threads) when `runs` > 0. A build this host
/// cannot run keeps its latency unmeasured and adds "latency not measured:
/// REASON" to `warnings` (the sizes still compare). Errors:
/// summarizeArtifact's, naming `nameA` or `nameB`.
llvm::Expected<std::pair<BuildSummary, BuildSummary>>
compareBuilds(const std::vector<uint8_t> &a, const std::vector<uint8_t> &b,
              const std::string &nameA, const std::string &nameB, unsigned runs,
              std::vector<std::string> &warnings, const RunOptions &options = {});

/// How close outputs are to reference outputs, as STM32Cube.AI's validate
/// reports them, per output: f32 outputs in their values, integer outputs
/// (i8, u8, i32, i64, i1) in LSB, i.e. integer units of the stored type.
struct ValidationMetrics {
  std::string name;
  int64_t elements = 0;
  /// The output has an integer type: maxAbsError and rmse are in LSB, and
  /// Tolerance::lsb decides which elements pass.
  bool integer = false;
  /// max |got - ref| (for integer outputs a whole number of LSB).
  double maxAbsError = 0;
  /// sqrt(mean((got - ref)^2)).
  double rmse = 0;
  /// <got, ref> / (|got| |ref|); 1 when both are all zero.
  double cosine = 1;
  /// Elements outside the tolerance.
  int64_t outsideTolerance = 0;
  /// Elements not exactly equal to the reference (a NaN always differs).
  int64_t differing = 0;
};

/// When an output element passes validation. f32: |got - ref| <= atol +
/// rtol x |ref|, as numpy.isclose; the defaults are Kiln's test tolerance.
/// Integer outputs: |got - ref| <= lsb integer units; the default 0 asks
/// for exact equality (bit-exact with the reference, e.g. TFLite's integer
/// kernels).
struct Tolerance {
  double atol = 1e-4;
  double rtol = 1e-4;
  int64_t lsb = 0;
};

/// Compares `outputs` with `reference` (same count, dtype and shape, in
/// signature order; `names` labels them): f32 outputs with atol/rtol,
/// integer outputs (isIntegerDtype) in LSB. Errors name the output whose
/// count, dtype ("y: the output is i8, the reference is f32") or shape
/// differ, or whose type is neither (f16, f64).
llvm::Expected<std::vector<ValidationMetrics>>
validateOutputs(const std::vector<NpyArray> &outputs, const std::vector<NpyArray> &reference,
                const std::vector<std::string> &names = {}, const Tolerance &tolerance = {});

/// Where `kiln validate` and the workbench's Validate read samples, and how
/// close outputs must be.
struct ValidationOptions {
  /// 0: DIR/sample_S/{input,output}_K.npy for S = 0, 1, ... when
  /// DIR/sample_0 exists, else one sample DIR/{input,output}_K.npy.
  /// N > 0: DIR/{input,output}_K.npy each hold N samples stacked on a new
  /// leading axis (shape N x the signature's shape).
  int64_t stackedSamples = 0;
  Tolerance tolerance;
  RunOptions run;
};

/// Per-sample and overall metrics of one validation (STM32Cube.AI's
/// validate reports both).
struct ValidationReport {
  /// The model's outputs, in signature order.
  std::vector<IOInfo> outputs;
  /// Sample names ("sample_0" or "sample 0 of input_0.npy") and, per
  /// sample, one ValidationMetrics per output.
  std::vector<std::string> sampleNames;
  std::vector<std::vector<ValidationMetrics>> samples;
  /// Every sample's elements together, per output.
  std::vector<ValidationMetrics> overall;
  /// The outputs the last sample computed (what the workbench shows).
  std::vector<NpyArray> outputValues;
  Tolerance tolerance;
  /// No element of any sample outside the tolerance.
  bool pass = true;
};

/// Runs `artifact` on every sample in the folder `dir` (as
/// ValidationOptions says) and compares with the references. Every input
/// and output of the signature needs its file: errors name the missing
/// path exactly ("DIR/sample_1/output_1.npy does not exist; the model has
/// 2 outputs"), a file whose shape or type differs, or the runtime's error.
llvm::Expected<ValidationReport> validateArtifact(llvm::ArrayRef<uint8_t> artifact,
                                                  const std::string &dir,
                                                  const ValidationOptions &options = {});

/// The `kiln validate --json` document (also the Python package's
/// kiln.validate): {"outputs": [...] (report.overall), "samples":
/// [{"sample": name, "outputs": [...]}], "tolerance": {"atol", "rtol",
/// "lsb"}, "pass": bool}, each output {"name", "elements", "integer",
/// "max_abs_error" (LSB when "integer"), "rmse", "cosine",
/// "outside_tolerance", "differing"}.
llvm::json::Value validationReportToJson(const ValidationReport &report);

/// What `report` checked, as `kiln validate` prints it after "every element
/// of N sample(s) ": "within |error| <= 0.0001 + 0.0001 x |reference|" for
/// f32 outputs, "equal to the reference" (Tolerance::lsb 0) or "within 2
/// LSB of the reference" for integer outputs, both joined with "; integer
/// outputs " when the model has both kinds.
std::string passCriterionText(const ValidationReport &report);

} // namespace kiln

#endif
