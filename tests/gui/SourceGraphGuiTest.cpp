//===- SourceGraphGuiTest.cpp - The source graph beside the dispatch graph ===//
//
// Issue 30, items 8 and 6, on the real MainWindow (offscreen) with the
// models of tests/data/onnx/source_graph (make_model.py; no model cache):
//   - the Source Graph dock draws one node per operator of the file (3 for
//     long_names.onnx, 48 for tall_chain.onnx: counts from make_model.py);
//   - clicking an operator selects the dispatch whose Dispatch::ops name it
//     (found here by scanning the plan, not through the view's map);
//   - selecting a dispatch highlights exactly the operators its ops name;
//   - the opening view of both graphs shows the graph's inputs, on a graph
//     taller than the window (tall_chain: 24 dispatches, 48 operators);
//   - a 54-character ONNX node name is elided in the middle: the box keeps
//     its distinctive end ("pointwise_project/Conv"), the tooltip has it all.
//
//===----------------------------------------------------------------------===//
#include "GraphView.h"
#include "GuiTestSupport.h"
#include "MainWindow.h"
#include "SourceGraphView.h"
#include "Workbench.h"

#include <QDockWidget>
#include <QElapsedTimer>
#include <QScrollBar>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTreeWidget>
#include <QTreeWidgetItemIterator>
#include <QtTest>

#include <algorithm>
#include <set>

using namespace kiln::views;
using namespace kiln::workbench;

class SourceGraphGuiTest : public QObject {
  Q_OBJECT

  std::unique_ptr<MainWindow> w;
  QTemporaryDir tmp;

  SourceGraphView *source() const { return w->sourceGraphPanel()->view(); }

  /// Opens tests/data/onnx/source_graph/`name` (a copy) with the Source
  /// Graph dock in front, and waits for its graph.
  bool open(const QString &name) {
    QString model = tmp.filePath(name);
    QFile::remove(model);
    if (!QFile::copy(QStringLiteral(KILN_TEST_DATA_DIR "/onnx/source_graph/") + name, model))
      return false;
    w->openFile(model);
    if (!waitForCompile(*w))
      return false;
    w->dockOf(w->sourceGraphPanel())->raise();
    QElapsedTimer reading;
    reading.start();
    while (source()->waitingForGraph() && reading.elapsed() < 30000)
      QTest::qWait(20);
    QApplication::processEvents();
    return source()->sourceGraph() != nullptr;
  }

  /// The dispatches whose ops name source operator `index`, from the plan.
  std::vector<int64_t> coveringDispatches(int64_t index) const {
    std::vector<int64_t> ids;
    for (const kiln::Dispatch &d : w->document()->plan->dispatches)
      for (const kiln::SourceOp &op : d.ops)
        if (op.sourceIndex == index && (ids.empty() || ids.back() != d.id))
          ids.push_back(d.id);
    return ids;
  }

  /// Every Input node of `canvas` lies in its visible scene rectangle.
  static bool inputsVisible(const GraphCanvas &canvas, QString &why) {
    QRectF shown = canvas.visibleSceneRect();
    int inputs = 0;
    for (const GraphNode &n : canvas.layout().nodes)
      if (n.kind == GraphNode::Input) {
        ++inputs;
        if (!shown.contains(n.rect)) {
          why = QStringLiteral("input %1 at (%2, %3) not in the view (%4, %5, %6 x %7)")
                    .arg(n.title)
                    .arg(n.rect.x())
                    .arg(n.rect.y())
                    .arg(shown.x())
                    .arg(shown.y())
                    .arg(shown.width())
                    .arg(shown.height());
          return false;
        }
      }
    why = QStringLiteral("no input node");
    return inputs > 0;
  }

private slots:
  void initTestCase() {
    kiln::guitest::startTestSettings("kiln-source-graph-gui-test");
    w = std::make_unique<MainWindow>();
    w->resize(1600, 1000);
    w->show();
    QVERIFY(QTest::qWaitForWindowExposed(w.get()));
    QVERIFY(open("long_names.onnx"));
  }

  void cleanupTestCase() { w.reset(); }

  void oneNodePerOperator() {
    // make_model.py: Conv, Relu, Conv.
    QCOMPARE(source()->operatorNodeCount(), 3);
    QCOMPARE(int(source()->sourceGraph()->operators.size()), 3);
    for (int64_t i = 0; i < 3; ++i)
      QVERIFY(!source()->operatorRect(i).isEmpty());
  }

