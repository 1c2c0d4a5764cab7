//===- ViewExport.h - Pictures and data out of every view ------*- C++ -*-===//
//
// File > Export View: the graph, timeline and memory map as PNG or SVG
// (SVG through QSvgGenerator, vector shapes and text), every table as CSV
// (kiln::csvText of views' tableRecords: the one CSV writer), and a
// measured run's trace as Chrome trace-event JSON, which Perfetto UI
// (ui.perfetto.dev) and chrome://tracing open (kiln::traceToChromeJson
// with kiln::traceCommandNames, as `kiln run --trace=` writes it). Every
// file is written atomically (kiln/AtomicWrite.h); a failure is one
// message box naming the file and the reason. The window builds the menu;
// the tests call save() with a path.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_WORKBENCH_VIEWEXPORT_H
#define KILN_WORKBENCH_VIEWEXPORT_H

#include "Document.h"

#include <QByteArray>
#include <QList>
#include <QObject>
#include <QString>

#include <functional>
#include <memory>
#include <vector>

class QAbstractItemModel;
class QAction;
class QCustomPlot;
class QMenu;
class QWidget;

namespace kiln::views {
class GraphView;
}

namespace kiln::workbench {

/// What Export View can save.
enum class ExportItem {
  GraphPng,
  GraphSvg,
  TimelinePng,
  TimelineSvg,
  MemoryPng,
  MemorySvg,
  /// A table as CSV: ExportSources::tables[ExportRequest::table].
  TableCsv,
  /// The measured run's trace as Chrome trace-event JSON (Perfetto).
  TraceJson,
};

/// The views and data Export View reads (the window's, never copied).
struct ExportSources {
  kiln::views::GraphView *graph = nullptr;
  QCustomPlot *timeline = nullptr;
  QCustomPlot *memory = nullptr;
  /// Each table by its menu name ("Dispatches", "Profile", ...), in menu
  /// order; a sorted proxy exports its rows in screen order.
  std::vector<std::pair<QString, QAbstractItemModel *>> tables;
  /// The document shown (null: none) and its measured run (null: none).
  std::function<std::shared_ptr<const kiln::views::ModelDocument>()> document;
  std::function<const kiln::views::MeasuredRun *()> measured;
};

/// The graph's whole scene (every node, not only the part scrolled into
/// view) at 1:1: PNG bytes (scaled down to at most 8192 pixels a side), or
/// SVG. Empty for an empty graph.
QByteArray graphImage(kiln::views::GraphView *graph, bool svg);

/// A QCustomPlot at its size on screen (1200x600 when it has never been
/// laid out): PNG bytes, or SVG drawn in vector mode.
QByteArray plotImage(QCustomPlot *plot, bool svg);

/// Export View's actions and the files they write.
class ViewExporter : public QObject {
  Q_OBJECT
public:
  ViewExporter(ExportSources sources, QWidget *dialogParent);
  /// Adds the Export View submenu's actions to `menu` (Save Graph as
  /// PNG/SVG, Save Timeline as ..., Save Memory Map as ..., Save TABLE as
  /// CSV for each table, Save Trace as Perfetto JSON).
  void addActions(QMenu *menu);
  /// Enables what the document shown allows: pictures and tables with a
  /// plan, the trace with a measured run (else disabled, its tooltip says
  /// why).
  void updateActions();
  /// The bytes `item` would write (`table` indexes ExportSources::tables);
  /// empty with `error` set when there is nothing to save.
  QByteArray bytesOf(ExportItem item, int table, QString &error) const;
  /// Writes `item` to `path` atomically. Returns an empty string, or the
  /// error: "PATH: cannot write: REASON", "nothing to save: ...".
  QString save(ExportItem item, const QString &path, int table = -1) const;
  /// The action of `item` (of table `table`); null if none.
  QAction *action(ExportItem item, int table = -1) const;

private:
  /// Asks for a file (QFileDialog) and saves; a failure is one message box.
  void saveInteractively(ExportItem item, int table);

  ExportSources sources_;
  QWidget *parent_;
  struct Entry {
    ExportItem item;
    int table;
    QAction *action;
  };
  QList<Entry> entries_;
};

} // namespace kiln::workbench

#endif
