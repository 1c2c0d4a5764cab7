//===- ProjectController.h - Tuning, project file, compare, run -*- C++ -*-===//
//
// The workbench's side of a model's settings (kiln::Project, whose
// kiln::BuildRecipe every edit goes through: kiln::setRecipeOption for
// each setting typed or chosen, kiln::recipeCompileOptions to build):
//   - loads MODEL.kilnproj when a model is opened (an unreadable one is
//     reported in the diagnostics panel and set aside, never overwritten)
//     and autosaves it (atomically) after every change, so closing or
//     crashing loses nothing;
//   - every change (tile sizes, fusion, fixed shapes, inputs fixed to
//     values, target, profile, format, export settings) is one QUndoStack
//     command (Edit menu,
//     Ctrl+Z / Ctrl+Shift+Z);
//   - the Export dialog changes only the export settings and folder
//     (kiln::ExportSettings), never the working recipe: no re-plan;
//   - a change re-plans on a worker thread (kiln::planModel, latest wins)
//     and shows the new plan in every view at once; code generation follows
//     in the background (buildRequested) shortly after the last change, or
//     at once with Build;
//   - drives the Tune, Compare and Run docks (MainWindow creates them, with
//     every other dock) and owns the Export dialog.
// It reads the window through ProjectHost and asks it for changes through
// its signals (documentReplanned, buildRequested, diagnostic, ...).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_WORKBENCH_PROJECTCONTROLLER_H
#define KILN_WORKBENCH_PROJECTCONTROLLER_H

#include "DiagnosticsView.h"
#include "Document.h"
#include "ExportDialog.h"
#include "ProjectHost.h"
#include "ShapesPanel.h"

#include "kiln/Artifact.h"
#include "kiln/ModelInputs.h"
#include "kiln/Project.h"

#include <QFuture>
#include <QObject>
#include <QPointer>
#include <QTimer>

#include <atomic>
#include <map>
#include <optional>
#include <vector>

class QAction;
class QItemSelectionModel;
class QLineEdit;
class QUndoStack;
class QWidget;

namespace kiln::views {
class CompareView;
class RunPanel;
class TuningView;
} // namespace kiln::views

namespace kiln::workbench {

/// The docks ProjectController drives (the window creates them) and the
/// shared dispatch selection (over the window's DispatchListModel) that
/// Tune's rows follow and set.
struct ProjectViews {
  kiln::views::TuningView *tuning = nullptr;
  kiln::views::CompareView *compare = nullptr;
  kiln::views::RunPanel *run = nullptr;
  QItemSelectionModel *selection = nullptr;
};

class ProjectController : public QObject {
  Q_OBJECT
public:
  /// Drives `views` for the window `host`; `parent` (the window) owns the
  /// controller and the Export dialog.
  ProjectController(ProjectHost *host, const ProjectViews &views, QWidget *parent);
  ~ProjectController() override;

  /// MainWindow::openFile asks for the options to compile `path` with: the
  /// current settings for the model being tuned, else those of `path`'s
  /// .kilnproj (read only; defaults if it is missing or unreadable) with
  /// the shape fixes waiting for it (fixShape). Nothing else changes:
  /// Tune switches when the model is shown (followDocument). `base`
  /// carries the command line's shape fixes (used for inputs the project
  /// does not fix).
  kiln::CompileOptions optionsFor(const QString &path, const kiln::CompileOptions &base);
  /// Makes Tune, the project file and the undo history follow the document
  /// the window shows (none for a .kiln artifact or no document); called by
  /// MainWindow::setDocument before documentShown.
  void followDocument();
  /// Fixes input `fix.input` of the model file `path` (absolute) to
  /// `fix.shape`: for the model being tuned one undoable step (saved,
  /// re-planned, built); another model is opened with it, and the fix
  /// becomes that model's first undoable step once its plan is shown.
  void fixShape(const QString &path, const kiln::ShapeFix &fix);

