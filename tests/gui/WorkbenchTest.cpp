//===- WorkbenchTest.cpp - The real MainWindow over the real models ------===//
//
// Opens each real model in kiln-workbench's MainWindow (offscreen), waits
// for the background compilation and checks every view against numbers
// taken from the core's plan and section data (never from the views):
// graph nodes == dispatches, timeline bars == commands, rectangles ==
// placed transient buffers, bar heights == section bytes. Then the shared
// selection, hover text, IR, Cancel, bad files, .kiln files and a host run.
//
//===----------------------------------------------------------------------===//
#include "GuiTestSupport.h"

#include "CompileJob.h"
#include "DiagnosticsView.h"
#include "GraphView.h"
#include "InspectorView.h"
#include "MainWindow.h"
#include "MemoryView.h"
#include "PhaseProgress.h"
#include "PlanModels.h"
#include "ProjectController.h"
#include "RunPanel.h"
#include "SizesView.h"
#include "TimelineView.h"
#include "Workbench.h"

#include "kiln/Artifact.h"
#include "kiln/Recipe.h"
#include "kiln/Targets.h"

#include "kiln/Project.h"

#include <QAction>
#include <QComboBox>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFile>
#include <QItemSelectionModel>
#include <QLabel>
#include <QMenuBar>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTextBlock>
#include <QTreeWidget>
#include <QtTest>

#include <qcustomplot.h>

#include <map>
#include <set>

using namespace kiln::views;
using namespace kiln::workbench;
using namespace kiln::guitest;

namespace {

/// Section bytes in bar order (sections in the writer's order, then the
/// format overhead), from core's reader.
std::vector<double> expectedBars(const kiln::SectionSizes &s) {
  std::vector<double> v;
  for (auto &sec : s.sections)
    v.push_back(double(sec.second));
  v.push_back(double(s.overhead));
  return v;
}

} // namespace

class WorkbenchTest : public QObject {
  Q_OBJECT

  std::unique_ptr<MainWindow> w;
  /// The embedding model is opened from here: its shape fix is saved in a
  /// project file beside it, never in the model cache.
  QTemporaryDir tmp;

  /// The file opened for model `name`.
  QString pathOf(const QString &name) {
    if (name != QLatin1String("embedding"))
      return modelPath(name);
    QString copy = tmp.filePath("embedding.tflite");
    if (!QFile::exists(copy))
      QFile::copy(modelPath(name), copy);
    return copy;
  }

  /// Opens `name` and waits; the embedding model goes through the
  /// diagnostics' shape-fix button, as a user would (once: the fix is then
  /// saved in its project).
  bool open(const QString &name) {
    QString path = pathOf(name);
    w->openFile(path);
    if (name == QLatin1String("embedding") && !QFile::exists(QString::fromStdString(kiln::projectPathFor(path.toStdString())))) {
      // Its batch is -1 in the shape signature and recorded as 1: it builds
      // at 1x76x32x1, with the compiler's warning in Diagnostics.
      if (!waitForCompile(*w))
        return false;
      for (int i = 0; i < w->diagnostics()->topLevelItemCount(); ++i)
        if (w->diagnostics()->topLevelItem(i)->text(2).contains(
                "compiled at its recorded shape 1x76x32x1"))
          return true;
      qWarning("no recorded-shape warning: %s", qPrintable(w->diagnostics()->lastMessage()));
      return false;
    }
    return waitForCompile(*w);
  }

private slots:
  void initTestCase() {
    startTestSettings("kiln-workbench-test");
    w = std::make_unique<MainWindow>();
    w->resize(1600, 1000);
    w->show();
    QVERIFY(QTest::qWaitForWindowExposed(w.get()));
  }

  void cleanupTestCase() { w.reset(); }

  void standardShortcuts() {
    std::set<QString> have;
    for (QAction *menu : w->menuBar()->actions())
      for (QAction *a : menu->menu()->actions())
        for (const QKeySequence &k : a->shortcuts())
          have.insert(k.toString());
    for (const char *k : {"Ctrl+O", "Ctrl+W", "Ctrl+Q", "F11", "Ctrl+F", "Ctrl+R", "Esc"})
      QVERIFY2(have.count(k), k);
    // Every dock can be restored by name (QSettings keeps the layout).
    std::set<QString> names;
    for (QDockWidget *d : w->docks()) {
      QVERIFY(!d->objectName().isEmpty());
      names.insert(d->objectName());
    }
    QCOMPARE(int(names.size()), w->docks().size());
    QVERIFY(w->restoreState(w->saveState()));
  }

