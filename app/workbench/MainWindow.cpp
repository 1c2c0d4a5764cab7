//===- MainWindow.cpp - The workbench window -----------------------------===//
#include "MainWindow.h"

#include "DiagnosticsView.h"
#include "GraphView.h"
#include "InspectorView.h"
#include "MemoryView.h"
#include "PhaseProgress.h"
#include "PlanModels.h"
#include "ProjectController.h"
#include "SizesView.h"
#include "TimelineView.h"

#include "kiln/Recipe.h"
#include "kiln/Run.h"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QCloseEvent>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QInputDialog>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPushButton>
#include <QSettings>
#include <QStatusBar>
#include <QTableView>
#include <QThread>
#include <QToolBar>

namespace kiln::workbench {

using namespace kiln::views;

MainWindow::MainWindow(QWidget *parent) : QMainWindow(parent) {
  setWindowTitle(tr("Kiln Workbench"));
  setAcceptDrops(true);
  setDockOptions(AnimatedDocks | AllowTabbedDocks | AllowNestedDocks);
  createViews();
  createActions();
  project_ = new ProjectController(this);
  QSettings settings;
  restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
  restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
  updateActions();
}

MainWindow::~MainWindow() {
  if (job_)
    job_->cancel();
  // Jobs are children: their destructors wait for the workers.
}

GraphView *MainWindow::graphView() const { return graph_->view(); }

QDockWidget *MainWindow::addDock(QWidget *w, const QString &title, const QString &name, Qt::DockWidgetArea area) {
  auto *dock = new QDockWidget(title, this);
  dock->setObjectName(name);
  dock->setWidget(w);
  addDockWidget(area, dock);
  docks_ << dock;
  return dock;
}

QDockWidget *MainWindow::dockOf(QWidget *view) const {
  for (QDockWidget *d : docks_)
    if (d->widget() == view || d->widget()->isAncestorOf(view))
      return d;
  return nullptr;
}

void MainWindow::createViews() {
  dispatchModel_ = new DispatchListModel(this);
  commandModel_ = new CommandListModel(this);
  bufferModel_ = new BufferListModel(this);
  selection_ = new QItemSelectionModel(dispatchModel_, this);

  graph_ = new GraphPanel(this);
  graph_->view()->setSelectionModel(selection_);
  setCentralWidget(graph_);

  auto table = [this](QAbstractItemModel *model, const QString &name) {
    auto *t = new QTableView(this);
    t->setModel(model);
    t->setSelectionBehavior(QAbstractItemView::SelectRows);
    t->setSelectionMode(QAbstractItemView::SingleSelection);
    t->setAlternatingRowColors(true);
    t->verticalHeader()->hide();
    t->horizontalHeader()->setStretchLastSection(true);
    t->setAccessibleName(name);
    return t;
  };
  dispatchTable_ = table(dispatchModel_, tr("Dispatches"));
  dispatchTable_->setSelectionModel(selection_);
  dispatchTable_->setSortingEnabled(false);
  auto *dDock = addDock(dispatchTable_, tr("Dispatches"), QStringLiteral("dispatches"), Qt::LeftDockWidgetArea);
  auto *cDock = addDock(table(commandModel_, tr("Commands")), tr("Commands"), QStringLiteral("commands"),
                        Qt::LeftDockWidgetArea);
  auto *bDock = addDock(table(bufferModel_, tr("Buffers")), tr("Buffers"), QStringLiteral("buffers"),
                        Qt::LeftDockWidgetArea);
  tabifyDockWidget(dDock, cDock);
  tabifyDockWidget(cDock, bDock);
  dDock->raise();

  inspector_ = new InspectorView(this);
  inspector_->setSelectionModel(selection_);
  addDock(inspector_, tr("Inspector"), QStringLiteral("inspector"), Qt::RightDockWidgetArea);

  timeline_ = new TimelineView(this);
  timeline_->setSelectionModel(selection_);
  memory_ = new MemoryView(this);
  memory_->setSelectionModel(selection_);
  sizes_ = new SizesView(this);
  diagnostics_ = new DiagnosticsView(this);
  auto *tDock = addDock(timeline_, tr("Timeline"), QStringLiteral("timeline"), Qt::BottomDockWidgetArea);
  auto *mDock = addDock(memory_, tr("Memory"), QStringLiteral("memory"), Qt::BottomDockWidgetArea);
  auto *sDock = addDock(sizes_, tr("Sizes"), QStringLiteral("sizes"), Qt::BottomDockWidgetArea);
  auto *gDock = addDock(diagnostics_, tr("Diagnostics"), QStringLiteral("diagnostics"), Qt::BottomDockWidgetArea);
  tabifyDockWidget(tDock, mDock);
  tabifyDockWidget(mDock, sDock);
  tabifyDockWidget(sDock, gDock);
  tDock->raise();
  resizeDocks({dDock, inspector_ ? dockOf(inspector_) : dDock}, {380, 420}, Qt::Horizontal);
  resizeDocks({tDock}, {300}, Qt::Vertical);

  connect(diagnostics_, &DiagnosticsView::operatorActivated, this, [this](qint64 index) {
    int row = dispatchModel_->rowOfSourceOp(index);
    if (row < 0) {
      diagnostics_->add(DiagnosticsView::Severity::Note, doc_ ? doc_->path : QString(),
                        tr("source operator #%1 is in no dispatch of the plan shown").arg(index));
      return;
    }
    selectDispatch(dispatchModel_->dispatchAt(row));
  });
  connect(diagnostics_, &DiagnosticsView::shapeFixRequested, this, [this](const QString &fix) { applyShapeFix(fix); });

  // Status bar: summary, per-phase progress, Cancel.
  summary_ = new QLabel(this);
  statusBar()->addWidget(summary_, 1);
  progress_ = new PhaseProgress(this);
  statusBar()->addPermanentWidget(progress_);
  cancelButton_ = new QPushButton(tr("Cancel"), this);
  cancelButton_->setToolTip(tr("Stop the compilation at the next phase (Esc)"));
  cancelButton_->setEnabled(false);
  connect(cancelButton_, &QPushButton::clicked, this, &MainWindow::cancelCompile);
  statusBar()->addPermanentWidget(cancelButton_);
}

/// `key` first, then the platform's bindings for `standard` (no duplicates).
static QList<QKeySequence> withKey(const QKeySequence &key, QKeySequence::StandardKey standard) {
  QList<QKeySequence> keys = {key};
  for (const QKeySequence &k : QKeySequence::keyBindings(standard))
    if (!keys.contains(k))
      keys << k;
  return keys;
}

void MainWindow::createActions() {
  QMenu *file = menuBar()->addMenu(tr("&File"));
  QAction *open = file->addAction(tr("&Open\u2026"), this, [this] {
    QSettings settings;
    QString dir = settings.value(QStringLiteral("lastDir")).toString();
    QString path = QFileDialog::getOpenFileName(this, tr("Open model or artifact"), dir,
                                                tr("Models and artifacts (*.tflite *.mlir *.kiln);;All files (*)"));
    if (!path.isEmpty())
      openFile(path);
  });
  open->setShortcuts(withKey(QKeySequence(Qt::CTRL | Qt::Key_O), QKeySequence::Open));
  open->setToolTip(tr("Open a TFLite model, a TOSA .mlir file or a .kiln artifact"));
  recentMenu_ = file->addMenu(tr("Open &Recent"));
  updateRecentMenu();
  file->addSeparator();
  closeAction_ = file->addAction(tr("&Close"), this, &MainWindow::closeDocument);
  closeAction_->setShortcuts(withKey(QKeySequence(Qt::CTRL | Qt::Key_W), QKeySequence::Close));
  file->addSeparator();
  QAction *quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setShortcuts(withKey(QKeySequence(Qt::CTRL | Qt::Key_Q), QKeySequence::Quit));
  quit->setMenuRole(QAction::QuitRole);

  QMenu *build = menuBar()->addMenu(tr("&Build"));
  runAction_ = build->addAction(tr("&Run on Host"), this, &MainWindow::runOnHost);
  runAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
  runAction_->setToolTip(tr("Run the artifact on this machine with random inputs and show measured times"));
  cancelAction_ = build->addAction(tr("&Cancel Compilation"), this, &MainWindow::cancelCompile);
  cancelAction_->setShortcut(QKeySequence(Qt::Key_Escape));
  build->addAction(tr("&Fix Input Shape\u2026"), this, [this] {
    bool ok = false;
    QString text = QInputDialog::getText(this, tr("Fix input shape"),
                                         tr("INPUT=DIMS (input name or index), e.g. 0=1x76x32x1:"), QLineEdit::Normal,
                                         QString(), &ok);
    if (ok && !text.isEmpty() && !applyShapeFix(text))
      QMessageBox::warning(this, tr("Fix input shape"), diagnostics_->lastMessage());
  });

  viewMenu_ = menuBar()->addMenu(tr("&View"));
  QAction *find = viewMenu_->addAction(tr("&Find Dispatch"), this, [this] {
    graph_->searchBox()->setFocus();
    graph_->searchBox()->selectAll();
  });
  find->setShortcut(QKeySequence::Find);
  viewMenu_->addAction(tr("Fit &Graph"), graph_->view(), &GraphView::fitToWindow)->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
  QAction *collapsed = viewMenu_->addAction(tr("&Collapsed Graph"));
  collapsed->setCheckable(true);
  collapsed->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));
  connect(collapsed, &QAction::toggled, graph_->collapsedBox(), &QAbstractButton::setChecked);
  connect(graph_->collapsedBox(), &QAbstractButton::toggled, collapsed, &QAction::setChecked);
  QAction *full = viewMenu_->addAction(tr("F&ull Screen"), this, [this](bool on) {
    on ? showFullScreen() : showNormal();
  });
  full->setCheckable(true);
  full->setShortcuts(withKey(QKeySequence(Qt::Key_F11), QKeySequence::FullScreen));
  viewMenu_->addSeparator();
  for (QDockWidget *d : docks_)
    viewMenu_->addAction(d->toggleViewAction());

  QMenu *help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&About Kiln Workbench"), this, [this] {
    QMessageBox::about(this, tr("About Kiln Workbench"), aboutText());
  })->setMenuRole(QAction::AboutRole);
  help->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt)->setMenuRole(QAction::AboutQtRole);
}

