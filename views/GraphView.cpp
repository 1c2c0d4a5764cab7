//===- GraphView.cpp - The dispatch graph in a QGraphicsView -------------===//
#include "GraphView.h"
#include "PlanModels.h"

#include <QApplication>
#include <QCheckBox>
#include <QFontInfo>
#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QHBoxLayout>
#include <QItemSelectionModel>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QPainter>
#include <QRegularExpression>
#include <QScrollBar>
#include <QStyle>
#include <QStyleOptionGraphicsItem>
#include <QToolButton>
#include <QVBoxLayout>
#include <QWheelEvent>

#include <cmath>

namespace kiln::views {
namespace {

constexpr int kDispatchKey = 0; // QGraphicsItem::data key: dispatch id

/// A node box (dispatch) or ellipse (input/output) with its text.
class NodeItem : public QGraphicsItem {
public:
  NodeItem(const GraphNode &node, const QFont &font) : node_(node), font_(font) {
    setPos(node.rect.topLeft());
    setToolTip(node.tooltip);
    setData(kDispatchKey, node.kind == GraphNode::Dispatch ? QVariant::fromValue<qint64>(node.id) : QVariant());
    setAcceptHoverEvents(true);
    setZValue(1);
  }
  QRectF boundingRect() const override { return QRectF(QPointF(0, 0), node_.rect.size()).adjusted(-2, -2, 2, 2); }
  void setHighlighted(bool on) {
    highlighted_ = on;
    update();
  }
  void paint(QPainter *p, const QStyleOptionGraphicsItem *, QWidget *widget) override {
    QPalette pal = widget ? widget->palette() : QApplication::palette();
    QRectF r(QPointF(0, 0), node_.rect.size());
    p->setRenderHint(QPainter::Antialiasing);
    QColor fill = pal.color(QPalette::Base);
    QColor border = pal.color(QPalette::Mid);
    if (node_.kind != GraphNode::Dispatch)
      fill = pal.color(QPalette::AlternateBase);
    if (highlighted_) {
      border = pal.color(QPalette::Highlight);
      QColor h = pal.color(QPalette::Highlight);
      h.setAlpha(50);
      fill = h;
    }
    p->setPen(QPen(border, highlighted_ ? 3 : 1.2));
    p->setBrush(fill);
    if (node_.kind == GraphNode::Dispatch)
      p->drawRoundedRect(r, 4, 4);
    else
      p->drawEllipse(r);
    QFont bold = font_;
    bold.setBold(true);
    QFontMetricsF fm(font_), fmb(bold);
    p->setPen(pal.color(QPalette::Text));
    double y = (node_.kind == GraphNode::Dispatch ? 0 : (r.height() - fmb.height() - node_.lines.size() * fm.height()) / 2) +
               (node_.kind == GraphNode::Dispatch ? 5 : 0);
    p->setFont(bold);
    p->drawText(QRectF(0, y, r.width(), fmb.height()), Qt::AlignHCenter | Qt::AlignVCenter, node_.title);
    y += fmb.height();
    p->setFont(font_);
    for (const QString &l : node_.lines) {
      p->drawText(QRectF(0, y, r.width(), fm.height()), Qt::AlignHCenter | Qt::AlignVCenter, l);
      y += fm.height();
    }
  }

private:
  GraphNode node_;
  QFont font_;
  bool highlighted_ = false;
};

} // namespace

GraphView::GraphView(QWidget *parent) : QGraphicsView(parent) {
  setScene(new QGraphicsScene(this));
  setDragMode(QGraphicsView::ScrollHandDrag);
  setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
  setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
  setFocusPolicy(Qt::StrongFocus);
  setToolTip(QString()); // items carry their own
  setAccessibleName(tr("Dispatch graph"));
}

void GraphView::setPlan(std::shared_ptr<const kiln::CompilationPlan> plan) {
  plan_ = std::move(plan);
  selected_ = -1;
  rebuild();
  readableView();
}

void GraphView::setDocument(std::shared_ptr<const ModelDocument> doc) {
  if (doc->plan != plan_)
    setPlan(doc->plan);
}

void GraphView::clear() { setPlan(nullptr); }

void GraphView::readableView() {
  QRectF r = scene()->sceneRect();
  if (scene()->items().isEmpty() || r.isEmpty())
    return;
  // Node text is drawn in this view's font: a scale of `legible` shows it
  // at the UI font's point size.
  const double legible = QFontInfo(QApplication::font()).pointSizeF() / QFontInfo(font()).pointSizeF();
  const double bar = style()->pixelMetric(QStyle::PM_ScrollBarExtent, nullptr, this);
  QSizeF vp = viewport()->size();
  // Without scroll bars shown yet, leave room for the ones a tall graph gets.
  if (!verticalScrollBar()->isVisible())
    vp.rwidth() -= bar;
  if (!horizontalScrollBar()->isVisible())
    vp.rheight() -= bar;
  double fit = std::min(vp.width() / r.width(), vp.height() / r.height());
  resetTransform();
  if (fit >= legible) {
    // The whole graph at a legible size, enlarged at most 1.5x.
    double s = std::min(fit, 1.5 * legible);
    scale(s, s);
    centerOn(r.center());
    return;
  }
  // Taller or wider graphs: the whole width where the text stays legible
  // (enlarged at most 1.25x, so that more nodes show), scrolled to the
  // inputs at the top.
  double s = std::clamp(vp.width() / r.width(), legible, 1.25 * legible);
  scale(s, s);
  centerOn(QPointF(r.center().x(), r.top() + vp.height() / (2 * s)));
}

void GraphView::setSelectionModel(QItemSelectionModel *selection) {
  selection_ = followDispatchSelection(this, selection_, selection,
                                       [this](int64_t id) { highlight(id, true); });
  if (selection_)
    connect(selection_->model(), &QAbstractItemModel::modelReset, this, [this] { highlight(-1, false); });
}

void GraphView::setCollapsed(bool collapsed) {
  if (collapsed == collapsed_)
    return;
  collapsed_ = collapsed;
  int64_t keep = selected_;
  rebuild();
  readableView();
  highlight(keep, true);
}

void GraphView::rebuild() {
  scene()->clear();
  dispatchItems_.clear();
  edgeCount_ = 0;
  layout_ = {};
  if (!plan_)
    return;
  QFont f = font();
  layout_ = layoutPlan(*plan_, collapsed_, f);
  QPalette pal = palette();
  QColor edgeColor = pal.color(QPalette::Dark);
  QColor labelColor = pal.color(QPalette::Text);
  for (const GraphEdge &e : layout_.edges) {
    auto *path = scene()->addPath(e.path, QPen(edgeColor, 1.2));
    path->setToolTip(QStringLiteral("buffer %1, %2").arg(e.buffer).arg(formatBytes(e.bytes)));
    // Arrow head.
    QLineF shaft(e.headFrom, e.head);
    if (shaft.length() < 0.1 && !e.path.isEmpty())
      shaft = QLineF(e.path.pointAtPercent(0.97), e.path.pointAtPercent(1.0));
    if (shaft.length() > 0.01) {
      double angle = std::atan2(shaft.dy(), shaft.dx());
      QPointF tip = e.head == QPointF() ? shaft.p2() : e.head;
      QPolygonF head;
      head << tip << tip - QPointF(std::cos(angle - 0.4) * 8, std::sin(angle - 0.4) * 8)
           << tip - QPointF(std::cos(angle + 0.4) * 8, std::sin(angle + 0.4) * 8);
      scene()->addPolygon(head, QPen(edgeColor), QBrush(edgeColor));
    }
    if (!e.label.isEmpty()) {
      auto *t = scene()->addSimpleText(e.label);
      QFont lf = f;
      lf.setPointSizeF(std::max(6.0, f.pointSizeF() * 0.85));
      t->setFont(lf);
      t->setBrush(labelColor);
      QRectF br = t->boundingRect();
      t->setPos(e.labelPos - QPointF(br.width() / 2, br.height() / 2));
    }
    ++edgeCount_;
  }
  for (const GraphNode &n : layout_.nodes) {
    auto *item = new NodeItem(n, f);
    scene()->addItem(item);
    if (n.kind == GraphNode::Dispatch)
      dispatchItems_[n.id] = item;
  }
  scene()->setSceneRect(layout_.bounds.adjusted(-20, -20, 20, 20));
}

QRectF GraphView::nodeRect(int64_t id) const {
  auto it = dispatchItems_.find(id);
  return it == dispatchItems_.end() ? QRectF() : it->second->sceneBoundingRect();
}

int64_t GraphView::dispatchAt(const QPointF &scenePos) const {
  for (QGraphicsItem *item : scene()->items(scenePos)) {
    QVariant v = item->data(kDispatchKey);
    if (v.isValid())
      return v.toLongLong();
  }
  return -1;
}

void GraphView::highlight(int64_t id, bool center) {
  if (selected_ >= 0)
    if (auto it = dispatchItems_.find(selected_); it != dispatchItems_.end())
      static_cast<NodeItem *>(it->second)->setHighlighted(false);
  selected_ = -1;
  auto it = dispatchItems_.find(id);
  if (it == dispatchItems_.end())
    return;
  selected_ = id;
  static_cast<NodeItem *>(it->second)->setHighlighted(true);
  if (center)
    ensureVisible(it->second, 40, 40);
}

void GraphView::selectDispatch(int64_t id) {
  emit dispatchActivated(id);
  if (selection_) {
    auto *m = qobject_cast<const DispatchListModel *>(selection_->model());
    int row = m ? m->rowOfDispatch(id) : -1;
    if (row >= 0) {
      selection_->setCurrentIndex(m->index(row, 0), QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
      return;
    }
  }
  highlight(id, true);
}

void GraphView::fitToWindow() { readableView(); }

void GraphView::zoomIn() { scale(1.25, 1.25); }
void GraphView::zoomOut() { scale(0.8, 0.8); }

bool GraphView::find(const QString &text) {
  if (!plan_ || text.isEmpty())
    return false;
  const auto &ds = plan_->dispatches;
  // An exact name or id wins ("main_dispatch_4" is not main_dispatch_40).
  bool isNumber = false;
  int64_t number = text.trimmed().toLongLong(&isNumber);
  for (const kiln::Dispatch &d : ds)
    if (QString::fromStdString(d.name).compare(text.trimmed(), Qt::CaseInsensitive) == 0 || (isNumber && d.id == number)) {
      if (d.id != selected_)
        selectDispatch(d.id);
      if (auto it = dispatchItems_.find(d.id); it != dispatchItems_.end())
        centerOn(it->second);
      return true;
    }
  // Operators are written "CONV_2D #2" (kiln::sourceOpText); "CONV_2D#2",
  // as in IR locations, finds them too.
  QString needle = text;
  needle.replace(QRegularExpression(QStringLiteral("\\s*#")), QStringLiteral(" #"));
  size_t start = 0;
  for (size_t i = 0; i < ds.size(); ++i)
    if (ds[i].id == selected_)
      start = i + 1;
  for (size_t k = 0; k < ds.size(); ++k) {
    const kiln::Dispatch &d = ds[(start + k) % ds.size()];
    QString hay = QStringLiteral("%1 %2 %3").arg(d.id).arg(QString::fromStdString(d.name), opsText(d));
    if (hay.contains(needle, Qt::CaseInsensitive)) {
      selectDispatch(d.id);
      if (auto it = dispatchItems_.find(d.id); it != dispatchItems_.end())
        centerOn(it->second);
      return true;
    }
  }
  return false;
}

void GraphView::wheelEvent(QWheelEvent *event) {
  if (event->modifiers() & Qt::ControlModifier) {
    double factor = std::pow(1.0015, event->angleDelta().y());
    scale(factor, factor);
    event->accept();
    return;
  }
  QGraphicsView::wheelEvent(event);
}

void GraphView::mousePressEvent(QMouseEvent *event) {
  if (event->button() == Qt::LeftButton) {
    int64_t id = dispatchAt(mapToScene(event->position().toPoint()));
    if (id >= 0) {
      selectDispatch(id);
      event->accept();
      return;
    }
  }
  QGraphicsView::mousePressEvent(event);
}

void GraphView::keyPressEvent(QKeyEvent *event) {
  if (event->key() == Qt::Key_Plus || event->key() == Qt::Key_Equal)
    return zoomIn();
  if (event->key() == Qt::Key_Minus)
    return zoomOut();
  if (event->key() == Qt::Key_0 || event->key() == Qt::Key_Home)
    return fitToWindow();
  // Up/Down walk the dispatches in order.
  if ((event->key() == Qt::Key_Down || event->key() == Qt::Key_Up) && plan_ && !plan_->dispatches.empty()) {
    const auto &ds = plan_->dispatches;
    int pos = -1;
    for (size_t i = 0; i < ds.size(); ++i)
      if (ds[i].id == selected_)
        pos = int(i);
    pos = event->key() == Qt::Key_Down ? std::min<int>(pos + 1, int(ds.size()) - 1) : std::max(pos - 1, 0);
    selectDispatch(ds[pos].id);
    return;
  }
  QGraphicsView::keyPressEvent(event);
}

GraphPanel::GraphPanel(QWidget *parent) : QWidget(parent), view_(new GraphView(this)) {
  auto *bar = new QHBoxLayout;
  bar->setContentsMargins(4, 4, 4, 0);
  search_ = new QLineEdit(this);
  search_->setPlaceholderText(tr("Find dispatch or operator (Ctrl+F)"));
  search_->setClearButtonEnabled(true);
  // Room for a name such as "main_dispatch_12" or "CONV_2D #12" however
  // narrow the window gets.
  search_->setMinimumWidth(search_->fontMetrics().horizontalAdvance(QStringLiteral("main_dispatch_12")) + 40);
  search_->setToolTip(tr("Selects the next dispatch whose id, name or fused operators contain the text (Enter for the next)"));
  auto button = [this, bar](const QString &text, const QString &tip, auto slot) {
    auto *b = new QToolButton(this);
    b->setText(text);
    b->setToolTip(tip);
    b->setAutoRaise(true);
    connect(b, &QToolButton::clicked, view_, slot);
    bar->addWidget(b);
    return b;
  };
  bar->addWidget(search_, 1);
  status_ = new QLabel(this);
  bar->addWidget(status_);
  button(tr("Fit"), tr("Fit the graph's width to the window, text at least at the UI font's size (0, Ctrl+0)"),
         &GraphView::fitToWindow);
  button(tr("+"), tr("Zoom in (+, Ctrl+wheel)"), &GraphView::zoomIn);
  button(tr("\u2212"), tr("Zoom out (-, Ctrl+wheel)"), &GraphView::zoomOut);
  collapsed_ = new QCheckBox(tr("Collapsed"), this);
  collapsed_->setToolTip(tr("One line per dispatch and no edge labels, for large graphs"));
  bar->addWidget(collapsed_);
  connect(collapsed_, &QCheckBox::toggled, view_, &GraphView::setCollapsed);
  connect(search_, &QLineEdit::returnPressed, this, [this] {
    bool found = view_->find(search_->text());
    status_->setText(found || search_->text().isEmpty() ? QString() : tr("no match"));
  });
  connect(search_, &QLineEdit::textEdited, this, [this](const QString &t) {
    bool found = view_->find(t);
    status_->setText(found || t.isEmpty() ? QString() : tr("no match"));
  });
  note_ = new QLabel(this);
  note_->setWordWrap(true);
  note_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  note_->setContentsMargins(8, 4, 8, 4);
  note_->hide();
  auto *layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  layout->addLayout(bar);
  layout->addWidget(note_);
  layout->addWidget(view_, 1);
}

void GraphPanel::setNote(const QString &text) {
  note_->setText(text);
  note_->setVisible(!text.isEmpty());
}

} // namespace kiln::views
