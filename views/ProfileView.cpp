//===- ProfileView.cpp - The per-dispatch profile table ------------------===//
#include "ProfileView.h"

#include "PlanModels.h"
#include "TableSupport.h"

#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

namespace kiln::views {

QString formatNs(double ns) {
  if (ns < 999.5)
    return QStringLiteral("%1 ns").arg(ns, 0, 'f', 0);
  // Three significant digits in fixed notation; a value that rounds up to
  // 1000 of a unit is written in the next one ("1.00 ms", not "1e+03 us").
  static const char *const units[] = {"\u00b5s", "ms", "s"};
  double v = ns / 1e3;
  int unit = 0;
  while (unit < 2 && v >= 999.5) {
    v /= 1e3;
    ++unit;
  }
  const int decimals = v < 9.995 ? 2 : v < 99.95 ? 1 : 0;
  return QStringLiteral("%1 %2").arg(v, 0, 'f', decimals).arg(QString::fromUtf8(units[unit]));
}

//===----------------------------------------------------------------------===//
// ProfileModel
//===----------------------------------------------------------------------===//

ProfileModel::ProfileModel(QObject *parent) : QAbstractTableModel(parent) {}

void ProfileModel::setRows(std::vector<kiln::DispatchProfile> rows, bool measured) {
  beginResetModel();
  rows_ = std::move(rows);
  measured_ = measured;
  endResetModel();
}

int ProfileModel::rowOfDispatch(int64_t id) const {
  for (size_t i = 0; i < rows_.size(); ++i)
    if (rows_[i].id == id)
      return int(i);
  return -1;
}

int ProfileModel::rowCount(const QModelIndex &parent) const {
  return parent.isValid() ? 0 : int(rows_.size());
}
int ProfileModel::columnCount(const QModelIndex &parent) const {
  return parent.isValid() ? 0 : NumColumns;
}

QVariant ProfileModel::display(const kiln::DispatchProfile &p, int column) const {
  const QString none = QStringLiteral("\u2014");
  switch (column) {
  case Id:
    return QVariant::fromValue<qint64>(p.id);
  case Name:
    return QString::fromStdString(p.name);
  case Operators:
    return QString::fromStdString(p.operators);
  case Time:
    return p.timeNs < 0 ? none : formatNs(p.timeNs);
  case Share:
    return QStringLiteral("%1 %").arg(100.0 * p.share, 0, 'f', 1);
  case Work:
    return formatFlops(p.work, p.integer);
  case Rate:
    return p.workPerSecond < 0 ? none : formatRate(p.workPerSecond, p.integer);
  case Read:
    return formatBytes(p.bytesRead);
  case Written:
    return formatBytes(p.bytesWritten);
  case Arena:
    return formatBytes(p.arenaBytes);
  case Stack:
    return p.dynamicStack ? tr("dynamic") : p.stackBytes < 0 ? none : formatBytes(p.stackBytes);
  case Kernel:
    return QString::fromStdString(p.kernel);
  }
  return {};
}

QVariant ProfileModel::value(const kiln::DispatchProfile &p, int column) const {
  const QVariant none = QVariant::fromValue(nullptr); // sorts first, exports as an empty field
  switch (column) {
  case Id:
    return QVariant::fromValue<qint64>(p.id);
  case Name:
    return QString::fromStdString(p.name);
  case Operators:
    return QString::fromStdString(p.operators);
  case Time:
    return p.timeNs < 0 ? none : QVariant(p.timeNs);
  case Share:
    return p.share;
  case Work:
    return QVariant::fromValue<qint64>(p.work);
  case Rate:
    return p.workPerSecond < 0 ? none : QVariant(p.workPerSecond);
  case Read:
    return QVariant::fromValue<qint64>(p.bytesRead);
  case Written:
    return QVariant::fromValue<qint64>(p.bytesWritten);
  case Arena:
    return QVariant::fromValue<qint64>(p.arenaBytes);
  case Stack:
    return p.stackBytes < 0 ? none : QVariant::fromValue<qint64>(p.stackBytes);
  case Kernel:
    return QString::fromStdString(p.kernel);
  }
  return {};
}

QVariant ProfileModel::data(const QModelIndex &index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid))
    return {};
  const kiln::DispatchProfile &p = rows_[index.row()];
  const int column = index.column();
  switch (role) {
  case IdRole:
    return QVariant::fromValue<qint64>(p.id);
  case ValueRole:
    return value(p, column);
  case Qt::DisplayRole:
    return display(p, column);
  case Qt::TextAlignmentRole:
    return column == Id || (column >= Time && column <= Stack)
               ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
               : QVariant();
  case Qt::ToolTipRole:
    if (column == Kernel)
      return QString::fromStdString(p.kernelDetail);
    if (column == Operators)
      return QString::fromStdString(p.operators);
    if (column == Time && p.timeNs >= 0)
      return measured_ ? tr("measured: %1 ns (cost model: %2 ns)")
                             .arg(p.timeNs, 0, 'f', 0)
                             .arg(p.estimatedNs, 0, 'f', 0)
                       : tr("estimated by the cost model: %1 ns").arg(p.timeNs, 0, 'f', 0);
    if (column == Work)
      return tr("%1 %2").arg(p.work).arg(QString::fromLatin1(kiln::workUnit(p.integer)));
    if (column == Stack && p.stackBytes < 0 && !p.dynamicStack)
      return tr("stack frames are known for C module builds (LLVM's .stack_sizes)");
    return {};
  }
  return {};
}

