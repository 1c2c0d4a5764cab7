//===- HostRunJob.cpp - The Run dock's runs, off the GUI thread ----------===//
#include "HostRunJob.h"

#include <QThread>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>

namespace kiln::workbench {

using kiln::views::RunPanel;
using kiln::views::RunPanelResult;

static QString errorText(llvm::Error e) {
  return QString::fromStdString(llvm::toString(std::move(e)));
}

static std::vector<kiln::NpyArray> readInputs(const QStringList &files, QString &error) {
  std::vector<kiln::NpyArray> out;
  for (const QString &f : files) {
    auto a = kiln::readNpyFile(f.trimmed().toStdString());
    if (!a) {
      error = errorText(a.takeError());
      return {};
    }
    out.push_back(std::move(*a));
  }
  return out;
}

kiln::RunOptions hostRunOptions() {
  kiln::RunOptions options;
  options.device = "local-task";
  options.threads = unsigned(std::max(1, QThread::idealThreadCount()));
  options.benchmarkRuns = 20;
  return options;
}

/// RunPanelResult::cancelled when `cancelled` says the failure was asked
/// for; the error text otherwise.
static void takeFailure(RunPanelResult &r, llvm::Error e, const std::function<bool()> &cancelled) {
  r.cancelled = cancelled && cancelled();
  r.error = r.cancelled ? QObject::tr("run cancelled") : errorText(std::move(e));
  if (r.cancelled)
    llvm::consumeError(std::move(e));
}

RunPanelResult runOnHost(const std::vector<uint8_t> &artifact, const QStringList &inputFiles,
                         std::function<bool()> cancelled) {
  RunPanelResult r;
  kiln::RunOptions options = hostRunOptions();
  options.cancelled = cancelled;
  options.trace = true; // one more run after the timed ones
  std::vector<kiln::NpyArray> inputs;
  if (inputFiles.isEmpty()) {
    options.randomInputs = true; // one load: the artifact passes the gate once
  } else {
    inputs = readInputs(inputFiles, r.error);
    if (!r.error.isEmpty())
      return r;
  }
  auto run = kiln::runArtifact(artifact, inputs, options);
  if (!run) {
    takeFailure(r, run.takeError(), cancelled);
    return r;
  }
  r.ok = true;
  r.outputInfos = run->outputs;
  r.outputs = std::move(run->outputValues);
  r.latency = run->latency;
  r.measured.device = r.latency.device;
  r.measured.threads = r.latency.threads;
  r.measured.events = std::move(run->trace);
  r.measured.droppedEvents = run->traceDropped;
  r.measured.timesMs = std::move(run->timesMs);
  return r;
}

RunPanelResult validateOnHost(const std::vector<uint8_t> &artifact, const QString &folder,
                              std::function<bool()> cancelled) {
  RunPanelResult r;
  kiln::ValidationOptions options;
  options.run.cancelled = cancelled;
  auto report = kiln::validateArtifact(artifact, folder.toStdString(), options);
  if (!report) {
    takeFailure(r, report.takeError(), cancelled);
    return r;
  }
  r.ok = true;
  r.outputInfos = report->outputs;
  r.outputs = std::move(report->outputValues);
  r.metrics = std::move(report->overall);
  return r;
}

HostRunJob::HostRunJob(QObject *parent) : QObject(parent) {
  connect(&watcher_, &QFutureWatcher<RunPanelResult>::finished, this,
          [this] { emit finished(watcher_.result()); });
}

HostRunJob::~HostRunJob() {
  cancel();
  watcher_.waitForFinished();
}

void HostRunJob::cancel() {
  if (cancel_ && watcher_.isRunning())
    cancel_->store(true);
}

std::shared_ptr<std::atomic<bool>> HostRunJob::start() {
  cancel_ = std::make_shared<std::atomic<bool>>(false);
  return cancel_;
}

void HostRunJob::serve(RunPanel *panel) {
  connect(panel, &RunPanel::runRequested, this, &HostRunJob::run);
  connect(panel, &RunPanel::validateRequested, this, &HostRunJob::validate);
  connect(panel, &RunPanel::cancelRequested, this, &HostRunJob::cancel);
  connect(this, &HostRunJob::finished, panel, &RunPanel::showResult);
}

void HostRunJob::run(const std::vector<uint8_t> &artifact, const QStringList &inputFiles) {
  auto flag = start();
  watcher_.setFuture(QtConcurrent::run([artifact, inputFiles, flag] {
    return runOnHost(artifact, inputFiles, [flag] { return flag->load(); });
  }));
}

void HostRunJob::validate(const std::vector<uint8_t> &artifact, const QString &folder) {
  auto flag = start();
  watcher_.setFuture(QtConcurrent::run([artifact, folder, flag] {
    return validateOnHost(artifact, folder, [flag] { return flag->load(); });
  }));
}

} // namespace kiln::workbench
