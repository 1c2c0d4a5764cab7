//===- OpenFlowTest.cpp - Plan first, one state per model, shape fix ------===//
//
// Drives the real MainWindow (offscreen) through opening files:
//   - the plan is shown (every view filled from it, no artifact yet) while
//     code generation runs, and is the plan the core computes;
//   - a file that fails to open, or an open cancelled with Esc, changes
//     the diagnostics only: document, Tune's model, project file and title
//     stay, and Ctrl+B then builds the model shown;
//   - the Diagnostics button of a dynamic-dimension message fills Tune's
//     shapes field, is one undoable step, and is saved so that reopening
//     compiles at once;
//   - the status bar's text after each phase; the selection, the graph's
//     viewport and Tune's row survive a re-plan and code generation.
// Times are never asserted (the benchmark records them).
//
//===----------------------------------------------------------------------===//
#include "DiagnosticsView.h"
#include "GraphView.h"
#include "GuiTestSupport.h"
#include "MainWindow.h"
#include "PlanModels.h"
#include "ProjectController.h"
#include "ShapesPanel.h"
#include "TuningModel.h"
#include "TuningView.h"
#include "Workbench.h"

#include "kiln/Artifact.h"
#include "kiln/Project.h"

#include <QAbstractButton>
#include <QFile>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QScrollBar>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest>

using namespace kiln::guitest;
using namespace kiln::views;
using namespace kiln::workbench;

class OpenFlowTest : public QObject {
  Q_OBJECT

  QTemporaryDir tmp;
  std::unique_ptr<MainWindow> w;

  ProjectController *ctl() const { return w->projectController(); }

  /// A fresh copy: the copy's project file from an earlier test is removed.
  QString copyModel(const QString &from, const QString &name) {
    QFile::remove(QString::fromStdString(kiln::projectPathFor(tmp.filePath(name).toStdString())));
    return copyModelTo(tmp.path(), from, name);
  }

  /// What must not change when an open fails or is cancelled.
  struct State {
    QString document, model, project, title;
    bool tuneEnabled;
    int undo;
    bool operator==(const State &o) const {
      return document == o.document && model == o.model && project == o.project && title == o.title &&
             tuneEnabled == o.tuneEnabled && undo == o.undo;
    }
  };
  State state() const {
    return {w->document() ? w->document()->path : QString(), ctl()->modelPath(), ctl()->projectPath(),
            w->windowTitle(), ctl()->tuningView()->isEnabled(), ctl()->undoStack()->count()};
  }
  static const char *describe(const State &s) {
    static QByteArray text;
    text = QStringLiteral("doc=%1 model=%2 project=%3 title=%4").arg(s.document, s.model, s.project, s.title).toUtf8();
    return text.constData();
  }

  bool waitBuilt() {
    return QTest::qWaitFor([&] { return !ctl()->isBuildPending() && !ctl()->isReplanning(); }, 600000) &&
           w->document() && !w->document()->artifact.empty();
  }

private slots:
  void initTestCase() {
    startTestSettings("kiln-workbench-open-flow-test");
    QVERIFY(tmp.isValid());
    QVERIFY2(QFile::exists(modelPath("blazeface")), "run the fetch_models fixture first");
    w = std::make_unique<MainWindow>();
    w->resize(1600, 1000);
    w->show();
    QVERIFY(QTest::qWaitForWindowExposed(w.get()));
  }

  void cleanupTestCase() { w.reset(); }

