//===- QuantizationGuiTest.cpp - int8 models in the workbench -------------===//
//
// Issue 12, item 7, on the real MainWindow (offscreen) with TensorFlow Lite
// Micro's person_detect.tflite (tests/data/models/int8; no model cache):
//   - the inspector shows the scale and zero point of the selected
//     dispatch's output tensor (the softmax writing the model output: scale
//     1/256 = 0.00390625, zero point -128, as the file records it; `flatc
//     --json` of the model prints 0.003906 and -128), and the per-channel
//     scales of its weights (CONV_2D #2: 16 scales, flatc prints 0.006953 to
//     0.016528, dimension 0; QuantizationInspectTest checks them bit for bit
//     against the file);
//   - graph edges and the memory plan count int8 bytes at 1 byte each (the
//     96x96x1 input is 9216 bytes);
//   - Compare runs on the integer build (default vs stripped);
//   - Run shows the int8 outputs: min, max, mean and the first values as
//     the stored integers (the panel once left them blank and showed the
//     dtype "|i1"), each checked against the run's own output array.
// With KILN_SCREENSHOT_DIR set, the window is saved there as
// person_detect_inspector.png (to look at; nothing is asserted on it).
//
//===----------------------------------------------------------------------===//
#include "GraphView.h"
#include "GuiTestSupport.h"
#include "InspectorView.h"
#include "MainWindow.h"
#include "PlanModels.h"
#include "ProjectController.h"
#include "RunPanel.h"
#include "Workbench.h"

#include "kiln/Npy.h"

#include <QDir>
#include <QItemSelectionModel>
#include <QLabel>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTreeWidget>
#include <QTreeWidgetItemIterator>
#include <QtTest>

using namespace kiln::views;
using namespace kiln::workbench;

class QuantizationGuiTest : public QObject {
  Q_OBJECT

  std::unique_ptr<MainWindow> w;
  QTemporaryDir tmp;

  /// The inspector's rows as "key value" lines.
  QString inspectorText() const {
    QStringList rows;
    for (QTreeWidgetItemIterator it(w->inspectorView()->tree()); *it; ++it)
      rows << (*it)->text(0) + " " + (*it)->text(1);
    return rows.join('\n');
  }

private slots:
  void initTestCase() {
    kiln::guitest::startTestSettings("kiln-quantization-gui-test");
    w = std::make_unique<MainWindow>();
    w->resize(1600, 1000);
    w->show();
    QVERIFY(QTest::qWaitForWindowExposed(w.get()));
    // A copy: the workbench may write a project file beside the model.
    QString model = tmp.filePath("person_detect.tflite");
    QVERIFY(QFile::copy(QStringLiteral(KILN_TEST_DATA_DIR "/models/int8/person_detect.tflite"), model));
    w->openFile(model);
    QVERIFY2(waitForCompile(*w), qPrintable(model));
  }

  void cleanupTestCase() { w.reset(); }

