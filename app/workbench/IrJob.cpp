//===- IrJob.cpp - The inspector's IR, computed off the GUI thread -------===//
#include "IrJob.h"

#include <QtConcurrent/QtConcurrentRun>

namespace kiln::workbench {

using kiln::views::InspectorView;
using kiln::views::IrRequest;

IrJob::IrJob(QObject *parent) : QObject(parent) {
  connect(&watcher_, &QFutureWatcher<QString>::finished, this,
          [this] { emit finished(running_, watcher_.result()); });
}

IrJob::~IrJob() {
  live_->store(~0u); // a running request stops at its next phase
  watcher_.waitForFinished();
}

void IrJob::serve(InspectorView *inspector) {
  connect(inspector, &InspectorView::irRequested, this, &IrJob::start);
  connect(inspector, &InspectorView::irObsolete, this, &IrJob::cancelOthers);
  connect(this, &IrJob::finished, inspector, &InspectorView::setIr);
}

void IrJob::start(const IrRequest &request) {
  running_ = request;
  live_->store(request.generation);
  const std::string path = request.doc->path.toStdString();
  kiln::CompileOptions options = request.doc->options;
  options.onPhase = [live = live_, mine = request.generation](kiln::CompilePhase) {
    return live->load() == mine;
  };
  watcher_.setFuture(QtConcurrent::run([path, stage = request.stage, options]() -> QString {
    auto text = kiln::emitStage(path, stage, options);
    if (!text)
      return QStringLiteral("// error: ") +
             QString::fromStdString(llvm::toString(text.takeError()));
    return QString::fromStdString(*text);
  }));
}

void IrJob::cancelOthers(unsigned generation) { live_->store(generation); }

} // namespace kiln::workbench