  const kiln::Project &project() const { return project_; }
  /// The model being tuned and its project file (empty for none / .kiln).
  QString modelPath() const { return modelPath_; }
  QString projectPath() const { return projectPath_; }
  QUndoStack *undoStack() const { return undo_; }
  QAction *undoAction() const { return undoAction_; }
  QAction *redoAction() const { return redoAction_; }
  QAction *exportAction() const { return exportAction_; }
  /// Build > Build Now (Ctrl+B): buildNow().
  QAction *buildAction() const { return buildAction_; }
  kiln::views::TuningView *tuningView() const { return tuning_; }
  kiln::views::CompareView *compareView() const { return compare_; }
  kiln::views::RunPanel *runPanel() const { return run_; }
  /// The model's inputs with dynamic dimensions (kiln::readModelInputs:
  /// TFLite -1 in the shape signature, ONNX symbolic dimensions), with the
  /// sizes the compiler suggests.
  const std::vector<kiln::views::DynamicInput> &dynamicInputs() const { return dynamic_; }
  /// The ONNX model's inputs the shapes panel offers to fix to values
  /// (kiln::views::valueInputsOf; read when the model is shown).
  const std::vector<kiln::views::ValueInput> &valueInputs() const { return valueInputs_; }

  /// Replaces the settings as one undoable step named `what`; no-op if
  /// nothing changes.
  void setProject(const kiln::Project &project, const QString &what);
  /// Generates code for the current settings now.
  void buildNow();
  /// Milliseconds between the last change and code generation (default
  /// 800).
  void setBuildDelay(int ms) { buildTimer_.setInterval(ms); }
  /// A re-plan is running.
  bool isReplanning() const { return replanRunning_ > 0; }
  /// Code generation is scheduled or running.
  bool isBuildPending() const;
  /// Re-plans finished and shown since the start; time of the last one.
  int replanCount() const { return replans_; }
  double lastReplanMs() const { return lastReplanMs_; }
  /// Dynamic-input discovery is running.
  bool isDiscovering() const { return discovering_; }
  /// Reading the inputs that may be fixed to values is running.
  bool isReadingValueInputs() const { return readingValues_; }

  /// Compare: default vs stripped of the current settings; keep the
  /// current build as A; current build as B.
  void compareDefaultVsStripped();
  void pinCurrent();
  void compareWithCurrent();
  bool isComparing() const { return comparing_ > 0; }
  /// Compare's outputs table: the open model's build against the model or
  /// artifact at `path` (a model is compiled for this host with default
  /// settings) on the same random inputs (kiln::compareModels, in a job off
  /// the GUI thread); emits outputsCompared. compareOutputsWithModel asks
  /// for the file with a QFileDialog first.
  void compareOutputsWithModel();
  void compareOutputsWith(const QString &path);
  bool isComparingOutputs() const { return comparingOutputs_ > 0; }

  /// Opens the Export dialog (non-modal; the controller keeps it).
  ExportDialog *openExportDialog();
  ExportDialog *exportDialog() const { return exportDialog_; }

public slots:
  /// The window showed a document (a re-plan or a finished build): Tune's
  /// table and selection and the Run dock's artifact follow it.
  void onDocumentShown();
  /// A compilation ended (`ok`: a new document is shown). Only the model
  /// being tuned is Tune's business: another file that failed to open
  /// changed nothing but the diagnostics.
  void onCompileFinished(bool ok);

signals:
  /// The settings changed (edit, undo, redo or another model's project).
  void projectChanged();
  void replanFinished(bool ok);
  void compareFinished(bool ok);
  void outputsCompared(bool ok);
  void inputsDiscovered();
  /// The inputs that may be fixed to values were read (valueInputs()).
  void valueInputsRead();