  void aboutNamesVersions() {
    QString text = MainWindow::aboutText();
    QVERIFY(text.contains(QString::fromLatin1(kiln::version())));
    QVERIFY(text.contains(QString::fromLatin1(kiln::llvmVersion())));
    QVERIFY(text.contains(QString::fromLatin1(qVersion())));
  }

  void dockLayoutIsRemembered() {
    {
      MainWindow first;
      first.show();
      QDockWidget *memory = first.dockOf(first.memoryView());
      memory->setFloating(true);
      first.dockOf(first.inspectorView())->hide();
      first.close(); // closeEvent saves geometry and dock state
    }
    MainWindow second;
    second.show();
    QVERIFY(second.dockOf(second.memoryView())->isFloating());
    QVERIFY(!second.dockOf(second.inspectorView())->isVisible());
    // Put the default layout back for the next runs.
    second.dockOf(second.memoryView())->setFloating(false);
    second.dockOf(second.inspectorView())->show();
    second.close();
  }

  void openRealModel_data() {
    QTest::addColumn<QString>("model");
    for (const QString &m : realModels())
      QTest::newRow(qPrintable(m)) << m;
  }

  void openRealModel() {
    QFETCH(QString, model);
    QVERIFY2(QFile::exists(modelPath(model)), "run the fetch_models fixture first");
    QVERIFY2(open(model), qPrintable(w->diagnostics()->lastMessage()));
    auto doc = w->document();
    QVERIFY(doc);
    QCOMPARE(doc->path, QFileInfo(pathOf(model)).absoluteFilePath());
    const kiln::CompilationPlan &plan = *doc->plan;

    // The document holds the plan the core computes for this model.
    auto independent = kiln::planModel(modelPath(model).toStdString(), modelOptions(model));
    QVERIFY(bool(independent));
    QCOMPARE((*independent)->dispatches.size(), plan.dispatches.size());
    QCOMPARE((*independent)->schedule.commands.size(), plan.schedule.commands.size());
    QCOMPARE((*independent)->memory.arenaBytes, plan.memory.arenaBytes);
    QVERIFY(!plan.dispatches.empty());

    // Dispatch table and graph.
    QCOMPARE(w->dispatchModel()->rowCount(), int(plan.dispatches.size()));
    QCOMPARE(w->graphView()->dispatchNodeCount(), int(plan.dispatches.size()));
    QVERIFY(w->graphView()->edgeCount() >= int(plan.dispatches.size()));
    for (const kiln::Dispatch &d : plan.dispatches)
      QVERIFY(!w->graphView()->nodeRect(d.id).isEmpty());

    // Timeline: one bar per non-barrier command, one line per barrier.
    TimelineView *t = w->timelineView();
    QCOMPARE(int64_t(t->commandItemCount()), countCommands(plan, false));
    QCOMPARE(int64_t(t->barrierItemCount()), countCommands(plan, true));
    QCOMPARE(size_t(t->commandItemCount() + t->barrierItemCount()), plan.schedule.commands.size());
    QCOMPARE(int64_t(t->data().lanes.size()), plan.schedule.waves);

    // Memory: one rectangle per placed transient buffer, at its place.
    MemoryView *m = w->memoryView();
    std::vector<int64_t> placed = placedBufferIds(plan);
    QCOMPARE(m->drawnBuffers(), placed);
    for (size_t i = 0; i < placed.size(); ++i) {
      const kiln::Buffer &b = plan.memory.buffers[placed[i]];
      QCOMPARE(m->rectAt(int(i)), QRectF(b.firstCommand, b.offset, b.lastCommand + 1 - b.firstCommand, b.bytes));
    }
    QCOMPARE(m->arenaLineY(), double(plan.memory.arenaBytes));
    QCOMPARE(m->lowerBoundLineY(), double(plan.memory.lowerBoundBytes));

    // Sizes: bars == section bytes of the default artifact (read back by
    // core) and of a stripped build compiled here independently.
    auto sa = kiln::readSectionSizes(doc->artifact, "default");
    QVERIFY(bool(sa));
    QCOMPARE(w->sizesView()->barValues(false), expectedBars(*sa));
    kiln::CompileOptions so = modelOptions(model);
    QVERIFY(!kiln::applyProfile("stripped", so));
    auto stripped = kiln::compileArtifact(modelPath(model).toStdString(), so);
    QVERIFY(bool(stripped));
    auto sb = kiln::readSectionSizes(*stripped, "stripped");
    QVERIFY(bool(sb));
    std::vector<double> strippedBars = w->sizesView()->barValues(true);
    QCOMPARE(strippedBars.size(), expectedBars(*sa).size());
    for (size_t i = 0; i < sa->sections.size(); ++i) {
      double want = 0;
      for (auto &s : sb->sections)
        if (s.first == sa->sections[i].first)
          want = double(s.second);
      QCOMPARE(strippedBars[i], want);
    }
    QCOMPARE(strippedBars.back(), double(sb->overhead));
    double total = 0;
    for (double v : strippedBars)
      total += v;
    QCOMPARE(int64_t(total), sb->fileBytes);
    QVERIFY(sb->fileBytes < sa->fileBytes);

    // Every view draws without error.
    QCOMPARE(drawAllViews(*w), w->docks().size() + 1);
  }

