//===- DiagnosticsView.cpp - Errors, warnings and notes ------------------===//
#include "DiagnosticsView.h"
#include "ShapesPanel.h"

#include <QContextMenuEvent>
#include <QDateTime>
#include <QFileInfo>
#include <QHeaderView>
#include <QHBoxLayout>
#include <QMenu>
#include <QPushButton>
#include <QRegularExpression>
#include <QStyle>
#include <QStyledItemDelegate>

namespace kiln::views {

enum { kOpRole = Qt::UserRole + 1, kFixRole, kSeverityRole, kFileRole };

namespace {
/// Sizes message cells to their wrapped text at the column's width, so long
/// compiler messages (the supported-operator list) are read in full.
class WrapDelegate : public QStyledItemDelegate {
public:
  WrapDelegate(QTreeWidget *tree) : QStyledItemDelegate(tree), tree_(tree) {}
  QSize sizeHint(const QStyleOptionViewItem &option, const QModelIndex &index) const override {
    QSize base = QStyledItemDelegate::sizeHint(option, index);
    if (index.column() != 2)
      return base;
    int width = std::max(50, tree_->header()->sectionSize(2) - 12);
    QRect r = option.fontMetrics.boundingRect(QRect(0, 0, width, 100000), Qt::TextWordWrap,
                                              index.data(Qt::DisplayRole).toString());
    return QSize(base.width(), std::max(base.height(), r.height() + 6));
  }

private:
  QTreeWidget *tree_;
};

/// The row holding a fix button, spanning all columns. It asks for no
/// width, so the Time column (sized to its contents, item widgets
/// included) stays as narrow as its times; its height is the button's.
class FixRow : public QWidget {
public:
  using QWidget::QWidget;
  QSize sizeHint() const override { return {0, QWidget::sizeHint().height()}; }
  QSize minimumSizeHint() const override { return {0, QWidget::minimumSizeHint().height()}; }
};
} // namespace

DiagnosticsView::DiagnosticsView(QWidget *parent) : QTreeWidget(parent) {
  setColumnCount(3);
  setHeaderLabels({tr("Time"), tr("File"), tr("Message")});
  setRootIsDecorated(false);
  setWordWrap(true);
  setUniformRowHeights(false);
  setAlternatingRowColors(true);
  header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  header()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
  header()->setStretchLastSection(true);
  setAccessibleName(tr("Diagnostics"));
  setItemDelegate(new WrapDelegate(this));
  setTextElideMode(Qt::ElideNone);
  // Re-wrap when the message column changes width.
  connect(header(), &QHeaderView::sectionResized, this, [this](int section) {
    if (section == 2)
      scheduleDelayedItemsLayout();
  });
  connect(this, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem *item) { activate(item); });
}

int64_t DiagnosticsView::operatorIndexIn(const QString &message) {
  // TFLite "CONV_2D #12", "operator #3"; ONNX "node #12 Conv \"conv1\"".
  static const QRegularExpression re(QStringLiteral(R"((?:\b[A-Z][A-Z0-9_]*\s?|\boperator\s|\bnode\s)#(\d+))"));
  auto m = re.match(message);
  return m.hasMatch() ? m.captured(1).toLongLong() : -1;
}

QString DiagnosticsView::shapeFixIn(const QString &message) {
  static const QRegularExpression re(QStringLiteral(R"(--fix-shape=(\S+))"));
  auto m = re.match(message);
  return m.hasMatch() ? m.captured(1) : QString();
}

