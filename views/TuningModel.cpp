//===- TuningModel.cpp - Editable tile sizes and fusion per dispatch ------===//
#include "TuningModel.h"

#include "PlanModels.h"

#include "kiln/Recipe.h"

#include <QBrush>
#include <QColor>
#include <QFont>
#include <QRegularExpression>

namespace kiln::views {

TuningModel::TuningModel(QObject *parent) : QAbstractTableModel(parent) {}

void TuningModel::setPlan(std::shared_ptr<const kiln::CompilationPlan> plan,
                          std::map<int64_t, std::vector<int64_t>> overrides, std::set<int64_t> noFusion,
                          bool fusionEnabled) {
  beginResetModel();
  plan_ = std::move(plan);
  overrides_ = std::move(overrides);
  noFusion_ = std::move(noFusion);
  fusionEnabled_ = fusionEnabled;
  pending_.clear();
  endResetModel();
}

int64_t TuningModel::dispatchAt(int row) const {
  if (!plan_ || row < 0 || row >= int(plan_->dispatches.size()))
    return -1;
  return plan_->dispatches[row].id;
}

int TuningModel::rowOfDispatch(int64_t id) const {
  if (!plan_)
    return -1;
  for (size_t i = 0; i < plan_->dispatches.size(); ++i)
    if (plan_->dispatches[i].id == id)
      return int(i);
  return -1;
}

QString TuningModel::checkTiles(const kiln::Dispatch &d, const QString &text, std::vector<int64_t> *out) {
  // Commas or spaces between the sizes, brackets allowed: as `--tile=ID=S0,S1,...`.
  QString list = text.trimmed().remove(QLatin1Char('[')).remove(QLatin1Char(']')).trimmed();
  if (list.isEmpty())
    return {}; // back to the compiler's choice
  list = list.split(QRegularExpression(QStringLiteral("[,\\s]+")), Qt::SkipEmptyParts).join(QLatin1Char(','));
  auto parsed = kiln::parseTileSizes(list.toStdString());
  if (!parsed)
    return tr("Tile sizes of dispatch %1: %2")
        .arg(d.id)
        .arg(QString::fromStdString(llvm::toString(parsed.takeError())));
  const std::vector<int64_t> &sizes = *parsed;
  if (llvm::Error err = kiln::checkTileSizes(d.id, sizes, d.loopRanges, d.loopKinds))
    return QString::fromStdString(llvm::toString(std::move(err)));
  if (out)
    *out = sizes;
  return {};
}

QString TuningModel::rejection(int row) const {
  auto it = pending_.find(row);
  return it == pending_.end() ? QString() : it->second.second;
}

int TuningModel::rowCount(const QModelIndex &parent) const {
  return parent.isValid() || !plan_ ? 0 : int(plan_->dispatches.size());
}
int TuningModel::columnCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : NumColumns; }

static QString loopsText(const kiln::Dispatch &d) {
  QStringList parts;
  for (size_t i = 0; i < d.loopRanges.size(); ++i) {
    bool red = i < d.loopKinds.size() && d.loopKinds[i] == "reduction";
    parts << QString::number(d.loopRanges[i]) + (red ? QStringLiteral("r") : QString());
  }
  return parts.join(QStringLiteral(" \u00d7 "));
}

static QString sizesText(const std::vector<int64_t> &v) {
  QStringList parts;
  for (int64_t s : v)
    parts << QString::number(s);
  return parts.join(QStringLiteral(","));
}