  void selectionIsShared() {
    QVERIFY(open("blazeface"));
    const kiln::CompilationPlan &plan = *w->document()->plan;
    // Click the node of the dispatch with the most operators.
    const kiln::Dispatch *target = &plan.dispatches.front();
    for (const kiln::Dispatch &d : plan.dispatches)
      if (d.ops.size() > target->ops.size() || (d.ops.size() == target->ops.size() && d.flops > target->flops))
        target = &d;
    GraphView *g = w->graphView();
    g->fitToWindow();
    g->centerOn(g->nodeRect(target->id).center());
    QPoint at = g->mapFromScene(g->nodeRect(target->id).center());
    QTest::mouseClick(g->viewport(), Qt::LeftButton, {}, at);
    QTRY_COMPARE(g->selectedDispatch(), target->id);

    int row = w->dispatchModel()->rowOfDispatch(target->id);
    QCOMPARE(w->selectionModel()->currentIndex().row(), row);
    QCOMPARE(w->dispatchTable()->currentIndex().row(), row);
    QVERIFY(w->selectionModel()->isRowSelected(row, {}));
    QCOMPARE(w->timelineView()->highlightedDispatch(), target->id);
    QCOMPARE(w->inspectorView()->dispatch(), target->id);
    // The inspector lists the fused operators with their indices.
    QStringList tree;
    for (QTreeWidgetItemIterator it(w->inspectorView()->tree()); *it; ++it)
      tree << (*it)->text(0) + " " + (*it)->text(1);
    for (const kiln::SourceOp &op : target->ops)
      QVERIFY2(tree.join('\n').contains(QStringLiteral("%1 #%2").arg(QString::fromStdString(op.name)).arg(op.sourceIndex)),
               qPrintable(tree.join('\n')));
    // Memory highlights the placed buffers the dispatch binds.
    std::set<int64_t> bound;
    for (const kiln::Command &c : plan.schedule.commands)
      if (c.kind == kiln::CommandKind::Dispatch && c.dispatch == target->id)
        for (const kiln::BindingRef &b : c.bindings)
          bound.insert(b.buffer);
    std::vector<int64_t> want;
    for (int64_t id : placedBufferIds(plan))
      if (bound.count(id))
        want.push_back(id);
    QVERIFY(!want.empty());
    QCOMPARE(w->memoryView()->highlightedBuffers(), want);

    // Selecting in the timeline selects in the graph: click another
    // dispatch's bar.
    const kiln::Dispatch &other = plan.dispatches.front().id == target->id ? plan.dispatches.back() : plan.dispatches.front();
    w->dockOf(w->timelineView())->raise();
    QApplication::processEvents();
    TimelineView *t = w->timelineView();
    QCustomPlot *plot = t->plot();
    plot->replot();
    const TimelineBar *bar = nullptr;
    for (const TimelineBar &b : t->data().commands)
      if (b.dispatch == other.id)
        bar = &b;
    QVERIFY(bar);
    plot->xAxis->setRange(bar->startUs - 1, bar->endUs + 1); // zoom onto the bar
    plot->replot();
    QPoint px(int(plot->xAxis->coordToPixel((bar->startUs + bar->endUs) / 2)), int(plot->yAxis->coordToPixel(bar->lane)));
    QString tip = t->tooltipAt(px);
    QVERIFY2(tip.contains(QString::fromStdString(other.name)) && tip.contains(QStringLiteral("wave %1").arg(bar->wave)) &&
                 tip.contains("estimated"),
             qPrintable(tip));
    QTest::mouseClick(plot, Qt::LeftButton, {}, px);
    QTRY_COMPARE(g->selectedDispatch(), other.id);
    QCOMPARE(w->inspectorView()->dispatch(), other.id);

    // Clicking a buffer in the memory view selects the dispatch writing it.
    w->dockOf(w->memoryView())->raise();
    QApplication::processEvents();
    MemoryView *m = w->memoryView();
    m->plot()->replot();
    int pick = int(m->drawnBuffers().size()) / 2;
    int64_t producer = -1;
    for (const kiln::Command &c : plan.schedule.commands)
      for (const kiln::BindingRef &r : c.bindings)
        if (r.buffer == m->drawnBuffers()[pick] && r.write && c.kind == kiln::CommandKind::Dispatch)
          producer = c.dispatch;
    QVERIFY(producer >= 0);
    QRectF br = m->rectAt(pick);
    QPoint mp(int(m->plot()->xAxis->coordToPixel(br.center().x())), int(m->plot()->yAxis->coordToPixel(br.center().y())));
    QCOMPARE(m->bufferAt(mp), m->drawnBuffers()[pick]);
    QTest::mouseClick(m->plot(), Qt::LeftButton, {}, mp);
    QTRY_COMPARE(g->selectedDispatch(), producer);
    w->dockOf(w->timelineView())->raise();

    // Keyboard: Down in the graph walks to the next dispatch in order.
    g->setFocus();
    int otherRow = w->dispatchModel()->rowOfDispatch(other.id);
    QTest::keyClick(g, otherRow + 1 < int(plan.dispatches.size()) ? Qt::Key_Down : Qt::Key_Up);
    QVERIFY(w->selectionModel()->currentIndex().row() != otherRow);

    // Search: an exact name or id selects that dispatch; other text the
    // next dispatch containing it.
    QVERIFY(g->find(QString::fromStdString(target->name)));
    QCOMPARE(g->selectedDispatch(), target->id);
    QVERIFY(g->find(QString::number(other.id)));
    QCOMPARE(g->selectedDispatch(), other.id);
    QVERIFY(g->find("DEPTHWISE"));
    QVERIFY(opsText(plan.dispatches[w->dispatchModel()->rowOfDispatch(g->selectedDispatch())]).contains("DEPTHWISE"));
    QVERIFY(!g->find("NO_SUCH_OPERATOR"));
    QVERIFY(g->find(QString::fromStdString(target->name)));

    // Collapsed mode keeps every node and the selection, and is smaller.
    QRectF full = g->layout().bounds;
    g->setCollapsed(true);
    QCOMPARE(g->dispatchNodeCount(), int(plan.dispatches.size()));
    QCOMPARE(g->selectedDispatch(), target->id);
    QVERIFY(g->layout().bounds.width() * g->layout().bounds.height() < full.width() * full.height());
    g->setCollapsed(false);
  }

