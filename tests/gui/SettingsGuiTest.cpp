//===- SettingsGuiTest.cpp - One project per model, none that locks ---===//
//
// The real MainWindow (offscreen) over the alexa twins (alexa.tflite and
// alexa.onnx, copied into one folder):
//   - each model file has its own project (MODEL.EXT.kilnproj): a tile set
//     on the TFLite model is saved in alexa.tflite.kilnproj and the ONNX
//     model opens with none (the two once shared alexa.kilnproj, and tiles
//     set for one broke the other);
//   - a project whose settings do not build (tile sizes for more loops
//     than the dispatch has) no longer locks the model: it opens with
//     default settings, Tune is enabled, the saved file is kept as
//     X.kilnproj.failed, and Undo brings the saved settings back (one
//     step);
//   - a project an older workbench wrote as alexa.kilnproj is read by the
//     model it names;
//   - Fix Input Shape by index ("0=2x76x32x1") on the embedding model,
//     whose batch was fixed by name, replaces that fix: one key, the
//     input's name (it once failed with "fixes input twice, as '0' and as
//     'serving_default_input_1:0'" and saved the index form too);
//   - a tile cell being typed in when a re-plan lands keeps its text, its
//     dispatch and the selection (the reset once closed the editor and
//     the typing was lost).
//
//===----------------------------------------------------------------------===//
#include "DiagnosticsView.h"
#include "GuiTestSupport.h"
#include "MainWindow.h"
#include "ProjectController.h"
#include "TuningModel.h"
#include "TuningView.h"
#include "Workbench.h"

#include "kiln/Artifact.h"
#include "kiln/Project.h"

#include <QLineEdit>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest>

using namespace kiln::workbench;
using namespace kiln::guitest;

class SettingsGuiTest : public QObject {
  Q_OBJECT

  QTemporaryDir tmp;
  std::unique_ptr<MainWindow> w;

  ProjectController *ctl() const { return w->projectController(); }

  /// Opens `path` and waits until its build (and any reopen the controller
  /// asks for) is done and the controller follows it.
  bool open(const QString &path) {
    w->openFile(path);
    return QTest::qWaitFor(
        [&] {
          return !w->isCompiling() && w->document() && w->document()->path == path &&
                 ctl()->modelPath() == path && !ctl()->isBuildPending() && !ctl()->isReplanning();
        },
        600000);
  }

  static kiln::Project projectFor(const QString &model) {
    auto p = kiln::loadProject(kiln::projectPathFor(model.toStdString()));
    return p ? *p : (llvm::consumeError(p.takeError()), kiln::Project());
  }

private slots:
  void initTestCase() {
    startTestSettings("kiln-settings-gui-test");
    QVERIFY(tmp.isValid());
    QVERIFY2(QFile::exists(modelPath("alexa")), "run the fetch_models fixture first");
    QVERIFY(QFile::copy(modelPath("alexa"), tmp.filePath("alexa.tflite")));
    QVERIFY(QFile::copy(modelCacheDir() + "/alexa.onnx", tmp.filePath("alexa.onnx")));
    w = std::make_unique<MainWindow>();
    w->resize(1600, 1000);
    w->show();
    QVERIFY(QTest::qWaitForWindowExposed(w.get()));
  }

  void cleanupTestCase() { w.reset(); }

  void twinsKeepTheirOwnProjects() {
    const QString tflite = tmp.filePath("alexa.tflite"), onnx = tmp.filePath("alexa.onnx");
    QVERIFY2(open(tflite), qPrintable(w->diagnostics()->lastMessage()));
    QCOMPARE(ctl()->projectPath(), tmp.filePath("alexa.tflite.kilnproj"));
    // A fusion choice on dispatch 0, saved at once.
    QCOMPARE(ctl()->undoStack()->count(), 0);
    emit ctl()->tuningView()->model()->fusionEdited(0, false);
    QCOMPARE(ctl()->project().recipe.noFusion, std::vector<int64_t>{0});
    QCOMPARE(projectFor(tflite).recipe.noFusion, std::vector<int64_t>{0});

    QVERIFY2(open(onnx), qPrintable(w->diagnostics()->lastMessage()));
    QCOMPARE(ctl()->projectPath(), tmp.filePath("alexa.onnx.kilnproj"));
    QVERIFY(ctl()->project().recipe.noFusion.empty()); // not the TFLite model's
    QVERIFY(!QFile::exists(tmp.filePath("alexa.kilnproj")));
    QCOMPARE(projectFor(tflite).recipe.noFusion, std::vector<int64_t>{0}); // untouched
  }