QString MainWindow::aboutText() {
  return tr("<h3>Kiln Workbench</h3><p>Kiln %1<br>LLVM/MLIR %2<br>Qt %3 (built with %4)</p>"
            "<p>An ahead-of-time ML compiler: every scheduling and memory decision made at "
            "compile time, shown here.</p>")
      .arg(QString::fromLatin1(kiln::version()), QString::fromLatin1(kiln::llvmVersion()),
           QString::fromLatin1(qVersion()), QStringLiteral(QT_VERSION_STR));
}

void MainWindow::updateActions() {
  bool compiling = isCompiling();
  cancelButton_->setEnabled(compiling);
  cancelAction_->setEnabled(compiling);
  closeAction_->setEnabled(doc_ != nullptr);
  runAction_->setEnabled(doc_ && !doc_->artifact.empty() && !isRunning());
}

// A job counts until its finished handler has run (the worker may be done
// with the result still queued).
bool MainWindow::isCompiling() const { return job_ != nullptr; }
bool MainWindow::isRunning() const { return runJob_ != nullptr; }

void MainWindow::openFile(const QString &path) {
  QFileInfo info(path);
  QString abs = info.absoluteFilePath();
  if (job_) {
    // The old job finishes in the background; its result is dropped.
    job_->cancel();
    disconnect(job_, nullptr, this, nullptr);
    connect(job_, &CompileJob::finished, job_, &QObject::deleteLater);
  }
  kiln::CompileOptions options;
  options.fixedShapes = globalFixes_;
  if (auto it = fixes_.find(abs); it != fixes_.end())
    options.fixedShapes.insert(options.fixedShapes.end(), it->second.begin(), it->second.end());
  options = project_->optionsFor(abs, options); // the model's .kilnproj settings
  auto *job = new CompileJob(this);
  job_ = job;
  connect(job, &CompileJob::phaseStarted, this, [this, job](int build, int phase) {
    if (job != job_)
      return;
    if (phase == 0)
      progress_->start(build == 0 ? tr("default build") : tr("stripped build"));
    progress_->setPhase(kiln::CompilePhase(phase));
  });
  connect(job, &CompileJob::finished, this, [this, job, abs] { onCompileFinished(job, abs); });
  connect(job, &CompileJob::documentReady, this, [this, job, abs] {
    if (job != job_)
      return;
    showCompiled(*job->defaultDocument(), abs);
    setDocument(job->defaultDocument());
    summary_->setText(summary_->text() + tr("; stripped build for the size comparison\u2026"));
  });
  progress_->start(info.suffix() == QLatin1String("kiln") ? tr("reading %1").arg(info.fileName())
                                                          : tr("default build"));
  summary_->setText(tr("Opening %1\u2026").arg(info.fileName()));
  job->start(abs, options, true);
  updateActions();
}

