//===- TimelineView.h - The stream timeline (QCustomPlot) ------*- C++ -*-===//
//
// Commands on a time axis: one lane per wave with times from the cost
// model until the artifact has been run on the host, then one lane per
// thread with measured dispatch and workgroup times. Barriers are vertical
// lines. Hover shows dispatch, wave and duration; click selects the
// dispatch in the shared selection.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_VIEWS_TIMELINEVIEW_H
#define KILN_VIEWS_TIMELINEVIEW_H

#include "Document.h"
#include "Timeline.h"

#include <QPointer>
#include <QWidget>

#include <memory>
#include <vector>

class QCustomPlot;
class QCPItemRect;
class QCPItemStraightLine;
class QItemSelectionModel;
class QLabel;

namespace kiln::views {

/// The timeline panel: a caption and the plot.
class TimelineView : public QWidget, public DocumentView {
  Q_OBJECT
public:
  explicit TimelineView(QWidget *parent = nullptr);
  /// Shows the estimated timeline of `plan` (null clears).
  void setPlan(std::shared_ptr<const kiln::CompilationPlan> plan);
  /// DocumentView: the estimated timeline of `doc`'s plan (setPlan); the
  /// plan already shown keeps what is drawn (a measured run stays).
  void setDocument(std::shared_ptr<const ModelDocument> doc) override;
  /// No timeline (setPlan(nullptr)).
  void clear() override;
  /// Replaces the estimate with a measured run of the same plan.
  void setMeasured(const MeasuredRun &run);
  void setSelectionModel(QItemSelectionModel *selection) override;

  /// What is drawn.
  const TimelineData &data() const { return data_; }
  /// Number of bars drawn for commands (one per non-barrier command).
  int commandItemCount() const { return int(commandItems_.size()); }
  /// Number of barrier lines drawn.
  int barrierItemCount() const { return int(barrierItems_.size()); }
  /// Number of measured workgroup bars drawn.
  int workgroupItemCount() const { return int(workgroupItems_.size()); }
  /// Index into data().commands of the bar under widget point `pos` of the
  /// plot, -1 if none.
  int commandAt(const QPoint &plotPos) const;
  /// The tooltip text hovering `plotPos` shows (empty if nothing there).
  QString tooltipAt(const QPoint &plotPos) const;
  /// Dispatch drawn highlighted (-1 if none).
  int64_t highlightedDispatch() const { return highlighted_; }
  QCustomPlot *plot() const { return plot_; }

signals:
  void dispatchActivated(qint64 id);

protected:
  void resizeEvent(QResizeEvent *event) override;

private:
  void redraw();
  void updateLaneTicks();
  void highlight(int64_t dispatch);

  QCustomPlot *plot_;
  QLabel *caption_;
  std::shared_ptr<const kiln::CompilationPlan> plan_;
  TimelineData data_;
  QString measuredNote_;
  std::vector<QCPItemRect *> commandItems_, workgroupItems_;
  std::vector<QCPItemStraightLine *> barrierItems_;
  QPointer<QItemSelectionModel> selection_;
  int64_t highlighted_ = -1;
};

/// A distinct colour for dispatch `id` (shared by the views).
QColor dispatchColor(int64_t id);

} // namespace kiln::views

#endif
