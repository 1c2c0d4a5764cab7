//===- Workbench.cpp - Command line, screenshots and benchmark -----------===//
#include "Workbench.h"
#include "MainWindow.h"
#include "ProjectController.h"

#include "CompareView.h"
#include "DiagnosticsView.h"
#include "GraphView.h"
#include "InspectorView.h"
#include "MemoryView.h"
#include "PlanModels.h"
#include "ProfileView.h"
#include "SizesView.h"
#include "SourceGraphView.h"
#include "TimelineView.h"

#include "kiln/Recipe.h"
#include "kiln/Run.h"

#include <QApplication>
#include <QCheckBox>
#include <QCommandLineParser>
#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFileInfo>
#include <QIcon>
#include <QItemSelectionModel>
#include <QMenu>
#include <QMenuBar>
#include <QPainter>
#include <QPixmap>
#include <QTableView>
#include <QTimer>

#include <algorithm>
#include <cstdio>

namespace kiln::workbench {

using namespace kiln::views;

static bool waitFor(MainWindow &window, void (MainWindow::*signal)(bool), int timeoutMs) {
  QEventLoop loop;
  bool ok = false;
  QObject::connect(&window, signal, &loop, [&](bool result) {
    ok = result;
    loop.quit();
  });
  QTimer::singleShot(timeoutMs, &loop, &QEventLoop::quit);
  loop.exec();
  return ok;
}

bool waitForCompile(MainWindow &window, int timeoutMs) {
  if (!window.isCompiling())
    return window.document() != nullptr;
  return waitFor(window, &MainWindow::compileFinished, timeoutMs);
}

bool waitForRun(MainWindow &window, int timeoutMs) {
  if (!window.isRunning())
    return window.measuredRun() != nullptr;
  return waitFor(window, &MainWindow::runFinished, timeoutMs);
}

int drawAllViews(MainWindow &window) {
  int n = 0;
  QApplication::processEvents();
  (void)window.graphPanel()->grab();
  ++n;
  for (QDockWidget *d : window.docks()) {
    d->raise();
    (void)d->widget()->grab();
    ++n;
  }
  return n;
}

static bool save(QWidget *w, const QString &path, QStringList &written) {
  QApplication::processEvents();
  QPixmap pm = w->grab();
  if (pm.isNull() || !pm.save(path)) {
    std::fprintf(stderr, "kiln-workbench: cannot write %s\n", qPrintable(path));
    return false;
  }
  written << path;
  return true;
}

/// The window with the Profile dock raised, sorted by time (largest
/// first), at 1600x1000 (profile.png) and 1024x700 (profile-1024x700.png).
static void saveProfileShots(MainWindow &window, const QString &dir, QStringList &written) {
  QDockWidget *dock = window.dockOf(window.profileView());
  if (!dock)
    return;
  dock->raise();
  window.profileView()->table()->sortByColumn(ProfileModel::Time, Qt::DescendingOrder);
  for (QSize size : {QSize(1600, 1000), QSize(1024, 700)}) {
    window.resize(size);
    QApplication::processEvents();
    bool usual = size == QSize(1600, 1000);
    save(&window,
         dir + (usual ? QStringLiteral("/profile.png") : QStringLiteral("/profile-1024x700.png")),
         written);
  }
  window.resize(1600, 1000);
  window.profileView()->table()->sortByColumn(ProfileModel::Id, Qt::AscendingOrder);
  for (QDockWidget *d : window.docks())
    if (d->objectName() == QLatin1String("timeline"))
      d->raise();
  QApplication::processEvents();
}

/// File > Export View open over the window (export-view.png): the menus are
/// popups of their own, drawn onto the window's picture where they open.
static void saveExportMenuShot(MainWindow &window, const QString &dir, QStringList &written) {
  QMenu *exportMenu = window.exportViewMenu();
  QMenu *file = exportMenu ? qobject_cast<QMenu *>(exportMenu->parentWidget()) : nullptr;
  if (!file)
    return;
  window.resize(1600, 1000);
  QApplication::processEvents();
  const QPoint fileAt = window.menuBar()->mapTo(
      &window, window.menuBar()->actionGeometry(file->menuAction()).bottomLeft());
  file->popup(window.mapToGlobal(fileAt));
  QApplication::processEvents();
  file->setActiveAction(exportMenu->menuAction());
  const QPoint exportAt = fileAt + file->actionGeometry(exportMenu->menuAction()).topRight();
  exportMenu->popup(window.mapToGlobal(exportAt));
  QApplication::processEvents();
  QPixmap picture = window.grab();
  {
    QPainter painter(&picture);
    painter.drawPixmap(fileAt, file->grab());
    painter.drawPixmap(exportAt, exportMenu->grab());
  }
  exportMenu->hide();
  file->hide();
  const QString path = dir + QStringLiteral("/export-view.png");
  if (picture.save(path))
    written << path;
  else
    std::fprintf(stderr, "kiln-workbench: cannot write %s\n", qPrintable(path));
}

QStringList saveScreenshots(MainWindow &window, const QString &dir, const QStringList &failing) {
  QStringList written;
  QDir().mkpath(dir);
  auto doc = window.document();
  // Select the dispatch with the most FLOPs so every view shows a selection.
  if (doc && !doc->plan->dispatches.empty()) {
    const auto &ds = doc->plan->dispatches;
    auto it = std::max_element(ds.begin(), ds.end(), [](auto &a, auto &b) { return a.flops < b.flops; });
    window.selectDispatch(it->id);
    QEventLoop loop;
    QObject::connect(window.inspectorView(), &InspectorView::irShown, &loop, &QEventLoop::quit);
    QTimer::singleShot(120000, &loop, &QEventLoop::quit);
    if (window.inspectorView()->irPending())
      loop.exec();
  }
  for (QDockWidget *d : window.docks())
    if (d->objectName() == QLatin1String("timeline") || d->objectName() == QLatin1String("dispatches"))
      d->raise();
  // The smallest window the layout is made for, then the usual one; the
  // graph as it opens at each size (Fit Graph).
  for (QSize size : {QSize(1024, 700), QSize(1600, 1000)}) {
    window.resize(size);
    QApplication::processEvents();
    GraphView *g = window.graphView();
    g->readableView();
    if (QRectF node = g->nodeRect(g->selectedDispatch()); !node.isEmpty())
      g->ensureVisible(node, 40, 40); // the selection, as a click shows it
    bool usual = size == QSize(1600, 1000);
    save(&window, dir + (usual ? QStringLiteral("/window.png") : QStringLiteral("/window-1024x700.png")), written);
  }

  // The source graph beside the dispatch graph at both sizes: its dock in
  // front, the selected dispatch's operators highlighted.
  if (QDockWidget *sourceDock = window.dockOf(window.sourceGraphPanel())) {
    SourceGraphView *source = window.sourceGraphPanel()->view();
    QElapsedTimer reading;
    reading.start();
    while (source->waitingForGraph() && reading.elapsed() < 60000)
      QApplication::processEvents(QEventLoop::AllEvents, 50);
    sourceDock->raise();
    for (QSize size : {QSize(1024, 700), QSize(1600, 1000)}) {
      window.resize(size);
      QApplication::processEvents();
      source->readableView();
      window.graphView()->readableView();
      std::vector<int64_t> ops = source->highlightedOperators();
      if (QRectF node = ops.empty() ? QRectF() : source->operatorRect(ops.front()); !node.isEmpty())
        source->ensureVisible(node, 40, 40);
      if (QRectF node = window.graphView()->nodeRect(window.graphView()->selectedDispatch());
          !node.isEmpty())
        window.graphView()->ensureVisible(node, 40, 40);
      bool usual = size == QSize(1600, 1000);
      save(&window,
           dir + (usual ? QStringLiteral("/source-graph.png")
                        : QStringLiteral("/source-graph-1024x700.png")),
           written);
    }
    if (QDockWidget *inspector = window.dockOf(window.inspectorView()))
      inspector->raise();
  }

  // Each view on its own, as a floating dock of a readable size.
  auto shoot = [&](QWidget *view, const QString &name, QSize size) {
    QDockWidget *dock = window.dockOf(view);
    if (!dock)
      return;
    dock->setFloating(true);
    dock->resize(size);
    dock->show();
    dock->raise();
    QApplication::processEvents();
    save(dock->widget(), dir + "/" + name + ".png", written);
    dock->setFloating(false);
  };
  // The graph is the central widget: shoot it with the docks hidden.
  {
    GraphPanel *g = window.graphPanel();
    QList<QDockWidget *> shown;
    for (QDockWidget *d : window.docks())
      if (d->isVisible()) {
        shown << d;
        d->hide();
      }
    window.resize(1400, 1000);
    QApplication::processEvents();
    g->view()->readableView();
    save(g, dir + "/graph.png", written);
    g->collapsedBox()->setChecked(true);
    QApplication::processEvents();
    save(g, dir + "/graph-collapsed.png", written);
    g->collapsedBox()->setChecked(false);
    for (QDockWidget *d : shown)
      d->show();
    window.resize(1600, 1000);
    QApplication::processEvents();
  }
  shoot(window.dispatchTable(), QStringLiteral("dispatches"), QSize(1100, 600));
  shoot(window.timelineView(), QStringLiteral("timeline"), QSize(1300, 800));
  shoot(window.memoryView(), QStringLiteral("memory"), QSize(1300, 700));
  shoot(window.sizesView(), QStringLiteral("sizes"), QSize(1000, 750));
  shoot(window.inspectorView(), QStringLiteral("inspector"), QSize(1000, 900));
  // Files expected to fail, for the diagnostics panel; the model stays.
  for (const QString &f : failing) {
    window.openFile(f);
    waitForCompile(window);
  }
  shoot(window.diagnostics(), QStringLiteral("diagnostics"), QSize(1300, 350));
  if (doc && !window.measuredRun()) {
    window.runOnHost();
    if (waitForRun(window))
      shoot(window.timelineView(), QStringLiteral("timeline-measured"), QSize(1300, 500));
  }
  if (doc) {
    saveProfileShots(window, dir, written);
    saveExportMenuShot(window, dir, written);
  }
  return written;
}

QStringList saveCompareScreenshots(MainWindow &window, const QString &dir, const QString &other) {
  QStringList written;
  QDir().mkpath(dir);
  // The open model's own build is compared: wait for its code.
  QElapsedTimer waited;
  waited.start();
  while ((!window.document() || window.document()->artifact.empty()) && waited.elapsed() < 300000)
    QApplication::processEvents(QEventLoop::WaitForMoreEvents, 100);
  ProjectController *ctl = window.projectController();
  QEventLoop loop;
  bool ok = false;
  QObject::connect(ctl, &ProjectController::outputsCompared, &loop, [&](bool result) {
    ok = result;
    loop.quit();
  });
  QTimer::singleShot(600000, &loop, &QEventLoop::quit);
  ctl->compareOutputsWith(other);
  if (ctl->isComparingOutputs())
    loop.exec();
  if (!ok) {
    std::fprintf(stderr, "kiln-workbench: comparing with %s failed: %s\n", qPrintable(other),
                 qPrintable(window.diagnostics()->lastMessage()));
    return written;
  }
  QDockWidget *dock = window.dockOf(ctl->compareView());
  if (dock) {
    dock->show();
    dock->raise();
  }
  for (QSize size : {QSize(1024, 700), QSize(1600, 1000)}) {
    window.resize(size);
    QApplication::processEvents();
    // Room for the table: the bottom docks at a third of the window.
    if (dock)
      window.resizeDocks({dock}, {size.height() / 3}, Qt::Vertical);
    QApplication::processEvents();
    bool usual = size == QSize(1600, 1000);
    save(&window,
         dir + (usual ? QStringLiteral("/compare-quantization.png")
                      : QStringLiteral("/compare-quantization-1024x700.png")),
         written);
  }
  return written;
}

static int benchmark(MainWindow &window, const QStringList &files, int runs) {
  // Open -> the plan drawn in every view (code generation still running),
  // -> the default build's code shown, -> the stripped build done.
  std::printf("| model | dispatches | open -> plan drawn (ms) | open -> code generated (ms) | "
              "open -> stripped build done (ms) | plan (ms) | default compile (ms) | stripped compile (ms) | "
              "views: data (ms) |\n|---|---|---|---|---|---|---|---|---|\n");
  int failures = 0;
  for (const QString &file : files) {
    std::vector<double> planDrawn, codeShown, done, planMs, compile, stripped, views;
    size_t dispatches = 0;
    for (int i = 0; i < runs; ++i) {
      window.closeDocument();
      QApplication::processEvents();
      QElapsedTimer t;
      t.start();
      double drawnAt = -1, codeAt = -1, viewMs = 0, planned = 0;
      auto c = QObject::connect(&window, &MainWindow::documentShown, [&] {
        auto doc = window.document();
        if (drawnAt < 0) { // the first document shown: the plan
          viewMs = window.viewUpdateMs();
          planned = doc->artifact.empty() ? doc->compileMs : 0;
          drawAllViews(window);
          drawnAt = t.nsecsElapsed() / 1e6;
        }
        if (codeAt < 0 && !doc->artifact.empty())
          codeAt = t.nsecsElapsed() / 1e6;
      });
      window.openFile(file);
      bool ok = waitForCompile(window);
      QObject::disconnect(c);
      if (!ok) {
        QString why = window.diagnostics()->lastMessage(); // names the file, as a rule
        if (!why.contains(file))
          why = file + QStringLiteral(": ") + why;
        std::fprintf(stderr, "kiln-workbench: %s\n", qPrintable(why));
        ++failures;
        break;
      }
      drawAllViews(window);
      done.push_back(t.nsecsElapsed() / 1e6);
      auto doc = window.document();
      dispatches = doc->plan->dispatches.size();
      planDrawn.push_back(drawnAt);
      codeShown.push_back(codeAt);
      planMs.push_back(planned);
      compile.push_back(doc->compileMs);
      stripped.push_back(doc->strippedMs);
      views.push_back(viewMs);
    }
    if (!done.empty())
      std::printf("| %s | %zu | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.1f |\n",
                  qPrintable(QFileInfo(file).fileName()), dispatches, kiln::medianOf(planDrawn),
                  kiln::medianOf(codeShown), kiln::medianOf(done), kiln::medianOf(planMs), kiln::medianOf(compile),
                  kiln::medianOf(stripped), kiln::medianOf(views));
    std::fflush(stdout);
  }
  return failures ? 1 : 0;
}

int runWorkbench(int argc, char **argv) {
  // Without a display, the modes that need no window (--help, --version,
  // --screenshots, --benchmark) run offscreen instead of aborting in the
  // platform plugin.
  if (qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY") &&
      qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
    for (int i = 1; i < argc; ++i) {
      QByteArray arg(argv[i]);
      if (arg == "-h" || arg == "--help" || arg == "-v" || arg == "--version" ||
          arg == "--help-all" || arg.startsWith("--screenshots") || arg.startsWith("--benchmark")) {
        qputenv("QT_QPA_PLATFORM", "offscreen");
        break;
      }
    }
  }
  QGuiApplication::setHighDpiScaleFactorRoundingPolicy(Qt::HighDpiScaleFactorRoundingPolicy::PassThrough);
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("Kiln"));
  QApplication::setApplicationName(QStringLiteral("kiln-workbench"));
  QApplication::setApplicationVersion(QString::fromLatin1(kiln::version()));
  QApplication::setWindowIcon(QIcon(QStringLiteral(":/kiln/kiln-workbench.svg")));
  QGuiApplication::setDesktopFileName(QStringLiteral("kiln-workbench"));

  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral("Kiln Workbench: see how a model is compiled and scheduled."));
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addPositionalArgument(QStringLiteral("file"), QStringLiteral("Model (.tflite, .onnx, .mlir) or artifact (.kiln) to open."));
  QCommandLineOption fixShape(QStringLiteral("fix-shape"), QStringLiteral("Fix a dynamic input shape: INPUT=DIMS."),
                              QStringLiteral("fix"));
  QCommandLineOption screenshots(QStringLiteral("screenshots"),
                                 QStringLiteral("Open FILE, write a PNG of every view into DIR and quit."),
                                 QStringLiteral("dir"));
  QCommandLineOption bench(QStringLiteral("benchmark"),
                           QStringLiteral("Open each FILE N times, print median times from open to the plan drawn, to "
                                          "the code generated and to the stripped build done."),
                           QStringLiteral("n"));
  QCommandLineOption compareWith(
      QStringLiteral("compare-with"),
      QStringLiteral(
          "With --screenshots: compare FILE's outputs with the model's on the same inputs "
          "(Compare) "
          "and write compare-quantization.png and compare-quantization-1024x700.png instead."),
      QStringLiteral("file"));
  parser.addOption(fixShape);
  parser.addOption(screenshots);
  parser.addOption(compareWith);
  parser.addOption(bench);
  parser.process(app);
  // Batch modes neither read nor write the user's layout and recent files.
  if (parser.isSet(bench) || parser.isSet(screenshots))
    QApplication::setApplicationName(QStringLiteral("kiln-workbench-batch"));

  MainWindow window;
  // --fix-shape as `kiln` parses it (the recipe's parser; one shape per input).
  kiln::BuildRecipe fixes;
  for (const QString &f : parser.values(fixShape))
    if (llvm::Error err = kiln::setRecipeOption(fixes, "fix-shape", f.toStdString())) {
      std::fprintf(stderr, "kiln-workbench: %s\n", llvm::toString(std::move(err)).c_str());
      return 2;
    }
  for (const auto &[input, shape] : fixes.fixedShapes)
    window.addShapeFix({input, shape});
  QStringList files = parser.positionalArguments();
  if (parser.isSet(bench)) {
    window.resize(1600, 1000);
    window.show();
    return benchmark(window, files, std::max(1, parser.value(bench).toInt()));
  }
  if (parser.isSet(screenshots)) {
    if (files.isEmpty()) {
      std::fprintf(stderr, "kiln-workbench: --screenshots takes a model (then, optionally, files whose errors the "
                           "diagnostics shot shows)\n");
      return 2;
    }
    window.resize(1600, 1000);
    window.show();
    window.openFile(files.front());
    if (!waitForCompile(window)) {
      std::fprintf(stderr, "kiln-workbench: %s\n", qPrintable(window.diagnostics()->lastMessage()));
      return 1;
    }
    const QStringList shots =
        parser.isSet(compareWith)
            ? saveCompareScreenshots(window, parser.value(screenshots), parser.value(compareWith))
            : saveScreenshots(window, parser.value(screenshots), files.mid(1));
    for (const QString &f : shots)
      std::printf("wrote %s\n", qPrintable(f));
    return shots.isEmpty() ? 1 : 0;
  }
  window.show();
  if (!files.isEmpty())
    window.openFile(files.front());
  return app.exec();
}

} // namespace kiln::workbench
