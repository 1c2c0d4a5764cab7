//===- ProjectController.cpp - Tuning, project file, compare, run --------===//
#include "ProjectController.h"

#include "kiln/ModelInputs.h"

#include "CompileJob.h"
#include "ExportDialog.h"
#include "HostRunJob.h"

#include "CompareView.h"
#include "DiagnosticsView.h"
#include "PlanModels.h"
#include "RunPanel.h"
#include "TimelineView.h"
#include "TuningView.h"

#include "kiln/Artifact.h"
#include "kiln/Compare.h"
#include "kiln/ReadFile.h"
#include "kiln/Run.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QFileInfo>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QScrollBar>
#include <QTableView>
#include <QUndoStack>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <utility>

namespace kiln::workbench {

using namespace kiln::views;

static QString errorText(llvm::Error e) { return QString::fromStdString(llvm::toString(std::move(e))); }

/// One change of the settings.
class SetProjectCommand : public QUndoCommand {
public:
  /// `applied`: the first redo only sets and saves `after` (a compilation
  /// with it is already running); later ones re-plan as usual.
  SetProjectCommand(ProjectController *c, kiln::Project before, kiln::Project after, const QString &text,
                    bool applied = false)
      : QUndoCommand(text), c_(c), before_(std::move(before)), after_(std::move(after)), applied_(applied) {}
  void undo() override { c_->applyProject(before_); }
  void redo() override { c_->applyProject(after_, !std::exchange(applied_, false)); }

private:
  ProjectController *c_;
  kiln::Project before_, after_;
  bool applied_;
};

ProjectController::ProjectController(ProjectHost *host, const ProjectViews &views, QWidget *parent)
    : QObject(parent), host_(host), dialogParent_(parent), tuning_(views.tuning),
      compare_(views.compare), run_(views.run) {
  buildTimer_.setSingleShot(true);
  buildTimer_.setInterval(800);
  connect(&buildTimer_, &QTimer::timeout, this, &ProjectController::buildNow);
  tuning_->setEnabled(false);
  createActions();
  connectTuneEdits();
  connectCompare();
  connectRun();
  connectSelection(views.selection);
  // The re-plan that follows a change writes on Tune's message line: while
  // the last save failed, "Not saved" stays after its text (and after the
  // build's: onCompileFinished).
  connect(this, &ProjectController::replanFinished, this, &ProjectController::reshowNotSaved);
}

void ProjectController::createActions() {
  // Edit (undo/redo) and Build's Build Now and Export; the window puts them
  // in its menus.
  undo_ = new QUndoStack(this);
  undoAction_ = undo_->createUndoAction(this, tr("&Undo"));
  undoAction_->setShortcuts({QKeySequence(Qt::CTRL | Qt::Key_Z)});
  redoAction_ = undo_->createRedoAction(this, tr("&Redo"));
  redoAction_->setShortcuts(
      {QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z), QKeySequence(Qt::CTRL | Qt::Key_Y)});
  buildAction_ = new QAction(tr("&Build Now"), this);
  buildAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_B));
  buildAction_->setToolTip(tr("Generate code for the current settings now"));
  connect(buildAction_, &QAction::triggered, this, &ProjectController::buildNow);
  exportAction_ = new QAction(tr("&Export\u2026"), this);
  exportAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
  exportAction_->setToolTip(tr("Export a deployment bundle for a device target"));
  connect(exportAction_, &QAction::triggered, this, [this] { openExportDialog(); });
  exportAction_->setEnabled(false);
  buildAction_->setEnabled(false);
}

void ProjectController::connectTuneEdits() {
  connect(tuning_->model(), &TuningModel::tilesEdited, this, [this](qint64 id, const std::vector<int64_t> &sizes) {
    kiln::Project p = project_;
    if (sizes.empty())
      p.recipe.tiles.erase(id);
    else
      p.recipe.tiles[id] = sizes; // checked by TuningModel::checkTiles
    QStringList s;
    for (int64_t v : sizes)
      s << QString::number(v);
    setProject(p, sizes.empty() ? tr("Compiler's tile sizes for dispatch %1").arg(id)
                                : tr("Tile sizes %1 for dispatch %2").arg(s.join(QLatin1Char(','))).arg(id));
  });
  connect(tuning_->model(), &TuningModel::rejected, this, [this](qint64, const QString &message) {
    warn(projectPath_, tr("not applied: %1").arg(message));
  });
  connect(tuning_->shapes(), &ShapesPanel::rejected, this,
          [this](const QString &message) { warn(projectPath_, tr("not applied: %1").arg(message)); });
  connect(tuning_->model(), &TuningModel::fusionEdited, this, [this](qint64 id, bool on) {
    kiln::Project p = project_;
    std::vector<int64_t> &noFusion = p.recipe.noFusion;
    noFusion.erase(std::remove(noFusion.begin(), noFusion.end(), int64_t(id)), noFusion.end());
    if (!on)
      setting(p, "no-fusion", std::to_string(id));
    setProject(p, on ? tr("Fusion on for dispatch %1").arg(id) : tr("Fusion off for dispatch %1").arg(id));
  });
  connect(tuning_->shapes(), &ShapesPanel::shapeEdited, this,
          [this](const QString &input, const std::vector<int64_t> &shape) {
            kiln::Project p = project_;
            for (const DynamicInput &d : dynamic_)
              if (d.name == input)
                p.recipe.fixedShapes.erase(std::to_string(d.index)); // one key per input
            p.recipe.fixedShapes.erase(input.toStdString());
            QStringList s;
            for (int64_t v : shape)
              s << QString::number(v);
            if (setting(p, "fix-shape", input.toStdString() + "=" + s.join(QLatin1Char('x')).toStdString()))
              setProject(p, tr("Shape %1 for %2").arg(s.join(QLatin1Char('x')), input));
          });
  connect(tuning_->shapes(), &ShapesPanel::valueEdited, this,
          [this](const QString &input, const QString &value) {
            kiln::Project p = project_;
            for (const ValueInput &v : valueInputs_)
              if (v.name == input)
                p.recipe.fixedValues.erase(std::to_string(v.index)); // one key per input
            p.recipe.fixedValues.erase(input.toStdString());
            if (value.isEmpty()) {
              setProject(p, tr("Input %1 not fixed").arg(input));
              return;
            }
            if (setting(p, "fix-value", input.toStdString() + "=" + value.toStdString()))
              setProject(p, tr("Value %1 for %2").arg(value, input));
          });
  connect(tuning_, &TuningView::targetChosen, this, [this](const QString &t) {
    kiln::Project p = project_;
    if (setting(p, "target", t.toStdString()))
      setProject(p, tr("Target %1").arg(t));
  });
  connect(tuning_, &TuningView::profileChosen, this, [this](const QString &t) {
    kiln::Project p = project_;
    if (setting(p, "profile", t.toStdString()))
      setProject(p, tr("Profile %1").arg(t));
  });
  connect(tuning_, &TuningView::formatChosen, this, [this](const QString &t) {
    kiln::Project p = project_;
    if (setting(p, "output-format", t.toStdString()))
      setProject(p, tr("Output format %1").arg(t));
  });
  connect(tuning_, &TuningView::fusionChosen, this, [this](bool on) {
    kiln::Project p = project_;
    p.recipe.fusion = on;
    setProject(p, on ? tr("Fusion on") : tr("Fusion off"));
  });
  connect(tuning_, &TuningView::buildRequested, this, &ProjectController::buildNow);
  connect(tuning_, &TuningView::resetRequested, this, [this] {
    kiln::Project p = project_;
    p.recipe.tiles.clear();
    p.recipe.noFusion.clear();
    p.recipe.fusion = true;
    setProject(p, tr("Reset tile sizes and fusion"));
  });
}

