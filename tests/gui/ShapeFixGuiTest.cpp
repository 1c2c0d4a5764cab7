//===- ShapeFixGuiTest.cpp - Two dynamic dimensions in the shapes panel ---===//
//
// Drives the real MainWindow (offscreen) over the hand-built audio model of
// tests/support/ShapeFixModels.h (input 'audio' [-1,-1]: batch, samples):
// the failed open's Diagnostics button opens it with the compiler's
// suggestion (1 x 2000), then the Tune dock's shapes panel offers one field
// per dynamic dimension, holding those sizes; 2
// and 8000 typed there are saved in the project file as [2, 8000], the
// build takes them (input [2,8000], outputs [2] and [8,3] by shape
// inference), and `kiln compile --project=` builds the same artifact. A
// size the RESHAPE cannot take is reported naming the operator; Undo
// restores the good one. The failed open's suggestion travels as data
// (MainWindow::lastUnfixedInputs). Last, an ONNX model with a symbolic
// batch (tests/data/model_inputs/symbolic_n.onnx) opens, is fixed by the same
// button, shows its symbol "N" in the shapes panel and its node names in
// the plan. A TFLite batch that records its size opens at it, with the
// compiler's warning in Diagnostics.
//
//===----------------------------------------------------------------------===//
#include "DiagnosticsView.h"
#include "GuiTestSupport.h"
#include "MainWindow.h"
#include "ProjectController.h"
#include "ShapeFixModels.h"
#include "ShapesPanel.h"
#include "TuningView.h"
#include "Workbench.h"

#include "kiln/Artifact.h"
#include "kiln/Plan.h"
#include "kiln/Project.h"

#include <QAbstractButton>
#include <QFile>
#include <QFileInfo>
#include <QLineEdit>
#include <QProcess>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest>

using namespace kiln::views;
using namespace kiln::workbench;

class ShapeFixGuiTest : public QObject {
  Q_OBJECT

  QTemporaryDir tmp;
  std::unique_ptr<MainWindow> w;
  QString model;

  ProjectController *ctl() const { return w->projectController(); }

  static bool waitSignal(QSignalSpy &spy, int timeoutMs = 300000) { return spy.count() > 0 || spy.wait(timeoutMs); }
  bool waitBuilt() {
    return QTest::qWaitFor([&] { return !ctl()->isBuildPending(); }, 600000) && w->document() &&
           !w->document()->artifact.empty();
  }
  static QByteArray readAll(const QString &path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
  }
  /// Types `text` into `edit` and presses Return.
  static void type(QLineEdit *edit, const QString &text) {
    edit->setText(text);
    QTest::keyClick(edit, Qt::Key_Return);
  }

private slots:
  void initTestCase() {
    kiln::guitest::startTestSettings("kiln-workbench-shape-fix-test");
    QVERIFY(tmp.isValid());
    model = tmp.filePath("audio.tflite");
    QVERIFY(kiln::test::writeAudioModel(model.toStdString()));
    w = std::make_unique<MainWindow>();
    w->resize(1400, 900);
    w->show();
    QVERIFY(QTest::qWaitForWindowExposed(w.get()));
  }

  void cleanupTestCase() { w.reset(); }

  void failedOpenCarriesTheSuggestionAsData() {
    w->openFile(model);
    QVERIFY(!waitForCompile(*w));
    // The import's data, not the message's text: input, dimensions, sizes.
    const std::vector<DynamicInput> &unfixed = w->lastUnfixedInputs();
    QCOMPARE(int(unfixed.size()), 1);
    QCOMPARE(unfixed[0].name, QStringLiteral("audio"));
    QCOMPARE(unfixed[0].index, 0);
    QCOMPARE(unfixed[0].signature, (std::vector<int64_t>{-1, -1}));
    QCOMPARE(unfixed[0].suggestion, (std::vector<int64_t>{1, 2000}));
    QAbstractButton *fix = w->diagnostics()->fixButton(w->diagnostics()->topLevelItemCount() - 1);
    QVERIFY(fix);
    QVERIFY2(fix->text().contains(QStringLiteral("'audio' to 1\u00d72000")), qPrintable(fix->text()));
  }

