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

#include <algorithm>
#include <cmath>

namespace kiln::views {
namespace {

constexpr int kNodeKey = 0; // QGraphicsItem::data key: index in GraphLayout::nodes

/// A node box (dispatch, operator) or ellipse (input/output) with its text.
class NodeItem : public QGraphicsItem {
public:
  NodeItem(const GraphNode &node, int index, const QFont &font) : node_(node), font_(font) {
    setPos(node.rect.topLeft());
    setToolTip(node.tooltip);
    setData(kNodeKey, index);
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
    const bool box = node_.kind == GraphNode::Dispatch || node_.kind == GraphNode::Operator;
    QColor fill = pal.color(QPalette::Base);
    QColor border = pal.color(QPalette::Mid);
    if (!box)
      fill = pal.color(QPalette::AlternateBase);
    if (highlighted_) {
      border = pal.color(QPalette::Highlight);
      QColor h = pal.color(QPalette::Highlight);
      h.setAlpha(50);
      fill = h;
    }
    p->setPen(QPen(border, highlighted_ ? 3 : 1.2));
    p->setBrush(fill);
    if (box)
      p->drawRoundedRect(r, 4, 4);
    else
      p->drawEllipse(r);
    QFont bold = font_;
    bold.setBold(true);
    QFontMetricsF fm(font_), fmb(bold);
    p->setPen(pal.color(QPalette::Text));
    double y = box ? 5 : (r.height() - fmb.height() - node_.lines.size() * fm.height()) / 2;
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

// --- GraphCanvas ------------------------------------------------------------------

GraphCanvas::GraphCanvas(QWidget *parent) : QGraphicsView(parent) {
  setScene(new QGraphicsScene(this));
  setDragMode(QGraphicsView::ScrollHandDrag);
  setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
  setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
  // A graph smaller than the view sits at the top: no blank space above
  // the inputs.
  setAlignment(Qt::AlignHCenter | Qt::AlignTop);
  setFocusPolicy(Qt::StrongFocus);
  setToolTip(QString()); // items carry their own
}

void GraphCanvas::showLayout(GraphLayout layout) {
  scene()->clear();
  items_.clear();
  highlighted_.clear();
  layout_ = std::move(layout);
  QFont f = font();
  QPalette pal = palette();
  QColor edgeColor = pal.color(QPalette::Dark);
  QColor labelColor = pal.color(QPalette::Text);
  for (const GraphEdge &e : layout_.edges) {
    auto *path = scene()->addPath(e.path, QPen(edgeColor, 1.2));
    path->setToolTip(e.tooltip);
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
  }
  for (size_t i = 0; i < layout_.nodes.size(); ++i) {
    auto *item = new NodeItem(layout_.nodes[i], int(i), f);
    scene()->addItem(item);
    items_.push_back(item);
  }
  scene()->setSceneRect(layout_.nodes.empty() ? QRectF()
                                              : layout_.bounds.adjusted(-20, -20, 20, 20));
}

int GraphCanvas::nodeIndex(GraphNode::Kind kind, int64_t id) const {
  for (size_t i = 0; i < layout_.nodes.size(); ++i)
    if (layout_.nodes[i].kind == kind && layout_.nodes[i].id == id)
      return int(i);
  return -1;
}

int GraphCanvas::nodeAt(const QPointF &scenePos) const {
  for (QGraphicsItem *item : scene()->items(scenePos)) {
    QVariant v = item->data(kNodeKey);
    if (v.isValid())
      return v.toInt();
  }
  return -1;
}

void GraphCanvas::highlightNodes(GraphNode::Kind kind, const std::vector<int64_t> &ids,
                                 bool reveal) {
  for (int i : highlighted_)
    static_cast<NodeItem *>(items_[i])->setHighlighted(false);
  highlighted_.clear();
  int first = -1;
  for (int64_t id : ids) {
    int i = nodeIndex(kind, id);
    if (i < 0)
      continue;
    highlighted_.insert(i);
    static_cast<NodeItem *>(items_[i])->setHighlighted(true);
    if (first < 0)
      first = i;
  }
  // Scrolling to the selection leaves the readable view: later resizes
  // keep the selection where it is.
  if (reveal && first >= 0)
    ensureVisible(items_[first], 40, 40);
}

std::vector<int64_t> GraphCanvas::highlightedNodes(GraphNode::Kind kind) const {
  std::vector<int64_t> ids;
  for (int i : highlighted_)
    if (layout_.nodes[i].kind == kind)
      ids.push_back(layout_.nodes[i].id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

QRectF GraphCanvas::visibleSceneRect() const {
  return mapToScene(viewport()->rect()).boundingRect();
}

void GraphCanvas::readableView() {
  // A view without its size yet (hidden, or laid out later) waits for it.
  if (!isVisible() || viewport()->width() < 50 || viewport()->height() < 50) {
    readablePending_ = true;
    return;
  }
  readablePending_ = false;
  applyReadableView();
  readableShown_ = true;
  readableSize_ = viewport()->size();
}

void GraphCanvas::applyReadableView() {
  QRectF r = scene()->sceneRect();
  if (scene()->items().isEmpty() || r.isEmpty())
    return;
  scrolling_ = true;
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
  } else {
    // Taller or wider graphs: the whole width where the text stays legible
    // (enlarged at most 1.25x, so that more nodes show), scrolled to the
    // inputs at the top.
    double s = std::clamp(vp.width() / r.width(), legible, 1.25 * legible);
    scale(s, s);
    // Horizontally the graph's middle, or the inputs' where that leaves
    // them out (a wide graph's input need not sit over its centre);
    // vertically, the top.
    QRectF inputs;
    for (const GraphNode &n : layout_.nodes)
      if (n.kind == GraphNode::Input)
        inputs = inputs.isNull() ? n.rect : inputs.united(n.rect);
    double x = r.center().x();
    const double half = vp.width() / (2 * s);
    if (!inputs.isNull() && inputs.width() * s <= vp.width() &&
        (inputs.left() < x - half || inputs.right() > x + half))
      x = inputs.center().x();
    centerOn(QPointF(x, r.top() + vp.height() / (2 * s)));
    verticalScrollBar()->setValue(verticalScrollBar()->minimum());
  }
  scrolling_ = false;
}

void GraphCanvas::resizeEvent(QResizeEvent *event) {
  QGraphicsView::resizeEvent(event);
  if (scrolling_)
    return;
  // Scroll bars coming and going (a scroll bar's width) do not count: the
  // readable view already leaves room for them.
  const int bar = style()->pixelMetric(QStyle::PM_ScrollBarExtent, nullptr, this);
  const QSize change = viewport()->size() - readableSize_;
  if (readablePending_ || (readableShown_ && (std::abs(change.width()) > bar + 2 ||
                                              std::abs(change.height()) > bar + 2)))
    readableView();
}

void GraphCanvas::showEvent(QShowEvent *event) {
  QGraphicsView::showEvent(event);
  if (readablePending_)
    readableView();
}

void GraphCanvas::scrollContentsBy(int dx, int dy) {
  QGraphicsView::scrollContentsBy(dx, dy);
  if (!scrolling_ && isVisible())
    readableShown_ = false; // the user's pan: resizes keep it
}

void GraphCanvas::fitToWindow() { readableView(); }

void GraphCanvas::zoomIn() {
  readableShown_ = false;
  scale(1.25, 1.25);
}
void GraphCanvas::zoomOut() {
  readableShown_ = false;
  scale(0.8, 0.8);
}

void GraphCanvas::wheelEvent(QWheelEvent *event) {
  if (event->modifiers() & Qt::ControlModifier) {
    readableShown_ = false;
    double factor = std::pow(1.0015, event->angleDelta().y());
    scale(factor, factor);
    event->accept();
    return;
  }
  QGraphicsView::wheelEvent(event);
}

void GraphCanvas::mousePressEvent(QMouseEvent *event) {
  if (event->button() == Qt::LeftButton) {
    int node = nodeAt(mapToScene(event->position().toPoint()));
    if (node >= 0 && nodeClicked(node)) {
      event->accept();
      return;
    }
  }
  QGraphicsView::mousePressEvent(event);
}

void GraphCanvas::keyPressEvent(QKeyEvent *event) {
  if (event->key() == Qt::Key_Plus || event->key() == Qt::Key_Equal)
    return zoomIn();
  if (event->key() == Qt::Key_Minus)
    return zoomOut();
  if (event->key() == Qt::Key_0 || event->key() == Qt::Key_Home)
    return fitToWindow();
  QGraphicsView::keyPressEvent(event);
}

// --- GraphView ----------------------------------------------------------------------

GraphView::GraphView(QWidget *parent) : GraphCanvas(parent) {
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
  dispatchNodes_ = 0;
  edgeCount_ = 0;
  if (!plan_) {
    showLayout({});
    return;
  }
  GraphLayout layout = layoutPlan(*plan_, collapsed_, font());
  for (const GraphNode &n : layout.nodes)
    dispatchNodes_ += n.kind == GraphNode::Dispatch;
  edgeCount_ = int(layout.edges.size());
  showLayout(std::move(layout));
}

QRectF GraphView::nodeRect(int64_t id) const {
  int i = nodeIndex(GraphNode::Dispatch, id);
  return i < 0 ? QRectF() : layout().nodes[i].rect;
}

int64_t GraphView::dispatchAt(const QPointF &scenePos) const {
  int i = nodeAt(scenePos);
  return i >= 0 && layout().nodes[i].kind == GraphNode::Dispatch ? layout().nodes[i].id : -1;
}

void GraphView::highlight(int64_t id, bool center) {
  selected_ = nodeIndex(GraphNode::Dispatch, id) >= 0 ? id : -1;
  highlightNodes(GraphNode::Dispatch, {selected_}, center);
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
      if (QRectF node = nodeRect(d.id); !node.isEmpty())
        centerOn(node.center());
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
      if (QRectF node = nodeRect(d.id); !node.isEmpty())
        centerOn(node.center());
      return true;
    }
  }
  return false;
}

bool GraphView::nodeClicked(int node) {
  if (layout().nodes[node].kind != GraphNode::Dispatch)
    return false;
  selectDispatch(layout().nodes[node].id);
  return true;
}

void GraphView::keyPressEvent(QKeyEvent *event) {
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
  GraphCanvas::keyPressEvent(event);
}

void addZoomButtons(QHBoxLayout *bar, GraphCanvas *canvas) {
  auto button = [bar, canvas](const QString &text, const QString &tip, auto slot) {
    auto *b = new QToolButton(canvas->parentWidget());
    b->setText(text);
    b->setToolTip(tip);
    b->setAutoRaise(true);
    QObject::connect(b, &QToolButton::clicked, canvas, slot);
    bar->addWidget(b);
  };
  button(GraphCanvas::tr("Fit"),
         GraphCanvas::tr(
             "Fit the graph's width to the window, text at least at the UI font's size, the inputs "
             "at the top (0, Ctrl+0)"),
         &GraphCanvas::fitToWindow);
  button(GraphCanvas::tr("+"), GraphCanvas::tr("Zoom in (+, Ctrl+wheel)"), &GraphCanvas::zoomIn);
  button(GraphCanvas::tr("\u2212"), GraphCanvas::tr("Zoom out (-, Ctrl+wheel)"),
         &GraphCanvas::zoomOut);
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
  search_->setToolTip(tr("Selects the next dispatch whose id, name or fused operators contain the "
                         "text (Enter for the next)"));
  bar->addWidget(search_, 1);
  status_ = new QLabel(this);
  bar->addWidget(status_);
  addZoomButtons(bar, view_);
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
