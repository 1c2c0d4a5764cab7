//===- TuningTest.cpp - Tune, project file, compare, run, export ---------===//
//
// Drives the real MainWindow (offscreen) over copies of the real models in
// a temporary folder (projects are saved beside the model, so the shared
// model cache is never written):
//   - a tile size typed on BlazeFace re-plans every view (graph, timeline,
//     plan), the rebuilt artifact still matches TFLite's reference outputs,
//     undo/redo restore it; bad tiles are explained and change nothing;
//   - a dynamic batch is fixed in the shapes panel and compiled, then
//     undone; bad sizes are explained and change nothing;
//   - Compare's table equals summarizeArtifact() of independently compiled
//     default and stripped builds;
//   - Export for aarch64 writes the files `kiln export` writes, byte for
//     byte, and keeps its settings apart from the working build (still the
//     host); an unwritable folder is explained and changes nothing;
//   - settings come back after closing the window and after a "crash" (a
//     second window on the same model); an unreadable project is set aside.
// With KILN_SCREENSHOT_DIR set, PNGs of the Tune, Compare and Export views
// are written there.
//
//===----------------------------------------------------------------------===//
#include "GuiTestSupport.h"

#include "CompareView.h"
#include "DiagnosticsView.h"
#include "ExportDialog.h"
#include "GraphView.h"
#include "MainWindow.h"
#include "PlanModels.h"
#include "ProjectController.h"
#include "RunPanel.h"
#include "ShapesPanel.h"
#include "TimelineView.h"
#include "TuningView.h"
#include "Workbench.h"

#include "kiln/Artifact.h"
#include "kiln/Npy.h"
#include "kiln/Project.h"
#include "kiln/Recipe.h"
#include "kiln/Run.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDirIterator>
#include <QAbstractItemModelTester>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTableView>
#include <QTableWidget>
#include <QTreeWidget>
#include <QAbstractButton>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest>

#include <cmath>
#include <set>

using namespace kiln::views;
using namespace kiln::workbench;
using namespace kiln::guitest;

namespace {

/// True if the tiler's rule (kiln::checkTileSizes) accepts `sizes` for `d`.
bool tilesValid(const kiln::Dispatch &d, const std::vector<int64_t> &sizes) {
  if (llvm::Error err = kiln::checkTileSizes(d.id, sizes, d.loopRanges, d.loopKinds)) {
    llvm::consumeError(std::move(err));
    return false;
  }
  return true;
}

/// A tile list for `d` other than its current one that the tiler accepts
/// and that changes the workgroup grid (empty if none found).
std::vector<int64_t> otherValidTiles(const kiln::Dispatch &d) {
  for (size_t i = 0; i < d.loopRanges.size(); ++i) {
    if (d.loopKinds[i] != "parallel" || d.loopRanges[i] < 4)
      continue;
    for (int64_t s : {d.loopRanges[i] / 2, int64_t(2), int64_t(1)}) {
      std::vector<int64_t> sizes = d.tileSizes;
      if (sizes[i] == s)
        continue;
      sizes[i] = s;
      if (tilesValid(d, sizes))
        return sizes;
    }
  }
  return {};
}

QString sizesText(const std::vector<int64_t> &v) {
  QStringList p;
  for (int64_t s : v)
    p << QString::number(s);
  return p.join(',');
}

} // namespace

class TuningTest : public QObject {
  Q_OBJECT

  QTemporaryDir tmp;
  std::unique_ptr<MainWindow> w;

  ProjectController *ctl() const { return w->projectController(); }

  QString copyModel(const QString &from, const QString &name) { return copyModelTo(tmp.path(), from, name); }

  /// Opens `path` and waits for its build (and the dynamic-input scan).
  bool open(MainWindow &win, const QString &path) {
    win.openFile(path);
    bool ok = waitForCompile(win);
    if (!QTest::qWaitFor([&] { return !win.projectController()->isDiscovering(); }, 60000))
      return false;
    return ok;
  }

  /// A dynamic model's failed open changes nothing but the diagnostics;
  /// its message's button opens it with the compiler's suggested sizes
  /// (Tune's first step). Waits for that build and the dynamic-input scan.
  bool openWithSuggestedFix(MainWindow &win, const QString &path) {
    win.openFile(path);
    if (waitForCompile(win))
      return false; // it must first fail on its dynamic dimension
    if (win.projectController()->modelPath() == path)
      return false; // Tune must not have switched to it
    QAbstractButton *fix = win.diagnostics()->fixButton(win.diagnostics()->topLevelItemCount() - 1);
    if (!fix)
      return false;
    fix->click();
    return open(win, path);
  }

  /// Waits until code generation after the last change is done.
  static bool waitBuilt(MainWindow &win) {
    return QTest::qWaitFor([&] { return !win.projectController()->isBuildPending(); }, 600000) && win.document() &&
           !win.document()->artifact.empty();
  }

  static bool waitSignal(QSignalSpy &spy, int timeoutMs = 300000) {
    return spy.count() > 0 || spy.wait(timeoutMs);
  }

  /// Types `text` into the tile cell of `row` through the table's editor.
  void typeTiles(int row, const QString &text) {
    QTableView *t = ctl()->tuningView()->table();
    w->dockOf(ctl()->tuningView())->raise();
    QApplication::processEvents();
    QModelIndex idx = t->model()->index(row, TuningModel::Tiles);
    t->setCurrentIndex(idx);
    t->edit(idx);
    QLineEdit *editor = t->findChild<QLineEdit *>();
    QVERIFY(editor);
    editor->selectAll();
    editor->setText(text);
    QTest::keyClick(editor, Qt::Key_Return);
    QApplication::processEvents();
  }

private slots:
  void initTestCase() {
    startTestSettings("kiln-workbench-tuning-test");
    QVERIFY(tmp.isValid());
    for (const QString &m : {QStringLiteral("blazeface"), QStringLiteral("alexa")})
      QVERIFY2(QFile::exists(modelPath(m)), "run the fetch_models fixture first");
    w = std::make_unique<MainWindow>();
    w->resize(1600, 1000);
    w->show();
    QVERIFY(QTest::qWaitForWindowExposed(w.get()));
  }

  void cleanupTestCase() { w.reset(); }

