//===- MemoryView.cpp - The arena's buffers over time --------------------===//
#include "MemoryView.h"
#include "PlanModels.h"
#include "PlotTheme.h"
#include "TimelineView.h"

#include <QItemSelectionModel>
#include <QLabel>
#include <QToolTip>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace kiln::views {

bool isPlacedBuffer(const kiln::CompilationPlan &plan, const kiln::Buffer &b) {
  if (b.kind != kiln::BufferKind::Transient || b.firstCommand < 0 || b.bytes <= 0)
    return false;
  int64_t root = aliasRoot(plan, b.id);
  return root >= 0 && root < (int64_t)plan.memory.buffers.size() &&
         plan.memory.buffers[root].kind == kiln::BufferKind::Transient;
}

namespace {
/// Ticks of a byte axis in the unit of its range (B, KiB or MiB, 1024
/// apart), at round numbers of that unit: "0", "256 KiB", "1.5 MiB".
class ByteTicker : public QCPAxisTicker {
protected:
  double getTickStep(const QCPRange &range) override {
    const double top = std::max(std::abs(range.lower), std::abs(range.upper));
    unit_ = top >= 1024.0 * 1024.0 ? 1024.0 * 1024.0 : top >= 1024.0 ? 1024.0 : 1.0;
    return std::max(1.0, cleanMantissa(range.size() / unit_ / (mTickCount + 1e-10)) * unit_);
  }
  QString getTickLabel(double tick, const QLocale &, QChar, int) override {
    if (std::abs(tick) < 0.5)
      return QStringLiteral("0");
    const char *name = unit_ == 1.0 ? "B" : unit_ == 1024.0 ? "KiB" : "MiB";
    return QStringLiteral("%1 %2").arg(QString::number(tick / unit_, 'g', 4), QLatin1String(name));
  }

private:
  double unit_ = 1;
};
} // namespace

