//===- TuningModel.h - Editable tile sizes and fusion per dispatch -*- C++ -*-===//
//
// One row per dispatch of the plan: id, fused operators, loops (range and
// kind), workgroup tile sizes (editable), workgroups, fusion (checkable).
// The model never changes the plan or the project itself: a typed tile
// list is parsed as `--tile=` is (kiln::setRecipeOption) and checked by the
// tiler's rule (kiln::checkTileSizes); a valid one is announced with
// tilesEdited() (the owner re-plans), an invalid one stays in its cell in
// red with the core's reason as tooltip and is announced with rejected() —
// it is never applied or clamped.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_VIEWS_TUNINGMODEL_H
#define KILN_VIEWS_TUNINGMODEL_H

#include "kiln/Plan.h"

#include <QAbstractTableModel>

#include <map>
#include <memory>
#include <set>
#include <vector>

namespace kiln::views {

/// The tuning table's model.
class TuningModel : public QAbstractTableModel {
  Q_OBJECT
public:
  enum Column { Id, Ops, Loops, Tiles, Workgroups, Fusion, NumColumns };
  explicit TuningModel(QObject *parent = nullptr);

  /// Replaces the plan, the tile overrides and the dispatches without
  /// fusion (ids of `plan`). Pending and rejected edits are dropped.
  void setPlan(std::shared_ptr<const kiln::CompilationPlan> plan,
               std::map<int64_t, std::vector<int64_t>> overrides = {}, std::set<int64_t> noFusion = {},
               bool fusionEnabled = true);
  const kiln::CompilationPlan *plan() const { return plan_.get(); }
  int64_t dispatchAt(int row) const;
  int rowOfDispatch(int64_t id) const;

  /// Why `text` is not a valid tile list for dispatch `d` ("" if valid;
  /// empty text is valid: the compiler's choice). The sizes are separated
  /// by commas or spaces ("8,0,0", "[8 0 0]"); the reason is the core's
  /// (kiln::setRecipeOption, kiln::checkTileSizes), naming the dispatch.
  static QString checkTiles(const kiln::Dispatch &d, const QString &text, std::vector<int64_t> *sizes = nullptr);

  /// The reason the last edit of `row`'s tiles was refused ("" if none).
  QString rejection(int row) const;

  int rowCount(const QModelIndex &parent = {}) const override;
  int columnCount(const QModelIndex &parent = {}) const override;
  QVariant data(const QModelIndex &index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;
  Qt::ItemFlags flags(const QModelIndex &index) const override;
  bool setData(const QModelIndex &index, const QVariant &value, int role) override;

signals:
  /// Valid tile sizes typed for dispatch `id` (empty = back to the
  /// compiler's choice).
  void tilesEdited(qint64 id, const std::vector<int64_t> &sizes);
  /// Fusion switched for dispatch `id`.
  void fusionEdited(qint64 id, bool on);
  /// An edit was refused; `message` says why (the core's reason, naming
  /// the dispatch).
  void rejected(qint64 id, const QString &message);

private:
  std::shared_ptr<const kiln::CompilationPlan> plan_;
  std::map<int64_t, std::vector<int64_t>> overrides_;
  std::set<int64_t> noFusion_;
  bool fusionEnabled_ = true;
  /// Row -> text typed and its refusal ("" when accepted, awaiting re-plan).
  std::map<int, std::pair<QString, QString>> pending_;
};

} // namespace kiln::views

#endif