QVariant ProfileModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || section < 0 || section >= NumColumns)
    return QAbstractTableModel::headerData(section, o, role);
  // A first click on a number column sorts the largest first.
  if (role == Qt::InitialSortOrderRole)
    return section == Id || section == Name || section == Operators || section == Kernel
               ? Qt::AscendingOrder
               : Qt::DescendingOrder;
  if (role == Qt::ToolTipRole) {
    switch (section) {
    case Time:
      return measured_ ? tr("Measured time of the dispatch in the traced run")
                       : tr("Estimated by the cost model");
    case Share:
      return tr("Share of the sum of every dispatch's time");
    case Work:
      return tr(
          "FLOP for a floating-point dispatch, OP (integer operations) for an integer one; 2 per "
          "multiply-accumulate");
    case Rate:
      return tr(
          "Achieved FLOP/s or OP/s in the traced run (no share of peak: Kiln records no peak rate "
          "of a target)");
    case Arena:
      return tr("Bytes of the arena its bindings occupy");
    case Stack:
      return tr("Its kernel's stack frame (C module builds)");
    default:
      return {};
    }
  }
  if (role != Qt::DisplayRole)
    return {};
  static const char *names[] = {"Id",   "Name", "Operators", "Time",  "Share", "Work",
                                "Rate", "Read", "Written",   "Arena", "Stack", "Kernel"};
  return QString::fromLatin1(names[section]);
}

//===----------------------------------------------------------------------===//
// ProfileView
//===----------------------------------------------------------------------===//

ProfileView::ProfileView(QWidget *parent)
    : QWidget(parent), model_(new ProfileModel(this)), proxy_(new QSortFilterProxyModel(this)),
      table_(new QTableView(this)), caption_(new QLabel(this)) {
  caption_->setWordWrap(true);
  proxy_->setSourceModel(model_);
  proxy_->setSortRole(ValueRole);
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->sortByColumn(ProfileModel::Id, Qt::AscendingOrder);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setAlternatingRowColors(true);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setAccessibleName(tr("Profile"));
  auto *layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(caption_);
  layout->addWidget(table_, 1);
  // A row picked here selects its dispatch in every view.
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex &current) {
            if (following_ || !selection_ || !current.isValid())
              return;
            auto *m = qobject_cast<const DispatchListModel *>(selection_->model());
            int row = m ? m->rowOfDispatch(proxy_->data(current, IdRole).toLongLong()) : -1;
            if (row >= 0)
              selection_->setCurrentIndex(m->index(row, 0), QItemSelectionModel::ClearAndSelect |
                                                                QItemSelectionModel::Rows);
          });
}

void ProfileView::show(std::vector<kiln::DispatchProfile> rows, bool measured, const QString &how) {
  double total = 0;
  for (const kiln::DispatchProfile &p : rows)
    total += std::max(p.timeNs, 0.0);
  caption_->setText(tr("%1; %3 dispatches, %2 summed (dispatches of one wave may run at once)")
                        .arg(how, formatNs(total))
                        .arg(rows.size()));
  model_->setRows(std::move(rows), measured);
  fitColumns(table_);
  highlight(currentDispatch());
}

int64_t ProfileView::currentDispatch() const {
  auto *m = selection_ ? qobject_cast<const DispatchListModel *>(selection_->model()) : nullptr;
  return m && selection_->currentIndex().isValid() ? m->dispatchAt(selection_->currentIndex().row())
                                                   : -1;
}

void ProfileView::setDocument(std::shared_ptr<const ModelDocument> doc) {
  if (doc->plan == plan_)
    return;
  plan_ = doc->plan;
  kiln::CostModel cm;
  show(kiln::profileDispatches(*plan_, nullptr, {}, cm), false,
       tr("Estimated by the roofline cost model (%1 G operations/s, %2 GB/s, %3 \u00b5s per "
          "launch; Build "
          "\u25b8 Run on Host measures)")
           .arg(cm.flopsPerUs / 1000)
           .arg(cm.bytesPerUs / 1000)
           .arg(cm.launchUs));
}

void ProfileView::clear() {
  plan_.reset();
  model_->setRows({}, false);
  caption_->clear();
}

void ProfileView::setMeasured(const MeasuredRun &run) {
  if (!plan_)
    return;
  show(kiln::profileDispatches(*plan_, &run.events), true,
       tr("Measured: %1, %2 thread(s), one traced run")
           .arg(QString::fromStdString(run.device))
           .arg(run.threads));
}

void ProfileView::setSelectionModel(QItemSelectionModel *selection) {
  selection_ =
      followDispatchSelection(this, selection_, selection, [this](int64_t id) { highlight(id); });
}

void ProfileView::highlight(int64_t dispatch) {
  int row = model_->rowOfDispatch(dispatch);
  following_ = true;
  if (row < 0) {
    table_->selectionModel()->clear();
  } else {
    QModelIndex index = proxy_->mapFromSource(model_->index(row, 0));
    table_->selectionModel()->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect |
                                                         QItemSelectionModel::Rows);
    table_->scrollTo(index);
  }
  following_ = false;
}

} // namespace kiln::views
