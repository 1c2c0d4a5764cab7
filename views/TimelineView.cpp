//===- TimelineView.cpp - The stream timeline (QCustomPlot) --------------===//
#include "TimelineView.h"
#include "PlanModels.h"
#include "PlotTheme.h"

#include <QItemSelectionModel>
#include <QLabel>
#include <QToolTip>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace kiln::views {

QColor dispatchColor(int64_t id) {
  // Golden-angle hues, mid saturation: distinct neighbours, readable text.
  int hue = int((id * 137.508)) % 360;
  return QColor::fromHsl(hue < 0 ? hue + 360 : hue, 150, 150);
}

TimelineView::TimelineView(QWidget *parent) : QWidget(parent), plot_(new QCustomPlot(this)) {
  caption_ = new QLabel(this);
  caption_->setWordWrap(true);
  auto *layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(caption_);
  layout->addWidget(plot_, 1);
  plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  plot_->axisRect()->setRangeDrag(Qt::Horizontal);
  plot_->axisRect()->setRangeZoom(Qt::Horizontal);
  plot_->setMouseTracking(true);
  plot_->setAccessibleName(tr("Stream timeline"));
  plot_->setFocusPolicy(Qt::StrongFocus);
  applyPlotTheme(plot_, palette());
  plot_->xAxis->setLabel(tr("time (\u00b5s)"));
  connect(plot_, &QCustomPlot::mouseMove, this, [this](QMouseEvent *e) {
    QString tip = tooltipAt(e->pos());
    if (tip.isEmpty())
      QToolTip::hideText();
    else
      QToolTip::showText(e->globalPosition().toPoint(), tip, plot_);
  });
  connect(plot_, &QCustomPlot::mousePress, this, [this](QMouseEvent *e) {
    int i = commandAt(e->pos());
    if (i < 0 || data_.commands[i].dispatch < 0)
      return;
    int64_t id = data_.commands[i].dispatch;
    emit dispatchActivated(id);
    if (selection_)
      if (auto *m = qobject_cast<const DispatchListModel *>(selection_->model()))
        if (int row = m->rowOfDispatch(id); row >= 0)
          selection_->setCurrentIndex(m->index(row, 0), QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  });
}

void TimelineView::setPlan(std::shared_ptr<const kiln::CompilationPlan> plan) {
  plan_ = std::move(plan);
  data_ = plan_ ? estimateTimeline(*plan_) : TimelineData{};
  CostModel cm;
  caption_->setText(plan_ ? tr("Estimated from a roofline cost model (%1 GFLOP/s, %2 GB/s, %3 \u00b5s per launch); "
                               "Build \u25b8 Run on host replaces it with measured times. One lane per wave.")
                                .arg(cm.flopsPerUs / 1000).arg(cm.bytesPerUs / 1000).arg(cm.launchUs)
                          : QString());
  redraw();
}

void TimelineView::setDocument(std::shared_ptr<const ModelDocument> doc) {
  if (doc->plan != plan_)
    setPlan(doc->plan);
}

void TimelineView::clear() { setPlan(nullptr); }

void TimelineView::setMeasured(const MeasuredRun &run) {
  if (!plan_)
    return;
  data_ = measuredTimeline(*plan_, run.events);
  // The timed runs' latency as every view writes it; the bars are one more
  // run, traced after them.
  kiln::RunOptions where;
  where.device = run.device;
  where.threads = run.threads;
  const kiln::LatencyStats latency = kiln::latencyOf(run.timesMs, where);
  caption_->setText(tr("Measured on the host: %1 (the bars: one more run, traced). One lane per thread; upper "
                       "half dispatches, lower half their workgroups.")
                        .arg(latency.medianMs >= 0 ? QString::fromStdString(kiln::latencyText(latency))
                                                   : tr("%1 %2 thread(s), one traced run")
                                                         .arg(QString::fromStdString(run.device)).arg(run.threads)));
  redraw();
}

void TimelineView::setSelectionModel(QItemSelectionModel *selection) {
  selection_ = followDispatchSelection(this, selection_, selection,
                                       [this](int64_t id) { highlight(id); });
}

void TimelineView::redraw() {
  plot_->clearItems();
  commandItems_.clear();
  workgroupItems_.clear();
  barrierItems_.clear();
  highlighted_ = -1;
  QPalette pal = palette();
  bool measured = data_.measured;
  auto addRect = [&](const TimelineBar &b, double top, double bottom) {
    auto *r = new QCPItemRect(plot_);
    r->topLeft->setCoords(b.startUs, top);
    r->bottomRight->setCoords(std::max(b.endUs, b.startUs), bottom);
    QColor c = b.kind == kiln::CommandKind::Dispatch ? dispatchColor(b.dispatch) : pal.color(QPalette::Mid);
    r->setBrush(c);
    r->setPen(QPen(c.darker(140), 0));
    r->setSelectable(false);
    return r;
  };
  for (const TimelineBar &b : data_.commands)
    commandItems_.push_back(addRect(b, b.lane - 0.4, measured ? b.lane - 0.02 : b.lane + 0.4));
  for (const TimelineBar &b : data_.workgroups)
    workgroupItems_.push_back(addRect(b, b.lane + 0.04, b.lane + 0.4));
  for (const TimelineBarrier &b : data_.barriers) {
    auto *l = new QCPItemStraightLine(plot_);
    l->point1->setCoords(b.atUs, 0);
    l->point2->setCoords(b.atUs, 1);
    l->setPen(QPen(pal.color(QPalette::Text), 0, Qt::DashLine));
    l->setSelectable(false);
    barrierItems_.push_back(l);
  }
  updateLaneTicks();
  plot_->yAxis->setSubTicks(false);
  plot_->yAxis->setRangeReversed(true);
  plot_->yAxis->setRange(-0.6, std::max<int>(1, data_.lanes.size()) - 0.4);
  plot_->xAxis->setRange(0, std::max(1.0, data_.totalUs * 1.02));
  plot_->replot();
}

void TimelineView::updateLaneTicks() {
  // Label every k-th lane so labels never overlap.
  int lanes = std::max<int>(1, data_.lanes.size());
  int height = std::max(1, plot_->axisRect()->height() > 0 ? plot_->axisRect()->height() : plot_->height() - 60);
  double perLane = double(height) / lanes;
  int step = std::max(1, int(std::ceil(fontMetrics().height() * 1.1 / perLane)));
  for (int nice : {1, 2, 5, 10, 20, 50, 100})
    if (nice >= step) {
      step = nice;
      break;
    }
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  for (int i = 0; i < data_.lanes.size(); i += step)
    ticker->addTick(i, data_.lanes[i]);
  plot_->yAxis->setTicker(ticker);
}

void TimelineView::resizeEvent(QResizeEvent *event) {
  QWidget::resizeEvent(event);
  plot_->replot(); // lays the axis rect out
  updateLaneTicks();
  plot_->replot();
}

void TimelineView::highlight(int64_t dispatch) {
  highlighted_ = dispatch;
  QPalette pal = palette();
  for (size_t i = 0; i < commandItems_.size(); ++i) {
    const TimelineBar &b = data_.commands[i];
    bool on = dispatch >= 0 && b.dispatch == dispatch;
    QColor c = b.kind == kiln::CommandKind::Dispatch ? dispatchColor(b.dispatch) : pal.color(QPalette::Mid);
    commandItems_[i]->setPen(on ? QPen(pal.color(QPalette::Highlight), 3) : QPen(c.darker(140), 0));
  }
  plot_->replot();
}

int TimelineView::commandAt(const QPoint &pos) const {
  double x = plot_->xAxis->pixelToCoord(pos.x());
  double y = plot_->yAxis->pixelToCoord(pos.y());
  double slack = std::abs(plot_->xAxis->pixelToCoord(pos.x() + 2) - x); // thin bars stay hoverable
  for (size_t i = 0; i < data_.commands.size(); ++i) {
    const TimelineBar &b = data_.commands[i];
    double top = b.lane - 0.4, bottom = data_.measured ? b.lane - 0.02 : b.lane + 0.4;
    if (y >= top && y <= bottom && x >= b.startUs - slack && x <= b.endUs + slack)
      return int(i);
  }
  return -1;
}

QString TimelineView::tooltipAt(const QPoint &pos) const {
  int i = commandAt(pos);
  if (i < 0) {
    // A measured workgroup?
    double x = plot_->xAxis->pixelToCoord(pos.x()), y = plot_->yAxis->pixelToCoord(pos.y());
    for (const TimelineBar &b : data_.workgroups)
      if (y >= b.lane + 0.04 && y <= b.lane + 0.4 && x >= b.startUs && x <= b.endUs)
        return tr("workgroup %1 of dispatch %2 (command %3, wave %4)\nthread %5, measured %6 \u00b5s")
            .arg(b.workgroup).arg(b.dispatch).arg(b.command).arg(b.wave).arg(b.lane).arg(b.endUs - b.startUs, 0, 'f', 2);
    return {};
  }
  const TimelineBar &b = data_.commands[i];
  QString what = QString::fromLatin1(kiln::toString(b.kind));
  if (plan_ && b.dispatch >= 0)
    for (const kiln::Dispatch &d : plan_->dispatches)
      if (d.id == b.dispatch)
        what = QStringLiteral("%1 (dispatch %2): %3").arg(QString::fromStdString(d.name)).arg(d.id).arg(opsText(d));
  return tr("%1\ncommand %2, wave %3\n%4 %5 \u00b5s (%6 .. %7)")
      .arg(what)
      .arg(b.command)
      .arg(b.wave)
      .arg(!b.estimated     ? tr("measured")
           : data_.measured ? tr("estimated (the trace holds no event of this command)")
                            : tr("estimated"))
      .arg(b.endUs - b.startUs, 0, 'f', 2)
      .arg(b.startUs, 0, 'f', 2)
      .arg(b.endUs, 0, 'f', 2);
}

} // namespace kiln::views