  void diagnosticJumpsToOperator() {
    auto doc = w->document();
    QVERIFY(doc);
    // A message naming a source operator of the plan selects the dispatch
    // that fused it when activated (Enter on the item).
    const kiln::Dispatch &d = doc->plan->dispatches[doc->plan->dispatches.size() / 2];
    const kiln::SourceOp &op = d.ops.back();
    w->diagnostics()->add(DiagnosticsView::Severity::Warning, doc->path,
                          QStringLiteral("%1: %2 #%3 is slow").arg(QFileInfo(doc->path).fileName())
                              .arg(QString::fromStdString(op.name)).arg(op.sourceIndex));
    w->diagnostics()->setFocus();
    QTest::keyClick(w->diagnostics(), Qt::Key_Return);
    QTRY_COMPARE(w->graphView()->selectedDispatch(), d.id);
    QCOMPARE(w->inspectorView()->dispatch(), d.id);
  }

  void memoryHover() {
    auto doc = w->document();
    QVERIFY(doc);
    const kiln::CompilationPlan &plan = *doc->plan;
    int64_t id = placedBufferIds(plan).front();
    const kiln::Buffer &b = plan.memory.buffers[id];
    QString tip = w->memoryView()->tooltipFor(id);
    QVERIFY(tip.contains(QStringLiteral("lives commands %1..%2").arg(b.firstCommand).arg(b.lastCommand)));
    // The producer is the dispatch whose binding writes the buffer.
    for (const kiln::Command &c : plan.schedule.commands)
      for (const kiln::BindingRef &r : c.bindings)
        if (r.buffer == id && r.write)
          QVERIFY2(tip.contains(QStringLiteral("producer: dispatch %1").arg(c.dispatch)), qPrintable(tip));
  }

