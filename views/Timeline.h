//===- Timeline.h - Commands on a time axis ---------------------*- C++ -*-===//
//
// The data the stream timeline draws: one bar per non-barrier command and
// one marker per barrier, with start/end times either estimated from a
// simple cost model (before running) or taken from a host run's trace.
// Plain data, no widgets, so it is tested headless.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_VIEWS_TIMELINE_H
#define KILN_VIEWS_TIMELINE_H

#include "kiln/Plan.h"
#include "kiln/Profile.h"
#include "kiln/Run.h"

#include <QStringList>

#include <cstdint>
#include <vector>

namespace kiln::views {

/// The estimate's roofline cost model: the one kiln::CostModel the
/// Profile dock's estimated times come from too (kiln/Profile.h).
using CostModel = kiln::CostModel;

/// One non-barrier command (or, measured, one workgroup) on a lane.
struct TimelineBar {
  int64_t command = 0;
  kiln::CommandKind kind = kiln::CommandKind::Dispatch;
  int64_t dispatch = -1;
  int64_t wave = 0;
  /// -1 for a whole command; else the workgroup (measured only).
  int64_t workgroup = -1;
  int lane = 0;
  double startUs = 0, endUs = 0;
  /// Drawn from the cost model: every bar of an estimated timeline, and in
  /// a measured one a command the trace holds no event of (tooltips say
  /// "estimated", never "measured").
  bool estimated = false;
};

/// A barrier command: where the next wave may start.
struct TimelineBarrier {
  int64_t command = 0;
  int64_t wave = 0;
  double atUs = 0;
};

/// Everything the timeline draws.
struct TimelineData {
  /// True when taken from a trace.
  bool measured = false;
  /// Lane names, top to bottom: "wave N" (estimated) or "thread N"
  /// (measured).
  QStringList lanes;
  /// One per non-barrier command (workgroup == -1), in command order.
  std::vector<TimelineBar> commands;
  /// Measured workgroups (empty when estimated).
  std::vector<TimelineBar> workgroups;
  /// One per barrier command.
  std::vector<TimelineBarrier> barriers;
  /// End of the last command, microseconds.
  double totalUs = 0;
};

/// Estimated timeline: one lane per wave; a wave's commands start together
/// when the previous wave's barrier is passed and run for
/// CostModel::durationUs.
TimelineData estimateTimeline(const kiln::CompilationPlan &plan, const CostModel &model = {});

/// Measured timeline from a host run's trace: one lane per thread; each
/// dispatch command spans its traced interval on the thread that recorded
/// it, workgroups on the threads that ran them; commands the runtime does
/// not trace (copies, fills) sit at the end of the command before them
/// with their estimated duration. Times are relative to the first event.
TimelineData measuredTimeline(const kiln::CompilationPlan &plan,
                              const std::vector<kiln::TraceEvent> &events,
                              const CostModel &model = {});

} // namespace kiln::views

#endif