  void twoDynamicDimensionsFixedInShapesPanel() {
    w->openFile(model);
    QVERIFY(!waitForCompile(*w)); // [-1,-1] does not compile as is
    QVERIFY(w->diagnostics()->lastMessage().contains("dynamic dimensions 0 and 1"));
    QVERIFY(ctl()->modelPath().isEmpty()); // a failed open changes nothing else
    QAbstractButton *fix = w->diagnostics()->fixButton(w->diagnostics()->topLevelItemCount() - 1);
    QVERIFY(fix);
    fix->click();
    QVERIFY2(waitForCompile(*w), qPrintable(w->diagnostics()->lastMessage()));
    QCOMPARE(ctl()->project().recipe.fixedShapes.at("audio"), (std::vector<int64_t>{1, 2000}));
    QVERIFY(QTest::qWaitFor([&] { return !ctl()->isDiscovering(); }, 60000));
    QCOMPARE(int(ctl()->dynamicInputs().size()), 1);
    QCOMPARE(ctl()->dynamicInputs()[0].signature, (std::vector<int64_t>{-1, -1}));
    ShapesPanel *shapes = ctl()->tuningView()->shapes();
    QVERIFY(shapes->isVisibleTo(ctl()->tuningView()));
    QLineEdit *batch = shapes->edit(0, 0), *samples = shapes->edit(0, 1);
    QVERIFY(batch && !batch->isReadOnly());
    QVERIFY(samples && !samples->isReadOnly());
    QCOMPARE(batch->text(), QStringLiteral("1"));
    QCOMPARE(samples->text(), QStringLiteral("2000"));

    // One size per dimension: samples first, then the batch.
    QSignalSpy replanned(ctl(), &ProjectController::replanFinished);
    type(samples, "8000");
    QVERIFY(waitSignal(replanned));
    QCOMPARE(ctl()->project().recipe.fixedShapes.at("audio"), (std::vector<int64_t>{1, 8000}));
    replanned.clear();
    type(batch, "2");
    QVERIFY(waitSignal(replanned));
    QVERIFY2(replanned.last().at(0).toBool(), qPrintable(w->diagnostics()->lastMessage()));
    QCOMPARE(ctl()->project().recipe.fixedShapes.at("audio"), (std::vector<int64_t>{2, 8000}));
    QVERIFY2(waitBuilt(), qPrintable(w->diagnostics()->lastMessage()));

    // The project file holds both sizes.
    auto saved = kiln::loadProject(ctl()->projectPath().toStdString());
    QVERIFY(bool(saved));
    QCOMPARE(saved->recipe.fixedShapes.at("audio"), (std::vector<int64_t>{2, 8000}));

    // The compiled plan: input [2,8000]; sums one per batch row, features
    // one row per 2000 samples (16000 / 2000 = 8) of 3 units.
    auto desc = kiln::describeArtifact(w->document()->artifact);
    QVERIFY(bool(desc));
    QCOMPARE(desc->inputs[0].shape, (std::vector<int64_t>{2, 8000}));
    QCOMPARE(int(desc->outputs.size()), 2);
    QCOMPARE(desc->outputs[0].shape, (std::vector<int64_t>{2}));
    QCOMPARE(desc->outputs[1].shape, (std::vector<int64_t>{8, 3}));

    // `kiln compile --project=` builds the same artifact.
    QProcess cli;
    cli.start(KILN_BINARY_PATH, {"compile", "--project=" + ctl()->projectPath(), "-o", tmp.filePath("cli.kiln")});
    QVERIFY(cli.waitForFinished(120000));
    QCOMPARE(cli.exitCode(), 0);
    QVERIFY(readAll(tmp.filePath("cli.kiln")) ==
            QByteArray(reinterpret_cast<const char *>(w->document()->artifact.data()),
                       qsizetype(w->document()->artifact.size())));

    // 2 x 1500 = 3000 samples do not fill whole 2000-sample frames: the
    // RESHAPE says so.
    replanned.clear();
    type(samples, "1500");
    QVERIFY(waitSignal(replanned));
    QVERIFY(!replanned.last().at(0).toBool());
    QCOMPARE(ctl()->project().recipe.fixedShapes.at("audio"), (std::vector<int64_t>{2, 1500}));
    QVERIFY(QTest::qWaitFor([&] { return !w->isCompiling(); }, 300000));
    QString last = w->diagnostics()->lastMessage();
    QVERIFY2(last.contains("operator #2 (RESHAPE)") && last.contains("multiple of 2000"), qPrintable(last));
    QVERIFY(!last.contains("corrupted"));

    // Undo: back to 2 x 8000.
    replanned.clear();
    ctl()->undoStack()->undo();
    QVERIFY(waitSignal(replanned));
    QVERIFY(replanned.last().at(0).toBool());
    QCOMPARE(ctl()->project().recipe.fixedShapes.at("audio"), (std::vector<int64_t>{2, 8000}));
    QCOMPARE(shapes->edit(0, 1)->text(), QStringLiteral("8000"));
    QVERIFY(waitBuilt());
  }

