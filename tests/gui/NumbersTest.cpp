//===- NumbersTest.cpp - Numbers that agree, and the polish around them ---===//
//
// Issue 14, items 5 and 9, on the real MainWindow (offscreen) over a copy
// of the alexa model:
//   - Build > Run on Host (Ctrl+R) fills the Run dock as its button does;
//     the dock, the Diagnostics note, the timeline and Compare all show the
//     one kiln::RunResult::latency of that run (same median, device,
//     threads and runs), labelled with kiln::latencyText; the status bar
//     does not stay on "Running on the host...";
//   - a build the Run dock did not measure is measured by Compare with the
//     Run dock's options (kiln::workbench::hostRunOptions);
//   - CompareModel colours a latency difference only outside the measured
//     spread (hand-made summaries);
//   - File > Open Recent tells two same-named files apart by their folder;
//   - the Memory view's axis is in KiB/MiB; the Sizes view hides the
//     stripped columns without a stripped build; operators are written
//     "CONV_2D #2" in every view; the Inspector wraps long values;
//   - Esc cancels Run on Host (issue 30's review: a long run could not be
//     stopped, and Quit waited for it).
//
//===----------------------------------------------------------------------===//
#include "GuiTestSupport.h"

#include "CompareView.h"
#include "DiagnosticsView.h"
#include "GraphLayout.h"
#include "HostRunJob.h"
#include "InspectorView.h"
#include "MainWindow.h"
#include "MemoryView.h"
#include "PlanModels.h"
#include "ProjectController.h"
#include "RunPanel.h"
#include "SizesView.h"
#include "TimelineView.h"
#include "Workbench.h"

#include "kiln/Artifact.h"
#include "kiln/Run.h"

#include <QAction>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTreeWidget>
#include <QTreeWidgetItemIterator>
#include <QtTest>

#include <qcustomplot.h>

#include <cmath>
#include <set>

using namespace kiln::views;
using namespace kiln::workbench;
using namespace kiln::guitest;

class NumbersTest : public QObject {
  Q_OBJECT

  QTemporaryDir tmp;
  std::unique_ptr<MainWindow> w;

  ProjectController *ctl() const { return w->projectController(); }

  static bool waitSignal(QSignalSpy &spy, int timeoutMs = 300000) { return spy.count() > 0 || spy.wait(timeoutMs); }

  /// The Build menu's action with shortcut `key`.
  QAction *actionWithShortcut(const QKeySequence &key) const {
    for (QAction *menu : w->menuBar()->actions())
      if (menu->menu())
        for (QAction *a : menu->menu()->actions())
          if (a->shortcuts().contains(key))
            return a;
    return nullptr;
  }

  /// A build summary measured as `median` (min..max) ms.
  static kiln::BuildSummary timed(double median, double min, double max) {
    kiln::BuildSummary s;
    s.latency.medianMs = median;
    s.latency.minMs = min;
    s.latency.maxMs = max;
    s.latency.runs = 20;
    return s;
  }

private slots:
  void initTestCase() {
    startTestSettings("kiln-workbench-numbers-test");
    QVERIFY(tmp.isValid());
    QVERIFY2(QFile::exists(modelPath("alexa")), "run the fetch_models fixture first");
    QVERIFY(QFile::copy(modelPath("alexa"), tmp.filePath("alexa.tflite")));
    w = std::make_unique<MainWindow>();
    w->resize(1600, 1000);
    w->show();
    QVERIFY(QTest::qWaitForWindowExposed(w.get()));
    w->openFile(tmp.filePath("alexa.tflite"));
    QVERIFY(waitForCompile(*w));
    QVERIFY(QTest::qWaitFor([&] { return !ctl()->isBuildPending() && !ctl()->isDiscovering(); }, 600000));
    QVERIFY(w->document() && !w->document()->artifact.empty());
  }

  void cleanupTestCase() { w.reset(); }

