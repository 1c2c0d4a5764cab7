//===- MainWindow.h - The workbench window ---------------------*- C++ -*-===//
//
// Opens models (.tflite, .mlir) and artifacts (.kiln) by menu, drag and
// drop, recent files or command line; compiles them on a worker thread with
// per-phase progress and Cancel; shows the plan in dockable views sharing
// one dispatch selection: graph (central), dispatch/command/buffer tables,
// timeline, buffer aliasing, sizes, inspector, diagnostics. Dock layout and
// recent files persist in QSettings.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_WORKBENCH_MAINWINDOW_H
#define KILN_WORKBENCH_MAINWINDOW_H

#include "CompileJob.h"
#include "Document.h"

#include <QMainWindow>
#include <QPointer>

#include <map>
#include <memory>
#include <vector>

class QAction;
class QDockWidget;
class QItemSelectionModel;
class QLabel;
class QMenu;
class QPushButton;
class QTableView;

namespace kiln::views {
class BufferListModel;
class CommandListModel;
class DiagnosticsView;
class DispatchListModel;
class GraphPanel;
class GraphView;
class InspectorView;
class MemoryView;
class PhaseProgress;
class SizesView;
class TimelineView;
} // namespace kiln::views

namespace kiln::workbench {

class ProjectController;

/// The workbench's main window.
class MainWindow : public QMainWindow {
  Q_OBJECT
public:
  explicit MainWindow(QWidget *parent = nullptr);
  ~MainWindow() override;

  /// Opens `path`: compiles a model or reads an artifact in the
  /// background. A running compilation is cancelled first. Errors go to the
  /// diagnostics panel; what was open stays open.
  void openFile(const QString &path);
  /// Shape fixes used for `path` (and given on the command line for all).
  void addShapeFix(const kiln::ShapeFix &fix) { globalFixes_.push_back(fix); }
  /// Parses "INPUT=1x76x32x1", remembers it for the last file that failed
  /// (or the open one) and recompiles it. False if the text is malformed.
  bool applyShapeFix(const QString &fix);
  /// True from openFile() until compileFinished is emitted.
  bool isCompiling() const;
  /// True from runOnHost() until runFinished is emitted.
  bool isRunning() const;
  /// The document shown (null before the first successful open).
  std::shared_ptr<const kiln::views::ModelDocument> document() const { return doc_; }
  /// The last measured run of the document (null if none).
  const kiln::views::MeasuredRun *measuredRun() const { return measured_ ? measured_.get() : nullptr; }

  /// The views, for tests and the screenshot mode.
  kiln::views::GraphView *graphView() const;
  kiln::views::GraphPanel *graphPanel() const { return graph_; }
  kiln::views::TimelineView *timelineView() const { return timeline_; }
  kiln::views::MemoryView *memoryView() const { return memory_; }
  kiln::views::SizesView *sizesView() const { return sizes_; }
  kiln::views::InspectorView *inspectorView() const { return inspector_; }
  kiln::views::DiagnosticsView *diagnostics() const { return diagnostics_; }
  kiln::views::PhaseProgress *phaseProgress() const { return progress_; }
  kiln::views::DispatchListModel *dispatchModel() const { return dispatchModel_; }
  QTableView *dispatchTable() const { return dispatchTable_; }
  /// The one shared selection (rows of dispatchModel()).
  QItemSelectionModel *selectionModel() const { return selection_; }
  QPushButton *cancelButton() const { return cancelButton_; }
  /// The dock holding `view` (nullptr for the central graph).
  QDockWidget *dockOf(QWidget *view) const;
  /// Milliseconds the last document change took to update every view's
  /// data (models, graph layout, plot items), painting excluded.
  double viewUpdateMs() const { return viewUpdateMs_; }
  /// Help > About's text: Kiln, LLVM/MLIR and Qt versions.
  static QString aboutText();
  /// Every dock, in creation order.
  QList<QDockWidget *> docks() const { return docks_; }
  /// Tuning, project file, compare, run and export (ProjectController.h).
  ProjectController *projectController() const { return project_; }

public slots:
  /// Cancels the running compilation (the worker stops at the next phase).
  void cancelCompile();
  /// Runs the document's artifact on the host with a trace (local-task,
  /// all cores, 20 timed runs) and shows measured times in the timeline.
  void runOnHost();
  /// Closes the document (views emptied).
  void closeDocument();
  /// Selects dispatch `id` in every view.
  void selectDispatch(qint64 id);

signals:
  /// A compilation ended: `ok` true when a new document is shown.
  void compileFinished(bool ok);
  /// A new document is shown (the default build, possibly before the
  /// stripped build is done and compileFinished comes).
  void documentShown();
  /// A host run ended.
  void runFinished(bool ok);

protected:
  void closeEvent(QCloseEvent *event) override;
  void dragEnterEvent(QDragEnterEvent *event) override;
  void dropEvent(QDropEvent *event) override;

private:
  friend class ProjectController;
  void createViews();
  void createActions();
  void setDocument(std::shared_ptr<const kiln::views::ModelDocument> doc);
  void onCompileFinished(CompileJob *job, const QString &path);
  void showCompiled(const kiln::views::ModelDocument &doc, const QString &path);
  /// The status bar's summary of the document shown.
  QString summaryText() const;
  void addRecent(const QString &path);
  void updateRecentMenu();
  void updateActions();
  QDockWidget *addDock(QWidget *w, const QString &title, const QString &name, Qt::DockWidgetArea area);

  kiln::views::GraphPanel *graph_ = nullptr;
  kiln::views::TimelineView *timeline_ = nullptr;
  kiln::views::MemoryView *memory_ = nullptr;
  kiln::views::SizesView *sizes_ = nullptr;
  kiln::views::InspectorView *inspector_ = nullptr;
  kiln::views::DiagnosticsView *diagnostics_ = nullptr;
  kiln::views::PhaseProgress *progress_ = nullptr;
  kiln::views::DispatchListModel *dispatchModel_ = nullptr;
  kiln::views::CommandListModel *commandModel_ = nullptr;
  kiln::views::BufferListModel *bufferModel_ = nullptr;
  QItemSelectionModel *selection_ = nullptr;
  QTableView *dispatchTable_ = nullptr;
  QPushButton *cancelButton_ = nullptr;
  QLabel *summary_ = nullptr;
  QMenu *recentMenu_ = nullptr;
  QMenu *viewMenu_ = nullptr;
  QAction *closeAction_ = nullptr, *runAction_ = nullptr, *cancelAction_ = nullptr;
  QList<QDockWidget *> docks_;
  double viewUpdateMs_ = 0;
  ProjectController *project_ = nullptr;

  std::shared_ptr<const kiln::views::ModelDocument> doc_;
  std::unique_ptr<kiln::views::MeasuredRun> measured_;
  QPointer<CompileJob> job_;
  QPointer<RunJob> runJob_;
  /// Last file whose compilation failed (applyShapeFix recompiles it).
  QString lastFailed_;
  std::vector<kiln::ShapeFix> globalFixes_;
  std::map<QString, std::vector<kiln::ShapeFix>> fixes_;
};

} // namespace kiln::workbench

#endif
