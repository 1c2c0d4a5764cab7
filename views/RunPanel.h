//===- RunPanel.h - Run on host and validate against references -*- C++ -*-===//
//
// Runs the current artifact on this host (kiln::runArtifact with
// hostRunOptions(): local-task on every core, 20 timed runs, then one
// traced run for the timeline) with seeded random inputs
// (kiln::randomInputs) or .npy files, and shows each output (shape, min,
// max, mean, first values) and the latency (kiln::latencyText). Validate runs a folder's
// input_K.npy and compares with its output_K.npy (kiln::validateOutputs):
// max |error|, RMSE, cosine and elements outside 1e-4 x (1 + |ref|), as
// `kiln validate` reports them. Work runs on a worker thread.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_VIEWS_RUNPANEL_H
#define KILN_VIEWS_RUNPANEL_H

#include "Document.h"

#include <QFutureWatcher>
#include <QWidget>

#include <vector>

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QTableWidget;

namespace kiln::views {

/// What one run or validation produced.
struct RunPanelResult {
  bool ok = false;
  QString error;
  std::vector<kiln::IOInfo> outputInfos;
  std::vector<kiln::NpyArray> outputs;
  std::vector<kiln::ValidationMetrics> metrics;
  /// The timed runs (kiln::RunResult::latency; medianMs < 0 for a
  /// validation or a failed run).
  kiln::LatencyStats latency;
  MeasuredRun measured;
};

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
/// runtime's) go to RunPanelResult::error.
RunPanelResult runOnHost(const std::vector<uint8_t> &artifact, const QStringList &inputFiles = {});

class RunPanel : public QWidget {
  Q_OBJECT
public:
  explicit RunPanel(QWidget *parent = nullptr);
  ~RunPanel() override;
  /// The artifact to run (empty: nothing to run, buttons disabled);
  /// `label` says which build it is.
  void setArtifact(std::vector<uint8_t> artifact, const QString &label);
  /// Input files in signature order (empty = seeded random inputs).
  void setInputFiles(const QStringList &files);
  /// Starts a run; false if one is going or there is no artifact.
  bool run();
  /// Starts a validation over `folder`; false if busy or no artifact.
  bool validate(const QString &folder);
  /// True from run() or validate() until runFinished or validateFinished
  /// is emitted.
  bool isBusy() const;
  const RunPanelResult &result() const { return result_; }
  /// The artifact result() was measured or validated on (empty before the
  /// first run).
  const std::vector<uint8_t> &resultArtifact() const { return resultArtifact_; }
  /// The line that shows the latency (or what is ready to run).
  QLabel *latencyLabel() const { return latency_; }
  QTableWidget *outputTable() const { return outputs_; }
  QTableWidget *metricsTable() const { return metrics_; }
  QLabel *messageLabel() const { return message_; }
  QLineEdit *folderEdit() const { return folder_; }

signals:
  /// A run started (run(): the button, or Build > Run on Host).
  void runStarted();
  void runFinished(bool ok);
  void validateFinished(bool ok);
  /// A traced run of the artifact (for the timeline).
  void measured(const kiln::views::MeasuredRun &run);

private:
  void finished(bool validation);

  std::vector<uint8_t> artifact_;
  QString label_;
  QComboBox *source_;
  QLineEdit *files_, *folder_;
  QPushButton *runButton_, *validateButton_, *browseFiles_, *browseFolder_;
  QLabel *message_, *latency_;
  QTableWidget *outputs_, *metrics_;
  QFutureWatcher<RunPanelResult> watcher_;
  bool validating_ = false, busy_ = false;
  std::vector<uint8_t> runningArtifact_, resultArtifact_;
  RunPanelResult result_;
};

} // namespace kiln::views

#endif