  // Ctrl+R is the Run dock's run: one measurement, shown alike by the
  // dock, Diagnostics, the timeline and Compare.
  void runOnHostFillsRunDockAndCompareAgrees() {
    RunPanel *run = ctl()->runPanel();
    QAction *ctrlR = actionWithShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    QVERIFY(ctrlR);
    QSignalSpy dockFinished(run, &RunPanel::runFinished);
    QSignalSpy windowFinished(w.get(), &MainWindow::runFinished);
    ctrlR->trigger();
    QVERIFY(w->isRunning());
    QCOMPARE(w->statusText(), tr("Running on the host\u2026"));
    QVERIFY(waitSignal(windowFinished));
    QCOMPARE(dockFinished.count(), 1);
    QVERIFY2(windowFinished.last().at(0).toBool(), qPrintable(run->messageLabel()->text()));
    QVERIFY(!w->isRunning());
    QVERIFY2(!w->statusText().contains(QStringLiteral("Running")), qPrintable(w->statusText()));

    // The dock's result: the Run dock's options, 20 timed runs.
    const RunPanelResult &r = run->result();
    const kiln::RunOptions options = hostRunOptions();
    QVERIFY(r.ok);
    QCOMPARE(r.latency.device, options.device);
    QCOMPARE(r.latency.threads, options.threads);
    QCOMPARE(r.latency.runs, options.benchmarkRuns);
    QCOMPARE(r.measured.timesMs.size(), size_t(options.benchmarkRuns));
    QCOMPARE(r.latency.medianMs, kiln::medianOf(r.measured.timesMs));
    QVERIFY(!r.measured.events.empty()); // traced, in its own run
    QVERIFY(run->resultArtifact() == w->document()->artifact);
    QCOMPARE(int(r.outputs.size()), run->outputTable()->rowCount());

    // Every label says device, threads and runs, in one format.
    const QString text = QString::fromStdString(kiln::latencyText(r.latency));
    QVERIFY2(text.contains(QStringLiteral("%1 %2 thread").arg(QString::fromStdString(options.device)).arg(options.threads)),
             qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("%1 runs").arg(options.benchmarkRuns)), qPrintable(text));
    QVERIFY2(run->latencyLabel()->text().contains(text), qPrintable(run->latencyLabel()->text()));
    QVERIFY2(w->diagnostics()->lastMessage().contains(text), qPrintable(w->diagnostics()->lastMessage()));
    QVERIFY2(w->statusText().contains(text), qPrintable(w->statusText()));

    // The timeline and measuredRun() hold the same times, and say so.
    QVERIFY(w->measuredRun());
    QVERIFY(w->measuredRun()->timesMs == r.measured.timesMs);
    QStringList timeline;
    for (QLabel *l : w->timelineView()->findChildren<QLabel *>())
      timeline << l->text();
    QVERIFY2(timeline.join('\n').contains(text), qPrintable(timeline.join('\n')));

