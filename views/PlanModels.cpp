//===- PlanModels.cpp - Item models over the plan's plain structs --------===//
#include "PlanModels.h"

#include "kiln/Profile.h"
#include "kiln/Targets.h"

#include <QFont>
#include <QLocale>

namespace kiln::views {

QString targetLabel(const std::string &target) {
  return QStringLiteral("%1 (%2)").arg(QString::fromStdString(kiln::targetDisplayName(target)),
                                       QString::fromStdString(target));
}

QString formatBytes(int64_t bytes) {
  if (bytes < 1024)
    return QStringLiteral("%1 B").arg(bytes);
  if (bytes < 1024 * 1024)
    return QStringLiteral("%1 KiB").arg(bytes / 1024.0, 0, 'f', 1);
  return QStringLiteral("%1 MiB").arg(bytes / (1024.0 * 1024.0), 0, 'f', 2);
}

QString formatFlops(int64_t flops, bool integer) {
  const QString unit = QString::fromLatin1(kiln::workUnit(integer));
  if (flops < 1000)
    return QStringLiteral("%1 %2").arg(flops).arg(unit);
  if (flops < 1000000)
    return QStringLiteral("%1 k%2").arg(flops / 1e3, 0, 'f', 1).arg(unit);
  if (flops < 1000000000)
    return QStringLiteral("%1 M%2").arg(flops / 1e6, 0, 'f', 2).arg(unit);
  return QStringLiteral("%1 G%2").arg(flops / 1e9, 0, 'f', 2).arg(unit);
}

QString formatRate(double perSecond, bool integer) {
  const QString unit = QString::fromLatin1(kiln::workUnit(integer)) + QStringLiteral("/s");
  if (perSecond < 1e3)
    return QStringLiteral("%1 %2").arg(perSecond, 0, 'f', 0).arg(unit);
  if (perSecond < 1e6)
    return QStringLiteral("%1 k%2").arg(perSecond / 1e3, 0, 'f', 1).arg(unit);
  if (perSecond < 1e9)
    return QStringLiteral("%1 M%2").arg(perSecond / 1e6, 0, 'f', 1).arg(unit);
  return QStringLiteral("%1 G%2").arg(perSecond / 1e9, 0, 'f', 2).arg(unit);
}

QString opText(const kiln::SourceOp &op) { return QString::fromStdString(kiln::sourceOpText(op)); }

QString opsText(const kiln::Dispatch &d, const QString &sep) {
  QStringList parts;
  for (const kiln::SourceOp &op : d.ops)
    parts << opText(op);
  return parts.join(sep);
}

QString gridText(const kiln::Dispatch &d) {
  return QStringLiteral("%1,%2,%3").arg(d.workgroupCount[0]).arg(d.workgroupCount[1]).arg(d.workgroupCount[2]);
}

QString tilesText(const kiln::Dispatch &d) {
  QStringList parts;
  for (int64_t t : d.tileSizes)
    parts << QString::number(t);
  return QStringLiteral("[%1]").arg(parts.join(QStringLiteral(", ")));
}

int64_t aliasRoot(const kiln::CompilationPlan &plan, int64_t id) {
  const auto &buffers = plan.memory.buffers;
  for (size_t guard = 0; guard <= buffers.size(); ++guard) {
    if (id < 0 || id >= (int64_t)buffers.size() || buffers[id].aliasOf < 0)
      return id;
    id = buffers[id].aliasOf;
  }
  return id;
}

//===----------------------------------------------------------------------===//
// DispatchListModel
//===----------------------------------------------------------------------===//

DispatchListModel::DispatchListModel(QObject *parent) : QAbstractTableModel(parent) {}

void DispatchListModel::setPlan(std::shared_ptr<const kiln::CompilationPlan> plan) {
  beginResetModel();
  plan_ = std::move(plan);
  endResetModel();
}

int DispatchListModel::rowOfDispatch(int64_t id) const {
  if (!plan_)
    return -1;
  for (size_t i = 0; i < plan_->dispatches.size(); ++i)
    if (plan_->dispatches[i].id == id)
      return int(i);
  return -1;
}

int64_t DispatchListModel::dispatchAt(int row) const {
  if (!plan_ || row < 0 || row >= (int)plan_->dispatches.size())
    return -1;
  return plan_->dispatches[row].id;
}

int DispatchListModel::rowOfSourceOp(int64_t sourceIndex) const {
  if (!plan_)
    return -1;
  for (size_t i = 0; i < plan_->dispatches.size(); ++i)
    for (const kiln::SourceOp &op : plan_->dispatches[i].ops)
      if (op.sourceIndex == sourceIndex)
        return int(i);
  return -1;
}

int DispatchListModel::rowCount(const QModelIndex &parent) const {
  return parent.isValid() || !plan_ ? 0 : int(plan_->dispatches.size());
}
int DispatchListModel::columnCount(const QModelIndex &parent) const {
  return parent.isValid() ? 0 : NumColumns;
}

QVariant DispatchListModel::data(const QModelIndex &index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid) || !plan_)
    return {};
  const kiln::Dispatch &d = plan_->dispatches[index.row()];
  if (role == IdRole)
    return QVariant::fromValue<qint64>(d.id);
  if (role == Qt::TextAlignmentRole)
    return index.column() >= Flops ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant();
  if (role == Qt::ToolTipRole)
    return QStringLiteral("%1\n%2\nworkgroups %3, tiles %4\n%5, reads %6, writes %7")
        .arg(QString::fromStdString(d.name), opsText(d, QStringLiteral("\n")), gridText(d),
             tilesText(d), formatFlops(d.flops, kiln::isIntegerDispatch(*plan_, d)),
             formatBytes(d.bytesRead), formatBytes(d.bytesWritten));
  if (role != Qt::DisplayRole)
    return {};
  switch (index.column()) {
  case Id: return QVariant::fromValue<qint64>(d.id);
  case Name: return QString::fromStdString(d.name);
  case Ops: return opsText(d);
  case Workgroups: return gridText(d);
  case Tiles: return tilesText(d);
  case Flops: return QVariant::fromValue<qint64>(d.flops);
  case BytesRead: return QVariant::fromValue<qint64>(d.bytesRead);
  case BytesWritten: return QVariant::fromValue<qint64>(d.bytesWritten);
  }
  return {};
}