void MainWindow::onCompileFinished(CompileJob *job, const QString &path) {
  job->deleteLater();
  if (job != job_)
    return;
  job_ = nullptr;
  const JobResult &r = job->result();
  if (!r.ok) {
    lastFailed_ = path;
    progress_->finish(false, r.cancelled ? tr("cancelled") : tr("failed"));
    diagnostics_->add(r.cancelled ? DiagnosticsView::Severity::Note : DiagnosticsView::Severity::Error, path,
                      r.cancelled ? tr("compilation cancelled") : r.error);
    if (!r.cancelled)
      if (QDockWidget *d = dockOf(diagnostics_))
        d->raise();
    summary_->setText(doc_ ? tr("%1 (still shown); opening %2 %3")
                                 .arg(QFileInfo(doc_->path).fileName(), QFileInfo(path).fileName(),
                                      r.cancelled ? tr("was cancelled") : tr("failed"))
                           : tr("Opening %1 %2").arg(QFileInfo(path).fileName(), r.cancelled ? tr("was cancelled") : tr("failed")));
    updateActions();
    emit compileFinished(false);
    return;
  }
  if (!r.error.isEmpty()) // an artifact without reflection, a failed stripped build
    diagnostics_->add(r.cancelled ? DiagnosticsView::Severity::Note : DiagnosticsView::Severity::Warning, path,
                      r.cancelled ? tr("stripped build cancelled: sizes show the default build only") : r.error);
  progress_->finish(true, r.cancelled ? tr("default build only") : tr("done"));
  addRecent(path);
  if (doc_ && doc_ == job->defaultDocument()) {
    // The default build is already shown: add the stripped sizes only.
    doc_ = r.doc;
    sizes_->setSizes(doc_->sizes, doc_->strippedSizes);
    summary_->setText(summaryText());
    if (doc_->strippedSizes)
      diagnostics_->add(DiagnosticsView::Severity::Note, path,
                        tr("stripped build in %1 ms: %2 bytes (default %3)")
                            .arg(doc_->strippedMs, 0, 'f', 0).arg(doc_->strippedSizes->fileBytes)
                            .arg(doc_->sizes ? doc_->sizes->fileBytes : 0));
  } else {
    showCompiled(*r.doc, path);
    setDocument(r.doc);
  }
  updateActions();
  emit compileFinished(true);
}

