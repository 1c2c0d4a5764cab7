//===- MainWindow.cpp - The workbench window -----------------------------===//
#include "MainWindow.h"

#include "CompareView.h"
#include "DiagnosticsView.h"
#include "GraphView.h"
#include "HostRunJob.h"
#include "InspectorView.h"
#include "IrJob.h"
#include "MemoryView.h"
#include "PhaseProgress.h"
#include "PlanModels.h"
#include "ProfileView.h"
#include "ProjectController.h"
#include "RunPanel.h"
#include "SizesView.h"
#include "SourceGraphView.h"
#include "TableSupport.h"
#include "TimelineView.h"
#include "TuningView.h"
#include "ViewExport.h"

#include "kiln/Recipe.h"
#include "kiln/Run.h"
#include "kiln/SourceGraph.h"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QHeaderView>
#include <QInputDialog>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPainter>
#include <QPushButton>
#include <QRegularExpression>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QShowEvent>
#include <QSortFilterProxyModel>
#include <QStatusBar>
#include <QTableView>
#include <QThread>
#include <QTimer>
#include <QToolBar>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>

namespace kiln::workbench {

using namespace kiln::views;

namespace {
/// The status bar's summary: one line elided at the right ("…") when the
/// window is narrower than the text (1024 px), the whole text as tooltip;
/// it never widens the window.
class ElidedLabel : public QLabel {
public:
  explicit ElidedLabel(QWidget *parent) : QLabel(parent) {
    setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  }
  QSize minimumSizeHint() const override { return {0, QLabel::minimumSizeHint().height()}; }

protected:
  void paintEvent(QPaintEvent *) override {
    QPainter painter(this);
    const QRect r = contentsRect();
    painter.drawText(r, Qt::AlignLeft | Qt::AlignVCenter, fontMetrics().elidedText(text(), Qt::ElideRight, r.width()));
    setToolTip(fontMetrics().horizontalAdvance(text()) > r.width() ? text() : QString());
  }
};
} // namespace

/// Version of the dock layout saved in QSettings ("window/state"). A state
/// saved by an older layout is ignored (the default layout is used), so an
/// old cramped arrangement never comes back. Raise it when the default
/// layout changes.
static constexpr int kLayoutVersion = 3;

MainWindow::MainWindow(QWidget *parent) : QMainWindow(parent) {
  setWindowTitle(tr("Kiln Workbench"));
  setAcceptDrops(true);
  setDockOptions(AnimatedDocks | AllowTabbedDocks | AllowNestedDocks);
  createModels();
  createDocks();
  createStatusBar();
  connectViews();
  project_ = new ProjectController(this, {tuning_, compare_, run_, selection_}, this);
  connectProject();
  createActions();
  QSettings settings;
  if (!restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray()))
    resize(defaultWindowSize());
  applyDefaultLayout();
  defaultState_ = saveState(kLayoutVersion);
  // A state saved by another layout version is refused and the default stays.
  restoreState(settings.value(QStringLiteral("window/state")).toByteArray(), kLayoutVersion);
  updateActions();
}

QSize MainWindow::defaultWindowSize() const {
  // Most of the screen, and never below 1024x700: the smallest window the
  // default layout is made for (its docks' minimums add up to about that).
  const QSize smallest(1024, 700);
  QRect screen = this->screen() ? this->screen()->availableGeometry() : QRect(QPoint(), QSize(1600, 1000));
  QSize size(screen.width() * 85 / 100, screen.height() * 85 / 100);
  return size.expandedTo(smallest).boundedTo(screen.size().expandedTo(smallest));
}

void MainWindow::fitToScreen() {
  if (!screen() || isFullScreen() || isMaximized())
    return;
  const QRect avail = screen()->availableGeometry();
  // A screen below the layout's smallest size (1024x700) keeps that size:
  // squeezing the docks further would hide controls.
  if (avail.width() < 1024 || avail.height() < 700)
    return;
  const QSize frame = frameGeometry().size() - size(); // title bar and borders
  const QSize room = avail.size() - frame;
  if (width() > room.width() || height() > room.height())
    resize(size().boundedTo(room));
  // Then inside the screen: the title bar never above its top edge.
  QRect f = frameGeometry();
  int x = std::clamp(f.left(), avail.left(), std::max(avail.left(), avail.right() - f.width() + 1));
  int y = std::clamp(f.top(), avail.top(), std::max(avail.top(), avail.bottom() - f.height() + 1));
  if (x != f.left() || y != f.top())
    move(x, y);
}

void MainWindow::showEvent(QShowEvent *event) {
  QMainWindow::showEvent(event);
  if (!fittedToScreen_) {
    fittedToScreen_ = true;
    fitToScreen();
  }
}