  void editMenuShortcuts() {
    std::set<QString> have;
    for (QAction *menu : w->menuBar()->actions())
      for (QAction *a : menu->menu()->actions())
        for (const QKeySequence &k : a->shortcuts())
          have.insert(k.toString());
    for (const char *k : {"Ctrl+Z", "Ctrl+Shift+Z", "Ctrl+E", "Ctrl+B"})
      QVERIFY2(have.count(k), k);
    QVERIFY(w->dockOf(ctl()->tuningView()));
    QVERIFY(w->dockOf(ctl()->compareView()));
    QVERIFY(w->dockOf(ctl()->runPanel()));
  }

  void modelsPassTester() {
    auto plan = kiln::planModel(modelPath("blazeface").toStdString(), {});
    QVERIFY(bool(plan));
    TuningModel tuning;
    QAbstractItemModelTester t1(&tuning, QAbstractItemModelTester::FailureReportingMode::QtTest);
    tuning.setPlan(*plan, {{0, (*plan)->dispatches[0].tileSizes}}, {1}, true);
    QCOMPARE(tuning.rowCount(), int((*plan)->dispatches.size()));
    QCOMPARE(tuning.data(tuning.index(1, TuningModel::Fusion), Qt::CheckStateRole).toInt(), int(Qt::Unchecked));
    QVERIFY(!tuning.setData(tuning.index(0, TuningModel::Tiles), "x", Qt::EditRole));
    tuning.setPlan(nullptr);
    QCOMPARE(tuning.rowCount(), 0);

    CompareModel compare;
    QAbstractItemModelTester t2(&compare, QAbstractItemModelTester::FailureReportingMode::QtTest);
    kiln::BuildSummary a, b;
    a.sizes.sections = {{"constants", 100}, {"commands", 40}};
    b.sizes.sections = {{"constants", 100}, {"commands", 30}};
    a.commands = 5;
    b.commands = 7;
    compare.setBuilds(a, b);
    QCOMPARE(compare.value("commands", CompareModel::Delta), -10.0); // the section
    QCOMPARE(compare.value("plan.commands", CompareModel::Delta), 2.0); // the command list
    QVERIFY(!compare.rowNames().contains("plan.median_ms")); // not measured
    compare.setBuilds(a, std::nullopt);
    QVERIFY(std::isnan(compare.value("commands", CompareModel::B)));
    compare.setBuilds(std::nullopt, std::nullopt);
    QCOMPARE(compare.rowCount(), 0);
  }