void ProjectController::connectCompare() {
  connect(compare_, &CompareView::defaultVsStrippedRequested, this, &ProjectController::compareDefaultVsStripped);
  connect(compare_, &CompareView::pinRequested, this, &ProjectController::pinCurrent);
  connect(compare_, &CompareView::currentRequested, this, &ProjectController::compareWithCurrent);
  connect(compare_, &CompareView::modelComparisonRequested, this,
          &ProjectController::compareOutputsWithModel);
}

void ProjectController::connectRun() {
  // Compare shows the Run dock's last measurement for the build it measured
  // rather than measuring it a second time (the window shows it first).
  connect(run_, &RunPanel::runFinished, this, [this](bool ok) {
    if (ok && run_->result().latency.medianMs >= 0)
      measurement_ = {run_->resultArtifact(), run_->result().latency};
  });
}

void ProjectController::connectSelection(QItemSelectionModel *selection) {
  // Tune's rows are dispatches: they share the window's dispatch selection.
  connect(tuning_->table()->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex &current) {
            if (!current.isValid() || syncingSelection_)
              return;
            qint64 id = tuning_->model()->dispatchAt(current.row());
            if (id >= 0)
              emit dispatchChosen(id);
          });
  followDispatchSelection(this, nullptr, selection, [this](int64_t id) { selectTuningRow(id); });
}

void ProjectController::showArtifactToRun() {
  auto doc = host_->document();
  run_->setArtifact(doc ? doc->artifact : std::vector<uint8_t>(),
                    doc ? QFileInfo(doc->path).fileName() : QString(),
                    doc ? doc->hostLoadError : QString());
}

void ProjectController::onDocumentShown() {
  // Every document shown (a re-plan or a finished build) refreshes the
  // tuning table and the run panel.
  refreshTuning();
  selectTuningRow(host_->currentDispatch());
  showArtifactToRun();
}

void ProjectController::onCompileFinished(bool ok) {
  QString bareMetal = std::exchange(replanWhenShown_, QString());
  if (ok && !bareMetal.isEmpty() && bareMetal == modelPath_ && isBareMetal())
    replan();
  auto shown = host_->document();
  if (ok && shown && shown->path == modelPath_ && !shown->artifact.empty() && !isReplanning() &&
      !host_->isCompiling())
    tuning_->showMessage(tr("Built in %1 ms: artifact %2 bytes, %3 dispatches, arena %4.")
                             .arg(shown->compileMs, 0, 'f', 0)
                             .arg(shown->artifact.size())
                             .arg(shown->plan->dispatches.size())
                             .arg(formatBytes(shown->plan->memory.arenaBytes)),
                         false);
  bool ours = !ok && !modelPath_.isEmpty() && host_->lastFailedPath() == modelPath_;
  // The import's own data says whether dynamic inputs stopped it.
  const std::vector<DynamicInput> &unfixed = host_->lastUnfixedInputs();
  bool dynamic = ours && !unfixed.empty();
  if (!ok && host_->lastOpenCancelled() && !host_->isCompiling() && shown &&
      shown->path == modelPath_ && shown->artifact.empty())
    tuning_->showMessage(
        tr("Code generation cancelled: the plan is shown, with no artifact to run or compare "
           "(Build generates it)."),
        false);
  if (ours && !dynamic && !host_->lastOpenCancelled() && !host_->isCompiling())
    tuning_->showMessage(tr("The build failed: %1 (Undo or Reset Tuning if a setting caused it)")
                             .arg(host_->lastDiagnostic()),
                         true);
  if (dynamic) {
    bool known = true;
    for (const DynamicInput &in : unfixed) {
      bool found = false;
      for (const DynamicInput &d : dynamic_)
        found |= d.index == in.index;
      known &= found;
    }
    if (!known)
      discoverInputs();
  }
  if (!ok && !ours && !dynamic && unfixed.empty() && !host_->lastOpenCancelled() &&
      !host_->lastFailedPath().isEmpty())
    reopenWithDefaultsIfSettingsFail(host_->lastFailedPath());
  showArtifactToRun();
  reshowNotSaved(); // after the build's message, as after the re-plan's
}

void ProjectController::reopenWithDefaultsIfSettingsFail(const QString &path) {
  const QString abs = QFileInfo(path).absoluteFilePath();
  if (kiln::isArtifactFile(abs.toStdString()))
    return;
  if (failedSettings_.erase(abs))
    return; // the defaults fail too: the settings were not the cause
  const QString file = QString::fromStdString(kiln::projectPathToRead(abs.toStdString()));
  if (!QFileInfo::exists(file))
    return;
  auto loaded = kiln::loadProject(file.toStdString());
  if (!loaded) {
    llvm::consumeError(loaded.takeError()); // reported when it is shown (switchModel)
    return;
  }
  if (loaded->recipe == kiln::BuildRecipe())
    return;
  failedSettings_[abs] = {*loaded, file, host_->lastDiagnostic()};
  note(file, tr("%1 does not build with the settings saved in %2; opening it with default settings "
                "(Edit > Undo brings the saved ones back)")
                 .arg(QFileInfo(abs).fileName(), QFileInfo(file).fileName()));
  QMetaObject::invokeMethod(
      this, [this, abs] { emit openRequested(abs); }, Qt::QueuedConnection);
}