void MainWindow::resetLayout() {
  restoreState(defaultState_, kLayoutVersion);
  for (QDockWidget *d : docks_)
    d->setFloating(false);
  applyDefaultLayout();
}

void MainWindow::applyDefaultLayout() {
  // Modest side and bottom docks sized for the default window: the graph in
  // the middle keeps most of the room, also when the window shrinks to
  // 1024x700 (the docks keep their size, the centre gives way).
  auto named = [this](const char *name) -> QDockWidget * {
    for (QDockWidget *d : docks_)
      if (d->objectName() == QLatin1String(name))
        return d;
    return nullptr;
  };
  QDockWidget *left = named("dispatches"), *right = named("inspector"), *bottom = named("timeline");
  if (!left || !right || !bottom)
    return;
  int side = std::clamp(width() / 5, 240, 340);
  int strip = std::clamp(height() / 4, 200, 280);
  // The inspector as wide as its controls need (it would scroll sideways).
  auto *scroll = qobject_cast<QScrollArea *>(right->widget());
  int frame = right->minimumSizeHint().width() - right->widget()->minimumSizeHint().width();
  int inspector = std::max(side, (scroll ? scroll->widget() : right->widget())->minimumSizeHint().width() + frame);
  resizeDocks({left, right}, {side, inspector}, Qt::Horizontal);
  resizeDocks({bottom}, {strip}, Qt::Vertical);
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
  if (qobject_cast<QAbstractScrollArea *>(w)) {
    dock->setWidget(w); // tables scroll by themselves
  } else {
    // A dock smaller than its panel's minimum scrolls instead of squeezing
    // the panel's controls on top of each other (1024x700 windows).
    auto *scroll = new QScrollArea(dock);
    scroll->setObjectName(name + QStringLiteral("Scroll"));
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidgetResizable(true);
    scroll->setWidget(w);
    dock->setWidget(scroll);
  }
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

void MainWindow::createModels() {
  dispatchModel_ = new DispatchListModel(this);
  commandModel_ = new CommandListModel(this);
  bufferModel_ = new BufferListModel(this);
  selection_ = new QItemSelectionModel(dispatchModel_, this);
}

QTableView *MainWindow::createTable(QAbstractItemModel *model, const QString &accessibleName) {
  auto *t = new QTableView(this);
  t->setModel(model);
  t->setSelectionBehavior(QAbstractItemView::SelectRows);
  t->setSelectionMode(QAbstractItemView::SingleSelection);
  t->setAlternatingRowColors(true);
  t->verticalHeader()->hide();
  t->horizontalHeader()->setStretchLastSection(true);
  // Long ONNX names ("Conv \"/model/.../pointwise/Conv\" #12") keep the
  // end that tells them apart.
  t->setTextElideMode(Qt::ElideMiddle);
  t->setAccessibleName(accessibleName);
  return t;
}

void MainWindow::createDocks() {
  graph_ = new GraphPanel(this);
  setCentralWidget(graph_);
  dispatchTable_ = createTable(dispatchModel_, tr("Dispatches"));
  dispatchTable_->setSelectionModel(selection_);
  dispatchTable_->setSortingEnabled(false);
  QDockWidget *dispatches = addDock(dispatchTable_, tr("Dispatches"), QStringLiteral("dispatches"),
                                    Qt::LeftDockWidgetArea);
  dispatches->raise();

  inspector_ = new InspectorView(this);
  QDockWidget *inspector =
      addDock(inspector_, tr("Inspector"), QStringLiteral("inspector"), Qt::RightDockWidgetArea);
  // The model's own graph beside the dispatch graph, tabbed with the
  // inspector (the inspector in front).
  source_ = new SourceGraphPanel(this);
  QDockWidget *source =
      addDock(source_, tr("Source Graph"), QStringLiteral("source"), Qt::RightDockWidgetArea);
  tabifyDockWidget(inspector, source);
  inspector->raise();

  timeline_ = new TimelineView(this);
  memory_ = new MemoryView(this);
  sizes_ = new SizesView(this);
  diagnostics_ = new DiagnosticsView(this);
  profile_ = new ProfileView(this);
  commandTable_ = createTable(commandModel_, tr("Commands"));
  bufferTable_ = createTable(bufferModel_, tr("Buffers"));
  auto *tDock = addDock(timeline_, tr("Timeline"), QStringLiteral("timeline"), Qt::BottomDockWidgetArea);
  auto *pDock =
      addDock(profile_, tr("Profile"), QStringLiteral("profile"), Qt::BottomDockWidgetArea);
  auto *mDock = addDock(memory_, tr("Memory"), QStringLiteral("memory"), Qt::BottomDockWidgetArea);
  auto *cDock =
      addDock(commandTable_, tr("Commands"), QStringLiteral("commands"), Qt::BottomDockWidgetArea);
  auto *bDock =
      addDock(bufferTable_, tr("Buffers"), QStringLiteral("buffers"), Qt::BottomDockWidgetArea);
  auto *sDock = addDock(sizes_, tr("Sizes"), QStringLiteral("sizes"), Qt::BottomDockWidgetArea);
  auto *gDock = addDock(diagnostics_, tr("Diagnostics"), QStringLiteral("diagnostics"), Qt::BottomDockWidgetArea);
  QDockWidget *strip[] = {tDock, pDock, mDock, cDock, bDock, sDock, gDock};
  for (size_t i = 1; i < std::size(strip); ++i)
    tabifyDockWidget(strip[i - 1], strip[i]);
  tDock->raise();
  // The tables and Tune run the full height on the left; the bottom strip
  // (timeline and friends) spans the graph and the inspector.
  setCorner(Qt::BottomLeftCorner, Qt::LeftDockWidgetArea);
  setCorner(Qt::BottomRightCorner, Qt::BottomDockWidgetArea);

  // Tune, Compare and Run (ProjectController drives them): Tune with the
  // dispatches (both per dispatch), Compare and Run after Diagnostics.
  tuning_ = new TuningView(this);
  compare_ = new CompareView(this);
  run_ = new RunPanel(this);
  auto *tuneDock = addDock(tuning_, tr("Tune"), QStringLiteral("tune"), Qt::LeftDockWidgetArea);
  auto *compareDock =
      addDock(compare_, tr("Compare"), QStringLiteral("compare"), Qt::BottomDockWidgetArea);
  auto *runDock = addDock(run_, tr("Run"), QStringLiteral("run"), Qt::BottomDockWidgetArea);
  tabifyDockWidget(dispatches, tuneDock);
  tabifyDockWidget(gDock, compareDock);
  tabifyDockWidget(compareDock, runDock);
  dispatches->raise();
  tDock->raise();
}

void MainWindow::createStatusBar() {
  summary_ = new ElidedLabel(this);
  statusBar()->addWidget(summary_, 1);
  progress_ = new PhaseProgress(this);
  statusBar()->addPermanentWidget(progress_);
  cancelButton_ = new QPushButton(tr("Cancel"), this);
  cancelButton_->setToolTip(tr(
      "Stop the compilation at the next phase and the run on the host before its next wave (Esc)"));
  cancelButton_->setEnabled(false);
  connect(cancelButton_, &QPushButton::clicked, this, &MainWindow::cancelWork);
  statusBar()->addPermanentWidget(cancelButton_);
}

void MainWindow::connectViews() {
  // Every view of the document follows (and sets) the one selection.
  documentViews_ = {graph_->view(), timeline_,  profile_,       memory_,
                    sizes_,         inspector_, source_->view()};
  for (DocumentView *v : documentViews_)
    v->setSelectionModel(selection_);

  // The compiler and the runtime work for the views in jobs.
  irJob_ = new IrJob(this);
  irJob_->serve(inspector_);
  runJob_ = new HostRunJob(this);
  runJob_->serve(run_);
  // The window takes the Run dock's measured times (timeline, Diagnostics,
  // status bar) whichever started the run, Ctrl+R or the dock's button.
  connect(run_, &RunPanel::runStarted, this, &MainWindow::onRunStarted);
  connect(run_, &RunPanel::runFinished, this, &MainWindow::onRunFinished);
  // A validation is cancelled as a run is (Esc, the status bar's Cancel).
  connect(run_, &RunPanel::validateRequested, this, [this] { updateActions(); });
  connect(run_, &RunPanel::validateFinished, this, [this] { updateActions(); });

  connect(diagnostics_, &DiagnosticsView::operatorActivated, this, [this](qint64 index) {
    int row = dispatchModel_->rowOfSourceOp(index);
    if (row < 0) {
      diagnostics_->add(DiagnosticsView::Severity::Note, doc_ ? doc_->path : QString(),
                        tr("source operator #%1 is in no dispatch of the plan shown").arg(index));
      return;
    }
    selectDispatch(dispatchModel_->dispatchAt(row));
  });
  connect(diagnostics_, &DiagnosticsView::shapeFixRequested, this,
          [this](const QString &file, const QString &fix) { applyShapeFix(fix, file); });
}

void MainWindow::connectProject() {
  // What the controller asks of the window.
  connect(project_, &ProjectController::documentReplanned, this,
          [this](std::shared_ptr<const ModelDocument> doc, const QString &phase) {
            setDocument(std::move(doc), phase);
          });
  connect(project_, &ProjectController::replanRefused, this, [this](const QString &note) {
    setStatus(summaryText() + note);
    setStale(true);
  });
  connect(project_, &ProjectController::buildRequested, this,
          [this](const QString &path) { startJob(path, /*planFirst=*/false); });
  connect(project_, &ProjectController::openRequested, this, &MainWindow::openFile);
  connect(project_, &ProjectController::dispatchChosen, this, &MainWindow::selectDispatch);
  connect(project_, &ProjectController::diagnostic, diagnostics_, &DiagnosticsView::add);
  connect(project_, &ProjectController::diagnosticsRequested, this, &MainWindow::raiseDiagnostics);
  // What it follows (before anyone else: Tune is current when they look).
  connect(this, &MainWindow::documentShown, project_, &ProjectController::onDocumentShown);
  connect(this, &MainWindow::compileFinished, project_, &ProjectController::onCompileFinished);
}

void MainWindow::readSourceGraph(const QString &path) {
  struct Read {
    std::shared_ptr<const kiln::SourceGraph> graph;
    QString error;
  };
  auto *watcher = new QFutureWatcher<Read>(this);
  connect(watcher, &QFutureWatcher<Read>::finished, this, [this, watcher, path] {
    Read r = watcher->result();
    watcher->deleteLater();
    source_->view()->setSourceGraph(path, r.graph, r.error);
  });
  watcher->setFuture(QtConcurrent::run([file = path.toStdString()] {
    Read r;
    auto graph = kiln::readSourceGraph(file);
    if (graph)
      r.graph = std::make_shared<const kiln::SourceGraph>(std::move(*graph));
    else
      r.error = QString::fromStdString(llvm::toString(graph.takeError()));
    return r;
  }));
}

void MainWindow::raiseDiagnostics() {
  if (QDockWidget *d = dockOf(diagnostics_))
    d->raise();
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
                                                tr("Models and artifacts (*.tflite *.onnx *.mlir *.kiln);;All files (*)"));
    if (!path.isEmpty())
      openFile(path);
  });
  open->setShortcuts(withKey(QKeySequence(Qt::CTRL | Qt::Key_O), QKeySequence::Open));
  open->setToolTip(tr("Open a TFLite model, a TOSA .mlir file or a .kiln artifact"));
  recentMenu_ = file->addMenu(tr("Open &Recent"));
  updateRecentMenu();
  exportMenu_ = file->addMenu(tr("&Export View"));
  ExportSources sources;
  sources.graph = graph_->view();
  sources.timeline = timeline_->plot();
  sources.memory = memory_->plot();
  sources.tables = {{tr("Dispatches"), dispatchModel_},
                    {tr("Profile"), profile_->proxy()},
                    {tr("Commands"), commandModel_},
                    {tr("Buffers"), bufferModel_},
                    {tr("Section Sizes"), sizes_->model()}};
  sources.document = [this] { return doc_; };
  sources.measured = [this] { return measuredRun(); };
  exporter_ = new ViewExporter(std::move(sources), this);
  exporter_->addActions(exportMenu_);
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
  cancelAction_ = build->addAction(tr("&Cancel"), this, &MainWindow::cancelWork);
  cancelAction_->setToolTip(tr("Stop the compilation and the run on the host"));
  cancelAction_->setShortcut(QKeySequence(Qt::Key_Escape));
  build->addAction(tr("&Fix Input Shape\u2026"), this, [this] {
    bool ok = false;
    QString text = QInputDialog::getText(this, tr("Fix input shape"),
                                         tr("INPUT=DIMS (input name or index), e.g. 0=1x76x32x1:"), QLineEdit::Normal,
                                         QString(), &ok);
    if (ok && !text.isEmpty() && !applyShapeFix(text))
      QMessageBox::warning(this, tr("Fix input shape"), diagnostics_->lastMessage());
  });
  build->addSeparator();
  build->addAction(project_->buildAction());
  build->addAction(project_->exportAction());

  QMenu *edit = menuBar()->addMenu(tr("&Edit"));
  edit->addAction(project_->undoAction());
  edit->addAction(project_->redoAction());

  QMenu *view = menuBar()->addMenu(tr("&View"));
  QAction *find = view->addAction(tr("&Find Dispatch"), this, [this] {
    graph_->searchBox()->setFocus();
    graph_->searchBox()->selectAll();
  });
  find->setShortcut(QKeySequence::Find);
  view->addAction(tr("Fit &Graph"), graph_->view(), &GraphView::fitToWindow)
      ->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
  QAction *collapsed = view->addAction(tr("&Collapsed Graph"));
  collapsed->setCheckable(true);
  collapsed->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));
  connect(collapsed, &QAction::toggled, graph_->collapsedBox(), &QAbstractButton::setChecked);
  connect(graph_->collapsedBox(), &QAbstractButton::toggled, collapsed, &QAction::setChecked);
  QAction *full = view->addAction(tr("F&ull Screen"), this,
                                  [this](bool on) { on ? showFullScreen() : showNormal(); });
  full->setCheckable(true);
  full->setShortcuts(withKey(QKeySequence(Qt::Key_F11), QKeySequence::FullScreen));
  QAction *reset = view->addAction(tr("&Reset Layout"), this, &MainWindow::resetLayout);
  reset->setObjectName(QStringLiteral("resetLayout"));
  reset->setToolTip(tr("Every panel back where and as large as a new window has it"));
  view->addSeparator();
  for (QDockWidget *d : docks_)
    view->addAction(d->toggleViewAction());

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
  cancelButton_->setEnabled(compiling || run_->isBusy());
  cancelAction_->setEnabled(compiling || run_->isBusy());
  closeAction_->setEnabled(doc_ != nullptr);
  runAction_->setEnabled(doc_ && !doc_->artifact.empty() && doc_->hostLoadError.isEmpty() &&
                         !isRunning() && !stale_);
  runAction_->setToolTip(
      doc_ && !doc_->hostLoadError.isEmpty()
          ? tr("This computer cannot run the artifact: %1").arg(doc_->hostLoadError)
          : tr("Run the artifact on this machine with random inputs and show measured times"));
  if (exporter_)
    exporter_->updateActions();
}