void MainWindow::showCompiled(const ModelDocument &doc, const QString &path) {
  const kiln::CompilationPlan &plan = *doc.plan;
  for (const std::string &v : kiln::checkPlan(plan))
    diagnostics_->add(DiagnosticsView::Severity::Warning, path, tr("plan check: %1").arg(QString::fromStdString(v)));
  if (doc.isArtifact && doc.artifactCommands >= 0) {
    // No reflection data: the counts come from the command list itself.
    diagnostics_->add(DiagnosticsView::Severity::Note, path,
                      tr("read in %1 ms without reflection data: %2 dispatch commands, %3 commands, "
                         "%4 waves, arena %5 bytes, artifact %6 bytes (per-dispatch views need "
                         "--reflection=true)")
                          .arg(doc.compileMs, 0, 'f', 0)
                          .arg(doc.artifactDispatches).arg(doc.artifactCommands)
                          .arg(plan.schedule.waves).arg(plan.memory.arenaBytes)
                          .arg(doc.sizes ? doc.sizes->fileBytes : 0));
    return;
  }
  diagnostics_->add(DiagnosticsView::Severity::Note, path,
                    tr("%1 in %2 ms: %3 dispatches, %4 commands, %5 waves, arena %6 bytes, artifact %7 bytes")
                        .arg(doc.isArtifact ? tr("read") : tr("compiled"))
                        .arg(doc.compileMs, 0, 'f', 0)
                        .arg(plan.dispatches.size()).arg(plan.schedule.commands.size()).arg(plan.schedule.waves)
                        .arg(plan.memory.arenaBytes).arg(doc.sizes ? doc.sizes->fileBytes : 0));
}