  void planIsShownBeforeCode() {
    QString model = copyModel(modelPath("blazeface"), "blazeface.tflite");
    auto independent = kiln::planModel(model.toStdString(), {});
    QVERIFY(bool(independent));
    const kiln::CompilationPlan &want = **independent;

    // The first document shown is the plan: views filled, no code yet.
    std::shared_ptr<const ModelDocument> first;
    bool compilingThen = false;
    int rowsThen = -1, nodesThen = -1;
    QString statusThen;
    auto c = connect(w.get(), &MainWindow::documentShown, this, [&] {
      if (first)
        return;
      first = w->document();
      compilingThen = w->isCompiling();
      rowsThen = w->dispatchModel()->rowCount();
      nodesThen = w->graphView()->dispatchNodeCount();
      statusThen = w->statusText();
    });
    w->openFile(model);
    QVERIFY(w->statusText().contains("Planning blazeface.tflite"));
    QVERIFY2(waitForCompile(*w), qPrintable(w->diagnostics()->lastMessage()));
    disconnect(c);
    QVERIFY(first);
    QVERIFY(compilingThen);
    QVERIFY(first->artifact.empty());
    QVERIFY(!first->sizes);
    QCOMPARE(first->plan->dispatches.size(), want.dispatches.size());
    QCOMPARE(first->plan->schedule.commands.size(), want.schedule.commands.size());
    QCOMPARE(first->plan->memory.arenaBytes, want.memory.arenaBytes);
    QCOMPARE(rowsThen, int(want.dispatches.size()));
    QCOMPARE(nodesThen, int(want.dispatches.size()));
    QVERIFY2(statusThen.contains("planned in") && statusThen.contains("generating code"), qPrintable(statusThen));
    // Tune followed the model as soon as its plan was shown.
    QCOMPARE(ctl()->modelPath(), model);

    // Code generation filled the artifact and sizes; the plan drawn stays.
    auto doc = w->document();
    QVERIFY(!doc->artifact.empty());
    QVERIFY(doc->sizes && doc->strippedSizes);
    QCOMPARE(doc->plan, first->plan);
    QCOMPARE(doc->sizes->fileBytes, int64_t(doc->artifact.size()));
    QString status = w->statusText();
    QVERIFY2(status.contains(QStringLiteral("artifact %1 bytes").arg(doc->sizes->fileBytes)), qPrintable(status));
    QVERIFY2(status.contains(QStringLiteral("stripped %1").arg(doc->strippedSizes->fileBytes)), qPrintable(status));
    QVERIFY2(!status.contains(QChar(0x2026)), qPrintable(status)); // no phase left "running…"
  }

  void failedOpenChangesNothing_data() {
    QTest::addColumn<QString>("path");
    QTest::newRow("garbled") << badModelPath("garbled");
    QTest::newRow("dynamic_batch") << badModelPath("dynamic_batch");
    QTest::newRow("not_tflite") << badModelPath("not_tflite");
  }