void MainWindow::setStale(bool stale) {
  stale_ = stale;
  updateActions();
}

// A job counts until its finished handler has run (the worker may be done
// with the result still queued).
bool MainWindow::isCompiling() const { return job_ != nullptr; }
bool MainWindow::isRunning() const { return running_; }

qint64 MainWindow::currentDispatch() const {
  QModelIndex cur = selection_->currentIndex();
  return cur.isValid() ? dispatchModel_->dispatchAt(cur.row()) : -1;
}

QString MainWindow::lastDiagnostic() const { return diagnostics_->lastMessage(); }

void MainWindow::openFile(const QString &path) { startJob(QFileInfo(path).absoluteFilePath(), true); }

void MainWindow::startJob(const QString &abs, bool planFirst) {
  QFileInfo info(abs);
  if (job_) {
    // The old job finishes in the background; its result is dropped.
    job_->cancel();
    disconnect(job_, nullptr, this, nullptr);
    connect(job_, &CompileJob::finished, job_, &QObject::deleteLater);
  }
  kiln::CompileOptions base;
  base.fixedShapes = globalFixes_;
  // The model's .kilnproj settings (read only: Tune follows the model once
  // its plan is shown).
  kiln::CompileOptions options = project_->optionsFor(abs, base);
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
  connect(job, &CompileJob::planReady, this, [this, job, abs] { onPlanReady(job, abs); });
  connect(job, &CompileJob::documentReady, this, [this, job, abs] { onDefaultBuilt(job, abs); });
  bool artifact = info.suffix() == QLatin1String("kiln");
  progress_->start(artifact ? tr("reading %1").arg(info.fileName()) : planFirst ? tr("planning") : tr("default build"));
  if (artifact)
    setStatus(tr("Reading %1\u2026").arg(info.fileName()));
  else if (planFirst)
    setStatus(tr("Planning %1\u2026").arg(info.fileName()));
  else if (doc_ && doc_->path == abs) // its plan is shown
    setStatus(summaryText() + tr("; generating code\u2026"));
  else
    setStatus(tr("%1: generating code\u2026").arg(info.fileName()));
  job->start(abs, options, true, planFirst && !artifact);
  updateActions();
}

