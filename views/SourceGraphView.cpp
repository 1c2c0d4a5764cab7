//===- SourceGraphView.cpp - The model's own graph, beside the plan -----===//
#include "SourceGraphView.h"
#include "PlanModels.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QSplitter>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>

namespace kiln::views {

SourceGraphView::SourceGraphView(QWidget *parent) : GraphCanvas(parent) {
  setAccessibleName(tr("Source graph"));
}

void SourceGraphView::setDocument(std::shared_ptr<const ModelDocument> doc) {
  if (doc->path != path_) {
    path_ = doc->path;
    graph_.reset();
    graphPath_ = doc->isArtifact ? path_ : QString(); // an artifact: none comes
    note_ = doc->isArtifact
                ? tr("A .kiln artifact keeps no source graph: open the model it was built from.")
                : tr("Reading the model\u2026");
    picked_ = -1;
    plan_ = doc->plan;
    map_ = kiln::sourceDispatchMap(*plan_);
    rebuild();
    emit operatorPicked(-1);
    return;
  }
  if (doc->plan != plan_) {
    plan_ = doc->plan;
    map_ = kiln::sourceDispatchMap(*plan_);
    highlightNodes(GraphNode::Operator, {}, false);
  }
}

void SourceGraphView::clear() {
  path_.clear();
  plan_.reset();
  graph_.reset();
  graphPath_.clear();
  note_.clear();
  map_ = {};
  picked_ = -1;
  rebuild();
  emit operatorPicked(-1);
}

void SourceGraphView::setSourceGraph(const QString &path,
                                     std::shared_ptr<const kiln::SourceGraph> graph,
                                     const QString &note) {
  if (path != path_)
    return;
  graph_ = std::move(graph);
  graphPath_ = path;
  note_ = graph_ ? QString::fromStdString(graph_->note) : note;
  picked_ = -1;
  rebuild();
  readableView();
  // The dispatch selected before the graph came.
  if (selection_ && selection_->currentIndex().isValid())
    if (auto *m = qobject_cast<const DispatchListModel *>(selection_->model()))
      followDispatch(m->dispatchAt(selection_->currentIndex().row()));
  emit operatorPicked(picked_);
}

void SourceGraphView::setSelectionModel(QItemSelectionModel *selection) {
  selection_ = followDispatchSelection(this, selection_, selection,
                                       [this](int64_t id) { followDispatch(id); });
}

void SourceGraphView::setCollapsed(bool collapsed) {
  if (collapsed == collapsed_)
    return;
  collapsed_ = collapsed;
  std::vector<int64_t> keep = highlightedOperators();
  rebuild();
  readableView();
  highlightNodes(GraphNode::Operator, keep, true);
}

void SourceGraphView::rebuild() {
  showLayout(graph_ ? layoutSourceGraph(*graph_, collapsed_, font()) : GraphLayout{});
}

int SourceGraphView::operatorNodeCount() const {
  return int(std::count_if(layout().nodes.begin(), layout().nodes.end(),
                           [](const GraphNode &n) { return n.kind == GraphNode::Operator; }));
}

QRectF SourceGraphView::operatorRect(int64_t sourceIndex) const {
  int i = nodeIndex(GraphNode::Operator, sourceIndex);
  return i < 0 ? QRectF() : layout().nodes[i].rect;
}

void SourceGraphView::followDispatch(int64_t id) {
  const std::vector<int64_t> &ops = map_.operatorsOf(id);
  // A click keeps the view where it is (the node is under the mouse).
  highlightNodes(GraphNode::Operator, ops, !picking_);
  if (!picking_ && std::find(ops.begin(), ops.end(), picked_) == ops.end())
    pick(ops.empty() ? -1 : ops.front());
}

void SourceGraphView::pick(int64_t sourceIndex) {
  picked_ = sourceIndex;
  emit operatorPicked(sourceIndex);
}

void SourceGraphView::selectOperator(qint64 sourceIndex) {
  if (nodeIndex(GraphNode::Operator, sourceIndex) < 0)
    return;
  pick(sourceIndex);
  const std::vector<int64_t> &dispatches = map_.dispatchesOf(sourceIndex);
  auto *m = selection_ ? qobject_cast<const DispatchListModel *>(selection_->model()) : nullptr;
  if (dispatches.empty() || !m) {
    highlightNodes(GraphNode::Operator,
                   dispatches.empty() ? std::vector<int64_t>{sourceIndex}
                                      : map_.operatorsOf(dispatches.front()),
                   false);
    return;
  }
  picking_ = true;
  bool first = true;
  for (int64_t d : dispatches) {
    int row = m->rowOfDispatch(d);
    if (row < 0)
      continue;
    if (first)
      selection_->setCurrentIndex(m->index(row, 0),
                                  QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    else
      selection_->select(m->index(row, 0), QItemSelectionModel::Select | QItemSelectionModel::Rows);
    first = false;
  }
  picking_ = false;
  // The current dispatch may not have changed (another of its operators).
  highlightNodes(GraphNode::Operator, map_.operatorsOf(dispatches.front()), false);
}

bool SourceGraphView::nodeClicked(int node) {
  if (layout().nodes[node].kind != GraphNode::Operator)
    return false;
  selectOperator(layout().nodes[node].id);
  return true;
}

// --- SourceGraphPanel ---------------------------------------------------------------

SourceGraphPanel::SourceGraphPanel(QWidget *parent)
    : QWidget(parent), view_(new SourceGraphView(this)), details_(new QTreeWidget(this)),
      splitter_(new QSplitter(this)) {
  auto *bar = new QHBoxLayout;
  bar->setContentsMargins(4, 4, 4, 0);
  note_ = new QLabel(this);
  note_->setWordWrap(true);
  note_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  bar->addWidget(note_, 1);
  addZoomButtons(bar, view_);
  collapsed_ = new QCheckBox(tr("Collapsed"), this);
  collapsed_->setToolTip(tr("Operator types only and no edge labels, for large graphs"));
  bar->addWidget(collapsed_);
  connect(collapsed_, &QCheckBox::toggled, view_, &SourceGraphView::setCollapsed);

  details_->setColumnCount(2);
  details_->setHeaderLabels({tr("Property"), tr("Value")});
  details_->setAccessibleName(tr("Source operator"));
  details_->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  details_->setTextElideMode(Qt::ElideMiddle);
  splitter_->addWidget(view_);
  splitter_->addWidget(details_);
  splitter_->setStretchFactor(0, 3);
  splitter_->setStretchFactor(1, 2);
  splitter_->setChildrenCollapsible(false);
  connect(view_, &SourceGraphView::operatorPicked, this, &SourceGraphPanel::showOperator);

  auto *layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  layout->addLayout(bar);
  layout->addWidget(splitter_, 1);
  showOperator(-1);
}

void SourceGraphPanel::resizeEvent(QResizeEvent *event) {
  QWidget::resizeEvent(event);
  // Side by side where there is width for both, stacked in a narrow dock;
  // the graph gets two thirds.
  const Qt::Orientation o = width() >= 900 ? Qt::Horizontal : Qt::Vertical;
  if (o != splitter_->orientation() || !sized_) {
    splitter_->setOrientation(o);
    const int total = o == Qt::Horizontal ? splitter_->width() : splitter_->height();
    if (total > 0) {
      splitter_->setSizes({total * 2 / 3, total - total * 2 / 3});
      sized_ = true;
    }
  }
}

namespace {

QTreeWidgetItem *row(QTreeWidgetItem *parent, const QString &name, const QString &value) {
  auto *item = new QTreeWidgetItem(parent, {name, value});
  item->setToolTip(1, value);
  return item;
}

/// Operand `slot`'s row: its shape and type (and for weights their
/// bytes); its name and quantization under it.
void tensorRow(QTreeWidgetItem *parent, const kiln::SourceGraph &g, int t, size_t slot) {
  if (t < 0) {
    row(parent, QString::number(slot), QObject::tr("(omitted)"));
    return;
  }
  const kiln::SourceTensor &tensor = g.tensors[t];
  QString value = QStringLiteral("%1 %2").arg(QString::fromStdString(kiln::sourceShapeText(tensor)),
                                              QString::fromStdString(tensor.elementType));
  if (tensor.isConstant)
    value += QObject::tr(", weights %1").arg(formatBytes(tensor.bytes));
  QTreeWidgetItem *item = row(parent, QString::number(slot), value);
  row(item, QObject::tr("name"), QString::fromStdString(tensor.name));
  if (tensor.quantization)
    row(item, QObject::tr("quantization"),
        QString::fromStdString(kiln::describeQuantization(*tensor.quantization)));
}

} // namespace

void SourceGraphPanel::showOperator(int64_t sourceIndex) {
  details_->clear();
  const kiln::SourceGraph *g = view_->sourceGraph();
  note_->setText(view_->note());
  note_->setToolTip(view_->note());
  const kiln::SourceOperator *op = g ? g->findOperator(sourceIndex) : nullptr;
  if (!op) {
    auto *hint =
        new QTreeWidgetItem(details_, {g ? tr("Click an operator") : QString(), QString()});
    hint->setFirstColumnSpanned(true);
    return;
  }
  auto *top = new QTreeWidgetItem(details_, {tr("Operator"), QString::fromStdString(op->type)});
  row(top, tr("index"), QStringLiteral("#%1").arg(op->index));
  if (!op->name.empty())
    row(top, tr("name"), QString::fromStdString(op->name));
  QStringList dispatches;
  const kiln::CompilationPlan *plan = view_->plan();
  for (int64_t d : view_->dispatchMap().dispatchesOf(op->index)) {
    auto it = plan ? std::find_if(plan->dispatches.begin(), plan->dispatches.end(),
                                  [d](const kiln::Dispatch &x) { return x.id == d; })
                   : std::vector<kiln::Dispatch>::const_iterator();
    dispatches << (plan && it != plan->dispatches.end() ? QString::fromStdString(it->name)
                                                        : QString::number(d));
  }
  row(top, tr("dispatches"),
      dispatches.isEmpty() ? tr("none (folded or computed at compile time)")
                           : dispatches.join(QStringLiteral(", ")));
  if (!op->attributes.empty()) {
    auto *attrs =
        new QTreeWidgetItem(details_, {tr("Attributes"), QString::number(op->attributes.size())});
    for (const kiln::SourceAttribute &a : op->attributes)
      row(attrs, QString::fromStdString(a.name), QString::fromStdString(a.value));
  }
  auto *inputs = new QTreeWidgetItem(details_, {tr("Inputs"), QString::number(op->inputs.size())});
  for (size_t k = 0; k < op->inputs.size(); ++k)
    tensorRow(inputs, *g, op->inputs[k], k);
  auto *outputs =
      new QTreeWidgetItem(details_, {tr("Outputs"), QString::number(op->outputs.size())});
  for (size_t k = 0; k < op->outputs.size(); ++k)
    tensorRow(outputs, *g, op->outputs[k], k);
  details_->expandAll();
}

} // namespace kiln::views