  void inspectorShowsIr() {
    auto doc = w->document();
    QVERIFY(doc);
    const kiln::Dispatch &d = doc->plan->dispatches.back();
    InspectorView *insp = w->inspectorView();
    QSignalSpy shown(insp, &InspectorView::irShown);
    insp->stageBox()->setCurrentIndex(4); // LLVM IR
    w->selectDispatch(d.id);
    QVERIFY(shown.count() > 0 || shown.wait(120000));
    QString text = insp->irView()->toPlainText();
    QString name = QString::fromStdString(d.name);
    // By default only the dispatch's function, whole: define .. }.
    QVERIFY2(text.startsWith("define void @" + name + "("), qPrintable(text.left(200)));
    QVERIFY(text.trimmed().endsWith("}"));
    for (const kiln::Dispatch &other : doc->plan->dispatches)
      if (other.id != d.id)
        QVERIFY(!text.contains("define void @" + QString::fromStdString(other.name) + "("));
    // The whole module, scrolled to the dispatch: the cursor's line defines it.
    insp->wholeModuleBox()->setChecked(true);
    text = insp->irView()->toPlainText();
    // Every entry point; a deduplicated dispatch has none of its own.
    for (const kiln::Dispatch &other : doc->plan->dispatches)
      QVERIFY(text.contains("define void @" + QString::fromStdString(other.entryPoint) + "(") &&
              text.contains("define void @" + QString::fromStdString(other.name) + "(") ==
                  (other.entryPoint == other.name));
    QVERIFY2(insp->irView()->textCursor().block().text().contains("@" + name + "("),
             qPrintable(insp->irView()->textCursor().block().text()));
    insp->wholeModuleBox()->setChecked(false);
    // A dispatch that runs another's identical kernel shows that code.
    for (const kiln::Dispatch &dup : doc->plan->dispatches)
      if (dup.entryPoint != dup.name) {
        shown.clear();
        w->selectDispatch(dup.id);
        QVERIFY(shown.count() > 0 || shown.wait(120000));
        QString entry = QString::fromStdString(dup.entryPoint);
        QVERIFY2(insp->irView()->toPlainText().startsWith("define void @" + entry + "("),
                 qPrintable(insp->irView()->toPlainText().left(200)));
        QVERIFY2(insp->irStatusLabel()->text().contains("runs the code of " + entry),
                 qPrintable(insp->irStatusLabel()->text()));
        shown.clear();
        w->selectDispatch(d.id);
        QVERIFY(shown.count() > 0 || shown.wait(120000));
        break;
      }
    // Assembly: from the label's directives to its .size.
    shown.clear();
    insp->stageBox()->setCurrentIndex(5);
    QVERIFY(shown.count() > 0 || shown.wait(120000));
    text = insp->irView()->toPlainText();
    QVERIFY2(text.contains("\n" + name + ":") && text.contains(".size\t" + name + ","), qPrintable(text.left(300)));
    // MLIR dispatch functions: func.func @name( .. its closing brace.
    shown.clear();
    insp->stageBox()->setCurrentIndex(2);
    QVERIFY(shown.count() > 0 || shown.wait(120000));
    text = insp->irView()->toPlainText();
    QVERIFY2((text.trimmed().startsWith("func.func @" + name + "(") || text.trimmed().startsWith("func.func private @" + name + "(")) &&
                 text.trimmed().endsWith("}"),
             qPrintable(text.left(300)));
    QCOMPARE(text.count("func.func"), 1);
    shown.clear();
    insp->stageBox()->setCurrentIndex(0); // TOSA
    QVERIFY(shown.count() > 0 || shown.wait(120000));
    QVERIFY(insp->irView()->toPlainText().contains("tosa."));
  }