void ProjectController::adoptDefaultsForFailedSettings(const QString &path) {
  auto it = failedSettings_.find(path);
  if (it == failedSettings_.end())
    return;
  FailedSettings failed = std::move(it->second);
  failedSettings_.erase(it);
  // Keep the file as it was before anything is saved over it.
  if (QFileInfo::exists(failed.file)) {
    auto aside = kiln::setAsideProject(failed.file.toStdString(), "failed");
    if (aside)
      note(failed.file, tr("the settings that do not build were kept as %1")
                            .arg(QFileInfo(QString::fromStdString(*aside)).fileName()));
    else
      warn(failed.file, errorText(aside.takeError()));
  }
  kiln::Project defaults = failed.saved; // export settings and folder kept
  defaults.model = QFileInfo(path).fileName().toStdString();
  defaults.recipe = kiln::BuildRecipe();
  failed.saved.model = defaults.model;
  project_ = failed.saved;
  // The open in progress already uses the defaults: set and save them.
  undo_->push(new SetProjectCommand(
      this, failed.saved, defaults,
      tr("Default settings (the saved ones do not build: %1)").arg(failed.why),
      /*applied=*/true));
}

void ProjectController::selectTuningRow(int64_t id) {
  int row = id >= 0 ? tuning_->model()->rowOfDispatch(id) : -1;
  QItemSelectionModel *sel = tuning_->table()->selectionModel();
  syncingSelection_ = true;
  if (row < 0) {
    sel->clearSelection();
  } else if (sel->currentIndex().row() == row) {
    // The current cell stays (a tile being typed in keeps its editor).
    sel->select(tuning_->model()->index(row, 0),
                QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  } else {
    QModelIndex index = tuning_->model()->index(row, 0);
    sel->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    tuning_->table()->scrollTo(index);
  }
  syncingSelection_ = false;
}

ProjectController::~ProjectController() {
  stopping_ = true;
  for (QFuture<void> &f : futures_)
    f.waitForFinished();
}

kiln::RunOptions ProjectController::stoppableRunOptions() const {
  kiln::RunOptions options = hostRunOptions();
  options.cancelled = [this] { return stopping_.load(); };
  return options;
}

void ProjectController::error(const QString &file, const QString &message) {
  emit diagnostic(DiagnosticsView::Severity::Error, file, message, {});
}
void ProjectController::note(const QString &file, const QString &message) {
  emit diagnostic(DiagnosticsView::Severity::Note, file, message, {});
}
void ProjectController::warn(const QString &file, const QString &message) {
  emit diagnostic(DiagnosticsView::Severity::Warning, file, message, {});
}

bool ProjectController::setting(kiln::Project &project, llvm::StringRef key, const std::string &value) {
  if (llvm::Error err = kiln::setRecipeOption(project.recipe, key, value)) {
    QString why = QString::fromStdString(kiln::settingErrorText(std::move(err)));
    warn(projectPath_, tr("not applied: %1").arg(why));
    tuning_->showMessage(why, true);
    return false;
  }
  return true;
}

bool ProjectController::isBuildPending() const {
  return buildTimer_.isActive() || host_->isCompiling();
}

kiln::CompileOptions ProjectController::optionsFor(const QString &path, const kiln::CompileOptions &base) {
  QString abs = QFileInfo(path).absoluteFilePath();
  if (kiln::isArtifactFile(abs.toStdString()))
    return base;
  baseFixes_ = base.fixedShapes;
  bool current = abs == modelPath_;
  kiln::Project project = project_;
  if (!current) {
    // Read only: an unreadable file is reported and set aside when the
    // model is shown (switchModel); until then its defaults are used.
    project = kiln::Project();
    QString file = QString::fromStdString(kiln::projectPathToRead(abs.toStdString()));
    if (auto failed = failedSettings_.find(abs); failed != failedSettings_.end()) {
      project = failed->second.saved; // its defaults: reopenWithDefaultsIfSettingsFail
      project.recipe = kiln::BuildRecipe();
    } else if (QFileInfo::exists(file)) {
      auto loaded = kiln::loadProject(file.toStdString());
      if (loaded)
        project = *loaded;
      else
        llvm::consumeError(loaded.takeError());
    }
  }
  if (auto it = pendingFixes_.find(abs); it != pendingFixes_.end())
    for (const kiln::ShapeFix &f : it->second)
      putFix(abs, project.recipe, f);
  QString why;
  kiln::CompileOptions options = compileOptions(project, &why, current, abs);
  if (!why.isEmpty()) {
    error(QString::fromStdString(kiln::projectPathFor(abs.toStdString())), why);
    return base;
  }
  if (options.format == kiln::OutputFormat::CModule) {
    // Bare metal: build the host artifact to show, then plan for the
    // target once it is shown.
    kiln::Project host = project;
    host.recipe.target = "host";
    host.recipe.targetCpu.clear();
    host.recipe.targetFeatures.clear();
    options = compileOptions(host, nullptr, current, abs);
    replanWhenShown_ = abs;
    note(abs, tr("%1 is bare metal: the views show its plan; code is generated for it on Export (a C "
                 "module), the host build only fills the sizes and runs")
                  .arg(QString::fromStdString(project.recipe.target)));
  }
  return options;
}

void ProjectController::followDocument() {
  auto doc = host_->document();
  QString path = doc && !doc->isArtifact ? doc->path : QString();
  if (path == modelPath_)
    return;
  switchModel(path);
}

/// "INPUT=1x76x32x1".
static QString fixText(const kiln::ShapeFix &fix) {
  QStringList dims;
  for (int64_t d : fix.shape)
    dims << QString::number(d);
  return QStringLiteral("%1=%2").arg(QString::fromStdString(fix.input), dims.join(QLatin1Char('x')));
}

void ProjectController::fixShape(const QString &path, const kiln::ShapeFix &given) {
  const kiln::ShapeFix fix = namedFix(path, given); // one key per input, the model's name
  QString text = fixText(fix);
  if (!modelPath_.isEmpty() && path == modelPath_) {
    kiln::Project p = project_;
    for (const auto &[key, shape] : project_.recipe.fixedShapes) // "0" and the name alike
      if (namedFix(path, {key, shape}).input == fix.input)
        p.recipe.fixedShapes.erase(key);
    if (!setting(p, "fix-shape", text.toStdString()))
      return;
    if (p == project_) {
      // Already set (the last build failed for another reason): build again.
      if (!host_->isCompiling())
        buildNow();
      return;
    }
    setProject(p, tr("Fix input shape %1").arg(text));
    return;
  }
  auto &list = pendingFixes_[path];
  list.erase(std::remove_if(list.begin(), list.end(), [&](const kiln::ShapeFix &f) { return f.input == fix.input; }),
             list.end());
  list.push_back(fix);
  note(path, tr("opening with input shape %1 (saved in %2 once its plan is shown)")
                 .arg(text, QFileInfo(QString::fromStdString(kiln::projectPathFor(path.toStdString()))).fileName()));
  emit openRequested(path);
}

void ProjectController::adoptPendingFixes() {
  auto it = pendingFixes_.find(modelPath_);
  if (it == pendingFixes_.end())
    return;
  std::vector<kiln::ShapeFix> fixes = std::move(it->second);
  pendingFixes_.erase(it);
  kiln::Project p = project_;
  QStringList texts;
  for (const kiln::ShapeFix &f : fixes) {
    putFix(modelPath_, p.recipe, f);
    texts << fixText(f);
  }
  if (p == project_)
    return;
  // The open in progress already uses these shapes: set and save them.
  undo_->push(new SetProjectCommand(this, project_, p, tr("Fix input shape %1").arg(texts.join(QStringLiteral(", "))),
                                    /*applied=*/true));
}

bool ProjectController::isBareMetal() const { return kiln::recipeIsBareMetal(project_.recipe); }

const std::vector<kiln::ModelInput> &ProjectController::modelInputsOf(const QString &path) const {
  auto it = modelInputs_.find(path);
  if (it != modelInputs_.end())
    return it->second;
  std::vector<kiln::ModelInput> inputs;
  if (!path.isEmpty() && !kiln::isArtifactFile(path.toStdString())) {
    auto read = kiln::readModelInputs(path.toStdString());
    if (read)
      inputs = std::move(*read);
    else
      llvm::consumeError(read.takeError()); // the build says why
  }
  return modelInputs_[path] = std::move(inputs);
}

kiln::ShapeFix ProjectController::namedFix(const QString &path, kiln::ShapeFix fix) const {
  if (const kiln::ModelInput *in = kiln::findModelInput(modelInputsOf(path), fix.input))
    fix.input = in->name;
  return fix;
}

void ProjectController::putFix(const QString &path, kiln::BuildRecipe &recipe,
                               const kiln::ShapeFix &fix) const {
  const kiln::ShapeFix named = namedFix(path, fix);
  for (auto it = recipe.fixedShapes.begin(); it != recipe.fixedShapes.end();)
    it = namedFix(path, {it->first, it->second}).input == named.input ? recipe.fixedShapes.erase(it)
                                                                      : std::next(it);
  recipe.fixedShapes[named.input] = named.shape;
}

kiln::CompileOptions ProjectController::compileOptions(const kiln::Project &project, QString *error,
                                                       bool sameModel,
                                                       const QString &modelPath) const {
  // The workbench shows and runs .kiln artifacts (the format matters for
  // export); a bare-metal target only plans, as the C module it exports.
  kiln::BuildRecipe recipe = project.recipe;
  recipe.format = kiln::recipeIsBareMetal(recipe) ? kiln::OutputFormat::CModule : kiln::OutputFormat::Artifact;
  auto made = kiln::recipeCompileOptions(recipe);
  if (!made) {
    QString e = QString::fromStdString(kiln::settingErrorText(made.takeError()));
    if (error)
      *error = e;
    return {};
  }
  kiln::CompileOptions options = *made;
  // The command line's and the diagnostics' fixes, where the project has none.
  const std::vector<kiln::ModelInput> &inputs =
      baseFixes_.empty() ? std::vector<kiln::ModelInput>()
                         : modelInputsOf(modelPath.isEmpty() ? modelPath_ : modelPath);
  for (const kiln::ShapeFix &f : baseFixes_) {
    bool have = false;
    const kiln::ModelInput *in = kiln::findModelInput(inputs, f.input);
    for (const kiln::ShapeFix &g : options.fixedShapes)
      have |= g.input == f.input || (in && kiln::findModelInput(inputs, g.input) == in);
    for (const DynamicInput &d : sameModel ? dynamic_ : std::vector<DynamicInput>())
      if (QString::fromStdString(f.input) == d.name || f.input == std::to_string(d.index))
        for (const kiln::ShapeFix &g : options.fixedShapes)
          have |= QString::fromStdString(g.input) == d.name || g.input == std::to_string(d.index);
    if (!have)
      options.fixedShapes.push_back(f);
  }
  return options;
}

void ProjectController::switchModel(const QString &path) {
  ++generation_;
  buildTimer_.stop();
  undo_->clear();
  modelPath_ = path;
  projectPath_.clear();
  saveBlocked_ = false;
  project_ = kiln::Project();
  dynamic_.clear();
  valueInputs_.clear();
  ++valuesGeneration_;
  readingValues_ = false;
  tuning_->shapes()->setInputs({}, {});
  tuning_->shapes()->setValueInputs({}, {});
  tuning_->shapes()->hide();
  tuning_->model()->setPlan(nullptr);
  tuning_->setEnabled(!path.isEmpty());
  exportAction_->setEnabled(!path.isEmpty());
  buildAction_->setEnabled(!path.isEmpty());
  a_.reset();
  b_.reset();
  compare_->setBuilds(QString(), std::nullopt, QString(), std::nullopt);
  if (path.isEmpty()) {
    tuning_->showMessage(tr("Open a model (.tflite, .onnx, .mlir) to tune it; a .kiln artifact is shown as built."), false);
    emit projectChanged();
    return;
  }
  projectPath_ = QString::fromStdString(kiln::projectPathFor(path.toStdString()));
  project_.model = QFileInfo(path).fileName().toStdString();
  modelInputs_.erase(path); // read again: the file may have changed since
  // An older workbench's MODEL.kilnproj is read (when it is this model's)
  // and left as it was; changes go to MODEL.EXT.kilnproj.
  const QString readPath = QString::fromStdString(kiln::projectPathToRead(path.toStdString()));
  // Settings that do not build are not "restored": the model opens with
  // the defaults (adoptDefaultsForFailedSettings says so, once).
  const bool failing = failedSettings_.count(path) > 0;
  if (readPath != projectPath_) {
    auto loaded = kiln::loadProject(readPath.toStdString());
    if (loaded) {
      project_ = *loaded;
      project_.model = QFileInfo(path).fileName().toStdString();
      if (!failing)
        note(readPath,
             tr("settings restored from %1 (an older workbench's name); changes are saved in %2")
                 .arg(QFileInfo(readPath).fileName(), QFileInfo(projectPath_).fileName()));
    } else {
      llvm::consumeError(loaded.takeError()); // read just now by projectPathToRead
    }
  } else if (QFileInfo::exists(projectPath_)) {
    auto loaded = kiln::loadProject(projectPath_.toStdString());
    if (loaded) {
      project_ = *loaded;
      if (!failing)
        note(projectPath_, tr("settings restored from %1").arg(QFileInfo(projectPath_).fileName()));
    } else {
      QString why = errorText(loaded.takeError());
      auto aside = kiln::setAsideProject(projectPath_.toStdString());
      if (aside) {
        error(projectPath_, tr("%1; the file was kept as %2 and the model starts from default settings")
                                .arg(why, QString::fromStdString(*aside)));
      } else {
        saveBlocked_ = true;
        error(projectPath_, tr("%1; it could not be set aside either (%2), so changes will not be saved over it")
                                .arg(why, errorText(aside.takeError())));
      }
      emit diagnosticsRequested();
    }
  }
  adoptDefaultsForFailedSettings(path);
  showSettings();
  tuning_->showMessage(tr("Settings are saved in %1 after every change.").arg(QFileInfo(projectPath_).fileName()),
                       false);
  adoptPendingFixes();
  // Fixed shapes name dynamic inputs: list them (a model that fails on a
  // dynamic dimension starts the same search when its build fails). A
  // TFLite input that records its sizes builds at them, and is listed too.
  if (!project_.recipe.fixedShapes.empty() ||
      path.endsWith(QStringLiteral(".tflite"), Qt::CaseInsensitive))
    discoverInputs();
  // An ONNX model's small inputs can be fixed to values.
  if (path.endsWith(QStringLiteral(".onnx"), Qt::CaseInsensitive))
    readValueInputs();
  emit projectChanged();
}

void ProjectController::readValueInputs() {
  int gen = ++valuesGeneration_;
  readingValues_ = true;
  std::string path = modelPath_.toStdString();
  std::vector<std::string> fixed;
  for (const auto &[key, value] : project_.recipe.fixedValues)
    fixed.push_back(key);
  futures_.push_back(QtConcurrent::run([this, gen, path, fixed] {
    std::vector<ValueInput> found;
    auto inputs = kiln::readModelInputs(path);
    if (inputs)
      found = valueInputsOf(*inputs, /*onnx=*/true, fixed);
    else
      llvm::consumeError(inputs.takeError());
    QMetaObject::invokeMethod(
        this,
        [this, gen, found] {
          if (gen != valuesGeneration_)
            return;
          readingValues_ = false;
          valueInputs_ = found;
          showSettings();
          emit valueInputsRead();
        },
        Qt::QueuedConnection);
  }));
}

void ProjectController::showSettings() {
  const kiln::BuildRecipe &recipe = project_.recipe;
  tuning_->setSettings(QString::fromStdString(recipe.target), QString::fromStdString(recipe.profile),
                       QString::fromLatin1(kiln::toString(recipe.format)), recipe.fusion);
  // Shapes fixed so far, by input name or index.
  std::vector<std::vector<int64_t>> fixed;
  for (const DynamicInput &d : dynamic_) {
    std::vector<int64_t> shape;
    for (const auto &[key, s] : recipe.fixedShapes)
      if (QString::fromStdString(key) == d.name || key == std::to_string(d.index))
        shape = s;
    fixed.push_back(shape);
  }
  tuning_->shapes()->setInputs(dynamic_, fixed);
  // Values fixed so far, as --fix-value writes them.
  std::vector<QString> values;
  for (const ValueInput &v : valueInputs_) {
    QString text;
    for (const auto &[key, elements] : recipe.fixedValues)
      if (QString::fromStdString(key) == v.name || key == std::to_string(v.index))
        text = QString::fromStdString(kiln::fixValueText(elements));
    values.push_back(text);
  }
  tuning_->shapes()->setValueInputs(valueInputs_, values);
  tuning_->shapes()->setVisible(tuning_->shapes()->hasRows());
}

void ProjectController::setProject(const kiln::Project &project, const QString &what) {
  if (project == project_ || modelPath_.isEmpty())
    return;
  undo_->push(new SetProjectCommand(this, project_, project, what));
}

void ProjectController::applyProject(const kiln::Project &project, bool replanToo) {
  // Export settings and folder alone leave the working build as it is.
  const bool sameBuild = project.model == project_.model && project.recipe == project_.recipe;
  project_ = project;
  autosave();
  showSettings();
  emit projectChanged();
  if (sameBuild || !replanToo)
    return;
  replan();
  // A build of older settings would land after this plan: restart it now
  // (MainWindow drops the old job's result); otherwise wait for more
  // changes a moment.
  if (isBareMetal())
    buildNow(); // says why nothing is built
  else if (host_->isCompiling())
    buildNow();
  else
    buildTimer_.start();
}

void ProjectController::autosave() {
  if (projectPath_.isEmpty())
    return;
  QString why;
  if (saveBlocked_)
    why = tr("%1 could not be read nor set aside").arg(projectPath_); // reported when it was opened
  else if (llvm::Error e = kiln::saveProject(project_, projectPath_.toStdString()))
    why = errorText(std::move(e));
  const QString before = notSavedFor_ == projectPath_ ? notSaved_ : QString();
  notSaved_ = why.isEmpty() ? QString() : tr("Not saved: %1").arg(why);
  notSavedFor_ = projectPath_;
  if (why.isEmpty())
    return;
  if (!saveBlocked_ && notSaved_ != before) { // once per new problem, not per change
    emit diagnostic(DiagnosticsView::Severity::Warning, projectPath_, why, {});
    emit diagnosticsRequested();
  }
  tuning_->showMessage(notSaved_, true);
}

void ProjectController::reshowNotSaved() {
  if (notSaved_.isEmpty() || notSavedFor_ != projectPath_)
    return;
  const QString shown = tuning_->messageLabel()->text();
  if (!shown.endsWith(notSaved_))
    tuning_->showMessage(shown.isEmpty() ? notSaved_ : shown + QStringLiteral(" \u2014 ") + notSaved_, true);
}

void ProjectController::replan() {
  if (modelPath_.isEmpty())
    return;
  int gen = ++generation_;
  QString why;
  kiln::CompileOptions options = compileOptions(project_, &why);
  if (!why.isEmpty()) {
    tuning_->showMessage(why, true);
    error(projectPath_, why);
    emit replanFinished(false);
    return;
  }
  ++replanRunning_;
  tuning_->showMessage(tr("Re-planning\u2026"), false);
  std::string path = modelPath_.toStdString();
  futures_.erase(std::remove_if(futures_.begin(), futures_.end(), [](const QFuture<void> &f) { return f.isFinished(); }),
                 futures_.end());
  futures_.push_back(QtConcurrent::run([this, gen, path, options] {
    QElapsedTimer timer;
    timer.start();
    auto plan = kiln::planModel(path, options);
    double ms = timer.nsecsElapsed() / 1e6;
    std::shared_ptr<const kiln::CompilationPlan> result;
    QString message;
    std::vector<DynamicInput> unfixed;
    if (plan) {
      result = *plan;
    } else {
      llvm::Error e = plan.takeError();
      unfixed = dynamicInputsOf(kiln::unfixedInputsOf(e));
      message = errorText(std::move(e));
    }
    QMetaObject::invokeMethod(this, [this, gen, result, message, unfixed, ms, options] {
      --replanRunning_;
      if (gen != generation_)
        return; // a later change or another model: latest wins
      if (!result) {
        tuning_->showMessage(tr("Re-plan failed: %1 (Undo with Ctrl+Z)").arg(message), true);
        // The settings were refused (rejected input: a warning); the views
        // keep the last build that planned, and the status bar says so.
        emit diagnostic(DiagnosticsView::Severity::Warning, modelPath_, message, unfixed);
        if (host_->document()) {
          emit replanRefused(
              tr("; shown: the last settings that built (the current ones fail, see Diagnostics)"));
          run_->setArtifact({}, QString()); // nothing of these settings to run
        }
        buildTimer_.stop();
        emit replanFinished(false);
        return;
      }
      ++replans_;
      lastReplanMs_ = ms;
      // Code generation follows; the selection and the graph's viewport
      // stay (MainWindow::setDocument).
      emit documentReplanned(
          makePlannedDocument(modelPath_, result, options, ms),
          options.format == kiln::OutputFormat::CModule
              ? tr("; re-planned in %1 ms for a bare-metal target (code on Export)")
                    .arg(ms, 0, 'f', 0)
              : tr("; re-planned in %1 ms; code generation follows\u2026").arg(ms, 0, 'f', 0));
      tuning_->showMessage(tr("Re-planned in %1 ms: %2 dispatches, %3 waves, arena %4 (lower bound %5); %6")
                               .arg(ms, 0, 'f', 0).arg(result->dispatches.size()).arg(result->schedule.waves)
                               .arg(formatBytes(result->memory.arenaBytes))
                               .arg(formatBytes(result->memory.lowerBoundBytes))
                               .arg(options.format == kiln::OutputFormat::CModule
                                        ? tr("bare metal: code is generated as a C module on Export")
                                        : tr("code generation follows")),
                           false);
      showCompare(); // builds of the settings before are marked
      emit replanFinished(true);
    }, Qt::QueuedConnection);
  }));
}

void ProjectController::buildNow() {
  buildTimer_.stop();
  if (modelPath_.isEmpty())
    return;
  if (isBareMetal()) {
    tuning_->showMessage(tr("%1 is bare metal: the plan shown is its plan; its code is generated as a C module on "
                            "Export (Ctrl+E).")
                             .arg(QString::fromStdString(project_.recipe.target)),
                         false);
    return;
  }
  emit buildRequested(modelPath_); // the re-plan has drawn the plan
}

void ProjectController::refreshTuning() {
  auto doc = host_->document();
  if (!doc || doc->path != modelPath_ || doc->isArtifact) {
    tuning_->model()->setPlan(nullptr);
    return;
  }
  const kiln::BuildRecipe &recipe = project_.recipe;
  std::set<int64_t> noFusion(recipe.noFusion.begin(), recipe.noFusion.end());
  // A cell being typed in survives the reset: its dispatch, column and
  // text, and where the table was scrolled (same model only).
  QTableView *table = tuning_->table();
  const bool sameModel = tuning_->model()->plan() && doc->plan &&
                         tuning_->model()->rowCount() == int(doc->plan->dispatches.size());
  QLineEdit *editor = openEditor();
  const QModelIndex editedAt = editor ? table->indexAt(editor->geometry().center()) : QModelIndex();
  const int64_t editedId = editedAt.isValid() ? tuning_->model()->dispatchAt(editedAt.row()) : -1;
  const int editedColumn = editedAt.column();
  const QString typed = editor ? editor->text() : QString();
  const int scrolled = table->verticalScrollBar()->value();
  // The reset closes an open editor; the table, getting the focus back,
  // makes its first row current: that is no choice of the user's, so it
  // must not move the window's selection (it once jumped to dispatch 0).
  syncingSelection_ = true;
  tuning_->model()->setPlan(doc->plan, recipe.tiles, noFusion, recipe.fusion);
  syncingSelection_ = false;
  // The reset dropped Tune's row selection: the window's selection (kept
  // across re-plans and code generation) selects the row again.
  if (qint64 current = host_->currentDispatch(); current >= 0)
    selectTuningRow(current);
  else if (!sameModel)
    table->scrollToTop(); // another model, or nothing selected
  if (sameModel)
    table->verticalScrollBar()->setValue(scrolled);
  // Another set of dispatches renumbers them: the typing is not carried
  // to whichever dispatch now has the id, and the user is told.
  if (editedId >= 0 && !sameModel && !typed.isEmpty())
    warn(modelPath_,
         tr("not applied: '%1' typed for dispatch %2; the dispatches changed while it was typed")
             .arg(typed)
             .arg(editedId));
  const int row = editedId >= 0 && sameModel ? tuning_->model()->rowOfDispatch(editedId) : -1;
  if (row >= 0) {
    QModelIndex at = tuning_->model()->index(row, editedColumn);
    syncingSelection_ = true;
    table->selectionModel()->setCurrentIndex(at, QItemSelectionModel::ClearAndSelect |
                                                     QItemSelectionModel::Rows);
    syncingSelection_ = false;
    table->edit(at);
    if (QLineEdit *again = openEditor())
      again->setText(typed);
  }
}

QLineEdit *ProjectController::openEditor() const {
  for (QLineEdit *e : tuning_->table()->viewport()->findChildren<QLineEdit *>())
    if (e->isVisible())
      return e;
  return nullptr;
}

void ProjectController::discoverInputs() {
  // The model's inputs with dynamic dimensions, read from the file
  // (kiln::readModelInputs); the sizes the compiler suggests for them come
  // from one plan without fixes (its kiln::UnfixedInputError's data).
  int gen = ++discoverGeneration_;
  discovering_ = true;
  std::string path = modelPath_.toStdString();
  kiln::BuildRecipe bare = project_.recipe;
  bare.fixedShapes.clear();
  bare.format = kiln::recipeIsBareMetal(bare) ? kiln::OutputFormat::CModule : kiln::OutputFormat::Artifact;
  auto made = kiln::recipeCompileOptions(bare);
  kiln::CompileOptions options = made ? *made : kiln::CompileOptions();
  if (!made)
    llvm::consumeError(made.takeError());
  futures_.push_back(QtConcurrent::run([this, gen, path, options]() mutable {
    std::vector<DynamicInput> found;
    auto inputs = kiln::readModelInputs(path, options.signature);
    if (!inputs)
      llvm::consumeError(inputs.takeError());
    else
      for (const kiln::ModelInput &in : *inputs)
        if (in.isDynamic() && in.hasShape)
          found.push_back(dynamicInputOf(in));
    if (!found.empty()) {
      // A TFLite input that records its sizes plans at them: that shape is
      // the one shown (the import's warning names it too).
      auto plan = kiln::planOnly(path, options);
      if (!plan) {
        llvm::Error e = plan.takeError();
        for (const kiln::UnfixedInput &u : kiln::unfixedInputsOf(e))
          for (DynamicInput &d : found)
            if (d.index == u.input.index)
              d = dynamicInputOf(u.input, u.suggestion);
        llvm::consumeError(std::move(e));
      } else {
        for (DynamicInput &d : found)
          for (const kiln::IOInfo &io : plan->inputs)
            if (QString::fromStdString(io.name) == d.name && io.shape.size() == d.signature.size())
              d.suggestion = io.shape;
      }
    }
    QMetaObject::invokeMethod(this, [this, gen, found] {
      if (gen != discoverGeneration_)
        return;
      discovering_ = false;
      dynamic_ = found;
      showSettings();
      emit inputsDiscovered();
    }, Qt::QueuedConnection);
  }));
}

// --- Compare --------------------------------------------------------------

void ProjectController::showCompare() {
  auto label = [this](const QString &text, const std::optional<kiln::BuildSummary> &side,
                      const kiln::BuildRecipe &recipe, bool pinned) {
    return side && !pinned && !(recipe == project_.recipe) ? tr("%1 (earlier settings)").arg(text)
                                                           : text;
  };
  compare_->setBuilds(label(labelA_, a_, recipeA_, pinnedA_), a_,
                      label(labelB_, b_, recipeB_, false), b_);
}

void ProjectController::measureLatency(
    std::optional<kiln::BuildSummary> &a, const std::vector<uint8_t> &aBytes,
    std::optional<kiln::BuildSummary> &b, const std::vector<uint8_t> &bBytes,
    const std::pair<std::vector<uint8_t>, kiln::LatencyStats> &known) const {
  // A build the Run dock measured keeps that measurement (the same numbers
  // in both docks); the others are measured with the same function and
  // options, in alternation when both are (kiln::benchmarkPair).
  const kiln::RunOptions options = stoppableRunOptions();
  auto reuse = [&](std::optional<kiln::BuildSummary> &s, const std::vector<uint8_t> &bytes) {
    if (s && !known.first.empty() && bytes == known.first)
      s->latency = known.second;
    return s && s->latency.medianMs < 0;
  };
  bool measureA = reuse(a, aBytes), measureB = reuse(b, bBytes);
  if (measureA && measureB) {
    auto pair = kiln::benchmarkPair(aBytes, bBytes, options.benchmarkRuns, "A", "B", options);
    if (pair) {
      a->latency = pair->first;
      b->latency = pair->second;
    } else {
      llvm::consumeError(pair.takeError());
    }
    return;
  }
  auto measure = [&](std::optional<kiln::BuildSummary> &s, const std::vector<uint8_t> &bytes) {
    auto latency = kiln::benchmarkArtifact(bytes, options.benchmarkRuns, options);
    if (latency)
      s->latency = *latency;
    else
      llvm::consumeError(latency.takeError());
  };
  if (measureA)
    measure(a, aBytes);
  if (measureB)
    measure(b, bBytes);
}

void ProjectController::summarize(std::vector<uint8_t> a, std::vector<uint8_t> b, bool compileStripped,
                                  const QString &labelA, const QString &labelB) {
  ++comparing_;
  compare_->setBusy(compileStripped ? tr("Building default and stripped, then measuring\u2026")
                                    : tr("Measuring\u2026"));
  std::string path = modelPath_.toStdString();
  kiln::Project dp = project_, sp = project_;
  for (kiln::Project *p : {&dp, &sp}) {
    p->recipe.profile = p == &dp ? "default" : "stripped";
    p->recipe.debugSymbols.reset(); // the profiles themselves
    p->recipe.reflection.reset();
  }
  kiln::CompileOptions dOptions = compileOptions(dp), sOptions = compileOptions(sp);
  const kiln::BuildRecipe recipe = project_.recipe;
  bool host = project_.recipe.target == "host" || modelPath_.isEmpty();
  bool needA = a.empty() && compileStripped;
  auto known = measurement_;
  struct Out {
    QString error;
    std::optional<kiln::BuildSummary> a, b;
  };
  futures_.push_back(QtConcurrent::run([=, this]() mutable {
    Out out;
    auto build = [&](std::vector<uint8_t> &bytes, const kiln::CompileOptions &o) {
      auto r = kiln::compileArtifact(path, o);
      if (!r) {
        out.error = errorText(r.takeError());
        return false;
      }
      bytes = std::move(*r);
      return true;
    };
    auto sum = [&](const std::vector<uint8_t> &bytes, const QString &label) -> std::optional<kiln::BuildSummary> {
      if (bytes.empty())
        return std::nullopt;
      auto s = kiln::summarizeArtifact(bytes, label.toStdString());
      if (!s) {
        out.error = errorText(s.takeError());
        return std::nullopt;
      }
      return *s;
    };
    if ((!needA || build(a, dOptions)) && (!compileStripped || build(b, sOptions))) {
      out.a = sum(a, labelA);
      out.b = sum(b, labelB);
      if (host)
        measureLatency(out.a, a, out.b, b, known);
    }
    QMetaObject::invokeMethod(
        this,
        [this, out, labelA, labelB, recipe] {
          --comparing_;
          if (!out.error.isEmpty()) {
            compare_->setBusy(tr("Compare failed: %1").arg(out.error));
            error(modelPath_, tr("compare: %1").arg(out.error));
            emit compareFinished(false);
            return;
          }
          if (out.a) {
            a_ = out.a;
            labelA_ = labelA;
            recipeA_ = recipe;
          }
          if (out.b) {
            b_ = out.b;
            labelB_ = labelB;
            recipeB_ = recipe;
          }
          showCompare();
          emit compareFinished(true);
        },
        Qt::QueuedConnection);
  }));
}

void ProjectController::compareDefaultVsStripped() {
  if (modelPath_.isEmpty() || comparing_)
    return;
  auto doc = host_->document();
  std::vector<uint8_t> a;
  // The shown build is the default one when the profile says so.
  if (doc && doc->path == modelPath_ && project_.recipe.profile == "default" &&
      !project_.recipe.debugSymbols && !project_.recipe.reflection && !host_->isCompiling())
    a = doc->artifact;
  b_.reset();
  pinnedA_ = false;
  summarize(std::move(a), {}, true, tr("default"), tr("stripped"));
}

void ProjectController::pinCurrent() {
  auto doc = host_->document();
  if (!doc || doc->artifact.empty() || comparing_)
    return;
  b_.reset();
  pinnedA_ = true;
  summarize(doc->artifact, {}, false, tr("before (%1)").arg(undo_->undoText().isEmpty() ? tr("as opened") : undo_->undoText()),
            QString());
}

void ProjectController::compareWithCurrent() {
  auto doc = host_->document();
  if (!doc || doc->artifact.empty() || comparing_)
    return;
  summarize({}, doc->artifact, false, QString(),
            tr("after (%1)").arg(undo_->undoText().isEmpty() ? tr("as opened") : undo_->undoText()));
}

void ProjectController::compareOutputsWithModel() {
  auto doc = host_->document();
  if (!doc || doc->artifact.empty() || comparingOutputs_)
    return;
  QString path = QFileDialog::getOpenFileName(
      dialogParent_, tr("Compare outputs with model"), QFileInfo(modelPath_).absolutePath(),
      tr("Models and artifacts (*.tflite *.onnx *.mlir *.kiln);;All files (*)"));
  if (!path.isEmpty())
    compareOutputsWith(path);
}

void ProjectController::compareOutputsWith(const QString &path) {
  auto doc = host_->document();
  if (!doc || doc->artifact.empty() || comparingOutputs_)
    return;
  ++comparingOutputs_;
  const QString labelA = QFileInfo(doc->path).fileName(), labelB = QFileInfo(path).fileName();
  compare_->setOutputsBusy(tr("Running %1 and %2 on the same inputs\u2026").arg(labelA, labelB));
  std::vector<uint8_t> a = doc->artifact;
  std::string other = path.toStdString();
  kiln::ModelComparisonOptions options;
  options.run = stoppableRunOptions();
  futures_.push_back(QtConcurrent::run([=, this]() {
    QString failure;
    std::optional<kiln::ModelComparison> result;
    std::vector<uint8_t> b;
    if (kiln::isArtifactFile(other)) {
      auto bytes = kiln::readRegularFile(other, "a .kiln artifact");
      if (bytes)
        b.assign((*bytes)->getBufferStart(), (*bytes)->getBufferEnd());
      else
        failure = errorText(bytes.takeError());
    } else {
      auto built = kiln::compileArtifact(other, kiln::CompileOptions());
      if (built)
        b = std::move(*built);
      else
        failure = errorText(built.takeError());
    }
    if (failure.isEmpty()) {
      auto c = kiln::compareModels(a, b, labelA.toStdString(), labelB.toStdString(), options);
      if (c)
        result = std::move(*c);
      else
        failure = errorText(c.takeError());
    }
    QMetaObject::invokeMethod(
        this,
        [this, failure, result, labelA, labelB, path] {
          --comparingOutputs_;
          if (!result) {
            compare_->setOutputsBusy(tr("Compare failed: %1").arg(failure));
            error(path, tr("compare outputs: %1").arg(failure));
            emit outputsCompared(false);
            return;
          }
          compare_->setOutputComparison(labelA, labelB, *result);
          emit outputsCompared(true);
        },
        Qt::QueuedConnection);
  }));
}

// --- Export ---------------------------------------------------------------

ExportDialog *ProjectController::openExportDialog() {
  if (modelPath_.isEmpty())
    return nullptr;
  if (exportDialog_)
    exportDialog_->deleteLater();
  auto *dialog = new ExportDialog(project_, projectPath_, dialogParent_);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  exportDialog_ = dialog;
  connect(this, &ProjectController::projectChanged, dialog, [this, dialog] { dialog->setWorkingRecipe(project_.recipe); });
  // The dialog's choices become the project's export settings (one
  // undoable step, when they differ), so the next Export and `kiln export
  // --project=` start from them: after an export (its folder too), and
  // when the dialog is closed without one (its folder only when it is not
  // the default, which follows the choices). The working recipe (what the
  // workbench builds and runs) is left as it is now.
  auto keepChoices = [this, dialog](bool pinFolder) {
    kiln::Project chosen = dialog->chosenProject(), p = project_;
    p.exportSettings = chosen.exportSettings;
    if (pinFolder || !dialog->folderIsDefault())
      p.exportDir = chosen.exportDir;
    if (!(p == project_))
      setProject(p, tr("Export settings"));
  };
  connect(dialog, &ExportDialog::exported, this, [this, dialog, keepChoices](bool ok) {
    if (!ok)
      return;
    note(dialog->writtenDir(), tr("exported: %1").arg(dialog->summaryText()));
    keepChoices(true);
  });
  connect(dialog, &QDialog::finished, this, [keepChoices] { keepChoices(false); });
  dialog->show();
  return dialog;
}

} // namespace kiln::workbench