QVariant DispatchListModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o == Qt::Horizontal && role == Qt::ToolTipRole && section == Flops)
    return tr("Operations: FLOP for a floating-point dispatch, OP (integer operations) for an "
              "integer one; "
              "2 per multiply-accumulate");
  if (o != Qt::Horizontal || role != Qt::DisplayRole)
    return QAbstractTableModel::headerData(section, o, role);
  static const char *names[] = {"Id",    "Name", "Operators", "Workgroups",
                                "Tiles", "Work", "Read",      "Written"};
  return section >= 0 && section < NumColumns ? QString::fromLatin1(names[section]) : QVariant();
}

//===----------------------------------------------------------------------===//
// CommandListModel
//===----------------------------------------------------------------------===//

CommandListModel::CommandListModel(QObject *parent) : QAbstractTableModel(parent) {}

void CommandListModel::setPlan(std::shared_ptr<const kiln::CompilationPlan> plan) {
  beginResetModel();
  plan_ = std::move(plan);
  endResetModel();
}

int CommandListModel::rowCount(const QModelIndex &parent) const {
  return parent.isValid() || !plan_ ? 0 : int(plan_->schedule.commands.size());
}
int CommandListModel::columnCount(const QModelIndex &parent) const {
  return parent.isValid() ? 0 : NumColumns;
}

QVariant CommandListModel::data(const QModelIndex &index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid) || !plan_)
    return {};
  const kiln::Command &c = plan_->schedule.commands[index.row()];
  if (role == IdRole)
    return QVariant::fromValue<qint64>(c.index);
  if (role != Qt::DisplayRole)
    return {};
  switch (index.column()) {
  case Index: return QVariant::fromValue<qint64>(c.index);
  case Kind: return QString::fromLatin1(kiln::toString(c.kind));
  case Wave: return QVariant::fromValue<qint64>(c.wave);
  case Dispatch: return c.dispatch >= 0 ? QVariant::fromValue<qint64>(c.dispatch) : QVariant();
  case Bindings: {
    QStringList parts;
    for (const kiln::BindingRef &b : c.bindings)
      parts << QStringLiteral("%1%2:%3+%4").arg(b.write ? "w " : "").arg(b.buffer).arg(b.offset).arg(b.length);
    return parts.join(QStringLiteral("  "));
  }
  }
  return {};
}

QVariant CommandListModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole)
    return QAbstractTableModel::headerData(section, o, role);
  static const char *names[] = {"Index", "Kind", "Wave", "Dispatch", "Bindings (buffer:offset+length)"};
  return section >= 0 && section < NumColumns ? QString::fromLatin1(names[section]) : QVariant();
}

//===----------------------------------------------------------------------===//
// BufferListModel
//===----------------------------------------------------------------------===//

BufferListModel::BufferListModel(QObject *parent) : QAbstractTableModel(parent) {}

void BufferListModel::setPlan(std::shared_ptr<const kiln::CompilationPlan> plan) {
  beginResetModel();
  plan_ = std::move(plan);
  endResetModel();
}

int BufferListModel::rowCount(const QModelIndex &parent) const {
  return parent.isValid() || !plan_ ? 0 : int(plan_->memory.buffers.size());
}
int BufferListModel::columnCount(const QModelIndex &parent) const {
  return parent.isValid() ? 0 : NumColumns;
}

