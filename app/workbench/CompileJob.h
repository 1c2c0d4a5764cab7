//===- CompileJob.h - Compilations off the GUI thread ----------*- C++ -*-===//
//
// Plans a model (kiln::planModel, about 200 ms), then runs kiln::compile
// (default and stripped builds), or reads a .kiln artifact, on a worker
// thread (QtConcurrent), reporting the plan, each build and each pipeline
// phase to the GUI thread through queued calls; cancel() sets an atomic
// flag that the next phase boundary honours. (Host runs are HostRunJob's,
// the inspector's IR is IrJob's.)
//
//===----------------------------------------------------------------------===//
#ifndef KILN_WORKBENCH_COMPILEJOB_H
#define KILN_WORKBENCH_COMPILEJOB_H

#include "Document.h"

#include "kiln/ModelInputs.h"

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
  /// The inputs whose dynamic dimensions stopped the import, with the
  /// shapes Kiln suggests (kiln::UnfixedInputError); empty otherwise.
  std::vector<kiln::UnfixedInput> unfixed;
  std::shared_ptr<kiln::views::ModelDocument> doc;
};

/// The document of a plan without code (artifact and sizes empty): what
/// the views show while code generation runs. `planMs` (ms) becomes its
/// compileMs. Used by CompileJob's plan stage and ProjectController's
/// re-plan alike.
std::shared_ptr<kiln::views::ModelDocument> makePlannedDocument(const QString &path,
                                                                std::shared_ptr<const kiln::CompilationPlan> plan,
                                                                const kiln::CompileOptions &options, double planMs);

/// One compilation of one file. Create one per request; destroying it
/// cancels and waits for the worker.
class CompileJob : public QObject {
  Q_OBJECT
public:
  explicit CompileJob(QObject *parent = nullptr);
  ~CompileJob() override;
  /// Starts: a .kiln file is read (plan from its reflection, section
  /// sizes); a model is first planned (planReady(), if `planFirst`), then
  /// compiled with `options` (documentReady()), then, if `stripped`, again
  /// with the "stripped" profile for the size comparison (finished()).
  void start(const QString &path, const kiln::CompileOptions &options, bool stripped = true,
             bool planFirst = true);
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
  /// The plan's document (makePlannedDocument(): no artifact yet), set when
  /// planReady() is emitted; null before and for a .kiln file.
  std::shared_ptr<const kiln::views::ModelDocument> plannedDocument() const { return planned_; }

signals:
  /// The model is planned (plannedDocument()); code generation goes on.
  void planReady();
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
  std::shared_ptr<const kiln::views::ModelDocument> planned_;
};

} // namespace kiln::workbench

#endif