  void tileChangeOnBlazeFace() {
    QString model = copyModel(modelPath("blazeface"), "blazeface.tflite");
    QVERIFY(!model.isEmpty());
    QVERIFY2(open(*w, model), qPrintable(w->diagnostics()->lastMessage()));
    QCOMPARE(ctl()->modelPath(), model);
    QCOMPARE(ctl()->projectPath(), tmp.filePath("blazeface.tflite.kilnproj"));
    auto before = w->document()->plan;
    TuningModel *tm = ctl()->tuningView()->model();
    QCOMPARE(tm->rowCount(), int(before->dispatches.size()));

    // The busiest dispatch with a loop that can be split differently.
    int row = -1;
    std::vector<int64_t> sizes;
    int64_t flops = -1;
    for (size_t i = 0; i < before->dispatches.size(); ++i) {
      const kiln::Dispatch &d = before->dispatches[i];
      auto s = otherValidTiles(d);
      if (!s.empty() && d.flops > flops) {
        flops = d.flops;
        row = int(i);
        sizes = s;
      }
    }
    QVERIFY(row >= 0);
    const kiln::Dispatch d0 = before->dispatches[row];

    // Bad input: explained inline, never applied.
    int undoCount = ctl()->undoStack()->count();
    int replans = ctl()->replanCount();
    kiln::Project unchanged = ctl()->project();
    std::vector<int64_t> tooBig = d0.tileSizes;
    size_t loop = 0;
    while (loop < d0.loopKinds.size() && d0.loopKinds[loop] != "parallel")
      ++loop;
    QVERIFY(loop < d0.loopKinds.size());
    tooBig[loop] = d0.loopRanges[loop] + 1;
    for (const QString &bad : {QStringLiteral("8,abc"), sizesText(tooBig), QStringLiteral("-1")}) {
      typeTiles(row, bad);
      QString why = tm->rejection(row);
      QVERIFY2(!why.isEmpty(), qPrintable(bad));
      QVERIFY2(!why.contains("--"), qPrintable(why)); // the workbench's words, no flag names
      QCOMPARE(tm->data(tm->index(row, TuningModel::Tiles), Qt::ToolTipRole).toString(), why);
      QVERIFY(tm->data(tm->index(row, TuningModel::Tiles), Qt::BackgroundRole).isValid());
      QVERIFY2(ctl()->tuningView()->messageLabel()->text().contains(why), qPrintable(why));
      QCOMPARE(ctl()->undoStack()->count(), undoCount);
      QVERIFY(ctl()->project() == unchanged);
      QVERIFY(!ctl()->isReplanning());
      QCOMPARE(ctl()->replanCount(), replans);
      QVERIFY(!QFile::exists(ctl()->projectPath())); // nothing saved
      QCOMPARE(w->document()->plan, before);
    }

    // A valid size re-plans every view.
    auto expected = kiln::planModel(model.toStdString(), [&] {
      kiln::CompileOptions o;
      o.tileSizes.push_back({d0.id, sizes});
      return o;
    }());
    QVERIFY(bool(expected));
    const kiln::Dispatch &want = (*expected)->dispatches[row];
    QVERIFY(want.workgroupCount != d0.workgroupCount);
    QSignalSpy replanned(ctl(), &ProjectController::replanFinished);
    QElapsedTimer edit;
    edit.start();
    typeTiles(row, sizesText(sizes));
    QVERIFY(waitSignal(replanned));
    double editToViews = edit.nsecsElapsed() / 1e6;
    QCOMPARE(replanned.last().at(0).toBool(), true);
    QVERIFY(ctl()->lastReplanMs() > 0);
    qInfo("BlazeFace tile change: planModel %.0f ms, typed -> every view updated %.0f ms (views: %.1f ms)",
          ctl()->lastReplanMs(), editToViews, w->viewUpdateMs());
    QCOMPARE(ctl()->project().recipe.tiles.at(d0.id), sizes);
    QVERIFY(QFile::exists(ctl()->projectPath())); // autosaved
    auto loaded = kiln::loadProject(ctl()->projectPath().toStdString());
    QVERIFY(bool(loaded));
    QVERIFY(*loaded == ctl()->project());
    auto plan = w->document()->plan;
    QVERIFY(plan != before);
    QCOMPARE(plan->dispatches[row].tileSizes, sizes);
    QCOMPARE(plan->dispatches[row].workgroupCount, want.workgroupCount);
    QCOMPARE(plan->schedule.commands.size(), (*expected)->schedule.commands.size());
    QCOMPARE(plan->memory.arenaBytes, (*expected)->memory.arenaBytes);
    // Plan table, tuning table, graph and timeline show the new plan.
    QCOMPARE(w->dispatchModel()->data(w->dispatchModel()->index(row, DispatchListModel::Tiles), Qt::DisplayRole)
                 .toString(),
             tilesText(plan->dispatches[row]));
    QCOMPARE(tm->data(tm->index(row, TuningModel::Tiles), Qt::DisplayRole).toString(), sizesText(sizes));
    QCOMPARE(tm->data(tm->index(row, TuningModel::Workgroups), Qt::DisplayRole).toString(),
             gridText(plan->dispatches[row]));
    QCOMPARE(w->graphView()->dispatchNodeCount(), int(plan->dispatches.size()));
    bool nodeShowsGrid = false;
    for (const GraphNode &n : w->graphView()->layout().nodes)
      if (n.kind == GraphNode::Dispatch && n.id == d0.id)
        nodeShowsGrid = (n.title + n.lines.join('\n') + n.tooltip).contains(gridText(plan->dispatches[row]));
    QVERIFY(nodeShowsGrid);
    QCOMPARE(int64_t(w->timelineView()->commandItemCount()), countCommands(*plan, false));
    QCOMPARE(int64_t(w->timelineView()->barrierItemCount()), countCommands(*plan, true));

    // Code generation follows; the new artifact still matches TFLite.
    QVERIFY2(waitBuilt(*w), qPrintable(w->diagnostics()->lastMessage()));
    QCOMPARE(w->document()->plan->dispatches[row].tileSizes, sizes);
    QString refDir = QStringLiteral(KILN_TEST_DATA_DIR "/models/blazeface");
    auto input = kiln::readNpyFile((refDir + "/input_0.npy").toStdString());
    QVERIFY(bool(input));
    auto ran = kiln::runArtifact(w->document()->artifact, {*input});
    QVERIFY(bool(ran));
    for (size_t k = 0; k < ran->outputValues.size(); ++k) {
      auto ref = kiln::readNpyFile((refDir + QStringLiteral("/output_%1.npy").arg(k)).toStdString());
      QVERIFY(bool(ref));
      const kiln::NpyArray &got = ran->outputValues[k];
      QCOMPARE(got.numElements(), ref->numElements());
      const float *g = reinterpret_cast<const float *>(got.data.data());
      const float *r = reinterpret_cast<const float *>(ref->data.data());
      for (int64_t e = 0; e < got.numElements(); ++e)
        QVERIFY2(std::fabs(g[e] - r[e]) <= 1e-4 * (1 + std::fabs(r[e])),
                 qPrintable(QStringLiteral("output %1[%2]: %3 vs %4").arg(k).arg(e).arg(g[e]).arg(r[e])));
    }
    // The Run panel says the same (Validate) and measures (Run).
    RunPanel *run = ctl()->runPanel();
    QSignalSpy validated(run, &RunPanel::validateFinished);
    QVERIFY(run->validate(refDir));
    QVERIFY(waitSignal(validated));
    QVERIFY2(validated.last().at(0).toBool(), qPrintable(run->messageLabel()->text()));
    QCOMPARE(run->result().metrics.size(), ran->outputValues.size());
    for (const kiln::ValidationMetrics &m : run->result().metrics) {
      QCOMPARE(m.outsideTolerance, int64_t(0));
      QVERIFY(m.cosine > 0.9999);
      qInfo("validate %s: max |error| %.3g, RMSE %.3g, cosine %.7f", m.name.c_str(), m.maxAbsError, m.rmse, m.cosine);
    }
    QCOMPARE(run->metricsTable()->rowCount(), int(run->result().metrics.size()));
    validated.clear();
    QVERIFY(run->validate(tmp.filePath("no-such-folder")));
    QVERIFY(waitSignal(validated));
    QVERIFY(!validated.last().at(0).toBool());
    QVERIFY(run->messageLabel()->text().contains("no-such-folder"));
    QSignalSpy measuredRun(run, &RunPanel::runFinished);
    QVERIFY(run->run());
    QVERIFY(waitSignal(measuredRun));
    QVERIFY2(measuredRun.last().at(0).toBool(), qPrintable(run->messageLabel()->text()));
    QVERIFY(run->result().latency.medianMs > 0);
    QCOMPARE(run->outputTable()->rowCount(), int(ran->outputValues.size()));
    QVERIFY(w->timelineView()->workgroupItemCount() > 0); // measured times in the timeline
    qInfo("BlazeFace with tiles %s on dispatch %lld: median %.3f ms", qPrintable(sizesText(sizes)),
          (long long)d0.id, run->result().latency.medianMs);
    // With the reference .npy input: the outputs checked above, bit for bit
    // (local-task and local-sync agree exactly).
    run->setInputFiles({refDir + "/input_0.npy"});
    measuredRun.clear();
    QVERIFY(run->run());
    QVERIFY(waitSignal(measuredRun));
    QVERIFY2(measuredRun.last().at(0).toBool(), qPrintable(run->messageLabel()->text()));
    QCOMPARE(run->result().outputs.size(), ran->outputValues.size());
    for (size_t k = 0; k < ran->outputValues.size(); ++k)
      QVERIFY(run->result().outputs[k].data == ran->outputValues[k].data);
    // A missing input file is reported on the panel; nothing runs.
    run->setInputFiles({tmp.filePath("missing.npy")});
    measuredRun.clear();
    QVERIFY(run->run());
    QVERIFY(waitSignal(measuredRun));
    QVERIFY(!measuredRun.last().at(0).toBool());
    QVERIFY(run->messageLabel()->text().contains("missing.npy"));
    run->setInputFiles({});

    // Two changes in a row: the last one's plan is shown (latest wins).
    std::vector<int64_t> other = sizes;
    for (int64_t s : {int64_t(1), int64_t(2), int64_t(4)}) {
      std::vector<int64_t> c = d0.tileSizes;
      for (size_t i = 0; i < c.size(); ++i)
        if (d0.loopKinds[i] == "parallel" && d0.loopRanges[i] >= 4 && c[i] != s) {
          c[i] = s;
          break;
        }
      if (c != sizes && c != d0.tileSizes && tilesValid(d0, c)) {
        other = c;
        break;
      }
    }
    QVERIFY(other != sizes);
    QModelIndex cell = tm->index(row, TuningModel::Tiles);
    QVERIFY(tm->setData(cell, sizesText(d0.tileSizes), Qt::EditRole));
    QVERIFY(tm->setData(cell, sizesText(other), Qt::EditRole));
    QVERIFY(QTest::qWaitFor([&] { return !ctl()->isReplanning(); }, 120000));
    QApplication::processEvents();
    QCOMPARE(w->document()->plan->dispatches[row].tileSizes, other);
    QCOMPARE(ctl()->project().recipe.tiles.at(d0.id), other);
    ctl()->undoAction()->trigger();
    ctl()->undoAction()->trigger();
    QCOMPARE(ctl()->project().recipe.tiles.at(d0.id), sizes);
    QVERIFY(QTest::qWaitFor([&] { return !ctl()->isReplanning(); }, 120000));
    QApplication::processEvents();
    QCOMPARE(w->document()->plan->dispatches[row].tileSizes, sizes);

    // Undo and redo (Edit menu actions, Ctrl+Z / Ctrl+Shift+Z).
    QCOMPARE(ctl()->undoAction()->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_Z));
    replanned.clear();
    ctl()->undoAction()->trigger();
    QVERIFY(waitSignal(replanned));
    QVERIFY(ctl()->project().recipe.tiles.empty());
    QCOMPARE(w->document()->plan->dispatches[row].tileSizes, d0.tileSizes);
    QCOMPARE(w->document()->plan->dispatches[row].workgroupCount, d0.workgroupCount);
    QVERIFY(kiln::loadProject(ctl()->projectPath().toStdString())->recipe.tiles.empty());
    replanned.clear();
    ctl()->redoAction()->trigger();
    QVERIFY(waitSignal(replanned));
    QCOMPARE(w->document()->plan->dispatches[row].tileSizes, sizes);
    replanned.clear();
    ctl()->undoAction()->trigger();
    QVERIFY(waitSignal(replanned));
    QCOMPARE(w->document()->plan->dispatches[row].tileSizes, d0.tileSizes);
    QVERIFY(waitBuilt(*w));
  }

  void fixDynamicDimension() {
    QString model = copyModel(badModelPath("dynamic_batch"), "dynamic_batch.tflite");
    QFile::remove(tmp.filePath("dynamic_batch.tflite.kilnproj"));
    // Dynamic: does not compile as is; the message's button fixes batch 1.
    QVERIFY2(openWithSuggestedFix(*w, model), qPrintable(w->diagnostics()->lastMessage()));
    QCOMPARE(ctl()->project().recipe.fixedShapes.at("input"), (std::vector<int64_t>{1, 8}));
    QCOMPARE(int(ctl()->dynamicInputs().size()), 1);
    QCOMPARE(ctl()->dynamicInputs()[0].signature, (std::vector<int64_t>{-1, 8}));
    ShapesPanel *shapes = ctl()->tuningView()->shapes();
    QVERIFY(shapes->isVisibleTo(ctl()->tuningView()));
    QLineEdit *batch = shapes->edit(0, 0);
    QVERIFY(batch && !batch->isReadOnly());
    QVERIFY(shapes->edit(0, 1)->isReadOnly());
    QCOMPARE(batch->text(), QStringLiteral("1"));
    QCOMPARE(ctl()->undoStack()->count(), 1);

    int undoCount = ctl()->undoStack()->count();
    for (const QString &bad : {QStringLiteral("-2"), QStringLiteral("0"), QStringLiteral("two")}) {
      batch->setText(bad);
      QTest::keyClick(batch, Qt::Key_Return);
      QVERIFY2(!shapes->messageLabel()->text().isEmpty(), qPrintable(bad));
      QVERIFY(shapes->messageLabel()->text().contains(bad));
      QVERIFY(!batch->toolTip().isEmpty());
      QCOMPARE(ctl()->undoStack()->count(), undoCount);
      QCOMPARE(ctl()->project().recipe.fixedShapes.at("input"), (std::vector<int64_t>{1, 8}));
      QVERIFY(!ctl()->isReplanning());
      QCOMPARE(kiln::loadProject(ctl()->projectPath().toStdString())->recipe.fixedShapes.at("input"),
               (std::vector<int64_t>{1, 8})); // the saved fix, untouched
    }

    QSignalSpy replanned(ctl(), &ProjectController::replanFinished);
    batch->setText("3");
    QTest::keyClick(batch, Qt::Key_Return);
    QVERIFY(waitSignal(replanned));
    QVERIFY(replanned.last().at(0).toBool());
    QCOMPARE(ctl()->project().recipe.fixedShapes.at("input"), (std::vector<int64_t>{3, 8}));
    QVERIFY2(waitBuilt(*w), qPrintable(w->diagnostics()->lastMessage()));
    QCOMPARE(w->document()->path, model);
    auto desc = kiln::describeArtifact(w->document()->artifact);
    QVERIFY(bool(desc));
    QCOMPARE(desc->inputs[0].shape, (std::vector<int64_t>{3, 8}));
    // `kiln compile --project=` builds the same thing.
    QProcess cli;
    cli.start(KILN_BINARY_PATH, {"compile", "--project=" + ctl()->projectPath(), "-o", tmp.filePath("dyn.kiln")});
    QVERIFY(cli.waitForFinished(120000));
    QCOMPARE(cli.exitCode(), 0);
    QVERIFY(readAll(tmp.filePath("dyn.kiln")) ==
            QByteArray(reinterpret_cast<const char *>(w->document()->artifact.data()),
                       qsizetype(w->document()->artifact.size())));

    // Undo with Ctrl+Z: batch 1 (the Diagnostics fix), then dynamic again
    // (the re-plan says so).
    replanned.clear();
    w->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(w.get()));
    w->setFocus();
    QTest::keyClick(w.get(), Qt::Key_Z, Qt::ControlModifier);
    QVERIFY(waitSignal(replanned));
    QVERIFY(replanned.last().at(0).toBool());
    QCOMPARE(shapes->edit(0, 0)->text(), QStringLiteral("1"));
    replanned.clear();
    QTest::keyClick(w.get(), Qt::Key_Z, Qt::ControlModifier);
    QVERIFY(waitSignal(replanned));
    QVERIFY(!replanned.last().at(0).toBool());
    QVERIFY(ctl()->project().recipe.fixedShapes.empty());
    QVERIFY(ctl()->tuningView()->messageLabel()->text().contains("dynamic"));
    QVERIFY(shapes->edit(0, 0)->text().isEmpty());
    // Ctrl+Shift+Z redoes both.
    replanned.clear();
    QTest::keyClick(w.get(), Qt::Key_Z, Qt::ControlModifier | Qt::ShiftModifier);
    QVERIFY(waitSignal(replanned));
    QVERIFY(replanned.last().at(0).toBool());
    replanned.clear();
    QTest::keyClick(w.get(), Qt::Key_Z, Qt::ControlModifier | Qt::ShiftModifier);
    QVERIFY(waitSignal(replanned));
    QVERIFY(replanned.last().at(0).toBool());
    QCOMPARE(ctl()->project().recipe.fixedShapes.at("input"), (std::vector<int64_t>{3, 8}));
    QCOMPARE(shapes->edit(0, 0)->text(), QStringLiteral("3"));
    QVERIFY(waitBuilt(*w));
  }

  void compareDefaultAndStripped() {
    QString model = copyModel(modelPath("alexa"), "alexa.tflite");
    QVERIFY2(open(*w, model), qPrintable(w->diagnostics()->lastMessage()));
    QSignalSpy compared(ctl(), &ProjectController::compareFinished);
    ctl()->compareDefaultVsStripped();
    QVERIFY(waitSignal(compared));
    QVERIFY(compared.last().at(0).toBool());

    kiln::CompileOptions d, s;
    QVERIFY(!kiln::applyProfile("stripped", s));
    auto da = kiln::compileArtifact(model.toStdString(), d);
    auto sa = kiln::compileArtifact(model.toStdString(), s);
    QVERIFY(da && sa);
    auto a = kiln::summarizeArtifact(*da, "a");
    auto b = kiln::summarizeArtifact(*sa, "b");
    QVERIFY(a && b);
    CompareModel *cm = ctl()->compareView()->model();
    auto check = [&](const QString &row, double va, double vb) {
      // Read from the table the view shows.
      QAbstractItemModel *t = ctl()->compareView()->table()->model();
      int r = cm->rowNames().indexOf(row);
      QVERIFY2(r >= 0, qPrintable(row));
      QCOMPARE(t->data(t->index(r, CompareModel::A), Qt::EditRole).toDouble(), va);
      QCOMPARE(t->data(t->index(r, CompareModel::B), Qt::EditRole).toDouble(), vb);
      QCOMPARE(t->data(t->index(r, CompareModel::Delta), Qt::EditRole).toDouble(), vb - va);
    };
    for (size_t i = 0; i < a->sizes.sections.size(); ++i)
      check(QString::fromStdString(a->sizes.sections[i].first), a->sizes.sections[i].second,
            b->sizes.sections[i].second);
    check("(overhead)", a->sizes.overhead, b->sizes.overhead);
    check("total", a->sizes.fileBytes, b->sizes.fileBytes);
    check("plan.arena_bytes", a->arenaBytes, b->arenaBytes);
    check("plan.lower_bound_bytes", a->lowerBoundBytes, b->lowerBoundBytes);
    check("plan.dispatches", a->dispatches, b->dispatches);
    check("plan.commands", a->commands, b->commands);
    check("plan.waves", a->waves, b->waves);
    QVERIFY(cm->value("reflection", CompareModel::Delta) < 0); // stripped drops it
    QVERIFY(cm->value("plan.median_ms", CompareModel::A) > 0);
    QVERIFY(cm->value("plan.median_ms", CompareModel::B) > 0);
    qInfo("alexa default vs stripped: %lld -> %lld bytes, median %.3f -> %.3f ms", (long long)a->sizes.fileBytes,
          (long long)b->sizes.fileBytes, cm->value("plan.median_ms", CompareModel::A), cm->value("plan.median_ms", CompareModel::B));
    // The same text `kiln diff` prints.
    QCOMPARE(ctl()->compareView()->diffText().isEmpty(), false);

    // Before vs after a change (fusion off everywhere).
    compared.clear();
    ctl()->pinCurrent();
    QVERIFY(waitSignal(compared));
    QCheckBox *fusion = ctl()->tuningView()->fusionBox();
    QVERIFY(fusion->isChecked());
    fusion->click();
    QVERIFY(!ctl()->project().recipe.fusion);
    QVERIFY(waitBuilt(*w));
    compared.clear();
    ctl()->compareWithCurrent();
    QVERIFY(waitSignal(compared));
    kiln::CompileOptions nf;
    nf.fusion = false;
    auto nfPlan = kiln::planModel(model.toStdString(), nf);
    QVERIFY(bool(nfPlan));
    QCOMPARE(cm->value("plan.dispatches", CompareModel::A), double(a->dispatches));
    QCOMPARE(cm->value("plan.dispatches", CompareModel::B), double((*nfPlan)->dispatches.size()));
    QVERIFY(cm->value("plan.dispatches", CompareModel::Delta) > 0);
    QLabel *caption = ctl()->compareView()->caption();
    QVERIFY2(!caption->text().contains("earlier settings"), qPrintable(caption->text()));
    ctl()->undoAction()->trigger();
    QVERIFY(ctl()->project().recipe.fusion);
    QVERIFY(waitBuilt(*w));
    // B was built without fusion, which is no longer the setting: marked.
    // A, pinned as "before", is earlier by design and not marked.
    QVERIFY2(caption->text().contains("B</b> = after") &&
                 caption->text().contains("(earlier settings)"),
             qPrintable(caption->text()));
    QCOMPARE(caption->text().count("earlier settings"), 1);
  }

  void exportMatchesCli() {
    QString model = tmp.filePath("alexa.tflite");
    QCOMPARE(ctl()->modelPath(), model);
    ExportDialog *dialog = ctl()->openExportDialog();
    QVERIFY(dialog);
    dialog->setTarget("aarch64-linux-gnu");
    QCOMPARE(dialog->folderEdit()->text(), tmp.filePath("alexa-tflite-aarch64-linux-gnu-default"));

    // An unwritable folder: explained, nothing else changes.
    QFile file(tmp.filePath("plain-file"));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.close();
    kiln::Project before = ctl()->project();
    int undoCount = ctl()->undoStack()->count();
    QSignalSpy exported(dialog, &ExportDialog::exported);
    dialog->folderEdit()->setText(tmp.filePath("plain-file/bundle"));
    dialog->exportButton()->click();
    QVERIFY(waitSignal(exported));
    QVERIFY(!exported.last().at(0).toBool());
    QVERIFY(dialog->messageLabel()->text().contains("plain-file"));
    QVERIFY(ctl()->project() == before);
    QCOMPARE(ctl()->undoStack()->count(), undoCount);
    QVERIFY(!dialog->openFolderButton()->isEnabled());

    // Flash and RAM before writing.
    QString dir = tmp.filePath("gui-export");
    dialog->folderEdit()->setText(dir);
    QSignalSpy footprint(dialog, &ExportDialog::footprintReady);
    dialog->computeButton()->click();
    QVERIFY(waitSignal(footprint));
    QVERIFY2(footprint.last().at(0).toBool(), qPrintable(dialog->messageLabel()->text()));
    QVERIFY(!QFileInfo::exists(dir));
    QVERIFY(dialog->bundle());
    QVERIFY(dialog->footprintLabel()->text().contains(QString::number(dialog->bundle()->footprint.flashBytes)));
    QVERIFY(dialog->footprintLabel()->text().contains(QString::number(dialog->bundle()->footprint.ramBytes)));
    qInfo("alexa aarch64 bundle: flash %lld, RAM %lld bytes", (long long)dialog->bundle()->footprint.flashBytes,
          (long long)dialog->bundle()->footprint.ramBytes);

    exported.clear();
    dialog->exportButton()->click();
    QVERIFY(waitSignal(exported));
    QVERIFY2(exported.last().at(0).toBool(), qPrintable(dialog->messageLabel()->text()));
    QVERIFY(dialog->openFolderButton()->isEnabled());
    // The export's settings, apart from the working build (still the host).
    QCOMPARE(ctl()->project().exportSettings.target, std::string("aarch64-linux-gnu"));
    QCOMPARE(ctl()->project().recipe.target, std::string("host"));
    QCOMPARE(ctl()->project().exportDir, std::string("gui-export"));

    // `kiln export` with the same options, and with --project=: same bytes.
    QString cliDir = tmp.filePath("cli-export"), projDir = tmp.filePath("cli-project-export");
    QProcess cli;
    cli.start(KILN_BINARY_PATH, {"export", model, "--target=aarch64-linux-gnu", "-o", cliDir});
    QVERIFY(cli.waitForFinished(300000));
    QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
    cli.start(KILN_BINARY_PATH, {"export", "--project=" + ctl()->projectPath(), "-o", projDir});
    QVERIFY(cli.waitForFinished(300000));
    QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
    auto gui = folderFiles(dir);
    QVERIFY(gui.size() >= 3);
    QVERIFY(gui.count("manifest.json") && gui.count("report.md") && gui.count("alexa.kiln"));
    for (const QString &other : {cliDir, projDir}) {
      auto files = folderFiles(other);
      QCOMPARE(files.size(), gui.size());
      for (const auto &[name, bytes] : gui) {
        QVERIFY2(files.count(name), qPrintable(name));
        QVERIFY2(files[name] == bytes, qPrintable(other + "/" + name + " differs"));
      }
    }
    dialog->close();

    // A stripped C module for the Cortex-M4F: the same files as the CLI's.
    dialog = ctl()->openExportDialog();
    QCOMPARE(dialog->chosenTarget(), std::string("aarch64-linux-gnu")); // from the project
    dialog->setTarget("thumbv7em-none-eabihf");
    dialog->formatBox()->setCurrentIndex(1);
    dialog->profileBox()->setCurrentText("stripped");
    QString cDir = tmp.filePath("gui-export-c");
    dialog->folderEdit()->setText(cDir);
    QSignalSpy exportedC(dialog, &ExportDialog::exported);
    dialog->exportButton()->click();
    QVERIFY(waitSignal(exportedC));
    QVERIFY2(exportedC.last().at(0).toBool(), qPrintable(dialog->messageLabel()->text()));
    QVERIFY(ctl()->project().exportSettings.format == kiln::OutputFormat::CModule);
    QCOMPARE(ctl()->project().recipe.format, kiln::OutputFormat::Artifact);
    QString cliC = tmp.filePath("cli-export-c");
    cli.start(KILN_BINARY_PATH, {"export", model, "--target=thumbv7em-none-eabihf", "--profile=stripped",
                                 "--output-format=c-module", "-o", cliC});
    QVERIFY(cli.waitForFinished(300000));
    QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
    auto guiC = folderFiles(cDir), cliFiles = folderFiles(cliC);
    QVERIFY(guiC.count("alexa.h") && guiC.count("alexa.c") && guiC.count("alexa_kernels.o"));
    QCOMPARE(guiC.size(), cliFiles.size());
    for (const auto &[name, bytes] : guiC)
      QVERIFY2(cliFiles[name] == bytes, qPrintable(name + " differs from kiln export's"));
    dialog->close();

    // The two export-settings steps undone; the working build never left
    // the host.
    ctl()->undoAction()->trigger();
    ctl()->undoAction()->trigger();
    QVERIFY(ctl()->project().exportSettings == kiln::ExportSettings());
    QCOMPARE(ctl()->project().recipe.target, std::string("host"));
    QCOMPARE(ctl()->project().recipe.format, kiln::OutputFormat::Artifact);
    QVERIFY(waitBuilt(*w));
  }

  void bareMetalTargetPlans() {
    QString model = tmp.filePath("alexa.tflite");
    QVERIFY(open(*w, model));
    QCOMPARE(ctl()->project().recipe.target, std::string("host"));
    QSignalSpy replanned(ctl(), &ProjectController::replanFinished);
    QVERIFY(chooseTarget(ctl()->tuningView()->targetBox(), "thumbv7em-none-eabihf"));
    QVERIFY(waitSignal(replanned));
    QVERIFY2(replanned.last().at(0).toBool(), qPrintable(ctl()->tuningView()->messageLabel()->text()));
    QVERIFY(!ctl()->isBuildPending()); // no .kiln for bare metal
    QVERIFY(ctl()->tuningView()->messageLabel()->text().contains("Export"));
    kiln::CompileOptions o;
    QVERIFY(!kiln::applyTarget("thumbv7em-none-eabihf", o.target));
    o.format = kiln::OutputFormat::CModule;
    auto plan = kiln::planModel(model.toStdString(), o);
    QVERIFY(bool(plan));
    QCOMPARE(w->document()->plan->dispatches.size(), (*plan)->dispatches.size());
    QCOMPARE(w->document()->plan->memory.arenaBytes, (*plan)->memory.arenaBytes);
    // Reopened with that target: the host build is shown, then the plan.
    replanned.clear();
    w->openFile(model);
    QVERIFY(waitForCompile(*w));
    QVERIFY(waitSignal(replanned));
    QVERIFY(replanned.last().at(0).toBool());
    QVERIFY(w->document()->artifact.empty());
    QCOMPARE(ctl()->project().recipe.target, std::string("thumbv7em-none-eabihf"));
    ctl()->undoAction()->trigger(); // back to the host: built again
    QCOMPARE(ctl()->project().recipe.target, std::string("host"));
    QCOMPARE(ctl()->tuningView()->targetBox()->currentData().toString(), QStringLiteral("host"));
    QVERIFY(waitBuilt(*w));
  }

  void settingsSurviveCloseAndCrash() {
    QString model = copyModel(modelPath("alexa"), "persist.tflite");
    kiln::Project wanted;
    {
      MainWindow first;
      first.show();
      QVERIFY(open(first, model));
      ProjectController *c = first.projectController();
      c->setBuildDelay(60000); // settings only
      const kiln::Dispatch d0 = first.document()->plan->dispatches[0];
      auto tiles = otherValidTiles(d0);
      QSignalSpy replanned(c, &ProjectController::replanFinished);
      if (!tiles.empty()) {
        QModelIndex idx = c->tuningView()->model()->index(0, TuningModel::Tiles);
        QVERIFY(c->tuningView()->model()->setData(idx, sizesText(tiles), Qt::EditRole));
      }
      c->tuningView()->profileBox()->setCurrentText("stripped");
      c->tuningView()->formatBox()->setCurrentText("c-module");
      QModelIndex fusion = c->tuningView()->model()->index(int(first.document()->plan->dispatches.size()) - 1,
                                                          TuningModel::Fusion);
      QVERIFY(c->tuningView()->model()->setData(fusion, Qt::Unchecked, Qt::CheckStateRole));
      QVERIFY(QTest::qWaitFor([&] { return !c->isReplanning(); }, 60000));
      wanted = c->project();
      QCOMPARE(wanted.recipe.profile, std::string("stripped"));
      QCOMPARE(wanted.recipe.format, kiln::OutputFormat::CModule);
      QCOMPARE(int(wanted.recipe.noFusion.size()), 1);
      QVERIFY(tiles.empty() || wanted.recipe.tiles.at(d0.id) == tiles);
      first.close();
    }
    // Reopened: every setting is back.
    {
      MainWindow second;
      second.show();
      QVERIFY(open(second, model));
      ProjectController *c = second.projectController();
      QVERIFY(c->project() == wanted);
      QCOMPARE(c->tuningView()->profileBox()->currentText(), QStringLiteral("stripped"));
      QCOMPARE(c->tuningView()->formatBox()->currentText(), QStringLiteral("c-module"));
      QCOMPARE(second.document()->options.noFusion, wanted.recipe.noFusion);
      // A further change, then a "crash": the window is never closed.
      c->setBuildDelay(60000);
      QVERIFY(chooseTarget(c->tuningView()->targetBox(), "riscv64-linux-gnu"));
      wanted = c->project();
      QCOMPARE(wanted.recipe.target, std::string("riscv64-linux-gnu"));
      MainWindow third;
      third.show();
      third.openFile(model);
      waitForCompile(third); // the workbench builds for riscv64 (whatever the outcome)
      QVERIFY(third.projectController()->project() == wanted);
      QCOMPARE(third.projectController()->tuningView()->targetBox()->currentData().toString(),
               QStringLiteral("riscv64-linux-gnu"));
    }
  }

  void fixedShapeSurvivesReopening() {
    QString model = copyModel(badModelPath("dynamic_batch"), "persist_dynamic.tflite");
    {
      MainWindow first;
      first.show();
      QVERIFY2(openWithSuggestedFix(first, model), qPrintable(first.diagnostics()->lastMessage()));
      ProjectController *c = first.projectController();
      QLineEdit *batch = c->tuningView()->shapes()->edit(0, 0);
      QVERIFY(batch);
      batch->setText("5");
      QTest::keyClick(batch, Qt::Key_Return);
      QCOMPARE(c->project().recipe.fixedShapes.at("input"), (std::vector<int64_t>{5, 8}));
      first.close();
    }
    MainWindow again;
    again.show();
    QVERIFY2(open(again, model), qPrintable(again.diagnostics()->lastMessage())); // compiles at once
    QCOMPARE(again.projectController()->project().recipe.fixedShapes.at("input"), (std::vector<int64_t>{5, 8}));
    QCOMPARE(again.projectController()->tuningView()->shapes()->edit(0, 0)->text(), QStringLiteral("5"));
    auto desc = kiln::describeArtifact(again.document()->artifact);
    QVERIFY(bool(desc));
    QCOMPARE(desc->inputs[0].shape, (std::vector<int64_t>{5, 8}));
  }

  void unreadableProjectIsSetAside() {
    QString model = copyModel(modelPath("alexa"), "broken.tflite");
    QString proj = tmp.filePath("broken.tflite.kilnproj");
    QFile f(proj);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("{\"kiln_project\": 1, \"model\": \"broken.tflite\", \"tiles\": oops");
    f.close();
    QByteArray original = readAll(proj);
    int errors = w->diagnostics()->count(DiagnosticsView::Severity::Error);
    QVERIFY(open(*w, model));
    QCOMPARE(w->diagnostics()->count(DiagnosticsView::Severity::Error), errors + 1);
    bool reported = false;
    for (int i = 0; i < w->diagnostics()->topLevelItemCount(); ++i) {
      QTreeWidgetItem *item = w->diagnostics()->topLevelItem(i);
      QString all;
      for (int c = 0; c < item->columnCount(); ++c)
        all += item->text(c) + " ";
      reported |= all.contains("broken.tflite.kilnproj") &&
                  all.contains("broken.tflite.kilnproj.unreadable");
    }
    QVERIFY(reported);
    QVERIFY(!QFile::exists(proj));
    QCOMPARE(readAll(proj + ".unreadable"), original);
    QVERIFY(ctl()->project().recipe.tiles.empty());
    // A change saves a fresh project; the unreadable one stays aside.
    ctl()->tuningView()->profileBox()->setCurrentText("stripped");
    QVERIFY(QFile::exists(proj));
    QCOMPARE(kiln::loadProject(proj.toStdString())->recipe.profile, std::string("stripped"));
    QCOMPARE(readAll(proj + ".unreadable"), original);
    // Reset Tuning drops tiles and fusion choices in one undoable step.
    const kiln::Dispatch d0 = w->document()->plan->dispatches[0];
    auto tiles = otherValidTiles(d0);
    if (!tiles.empty())
      QVERIFY(ctl()->tuningView()->model()->setData(ctl()->tuningView()->model()->index(0, TuningModel::Tiles),
                                                    sizesText(tiles), Qt::EditRole));
    ctl()->tuningView()->fusionBox()->click();
    QVERIFY(!ctl()->project().recipe.fusion);
    ctl()->tuningView()->resetButton()->click();
    QVERIFY(ctl()->project().recipe.fusion);
    QVERIFY(ctl()->project().recipe.tiles.empty());
    QCOMPARE(ctl()->project().recipe.profile, std::string("stripped")); // untouched
    ctl()->undoAction()->trigger();
    QVERIFY(!ctl()->project().recipe.fusion);
    QCOMPARE(ctl()->project().recipe.tiles.size(), tiles.empty() ? size_t(0) : size_t(1));
    ctl()->redoAction()->trigger();
    QVERIFY(ctl()->project().recipe.fusion);
    QVERIFY(waitBuilt(*w));
  }

  void screenshots() {
    QString dir = qEnvironmentVariable("KILN_SCREENSHOT_DIR");
    if (dir.isEmpty())
      QSKIP("set KILN_SCREENSHOT_DIR to write the Tune, Compare and Export screenshots");
    QDir().mkpath(dir);
    QString model = tmp.filePath("blazeface.tflite");
    if (!QFile::exists(model))
      model = copyModel(modelPath("blazeface"), "blazeface.tflite");
    QVERIFY(open(*w, model));
    auto plan = w->document()->plan;
    // One override and one refused edit, so the shot shows both.
    TuningModel *tm = ctl()->tuningView()->model();
    int row = 0;
    for (size_t i = 0; i < plan->dispatches.size(); ++i)
      if (!otherValidTiles(plan->dispatches[i]).empty()) {
        row = int(i);
        break;
      }
    QSignalSpy replanned(ctl(), &ProjectController::replanFinished);
    typeTiles(row, sizesText(otherValidTiles(plan->dispatches[row])));
    QVERIFY(waitSignal(replanned));
    QVERIFY(waitBuilt(*w));
    typeTiles(row + 1, "4,abc");
    ctl()->tuningView()->table()->selectionModel()->clear();
    auto shoot = [&](QWidget *view, const QString &name, QSize size) {
      QDockWidget *dock = w->dockOf(view);
      dock->setFloating(true);
      dock->resize(size);
      dock->show();
      dock->raise();
      QApplication::processEvents();
      QVERIFY(view->grab().save(dir + "/" + name + ".png"));
      dock->setFloating(false);
    };
    shoot(ctl()->tuningView(), "tuning", QSize(1100, 700));
    QSignalSpy compared(ctl(), &ProjectController::compareFinished);
    ctl()->compareDefaultVsStripped();
    QVERIFY(waitSignal(compared));
    shoot(ctl()->compareView(), "compare", QSize(900, 560));
    ExportDialog *dialog = ctl()->openExportDialog();
    dialog->setTarget("thumbv7em-none-eabihf");
    dialog->formatBox()->setCurrentIndex(1);
    dialog->profileBox()->setCurrentText("stripped");
    dialog->ramBudgetBox()->setValue(64); // BlazeFace's module does not fit: the warning shows
    dialog->flashBudgetBox()->setValue(1024);
    QSignalSpy footprint(dialog, &ExportDialog::footprintReady);
    dialog->computeFootprint();
    QVERIFY(waitSignal(footprint));
    dialog->resize(900, dialog->sizeHint().height());
    QApplication::processEvents();
    QVERIFY(dialog->grab().save(dir + "/export.png"));
    dialog->close();
    ctl()->undoAction()->trigger();

    // The embedding model's dynamic batch, fixed to 2 in the shapes panel.
    QString embedding = copyModel(modelPath("embedding"), "embedding.tflite");
    QFile::remove(tmp.filePath("embedding.tflite.kilnproj"));
    QVERIFY(openWithSuggestedFix(*w, embedding));
    QVERIFY(!ctl()->dynamicInputs().empty());
    QLineEdit *batch = ctl()->tuningView()->shapes()->edit(0, 0);
    batch->setText("2");
    QTest::keyClick(batch, Qt::Key_Return);
    QVERIFY(waitBuilt(*w));
    QCOMPARE(w->document()->path, embedding);
    shoot(ctl()->tuningView(), "tuning-dynamic", QSize(1100, 420));
  }
};

QTEST_MAIN(TuningTest)
#include "TuningTest.moc"