  /// An ONNX model with a symbolic batch (tests/data/model_inputs/symbolic_n.onnx:
  /// x [N,4], b [1,4], Relu "relu#1" + Add): opened from the file, fixed
  /// with the Diagnostics button, its dimension's symbol in Tune's shapes
  /// panel, and its nodes named in the plan.
  void onnxSymbolicBatchFixedAndShown() {
    QString onnx = tmp.filePath("symbolic_n.onnx");
    QVERIFY(QFile::copy(QStringLiteral(KILN_TEST_DATA_DIR "/model_inputs/symbolic_n.onnx"), onnx));
    w->openFile(onnx);
    QVERIFY(!waitForCompile(*w));
    const std::vector<DynamicInput> &unfixed = w->lastUnfixedInputs();
    QCOMPARE(int(unfixed.size()), 1);
    QCOMPARE(unfixed[0].name, QStringLiteral("x"));
    QCOMPARE(unfixed[0].signature, (std::vector<int64_t>{-1, 4}));
    QCOMPARE(unfixed[0].dimNames[0], QStringLiteral("N"));
    QCOMPARE(unfixed[0].suggestion, (std::vector<int64_t>{1, 4}));
    QAbstractButton *fix = w->diagnostics()->fixButton(w->diagnostics()->topLevelItemCount() - 1);
    QVERIFY(fix);
    fix->click();
    QVERIFY2(waitForCompile(*w), qPrintable(w->diagnostics()->lastMessage()));
    QCOMPARE(ctl()->modelPath(), QFileInfo(onnx).absoluteFilePath());
    QCOMPARE(ctl()->project().recipe.fixedShapes.at("x"), (std::vector<int64_t>{1, 4}));
    QVERIFY(QTest::qWaitFor([&] { return !ctl()->isDiscovering(); }, 60000));
    QCOMPARE(int(ctl()->dynamicInputs().size()), 1);
    QCOMPARE(ctl()->dynamicInputs()[0].name, QStringLiteral("x"));
    QLineEdit *batch = ctl()->tuningView()->shapes()->edit(0, 0);
    QVERIFY(batch && !batch->isReadOnly());
    QCOMPARE(batch->placeholderText(), QStringLiteral("N"));
    QCOMPARE(batch->text(), QStringLiteral("1"));
    // The plan's source operators: op type, node name (its '#' kept), index.
    QVERIFY(w->document() && w->document()->plan);
    bool relu = false, add = false;
    for (const kiln::Dispatch &d : w->document()->plan->dispatches)
      for (const kiln::SourceOp &op : d.ops) {
        relu |= op.name == "Relu \"relu#1\"" && op.sourceIndex == 0;
        add |= op.name == "Add \"add\"" && op.sourceIndex == 1;
      }
    QVERIFY(relu && add);
    QVERIFY(waitBuilt());
  }

  /// A TFLite batch -1 recorded as 1 (writePairModel: a and b [-1,4],
  /// shape [1,4]) opens with no --fix-shape at [1,4], as TFLite runs it;
  /// Diagnostics shows the compiler's warning, and Tune's shapes panel
  /// offers each batch, showing the recorded size.
  void recordedBatchOpensAtItsRecordedShape() {
    QString pair = tmp.filePath("pair.tflite");
    QVERIFY(kiln::test::writePairModel(pair.toStdString()));
    int warningsBefore = w->diagnostics()->count(DiagnosticsView::Severity::Warning);
    w->openFile(pair);
    QVERIFY2(waitForCompile(*w), qPrintable(w->diagnostics()->lastMessage()));
    QCOMPARE(ctl()->modelPath(), QFileInfo(pair).absoluteFilePath());
    QVERIFY(ctl()->project().recipe.fixedShapes.empty());
    QVERIFY(w->document() && w->document()->plan);
    QCOMPARE(w->diagnostics()->count(DiagnosticsView::Severity::Warning), warningsBefore + 1);
    QString warning;
    for (int i = 0; i < w->diagnostics()->topLevelItemCount(); ++i)
      if (w->diagnostics()->topLevelItem(i)->text(2).contains(QStringLiteral("recorded shape")))
        warning = w->diagnostics()->topLevelItem(i)->text(2);
    QVERIFY2(warning.contains(
                 QStringLiteral("input 'a' (input 0) has a dynamic dimension 0 (shape signature "
                                "[-1,4]): compiled at its recorded shape 1x4")),
             qPrintable(warning));
    QVERIFY2(
        warning.contains(QStringLiteral("Tune's dynamic input dimensions (on the command line: "
                                        "--fix-shape=a=Nx4")),
        qPrintable(warning));
    QVERIFY(QTest::qWaitFor([&] { return !ctl()->isDiscovering(); }, 60000));
    QCOMPARE(int(ctl()->dynamicInputs().size()), 2);
    QCOMPARE(ctl()->dynamicInputs()[1].name, QStringLiteral("b"));
    QCOMPARE(ctl()->dynamicInputs()[1].suggestion, (std::vector<int64_t>{1, 4}));
    // Not fixed: empty, the recorded size shown as the field's placeholder.
    QLineEdit *batch = ctl()->tuningView()->shapes()->edit(1, 0);
    QVERIFY(batch && !batch->isReadOnly());
    QCOMPARE(batch->text(), QString());
    QCOMPARE(batch->placeholderText(), QStringLiteral("1"));
    QVERIFY(waitBuilt());
  }
};

QTEST_MAIN(ShapeFixGuiTest)
#include "ShapeFixGuiTest.moc"
