//===- PlanModels.h - Item models over the plan's plain structs -*- C++ -*-===//
//
// Thin read-only QAbstractTableModel adapters over kiln::CompilationPlan
// (dispatches, commands, buffers) and kiln::SectionSizes. Every view shares
// one QItemSelectionModel over DispatchListModel: the selected dispatch.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_VIEWS_PLANMODELS_H
#define KILN_VIEWS_PLANMODELS_H

#include "kiln/Artifact.h"
#include "kiln/Plan.h"

#include <QAbstractTableModel>
#include <QItemSelectionModel>
#include <QString>

#include <functional>
#include <memory>
#include <optional>

namespace kiln::views {

/// "1.5 KiB"-style text for a byte count (exact below 1 KiB).
QString formatBytes(int64_t bytes);
/// How every view names a device target (a kiln::knownTargets() name):
/// its display name and the name the recipe and `--target=` take,
/// "Cortex-M4F bare metal (thumbv7em-none-eabihf)".
QString targetLabel(const std::string &target);
/// "1.2 MFLOP"-style text of a dispatch's work (Dispatch::flops); "1.2
/// MOP" when `integer` (kiln::isIntegerDispatch: integer operations).
QString formatFlops(int64_t flops, bool integer = false);
/// "3.4 GFLOP/s"-style text of a rate (work per second); "GOP/s" when
/// `integer`.
QString formatRate(double perSecond, bool integer = false);
/// How every view names a source operator: "CONV_2D #12" (its name and
/// its index in the model), the name alone when the index is unknown.
QString opText(const kiln::SourceOp &op);
/// "CONV_2D #12 + ADD #13" for the source operators of a dispatch (opText,
/// joined with `sep`).
QString opsText(const kiln::Dispatch &d, const QString &sep = QStringLiteral(" + "));
/// "x,y,z" workgroup grid.
QString gridText(const kiln::Dispatch &d);
/// "[8, 0, 0]" tile sizes.
QString tilesText(const kiln::Dispatch &d);
/// The buffer `id` follows aliasOf to (itself when it aliases nothing).
int64_t aliasRoot(const kiln::CompilationPlan &plan, int64_t id);

/// Custom roles shared by the models.
enum Roles {
  /// The dispatch id / buffer id / command index of a row (qint64).
  IdRole = Qt::UserRole + 1,
  /// A cell's exact value where its text is rounded or has units (bytes,
  /// ns, a share as a fraction): what sorting compares and Save Table as
  /// CSV writes (tableRecords); cells without one sort and export as
  /// their text.
  ValueRole = Qt::UserRole + 2,
};

/// One row per dispatch: id, name, fused operators, workgroups, tile sizes,
/// work (FLOP, or OP for an integer dispatch), bytes read, bytes written. The shared selection
/// lives on this model (rows are in plan order, row == position in plan.dispatches).
class DispatchListModel : public QAbstractTableModel {
  Q_OBJECT
public:
  enum Column { Id, Name, Ops, Workgroups, Tiles, Flops, BytesRead, BytesWritten, NumColumns };
  explicit DispatchListModel(QObject *parent = nullptr);
  /// Replaces the plan (null = empty model).
  void setPlan(std::shared_ptr<const kiln::CompilationPlan> plan);
  const kiln::CompilationPlan *plan() const { return plan_.get(); }
  /// Row of dispatch `id`, -1 if none.
  int rowOfDispatch(int64_t id) const;
  /// Dispatch id at `row`, -1 if out of range.
  int64_t dispatchAt(int row) const;
  /// Row of the dispatch that fused source operator `sourceIndex`, -1 if none.
  int rowOfSourceOp(int64_t sourceIndex) const;

  int rowCount(const QModelIndex &parent = {}) const override;
  int columnCount(const QModelIndex &parent = {}) const override;
  QVariant data(const QModelIndex &index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

private:
  std::shared_ptr<const kiln::CompilationPlan> plan_;
};

/// One row per command of the schedule: index, kind, wave, dispatch,
/// bindings.
class CommandListModel : public QAbstractTableModel {
  Q_OBJECT
public:
  enum Column { Index, Kind, Wave, Dispatch, Bindings, NumColumns };
  explicit CommandListModel(QObject *parent = nullptr);
  void setPlan(std::shared_ptr<const kiln::CompilationPlan> plan);
  int rowCount(const QModelIndex &parent = {}) const override;
  int columnCount(const QModelIndex &parent = {}) const override;
  QVariant data(const QModelIndex &index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

private:
  std::shared_ptr<const kiln::CompilationPlan> plan_;
};

/// One row per buffer of the memory plan: id, kind, type, bytes, offset,
/// first and last command, alias.
class BufferListModel : public QAbstractTableModel {
  Q_OBJECT
public:
  enum Column { Id, Kind, Type, Bytes, Offset, FirstCommand, LastCommand, AliasOf, NumColumns };
  explicit BufferListModel(QObject *parent = nullptr);
  void setPlan(std::shared_ptr<const kiln::CompilationPlan> plan);
  int rowCount(const QModelIndex &parent = {}) const override;
  int columnCount(const QModelIndex &parent = {}) const override;
  QVariant data(const QModelIndex &index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

private:
  std::shared_ptr<const kiln::CompilationPlan> plan_;
};

/// One row per artifact section plus "overhead" and "total": bytes of the
/// default build, of the stripped build and the difference (stripped -
/// default). Without a stripped build the last two columns are empty.
class SectionSizesModel : public QAbstractTableModel {
  Q_OBJECT
public:
  enum Column { Section, Default, Stripped, Delta, NumColumns };
  explicit SectionSizesModel(QObject *parent = nullptr);
  void setSizes(std::optional<kiln::SectionSizes> a, std::optional<kiln::SectionSizes> b);
  /// Bytes of row `row` in the default (`stripped` false) or stripped
  /// build; -1 if unknown.
  int64_t bytesAt(int row, bool stripped) const;
  int rowCount(const QModelIndex &parent = {}) const override;
  int columnCount(const QModelIndex &parent = {}) const override;
  QVariant data(const QModelIndex &index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

private:
  std::optional<kiln::SectionSizes> a_, b_;
  QStringList names_;
};

/// The shared dispatch selection, as every view follows it: disconnects
/// `owner` from `previous`, then calls `onDispatch(id)` with the dispatch id
/// of `selection`'s current row (-1 for none) whenever that row changes.
/// Returns `selection` (may be null: the view then follows nothing).
QItemSelectionModel *followDispatchSelection(QObject *owner, QItemSelectionModel *previous,
                                             QItemSelectionModel *selection,
                                             std::function<void(int64_t)> onDispatch);

} // namespace kiln::views

#endif