  void inspectorShowsOutputQuantization() {
    const kiln::CompilationPlan &plan = *w->document()->plan;
    QCOMPARE(plan.outputs.size(), size_t(1));
    const std::string output = plan.outputs.front().name;
    QCOMPARE(QString::fromStdString(output), QStringLiteral("MobilenetV1/Predictions/Reshape_1"));
    // The dispatch that completes the output tensor.
    const kiln::Dispatch *last = nullptr;
    for (const kiln::Dispatch &d : plan.dispatches)
      if (d.outputTensor == output)
        last = &d;
    QVERIFY(last);
    int row = w->dispatchModel()->rowOfDispatch(last->id);
    w->selectionModel()->setCurrentIndex(w->dispatchModel()->index(row, 0),
                                         QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    QTRY_COMPARE(w->inspectorView()->dispatch(), last->id);
    QString text = inspectorText();
    QVERIFY2(text.contains("Output quantization scale 0.00390625 zero point -128"), qPrintable(text));
    QVERIFY2(text.contains("tensor MobilenetV1/Predictions/Reshape_1"), qPrintable(text));
    // The binding of the model output names its quantization too.
    QVERIFY2(text.contains(QRegularExpression("writes buffer \\d+ \\[0, \\+2\\) output 1x2xi8, scale 0.00390625 "
                                              "zero point -128")),
             qPrintable(text));

    // A depthwise convolution's output (ReLU6 on 0..6 in int8: scale 6/255,
    // zero point -128; flatc prints 0.023529 and -128).
    const kiln::Dispatch &first = plan.dispatches.front();
    w->selectionModel()->setCurrentIndex(w->dispatchModel()->index(w->dispatchModel()->rowOfDispatch(first.id), 0),
                                         QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    QTRY_COMPARE(w->inspectorView()->dispatch(), first.id);
    text = inspectorText();
    QVERIFY2(text.contains("Output quantization scale 0.0235294 zero point -128"), qPrintable(text));

    // CONV_2D #2 (1x1, 8 -> 16 channels): its filter's per-channel scales.
    const kiln::Dispatch *conv = nullptr;
    for (const kiln::Dispatch &d : plan.dispatches)
      if (d.ops.size() == 1 && d.ops[0].sourceIndex == 2)
        conv = &d;
    QVERIFY(conv);
    w->selectionModel()->setCurrentIndex(w->dispatchModel()->index(w->dispatchModel()->rowOfDispatch(conv->id), 0),
                                         QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    QTRY_COMPARE(w->inspectorView()->dispatch(), conv->id);
    text = inspectorText();
    QVERIFY2(text.contains("Weights quantization per-channel: 16 scales, min 0.00695287 max 0.0165275, dimension 0"),
             qPrintable(text));
    QVERIFY2(text.contains("tensor MobilenetV1/Conv2d_1_pointwise/weights/read"), qPrintable(text));

    if (qEnvironmentVariableIsSet("KILN_SCREENSHOT_DIR")) {
      w->selectionModel()->setCurrentIndex(w->dispatchModel()->index(row, 0),
                                           QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
      QTRY_COMPARE(w->inspectorView()->dispatch(), last->id);
      QTest::qWait(200);
      QString path = QDir(qEnvironmentVariable("KILN_SCREENSHOT_DIR")).filePath("person_detect_inspector.png");
      QVERIFY(w->grab().save(path));
    }
  }

  void int8BytesInGraphAndMemory() {
    const kiln::CompilationPlan &plan = *w->document()->plan;
    // The input buffer: 96 x 96 x 1 int8 elements, 1 byte each.
    const kiln::Buffer *input = nullptr;
    for (const kiln::Buffer &b : plan.memory.buffers)
      if (b.kind == kiln::BufferKind::Input)
        input = &b;
    QVERIFY(input);
    QCOMPARE(QString::fromStdString(input->type), QStringLiteral("1x96x96x1xi8"));
    QCOMPARE(input->bytes, int64_t(96 * 96));
    // Its graph edge carries those bytes and says so.
    bool found = false;
    for (const GraphEdge &e : w->graphView()->layout().edges)
      if (e.buffer == input->id) {
        found = true;
        QCOMPARE(e.bytes, int64_t(9216));
        QCOMPARE(e.label, formatBytes(9216));
      }
    QVERIFY(found);
    // The arena holds every transient int8 buffer at its element count.
    for (const kiln::Buffer &b : plan.memory.buffers)
      if (b.kind == kiln::BufferKind::Transient && b.type.size() > 3 &&
          b.type.compare(b.type.size() - 3, 3, "xi8") == 0) {
        int64_t elements = 1;
        for (QStringView d : QStringView(QString::fromStdString(b.type)).split('x'))
          if (d != u"i8")
            elements *= d.toLongLong();
        QCOMPARE(b.bytes, elements);
      }
  }

  void runShowsTheInt8Outputs() {
    RunPanel *run = w->projectController()->runPanel();
    QSignalSpy finished(run, &RunPanel::runFinished);
    QVERIFY(run->run());
    QVERIFY(finished.wait(300000));
    QVERIFY2(finished.last().at(0).toBool(), qPrintable(run->messageLabel()->text()));
    const RunPanelResult &r = run->result();
    QCOMPARE(r.outputs.size(), size_t(1));
    const kiln::NpyArray &out = r.outputs[0];
    QCOMPARE(QString::fromStdString(out.dtype), QStringLiteral("|i1"));
    QCOMPARE(out.numElements(), int64_t(2)); // person, no person
    // The values, computed here from the output bytes.
    int64_t a = kiln::integerElement(out, 0), b = kiln::integerElement(out, 1);
    QTableWidget *t = run->outputTable();
    QCOMPARE(t->rowCount(), 1);
    QCOMPARE(t->item(0, 2)->text(), QString::number(std::min(a, b)));
    QCOMPARE(t->item(0, 3)->text(), QString::number(std::max(a, b)));
    QCOMPARE(t->item(0, 4)->text().toDouble(), (double(a) + double(b)) / 2);
    QCOMPARE(t->item(0, 5)->text(), QStringLiteral("%1, %2").arg(a).arg(b));
    // The softmax's two int8 probabilities (scale 1/256, zero point -128)
    // sum to about 1: (a + 128) + (b + 128) within 2 of 256.
    QVERIFY2(std::abs((a + 128) + (b + 128) - 256) <= 2,
             qPrintable(QStringLiteral("%1 %2").arg(a).arg(b)));
  }

  void compareRunsOnTheIntegerBuild() {
    QSignalSpy compared(w->projectController(), &ProjectController::compareFinished);
    w->projectController()->compareDefaultVsStripped();
    QVERIFY(compared.wait(300000));
    QVERIFY(compared.last().at(0).toBool());
    // Drawing every view (graph, memory, timeline, sizes, compare) succeeds.
    QCOMPARE(drawAllViews(*w), w->docks().size() + 1);
  }
};

QTEST_MAIN(QuantizationGuiTest)
#include "QuantizationGuiTest.moc"
