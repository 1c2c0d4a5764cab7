//===- MainWindow.h - The workbench window ---------------------*- C++ -*-===//
//
// Opens models (.tflite, .onnx, .mlir) and artifacts (.kiln) by menu, drag and
// drop, recent files or command line; plans them on a worker thread and
// shows the plan at once, then generates code (default and stripped
// builds) in the background with per-phase progress, Cancel and the phase
// in the status bar. One model is on screen at a time: a file that fails
// to open (or is cancelled before its plan) changes only the diagnostics.
// Shows the plan in dockable views sharing
// one dispatch selection: graph (central), dispatch/command/buffer tables,
// timeline, buffer aliasing, sizes, inspector, the source model's own graph,
// diagnostics. Default layout: the graph in the middle with most of the
// room, Dispatches and Tune tabbed on the left (full height), the inspector
// and the source graph tabbed on the right, the plots, the
// command and buffer tables and the panels tabbed in a strip under the
// graph and the inspector; every dock is created in createDocks(). Dock
// layout (versioned: an older layout's state is ignored) and recent files
// persist in QSettings. The views get the document through one interface
// (kiln::views::DocumentView); their background work runs in jobs
// (CompileJob, IrJob, HostRunJob); ProjectController reads the window
// through ProjectHost and asks for changes through its signals.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_WORKBENCH_MAINWINDOW_H
#define KILN_WORKBENCH_MAINWINDOW_H

#include "CompileJob.h"
#include "Document.h"
#include "ProjectHost.h"
#include "ShapesPanel.h"

#include <QMainWindow>
#include <QPointer>

#include <map>
#include <memory>
#include <vector>

class QAbstractItemModel;
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
class CompareView;
class DiagnosticsView;
class DispatchListModel;
class GraphPanel;
class GraphView;
class InspectorView;
class MemoryView;
class PhaseProgress;
class ProfileView;
class RunPanel;
class SizesView;
class SourceGraphPanel;
class TimelineView;
class TuningView;
} // namespace kiln::views

namespace kiln::workbench {

class HostRunJob;
class IrJob;
class ProjectController;
class ViewExporter;

/// The workbench's main window.
class MainWindow : public QMainWindow, public ProjectHost {
  Q_OBJECT
public:
  explicit MainWindow(QWidget *parent = nullptr);
  ~MainWindow() override;

  /// Opens `path`: plans a model (its views are drawn from the plan as soon
  /// as it exists, documentShown()), then generates its code and the
  /// stripped build in the background; reads an artifact. A running
  /// compilation is cancelled first. Until the plan is shown nothing
  /// changes but the status bar: errors and a cancel go to the diagnostics
  /// panel, and the model on screen, its Tune settings, its project file
  /// and the title stay as they were.
  void openFile(const QString &path);
  /// Shape fixes used for `path` (and given on the command line for all).
  void addShapeFix(const kiln::ShapeFix &fix) { globalFixes_.push_back(fix); }
  /// Parses "INPUT=1x76x32x1" and fixes that input of the last file that
  /// failed (or of the open model): the model shown gets it as one
  /// undoable Tune step (saved in its .kilnproj, re-planned); another file
  /// is opened with it, and the fix becomes that model's first Tune step
  /// once its plan is shown. False (a warning in the diagnostics panel) if
  /// the text is malformed or there is no model.
  bool applyShapeFix(const QString &fix);
  /// applyShapeFix for the model file `path`.
  bool applyShapeFix(const QString &fix, const QString &path);
  /// The file whose last open failed or was cancelled (empty after a
  /// success), and whether it was cancelled.
  const QString &lastFailedPath() const override { return lastFailed_; }
  /// The inputs whose dynamic dimensions stopped the last failed open or
  /// build, with the sizes the compiler suggests; empty if something else
  /// stopped it (or it succeeded).
  const std::vector<kiln::views::DynamicInput> &lastUnfixedInputs() const override {
    return lastUnfixed_;
  }
  bool lastOpenCancelled() const override { return lastCancelled_; }
  /// The diagnostics panel's last message.
  QString lastDiagnostic() const override;
  /// The dispatch of the shared selection's current row (-1: none).
  qint64 currentDispatch() const override;
  /// The status bar's text (the summary, with the phase running).
  QString statusText() const;
  /// True from openFile() until compileFinished is emitted.
  bool isCompiling() const override;
  /// True while the Run dock runs (runOnHost() or its button), until
  /// runFinished is emitted.
  bool isRunning() const;
  /// The settings changed and could not be planned: the views keep the last
  /// build that planned, which Run on Host no longer runs (it would not be
  /// the settings' build). Cleared by the next document shown.
  void setStale(bool stale);
  bool isStale() const { return stale_; }
  /// The document shown (null before the first successful open).
  std::shared_ptr<const kiln::views::ModelDocument> document() const override { return doc_; }
  /// The last measured run of the document (null if none).
  const kiln::views::MeasuredRun *measuredRun() const { return measured_ ? measured_.get() : nullptr; }