  void settingsThatDoNotBuildOpenWithDefaults() {
    const QString model = copyModelTo(tmp.path(), modelPath("alexa"), "locked.tflite");
    kiln::Project bad;
    bad.model = "locked.tflite";
    bad.recipe.tiles = {{0, {1, 1, 1, 1, 1, 1, 1, 1, 1}}}; // more sizes than any dispatch has loops
    bad.exportDir = "out";
    const std::string file = kiln::projectPathFor(model.toStdString());
    QVERIFY(!kiln::saveProject(bad, file));
    const int messagesBefore = w->diagnostics()->topLevelItemCount();
    QVERIFY2(open(model), qPrintable(w->diagnostics()->lastMessage()));
    // Diagnostics says it once: "does not build ... default settings",
    // never also "settings restored" (the review found both).
    QStringList said;
    for (int i = messagesBefore; i < w->diagnostics()->topLevelItemCount(); ++i)
      said << w->diagnostics()->topLevelItem(i)->text(2);
    QVERIFY2(said.filter("does not build with the settings saved").size() == 1,
             qPrintable(said.join('\n')));
    QVERIFY2(said.filter("settings restored").isEmpty(), qPrintable(said.join('\n')));
    // Opened with the defaults; the export folder kept; Tune usable.
    QVERIFY(ctl()->project().recipe == kiln::BuildRecipe());
    QCOMPARE(ctl()->project().exportDir, std::string("out"));
    QVERIFY(ctl()->tuningView()->isEnabled());
    QVERIFY(!w->document()->artifact.empty());
    // The saved file kept aside, the new one holding the defaults.
    auto kept = kiln::loadProject(file + ".failed");
    QVERIFY(bool(kept));
    QVERIFY(kept->recipe == bad.recipe);
    QVERIFY(projectFor(model).recipe == kiln::BuildRecipe());
    // One undoable step back to the saved settings.
    QCOMPARE(ctl()->undoStack()->count(), 1);
    QVERIFY2(ctl()->undoStack()->undoText().contains("do not build"),
             qPrintable(ctl()->undoStack()->undoText()));
    ctl()->undoStack()->undo();
    QVERIFY(ctl()->project().recipe == bad.recipe);
    QVERIFY(projectFor(model).recipe == bad.recipe);
    ctl()->undoStack()->redo();
    QVERIFY(ctl()->project().recipe == kiln::BuildRecipe());
  }

  void olderProjectNameIsReadByItsModel() {
    const QString model = copyModelTo(tmp.path(), modelPath("alexa"), "older.tflite");
    kiln::Project older;
    older.model = "older.tflite";
    older.recipe.noFusion = {1};
    QVERIFY(!kiln::saveProject(older, tmp.filePath("older.kilnproj").toStdString()));
    QVERIFY2(open(model), qPrintable(w->diagnostics()->lastMessage()));
    QCOMPARE(ctl()->project().recipe.noFusion, std::vector<int64_t>{1});
    QCOMPARE(ctl()->projectPath(), tmp.filePath("older.tflite.kilnproj"));
  }

  void typingSurvivesAReplan() {
    const QString model = tmp.filePath("alexa.tflite");
    QVERIFY2(open(model), qPrintable(w->diagnostics()->lastMessage()));
    kiln::views::TuningModel *tm = ctl()->tuningView()->model();
    QTableView *table = ctl()->tuningView()->table();
    QVERIFY(tm->rowCount() >= 2);
    const int row = tm->rowCount() - 1;
    const int64_t id = tm->dispatchAt(row);
    QModelIndex cell = tm->index(row, kiln::views::TuningModel::Tiles);
    table->setCurrentIndex(cell);
    QCOMPARE(w->currentDispatch(), id); // Tune's row is the window's selection
    table->edit(cell);
    QLineEdit *editor = nullptr;
    for (QLineEdit *e : table->viewport()->findChildren<QLineEdit *>())
      if (e->isVisible())
        editor = e;
    QVERIFY(editor);
    editor->setText(QStringLiteral("1,2"));
    // Another dispatch's tiles set (to the sizes it has: the same
    // dispatches): a re-plan lands while typing.
    QSignalSpy replanned(ctl(), &ProjectController::replanFinished);
    const kiln::Dispatch &first = w->document()->plan->dispatches[0];
    QVERIFY(first.id != id && !first.tileSizes.empty());
    emit tm->tilesEdited(first.id, first.tileSizes);
    QVERIFY(replanned.wait(300000));
    QVERIFY(replanned.last().at(0).toBool());
    QCOMPARE(w->currentDispatch(), id);
    QCOMPARE(tm->dispatchAt(table->currentIndex().row()), id);
    QCOMPARE(table->currentIndex().column(), int(kiln::views::TuningModel::Tiles));
    QLineEdit *again = nullptr;
    for (QLineEdit *e : table->viewport()->findChildren<QLineEdit *>())
      if (e->isVisible())
        again = e;
    QVERIFY(again);
    QCOMPARE(again->text(), QStringLiteral("1,2"));
    // Esc leaves the plan's tiles as they were.
    QTest::keyClick(again, Qt::Key_Escape);
    QVERIFY(ctl()->project().recipe.tiles.count(id) == 0);
    QVERIFY(QTest::qWaitFor([&] { return !w->isCompiling() && !ctl()->isBuildPending(); }, 600000));
  }

  void fixByIndexReplacesTheFixByName() {
    const QString model = copyModelTo(tmp.path(), modelPath("embedding"), "emb.tflite");
    const std::string name = "serving_default_input_1:0";
    QVERIFY(w->applyShapeFix(QString::fromStdString(name) + "=1x76x32x1", model));
    QVERIFY2(open(model), qPrintable(w->diagnostics()->lastMessage()));
    QCOMPARE(ctl()->project().recipe.fixedShapes.size(), size_t(1));
    QVERIFY(w->applyShapeFix(QStringLiteral("0=2x76x32x1")));
    QVERIFY(QTest::qWaitFor(
        [&] {
          if (w->isCompiling() || ctl()->isBuildPending() || ctl()->isReplanning())
            return false;
          auto desc = kiln::describeArtifact(w->document()->artifact);
          return desc && desc->inputs[0].shape[0] == 2;
        },
        600000));
    const std::map<std::string, std::vector<int64_t>> want = {{name, {2, 76, 32, 1}}};
    QVERIFY(ctl()->project().recipe.fixedShapes == want);
    QVERIFY(projectFor(model).recipe.fixedShapes == want);
    QVERIFY2(!w->diagnostics()->lastMessage().contains("twice"),
             qPrintable(w->diagnostics()->lastMessage()));
  }
};

QTEST_MAIN(SettingsGuiTest)
#include "SettingsGuiTest.moc"