void MainWindow::setDocument(std::shared_ptr<const ModelDocument> doc) {
  QElapsedTimer timer;
  timer.start();
  doc_ = std::move(doc);
  measured_.reset();
  auto plan = doc_ ? doc_->plan : nullptr;
  selection_->clear();
  dispatchModel_->setPlan(plan);
  commandModel_->setPlan(plan);
  bufferModel_->setPlan(plan);
  dispatchTable_->resizeColumnsToContents();
  graph_->view()->setPlan(plan);
  timeline_->setPlan(plan);
  memory_->setPlan(plan);
  sizes_->setSizes(doc_ ? doc_->sizes : std::nullopt, doc_ ? doc_->strippedSizes : std::nullopt);
  inspector_->setDocument(doc_);
  if (doc_) {
    setWindowFilePath(doc_->path);
    setWindowTitle(tr("%1 \u2014 Kiln Workbench").arg(QFileInfo(doc_->path).fileName()));
    summary_->setText(summaryText());
  } else {
    setWindowFilePath(QString());
    setWindowTitle(tr("Kiln Workbench"));
    summary_->clear();
  }
  updateActions();
  viewUpdateMs_ = timer.nsecsElapsed() / 1e6;
  if (doc_)
    emit documentShown();
}

QString MainWindow::summaryText() const {
  if (!doc_)
    return {};
  const kiln::CompilationPlan &plan = *doc_->plan;
  const int64_t dispatches = doc_->artifactDispatches >= 0
                                ? doc_->artifactDispatches
                                : static_cast<int64_t>(plan.dispatches.size());
  QString text = tr("%1: %2 dispatches, %3 waves, arena %4, artifact %5 bytes")
                     .arg(QFileInfo(doc_->path).fileName()).arg(dispatches).arg(plan.schedule.waves)
                     .arg(formatBytes(plan.memory.arenaBytes)).arg(doc_->sizes ? doc_->sizes->fileBytes : 0);
  if (doc_->strippedSizes)
    text += tr(" (stripped %1)").arg(doc_->strippedSizes->fileBytes);
  return text;
}

void MainWindow::closeDocument() {
  setDocument(nullptr);
}

