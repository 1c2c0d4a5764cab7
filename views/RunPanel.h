//===- RunPanel.h - Run on host and validate against references -*- C++ -*-===//
//
// The Run dock: runs the current artifact on this host with seeded random
// inputs or .npy files, and shows each output (shape, min, max, mean, first
// values) and the latency (kiln::latencyText). Validate runs a folder's
// input_K.npy and compares with its output_K.npy: max |error|, RMSE, cosine
// and elements outside 1e-4 x (1 + |ref|), as `kiln validate` reports them.
// The panel only asks (runRequested, validateRequested); the workbench's
// HostRunJob (app/workbench) runs the artifact on a worker thread and
// answers with showResult.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_VIEWS_RUNPANEL_H
#define KILN_VIEWS_RUNPANEL_H

#include "Document.h"

#include <QWidget>

#include <vector>

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QTableWidget;

namespace kiln::views {

/// What one run or validation produced (HostRunJob fills it).
struct RunPanelResult {
  bool ok = false;
  /// The run or validation stopped because it was asked to (cancel());
  /// `ok` is false and there are no outputs.
  bool cancelled = false;
  QString error;
  std::vector<kiln::IOInfo> outputInfos;
  std::vector<kiln::NpyArray> outputs;
  std::vector<kiln::ValidationMetrics> metrics;
  /// The timed runs (kiln::RunResult::latency; medianMs < 0 for a
  /// validation or a failed run).
  kiln::LatencyStats latency;
  MeasuredRun measured;
};

class RunPanel : public QWidget {
  Q_OBJECT
public:
  explicit RunPanel(QWidget *parent = nullptr);
  /// The artifact to run (empty: nothing to run, buttons disabled);
  /// `label` says which build it is; `cannotRun`, when not empty, why this
  /// host cannot run it (ModelDocument::hostLoadError): the buttons stay
  /// disabled and the panel says so.
  void setArtifact(std::vector<uint8_t> artifact, const QString &label,
                   const QString &cannotRun = QString());
  /// Input files in signature order (empty = seeded random inputs).
  void setInputFiles(const QStringList &files);
  /// Asks for a run (runRequested, then runStarted); false if one is going
  /// or there is no artifact.
  bool run();
  /// Asks for a validation over `folder` (validateRequested); false if
  /// busy or no artifact.
  bool validate(const QString &folder);
  /// Asks the run or validation under way to stop (cancelRequested; the
  /// Cancel button beside Run, shown while busy); false when idle.
  bool cancel();
  /// True from run() or validate() until runFinished or validateFinished
  /// is emitted.
  bool isBusy() const;
  const RunPanelResult &result() const { return result_; }
  /// The artifact result() was measured or validated on (empty before the
  /// first run).
  const std::vector<uint8_t> &resultArtifact() const { return resultArtifact_; }
  /// The line that shows the latency (or what is ready to run).
  QLabel *latencyLabel() const { return latency_; }
  QPushButton *runButton() const { return runButton_; }
  QPushButton *cancelButton() const { return cancelButton_; }
  QTableWidget *outputTable() const { return outputs_; }
  QTableWidget *metricsTable() const { return metrics_; }
  QLabel *messageLabel() const { return message_; }
  QLineEdit *folderEdit() const { return folder_; }

public slots:
  /// The answer to the last runRequested or validateRequested: shows the
  /// outputs and the latency or the metrics (an error on the message
  /// line), then emits runFinished or validateFinished.
  void showResult(const kiln::views::RunPanelResult &result);

signals:
  /// Run `artifact` on this host with `inputFiles` (.npy, in signature
  /// order; empty: seeded random inputs) and answer with showResult.
  void runRequested(const std::vector<uint8_t> &artifact, const QStringList &inputFiles);
  /// Validate `artifact` against the references in `folder` (input_K.npy,
  /// output_K.npy) and answer with showResult.
  void validateRequested(const std::vector<uint8_t> &artifact, const QString &folder);
  /// Stop the run or validation under way (cancel()); showResult follows
  /// with RunPanelResult::cancelled.
  void cancelRequested();
  /// A run started (run(): the button, or Build > Run on Host).
  void runStarted();
  void runFinished(bool ok);
  void validateFinished(bool ok);
  /// A traced run of the artifact (for the timeline).
  void measured(const kiln::views::MeasuredRun &run);

private:
  std::vector<uint8_t> artifact_;
  QString label_;
  QString cannotRun_;
  QComboBox *source_;
  QLineEdit *files_, *folder_;
  QPushButton *runButton_, *cancelButton_, *validateButton_, *browseFiles_, *browseFolder_;
  QLabel *message_, *latency_;
  QTableWidget *outputs_, *metrics_;
  bool validating_ = false, busy_ = false;
  /// Shows the buttons for busy_ (Cancel instead of Run and Validate).
  void updateButtons();
  std::vector<uint8_t> runningArtifact_, resultArtifact_;
  RunPanelResult result_;
};

} // namespace kiln::views

#endif