  void cancelStopsCleanly() {
    // Cancelled during code generation: the plan already shown stays, with
    // no code (a cancel before the plan changes nothing: Gui.OpenFlow).
    QVERIFY(open("alexa"));
    const QString blazeface = QFileInfo(modelPath("blazeface")).absoluteFilePath();
    w->openFile(modelPath("blazeface"));
    QVERIFY(w->isCompiling());
    QVERIFY(w->cancelButton()->isEnabled());
    // The event loop keeps running while the compiler works.
    QElapsedTimer clock;
    clock.start();
    qint64 last = 0, worstGap = 0;
    QTimer ticker;
    connect(&ticker, &QTimer::timeout, this, [&] {
      worstGap = std::max(worstGap, clock.elapsed() - last);
      last = clock.elapsed();
    });
    ticker.start(10);
    QTRY_VERIFY_WITH_TIMEOUT(w->document()->path == blazeface &&
                                 w->phaseProgress()->currentPhase() >= int(kiln::CompilePhase::LowerToLLVM),
                             60000);
    auto before = w->document();
    QTest::mouseClick(w->cancelButton(), Qt::LeftButton);
    QSignalSpy finished(w.get(), &MainWindow::compileFinished);
    QVERIFY(finished.wait(60000));
    ticker.stop();
    QCOMPARE(finished.front().front().toBool(), false);
    QVERIFY2(w->diagnostics()->lastMessage().contains("cancelled"), qPrintable(w->diagnostics()->lastMessage()));
    QVERIFY(!w->isCompiling());
    QVERIFY(!w->cancelButton()->isEnabled());
    QCOMPARE(w->document(), before); // the plan stays, without code
    QVERIFY(before->artifact.empty());
    QCOMPARE(w->graphView()->dispatchNodeCount(), int(before->plan->dispatches.size()));
    QCOMPARE(w->projectController()->modelPath(), blazeface);
    QVERIFY(w->windowTitle().startsWith("blazeface.tflite"));
    QVERIFY2(w->statusText().contains("code generation was cancelled"), qPrintable(w->statusText()));
    QVERIFY2(worstGap < 1000, qPrintable(QString::number(worstGap)));
  }

  void closeWhileCompiling() {
    // Closing the window mid-compile cancels the worker and waits for it
    // at the next phase boundary: no crash, no result delivered to a dead
    // window.
    auto other = std::make_unique<MainWindow>();
    other->show();
    other->openFile(modelPath("blazeface"));
    QTRY_VERIFY_WITH_TIMEOUT(other->phaseProgress()->currentPhase() >= 1, 60000);
    QElapsedTimer t;
    t.start();
    other->close();
    other.reset();
    qInfo("window destroyed %lld ms after close during a compile", t.elapsed());
    QVERIFY(t.elapsed() < 30000);
    QTest::qWait(100); // queued phase reports of the dead job are dropped
  }

  void badFilesKeepWhatWasOpen_data() {
    QTest::addColumn<QString>("path");
    for (const QString &b : badModels())
      QTest::newRow(qPrintable(b)) << badModelPath(b);
    QTest::newRow("vanished") << QStringLiteral("/nonexistent/dir/vanished.tflite");
  }

  void badFilesKeepWhatWasOpen() {
    QFETCH(QString, path);
    if (!w->document())
      QVERIFY(open("alexa"));
    auto before = w->document();
    // A refused file is rejected input: one warning, no error.
    int errors = w->diagnostics()->count(DiagnosticsView::Severity::Error);
    int warnings = w->diagnostics()->count(DiagnosticsView::Severity::Warning);
    w->openFile(path);
    QVERIFY(!waitForCompile(*w));
    QCOMPARE(w->diagnostics()->count(DiagnosticsView::Severity::Warning), warnings + 1);
    QCOMPARE(w->diagnostics()->count(DiagnosticsView::Severity::Error), errors);
    QString msg = w->diagnostics()->lastMessage();
    QVERIFY2(msg.contains(QFileInfo(path).fileName()), qPrintable(msg));
    QCOMPARE(w->document(), before);
    QVERIFY(w->isVisible());
    qInfo("%s: %s", qPrintable(QFileInfo(path).fileName()), qPrintable(msg));
  }

  void vanishedAfterListing() {
    // A file that exists when chosen and is gone when the worker reads it.
    QTemporaryDir dir;
    QString path = dir.filePath("gone.tflite");
    QVERIFY(QFile::copy(modelPath("alexa"), path));
    w->openFile(path);
    QFile::remove(path);
    bool ok = waitForCompile(*w);
    if (!ok)
      QVERIFY(w->diagnostics()->lastMessage().contains("gone.tflite"));
  }

