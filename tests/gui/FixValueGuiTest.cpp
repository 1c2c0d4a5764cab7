//===- FixValueGuiTest.cpp - Inputs fixed to values in the shapes panel ---===//
//
// Drives the real MainWindow (offscreen) over tests/data/onnx/fix_value/
// scale.onnx (x float32 [2,3], w float32 [3], sr int64 []; y = x * w +
// sr / 1000): the Tune dock's shapes panel offers the three small inputs
// for a value; 16000 typed for sr is one undoable step ("Value 16000 for
// sr"), saved in the project file as "fixed_values": {"sr": 16000}; the
// build then takes x and w only and records sr as fixed, and `kiln compile
// --project=` builds the same bytes. Text the recipe's parser refuses
// changes nothing; Undo and Redo take the value out and back; an emptied
// field unfixes the input. Over rate.onnx, the diagnostics say what became
// of its If "pick_rate" (selected at run time; then_branch taken once sr is
// fixed) and why.
//
//===----------------------------------------------------------------------===//
#include "DiagnosticsView.h"
#include "GuiTestSupport.h"
#include "MainWindow.h"
#include "ProjectController.h"
#include "ShapesPanel.h"
#include "TuningView.h"
#include "Workbench.h"

#include "kiln/Artifact.h"
#include "kiln/Project.h"

#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest>

using namespace kiln::views;
using namespace kiln::workbench;

class FixValueGuiTest : public QObject {
  Q_OBJECT

  QTemporaryDir tmp;
  std::unique_ptr<MainWindow> w;
  QString model;

  ProjectController *ctl() const { return w->projectController(); }

  static bool waitSignal(QSignalSpy &spy, int timeoutMs = 300000) {
    return spy.count() > 0 || spy.wait(timeoutMs);
  }
  bool waitBuilt() {
    return QTest::qWaitFor([&] { return !ctl()->isBuildPending(); }, 600000) && w->document() &&
           !w->document()->artifact.empty();
  }
  static QByteArray readAll(const QString &path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
  }
  static void type(QLineEdit *edit, const QString &text) {
    edit->setText(text);
    QTest::keyClick(edit, Qt::Key_Return);
  }
  /// What the shown artifact records: its inputs' names and fixed inputs.
  std::pair<QStringList, QStringList> signature() {
    QStringList inputs, fixed;
    const std::vector<uint8_t> &bytes = w->document()->artifact;
    auto info = kiln::verifyArtifact(bytes, "shown");
    if (!info) {
      llvm::consumeError(info.takeError());
      return {};
    }
    auto d = kiln::artifactDescriptionOf(*info, bytes, "shown");
    if (!d) {
      llvm::consumeError(d.takeError());
      return {};
    }
    for (const kiln::IOInfo &in : d->inputs)
      inputs << QString::fromStdString(in.name);
    for (const kiln::FixedInput &f : d->fixedInputs)
      fixed << QString::fromStdString(f.name + "=" + kiln::fixValueText(f.values));
    return {inputs, fixed};
  }

private slots:
  void initTestCase() {
    kiln::guitest::startTestSettings("kiln-workbench-fix-value-test");
    QVERIFY(tmp.isValid());
    model = tmp.filePath("scale.onnx");
    QVERIFY(QFile::copy(QStringLiteral(KILN_TEST_DATA_DIR "/onnx/fix_value/scale.onnx"), model));
    w = std::make_unique<MainWindow>();
    w->resize(1400, 900);
    w->show();
    QVERIFY(QTest::qWaitForWindowExposed(w.get()));
  }

  void cleanupTestCase() { w.reset(); }