QVariant TuningModel::data(const QModelIndex &index, int role) const {
  if (!plan_ || !index.isValid() || index.row() >= rowCount())
    return {};
  const kiln::Dispatch &d = plan_->dispatches[index.row()];
  auto pend = pending_.find(index.row());
  bool rejectedCell = index.column() == Tiles && pend != pending_.end() && !pend->second.second.isEmpty();
  bool overridden = overrides_.count(d.id) != 0;
  if (role == IdRole)
    return qint64(d.id);
  if (role == Qt::DisplayRole || role == Qt::EditRole) {
    switch (index.column()) {
    case Id:
      return qint64(d.id);
    case Ops:
      return opsText(d);
    case Loops:
      return loopsText(d);
    case Tiles:
      if (pend != pending_.end())
        return pend->second.first;
      return sizesText(d.tileSizes);
    case Workgroups:
      return gridText(d);
    case Fusion:
      return fusionEnabled_ ? QVariant() : tr("off for all");
    }
  }
  if (role == Qt::CheckStateRole && index.column() == Fusion)
    return noFusion_.count(d.id) || !fusionEnabled_ ? Qt::Unchecked : Qt::Checked;
  if (role == Qt::ForegroundRole && rejectedCell)
    return QBrush(QColor(0xb0, 0, 0));
  if (role == Qt::BackgroundRole && rejectedCell)
    return QBrush(QColor(0xff, 0xd8, 0xd8));
  if (role == Qt::FontRole && index.column() == Tiles && overridden) {
    QFont f;
    f.setBold(true);
    return f;
  }
  if (role == Qt::ToolTipRole) {
    if (rejectedCell)
      return pend->second.second;
    switch (index.column()) {
    case Ops: // the whole names, which the cell may elide in the middle
      return opsText(d, QStringLiteral("\n"));
    case Loops:
      return tr("Loop ranges of the tiled operation (r = reduction loop: its tile size must be 0)");
    case Tiles:
      return overridden ? tr("Set by you (bold); type sizes, one per loop, 0 = whole loop; empty = compiler's choice")
                        : tr("Compiler's choice; type sizes, one per loop, 0 = whole loop");
    case Fusion:
      return tr("Fuse elementwise consumers and padding into this dispatch");
    default:
      break;
    }
  }
  if (role == Qt::TextAlignmentRole && (index.column() == Id || index.column() == Workgroups))
    return int(Qt::AlignRight | Qt::AlignVCenter);
  return {};
}

QVariant TuningModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole)
    return {};
  switch (section) {
  case Id:
    return tr("Id");
  case Ops:
    return tr("Operators");
  case Loops:
    return tr("Loops");
  case Tiles:
    return tr("Tile sizes");
  case Workgroups:
    return tr("Workgroups");
  case Fusion:
    return tr("Fusion");
  }
  return {};
}

Qt::ItemFlags TuningModel::flags(const QModelIndex &index) const {
  Qt::ItemFlags f = QAbstractTableModel::flags(index);
  if (!index.isValid())
    return f;
  if (index.column() == Tiles)
    f |= Qt::ItemIsEditable;
  if (index.column() == Fusion && fusionEnabled_)
    f |= Qt::ItemIsUserCheckable;
  return f;
}

bool TuningModel::setData(const QModelIndex &index, const QVariant &value, int role) {
  if (!plan_ || !index.isValid() || index.row() >= rowCount())
    return false;
  const kiln::Dispatch &d = plan_->dispatches[index.row()];
  if (index.column() == Fusion && role == Qt::CheckStateRole) {
    if (!fusionEnabled_)
      return false;
    bool on = value.toInt() == Qt::Checked;
    if (on == !noFusion_.count(d.id))
      return false;
    emit fusionEdited(d.id, on);
    return true;
  }
  if (index.column() != Tiles || role != Qt::EditRole)
    return false;
  QString text = value.toString().trimmed();
  std::vector<int64_t> sizes;
  QString why = checkTiles(d, text, &sizes);
  pending_[index.row()] = {text, why};
  emit dataChanged(index, index);
  if (!why.isEmpty()) {
    emit rejected(d.id, why);
    return false;
  }
  if (text.isEmpty()) {
    pending_.erase(index.row());
    emit dataChanged(index, index);
  }
  emit tilesEdited(d.id, sizes);
  return true;
}

} // namespace kiln::views
