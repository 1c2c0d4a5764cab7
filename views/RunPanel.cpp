//===- RunPanel.cpp - Run on host and validate against references --------===//
#include "RunPanel.h"

#include "kiln/Npy.h"
#include "kiln/TensorTypes.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace kiln::views {

RunPanel::RunPanel(QWidget *parent) : QWidget(parent) {
  auto *v = new QVBoxLayout(this);
  auto *form = new QFormLayout;
  auto *inRow = new QHBoxLayout;
  source_ = new QComboBox(this);
  source_->addItems({tr("Random (seed 1)"), tr(".npy files")});
  files_ = new QLineEdit(this);
  files_->setPlaceholderText(tr("input_0.npy; input_1.npy \u2026 in signature order"));
  files_->setEnabled(false);
  browseFiles_ = new QPushButton(tr("Browse\u2026"), this);
  browseFiles_->setEnabled(false);
  inRow->addWidget(source_);
  inRow->addWidget(files_, 1);
  inRow->addWidget(browseFiles_);
  runButton_ = new QPushButton(tr("Run on Host"), this);
  inRow->addWidget(runButton_);
  cancelButton_ = new QPushButton(tr("Cancel"), this);
  cancelButton_->setObjectName(QStringLiteral("cancelRun"));
  cancelButton_->setToolTip(tr("Stop the run before its next wave (Esc)"));
  cancelButton_->hide();
  inRow->addWidget(cancelButton_);
  form->addRow(tr("Inputs"), inRow);
  auto *valRow = new QHBoxLayout;
  folder_ = new QLineEdit(this);
  folder_->setPlaceholderText(tr("folder with input_K.npy and output_K.npy"));
  browseFolder_ = new QPushButton(tr("Browse\u2026"), this);
  validateButton_ = new QPushButton(tr("Validate"), this);
  valRow->addWidget(folder_, 1);
  valRow->addWidget(browseFolder_);
  valRow->addWidget(validateButton_);
  form->addRow(tr("Reference"), valRow);
  v->addLayout(form);
  latency_ = new QLabel(this);
  latency_->setWordWrap(true); // "This computer cannot run ..." at 1024x700
  v->addWidget(latency_);
  outputs_ = new QTableWidget(0, 6, this);
  outputs_->setHorizontalHeaderLabels({tr("Output"), tr("Shape"), tr("Min"), tr("Max"), tr("Mean"), tr("First values")});
  outputs_->horizontalHeader()->setStretchLastSection(true);
  outputs_->verticalHeader()->hide();
  outputs_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  v->addWidget(outputs_, 1);
  metrics_ = new QTableWidget(0, 6, this);
  metrics_->setHorizontalHeaderLabels(
      {tr("Output"), tr("Elements"), tr("Max |error|"), tr("RMSE"), tr("Cosine"), tr("Outside 1e-4\u00b7(1+|ref|)")});
  metrics_->horizontalHeader()->setStretchLastSection(true);
  metrics_->verticalHeader()->hide();
  metrics_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  v->addWidget(metrics_, 1);
  message_ = new QLabel(this);
  message_->setWordWrap(true);
  v->addWidget(message_);

  connect(source_, &QComboBox::currentIndexChanged, this, [this](int i) {
    files_->setEnabled(i == 1);
    browseFiles_->setEnabled(i == 1);
  });
  connect(browseFiles_, &QPushButton::clicked, this, [this] {
    QStringList f = QFileDialog::getOpenFileNames(this, tr("Input arrays"), QString(), tr("NumPy arrays (*.npy)"));
    if (!f.isEmpty())
      files_->setText(f.join(QStringLiteral("; ")));
  });
  connect(browseFolder_, &QPushButton::clicked, this, [this] {
    QString d = QFileDialog::getExistingDirectory(this, tr("Reference folder"), folder_->text());
    if (!d.isEmpty())
      folder_->setText(d);
  });
  connect(runButton_, &QPushButton::clicked, this, [this] { run(); });
  connect(cancelButton_, &QPushButton::clicked, this, [this] { cancel(); });
  connect(validateButton_, &QPushButton::clicked, this, [this] { validate(folder_->text()); });
  setArtifact({}, QString());
}

void RunPanel::setArtifact(std::vector<uint8_t> artifact, const QString &label,
                           const QString &cannotRun) {
  artifact_ = std::move(artifact);
  label_ = label;
  cannotRun_ = cannotRun;
  updateButtons();
  if (!artifact_.empty() && !cannotRun_.isEmpty())
    latency_->setText(tr("This computer cannot run %1: %2").arg(label_, cannotRun_));
  else if (artifact_.empty())
    latency_->setText(tr("No artifact yet (code generation pending or failed)."));
  else if (artifact_ == resultArtifact_ && result_.latency.medianMs >= 0) // the measured build, again
    latency_->setText(tr("%1: %2").arg(label_, QString::fromStdString(kiln::latencyText(result_.latency))));
  else
    latency_->setText(tr("Ready: %1 (%2 bytes)").arg(label_).arg(artifact_.size()));
}