MemoryView::MemoryView(QWidget *parent) : QWidget(parent), plot_(new QCustomPlot(this)) {
  caption_ = new QLabel(this);
  caption_->setWordWrap(true);
  auto *layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(caption_);
  layout->addWidget(plot_, 1);
  plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  plot_->setMouseTracking(true);
  plot_->setAccessibleName(tr("Buffer aliasing"));
  applyPlotTheme(plot_, palette());
  plot_->xAxis->setLabel(tr("command index"));
  plot_->yAxis->setLabel(tr("arena offset"));
  plot_->yAxis->setTicker(QSharedPointer<ByteTicker>::create());
  connect(plot_, &QCustomPlot::mouseMove, this, [this](QMouseEvent *e) {
    int64_t b = bufferAt(e->pos());
    if (b < 0)
      QToolTip::hideText();
    else
      QToolTip::showText(e->globalPosition().toPoint(), tooltipFor(b), plot_);
  });
  // Clicking a buffer selects the dispatch that writes it.
  connect(plot_, &QCustomPlot::mousePress, this, [this](QMouseEvent *e) {
    int64_t b = bufferAt(e->pos());
    int64_t producer = producerOf(b);
    if (producer < 0 || !selection_)
      return;
    if (auto *m = qobject_cast<const DispatchListModel *>(selection_->model()))
      if (int row = m->rowOfDispatch(producer); row >= 0)
        selection_->setCurrentIndex(m->index(row, 0), QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  });
}

void MemoryView::setPlan(std::shared_ptr<const kiln::CompilationPlan> plan) {
  plan_ = std::move(plan);
  if (plan_) {
    const auto &m = plan_->memory;
    caption_->setText(tr("Arena %1 (%2 bytes), lower bound %3 (%4 bytes), planner %5. Rectangles: transient buffers "
                         "placed in the arena, x = lifetime in commands, y = offset; aliases share a colour.")
                          .arg(formatBytes(m.arenaBytes)).arg(m.arenaBytes).arg(formatBytes(m.lowerBoundBytes))
                          .arg(m.lowerBoundBytes).arg(QString::fromStdString(m.planner)));
    if (m.persistentBytes > 0)
      caption_->setText(caption_->text() +
                        tr(" Hatched, at the bottom: the persistent region (%1 bytes), %2 state "
                           "variable(s) the model carries from one invocation to the next.")
                            .arg(m.persistentBytes)
                            .arg(plan_->state.size()));
  } else {
    caption_->clear();
  }
  redraw();
}

void MemoryView::setDocument(std::shared_ptr<const ModelDocument> doc) {
  if (doc->plan != plan_)
    setPlan(doc->plan);
}

void MemoryView::clear() { setPlan(nullptr); }

void MemoryView::setSelectionModel(QItemSelectionModel *selection) {
  selection_ = followDispatchSelection(this, selection_, selection,
                                       [this](int64_t id) { highlight(id); });
}

void MemoryView::redraw() {
  plot_->clearItems();
  buffers_.clear();
  rects_.clear();
  aliasLinks_.clear();
  highlighted_.clear();
  arenaLine_ = lowerLine_ = nullptr;
  if (!plan_) {
    plot_->replot();
    return;
  }
  QPalette pal = palette();
  const auto &buffers = plan_->memory.buffers;
  for (const kiln::Buffer &b : buffers) {
    if (!isPlacedBuffer(*plan_, b))
      continue;
    QColor c = dispatchColor(aliasRoot(*plan_, b.id) * 7 + 3);
    c.setAlpha(200);
    auto *r = new QCPItemRect(plot_);
    r->topLeft->setCoords(double(b.firstCommand), double(b.offset + b.bytes));
    r->bottomRight->setCoords(double(b.lastCommand + 1), double(b.offset));
    r->setBrush(c);
    r->setPen(QPen(c.darker(150), 0));
    r->setSelectable(false);
    buffers_.push_back(b.id);
    rects_.push_back(r);
    highlighted_.push_back(false);
  }
  // State variables: persistent, live across every command (and across
  // invocations), hatched.
  for (const kiln::StateVariable &v : plan_->state) {
    if (v.buffer < 0 || v.buffer >= (int64_t)buffers.size())
      continue;
    QColor c = pal.color(QPalette::Text);
    auto *r = new QCPItemRect(plot_);
    r->topLeft->setCoords(0.0, double(v.offset + v.bytes));
    r->bottomRight->setCoords(double(std::max<size_t>(1, plan_->schedule.commands.size())),
                              double(v.offset));
    r->setBrush(QBrush(c, Qt::BDiagPattern));
    r->setPen(QPen(c, 0));
    r->setSelectable(false);
    buffers_.push_back(v.buffer);
    rects_.push_back(r);
    highlighted_.push_back(false);
  }
  for (size_t i = 0; i < buffers_.size(); ++i) {
    const kiln::Buffer &b = buffers[buffers_[i]];
    if (b.aliasOf < 0)
      continue;
    auto it = std::find(buffers_.begin(), buffers_.end(), b.aliasOf);
    if (it == buffers_.end())
      continue;
    QRectF a = rectAt(int(i)), t = rectAt(int(it - buffers_.begin()));
    auto *l = new QCPItemLine(plot_);
    l->start->setCoords(a.center());
    l->end->setCoords(t.center());
    l->setPen(QPen(dispatchColor(aliasRoot(*plan_, b.id) * 7 + 3).darker(170), 2, Qt::DotLine));
    l->setHead(QCPLineEnding::esSpikeArrow);
    aliasLinks_.push_back(l);
  }
  auto hline = [&](double y, const QColor &c, Qt::PenStyle style, const QString &label) {
    auto *l = new QCPItemStraightLine(plot_);
    l->point1->setCoords(0, y);
    l->point2->setCoords(1, y);
    l->setPen(QPen(c, 1.5, style));
    auto *t = new QCPItemText(plot_);
    t->position->setTypeX(QCPItemPosition::ptAxisRectRatio);
    t->position->setTypeY(QCPItemPosition::ptPlotCoords);
    t->position->setCoords(0.99, y);
    t->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
    t->setText(label);
    t->setColor(c);
    t->setFont(font());
    return l;
  };
  const auto &m = plan_->memory;
  bool same = m.lowerBoundBytes == m.arenaBytes; // one line, one label saying both
  arenaLine_ = hline(double(m.arenaBytes), pal.color(QPalette::Text), Qt::SolidLine,
                     same ? tr("arena %1 = lower bound (optimal)").arg(formatBytes(m.arenaBytes))
                          : tr("arena %1").arg(formatBytes(m.arenaBytes)));
  lowerLine_ = hline(double(m.lowerBoundBytes), QColor(200, 60, 60), Qt::DashLine,
                     same ? QString() : tr("lower bound %1").arg(formatBytes(m.lowerBoundBytes)));
  if (!same) {
    // Keep the two labels apart: the lower bound's goes under its line.
    for (int i = 0; i < plot_->itemCount(); ++i)
      if (auto *t = qobject_cast<QCPItemText *>(plot_->item(i)); t && t->text().startsWith(tr("lower bound")))
        t->setPositionAlignment(Qt::AlignRight | Qt::AlignTop);
  }
  double commands = std::max<double>(1, plan_->schedule.commands.size());
  plot_->xAxis->setRange(0, commands);
  plot_->yAxis->setRange(0, std::max<double>(1, m.arenaBytes) * 1.12);
  plot_->replot();
}

QRectF MemoryView::rectAt(int i) const {
  if (i < 0 || i >= (int)rects_.size())
    return {};
  QPointF tl = rects_[i]->topLeft->coords(), br = rects_[i]->bottomRight->coords();
  return QRectF(QPointF(tl.x(), br.y()), QPointF(br.x(), tl.y())); // y up: top = offset
}

double MemoryView::arenaLineY() const { return arenaLine_ ? arenaLine_->point1->coords().y() : -1; }
double MemoryView::lowerBoundLineY() const { return lowerLine_ ? lowerLine_->point1->coords().y() : -1; }

int64_t MemoryView::bufferAt(const QPoint &pos) const {
  QPointF p(plot_->xAxis->pixelToCoord(pos.x()), plot_->yAxis->pixelToCoord(pos.y()));
  for (int i = int(rects_.size()) - 1; i >= 0; --i)
    if (rectAt(i).contains(p))
      return buffers_[i];
  return -1;
}

int64_t MemoryView::producerOf(int64_t buffer) const {
  if (!plan_ || buffer < 0)
    return -1;
  for (const kiln::Command &c : plan_->schedule.commands)
    if (c.kind == kiln::CommandKind::Dispatch)
      for (const kiln::BindingRef &r : c.bindings)
        if (r.buffer == buffer && r.write)
          return c.dispatch;
  return -1;
}

QString MemoryView::tooltipFor(int64_t id) const {
  if (!plan_ || id < 0 || id >= (int64_t)plan_->memory.buffers.size())
    return {};
  const kiln::Buffer &b = plan_->memory.buffers[id];
  QStringList producers, consumers;
  int64_t firstWave = -1, lastWave = -1;
  auto name = [&](const kiln::Command &c) {
    return c.kind == kiln::CommandKind::Dispatch ? QStringLiteral("dispatch %1 (command %2)").arg(c.dispatch).arg(c.index)
                                                 : QStringLiteral("%1 (command %2)").arg(kiln::toString(c.kind)).arg(c.index);
  };
  for (const kiln::Command &c : plan_->schedule.commands)
    for (const kiln::BindingRef &r : c.bindings)
      if (r.buffer == id) {
        (r.write ? producers : consumers) << name(c);
        if (firstWave < 0)
          firstWave = c.wave;
        lastWave = c.wave;
        break;
      }
  QString alias = b.aliasOf >= 0 ? tr("\nalias of buffer %1").arg(b.aliasOf) : QString();
  for (const kiln::StateVariable &v : plan_->state)
    if (v.buffer == id)
      alias += tr("\npersistent: state variable '%1', carried from one invocation to the next")
                   .arg(QString::fromStdString(v.name));
  return tr("buffer %1: %2, %3 (%4 bytes) at offset %5%6\nproducer: %7\nconsumers: %8\nlives commands %9..%10 (waves %11..%12)")
      .arg(b.id).arg(QString::fromStdString(b.type), formatBytes(b.bytes)).arg(b.bytes).arg(b.offset).arg(alias)
      .arg(producers.isEmpty() ? tr("none") : producers.join(", "))
      .arg(consumers.isEmpty() ? tr("none") : consumers.join(", "))
      .arg(b.firstCommand).arg(b.lastCommand).arg(firstWave).arg(lastWave);
}

void MemoryView::highlight(int64_t dispatch) {
  if (!plan_)
    return;
  std::set<int64_t> bound;
  for (const kiln::Command &c : plan_->schedule.commands)
    if (dispatch >= 0 && c.kind == kiln::CommandKind::Dispatch && c.dispatch == dispatch)
      for (const kiln::BindingRef &r : c.bindings)
        bound.insert(r.buffer);
  QPalette pal = palette();
  for (size_t i = 0; i < rects_.size(); ++i) {
    bool on = bound.count(buffers_[i]) > 0;
    highlighted_[i] = on;
    QColor c = rects_[i]->brush().color();
    rects_[i]->setPen(on ? QPen(pal.color(QPalette::Highlight), 3) : QPen(c.darker(150), 0));
  }
  plot_->replot();
}

std::vector<int64_t> MemoryView::highlightedBuffers() const {
  std::vector<int64_t> out;
  for (size_t i = 0; i < rects_.size(); ++i)
    if (highlighted_[i])
      out.push_back(buffers_[i]);
  return out;
}

} // namespace kiln::views
