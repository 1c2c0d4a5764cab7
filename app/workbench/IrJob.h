//===- IrJob.h - The inspector's IR, computed off the GUI thread -*- C++ -*-===//
//
// Answers InspectorView::irRequested: runs kiln::emitStage for the
// request's model, stage and options on a worker thread (QtConcurrent) and
// hands the text back (InspectorView::setIr). A request for a document the
// inspector no longer shows (InspectorView::irObsolete) stops at its next
// compile phase.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_WORKBENCH_IRJOB_H
#define KILN_WORKBENCH_IRJOB_H

#include "InspectorView.h"

#include <QFutureWatcher>
#include <QObject>

#include <atomic>
#include <memory>

namespace kiln::workbench {

/// The inspector's IR requests, one at a time (the inspector waits for each
/// answer before the next). Destroying it stops and waits for the worker.
class IrJob : public QObject {
  Q_OBJECT
public:
  explicit IrJob(QObject *parent = nullptr);
  ~IrJob() override;
  /// Connects `inspector`'s requests to this job and its answers back.
  void serve(kiln::views::InspectorView *inspector);
  /// Starts `request`: kiln::emitStage(request.doc->path, request.stage,
  /// request.doc->options) on a worker thread; finished() follows, with
  /// the module's text or "// error: MESSAGE".
  void start(const kiln::views::IrRequest &request);
  /// A running request of another generation than `generation` stops at
  /// its next compile phase (its answer, an error, is then not shown).
  void cancelOthers(unsigned generation);
  bool isRunning() const { return watcher_.isRunning(); }

signals:
  /// The IR of `request` (or "// error: MESSAGE").
  void finished(const kiln::views::IrRequest &request, const QString &text);

private:
  QFutureWatcher<QString> watcher_;
  kiln::views::IrRequest running_;
  /// The generation whose requests may go on, as the worker reads it.
  std::shared_ptr<std::atomic<unsigned>> live_ = std::make_shared<std::atomic<unsigned>>(0);
};

} // namespace kiln::workbench

#endif
