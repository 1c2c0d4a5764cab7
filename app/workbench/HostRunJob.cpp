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

RunPanelResult runOnHost(const std::vector<uint8_t> &artifact, const QStringList &inputFiles) {
  RunPanelResult r;
  kiln::RunOptions options = hostRunOptions();
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
    r.error = errorText(run.takeError());
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

RunPanelResult validateOnHost(const std::vector<uint8_t> &artifact, const QString &folder) {
  RunPanelResult r;
  auto report = kiln::validateArtifact(artifact, folder.toStdString());
  if (!report) {
    r.error = errorText(report.takeError());
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

HostRunJob::~HostRunJob() { watcher_.waitForFinished(); }

void HostRunJob::serve(RunPanel *panel) {
  connect(panel, &RunPanel::runRequested, this, &HostRunJob::run);
  connect(panel, &RunPanel::validateRequested, this, &HostRunJob::validate);
  connect(this, &HostRunJob::finished, panel, &RunPanel::showResult);
}

void HostRunJob::run(const std::vector<uint8_t> &artifact, const QStringList &inputFiles) {
  watcher_.setFuture(
      QtConcurrent::run([artifact, inputFiles] { return runOnHost(artifact, inputFiles); }));
}

void HostRunJob::validate(const std::vector<uint8_t> &artifact, const QString &folder) {
  watcher_.setFuture(
      QtConcurrent::run([artifact, folder] { return validateOnHost(artifact, folder); }));
}

} // namespace kiln::workbench