    // Compare the same build: the same measurement, not a second one.
    QSignalSpy compared(ctl(), &ProjectController::compareFinished);
    ctl()->pinCurrent();
    QVERIFY(waitSignal(compared));
    QVERIFY(compared.last().at(0).toBool());
    CompareModel *cm = ctl()->compareView()->model();
    QCOMPARE(cm->value("plan.median_ms", CompareModel::A), r.latency.medianMs);
    QVERIFY2(ctl()->compareView()->caption()->text().contains(text.toHtmlEscaped()),
             qPrintable(ctl()->compareView()->caption()->text()));
    compared.clear();
    ctl()->compareWithCurrent();
    QVERIFY(waitSignal(compared));
    QCOMPARE(cm->value("plan.median_ms", CompareModel::B), r.latency.medianMs);
    QCOMPARE(cm->value("plan.median_ms", CompareModel::Delta), 0.0);
    QVERIFY(!cm->isColoured("plan.median_ms"));
  }

  // A build the Run dock did not measure (the stripped one) is measured by
  // Compare with the Run dock's device, threads and runs.
  void compareMeasuresWithTheRunDocksOptions() {
    QSignalSpy compared(ctl(), &ProjectController::compareFinished);
    ctl()->compareDefaultVsStripped();
    QVERIFY(waitSignal(compared));
    QVERIFY(compared.last().at(0).toBool());
    CompareModel *cm = ctl()->compareView()->model();
    // A is the shown default build the Run dock measured: its median again.
    QCOMPARE(cm->value("plan.median_ms", CompareModel::A), ctl()->runPanel()->result().latency.medianMs);
    const double b = cm->value("plan.median_ms", CompareModel::B);
    QVERIFY(b > 0);
    const kiln::RunOptions options = hostRunOptions();
    const QString where = QStringLiteral("%1 %2 thread").arg(QString::fromStdString(options.device)).arg(options.threads);
    const QString caption = ctl()->compareView()->caption()->text();
    QCOMPARE(caption.count(where), 2); // A and B
    QCOMPARE(caption.count(QStringLiteral("%1 runs").arg(options.benchmarkRuns)), 2);
  }

  // Noise (the min..max ranges overlap) is neither a gain nor a loss.
  void compareDoesNotColourNoise() {
    CompareModel m;
    const int row = [&] {
      m.setBuilds(timed(10, 9, 12), timed(9.5, 8.5, 10));
      return int(m.rowNames().indexOf("plan.median_ms"));
    }();
    QVERIFY(row >= 0);
    QCOMPARE(m.value("plan.median_ms", CompareModel::Delta), -0.5);
    QVERIFY(!m.isColoured("plan.median_ms"));
    QVERIFY(!m.data(m.index(row, CompareModel::Delta), Qt::ForegroundRole).isValid());
    QVERIFY(m.data(m.index(row, CompareModel::Delta), Qt::DisplayRole).toString().contains("noise"));
    // 5..6 ms against 9..12 ms: a gain, green.
    m.setBuilds(timed(10, 9, 12), timed(5.5, 5, 6));
    QVERIFY(m.isColoured("plan.median_ms"));
    QCOMPARE(m.data(m.index(row, CompareModel::Delta), Qt::ForegroundRole).value<QBrush>().color(),
             QColor(0, 0x80, 0));
    // Ranges that only touch still overlap (12 = 12).
    m.setBuilds(timed(10, 9, 12), timed(14, 12, 15));
    QVERIFY(!m.isColoured("plan.median_ms"));
    // Sizes keep their colours.
    kiln::BuildSummary a = timed(10, 9, 12), b = timed(10, 9, 12);
    a.arenaBytes = 100;
    b.arenaBytes = 50;
    m.setBuilds(a, b);
    QVERIFY(m.isColoured("plan.arena_bytes"));
    QVERIFY(!m.isColoured("plan.median_ms"));
  }

  void compareEmptyStateSaysWhatToDo() {
    CompareView v;
    for (QPushButton *b : {v.strippedButton(), v.pinButton(), v.currentButton()})
      QVERIFY2(v.caption()->text().contains(b->text()), qPrintable(b->text()));
    v.setBuilds("A", timed(1, 1, 1), "B", std::nullopt);
    QVERIFY(!v.caption()->text().contains(v.strippedButton()->text()));
    v.setBuilds(QString(), std::nullopt, QString(), std::nullopt);
    QVERIFY(v.caption()->text().contains(v.strippedButton()->text()));
  }

  void recentMenuShowsTheFolderOfSameNamedFiles() {
    const QString a = tmp.filePath("one/models/net.tflite"), b = tmp.filePath("two/models/net.tflite"),
                  c = tmp.filePath("one/other.tflite");
    const QStringList labels = MainWindow::recentFileLabels({a, b, c});
    QCOMPARE(labels.size(), 3);
    QCOMPARE(labels[0], QStringLiteral("net.tflite \u2014 \u2026/one/models"));
    QCOMPARE(labels[1], QStringLiteral("net.tflite \u2014 \u2026/two/models"));
    QCOMPARE(labels[2], QStringLiteral("other.tflite")); // unique: the name alone
    // The menu of a window opened with that history.
    QSettings().setValue("recentFiles", QStringList{a, b, c});
    MainWindow second;
    QStringList texts;
    for (QAction *act : second.recentMenu()->actions())
      texts << act->text();
    QCOMPARE(texts, (QStringList{"&1 " + labels[0], "&2 " + labels[1], "&3 " + labels[2]}));
    QCOMPARE(second.recentMenu()->actions()[1]->toolTip(), b);
    QSettings().remove("recentFiles");
  }

  // alexa's arena is 1 KiB, BlazeFace's 1.25 MiB: both units.
  void memoryAxisInKiBOrMiB() {
    auto blazeface = kiln::planModel(modelPath("blazeface").toStdString(), modelOptions("blazeface"));
    QVERIFY2(bool(blazeface), blazeface ? "" : llvm::toString(blazeface.takeError()).c_str());
    std::set<QString> units;
    for (const std::shared_ptr<const kiln::CompilationPlan> &plan : {w->document()->plan, *blazeface}) {
      MemoryView v;
      v.resize(900, 500);
      v.setPlan(plan);
      v.show();
      QVERIFY(QTest::qWaitForWindowExposed(&v));
      v.plot()->replot();
      QVERIFY(plan->memory.arenaBytes >= 1024);
      // The unit of the axis range's top (the view shows 0 .. 1.12 x arena).
      const double top = v.plot()->yAxis->range().upper;
      QCOMPARE(top, 1.12 * double(plan->memory.arenaBytes));
      const double unit = top >= 1024.0 * 1024 ? 1024.0 * 1024 : 1024.0;
      const QString suffix = unit > 1024 ? QStringLiteral(" MiB") : QStringLiteral(" KiB");
      units.insert(suffix);
      const QVector<double> ticks = v.plot()->yAxis->tickVector();
      const QVector<QString> labels = v.plot()->yAxis->tickVectorLabels();
      QVERIFY(ticks.size() >= 2);
      QCOMPARE(labels.size(), ticks.size());
      for (int i = 0; i < ticks.size(); ++i)
        QCOMPARE(labels[i], ticks[i] == 0 ? QStringLiteral("0") : QString::number(ticks[i] / unit, 'g', 4) + suffix);
    }
    QCOMPARE(units.size(), size_t(2));
  }

  void sizesViewHidesColumnsItCannotFill() {
    SizesView v;
    kiln::SectionSizes a;
    a.sections = {{"constants", 1000}, {"code", 500}};
    a.overhead = 24;
    a.fileBytes = 1524;
    v.setSizes(a, std::nullopt); // a .kiln file: no stripped build
    QVERIFY(v.table()->isColumnHidden(SectionSizesModel::Stripped));
    QVERIFY(v.table()->isColumnHidden(SectionSizesModel::Delta));
    QVERIFY(!v.table()->isColumnHidden(SectionSizesModel::Default));
    QCOMPARE(v.model()->headerData(SectionSizesModel::Default, Qt::Horizontal, Qt::DisplayRole).toString(),
             QStringLiteral("Bytes"));
    kiln::SectionSizes b = a;
    b.sections[1].second = 400;
    b.fileBytes = 1424;
    v.setSizes(a, b);
    QVERIFY(!v.table()->isColumnHidden(SectionSizesModel::Stripped));
    QVERIFY(!v.table()->isColumnHidden(SectionSizesModel::Delta));
  }

  // "CONV_2D #2": the dispatch table, the graph (both modes' tooltips and
  // the full mode's lines) and the inspector write operators one way.
  void operatorNamesSpelledOneWay() {
    const kiln::CompilationPlan &plan = *w->document()->plan;
    QRegularExpression glued(QStringLiteral("[A-Z_0-9]#\\d"));
    GraphLayout full = layoutPlan(plan, false, w->font());
    GraphLayout collapsed = layoutPlan(plan, true, w->font());
    for (const kiln::Dispatch &d : plan.dispatches) {
      const int row = w->dispatchModel()->rowOfDispatch(d.id);
      const QString ops = w->dispatchModel()->index(row, DispatchListModel::Ops).data().toString();
      w->selectDispatch(d.id);
      QStringList tree;
      for (QTreeWidgetItemIterator it(w->inspectorView()->tree()); *it; ++it)
        tree << (*it)->text(0) + " " + (*it)->text(1);
      const GraphNode *node = nullptr, *cnode = nullptr;
      for (const GraphNode &n : full.nodes)
        if (n.kind == GraphNode::Dispatch && n.id == d.id)
          node = &n;
      for (const GraphNode &n : collapsed.nodes)
        if (n.kind == GraphNode::Dispatch && n.id == d.id)
          cnode = &n;
      QVERIFY(node && cnode);
      for (const kiln::SourceOp &op : d.ops) {
        if (op.sourceIndex < 0)
          continue;
        const QString want = QStringLiteral("%1 #%2").arg(QString::fromStdString(op.name)).arg(op.sourceIndex);
        QVERIFY2(ops.contains(want), qPrintable(ops));
        QVERIFY2(node->lines.contains(want), qPrintable(node->lines.join('|')));
        QVERIFY2(node->tooltip.contains(want), qPrintable(node->tooltip));
        QVERIFY2(cnode->tooltip.contains(want), qPrintable(cnode->tooltip));
        QVERIFY2(tree.join('\n').contains(want), qPrintable(tree.join('\n')));
      }
      for (const QString &t : {ops, node->lines.join('\n'), node->tooltip, tree.join('\n')})
        QVERIFY2(!glued.match(t).hasMatch(), qPrintable(t));
    }
  }

  // A long value wraps in the Value column: its row is taller than one
  // line when the column is narrower than the text.
  void inspectorWrapsLongValues() {
    InspectorView v;
    v.resize(360, 700);
    v.setDocument(w->document());
    const kiln::CompilationPlan &plan = *w->document()->plan;
    // The first dispatch: its bindings and kernel are long values.
    v.showDispatch(plan.dispatches.front().id);
    v.show();
    QVERIFY(QTest::qWaitForWindowExposed(&v));
    QTreeWidget *t = v.tree();
    QVERIFY(t->wordWrap());
    QTreeWidgetItem *longest = nullptr;
    for (QTreeWidgetItemIterator it(t); *it; ++it)
      if (!longest || (*it)->text(1).size() > longest->text(1).size())
        longest = *it;
    QVERIFY(longest);
    const int textWidth = t->fontMetrics().horizontalAdvance(longest->text(1));
    QTRY_VERIFY(t->header()->sectionSize(1) > 0);
    QVERIFY2(textWidth > t->header()->sectionSize(1),
             qPrintable(QStringLiteral("%1 fits in %2").arg(longest->text(1)).arg(t->header()->sectionSize(1))));
    const int line = t->fontMetrics().height();
    QTRY_VERIFY2(t->visualItemRect(longest).height() >= 2 * line,
                 qPrintable(QStringLiteral("row %1 px, line %2 px").arg(t->visualItemRect(longest).height()).arg(line)));
  }

  // Esc cancels Run on Host (a run of a large build could not be stopped,
  // and Quit waited it out at 100% CPU): the Run dock shows Cancel while
  // busy, the run stops before its next wave, and the window says it was
  // cancelled, not that it failed. Last: the dock's result is the
  // cancelled one afterwards.
  void escCancelsRunOnHost() {
    RunPanel *run = ctl()->runPanel();
    QAction *esc = actionWithShortcut(QKeySequence(Qt::Key_Escape));
    QVERIFY(esc);
    QVERIFY(!esc->isEnabled()); // nothing to cancel yet
    QVERIFY(run->cancelButton()->isHidden());
    QSignalSpy finished(w.get(), &MainWindow::runFinished);
    w->runOnHost();
    QVERIFY(w->isRunning());
    QVERIFY(run->isBusy());
    QVERIFY(esc->isEnabled());
    QVERIFY(!run->cancelButton()->isHidden() && run->cancelButton()->isEnabled());
    QVERIFY(!run->runButton()->isEnabled());
    esc->trigger(); // 22 runs to go at most: the worker stops at its next check
    QVERIFY(waitSignal(finished));
    QCOMPARE(finished.last().at(0).toBool(), false);
    const RunPanelResult &r = run->result();
    QVERIFY2(r.cancelled, qPrintable(r.error));
    QVERIFY(r.outputs.empty());
    QCOMPARE(run->messageLabel()->text(), tr("Run cancelled."));
    QCOMPARE(w->diagnostics()->lastMessage(), tr("run on host cancelled"));
    QVERIFY2(w->statusText().endsWith(tr("run on host cancelled")), qPrintable(w->statusText()));
    QVERIFY(!w->isRunning() && !run->isBusy());
    QVERIFY(run->cancelButton()->isHidden());
    QVERIFY(run->runButton()->isEnabled());
    QVERIFY(!esc->isEnabled());
    // A cancel that comes late stops nothing: the next run runs whole.
    QSignalSpy again(w.get(), &MainWindow::runFinished);
    w->runOnHost();
    QVERIFY(waitSignal(again));
    QVERIFY2(again.last().at(0).toBool(), qPrintable(run->messageLabel()->text()));
    QVERIFY(run->result().ok && !run->result().cancelled);
  }
};

QTEST_MAIN(NumbersTest)
#include "NumbersTest.moc"