  // What the controller asks of the window (MainWindow connects them).
  /// A re-plan of the model being tuned: show `doc` in every view, the
  /// status bar saying `phase` after its summary.
  void documentReplanned(std::shared_ptr<const kiln::views::ModelDocument> doc,
                         const QString &phase);
  /// The current settings do not plan: the views keep the last build that
  /// planned, which Run on Host no longer runs; the status bar says
  /// `note` after the summary.
  void replanRefused(const QString &note);
  /// Generate code for the model `path` (absolute) with optionsFor(), its
  /// plan being shown already.
  void buildRequested(const QString &path);
  /// Open the model `path` (absolute; a shape fix for it is waiting).
  void openRequested(const QString &path);
  /// The user picked dispatch `id` in Tune: select it in every view.
  void dispatchChosen(qint64 id);
  /// A message about `file` for the diagnostics panel (`unfixed`: the
  /// inputs whose dynamic dimensions stopped a re-plan).
  void diagnostic(kiln::views::DiagnosticsView::Severity severity, const QString &file,
                  const QString &message, const std::vector<kiln::views::DynamicInput> &unfixed);
  /// Bring the diagnostics panel to the front (a project file that cannot
  /// be read or saved).
  void diagnosticsRequested();

private:
  friend class SetProjectCommand;
  /// The constructor's phases: Edit and Build actions; Tune's edits as
  /// undoable steps; Compare's buttons; the Run dock's measurement kept for
  /// Compare; Tune's rows sharing `selection`.
  void createActions();
  void connectTuneEdits();
  void connectCompare();
  void connectRun();
  void connectSelection(QItemSelectionModel *selection);
  /// Gives the Run dock the artifact of the document shown (none: empty).
  void showArtifactToRun();
  /// Sets, saves and shows `project`; re-plans and schedules a build unless
  /// `replanToo` is false (the open in progress already uses it).
  void applyProject(const kiln::Project &project, bool replanToo = true);
  /// Pushes the shape fixes waiting for the model being tuned as one
  /// undoable step (its open already used them).
  void adoptPendingFixes();
  /// After a failed open of `path` (not cancelled, not for want of fixed
  /// shapes): when its saved settings are not the defaults, reopens it with
  /// default ones (failedSettings_), so a setting that does not build can
  /// never lock a model out of the workbench.
  void reopenWithDefaultsIfSettingsFail(const QString &path);
  /// In switchModel: the defaults of a model reopened that way, as one
  /// undoable step from its saved settings (Undo brings them back); the
  /// saved file is kept as X.kilnproj.failed.
  void adoptDefaultsForFailedSettings(const QString &path);
  void switchModel(const QString &path);
  void autosave();
  /// Appends notSaved_ to Tune's message line unless it ends with it (after
  /// a re-plan's or a build's message); nothing once a save succeeded.
  void reshowNotSaved();
  void replan();
  void discoverInputs();
  /// Reads, on a worker thread, the ONNX model's inputs that may be fixed
  /// to values (valueInputs_), then shows them.
  void readValueInputs();
  /// Shows the tuned model's plan in Tune, keeping a cell being typed in
  /// (reopened on the same dispatch with its text), the selection and the
  /// scroll position across the model reset.
  void refreshTuning();
  /// Tune's open cell editor, or nullptr.
  QLineEdit *openEditor() const;
  /// The project's target is bare metal (planned as a C module, no
  /// artifact to show or run).
  bool isBareMetal() const;
  void showSettings();
  /// Compile options for the project (format always .kiln: the workbench
  /// shows and runs artifacts; the format matters for export).
  /// `sameModel`: `project` is the tuned model's (its dynamic inputs
  /// name the command line's fixes).
  /// `modelPath`: the project's model (empty: the tuned one's); its inputs
  /// say which shape fixes name the same input by name and by index.
  kiln::CompileOptions compileOptions(const kiln::Project &project, QString *error = nullptr,
                                      bool sameModel = true,
                                      const QString &modelPath = QString()) const;
  /// The inputs the model at `path` declares (kiln::readModelInputs), read
  /// once per path; empty when it does not read.
  const std::vector<kiln::ModelInput> &modelInputsOf(const QString &path) const;
  /// `fix` with its input named as the model names it ("0" ->
  /// "serving_default_input_1:0"), so a project holds one key per input.
  kiln::ShapeFix namedFix(const QString &path, kiln::ShapeFix fix) const;
  /// Sets `fix` (namedFix) in `recipe`, dropping the keys that name the
  /// same input of the model at `path` another way.
  void putFix(const QString &path, kiln::BuildRecipe &recipe, const kiln::ShapeFix &fix) const;
  void summarize(std::vector<uint8_t> a, std::vector<uint8_t> b, bool compileStripped, const QString &labelA,
                 const QString &labelB);
  void showCompare();
  /// Fills the latency of the summaries `a` and `b` (of the artifacts
  /// `aBytes`, `bBytes`; nullopt: no build on that side): the Run dock's
  /// `known` measurement for its artifact, else measured with
  /// stoppableRunOptions(). Blocks: runs on the worker thread.
  void measureLatency(std::optional<kiln::BuildSummary> &a, const std::vector<uint8_t> &aBytes,
                      std::optional<kiln::BuildSummary> &b, const std::vector<uint8_t> &bBytes,
                      const std::pair<std::vector<uint8_t>, kiln::LatencyStats> &known) const;
  void error(const QString &file, const QString &message);
  void note(const QString &file, const QString &message);
  /// Selects dispatch `id`'s row in Tune (-1: none) without echoing it
  /// back to the window's selection.
  void selectTuningRow(int64_t id);
  /// A refused setting typed by the user: a warning, not an error.
  void warn(const QString &file, const QString &message);
  /// Applies one setting to `project`'s recipe through the recipe's parser
  /// (kiln::setRecipeOption); a refused value is noted and shown, and
  /// false returned (nothing changes).
  bool setting(kiln::Project &project, llvm::StringRef key, const std::string &value);