QVariant BufferListModel::data(const QModelIndex &index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid) || !plan_)
    return {};
  const kiln::Buffer &b = plan_->memory.buffers[index.row()];
  if (role == IdRole)
    return QVariant::fromValue<qint64>(b.id);
  if (role != Qt::DisplayRole)
    return {};
  switch (index.column()) {
  case Id: return QVariant::fromValue<qint64>(b.id);
  case Kind: return QString::fromLatin1(kiln::toString(b.kind));
  case Type: return QString::fromStdString(b.type);
  case Bytes: return QVariant::fromValue<qint64>(b.bytes);
  case Offset: return b.kind == kiln::BufferKind::Transient ? QVariant::fromValue<qint64>(b.offset) : QVariant();
  case FirstCommand: return QVariant::fromValue<qint64>(b.firstCommand);
  case LastCommand: return QVariant::fromValue<qint64>(b.lastCommand);
  case AliasOf: return b.aliasOf >= 0 ? QVariant::fromValue<qint64>(b.aliasOf) : QVariant();
  }
  return {};
}

QVariant BufferListModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole)
    return QAbstractTableModel::headerData(section, o, role);
  static const char *names[] = {"Id", "Kind", "Type", "Bytes", "Offset", "First", "Last", "Alias of"};
  return section >= 0 && section < NumColumns ? QString::fromLatin1(names[section]) : QVariant();
}

//===----------------------------------------------------------------------===//
// SectionSizesModel
//===----------------------------------------------------------------------===//

SectionSizesModel::SectionSizesModel(QObject *parent) : QAbstractTableModel(parent) {}

void SectionSizesModel::setSizes(std::optional<kiln::SectionSizes> a, std::optional<kiln::SectionSizes> b) {
  beginResetModel();
  a_ = std::move(a);
  b_ = std::move(b);
  names_.clear();
  if (a_) {
    for (const auto &s : a_->sections)
      names_ << QString::fromStdString(s.first);
    names_ << QStringLiteral("overhead") << QStringLiteral("total");
  }
  endResetModel();
}

static int64_t rowBytes(const kiln::SectionSizes &s, const QString &name) {
  if (name == QLatin1String("overhead"))
    return s.overhead;
  if (name == QLatin1String("total"))
    return s.fileBytes;
  for (const auto &sec : s.sections)
    if (QString::fromStdString(sec.first) == name)
      return sec.second;
  return 0; // a section the other build lacks
}

int64_t SectionSizesModel::bytesAt(int row, bool stripped) const {
  const auto &s = stripped ? b_ : a_;
  if (!s || row < 0 || row >= names_.size())
    return -1;
  return rowBytes(*s, names_[row]);
}

int SectionSizesModel::rowCount(const QModelIndex &parent) const {
  return parent.isValid() ? 0 : int(names_.size());
}
int SectionSizesModel::columnCount(const QModelIndex &parent) const {
  return parent.isValid() ? 0 : NumColumns;
}

QVariant SectionSizesModel::data(const QModelIndex &index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid))
    return {};
  if (role == Qt::TextAlignmentRole)
    return index.column() == Section ? QVariant() : QVariant(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::FontRole && names_[index.row()] == QLatin1String("total")) {
    QFont f;
    f.setBold(true);
    return f;
  }
  if (role != Qt::DisplayRole && role != Qt::EditRole)
    return {};
  int row = index.row();
  switch (index.column()) {
  case Section: return names_[row];
  case Default: return QVariant::fromValue<qint64>(bytesAt(row, false));
  case Stripped: return b_ ? QVariant::fromValue<qint64>(bytesAt(row, true)) : QVariant();
  case Delta:
    if (!b_)
      return {};
    if (role == Qt::EditRole)
      return QVariant::fromValue<qint64>(bytesAt(row, true) - bytesAt(row, false));
    {
      int64_t d = bytesAt(row, true) - bytesAt(row, false);
      int64_t base = bytesAt(row, false);
      QString pct = base > 0 ? QStringLiteral(" (%1%)").arg(100.0 * d / base, 0, 'f', 1) : QString();
      return QStringLiteral("%1%2%3").arg(d > 0 ? "+" : "").arg(d).arg(pct);
    }
  }
  return {};
}

QVariant SectionSizesModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole)
    return QAbstractTableModel::headerData(section, o, role);
  static const char *names[] = {"Section", "Default (bytes)", "Stripped (bytes)", "Delta"};
  if (section == Default && !b_) // one build: the artifact as it is
    return QStringLiteral("Bytes");
  return section >= 0 && section < NumColumns ? QString::fromLatin1(names[section]) : QVariant();
}

QItemSelectionModel *followDispatchSelection(QObject *owner, QItemSelectionModel *previous,
                                             QItemSelectionModel *selection,
                                             std::function<void(int64_t)> onDispatch) {
  if (previous)
    QObject::disconnect(previous, nullptr, owner, nullptr);
  if (selection)
    QObject::connect(selection, &QItemSelectionModel::currentRowChanged, owner,
                     [onDispatch = std::move(onDispatch)](const QModelIndex &current) {
                       auto *m = qobject_cast<const DispatchListModel *>(current.model());
                       onDispatch(m ? m->dispatchAt(current.row()) : -1);
                     });
  return selection;
}

} // namespace kiln::views