  void failedOpenChangesNothing() {
    QFETCH(QString, path);
    QVERIFY(w->document());
    const State before = state();
    QVERIFY(!before.model.isEmpty());
    // Rejected input: a warning (item 9), no error.
    int errors = w->diagnostics()->count(DiagnosticsView::Severity::Error);
    int warnings = w->diagnostics()->count(DiagnosticsView::Severity::Warning);
    w->openFile(path);
    QVERIFY(!waitForCompile(*w));
    QCOMPARE(w->diagnostics()->count(DiagnosticsView::Severity::Warning), warnings + 1);
    QCOMPARE(w->diagnostics()->count(DiagnosticsView::Severity::Error), errors);
    QVERIFY(state() == before);
    QVERIFY2(state() == before, describe(state()));
    QVERIFY(!ctl()->tuningView()->messageLabel()->text().contains("The build failed"));
    QString status = w->statusText();
    QVERIFY2(status.contains(QFileInfo(path).fileName()) && status.contains("failed") &&
                 status.contains(QFileInfo(before.document).fileName()),
             qPrintable(status));

    // Ctrl+B builds the model shown, not the file that failed.
    QSignalSpy shown(w.get(), &MainWindow::documentShown);
    w->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(w.get()));
    QTest::keyClick(w.get(), Qt::Key_B, Qt::ControlModifier);
    QVERIFY(w->isCompiling());
    QVERIFY2(waitForCompile(*w), qPrintable(w->diagnostics()->lastMessage()));
    QVERIFY(shown.count() > 0);
    QCOMPARE(w->document()->path, before.document);
    QVERIFY(state() == before);
    QVERIFY(!w->document()->artifact.empty());
    QVERIFY(ctl()->tuningView()->messageLabel()->text().startsWith("Built in"));
  }

  void cancelChangesNothing() {
    QVERIFY(w->document());
    const State before = state();
    auto doc = w->document();
    w->openFile(modelPath("alexa"));
    QVERIFY(w->isCompiling());
    w->activateWindow();
    QTest::keyClick(w.get(), Qt::Key_Escape); // Build > Cancel Compilation
    QVERIFY(!waitForCompile(*w));
    QVERIFY(w->lastOpenCancelled());
    QCOMPARE(w->document(), doc);
    QVERIFY2(state() == before, describe(state()));
    QCOMPARE(w->diagnostics()->lastMessage(), QStringLiteral("compilation cancelled"));
    QString status = w->statusText();
    QVERIFY2(status.contains("alexa.tflite was cancelled") && status.contains("still shown"), qPrintable(status));
    QVERIFY(!ctl()->tuningView()->messageLabel()->text().contains("failed"));
  }

  void selectionAndViewportSurviveReplan() {
    auto doc = w->document();
    QVERIFY(doc && !doc->isArtifact);
    const auto &ds = doc->plan->dispatches;
    QVERIFY(ds.size() > 4);
    const int64_t id = ds[ds.size() / 2].id;
    w->selectDispatch(id);
    GraphView *g = w->graphView();
    g->resetTransform();
    g->scale(1.25, 1.25);
    g->centerOn(g->nodeRect(id).center());
    QApplication::processEvents();
    const QTransform zoom = g->transform();
    const QPointF centre = g->mapToScene(g->viewport()->rect().center());
    // Tune's row follows the window's selection.
    TuningView *tune = ctl()->tuningView();
    QCOMPARE(tune->table()->selectionModel()->currentIndex().row(), tune->model()->rowOfDispatch(id));

    // A setting that keeps the dispatches: re-plan, then code generation.
    QSignalSpy replanned(ctl(), &ProjectController::replanFinished);
    kiln::Project p = ctl()->project();
    p.recipe.profile = p.recipe.profile == "stripped" ? "default" : "stripped";
    ctl()->setProject(p, "profile");
    QVERIFY(replanned.count() > 0 || replanned.wait(120000));
    QVERIFY(replanned.last().at(0).toBool());
    QVERIFY2(waitBuilt(), qPrintable(w->diagnostics()->lastMessage()));
    QVERIFY(w->document() != doc);
    QModelIndex cur = w->selectionModel()->currentIndex();
    QVERIFY(cur.isValid());
    QCOMPARE(w->dispatchModel()->dispatchAt(cur.row()), id);
    QCOMPARE(g->transform(), zoom);
    // The same scene point in the middle of the viewport (scroll bars move
    // by whole pixels).
    QPoint was = g->mapFromScene(centre), mid = g->viewport()->rect().center();
    QVERIFY2(std::abs(was.x() - mid.x()) <= 2 && std::abs(was.y() - mid.y()) <= 2,
             qPrintable(QStringLiteral("%1,%2 vs %3,%4").arg(was.x()).arg(was.y()).arg(mid.x()).arg(mid.y())));
    QCOMPARE(tune->table()->selectionModel()->currentIndex().row(), tune->model()->rowOfDispatch(id));
    // Highlighted, not only current: Tune's row and the graph's node.
    QVERIFY(tune->table()->selectionModel()->isRowSelected(tune->model()->rowOfDispatch(id), QModelIndex()));
    QCOMPARE(g->selectedDispatch(), id);
    QString status = w->statusText();
    QVERIFY2(status.contains("artifact") && !status.contains(QChar(0x2026)), qPrintable(status));

    // And the other way: a row chosen in Tune selects its dispatch.
    const int64_t other = ds.front().id;
    tune->table()->selectionModel()->setCurrentIndex(tune->model()->index(tune->model()->rowOfDispatch(other), 0),
                                                     QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    QCOMPARE(w->dispatchModel()->dispatchAt(w->selectionModel()->currentIndex().row()), other);
    ctl()->undoStack()->undo();
    QVERIFY(waitBuilt());
  }

  /// Esc during the code generation that follows a re-plan: Tune says the
  /// code was cancelled, never still "code generation follows".
  void cancelledCodeGenerationIsSaid() {
    QSignalSpy replanned(ctl(), &ProjectController::replanFinished);
    ctl()->setBuildDelay(60000); // the build waits for buildNow()
    kiln::Project p = ctl()->project();
    p.recipe.fusion = !p.recipe.fusion;
    ctl()->setProject(p, "fusion");
    QVERIFY(replanned.count() > 0 || replanned.wait(120000));
    QVERIFY(replanned.last().at(0).toBool());
    QLabel *message = ctl()->tuningView()->messageLabel();
    QVERIFY2(message->text().contains("code generation follows"), qPrintable(message->text()));
    ctl()->buildNow();
    QVERIFY(w->isCompiling());
    w->activateWindow();
    QTest::keyClick(w.get(), Qt::Key_Escape);
    QVERIFY(QTest::qWaitFor([&] { return !w->isCompiling(); }, 120000));
    QCoreApplication::processEvents();
    QVERIFY2(message->text().startsWith("Code generation cancelled"), qPrintable(message->text()));
    QVERIFY(!message->text().contains("follows"));
    ctl()->setBuildDelay(800); // the default
    ctl()->undoStack()->undo();
    QVERIFY(waitBuilt());
  }

  void shapeFixFromDiagnostics() {
    QString model = copyModel(badModelPath("dynamic_batch"), "fix_me.tflite");
    QString projectFile = QString::fromStdString(kiln::projectPathFor(model.toStdString()));
    const State before = state();
    w->openFile(model);
    QVERIFY(!waitForCompile(*w));
    QVERIFY(state() == before); // Tune stays on the model shown
    int row = w->diagnostics()->topLevelItemCount() - 1;
    QString message = w->diagnostics()->lastMessage();
    // The import's data (kiln::UnfixedInputError), not the message's text.
    QCOMPARE(int(w->lastUnfixedInputs().size()), 1);
    const DynamicInput in = w->lastUnfixedInputs()[0];
    QVERIFY(!in.suggestion.empty());
    QVERIFY2(message.contains("fix it with the button below"), qPrintable(message)); // the GUI's fix first
    QAbstractButton *fix = w->diagnostics()->fixButton(row);
    QVERIFY(fix);
    QVERIFY(fix->isVisibleTo(w->diagnostics()));
    QVERIFY2(fix->text().startsWith("Fix ") && fix->text().endsWith(" and open") && !fix->text().contains("--"),
             qPrintable(fix->text()));

    QTest::mouseClick(fix, Qt::LeftButton);
    QVERIFY(!fix->isEnabled()); // used: the fix is the project's now
    QVERIFY2(waitForCompile(*w), qPrintable(w->diagnostics()->lastMessage()));
    QVERIFY(QTest::qWaitFor([&] { return !ctl()->isDiscovering(); }, 60000));
    QCOMPARE(w->document()->path, model);
    QCOMPARE(ctl()->modelPath(), model);
    QCOMPARE(ctl()->projectPath(), projectFile);
    QVERIFY(w->windowTitle().startsWith("fix_me.tflite"));
    // The Tune field holds the size; one undoable step; saved.
    const std::vector<int64_t> &fixed = ctl()->project().recipe.fixedShapes.begin()->second;
    QCOMPARE(fixed, in.suggestion);
    QLineEdit *batch = ctl()->tuningView()->shapes()->edit(0, 0);
    QVERIFY(batch);
    QCOMPARE(batch->text(), QString::number(in.suggestion[0]));
    QCOMPARE(ctl()->undoStack()->count(), 1);
    auto saved = kiln::loadProject(projectFile.toStdString());
    QVERIFY(bool(saved));
    QCOMPARE(saved->recipe.fixedShapes.begin()->second, in.suggestion);
    auto desc = kiln::describeArtifact(w->document()->artifact);
    QVERIFY(bool(desc));
    QCOMPARE(desc->inputs[0].shape, in.suggestion);
    // Undo is one step back to no fix (and the dynamic batch again).
    QSignalSpy replanned(ctl(), &ProjectController::replanFinished);
    ctl()->undoStack()->undo();
    QVERIFY(ctl()->project().recipe.fixedShapes.empty());
    QVERIFY(!kiln::loadProject(projectFile.toStdString()) ||
            kiln::loadProject(projectFile.toStdString())->recipe.fixedShapes.empty());
    QVERIFY(replanned.count() > 0 || replanned.wait(120000));
    QVERIFY(!replanned.last().at(0).toBool());
    // The views keep the fixed build, and the status bar says they do.
    QVERIFY2(w->statusText().contains("the last settings that built"), qPrintable(w->statusText()));
    // ... and Run on Host does not run that build as if it were these settings'.
    QVERIFY(w->isStale());
    for (QAction *a : w->findChildren<QAction *>())
      if (a->shortcut() == QKeySequence(Qt::CTRL | Qt::Key_R))
        QVERIFY(!a->isEnabled());
    ctl()->undoStack()->redo();
    QVERIFY(waitBuilt());

    // Closing and reopening: it compiles at once with the saved size.
    w->closeDocument();
    QVERIFY(ctl()->modelPath().isEmpty());
    QCOMPARE(w->windowTitle(), QStringLiteral("Kiln Workbench"));
    w->openFile(model);
    QVERIFY2(waitForCompile(*w), qPrintable(w->diagnostics()->lastMessage()));
    QVERIFY(QTest::qWaitFor([&] { return !ctl()->isDiscovering(); }, 60000));
    QCOMPARE(ctl()->tuningView()->shapes()->edit(0, 0)->text(), QString::number(in.suggestion[0]));
    QCOMPARE(kiln::describeArtifact(w->document()->artifact)->inputs[0].shape, in.suggestion);
  }

  void refusedSettingIsAWarning() {
    int warnings = w->diagnostics()->count(DiagnosticsView::Severity::Warning);
    int errors = w->diagnostics()->count(DiagnosticsView::Severity::Error);
    QVERIFY(!w->applyShapeFix("input=0x8"));
    QCOMPARE(w->diagnostics()->count(DiagnosticsView::Severity::Warning), warnings + 1);
    QCOMPARE(w->diagnostics()->count(DiagnosticsView::Severity::Error), errors);
  }
};

QTEST_MAIN(OpenFlowTest)
#include "OpenFlowTest.moc"