  void clickingAnOperatorSelectsItsDispatch() {
    const std::vector<int64_t> expected = coveringDispatches(2); // the 1x1 Conv
    QVERIFY(!expected.empty());
    QRectF node = source()->operatorRect(2);
    source()->ensureVisible(node, 10, 10);
    QApplication::processEvents();
    QPoint at = source()->mapFromScene(node.center());
    QVERIFY2(source()->viewport()->rect().contains(at), "the node is on screen");
    QTest::mouseClick(source()->viewport(), Qt::LeftButton, {}, at);
    QCOMPARE(w->currentDispatch(), qint64(expected.front()));
    QCOMPARE(source()->selectedOperator(), qint64(2));
    QCOMPARE(w->graphView()->selectedDispatch(), int64_t(expected.front()));
    // The details pane shows the operator's attributes (kernel_shape [1, 1]).
    QStringList rows;
    for (QTreeWidgetItemIterator it(w->sourceGraphPanel()->details()); *it; ++it)
      rows << (*it)->text(0) + " " + (*it)->text(1);
    QVERIFY2(rows.contains("kernel_shape [1, 1]"), qPrintable(rows.join('\n')));
  }

  void selectingADispatchHighlightsItsOperators() {
    for (const kiln::Dispatch &d : w->document()->plan->dispatches) {
      w->selectDispatch(d.id);
      std::set<int64_t> expected;
      for (const kiln::SourceOp &op : d.ops)
        if (op.sourceIndex >= 0)
          expected.insert(op.sourceIndex);
      std::vector<int64_t> shown = source()->highlightedOperators();
      QCOMPARE(std::set<int64_t>(shown.begin(), shown.end()), expected);
    }
  }

  void longNamesKeepTheirEnd() {
    const std::string full = "/model/backbone/stage_3/block_2/pointwise_project/Conv";
    int node = source()->nodeIndex(GraphNode::Operator, 2);
    QVERIFY(node >= 0);
    const GraphNode &n = source()->layout().nodes[node];
    QVERIFY(!n.lines.isEmpty());
    const QString shown = n.lines.front();
    QVERIFY2(shown.contains(QChar(0x2026)), qPrintable(shown)); // elided
    QVERIFY2(shown.size() < int(full.size()), qPrintable(shown));
    QVERIFY2(shown.endsWith("project/Conv"), qPrintable(shown));
    QVERIFY2(shown.startsWith("/model/"), qPrintable(shown));
    QVERIFY(n.tooltip.contains(QString::fromStdString(full)));
    // The dispatch graph's operator line keeps the node index at its end.
    const std::vector<int64_t> d = coveringDispatches(2);
    int dn = w->graphView()->nodeIndex(GraphNode::Dispatch, d.front());
    QVERIFY(dn >= 0);
    bool found = false;
    for (const QString &line : w->graphView()->layout().nodes[dn].lines)
      if (line.startsWith("Conv")) {
        found = true;
        QVERIFY2(line.endsWith("/Conv\" #2"), qPrintable(line));
      }
    QVERIFY(found);
  }

  void openingViewShowsTheInputs() {
    for (QSize size : {QSize(1024, 700), QSize(1600, 1000)}) {
      w->resize(size);
      QVERIFY(open("tall_chain.onnx"));
      QCOMPARE(source()->operatorNodeCount(), 48);
      QString why;
      // Taller than the view: otherwise this checks nothing.
      QVERIFY(source()->layout().bounds.height() > source()->visibleSceneRect().height());
      QVERIFY2(inputsVisible(*source(), why), qPrintable(why));
      GraphView *graph = w->graphView();
      QVERIFY(graph->layout().bounds.height() > graph->visibleSceneRect().height());
      QVERIFY2(inputsVisible(*graph, why), qPrintable(why));
      // Fit after a scroll brings them back.
      graph->verticalScrollBar()->setValue(graph->verticalScrollBar()->maximum());
      QVERIFY(!inputsVisible(*graph, why));
      graph->fitToWindow();
      QVERIFY2(inputsVisible(*graph, why), qPrintable(why));
      QFile::remove(tmp.filePath("tall_chain.onnx"));
      w->closeDocument();
    }
  }
};

QTEST_MAIN(SourceGraphGuiTest)
#include "SourceGraphGuiTest.moc"