  /// The views, for tests and the screenshot mode.
  kiln::views::GraphView *graphView() const;
  kiln::views::GraphPanel *graphPanel() const { return graph_; }
  kiln::views::TimelineView *timelineView() const { return timeline_; }
  kiln::views::MemoryView *memoryView() const { return memory_; }
  kiln::views::SizesView *sizesView() const { return sizes_; }
  kiln::views::ProfileView *profileView() const { return profile_; }
  /// File > Export View (its actions, and save() for tests).
  ViewExporter *viewExporter() const { return exporter_; }
  QMenu *exportViewMenu() const { return exportMenu_; }
  kiln::views::InspectorView *inspectorView() const { return inspector_; }
  /// The source graph and its operator details (the "Source Graph" dock,
  /// tabbed with the inspector).
  kiln::views::SourceGraphPanel *sourceGraphPanel() const { return source_; }
  kiln::views::DiagnosticsView *diagnostics() const { return diagnostics_; }
  kiln::views::PhaseProgress *phaseProgress() const { return progress_; }
  kiln::views::DispatchListModel *dispatchModel() const { return dispatchModel_; }
  QTableView *dispatchTable() const { return dispatchTable_; }
  /// The one shared selection (rows of dispatchModel()).
  QItemSelectionModel *selectionModel() const { return selection_; }
  QPushButton *cancelButton() const { return cancelButton_; }
  /// Build > Run on Host.
  QAction *runAction() const { return runAction_; }
  /// View > Reset Layout: every dock back where and as large as a new
  /// window puts it (applyDefaultLayout) for the window's present size,
  /// the default docks shown again; the document stays.
  void resetLayout();

  /// The dock holding `view` (nullptr for the central graph).
  QDockWidget *dockOf(QWidget *view) const;
  /// Milliseconds the last document change took to update every view's
  /// data (models, graph layout, plot items), painting excluded.
  double viewUpdateMs() const { return viewUpdateMs_; }
  /// File > Open Recent's labels for `paths`: the file name, and for a
  /// name two paths share, as many of its innermost folders as tell them
  /// apart ("model.tflite -- .../a/models", with an em dash and an
  /// ellipsis).
  static QStringList recentFileLabels(const QStringList &paths);
  /// File > Open Recent (its actions: "&1 LABEL", the path as tooltip).
  QMenu *recentMenu() const { return recentMenu_; }
  /// Help > About's text: Kiln, LLVM/MLIR and Qt versions.
  static QString aboutText();
  /// Every dock, in creation order.
  QList<QDockWidget *> docks() const { return docks_; }
  /// Tuning, project file, compare, run and export (ProjectController.h).
  ProjectController *projectController() const { return project_; }

public slots:
  /// Cancels the running compilation (the worker stops at the next phase).
  void cancelCompile();
  /// Build > Cancel, Esc and the status bar's Cancel: cancels the
  /// compilation and the Run dock's run or validation (it stops before its
  /// next wave, RunPanel::cancel).
  void cancelWork();
  /// Runs the document's artifact on the host as the Run dock's Run on
  /// Host button does (kiln::views::RunPanel::run: its inputs,
  /// hostRunOptions(), a trace after the timed runs); the dock shows the
  /// outputs and latency, the timeline the measured times.
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
  /// A host run ended (the Run dock's, from runOnHost() or its button):
  /// `ok` when it measured the document shown.
  void runFinished(bool ok);

protected:
  void closeEvent(QCloseEvent *event) override;
  /// On the first show, a window larger than its screen's available area
  /// (a geometry saved on a larger screen, or a frame that adds to the
  /// default size) is shrunk and moved to fit it, frame included; on a
  /// screen below 1024x700 the window keeps that smallest size.
  void showEvent(QShowEvent *event) override;

  void dragEnterEvent(QDragEnterEvent *event) override;
  void dropEvent(QDropEvent *event) override;

private:
  /// The constructor's phases. The plan's item models and the one shared
  /// dispatch selection.
  void createModels();
  /// Every view and its dock, in the default layout (tab order follows
  /// creation): the graph in the middle; Dispatches and Tune tabbed on the
  /// left; the inspector on the right; timeline, profile, memory,
  /// commands, buffers, sizes, diagnostics, Compare and Run tabbed along
  /// the bottom.
  void createDocks();
  /// Status bar: summary, per-phase progress, Cancel.
  void createStatusBar();
  /// The views' selection and document interface, the inspector's and the
  /// Run dock's jobs, the diagnostics panel's actions, the Run dock's runs.
  void connectViews();
  /// ProjectController's requests of the window, and what it follows of it.
  void connectProject();
  /// The window size used when no geometry was saved: 85 % of the screen's
  /// available area, at least 1024x700 pixels (the smallest window the
  /// default layout is made for), within the screen where it is larger.
  QSize defaultWindowSize() const;
  /// Shrinks and moves the window into its screen's available area.
  void fitToScreen();

