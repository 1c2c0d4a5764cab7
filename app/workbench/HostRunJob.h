//===- HostRunJob.h - The Run dock's runs, off the GUI thread --*- C++ -*-===//
//
// Answers RunPanel::runRequested and validateRequested: runs the artifact on
// this host (kiln::runArtifact with hostRunOptions(): local-task on every
// core, 20 timed runs, then one traced run for the timeline) with seeded
// random inputs (kiln::randomInputs) or .npy files, or validates it against
// a folder's input_K.npy / output_K.npy (kiln::validateArtifact, as `kiln
// validate DIR`), on a worker thread (QtConcurrent), and hands the result
// back (RunPanel::showResult).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_WORKBENCH_HOSTRUNJOB_H
#define KILN_WORKBENCH_HOSTRUNJOB_H

#include "RunPanel.h"

#include <QFutureWatcher>
#include <QObject>
#include <QStringList>

#include <atomic>
#include <functional>
#include <memory>
#include <vector>

namespace kiln::workbench {

/// How the workbench measures on this host, the one setting the Run dock,
/// Build > Run on Host (Ctrl+R) and Compare share: device local-task with
/// QThread::idealThreadCount() threads, 20 timed runs, untraced.
kiln::RunOptions hostRunOptions();

/// Runs `artifact` on this host the one way the workbench does (Build >
/// Run on Host and the Run panel): kiln::runArtifact with hostRunOptions()
/// and a trace (taken in one more run after the timed ones, so it costs
/// the latency nothing), with `inputFiles` (.npy, in signature order) or,
/// when empty, seeded random inputs (kiln::randomInputs, seed 1). Blocks:
/// call it on a worker thread. Errors (a file that cannot be read, the
/// runtime's) go to RunPanelResult::error. `cancelled` (RunOptions::
/// cancelled) stops the run before its next wave once it answers true:
/// RunPanelResult::cancelled, no outputs.
kiln::views::RunPanelResult runOnHost(const std::vector<uint8_t> &artifact,
                                      const QStringList &inputFiles = {},
                                      std::function<bool()> cancelled = {});

/// Validates `artifact` against `folder`'s input_K.npy and output_K.npy
/// with kiln::validateArtifact (the folder checks, samples, tolerance and
/// metrics of `kiln validate DIR`): outputs and metrics, latency unset.
/// Blocks: call it on a worker thread. Errors go to RunPanelResult::error;
/// `cancelled` as for runOnHost.
kiln::views::RunPanelResult validateOnHost(const std::vector<uint8_t> &artifact,
                                           const QString &folder,
                                           std::function<bool()> cancelled = {});

/// The Run dock's runs and validations, one at a time (the panel is busy
/// until it has the answer). cancel() (the panel's Cancel, Esc) stops the
/// one under way before its next wave; destroying the job cancels it and
/// waits for the worker, so quitting never waits out a long run.
class HostRunJob : public QObject {
  Q_OBJECT
public:
  explicit HostRunJob(QObject *parent = nullptr);
  ~HostRunJob() override;
  /// Connects `panel`'s requests to this job and its answers back.
  void serve(kiln::views::RunPanel *panel);
  /// runOnHost(artifact, inputFiles) on a worker thread; finished() follows.
  void run(const std::vector<uint8_t> &artifact, const QStringList &inputFiles);
  /// validateOnHost(artifact, folder) on a worker thread; finished()
  /// follows.
  void validate(const std::vector<uint8_t> &artifact, const QString &folder);
  bool isRunning() const { return watcher_.isRunning(); }
  /// Asks the run or validation under way to stop (finished() follows with
  /// RunPanelResult::cancelled); nothing when none is.
  void cancel();

signals:
  /// The run or validation is over.
  void finished(const kiln::views::RunPanelResult &result);

private:
  /// The flag of the run under way (a new one per run, so a late cancel
  /// never stops the next run).
  std::shared_ptr<std::atomic<bool>> start();
  QFutureWatcher<kiln::views::RunPanelResult> watcher_;
  std::shared_ptr<std::atomic<bool>> cancel_;
};

} // namespace kiln::workbench

#endif