  void valueTypedInTheShapesPanelIsAnUndoableStep() {
    w->openFile(model);
    QVERIFY2(waitForCompile(*w), qPrintable(w->diagnostics()->lastMessage()));
    QVERIFY(waitBuilt());
    QVERIFY(QTest::qWaitFor([&] { return !ctl()->isReadingValueInputs(); }, 60000));
    ShapesPanel *shapes = ctl()->tuningView()->shapes();
    QVERIFY(shapes->isVisibleTo(ctl()->tuningView()));
    // The three small inputs, in the model's order, none fixed yet.
    const std::vector<ValueInput> &offered = shapes->valueInputs();
    QCOMPARE(int(offered.size()), 3);
    QCOMPARE(offered[2].name, QStringLiteral("sr"));
    QCOMPARE(offered[2].elementType, QStringLiteral("int64"));
    QVERIFY(offered[2].shape.empty());
    QCOMPARE(offered[1].shape, (std::vector<int64_t>{3}));
    QCOMPARE(signature().first, (QStringList{"x", "w", "sr"}));
    QLineEdit *sr = shapes->valueEdit(2);
    QVERIFY(sr && sr->text().isEmpty());

    // 16000 for sr: one step, saved, re-planned, built without sr.
    const int steps = ctl()->undoStack()->count();
    QSignalSpy replanned(ctl(), &ProjectController::replanFinished);
    type(sr, "16000");
    QVERIFY(waitSignal(replanned));
    QVERIFY2(replanned.last().at(0).toBool(), qPrintable(w->diagnostics()->lastMessage()));
    QCOMPARE(ctl()->undoStack()->count(), steps + 1);
    QCOMPARE(ctl()->undoStack()->undoText(), QStringLiteral("Value 16000 for sr"));
    QCOMPARE(ctl()->project().recipe.fixedValues.at("sr"),
             (std::vector<kiln::FixedNumber>{int64_t(16000)}));
    QVERIFY2(waitBuilt(), qPrintable(w->diagnostics()->lastMessage()));
    QCOMPARE(signature().first, (QStringList{"x", "w"}));
    QCOMPARE(signature().second, (QStringList{"sr=16000"}));

    // The project file holds the value in the recipe's JSON form.
    auto saved = kiln::loadProject(ctl()->projectPath().toStdString());
    QVERIFY(bool(saved));
    QCOMPARE(saved->recipe.fixedValues.at("sr"), (std::vector<kiln::FixedNumber>{int64_t(16000)}));
    QByteArray text = readAll(ctl()->projectPath());
    QVERIFY2(text.contains("\"fixed_values\"") && text.contains("16000"), text.constData());
    // `kiln compile --project=` builds the same artifact.
    QProcess cli;
    cli.start(KILN_BINARY_PATH,
              {"compile", "--project=" + ctl()->projectPath(), "-o", tmp.filePath("cli.kiln")});
    QVERIFY(cli.waitForFinished(120000));
    QCOMPARE(cli.exitCode(), 0);
    QVERIFY(readAll(tmp.filePath("cli.kiln")) ==
            QByteArray(reinterpret_cast<const char *>(w->document()->artifact.data()),
                       qsizetype(w->document()->artifact.size())));

    // Text that is not a value: refused on the spot, nothing changes.
    QSignalSpy rejected(shapes, &ShapesPanel::rejected);
    type(sr, "16k");
    QCOMPARE(rejected.count(), 1);
    QVERIFY2(shapes->messageLabel()->text().contains("'16k' is not a number"),
             qPrintable(shapes->messageLabel()->text()));
    QCOMPARE(ctl()->undoStack()->count(), steps + 1);
    QCOMPARE(ctl()->project().recipe.fixedValues.at("sr"),
             (std::vector<kiln::FixedNumber>{int64_t(16000)}));

    // Undo: sr is an input again; Redo: fixed again.
    replanned.clear();
    ctl()->undoStack()->undo();
    QVERIFY(waitSignal(replanned));
    QVERIFY(ctl()->project().recipe.fixedValues.empty());
    QVERIFY(shapes->valueEdit(2)->text().isEmpty());
    QVERIFY(waitBuilt());
    QCOMPARE(signature().first, (QStringList{"x", "w", "sr"}));
    auto undone = kiln::loadProject(ctl()->projectPath().toStdString());
    QVERIFY(bool(undone) && undone->recipe.fixedValues.empty());
    replanned.clear();
    ctl()->undoStack()->redo();
    QVERIFY(waitSignal(replanned));
    QCOMPARE(shapes->valueEdit(2)->text(), QStringLiteral("16000"));
    QVERIFY(waitBuilt());
    QCOMPARE(signature().first, (QStringList{"x", "w"}));

    // A small tensor's value, then an emptied field unfixes sr.
    replanned.clear();
    type(shapes->valueEdit(1), "[0.5, -1, 2]");
    QVERIFY(waitSignal(replanned));
    QCOMPARE(ctl()->undoStack()->undoText(), QStringLiteral("Value [0.5, -1, 2] for w"));
    QCOMPARE(ctl()->project().recipe.fixedValues.at("w"),
             (std::vector<kiln::FixedNumber>{0.5, int64_t(-1), int64_t(2)}));
    replanned.clear();
    type(sr, "");
    QVERIFY(waitSignal(replanned));
    QCOMPARE(ctl()->undoStack()->undoText(), QStringLiteral("Input sr not fixed"));
    QCOMPARE(int(ctl()->project().recipe.fixedValues.count("sr")), 0);
    QVERIFY(waitBuilt());
    QCOMPARE(signature().first, (QStringList{"x", "sr"}));
    QCOMPARE(signature().second, (QStringList{"w=0.5,-1,2"}));
  }

  /// The last diagnostics message naming `what` (empty if none).
  QString lastNoteAbout(const QString &what) const {
    DiagnosticsView *d = w->diagnostics();
    for (int i = d->topLevelItemCount() - 1; i >= 0; --i)
      if (d->topLevelItem(i)->text(2).contains(what))
        return d->topLevelItem(i)->text(2);
    return {};
  }

  // rate.onnx's If "pick_rate" on Equal(sr, 16000): unfixed, both branches
  // run and select; with sr fixed to 16000 in the shapes panel, the
  // diagnostics say the then_branch was taken because of sr's value.
  void diagnosticsSayWhatBecameOfEachIf() {
    QString rate = tmp.filePath("rate.onnx");
    QVERIFY(QFile::copy(QStringLiteral(KILN_TEST_DATA_DIR "/onnx/fix_value/rate.onnx"), rate));
    w->openFile(rate);
    QVERIFY2(waitForCompile(*w), qPrintable(w->diagnostics()->lastMessage()));
    QVERIFY(waitBuilt());
    QString note = lastNoteAbout(QStringLiteral("If \"pick_rate\""));
    QVERIFY2(note.contains("both branches, selected at run time") && note.contains("'sr'"),
             qPrintable(note));
    QVERIFY(QTest::qWaitFor([&] { return !ctl()->isReadingValueInputs(); }, 60000));
    QSignalSpy replanned(ctl(), &ProjectController::replanFinished);
    type(ctl()->tuningView()->shapes()->valueEdit(1), "16000"); // x, sr, w, flag
    QVERIFY(waitSignal(replanned));
    QVERIFY2(waitBuilt(), qPrintable(w->diagnostics()->lastMessage()));
    QVERIFY(QTest::qWaitFor(
        [&] {
          return lastNoteAbout(QStringLiteral("If \"pick_rate\"")).contains("then_branch taken");
        },
        120000));
    note = lastNoteAbout(QStringLiteral("If \"pick_rate\""));
    QVERIFY2(note.contains("the value of input 'sr' (--fix-value)"), qPrintable(note));
  }
};

QTEST_MAIN(FixValueGuiTest)
#include "FixValueGuiTest.moc"
