//===- CompileJob.h - Compilations and host runs off the GUI thread -*- C++ -*-===//
//
// Runs kiln::compile (default and stripped builds) or reads a .kiln
// artifact on a worker thread (QtConcurrent), reporting each pipeline phase
// to the GUI thread through queued calls; cancel() sets an atomic flag that
// the next phase boundary honours. RunJob runs an artifact on the host
// (kiln::views::runOnHost: seeded random inputs, traced).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_WORKBENCH_COMPILEJOB_H
#define KILN_WORKBENCH_COMPILEJOB_H

#include "Document.h"
#include "RunPanel.h"

#include <QFutureWatcher>
#include <QObject>

#include <atomic>
#include <memory>

namespace kiln::workbench {

/// Outcome of a CompileJob.
struct JobResult {
  bool ok = false;
  /// Stopped by cancel() (ok is false, error says so).
  bool cancelled = false;
  QString error;
  std::shared_ptr<kiln::views::ModelDocument> doc;
};

/// One compilation of one file. Create one per request; destroying it
/// cancels and waits for the worker.
class CompileJob : public QObject {
  Q_OBJECT
public:
  explicit CompileJob(QObject *parent = nullptr);
  ~CompileJob() override;
  /// Starts: a .kiln file is read (plan from its reflection, section
  /// sizes); a model is compiled with `options`, then, if `stripped`, again
  /// with the "stripped" profile for the size comparison.
  void start(const QString &path, const kiln::CompileOptions &options, bool stripped = true);
  /// Asks the worker to stop at the next phase boundary.
  void cancel();
  bool isRunning() const;
  bool isCancelRequested() const { return cancel_->load(); }
  /// Blocks until the worker is done.
  void wait();
  const JobResult &result() const { return result_; }
  /// The default build's document, set when documentReady() is emitted
  /// (before the stripped build ends); null before.
  std::shared_ptr<const kiln::views::ModelDocument> defaultDocument() const { return partial_; }

signals:
  /// The default build is done (defaultDocument()); the stripped build
  /// goes on.
  void documentReady();
  /// Phase `phase` (a kiln::CompilePhase) of build `build` (0 default,
  /// 1 stripped) started.
  void phaseStarted(int build, int phase);
  /// The job is over; result() holds the outcome.
  void finished();

private:
  QFutureWatcher<JobResult> watcher_;
  std::shared_ptr<std::atomic<bool>> cancel_;
  JobResult result_;
  std::shared_ptr<const kiln::views::ModelDocument> partial_;
};

/// Outcome of a RunJob.
using RunJobResult = kiln::views::RunPanelResult;

/// Runs an artifact on the host with seeded random inputs on a worker
/// thread, as the Run panel does (kiln::views::runOnHost).
class RunJob : public QObject {
  Q_OBJECT
public:
  explicit RunJob(QObject *parent = nullptr);
  ~RunJob() override;
  void start(std::vector<uint8_t> artifact);
  bool isRunning() const;
  void wait();
  const RunJobResult &result() const { return result_; }

signals:
  void finished();

private:
  QFutureWatcher<RunJobResult> watcher_;
  RunJobResult result_;
};

} // namespace kiln::workbench

#endif