  /// Sizes the default docks for the current window size: the left dock
  /// about a fifth of the width (240-340 px), the inspector as wide or as
  /// wide as its controls need, the bottom strip about a quarter of the
  /// height (200-280 px); the graph in the middle gets the rest.
  void applyDefaultLayout();
  void createActions();
  /// Shows `doc` in every view (null: none); the status bar then says its
  /// summary followed by `phase` (what is still running).
  void setDocument(std::shared_ptr<const kiln::views::ModelDocument> doc, const QString &phase = QString());
  /// Starts a CompileJob for `abs` (planFirst: show the plan before code).
  void startJob(const QString &abs, bool planFirst);
  void onPlanReady(CompileJob *job, const QString &path);
  void onDefaultBuilt(CompileJob *job, const QString &path);
  void onCompileFinished(CompileJob *job, const QString &path);
  /// Shows `text` in the status bar, unless a host run owns it.
  void setStatus(const QString &text);
  void showCompiled(const kiln::views::ModelDocument &doc, const QString &path);
  /// The status bar's summary of the document shown.
  QString summaryText() const;
  void addRecent(const QString &path);
  void updateRecentMenu();
  /// The Run dock's run started: the status bar says "Running on the
  /// host..." until onRunFinished.
  void onRunStarted();
  /// The Run dock's run ended: measured times to the timeline, a note to
  /// Diagnostics, the status bar back from "Running on the host...".
  void onRunFinished(bool ok);
  void updateActions();
  /// Adds `w` as dock `name` (its saved-state key) in `area`; a view that
  /// does not scroll by itself goes in a QScrollArea, so a small dock
  /// scrolls instead of squeezing the view below its minimum size.
  QDockWidget *addDock(QWidget *w, const QString &title, const QString &name, Qt::DockWidgetArea area);
  /// A read-only table of `model`'s rows (one selected at a time).
  QTableView *createTable(QAbstractItemModel *model, const QString &accessibleName);
  /// Brings the diagnostics dock to the front.
  void raiseDiagnostics();
  /// Reads the source graph of the model at `path` on a worker thread
  /// (kiln::readSourceGraph) and hands it, or the reader's error, to the
  /// Source Graph dock.
  void readSourceGraph(const QString &path);

  /// The dock layout of a new window (saveState after applyDefaultLayout),
  /// which resetLayout restores.
  QByteArray defaultState_;
  bool fittedToScreen_ = false;
  kiln::views::GraphPanel *graph_ = nullptr;
  kiln::views::TimelineView *timeline_ = nullptr;
  kiln::views::MemoryView *memory_ = nullptr;
  kiln::views::SizesView *sizes_ = nullptr;
  kiln::views::ProfileView *profile_ = nullptr;
  kiln::views::InspectorView *inspector_ = nullptr;
  kiln::views::SourceGraphPanel *source_ = nullptr;
  kiln::views::DiagnosticsView *diagnostics_ = nullptr;
  kiln::views::PhaseProgress *progress_ = nullptr;
  kiln::views::TuningView *tuning_ = nullptr;
  kiln::views::CompareView *compare_ = nullptr;
  kiln::views::RunPanel *run_ = nullptr;
  /// The views of the document, in update order (setDocument).
  std::vector<kiln::views::DocumentView *> documentViews_;
  IrJob *irJob_ = nullptr;
  HostRunJob *runJob_ = nullptr;
  kiln::views::DispatchListModel *dispatchModel_ = nullptr;
  kiln::views::CommandListModel *commandModel_ = nullptr;
  kiln::views::BufferListModel *bufferModel_ = nullptr;
  QItemSelectionModel *selection_ = nullptr;
  QTableView *dispatchTable_ = nullptr;
  QPushButton *cancelButton_ = nullptr;
  QLabel *summary_ = nullptr;
  QMenu *recentMenu_ = nullptr;
  QMenu *exportMenu_ = nullptr;
  ViewExporter *exporter_ = nullptr;
  QTableView *commandTable_ = nullptr, *bufferTable_ = nullptr;
  QAction *closeAction_ = nullptr, *runAction_ = nullptr, *cancelAction_ = nullptr;
  bool stale_ = false;
  QList<QDockWidget *> docks_;
  double viewUpdateMs_ = 0;
  ProjectController *project_ = nullptr;

  std::shared_ptr<const kiln::views::ModelDocument> doc_;
  std::unique_ptr<kiln::views::MeasuredRun> measured_;
  QPointer<CompileJob> job_;
  /// The status a host run covers: the text it replaced, or the latest
  /// setStatus() during the run (shown again if a compilation is still
  /// going when the run ends).
  QString statusBeforeRun_;
  bool running_ = false;
  /// Last file whose compilation failed (applyShapeFix fixes it).
  QString lastFailed_;
  std::vector<kiln::views::DynamicInput> lastUnfixed_;
  bool lastCancelled_ = false;
  /// Fixes from the command line, for every model.
  std::vector<kiln::ShapeFix> globalFixes_;
};

} // namespace kiln::workbench

#endif
