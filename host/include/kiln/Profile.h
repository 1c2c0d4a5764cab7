//===- kiln/Profile.h - Per-dispatch profile of a plan and a run -*- C++ -*-===//
//
// What each dispatch costs: its time (measured in a host run's trace, or
// estimated by a roofline cost model before any run), its share of the
// total, its work (FLOP for floating-point dispatches, OP for integer
// ones), bytes moved, achieved rate, arena share, stack frame and kernel
// strategy. One row per dispatch, computed here once; the workbench's
// Profile dock shows the rows, its timeline draws the cost model's times,
// and the trace export names commands with traceCommandNames (as `kiln run
// --trace=` does). Part of kiln_host: it reads the runtime's trace events
// (kiln/Run.h). No Qt types.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PROFILE_H
#define KILN_PROFILE_H

#include "kiln/Plan.h"
#include "kiln/Run.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kiln {

/// Throughput the estimate assumes: time of a command = launch overhead +
/// max(work / flopsPerUs, bytes moved / bytesPerUs), a roofline (Williams,
/// Waterman and Patterson, "Roofline: An Insightful Visual Performance
/// Model for Multicore Architectures", CACM 52(4), 2009) with one compute
/// and one bandwidth ceiling. A guess for one scalar-ish core, not a
/// figure of the target: Kiln records no peak rate of any target.
struct CostModel {
  double flopsPerUs = 8000;  ///< 8 GFLOP/s (or GOP/s), one scalar-ish core.
  double bytesPerUs = 10000; ///< 10 GB/s.
  double launchUs = 0.5;     ///< Per command.
  double barrierUs = 0.2;    ///< Per barrier.
  /// Estimated duration of command `c` of `plan`, microseconds: barrierUs
  /// for a barrier; for a dispatch its Dispatch::flops and bytesRead +
  /// bytesWritten; for a copy or fill the bytes of its bindings.
  double durationUs(const CompilationPlan &plan, const Command &c) const;
};

/// The element type of a plan buffer's display type: "f32" of
/// "1x64x64x24xf32", "i8" of "1x2xi8", the whole text when it has no
/// dimensions ("f32"); empty for an empty type.
std::string elementTypeOf(const Buffer &buffer);

/// True when `d` computes on integers: every buffer its dispatch commands
/// bind (inputs, weights, biases, outputs) has an integer element type (i1,
/// i8, u8, i16, i32, i64), as an int8 CONV_2D with its int32 bias does.
/// Its Dispatch::flops then counts integer operations (2 per multiply-
/// accumulate), shown as "OP" and "OP/s", never "FLOP". False for a
/// dispatch that binds a floating-point buffer (a dequantize) or that no
/// command binds (plans built by hand).
bool isIntegerDispatch(const CompilationPlan &plan, const Dispatch &d);

/// The unit of a dispatch's work: "OP" when `integer`, else "FLOP".
const char *workUnit(bool integer);

/// describeKernel(d.kernel) in the dispatch's unit: "gemm 4x3x8, 24x24 KxN
/// (N contiguous), 32 FLOP/cycle", or "... 32 OP/cycle" for an integer
/// dispatch (isIntegerDispatch).
std::string describeDispatchKernel(const CompilationPlan &plan, const Dispatch &d);

/// One row of the profile: one dispatch of the plan.
struct DispatchProfile {
  int64_t id = 0;
  std::string name;
  /// Its source operators, sourceOpText joined by " + " ("CONV_2D #9 + ADD
  /// #10").
  std::string operators;
  /// Measured time, ns: for each command that runs the dispatch, the
  /// median (medianOf) of its traced intervals (one per traced run), summed
  /// over those commands; -1 when not measured (no trace given, or the
  /// trace holds no event of it).
  double measuredNs = -1;
  /// The cost model's time, ns (summed over its commands).
  double estimatedNs = 0;
  /// The time the share and rate are of: measuredNs when a trace was
  /// given, else estimatedNs; -1 when a trace was given and holds no event
  /// of the dispatch.
  double timeNs = -1;
  /// timeNs / the sum of every row's timeNs (rows with timeNs -1 count 0),
  /// in [0, 1]; 0 when that sum is 0.
  double share = 0;
  /// Dispatch::flops: 2 per multiply-accumulate plus one per other
  /// arithmetic op (docs/design.md, "Operation counts"); FLOP, or OP when
  /// `integer`.
  int64_t work = 0;
  bool integer = false;
  /// Dispatch::bytesRead and bytesWritten (every binding once).
  int64_t bytesRead = 0;
  int64_t bytesWritten = 0;
  /// Achieved rate, FLOP/s or OP/s: work / measuredNs x 1e9; -1 when not
  /// measured. (No share of peak: Kiln records no peak rate of a target;
  /// KernelStrategy::flopsPerCycle is per cycle and no clock is known.)
  double workPerSecond = -1;
  /// DispatchMemory::arenaBytes: bytes of the arena its bindings occupy.
  int64_t arenaBytes = 0;
  /// DispatchMemory::stackBytes: its kernel's stack frame (C module
  /// builds, from LLVM's .stack_sizes); -1 when unknown (no frames given,
  /// or dynamicStack).
  int64_t stackBytes = -1;
  bool dynamicStack = false;
  /// kernelTileText ("gemm 4x3x8", "loops") and describeDispatchKernel
  /// (the whole strategy: register tile, weight layout, expected FLOP or
  /// OP per cycle).
  std::string kernel;
  std::string kernelDetail;
};

/// The profile of `plan`, one row per dispatch in plan order. `trace`: the
/// events of a host run of the plan's artifact (RunResult::trace; null:
/// not run, times estimated by `model`); the dispatch intervals (workgroup
/// -1) are used, workgroup events ignored. `stackFrameBytes`:
/// CompileResult::stackFrameBytes (empty: stack unknown).
std::vector<DispatchProfile>
profileDispatches(const CompilationPlan &plan, const std::vector<TraceEvent> *trace,
                  const std::map<std::string, int64_t> &stackFrameBytes = {},
                  const CostModel &model = {});

/// The name of each command of `plan` in a trace, indexed by command
/// index: dispatchLabel of a dispatch command ("main_dispatch_2 CONV_2D #9
/// [gemm 4x3x8]"), toString of the kind for the others ("Copy"). Both
/// `kiln run --trace=` and the workbench's Save Trace pass it to
/// traceToChromeJson.
std::vector<std::string> traceCommandNames(const CompilationPlan &plan);

} // namespace kiln

#endif