void MainWindow::selectDispatch(qint64 id) {
  int row = dispatchModel_->rowOfDispatch(id);
  if (row < 0)
    return;
  selection_->setCurrentIndex(dispatchModel_->index(row, 0),
                              QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  dispatchTable_->scrollTo(dispatchModel_->index(row, 0));
}

void MainWindow::cancelCompile() {
  if (!job_)
    return;
  job_->cancel();
  summary_->setText(tr("Cancelling\u2026"));
}

bool MainWindow::applyShapeFix(const QString &text) {
  // The recipe's parser of --fix-shape (one input per call).
  kiln::BuildRecipe parsed;
  if (llvm::Error err = kiln::setRecipeOption(parsed, "fix-shape", text.toStdString())) {
    diagnostics_->add(DiagnosticsView::Severity::Error, QString(),
                      QString::fromStdString(llvm::toString(std::move(err))));
    return false;
  }
  const kiln::ShapeFix fix{parsed.fixedShapes.begin()->first, parsed.fixedShapes.begin()->second};
  QString path = !lastFailed_.isEmpty() ? lastFailed_ : doc_ ? doc_->path : QString();
  if (path.isEmpty())
    return false;
  auto &list = fixes_[path];
  list.erase(std::remove_if(list.begin(), list.end(), [&](const kiln::ShapeFix &f) { return f.input == fix.input; }),
             list.end());
  list.push_back(fix);
  diagnostics_->add(DiagnosticsView::Severity::Note, path, tr("recompiling with --fix-shape=%1").arg(text));
  lastFailed_.clear();
  openFile(path);
  return true;
}

void MainWindow::runOnHost() {
  if (!doc_ || doc_->artifact.empty() || isRunning())
    return;
  auto *job = new RunJob(this);
  runJob_ = job;
  auto doc = doc_;
  connect(job, &RunJob::finished, this, [this, job, doc] {
    job->deleteLater();
    if (job == runJob_)
      runJob_ = nullptr;
    const RunJobResult &r = job->result();
    bool current = doc == doc_;
    if (!r.ok) {
      diagnostics_->add(DiagnosticsView::Severity::Error, doc->path, tr("run on host: %1").arg(r.error));
    } else if (current) {
      measured_ = std::make_unique<MeasuredRun>(r.measured);
      timeline_->setMeasured(*measured_);
      diagnostics_->add(DiagnosticsView::Severity::Note, doc->path,
                        tr("ran on %1 with %2 threads: median %3 ms over %4 runs, %5 trace events")
                            .arg(QString::fromStdString(r.measured.device)).arg(r.measured.threads)
                            .arg(kiln::medianOf(r.measured.timesMs), 0, 'f', 3)
                            .arg(r.measured.timesMs.size()).arg(r.measured.events.size()));
      if (QDockWidget *d = dockOf(timeline_))
        d->raise();
    }
    updateActions();
    emit runFinished(r.ok && current);
  });
  summary_->setText(tr("Running on the host\u2026"));
  job->start(doc_->artifact);
  updateActions();
}

void MainWindow::addRecent(const QString &path) {
  QSettings settings;
  QStringList recent = settings.value(QStringLiteral("recentFiles")).toStringList();
  recent.removeAll(path);
  recent.prepend(path);
  while (recent.size() > 10)
    recent.removeLast();
  settings.setValue(QStringLiteral("recentFiles"), recent);
  settings.setValue(QStringLiteral("lastDir"), QFileInfo(path).absolutePath());
  updateRecentMenu();
}

void MainWindow::updateRecentMenu() {
  recentMenu_->clear();
  QStringList recent = QSettings().value(QStringLiteral("recentFiles")).toStringList();
  int n = 0;
  for (const QString &path : recent) {
    QAction *a = recentMenu_->addAction(QStringLiteral("&%1 %2").arg(++n % 10).arg(QFileInfo(path).fileName()),
                                        this, [this, path] { openFile(path); });
    a->setToolTip(path);
    a->setStatusTip(path);
  }
  recentMenu_->setEnabled(!recent.isEmpty());
}

void MainWindow::closeEvent(QCloseEvent *event) {
  QSettings settings;
  settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
  settings.setValue(QStringLiteral("window/state"), saveState());
  if (job_)
    job_->cancel();
  event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent *event) {
  if (event->mimeData()->hasUrls())
    for (const QUrl &url : event->mimeData()->urls())
      if (url.isLocalFile()) {
        event->acceptProposedAction();
        return;
      }
}

void MainWindow::dropEvent(QDropEvent *event) {
  for (const QUrl &url : event->mimeData()->urls())
    if (url.isLocalFile()) {
      openFile(url.toLocalFile());
      event->acceptProposedAction();
      return;
    }
}

} // namespace kiln::workbench