void MainWindow::onPlanReady(CompileJob *job, const QString &path) {
  if (job != job_ || job->isCancelRequested())
    return;
  auto planned = job->plannedDocument();
  setDocument(planned, tr("; planned in %1 ms; generating code\u2026").arg(planned->compileMs, 0, 'f', 0));
  (void)path;
}

void MainWindow::onDefaultBuilt(CompileJob *job, const QString &path) {
  if (job != job_)
    return;
  showCompiled(*job->defaultDocument(), path);
  setDocument(job->defaultDocument(), tr("; stripped build for the size comparison\u2026"));
}

void MainWindow::onCompileFinished(CompileJob *job, const QString &path) {
  job->deleteLater();
  if (job != job_)
    return;
  job_ = nullptr;
  const JobResult &r = job->result();
  lastUnfixed_.clear();
  if (!r.ok) {
    lastFailed_ = path;
    lastCancelled_ = r.cancelled;
    lastUnfixed_ = dynamicInputsOf(r.unfixed);
    progress_->finish(false, r.cancelled ? tr("cancelled") : tr("failed"));
    // A file Kiln refuses (unsupported operator, dynamic shape, not a
    // model) is the user's input rejected, with a warning icon; errors are
    // Kiln's own failures (a run on the host, a project it cannot read).
    diagnostics_->add(r.cancelled ? DiagnosticsView::Severity::Note : DiagnosticsView::Severity::Warning, path,
                      r.cancelled ? tr("compilation cancelled") : r.error, lastUnfixed_);
    if (!r.cancelled)
      if (QDockWidget *d = dockOf(diagnostics_))
        d->raise();
    QString name = QFileInfo(path).fileName(), what = r.cancelled ? tr("was cancelled") : tr("failed");
    if (doc_ && doc_->path == path) // its plan is shown: only the code is missing
      setStatus(tr("%1; code generation %2 (Build with Ctrl+B)").arg(summaryText(), what));
    else if (doc_)
      setStatus(tr("%1 (still shown); opening %2 %3").arg(QFileInfo(doc_->path).fileName(), name, what));
    else
      setStatus(tr("Opening %1 %2").arg(name, what));
    updateActions();
    emit compileFinished(false);
    return;
  }
  lastFailed_.clear();
  lastCancelled_ = false;
  if (!r.error.isEmpty()) // an artifact without reflection, a failed stripped build
    diagnostics_->add(r.cancelled ? DiagnosticsView::Severity::Note : DiagnosticsView::Severity::Warning, path,
                      r.cancelled ? tr("stripped build cancelled: sizes show the default build only") : r.error);
  progress_->finish(true, r.cancelled ? tr("default build only") : tr("done"));
  addRecent(path);
  if (doc_ && doc_ == job->defaultDocument()) {
    // The default build is already shown: add the stripped sizes only.
    doc_ = r.doc;
    sizes_->setDocument(doc_);
    if (doc_->strippedSizes)
      diagnostics_->add(DiagnosticsView::Severity::Note, path,
                        tr("stripped build in %1 ms: %2 bytes (default %3)")
                            .arg(doc_->strippedMs, 0, 'f', 0).arg(doc_->strippedSizes->fileBytes)
                            .arg(doc_->sizes ? doc_->sizes->fileBytes : 0));
  } else {
    showCompiled(*r.doc, path);
    setDocument(r.doc);
  }
  setStatus(summaryText());
  updateActions();
  emit compileFinished(true);
}