void DiagnosticsView::add(Severity severity, const QString &file, const QString &message,
                          const std::vector<DynamicInput> &unfixed) {
  auto *item = new QTreeWidgetItem(this);
  QStyle::StandardPixmap icon = severity == Severity::Error     ? QStyle::SP_MessageBoxCritical
                                : severity == Severity::Warning ? QStyle::SP_MessageBoxWarning
                                                                : QStyle::SP_MessageBoxInformation;
  item->setIcon(0, style()->standardIcon(icon));
  item->setText(0, QDateTime::currentDateTime().toString(QStringLiteral("HH:mm:ss")));
  item->setText(1, QFileInfo(file).fileName());
  item->setToolTip(1, file);
  item->setText(2, message);
  item->setData(0, kSeverityRole, int(severity));
  item->setData(0, kFileRole, file);
  QString tip = message;
  int64_t op = operatorIndexIn(message);
  if (op >= 0) {
    item->setData(0, kOpRole, QVariant::fromValue<qint64>(op));
    tip += tr("\n\nDouble-click or Enter: show operator #%1 in the graph.").arg(op);
  }
  // The fix the compiler suggests, from its data (the first unfixed input
  // with a suggestion; the message names the same).
  const DynamicInput *in = nullptr;
  for (const DynamicInput &d : unfixed)
    if (!in && !d.suggestion.empty())
      in = &d;
  if (in) {
    QStringList dims;
    for (int64_t d : in->suggestion)
      dims << QString::number(d);
    QString fix = QStringLiteral("%1=%2").arg(in->name, dims.join(QLatin1Char('x')));
    item->setData(0, kFixRole, fix);
    // The fix in the GUI, visible under the message: a button.
    QString what = tr("input '%1' to %2").arg(in->name, dims.join(QChar(0x00d7)));
    auto *child = new QTreeWidgetItem(item);
    child->setFlags(Qt::ItemIsEnabled);
    // The GUI's fix first; the compiler's flag stays for the command line.
    static const QRegularExpression cli(QStringLiteral(R"(fix it with (--fix-shape=\S+))"));
    item->setText(2, QString(message).replace(cli, tr("fix it with the button below (on the command line: \\1)")));
    auto *holder = new FixRow(this);
    auto *row = new QHBoxLayout(holder);
    row->setContentsMargins(0, 1, 0, 1);
    auto *button = new QPushButton(tr("Fix %1 and open").arg(what), holder);
    row->addWidget(button);
    row->addStretch(1);
    button->setToolTip(tr("Opens %1 with this size; it is saved in the model's project file and shown in "
                          "Tune's input shapes, where it can be changed or undone.")
                           .arg(QFileInfo(file).fileName()));
    // Used once: the fix is then the project's (undo it there).
    connect(button, &QPushButton::clicked, this, [this, button, file, fix] {
      button->setEnabled(false);
      emit shapeFixRequested(file, fix);
    });
    // The button's row spans all columns, so a narrow message column never
    // cuts the button's text; its height is the button's (Qt sizes a row
    // to its item widgets' size hints).
    child->setFirstColumnSpanned(true);
    setItemWidget(child, 0, holder);
    item->setExpanded(true);
    tip += tr("\n\nThe button below (or Enter) opens it with this size fixed, as Tune's input shapes do.");
  }
  item->setToolTip(2, tip);
  setCurrentItem(item);
  // The message and, below it, its fix button (last, so the button shows
  // where the message is taller than the panel).
  scrollToItem(item);
  if (item->childCount())
    scrollToItem(item->child(0));
}

int DiagnosticsView::count(Severity severity) const {
  int n = 0;
  for (int i = 0; i < topLevelItemCount(); ++i)
    n += topLevelItem(i)->data(0, kSeverityRole).toInt() == int(severity);
  return n;
}

QString DiagnosticsView::lastMessage() const {
  int n = topLevelItemCount();
  return n ? topLevelItem(n - 1)->text(2) : QString();
}

QAbstractButton *DiagnosticsView::fixButton(int row) const {
  QTreeWidgetItem *item = topLevelItem(row);
  if (!item || item->childCount() == 0)
    return nullptr;
  QWidget *holder = itemWidget(item->child(0), 0);
  return holder ? holder->findChild<QAbstractButton *>() : nullptr;
}

void DiagnosticsView::activate(QTreeWidgetItem *item) {
  if (item && item->parent()) // the row of a fix button
    item = item->parent();
  if (!item)
    return;
  QString fix = item->data(0, kFixRole).toString();
  if (!fix.isEmpty()) {
    emit shapeFixRequested(item->data(0, kFileRole).toString(), fix);
    return;
  }
  QVariant op = item->data(0, kOpRole);
  if (op.isValid())
    emit operatorActivated(op.toLongLong());
}

void DiagnosticsView::contextMenuEvent(QContextMenuEvent *event) {
  QTreeWidgetItem *item = itemAt(event->pos());
  if (item && item->parent())
    item = item->parent();
  QMenu menu(this);
  if (item) {
    QString fix = item->data(0, kFixRole).toString();
    QString file = item->data(0, kFileRole).toString();
    if (!fix.isEmpty())
      menu.addAction(tr("Fix %1 and Open").arg(fix), this, [this, file, fix] { emit shapeFixRequested(file, fix); });
    QVariant op = item->data(0, kOpRole);
    if (op.isValid())
      menu.addAction(tr("Show operator #%1").arg(op.toLongLong()), this,
                     [this, op] { emit operatorActivated(op.toLongLong()); });
  }
  menu.addAction(tr("Clear"), this, &QTreeWidget::clear);
  menu.exec(event->globalPos());
}

} // namespace kiln::views