void RunPanel::setInputFiles(const QStringList &files) {
  source_->setCurrentIndex(files.isEmpty() ? 0 : 1);
  files_->setText(files.join(QStringLiteral("; ")));
}

bool RunPanel::isBusy() const { return busy_; }

void RunPanel::updateButtons() {
  bool can = !artifact_.empty() && cannotRun_.isEmpty() && !busy_;
  runButton_->setEnabled(can);
  validateButton_->setEnabled(can);
  cancelButton_->setVisible(busy_);
  cancelButton_->setEnabled(busy_);
}

bool RunPanel::cancel() {
  if (!busy_)
    return false;
  cancelButton_->setEnabled(false);
  message_->setText(tr("Cancelling\u2026"));
  emit cancelRequested();
  return true;
}

bool RunPanel::run() {
  if (isBusy() || artifact_.empty() || !cannotRun_.isEmpty())
    return false;
  QStringList files;
  if (source_->currentIndex() == 1)
    files = files_->text().split(QLatin1Char(';'), Qt::SkipEmptyParts);
  validating_ = false;
  busy_ = true;
  runningArtifact_ = artifact_;
  message_->setText(tr("Running\u2026"));
  updateButtons();
  emit runRequested(artifact_, files);
  emit runStarted();
  return true;
}

bool RunPanel::validate(const QString &folder) {
  if (isBusy() || artifact_.empty() || !cannotRun_.isEmpty())
    return false;
  validating_ = true;
  busy_ = true;
  runningArtifact_ = artifact_;
  message_->setText(tr("Validating against %1\u2026").arg(folder));
  updateButtons();
  emit validateRequested(artifact_, folder);
  return true;
}

static QString shapeText(const std::vector<int64_t> &shape) {
  QStringList p;
  for (int64_t d : shape)
    p << QString::number(d);
  return p.join(QStringLiteral("\u00d7"));
}

void RunPanel::showResult(const RunPanelResult &result) {
  const bool validation = validating_;
  result_ = result;
  resultArtifact_ = std::move(runningArtifact_);
  runningArtifact_.clear();
  busy_ = false;
  updateButtons();
  if (!result_.ok) {
    message_->setStyleSheet(result_.cancelled ? QString() : QStringLiteral("color: #b00000"));
    message_->setText(result_.cancelled
                          ? (validation ? tr("Validation cancelled.") : tr("Run cancelled."))
                          : result_.error);
    validation ? emit validateFinished(false) : emit runFinished(false);
    return;
  }
  message_->setStyleSheet(QString());
  outputs_->setRowCount(int(result_.outputs.size()));
  for (size_t i = 0; i < result_.outputs.size(); ++i) {
    const kiln::NpyArray &a = result_.outputs[i];
    QString name = i < result_.outputInfos.size() ? QString::fromStdString(result_.outputInfos[i].name)
                                                  : QString::number(i);
    QStringList cells = {name, shapeText(a.shape)};
    kiln::ArraySummary summary = kiln::summarizeArray(a);
    QStringList first;
    for (const std::string &v : summary.first)
      first << QString::fromStdString(v);
    cells << QString::fromStdString(summary.min) << QString::fromStdString(summary.max)
          << QString::fromStdString(summary.mean)
          << (summary.min.empty() ? tr("(%1 values not shown)")
                                        .arg(QString::fromStdString(kiln::elementTypeName(a.dtype)))
                                  : first.join(QStringLiteral(", ")) +
                                        (summary.more ? QStringLiteral(", \u2026") : QString()));
    for (int c = 0; c < cells.size(); ++c)
      outputs_->setItem(int(i), c, new QTableWidgetItem(cells[c]));
  }
  outputs_->resizeColumnsToContents();
  if (validation) {
    metrics_->setRowCount(int(result_.metrics.size()));
    int64_t outside = 0;
    for (size_t i = 0; i < result_.metrics.size(); ++i) {
      const kiln::ValidationMetrics &m = result_.metrics[i];
      outside += m.outsideTolerance;
      QStringList cells = {QString::fromStdString(m.name), QString::number(m.elements),
                           QString::number(m.maxAbsError, 'g', 4), QString::number(m.rmse, 'g', 4),
                           QString::number(m.cosine, 'f', 6), QString::number(m.outsideTolerance)};
      for (int c = 0; c < cells.size(); ++c)
        metrics_->setItem(int(i), c, new QTableWidgetItem(cells[c]));
    }
    metrics_->resizeColumnsToContents();
    message_->setText(outside ? tr("%1 elements outside the tolerance").arg(outside)
                              : tr("Every output within 1e-4 \u00d7 (1 + |reference|)"));
    if (outside)
      message_->setStyleSheet(QStringLiteral("color: #b00000"));
    emit validateFinished(true);
  } else {
    latency_->setText(tr("%1: %2").arg(label_, QString::fromStdString(kiln::latencyText(result_.latency))));
    message_->setText(tr("Ran with %1.").arg(files_->isEnabled() ? tr("the .npy inputs") : tr("seeded random inputs")));
    emit measured(result_.measured);
    emit runFinished(true);
  }
}

} // namespace kiln::views