void MainWindow::showCompiled(const ModelDocument &doc, const QString &path) {
  const kiln::CompilationPlan &plan = *doc.plan;
  for (const std::string &v : kiln::checkPlan(plan))
    diagnostics_->add(DiagnosticsView::Severity::Warning, path, tr("plan check: %1").arg(QString::fromStdString(v)));
  if (doc.isArtifact && doc.artifactCommands >= 0) {
    // No reflection data: the counts come from the command list itself.
    diagnostics_->add(
        DiagnosticsView::Severity::Note, path,
        tr("read in %1 ms without reflection data: %2 dispatch commands, %3 commands, "
           "%4 waves, arena %5 bytes, artifact %6 bytes (the per-dispatch views need "
           "reflection data: open the model, or an artifact built with the default profile)")
            .arg(doc.compileMs, 0, 'f', 0)
            .arg(doc.artifactDispatches)
            .arg(doc.artifactCommands)
            .arg(plan.schedule.waves)
            .arg(plan.memory.arenaBytes)
            .arg(doc.sizes ? doc.sizes->fileBytes : 0));
    return;
  }
  // What `kiln` prints as warnings (a model compiled at its recorded input
  // shapes, a setting that changed nothing).
  // Another size of a recorded input shape is set in Tune's shapes panel.
  static const QRegularExpression otherSize(
      QStringLiteral(R"(for another size give (--fix-shape=\S+))"));
  for (const std::string &w : doc.warnings)
    diagnostics_->add(DiagnosticsView::Severity::Warning, path,
                      QString::fromStdString(w).replace(
                          otherSize, tr("for another size set it under Tune's dynamic input "
                                        "dimensions (on the command line: \\1)")));
  // The If/Loop/Scan nodes the importer folded, selected or unrolled, and why.
  for (const kiln::ControlFlowDecision &d : doc.controlFlow)
    diagnostics_->add(DiagnosticsView::Severity::Note, path,
                      tr("%1: %2: %3")
                          .arg(QString::fromStdString(d.node), QString::fromStdString(d.decision),
                               QString::fromStdString(d.reason)));
  diagnostics_->add(DiagnosticsView::Severity::Note, path,
                    tr("%1 in %2 ms: %3 dispatches, %4 commands, %5 waves, arena %6 bytes, artifact %7 bytes")
                        .arg(doc.isArtifact ? tr("read") : tr("compiled"))
                        .arg(doc.compileMs, 0, 'f', 0)
                        .arg(plan.dispatches.size()).arg(plan.schedule.commands.size()).arg(plan.schedule.waves)
                        .arg(plan.memory.arenaBytes).arg(doc.sizes ? doc.sizes->fileBytes : 0));
}

