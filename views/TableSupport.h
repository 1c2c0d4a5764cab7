//===- TableSupport.h - Column widths and CSV rows of a table ---*- C++ -*-===//
//
// What every table of the workbench shares: columns sized to their
// contents within limits (no column as wide as the widest, none wider than
// a limit), and its rows as CSV records for Save Table as CSV (written by
// the one CSV writer, kiln/Csv.h).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_VIEWS_TABLESUPPORT_H
#define KILN_VIEWS_TABLESUPPORT_H

#include "kiln/Csv.h"

#include <vector>

class QAbstractItemModel;
class QTableView;

namespace kiln::views {

/// Widest a column is sized to its contents, pixels: a longer text (a
/// dispatch's fused operators, a command's bindings) is elided; the user
/// may still drag the column wider.
constexpr int kMaxFittedColumnWidth = 360;

/// Sizes each column of `table` to its header and contents (the rows the
/// view measures: QHeaderView's ResizeToContents sampling), at most
/// `maxWidth` pixels; the last column still stretches to the table's
/// width when the view says so.
void fitColumns(QTableView *table, int maxWidth = kMaxFittedColumnWidth);

/// `model`'s rows as CSV records, in its row order (a sorted proxy gives
/// the order on screen): first the horizontal header texts, then one
/// record per row with each cell's ValueRole (PlanModels.h: the exact
/// number behind rounded text; a fraction for a share) where it has one,
/// else its display text; a null ValueRole (a value not known) is an empty
/// field. Numbers are written in C locale, doubles with up
/// to 17 significant digits (exact round trip).
std::vector<kiln::CsvRecord> tableRecords(const QAbstractItemModel &model);

} // namespace kiln::views

#endif