  void opensKilnArtifacts() {
    QTemporaryDir dir;
    auto bytes = kiln::compileArtifact(modelPath("alexa").toStdString(), {});
    QVERIFY(bool(bytes));
    QString path = dir.filePath("alexa.kiln");
    QVERIFY(writeAll(path, *bytes));
    w->openFile(path);
    QVERIFY2(waitForCompile(*w), qPrintable(w->diagnostics()->lastMessage()));
    auto doc = w->document();
    QVERIFY(doc->isArtifact);
    auto plan = kiln::inspectFile(path.toStdString(), {});
    QVERIFY(bool(plan));
    QCOMPARE(w->graphView()->dispatchNodeCount(), int((*plan)->dispatches.size()));
    QCOMPARE(int64_t(w->timelineView()->commandItemCount()), countCommands(**plan, false));
    auto sizes = kiln::readSectionSizes(*bytes, "a");
    QVERIFY(bool(sizes));
    QCOMPARE(w->sizesView()->barValues(false), expectedBars(*sizes));
    QVERIFY(w->sizesView()->barValues(true).empty()); // nothing to compare with

    // A stripped artifact has no plan: a warning, and its sizes still show.
    kiln::CompileOptions so;
    QVERIFY(!kiln::applyProfile("stripped", so));
    auto small = kiln::compileArtifact(modelPath("alexa").toStdString(), so);
    QVERIFY(bool(small));
    QString spath = dir.filePath("alexa-stripped.kiln");
    QVERIFY(writeAll(spath, *small));
    int warnings = w->diagnostics()->count(DiagnosticsView::Severity::Warning);
    w->openFile(spath);
    QVERIFY(waitForCompile(*w));
    QCOMPARE(w->diagnostics()->count(DiagnosticsView::Severity::Warning), warnings + 1);
    auto ssizes = kiln::readSectionSizes(*small, "b");
    QCOMPARE(w->sizesView()->barValues(false), expectedBars(*ssizes));
    QCOMPARE(w->graphView()->dispatchNodeCount(), 0);
    // Its counts come from the command list, as `kiln diff` reads them,
    // never zeros.
    auto summary = kiln::summarizeArtifact(*small, "b");
    QVERIFY(bool(summary));
    QCOMPARE(w->document()->artifactCommands, summary->commands);
    QCOMPARE(w->document()->artifactDispatches, summary->dispatches);
    QCOMPARE(w->document()->plan->memory.arenaBytes, summary->arenaBytes);
    QCOMPARE(w->document()->plan->schedule.waves, summary->waves);
    QVERIFY2(w->diagnostics()->lastMessage().contains(
                 QStringLiteral("%1 commands").arg(summary->commands)),
             qPrintable(w->diagnostics()->lastMessage()));
    // The empty graph says why, and this host runs the artifact.
    QLabel *note = w->graphPanel()->noteLabel();
    QVERIFY(note->isVisibleTo(w.get()));
    QVERIFY2(note->text().contains("no reflection data") &&
                 note->text().contains(QStringLiteral("%1 dispatches").arg(summary->dispatches)),
             qPrintable(note->text()));
    QVERIFY(w->runAction()->isEnabled());

    // A stripped aarch64 artifact: the same note, and nothing offers to run
    // it here (the runtime refuses another architecture).
    kiln::CompileOptions ao = so;
    QVERIFY(!kiln::applyTarget("aarch64-linux-gnu", ao.target));
    auto arm = kiln::compileArtifact(modelPath("alexa").toStdString(), ao);
    QVERIFY(bool(arm));
    QString apath = dir.filePath("alexa-aarch64.kiln");
    QVERIFY(writeAll(apath, *arm));
    w->openFile(apath);
    QVERIFY(waitForCompile(*w));
    QVERIFY(note->isVisibleTo(w.get()));
    QVERIFY(!w->document()->hostLoadError.isEmpty());
    QVERIFY2(w->document()->hostLoadError.contains("aarch64"),
             qPrintable(w->document()->hostLoadError));
    QVERIFY(!w->runAction()->isEnabled());
    QVERIFY(w->runAction()->toolTip().contains(w->document()->hostLoadError));
    auto *panel = w->findChild<RunPanel *>();
    QVERIFY(panel);
    QVERIFY(!panel->runButton()->isEnabled());
    QVERIFY(!panel->run());
    QVERIFY2(panel->latencyLabel()->text().contains("cannot run"),
             qPrintable(panel->latencyLabel()->text()));
    // A full artifact again: no note.
    w->openFile(path);
    QVERIFY(waitForCompile(*w));
    QVERIFY(!note->isVisibleTo(w.get()));
    QVERIFY(w->runAction()->isEnabled());
  }