void MainWindow::setDocument(std::shared_ptr<const ModelDocument> doc, const QString &phase) {
  QElapsedTimer timer;
  timer.start();
  // The same model again (its code generated, a re-plan): the selected
  // dispatch and the graph's zoom and scroll stay.
  bool sameModel = doc && doc_ && doc->path == doc_->path && doc->isArtifact == doc_->isArtifact;
  bool samePlan = sameModel && doc->plan == doc_->plan;
  qint64 selected = sameModel ? currentDispatch() : -1;
  GraphView *graph = graph_->view();
  QTransform zoom = graph->transform();
  QPointF centre = graph->mapToScene(graph->viewport()->rect().center());
  doc_ = std::move(doc);
  stale_ = false;
  measured_.reset();
  auto plan = doc_ ? doc_->plan : nullptr;
  if (!sameModel)
    graph_->searchBox()->clear(); // the last model's dispatch name
  graph_->setNote(
      doc_ && doc_->isArtifact && doc_->artifactCommands >= 0
          ? tr("%1 has no reflection data (it was built with the stripped profile), so the graph, "
               "timeline and memory map have nothing to draw: %2 dispatches in %3 commands. Its "
               "section sizes are in Sizes. Open the model, or an artifact built with the default "
               "profile, to see every dispatch.")
                .arg(QFileInfo(doc_->path).fileName())
                .arg(doc_->artifactDispatches)
                .arg(doc_->artifactCommands)
          : QString());
  if (!samePlan) {
    selection_->clear();
    dispatchModel_->setPlan(plan);
    commandModel_->setPlan(plan);
    bufferModel_->setPlan(plan);
    for (QTableView *t : {dispatchTable_, commandTable_, bufferTable_})
      fitColumns(t);
  }
  // The plan's views redraw only for another plan; sizes and the
  // inspector follow every document.
  for (DocumentView *v : documentViews_)
    doc_ ? v->setDocument(doc_) : v->clear();
  if (sameModel && !samePlan) {
    graph->setTransform(zoom);
    graph->centerOn(centre);
  }
  // Another model: its own graph, read beside the plan.
  if (doc_ && !sameModel && !doc_->isArtifact)
    readSourceGraph(doc_->path);
  if (doc_) {
    setWindowFilePath(doc_->path);
    setWindowTitle(tr("%1 \u2014 Kiln Workbench").arg(QFileInfo(doc_->path).fileName()));
    setStatus(summaryText() + phase);
  } else {
    setWindowFilePath(QString());
    setWindowTitle(tr("Kiln Workbench"));
    setStatus(QString());
  }
  // Tune, its project file and undo history follow the model shown.
  project_->followDocument();
  if (!samePlan && selected >= 0)
    selectDispatch(selected);
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
  QString text = tr("%1: %2 dispatches, %3 waves, arena %4")
                     .arg(QFileInfo(doc_->path).fileName()).arg(dispatches).arg(plan.schedule.waves)
                     .arg(formatBytes(plan.memory.arenaBytes));
  if (doc_->artifact.empty()) // the plan only (code generation follows, or bare metal)
    return text;
  text += tr(", artifact %1 bytes").arg(doc_->sizes ? doc_->sizes->fileBytes : int64_t(doc_->artifact.size()));
  if (doc_->strippedSizes)
    text += tr(" (stripped %1)").arg(doc_->strippedSizes->fileBytes);
  return text;
}

