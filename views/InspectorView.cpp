//===- InspectorView.cpp - The selected dispatch in detail ---------------===//
#include "InspectorView.h"
#include "IrHighlighter.h"
#include "PlanModels.h"

#include "kiln/Profile.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QStyledItemDelegate>
#include <QTextBlock>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <iterator>

namespace kiln::views {
namespace {

const kiln::EmitStage kStages[] = {kiln::EmitStage::Tosa,    kiln::EmitStage::Linalg, kiln::EmitStage::Dispatches,
                                   kiln::EmitStage::Buffers, kiln::EmitStage::LLVMIR, kiln::EmitStage::Asm};
const char *kStageNames[] = {"TOSA", "linalg", "dispatches", "buffers", "LLVM IR", "assembly"};

/// Sizes Value cells for their wrapped text: QTreeView asks its delegate
/// for a row's height without the column's width, so wrapped rows would
/// stay one line high.
class WrappingDelegate : public QStyledItemDelegate {
public:
  explicit WrappingDelegate(QTreeView *view) : QStyledItemDelegate(view), view_(view) {}
  QSize sizeHint(const QStyleOptionViewItem &option, const QModelIndex &index) const override {
    if (index.column() != 1) // the Property column sizes itself to its contents
      return QStyledItemDelegate::sizeHint(option, index);
    QStyleOptionViewItem wrapped = option;
    wrapped.rect = QRect(0, 0, view_->columnWidth(1), option.fontMetrics.height());
    return QStyledItemDelegate::sizeHint(wrapped, index);
  }

private:
  QTreeView *view_;
};

} // namespace

InspectorView::InspectorView(QWidget *parent)
    : QWidget(parent), tree_(new QTreeWidget(this)), stage_(new QComboBox(this)),
      find_(new QLineEdit(this)), whole_(new QCheckBox(tr("&Whole module"), this)),
      ir_(new QPlainTextEdit(this)), irStatus_(new QLabel(this)) {
  tree_->setColumnCount(2);
  tree_->setHeaderLabels({tr("Property"), tr("Value")});
  tree_->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  tree_->header()->setStretchLastSection(true);
  tree_->setAlternatingRowColors(true);
  // Long values (a binding, a kernel) wrap inside the Value column rather
  // than running off the dock; rows grow to fit when the dock is resized.
  tree_->setWordWrap(true);
  tree_->setItemDelegate(new WrappingDelegate(tree_));
  tree_->setTextElideMode(Qt::ElideNone);
  tree_->setUniformRowHeights(false);
  connect(
      tree_->header(), &QHeaderView::sectionResized, tree_,
      [this](int column) {
        if (column == 1)
          tree_->doItemsLayout();
      },
      Qt::QueuedConnection);
  tree_->setAccessibleName(tr("Dispatch properties"));
  for (const char *n : kStageNames)
    stage_->addItem(tr(n));
  stage_->setCurrentIndex(4); // LLVM IR: one function per dispatch
  stage_->setToolTip(tr("Pipeline stage whose IR is shown (computed in the background on first use)"));
  find_->setPlaceholderText(tr("Find in IR"));
  find_->setClearButtonEnabled(true);
  ir_->setReadOnly(true);
  ir_->setLineWrapMode(QPlainTextEdit::NoWrap);
  ir_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  ir_->setAccessibleName(tr("IR text"));
  highlighter_ = new IrHighlighter(ir_->document());
  whole_->setToolTip(tr("Show the whole module scrolled to the dispatch instead of its function only"));
  connect(whole_, &QCheckBox::toggled, this, [this] { showIr(); });

  auto *irPanel = new QWidget(this);
  auto *irBar = new QHBoxLayout;
  irBar->setContentsMargins(0, 0, 0, 0);
  auto *stageLabel = new QLabel(tr("&Stage:"), irPanel);
  stageLabel->setBuddy(stage_);
  irBar->addWidget(stageLabel);
  irBar->addWidget(stage_);
  irBar->addWidget(whole_);
  irBar->addWidget(find_, 1);
  find_->setMinimumWidth(find_->fontMetrics().horizontalAdvance(QStringLiteral("Find in IR____")));
  auto *irLayout = new QVBoxLayout(irPanel);
  irLayout->setContentsMargins(0, 0, 0, 0);
  irLayout->addLayout(irBar);
  irLayout->addWidget(ir_, 1);
  irLayout->addWidget(irStatus_); // under the text: the bar stays narrow
  irStatus_->setWordWrap(true);

  auto *split = new QSplitter(Qt::Vertical, this);
  split->addWidget(tree_);
  split->addWidget(irPanel);
  split->setStretchFactor(0, 2);
  split->setStretchFactor(1, 3);
  auto *layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(split);

  connect(stage_, &QComboBox::currentIndexChanged, this, [this] { requestIr(); });
  connect(find_, &QLineEdit::returnPressed, this, [this] {
    if (!ir_->find(find_->text())) {
      ir_->moveCursor(QTextCursor::Start);
      ir_->find(find_->text());
    }
  });
}

void InspectorView::setDocument(std::shared_ptr<const ModelDocument> doc) { reset(std::move(doc)); }

void InspectorView::clear() { reset(nullptr); }

void InspectorView::reset(std::shared_ptr<const ModelDocument> doc) {
  doc_ = std::move(doc);
  cache_.clear();
  ++generation_;
  emit irObsolete(generation_); // a running request stops at its next phase
  dispatch_ = -1;
  tree_->clear();
  ir_->clear();
  irStatus_->clear();
}

void InspectorView::setIr(const IrRequest &request, const QString &text) {
  const int stage =
      int(std::find(std::begin(kStages), std::end(kStages), request.stage) - std::begin(kStages));
  pending_ = -1;
  if (request.generation == generation_)
    cache_[stage] = text;
  if (request.generation == generation_ && stage == stage_->currentIndex())
    showIr();
  else
    requestIr(); // the user moved on meanwhile
}

void InspectorView::setSelectionModel(QItemSelectionModel *selection) {
  selection_ = followDispatchSelection(this, selection_, selection,
                                       [this](int64_t id) { showDispatch(id); });
}

void InspectorView::showDispatch(int64_t id) {
  dispatch_ = id;
  tree_->clear();
  if (!doc_ || !doc_->plan)
    return;
  const kiln::CompilationPlan &plan = *doc_->plan;
  const kiln::Dispatch *d = nullptr;
  for (const kiln::Dispatch &x : plan.dispatches)
    if (x.id == id)
      d = &x;
  if (!d) {
    ir_->clear();
    return;
  }
  auto item = [this](QTreeWidgetItem *parent, const QString &k, const QString &v) {
    auto *it = parent ? new QTreeWidgetItem(parent) : new QTreeWidgetItem(tree_);
    it->setText(0, k);
    it->setText(1, v);
    it->setToolTip(1, v);
    return it;
  };
  item(nullptr, tr("Dispatch"), QStringLiteral("%1 (id %2)").arg(QString::fromStdString(d->name)).arg(d->id));
  auto *ops = item(nullptr, tr("Operators"), QString::number(d->ops.size()));
  for (size_t i = 0; i < d->ops.size(); ++i)
    item(ops, tr("operator %1").arg(i + 1), opText(d->ops[i]));
  item(nullptr, tr("Workgroups"), gridText(*d));
  auto *loops = item(nullptr, tr("Tile sizes"), tilesText(*d));
  for (size_t i = 0; i < d->loopRanges.size(); ++i)
    item(loops, tr("loop %1").arg(i),
         tr("%1, range %2, tile %3")
             .arg(i < d->loopKinds.size() ? QString::fromStdString(d->loopKinds[i]) : QString())
             .arg(d->loopRanges[i])
             .arg(i < d->tileSizes.size() ? QString::number(d->tileSizes[i]) : QStringLiteral("?")));
  const bool integer = kiln::isIntegerDispatch(plan, *d);
  item(nullptr, integer ? tr("Integer operations") : tr("FLOPs"),
       QStringLiteral("%1 (%2)").arg(d->flops).arg(formatFlops(d->flops, integer)));
  auto *kernel =
      item(nullptr, tr("Kernel"), QString::fromStdString(kiln::describeDispatchKernel(plan, *d)));
  if (d->kernel.tileRows > 0) {
    item(kernel, tr("strategy"), QString::fromStdString(d->kernel.kind));
    item(kernel, tr("register tile"),
         tr("%1 x %2 vectors x %3 lanes (%4 accumulators)")
             .arg(d->kernel.tileRows).arg(d->kernel.tileVectors).arg(d->kernel.lanes)
             .arg(d->kernel.tileRows * d->kernel.tileVectors));
    item(kernel, tr("weight layout"), QString::fromStdString(d->kernel.weightLayout));
    item(kernel, integer ? tr("expected OP/cycle") : tr("expected FLOP/cycle"),
         QString::number(d->kernel.flopsPerCycle, 'g', 3));
  }
  if (kiln::entryPointOf(*d) != d->name)
    item(kernel, tr("entry point"),
         tr("%1 (identical kernel, compiled once)")
             .arg(QString::fromStdString(kiln::entryPointOf(*d))));
  item(nullptr, tr("Bytes read / written"), QStringLiteral("%1 / %2").arg(d->bytesRead).arg(d->bytesWritten));
  // The integer tensor the dispatch completes: its scale and zero point.
  if (const kiln::TensorQuantization *q = kiln::findQuantization(plan, d->outputTensor)) {
    auto *quant = item(nullptr, tr("Output quantization"), QString::fromStdString(kiln::describeQuantization(*q)));
    item(quant, tr("tensor"), QString::fromStdString(q->tensor));
    item(quant, tr("storage"), QString::fromStdString(q->storage));
  }
  // The quantization of the weights its operators read (per channel: count,
  // min and max scale).
  for (const kiln::TensorQuantization *w : kiln::weightsOf(plan, *d)) {
    auto *weights = item(nullptr, tr("Weights quantization"), QString::fromStdString(kiln::describeQuantization(*w)));
    item(weights, tr("tensor"), QString::fromStdString(w->tensor));
    item(weights, tr("storage"), QString::fromStdString(w->storage));
  }
  for (const kiln::Command &c : plan.schedule.commands) {
    if (c.kind != kiln::CommandKind::Dispatch || c.dispatch != id)
      continue;
    auto *cmd = item(nullptr, tr("Command %1").arg(c.index), tr("wave %1, %2 bindings").arg(c.wave).arg(c.bindings.size()));
    for (size_t i = 0; i < c.bindings.size(); ++i) {
      const kiln::BindingRef &b = c.bindings[i];
      QString what;
      if (b.buffer >= 0 && b.buffer < (int64_t)plan.memory.buffers.size()) {
        const kiln::Buffer &buf = plan.memory.buffers[b.buffer];
        what = QStringLiteral("%1 %2").arg(kiln::toString(buf.kind)).arg(QString::fromStdString(buf.type));
        if (buf.kind == kiln::BufferKind::Transient)
          what += tr(" @ arena %1").arg(buf.offset);
        // A model output's own quantization (inputs: see the signature).
        if (buf.kind == kiln::BufferKind::Output && buf.index >= 0 &&
            buf.index < (int64_t)plan.outputs.size())
          if (const kiln::TensorQuantization *q = kiln::findQuantization(plan, plan.outputs[buf.index].name))
            what += QStringLiteral(", ") + QString::fromStdString(kiln::describeQuantization(*q));
      }
      item(cmd, tr("binding %1").arg(i),
           tr("%1 buffer %2 [%3, +%4) %5").arg(b.write ? tr("writes") : tr("reads")).arg(b.buffer).arg(b.offset)
               .arg(b.length).arg(what));
    }
  }
  if (!d->aliasedBindings.empty()) {
    QStringList l;
    for (int64_t a : d->aliasedBindings)
      l << QString::number(a);
    item(nullptr, tr("Aliased bindings"), l.join(", "));
  }
  tree_->expandAll();
  requestIr();
}

void InspectorView::requestIr() {
  if (!doc_ || dispatch_ < 0)
    return;
  if (doc_->isArtifact) {
    ir_->setPlainText(tr("// IR is not available for a .kiln artifact: open the model it was compiled from."));
    irStatus_->clear();
    return;
  }
  int stage = stage_->currentIndex();
  if (cache_.count(stage))
    return showIr();
  irStatus_->setText(tr("compiling to %1\u2026").arg(stage_->currentText()));
  if (pending_ >= 0)
    return; // the finished handler asks again
  pending_ = stage;
  emit irRequested(IrRequest{doc_, kStages[stage], generation_});
}

QString InspectorView::functionText(const QString &module, const QString &name) {
  // MLIR: "func.func @name(" .. the "}" at the same indentation.
  // LLVM IR: "define ... @name(" .. "}" at column 0.
  // Assembly: "name:" .. ".size name,".
  auto lineStart = [&](qsizetype pos) { return module.lastIndexOf(QLatin1Char('\n'), pos) + 1; };
  // The definition: a line starting "func.func" (maybe "private") or
  // "define" that names @name( (calls name it too).
  qsizetype at = -1;
  const QString needle = QStringLiteral("@%1(").arg(name);
  for (qsizetype pos = module.indexOf(needle); pos >= 0; pos = module.indexOf(needle, pos + 1)) {
    QStringView line = QStringView(module).mid(lineStart(pos), pos - lineStart(pos)).trimmed();
    if (line.startsWith(QLatin1String("func.func")) || line.startsWith(QLatin1String("define "))) {
      at = pos;
      break;
    }
  }
  if (at >= 0) {
    qsizetype begin = lineStart(at);
    QString indent;
    while (begin + indent.size() < module.size() && module[begin + indent.size()] == QLatin1Char(' '))
      indent += QLatin1Char(' ');
    qsizetype end = module.indexOf(QStringLiteral("\n%1}").arg(indent), at);
    if (end < 0)
      return {};
    end += 1 + indent.size() + 1;
    return module.mid(begin, end - begin);
  }
  qsizetype label = module.indexOf(QStringLiteral("\n%1:").arg(name));
  if (label < 0)
    return {};
  // Start at the directives just before the label (.globl, .type, .p2align).
  qsizetype begin = module.lastIndexOf(QStringLiteral(".globl\t%1").arg(name), label);
  begin = begin < 0 ? label + 1 : lineStart(begin);
  qsizetype size = module.indexOf(QStringLiteral(".size\t%1,").arg(name), label);
  qsizetype end = size < 0 ? module.size() : module.indexOf(QLatin1Char('\n'), size);
  if (end < 0)
    end = module.size();
  return module.mid(begin, end - begin);
}

void InspectorView::showIr() {
  int stage = stage_->currentIndex();
  auto it = cache_.find(stage);
  if (it == cache_.end() || !doc_ || !doc_->plan)
    return;
  QString name, entry;
  for (const kiln::Dispatch &d : doc_->plan->dispatches)
    if (d.id == dispatch_) {
      name = QString::fromStdString(d.name);
      entry = QString::fromStdString(kiln::entryPointOf(d));
    }
  const QString &module = it->second;
  QString function = name.isEmpty() ? QString() : functionText(module, name);
  // From LLVM IR on, a deduplicated dispatch's code is its entry point's.
  if (function.isEmpty() && entry != name)
    function = functionText(module, entry);
  bool whole = whole_->isChecked() || function.isEmpty();
  const QString &text = whole ? module : function;
  if (ir_->toPlainText() != text) {
    // Highlighting a whole large module would stall the GUI (about 1 s
    // for BlazeFace's 56k lines of LLVM IR): large texts stay plain.
    int lines = int(text.count(QLatin1Char('\n')));
    highlighter_->setDocument(lines > 5000 ? nullptr : ir_->document());
    ir_->setPlainText(text);
  }
  int moduleLines = int(module.count(QLatin1Char('\n'))) + 1;
  if (!whole) {
    ir_->moveCursor(QTextCursor::Start);
    irStatus_->setText(function.contains(name) || entry == name
                           ? tr("%1: %2 of %3 lines").arg(name).arg(ir_->blockCount()).arg(moduleLines)
                           : tr("%1 runs the code of %2: %3 of %4 lines")
                                 .arg(name, entry).arg(ir_->blockCount()).arg(moduleLines));
  } else {
    // Scroll to the dispatch's function where the stage has one.
    int pos = -1;
    if (!name.isEmpty() && !function.isEmpty())
      pos = int(text.indexOf(function.left(std::min<qsizetype>(function.size(), 200))));
    if (pos >= 0) {
      QTextBlock block = ir_->document()->findBlock(pos + (text[pos] == '\n' ? 1 : 0));
      QTextCursor c(block);
      // Put the function's first line at the top of the view.
      ir_->moveCursor(QTextCursor::End);
      ir_->setTextCursor(c);
      ir_->ensureCursorVisible();
      irStatus_->setText(tr("whole module, %1 lines").arg(moduleLines));
    } else {
      ir_->moveCursor(QTextCursor::Start);
      irStatus_->setText(tr("%1 lines; this stage has no function per dispatch").arg(moduleLines));
    }
  }
  emit irShown();
}

} // namespace kiln::views