  void runOnHostMeasures() {
    QVERIFY(open("blazeface"));
    const kiln::CompilationPlan &plan = *w->document()->plan;
    w->runOnHost();
    QVERIFY(waitForRun(*w));
    const MeasuredRun *run = w->measuredRun();
    QVERIFY(run);
    TimelineView *t = w->timelineView();
    QVERIFY(t->data().measured);
    QCOMPARE(int64_t(t->commandItemCount()), countCommands(plan, false));
    QCOMPARE(int64_t(t->barrierItemCount()), countCommands(plan, true));
    // One workgroup bar per traced workgroup; per dispatch command as many
    // as its grid has (from the plan).
    std::map<int64_t, int64_t> perCommand;
    int64_t traced = 0;
    for (const kiln::TraceEvent &e : run->events)
      if (e.workgroup >= 0) {
        ++perCommand[e.command];
        ++traced;
      }
    QCOMPARE(int64_t(t->workgroupItemCount()), traced);
    for (const kiln::Command &c : plan.schedule.commands) {
      if (c.kind != kiln::CommandKind::Dispatch)
        continue;
      const auto &g = plan.dispatches[w->dispatchModel()->rowOfDispatch(c.dispatch)].workgroupCount;
      QCOMPARE(perCommand[c.index], g[0] * g[1] * g[2]);
    }
    // Measured bars take their traced times.
    std::map<int64_t, const kiln::TraceEvent *> ev;
    uint64_t t0 = UINT64_MAX;
    for (const kiln::TraceEvent &e : run->events) {
      t0 = std::min(t0, e.startNs);
      if (e.workgroup < 0)
        ev[e.command] = &e;
    }
    for (const TimelineBar &b : t->data().commands)
      if (ev.count(b.command))
        QCOMPARE(qRound64((b.endUs - b.startUs) * 1000), qint64(ev[b.command]->endNs - ev[b.command]->startNs));
    // Hovering a workgroup bar names it.
    QVERIFY(!t->data().workgroups.empty());
    const TimelineBar &wg = t->data().workgroups.front();
    QCustomPlot *plot = t->plot();
    plot->xAxis->setRange(wg.startUs, wg.endUs);
    plot->replot();
    QPoint px(int(plot->xAxis->coordToPixel((wg.startUs + wg.endUs) / 2)), int(plot->yAxis->coordToPixel(wg.lane + 0.2)));
    QString tip = t->tooltipAt(px);
    QVERIFY2(tip.contains(QStringLiteral("workgroup %1 of dispatch %2").arg(wg.workgroup).arg(wg.dispatch)), qPrintable(tip));
  }

  void opensTosaMlir() {
    QString path = QStringLiteral(KILN_TEST_DATA_DIR "/mlir/add_scale.mlir");
    w->openFile(path);
    QVERIFY2(waitForCompile(*w), qPrintable(w->diagnostics()->lastMessage()));
    auto plan = kiln::planModel(path.toStdString(), {});
    QVERIFY(bool(plan));
    QCOMPARE(w->graphView()->dispatchNodeCount(), int((*plan)->dispatches.size()));
    QCOMPARE(int64_t(w->timelineView()->commandItemCount()), countCommands(**plan, false));
    QCOMPARE(w->memoryView()->drawnBuffers(), placedBufferIds(**plan));
    QVERIFY(!w->sizesView()->barValues(true).empty());
  }

  void openWhileCompilingReplaces() {
    // Opening a second file cancels the first compile; only the second
    // is shown after that (the first one's plan may have been), and the
    // first one's code never lands.
    QStringList shown;
    w->openFile(modelPath("blazeface"));
    QTRY_VERIFY_WITH_TIMEOUT(w->phaseProgress()->currentPhase() >= 0, 60000);
    auto c = connect(w.get(), &MainWindow::documentShown, this, [&] { shown << w->document()->path; });
    w->openFile(modelPath("alexa"));
    QVERIFY(waitForCompile(*w));
    QTest::qWait(300); // anything the first job could still deliver
    disconnect(c);
    QString alexa = QFileInfo(modelPath("alexa")).absoluteFilePath();
    QCOMPARE(w->document()->path, alexa);
    QVERIFY(!shown.isEmpty());
    QCOMPARE(shown.filter("blazeface"), QStringList());
    QCOMPARE(shown.back(), alexa);
    QCOMPARE(w->graphView()->dispatchNodeCount(), int(w->document()->plan->dispatches.size()));
  }

  void dropOpensFile() {
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(modelPath("alexa"))});
    QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, {});
    QApplication::sendEvent(w.get(), &enter);
    QVERIFY(enter.isAccepted());
    QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, {});
    QApplication::sendEvent(w.get(), &drop);
    QVERIFY(waitForCompile(*w));
    QCOMPARE(w->document()->path, QFileInfo(modelPath("alexa")).absoluteFilePath());
  }

  void closeEmptiesViews() {
    w->closeDocument();
    QVERIFY(!w->document());
    QCOMPARE(w->graphView()->dispatchNodeCount(), 0);
    QCOMPARE(w->timelineView()->commandItemCount(), 0);
    QVERIFY(w->memoryView()->drawnBuffers().empty());
    QVERIFY(w->sizesView()->barValues(false).empty());
  }
};

QTEST_MAIN(WorkbenchTest)
#include "WorkbenchTest.moc"
