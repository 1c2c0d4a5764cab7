//===- CompareView.h - Two builds side by side -----------------*- C++ -*-===//
//
// Build A and build B (default vs stripped, or before vs after a change):
// bytes per section, total, arena and lower bound, dispatch, command and
// wave counts and, when measured, median latency, each with B - A: the
// rows of `kiln diff A B` (kiln::formatBuildDiff), from the same
// kiln::BuildSummary numbers. Below, what quantization costs: the open
// model against another (a float model and its int8 twin, two exports) on
// the same inputs, per output, the table of `kiln validate A
// --compare-with=B` (kiln::compareModels).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_VIEWS_COMPAREVIEW_H
#define KILN_VIEWS_COMPAREVIEW_H

#include "kiln/Artifact.h"
#include "kiln/Compare.h"

#include <QAbstractTableModel>
#include <QWidget>

#include <array>
#include <optional>

class QLabel;
class QPushButton;
class QPlainTextEdit;
class QTabWidget;
class QTableView;

namespace kiln::views {

/// Rows: each section by name ("constants", ..., "io"), "(overhead)",
/// "total", then the plan as "plan.arena_bytes", "plan.lower_bound_bytes",
/// "plan.dispatches", "plan.commands", "plan.waves" and, when measured,
/// "plan.median_ms"; columns what, A, B, B - A. A latency difference within
/// the measured spread (kiln::withinSpread) is shown uncoloured, as noise.
class CompareModel : public QAbstractTableModel {
  Q_OBJECT
public:
  enum Column { What, A, B, Delta, NumColumns };
  explicit CompareModel(QObject *parent = nullptr);
  void setBuilds(const std::optional<kiln::BuildSummary> &a, const std::optional<kiln::BuildSummary> &b);
  /// Row names in display order.
  QStringList rowNames() const { return rows_; }
  /// Value of row `name` in column A, B or Delta (NaN if absent).
  double value(const QString &name, Column column) const;
  /// Whether row `name`'s B - A is coloured as a gain (green) or a loss
  /// (red): a nonzero difference, and for the latency one outside the
  /// measured spread.
  bool isColoured(const QString &name) const;

  int rowCount(const QModelIndex &parent = {}) const override;
  int columnCount(const QModelIndex &parent = {}) const override;
  QVariant data(const QModelIndex &index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

private:
  QStringList rows_;
  std::vector<std::array<double, 3>> values_;
  /// Both latencies measured and their min..max ranges overlap.
  bool latencyNoise_ = false;
};

/// What quantization costs: one row per output of a kiln::ModelComparison
/// (kiln/Compare.h compareModels), columns output, elements, max |error|,
/// RMSE, cosine, top-1 agreement ("-" for an output that is no
/// classifier). EditRole gives the numbers (NaN for no top-1).
class OutputAgreementModel : public QAbstractTableModel {
  Q_OBJECT
public:
  enum Column { Output, Elements, MaxError, Rmse, Cosine, Top1, NumColumns };
  explicit OutputAgreementModel(QObject *parent = nullptr);
  void setComparison(const std::vector<kiln::OutputAgreement> &rows);
  const std::vector<kiln::OutputAgreement> &rows() const { return rows_; }

  int rowCount(const QModelIndex &parent = {}) const override;
  int columnCount(const QModelIndex &parent = {}) const override;
  QVariant data(const QModelIndex &index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

private:
  std::vector<kiln::OutputAgreement> rows_;
};

class CompareView : public QWidget {
  Q_OBJECT
public:
  explicit CompareView(QWidget *parent = nullptr);
  /// Shows `a` (labelled `labelA`) against `b`; nullopt clears a side.
  void setBuilds(const QString &labelA, const std::optional<kiln::BuildSummary> &a, const QString &labelB,
                 const std::optional<kiln::BuildSummary> &b);
  void setBusy(const QString &text);
  /// The caption while nothing is compared: which buttons to press.
  static QString emptyText();
  CompareModel *model() const { return model_; }
  QTableView *table() const { return table_; }
  QLabel *caption() const { return caption_; }
  /// `kiln diff`'s text for the builds shown.
  QString diffText() const { return diffText_; }
  QPushButton *strippedButton() const { return stripped_; }
  QPushButton *pinButton() const { return pin_; }
  QPushButton *currentButton() const { return current_; }
  /// Outputs: the open model against another one on the same inputs.
  void setOutputComparison(const QString &labelA, const QString &labelB,
                           const kiln::ModelComparison &c);
  void setOutputsBusy(const QString &text);
  OutputAgreementModel *outputsModel() const { return outputsModel_; }
  QTableView *outputsTable() const { return outputsTable_; }
  QLabel *outputsCaption() const { return outputsCaption_; }
  QPushButton *modelButton() const { return model2_; }
  /// The outputs tab's caption while nothing is compared.
  static QString outputsEmptyText();
  /// "Builds" (index 0) and "Outputs" (1); showing an output comparison
  /// selects Outputs.
  QTabWidget *tabs() const { return tabs_; }

signals:
  /// Default vs stripped of the current settings.
  void defaultVsStrippedRequested();
  /// Keep the current build as A ("before").
  void pinRequested();
  /// Compare A with the current build ("after").
  void currentRequested();
  /// Compare the open model's outputs with another model's (chosen in a
  /// file dialog by the controller).
  void modelComparisonRequested();

private:
  CompareModel *model_;
  QTableView *table_;
  QLabel *caption_;
  QPushButton *stripped_, *pin_, *current_, *model2_;
  QString diffText_;
  OutputAgreementModel *outputsModel_;
  QTableView *outputsTable_;
  QLabel *outputsCaption_;
  QTabWidget *tabs_;
};

} // namespace kiln::views

#endif