  ProjectHost *host_;
  /// The Export dialog's parent (the window).
  QWidget *dialogParent_;
  kiln::Project project_;
  QString modelPath_, projectPath_;
  /// Saving is refused for a project that could not be read nor set aside.
  bool saveBlocked_ = false;
  /// "Not saved: why" while the last autosave of project file
  /// `notSavedFor_` failed (empty once one succeeds); kept on Tune's
  /// message line after the re-plan's and the build's messages.
  QString notSaved_, notSavedFor_;
  /// Opened with a bare-metal target: the host build is shown first, then
  /// the target's plan (the model's path; empty for none).
  QString replanWhenShown_;
  /// Tune's selection is being set from the window's (no echo).
  bool syncingSelection_ = false;
  /// Shape fixes waiting for a model that failed to open (absolute path):
  /// used by optionsFor, adopted once its plan is shown.
  std::map<QString, std::vector<kiln::ShapeFix>> pendingFixes_;
  /// A model whose saved settings do not build, reopened with default
  /// ones (absolute path): the saved project, the file it came from and
  /// why its build failed. optionsFor builds the defaults; switchModel sets
  /// the file aside and makes the defaults one undoable step.
  struct FailedSettings {
    kiln::Project saved;
    QString file, why;
  };
  std::map<QString, FailedSettings> failedSettings_;
  mutable std::map<QString, std::vector<kiln::ModelInput>> modelInputs_;
  QUndoStack *undo_;
  QAction *undoAction_, *redoAction_, *exportAction_, *buildAction_;
  kiln::views::TuningView *tuning_;
  kiln::views::CompareView *compare_;
  kiln::views::RunPanel *run_;
  QPointer<ExportDialog> exportDialog_;
  QTimer buildTimer_;
  int generation_ = 0;
  int replanRunning_ = 0;
  int replans_ = 0;
  double lastReplanMs_ = 0;
  bool discovering_ = false;
  int discoverGeneration_ = 0;
  std::vector<kiln::views::DynamicInput> dynamic_;
  bool readingValues_ = false;
  int valuesGeneration_ = 0;
  std::vector<kiln::views::ValueInput> valueInputs_;
  /// Shape fixes from the command line and the diagnostics panel.
  std::vector<kiln::ShapeFix> baseFixes_;
  int comparing_ = 0;
  int comparingOutputs_ = 0;
  QString labelA_, labelB_;
  std::optional<kiln::BuildSummary> a_, b_;
  /// The settings each side was built with: a side whose settings have
  /// changed since is labelled "(earlier settings)", except a pinned
  /// "before" build, which is earlier by design.
  kiln::BuildRecipe recipeA_, recipeB_;
  bool pinnedA_ = false;
  /// The Run dock's last measurement and the artifact it measured: Compare
  /// shows it for that build instead of measuring it a second time.
  std::pair<std::vector<uint8_t>, kiln::LatencyStats> measurement_;
  /// Workers still running (waited for on destruction).
  std::vector<QFuture<void>> futures_;
  /// Set by the destructor: Compare's measurements and output runs stop
  /// before their next wave (RunOptions::cancelled), so closing the window
  /// never waits out a long measurement.
  std::atomic<bool> stopping_{false};
  /// hostRunOptions() that stop when the controller is destroyed.
  kiln::RunOptions stoppableRunOptions() const;
};

} // namespace kiln::workbench

#endif
