//===- ProfileView.h - The per-dispatch profile table -----------*- C++ -*-===//
//
// kiln::profileDispatches' rows (kiln/Profile.h) as a sortable table: time
// (estimated by the cost model until a host run, then measured), share of
// the total, work (FLOP, or OP for integer dispatches), bytes read and
// written, achieved FLOP/s or OP/s, arena share, stack frame and kernel
// strategy. ProfileModel adapts the rows; ProfileView sorts them through a
// QSortFilterProxyModel on each cell's exact value (ValueRole) and follows
// the shared dispatch selection like every view.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_VIEWS_PROFILEVIEW_H
#define KILN_VIEWS_PROFILEVIEW_H

#include "Document.h"

#include "kiln/Profile.h"

#include <QAbstractTableModel>
#include <QPointer>
#include <QWidget>

#include <memory>
#include <vector>

class QItemSelectionModel;
class QLabel;
class QSortFilterProxyModel;
class QTableView;

namespace kiln::views {

/// One row per kiln::DispatchProfile, in plan order. Display text is
/// rounded with units ("12.3 µs", "4.1 %", "1.20 MOP", "2.5 KiB"); ValueRole
/// holds the exact value (ns, a fraction, a count, bytes; a null
/// (std::nullptr_t) for a value not known: a dispatch not measured, an
/// unknown stack frame, which sorts below every number and is an empty CSV
/// field); IdRole the dispatch id.
class ProfileModel : public QAbstractTableModel {
  Q_OBJECT
public:
  enum Column {
    Id,
    Name,
    Operators,
    Time,
    Share,
    Work,
    Rate,
    Read,
    Written,
    Arena,
    Stack,
    Kernel,
    NumColumns
  };
  explicit ProfileModel(QObject *parent = nullptr);
  /// Replaces the rows; `measured`: their times come from a trace (else
  /// from the cost model).
  void setRows(std::vector<kiln::DispatchProfile> rows, bool measured);
  const std::vector<kiln::DispatchProfile> &rows() const { return rows_; }
  bool isMeasured() const { return measured_; }
  /// Row of dispatch `id`, -1 if none.
  int rowOfDispatch(int64_t id) const;

  int rowCount(const QModelIndex &parent = {}) const override;
  int columnCount(const QModelIndex &parent = {}) const override;
  QVariant data(const QModelIndex &index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

private:
  QVariant display(const kiln::DispatchProfile &p, int column) const;
  QVariant value(const kiln::DispatchProfile &p, int column) const;

  std::vector<kiln::DispatchProfile> rows_;
  bool measured_ = false;
};

/// "850 ns", "12.3 µs", "1.23 ms": a time in nanoseconds, 3 significant
/// digits.
QString formatNs(double ns);

/// The Profile dock: a caption (estimated or measured, and the total) and
/// the table, sorted by a click on a header (descending first for numbers:
/// the most expensive dispatch on top).
class ProfileView : public QWidget, public DocumentView {
  Q_OBJECT
public:
  explicit ProfileView(QWidget *parent = nullptr);
  /// DocumentView: the estimated profile of `doc`'s plan; the plan already
  /// shown keeps its rows (a measured run stays).
  void setDocument(std::shared_ptr<const ModelDocument> doc) override;
  void setSelectionModel(QItemSelectionModel *selection) override;
  void clear() override;
  /// Replaces the estimate with the times of `run` (a traced host run of
  /// the plan shown).
  void setMeasured(const MeasuredRun &run);

  ProfileModel *model() const { return model_; }
  /// The sorting proxy the table shows (rows in screen order).
  QSortFilterProxyModel *proxy() const { return proxy_; }
  QTableView *table() const { return table_; }
  QLabel *caption() const { return caption_; }

private:
  /// Shows `rows` with the caption "HOW; N dispatches, TOTAL summed ...".
  void show(std::vector<kiln::DispatchProfile> rows, bool measured, const QString &how);
  /// The shared selection's dispatch (-1: none).
  int64_t currentDispatch() const;
  void highlight(int64_t dispatch);

  ProfileModel *model_;
  QSortFilterProxyModel *proxy_;
  QTableView *table_;
  QLabel *caption_;
  std::shared_ptr<const kiln::CompilationPlan> plan_;
  QPointer<QItemSelectionModel> selection_;
  bool following_ = false;
};

} // namespace kiln::views

#endif