QString MainWindow::statusText() const { return summary_->text(); }

void MainWindow::setStatus(const QString &text) {
  if (isRunning()) { // "Running on the host…" stays until the run ends
    statusBeforeRun_ = text; // and the latest status comes back then
    return;
  }
  summary_->setText(text);
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
  setStatus(tr("Cancelling\u2026"));
}

void MainWindow::cancelWork() {
  run_->cancel(); // nothing when no run or validation is under way
  cancelCompile();
}

bool MainWindow::applyShapeFix(const QString &text) {
  return applyShapeFix(text, !lastFailed_.isEmpty() ? lastFailed_ : doc_ && !doc_->isArtifact ? doc_->path : QString());
}

bool MainWindow::applyShapeFix(const QString &text, const QString &path) {
  // The recipe's parser of --fix-shape (one input per call).
  kiln::BuildRecipe parsed;
  if (llvm::Error err = kiln::setRecipeOption(parsed, "fix-shape", text.toStdString())) {
    diagnostics_->add(DiagnosticsView::Severity::Warning, path,
                      tr("not applied: %1").arg(QString::fromStdString(llvm::toString(std::move(err)))));
    return false;
  }
  if (path.isEmpty() || kiln::isArtifactFile(path.toStdString())) {
    diagnostics_->add(DiagnosticsView::Severity::Warning, path,
                      tr("not applied: %1 fixes an input of a model; open the model first").arg(text));
    return false;
  }
  const kiln::ShapeFix fix{parsed.fixedShapes.begin()->first, parsed.fixedShapes.begin()->second};
  if (QFileInfo(path).absoluteFilePath() == lastFailed_)
    lastFailed_.clear();
  project_->fixShape(QFileInfo(path).absoluteFilePath(), fix);
  return true;
}

