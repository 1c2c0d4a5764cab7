//===- SizesView.h - Artifact bytes per section ----------------*- C++ -*-===//
//
// Bytes per artifact section as bars (QCustomPlot, log scale so the small
// sections stay visible next to the weights) for the default build and,
// side by side, the stripped build; below, a table with the exact numbers
// and the per-section deltas.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_VIEWS_SIZESVIEW_H
#define KILN_VIEWS_SIZESVIEW_H

#include "Document.h"

#include "kiln/Artifact.h"

#include <QWidget>

#include <optional>

class QCustomPlot;
class QCPBars;
class QLabel;
class QTableView;

namespace kiln::views {

class SectionSizesModel;

/// The sizes panel.
class SizesView : public QWidget, public DocumentView {
  Q_OBJECT
public:
  explicit SizesView(QWidget *parent = nullptr);
  /// `a`: the default build (or the opened artifact); `b`: the stripped
  /// build, if any (without one, the table hides its Stripped and Delta
  /// columns).
  void setSizes(std::optional<kiln::SectionSizes> a, std::optional<kiln::SectionSizes> b);
  /// DocumentView: `doc`'s section sizes, default and stripped (setSizes),
  /// redrawn for every document (the stripped build comes last).
  void setDocument(std::shared_ptr<const ModelDocument> doc) override;
  /// Sizes are per artifact, not per dispatch: the selection is not used.
  void setSelectionModel(QItemSelectionModel *) override {}
  /// No sizes (setSizes with neither build).
  void clear() override;
  /// Labels of the bars, left to right (sections, then "overhead").
  QStringList barLabels() const { return labels_; }
  /// Bar heights (bytes) of the default (`stripped` false) or stripped
  /// build, in barLabels() order; empty if that build is absent.
  std::vector<double> barValues(bool stripped) const;
  SectionSizesModel *model() const { return model_; }
  QTableView *table() const { return table_; }
  QCustomPlot *plot() const { return plot_; }

private:
  QCustomPlot *plot_;
  QCPBars *a_ = nullptr, *b_ = nullptr;
  QTableView *table_;
  QLabel *caption_;
  SectionSizesModel *model_;
  QStringList labels_;
};

} // namespace kiln::views

#endif