void MainWindow::runOnHost() {
  if (!doc_ || doc_->artifact.empty() || isRunning())
    return;
  // One path: the Run dock's own run, with its inputs, as its button.
  if (QDockWidget *d = dockOf(run_)) {
    d->show();
    d->raise();
  }
  run_->run(); // onRunStarted follows
}

void MainWindow::onRunStarted() {
  running_ = true;
  statusBeforeRun_ = summary_->text();
  summary_->setText(tr("Running on the host\u2026"));
  updateActions();
}

void MainWindow::onRunFinished(bool ok) {
  const RunPanelResult &r = run_->result();
  // The run measured the document shown unless it changed meanwhile.
  const bool current = doc_ && run_->resultArtifact() == doc_->artifact;
  const QString path = doc_ ? doc_->path : QString();
  const QString latency = QString::fromStdString(kiln::latencyText(r.latency));
  if (r.cancelled) {
    diagnostics_->add(DiagnosticsView::Severity::Note, path, tr("run on host cancelled"));
  } else if (!ok) {
    diagnostics_->add(DiagnosticsView::Severity::Error, path, tr("run on host: %1").arg(r.error));
  } else if (current) {
    measured_ = std::make_unique<MeasuredRun>(r.measured);
    timeline_->setMeasured(*measured_);
    profile_->setMeasured(*measured_);
    diagnostics_->add(DiagnosticsView::Severity::Note, path,
                      tr("ran on the host: %1; %2 trace events").arg(latency).arg(r.measured.events.size()));
    if (r.measured.droppedEvents > 0)
      diagnostics_->add(
          DiagnosticsView::Severity::Warning, path,
          tr("the trace was cut: %1 events did not fit; the timeline draws the commands "
             "without events from the cost model (their tooltips say \"estimated\")")
              .arg(r.measured.droppedEvents));
  }
  running_ = false;
  if (summary_->text() == tr("Running on the host\u2026"))
    summary_->setText(isCompiling() ? statusBeforeRun_
                      : r.cancelled ? tr("%1; run on host cancelled").arg(summaryText())
                      : !ok     ? tr("%1; run on host failed (see Diagnostics)").arg(summaryText())
                      : current ? tr("%1; run on host: %2").arg(summaryText(), latency)
                                : summaryText());
  updateActions();
  emit runFinished(ok && current);
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

QStringList MainWindow::recentFileLabels(const QStringList &paths) {
  // A path's folders, innermost first.
  auto folders = [](const QString &path) {
    QStringList parts = QFileInfo(path).absolutePath().split(QLatin1Char('/'), Qt::SkipEmptyParts);
    std::reverse(parts.begin(), parts.end());
    return parts;
  };
  QStringList labels;
  for (const QString &path : paths) {
    const QString name = QFileInfo(path).fileName();
    const QStringList mine = folders(path);
    // As many folders as tell this path from every other of the same name.
    qsizetype depth = 0;
    for (const QString &other : paths) {
      if (other == path || QFileInfo(other).fileName() != name)
        continue;
      const QStringList theirs = folders(other);
      qsizetype k = 0;
      while (k < mine.size() && k < theirs.size() && mine[k] == theirs[k])
        ++k;
      depth = std::max(depth, std::min(k + 1, qsizetype(mine.size())));
    }
    QStringList shown = mine.mid(0, depth);
    std::reverse(shown.begin(), shown.end());
    labels << (depth == 0 ? name
                          : tr("%1 \u2014 %2%3")
                                .arg(name, depth < mine.size() ? QStringLiteral("\u2026/") : QStringLiteral("/"),
                                     QDir::toNativeSeparators(shown.join(QLatin1Char('/')))));
  }
  return labels;
}

void MainWindow::updateRecentMenu() {
  recentMenu_->clear();
  QStringList recent = QSettings().value(QStringLiteral("recentFiles")).toStringList();
  const QStringList labels = recentFileLabels(recent);
  int n = 0;
  for (const QString &path : recent) {
    QString label = labels[n];
    label.replace(QLatin1Char('&'), QStringLiteral("&&")); // not a mnemonic
    QAction *a = recentMenu_->addAction(QStringLiteral("&%1 %2").arg(++n % 10).arg(label),
                                        this, [this, path] { openFile(path); });
    a->setToolTip(path);
    a->setStatusTip(path);
  }
  recentMenu_->setEnabled(!recent.isEmpty());
}

void MainWindow::closeEvent(QCloseEvent *event) {
  QSettings settings;
  settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
  settings.setValue(QStringLiteral("window/state"), saveState(kLayoutVersion));
  if (job_)
    job_->cancel();
  runJob_->cancel(); // quitting never waits out a long run
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
