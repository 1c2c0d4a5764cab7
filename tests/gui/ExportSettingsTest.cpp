//===- ExportSettingsTest.cpp - Export does not retarget the workbench ---===//
//
// Drives the real MainWindow (offscreen) over a copy of the alexa model in
// a temporary folder:
//   - the Export dialog lists targets by name beside the triple; choosing
//     the Cortex-M4F switches the format to the C module at once, a hosted
//     target switches it back;
//   - it says what will be written before Export is pressed;
//   - a RAM budget below the module's RAM shows the warning, one above it
//     does not;
//   - after exporting a stripped C module for thumbv7em-none-eabihf, the
//     working build is still the host's (.kiln artifact on screen, Run
//     enabled, nothing rebuilt), the project file holds the export settings
//     apart from the working recipe, `kiln export --project=` writes the
//     same bytes, and reopening the dialog (and the model) restores them;
//   - after Compute and after Export every field of the dialog is visible
//     at its minimum size hint's height (widget geometry);
//   - the "Firmware kit" box adds the kit's files (planned before Export,
//     written, the project keeps "kit", `kiln export --project=` writes the
//     same bytes, a screenshot of the dialog);
//   - a project file that cannot be written is named in Diagnostics (which
//     is raised) and Tune's message line keeps "Not saved" after the
//     re-plan and the build.
//
//===----------------------------------------------------------------------===//
#include "GuiTestSupport.h"

#include "ExportDialog.h"
#include "MainWindow.h"
#include "ProjectController.h"
#include "DiagnosticsView.h"
#include "TuningView.h"
#include "Workbench.h"

#include "kiln/Export.h"
#include "kiln/Project.h"

#include <QAbstractSpinBox>
#include <QAction>
#include <QDockWidget>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest>

using namespace kiln::workbench;
using namespace kiln::guitest;
using kiln::views::DiagnosticsView;

class ExportSettingsTest : public QObject {
  Q_OBJECT

  QTemporaryDir tmp;
  std::unique_ptr<MainWindow> w;
  QString model;

  ProjectController *ctl() const { return w->projectController(); }

  /// Build > Run on Host, found by its documented shortcut.
  QAction *runAction() const {
    for (QAction *menu : w->menuBar()->actions())
      if (menu->menu())
        for (QAction *a : menu->menu()->actions())
          if (a->shortcut() == QKeySequence(Qt::CTRL | Qt::Key_R))
            return a;
    return nullptr;
  }

  static bool waitSignal(QSignalSpy &spy, int timeoutMs = 300000) { return spy.count() > 0 || spy.wait(timeoutMs); }

  /// Every input field of `dialog` (combo boxes, spin boxes, line edits)
  /// is visible and at least its minimum size hint high: none is squashed
  /// by the results below the form. Empty if so, else what is not.
  static QString squashedFields(QDialog *dialog) {
    QCoreApplication::processEvents(); // the layout after the last resize
    QStringList bad;
    QList<QWidget *> fields;
    for (QComboBox *c : dialog->findChildren<QComboBox *>())
      fields << c;
    for (QAbstractSpinBox *b : dialog->findChildren<QAbstractSpinBox *>())
      fields << b;
    for (QLineEdit *e : dialog->findChildren<QLineEdit *>())
      if (!qobject_cast<QAbstractSpinBox *>(e->parentWidget()) && !qobject_cast<QComboBox *>(e->parentWidget()))
        fields << e;
    if (fields.size() < 6)
      bad << QStringLiteral("only %1 fields found").arg(fields.size());
    for (QWidget *f : fields)
      if (!f->isVisible() || f->height() < f->minimumSizeHint().height())
        bad << QStringLiteral("%1 %2: height %3 < %4 (visible %5)")
                   .arg(f->metaObject()->className(), f->objectName())
                   .arg(f->height()).arg(f->minimumSizeHint().height()).arg(f->isVisible());
    return bad.join(QStringLiteral("; "));
  }

  /// Waits until code generation after the last change is done.
  bool waitBuilt() {
    return QTest::qWaitFor([&] { return !ctl()->isBuildPending() && !w->isCompiling(); }, 600000) && w->document() &&
           !w->document()->artifact.empty();
  }

private slots:
  void initTestCase() {
    startTestSettings("kiln-workbench-export-settings-test");
    QVERIFY(tmp.isValid());
    QVERIFY2(QFile::exists(modelPath("alexa")), "run the fetch_models fixture first");
    model = tmp.filePath("alexa.tflite");
    QVERIFY(QFile::copy(modelPath("alexa"), model));
    w = std::make_unique<MainWindow>();
    w->resize(1600, 1000);
    w->show();
    QVERIFY(QTest::qWaitForWindowExposed(w.get()));
    w->openFile(model);
    QVERIFY(waitForCompile(*w));
    QVERIFY(waitBuilt());
    QCOMPARE(ctl()->project().recipe.target, std::string("host"));
  }

  void cleanupTestCase() { w.reset(); }

  void targetsByNameAndFormatFollowsTarget() {
    ExportDialog *dialog = ctl()->openExportDialog();
    QVERIFY(dialog);
    QComboBox *targets = dialog->targetBox();
    QCOMPARE(targets->count(), int(kiln::knownTargets().size()));
    int m4 = targets->findData(QStringLiteral("thumbv7em-none-eabihf"));
    QVERIFY(m4 >= 0);
    QCOMPARE(targets->itemText(m4), QStringLiteral("Cortex-M4F bare metal (thumbv7em-none-eabihf)"));
    QCOMPARE(targets->itemText(targets->findData(QStringLiteral("aarch64-linux-gnu"))),
             QStringLiteral("aarch64 Linux (aarch64-linux-gnu)"));
    // The working build's choices to start with.
    QCOMPARE(dialog->chosenTarget(), std::string("host"));
    QCOMPARE(dialog->formatBox()->currentData().toString(), QStringLiteral("kiln"));

    // Bare metal: the C module at once; the artifact cannot be chosen.
    dialog->setTarget("thumbv7em-none-eabihf");
    QCOMPARE(dialog->formatBox()->currentData().toString(), QStringLiteral("c-module"));
    auto *formats = qobject_cast<QStandardItemModel *>(dialog->formatBox()->model());
    QVERIFY(formats);
    QVERIFY(!formats->item(0)->isEnabled());
    // A hosted target again: back to the artifact the switch replaced.
    dialog->setTarget("aarch64-linux-gnu");
    QCOMPARE(dialog->formatBox()->currentData().toString(), QStringLiteral("kiln"));
    QVERIFY(formats->item(0)->isEnabled());
    // A C module the user chose stays when the target changes.
    dialog->formatBox()->setCurrentIndex(1);
    dialog->setTarget("riscv64-linux-gnu");
    QCOMPARE(dialog->formatBox()->currentData().toString(), QStringLiteral("c-module"));
    dialog->close();
    // Closed without an export, the choices are kept (one undoable step);
    // undone here, so the slots below start from the defaults.
    QCOMPARE(ctl()->project().exportSettings.target, std::string("riscv64-linux-gnu"));
    QVERIFY(ctl()->project().exportSettings.format == kiln::OutputFormat::CModule);
    ctl()->undoStack()->undo();
    QVERIFY(ctl()->project().exportSettings == kiln::ExportSettings());
  }

  void exportKeepsTheWorkingBuild() {
    const std::vector<uint8_t> artifactBefore = w->document()->artifact;
    QVERIFY(!artifactBefore.empty());
    QVERIFY(runAction() && runAction()->isEnabled());
    const int undoBefore = ctl()->undoStack()->index();

    ExportDialog *dialog = ctl()->openExportDialog();
    dialog->setTarget("thumbv7em-none-eabihf");
    dialog->profileBox()->setCurrentText("stripped");
    const QString dir = tmp.filePath("m4");
    dialog->folderEdit()->setText(dir);
    // What will be written, before anything is.
    const QString planned = dialog->plannedLabel()->text();
    for (const char *part : {"static C module", "Cortex-M4F", "alexa.h", "alexa.c", "alexa_constants.c",
                             "alexa_kernels.o", "manifest.json", "report.md"})
      QVERIFY2(planned.contains(QLatin1String(part)), qPrintable(part + (": " + planned)));
    QVERIFY2(planned.contains(dir), qPrintable(planned));
    QVERIFY2(planned.contains("The workbench keeps building for this computer (host)"), qPrintable(planned));

    // The footprint, then a RAM budget 1 KiB short of it: a warning.
    QSignalSpy footprint(dialog, &ExportDialog::footprintReady);
    dialog->computeButton()->click();
    QVERIFY(waitSignal(footprint));
    QVERIFY2(footprint.last().at(0).toBool(), qPrintable(dialog->messageLabel()->text()));
    QVERIFY(!QFileInfo::exists(dir));
    QVERIFY(dialog->isVisible());
    QString squashed = squashedFields(dialog);
    QVERIFY2(squashed.isEmpty(), qPrintable("after Compute: " + squashed));
    const int64_t ram = dialog->bundle()->footprint.ramBytes;
    QVERIFY(ram > 2048);
    QVERIFY(!dialog->budgetLabel()->isVisibleTo(dialog)); // no budget typed
    const int shortKiB = int((ram - 1) / 1024); // largest whole KiB below the RAM
    QVERIFY(int64_t(shortKiB) * 1024 < ram);
    dialog->ramBudgetBox()->setValue(shortKiB);
    QVERIFY(dialog->budgetExceeded());
    QVERIFY(dialog->budgetIcon()->isVisibleTo(dialog));
    QVERIFY(dialog->budgetLabel()->isVisibleTo(dialog));
    QVERIFY2(dialog->budgetLabel()->text().contains("exceeds"), qPrintable(dialog->budgetLabel()->text()));
    // Enough RAM: no warning.
    dialog->ramBudgetBox()->setValue(shortKiB + 2);
    QVERIFY(int64_t(shortKiB + 2) * 1024 >= ram);
    QVERIFY(!dialog->budgetExceeded());
    QVERIFY(!dialog->budgetIcon()->isVisibleTo(dialog));
    QVERIFY2(dialog->budgetLabel()->text().contains("within"), qPrintable(dialog->budgetLabel()->text()));
    dialog->ramBudgetBox()->setValue(shortKiB);
    dialog->flashBudgetBox()->setValue(1024);

    // Over budget: nothing written until Export Anyway.
    QSignalSpy exported(dialog, &ExportDialog::exported);
    dialog->exportButton()->click();
    QVERIFY(waitSignal(exported));
    QCOMPARE(exported.last().at(0).toBool(), false);
    QVERIFY(!QFileInfo::exists(dir + "/manifest.json"));
    QCOMPARE(dialog->exportButton()->text(), QStringLiteral("Export Anyway"));
    exported.clear();
    dialog->exportButton()->click();
    QVERIFY(waitSignal(exported));
    QVERIFY2(exported.last().at(0).toBool(), qPrintable(dialog->messageLabel()->text()));
    squashed = squashedFields(dialog);
    QVERIFY2(squashed.isEmpty(), qPrintable("after Export: " + squashed));
    // Still readable with the window at 1024x700 (the dialog is its child).
    w->resize(1024, 700);
    dialog->computeButton()->click();
    QVERIFY(QTest::qWaitFor([&] { return !dialog->isBusy(); }, 300000));
    squashed = squashedFields(dialog);
    QVERIFY2(squashed.isEmpty(), qPrintable("at 1024x700: " + squashed));
    w->resize(1600, 1000);
    auto written = folderFiles(dir);
    for (const char *name : {"alexa.h", "alexa.c", "alexa_constants.c", "alexa_kernels.o", "manifest.json", "report.md"})
      QVERIFY2(written.count(name), name);
    QCOMPARE(written.size(), size_t(6));
    // The manifest records the budgets and the repeat command carries them.
    QJsonObject manifest = QJsonDocument::fromJson(written["manifest.json"]).object();
    QCOMPARE(manifest["recipe"].toObject()["target"].toString(), QStringLiteral("thumbv7em-none-eabihf"));
    QCOMPARE(manifest["budgets"].toArray().size(), 2);
    QCOMPARE(manifest["budgets"].toArray()[0].toObject()["budget_bytes"].toInteger(), qint64(shortKiB) * 1024);
    const QString command = manifest["command"].toString();
    QVERIFY2(command.contains("--ram-budget=" + QString::number(qint64(shortKiB) * 1024)), qPrintable(command));
    QVERIFY2(command.contains("--target=thumbv7em-none-eabihf"), qPrintable(command));
    dialog->close();

    // The working build is untouched: host, .kiln artifact, Run enabled,
    // nothing to rebuild.
    const kiln::Project &p = ctl()->project();
    QCOMPARE(p.recipe.target, std::string("host"));
    QCOMPARE(p.recipe.format, kiln::OutputFormat::Artifact);
    QCOMPARE(p.recipe.profile, std::string("default"));
    QVERIFY(!ctl()->isBuildPending());
    QVERIFY(!w->isCompiling());
    QVERIFY(w->document()->artifact == artifactBefore);
    QVERIFY(runAction()->isEnabled());
    QCOMPARE(ctl()->undoStack()->index(), undoBefore + 1);
    QCOMPARE(ctl()->undoStack()->text(undoBefore), QStringLiteral("Export settings"));

    // The project file: the export settings apart from the working recipe.
    auto saved = kiln::loadProject(ctl()->projectPath().toStdString());
    QVERIFY2(bool(saved), saved ? "" : llvm::toString(saved.takeError()).c_str());
    QCOMPARE(saved->recipe.target, std::string("host"));
    QCOMPARE(saved->recipe.format, kiln::OutputFormat::Artifact);
    QCOMPARE(saved->exportSettings.target, std::string("thumbv7em-none-eabihf"));
    QCOMPARE(saved->exportSettings.profile, std::string("stripped"));
    QVERIFY(saved->exportSettings.format == kiln::OutputFormat::CModule);
    QCOMPARE(saved->exportSettings.budget.ramBytes, int64_t(shortKiB) * 1024);
    QCOMPARE(saved->exportSettings.budget.flashBytes, int64_t(1024) * 1024);
    QCOMPARE(saved->exportDir, std::string("m4"));

    // `kiln export --project=` repeats the GUI's export byte for byte.
    const QString cliDir = tmp.filePath("m4-cli");
    QProcess cli;
    cli.start(KILN_BINARY_PATH, {"export", "--project=" + ctl()->projectPath(), "-o", cliDir});
    QVERIFY(cli.waitForFinished(300000));
    QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
    QVERIFY2(cli.readAllStandardOutput().contains("RAM"), "the CLI reports the budgets");
    auto cliFiles = folderFiles(cliDir);
    QCOMPARE(cliFiles.size(), written.size());
    for (const auto &[name, bytes] : written)
      QVERIFY2(cliFiles[name] == bytes, qPrintable(name + " differs from kiln export --project's"));
  }

  void dialogAndReopenRestoreTheExportSettings() {
    ExportDialog *dialog = ctl()->openExportDialog();
    QCOMPARE(dialog->chosenTarget(), std::string("thumbv7em-none-eabihf"));
    QCOMPARE(dialog->formatBox()->currentData().toString(), QStringLiteral("c-module"));
    QCOMPARE(dialog->profileBox()->currentText(), QStringLiteral("stripped"));
    const int64_t ram = ctl()->project().exportSettings.budget.ramBytes;
    QCOMPARE(int64_t(dialog->ramBudgetBox()->value()) * 1024, ram);
    QCOMPARE(dialog->flashBudgetBox()->value(), 1024);
    QCOMPARE(dialog->folderEdit()->text(), tmp.filePath("m4"));
    // Nothing changed: the project the dialog would save is the one held.
    QVERIFY(dialog->chosenProject() == ctl()->project());
    // The working build changed while the dialog is open: the export
    // follows it (tiles, fusion and shapes are shared), its choices stay.
    QVERIFY(ctl()->project().recipe.fusion);
    ctl()->tuningView()->fusionBox()->click();
    QVERIFY(!ctl()->project().recipe.fusion);
    QVERIFY(!dialog->chosenRequest().recipe.fusion);
    QCOMPARE(dialog->chosenRequest().recipe.target, std::string("thumbv7em-none-eabihf"));
    ctl()->undoStack()->undo();
    QVERIFY(dialog->chosenRequest().recipe.fusion);
    QVERIFY(waitBuilt());
    dialog->close();

    // Undo takes back the export settings only, without a rebuild.
    ctl()->undoStack()->undo();
    QVERIFY(ctl()->project().exportSettings == kiln::ExportSettings());
    QCOMPARE(ctl()->project().recipe.target, std::string("host"));
    QVERIFY(!ctl()->isBuildPending());
    ctl()->undoStack()->redo();
    QCOMPARE(ctl()->project().exportSettings.target, std::string("thumbv7em-none-eabihf"));

    // Opened again: the host build on screen, the export settings kept.
    w->openFile(model);
    QVERIFY(waitForCompile(*w));
    QVERIFY(waitBuilt());
    QCOMPARE(ctl()->project().recipe.target, std::string("host"));
    QCOMPARE(ctl()->project().exportSettings.target, std::string("thumbv7em-none-eabihf"));
    QVERIFY(runAction()->isEnabled());
    dialog = ctl()->openExportDialog();
    QCOMPARE(dialog->chosenTarget(), std::string("thumbv7em-none-eabihf"));
    QCOMPARE(int64_t(dialog->ramBudgetBox()->value()) * 1024, ram);
    dialog->close();
  }

  /// The "Firmware kit" box: a Cortex-M kit beside the C module, the same
  /// files the CLI writes from the project.
  void firmwareKitBoxAddsTheKit() {
    ExportDialog *dialog = ctl()->openExportDialog();
    QCOMPARE(dialog->chosenTarget(), std::string("thumbv7em-none-eabihf"));
    QVERIFY(!dialog->kitBox()->isChecked());
    QVERIFY(!dialog->plannedLabel()->text().contains("Makefile"));
    dialog->kitBox()->setChecked(true);
    QVERIFY(dialog->chosenProject().exportSettings.kit);
    const QString dir = tmp.filePath("m4-kit");
    dialog->folderEdit()->setText(dir);
    const std::vector<std::string> kitFiles = {"main.c",        "startup.c", "semihost.h", "kit.h",
                                               "kit_buffers.c", "alexa.ld",  "Makefile"};
    const QString planned = dialog->plannedLabel()->text();
    for (const std::string &name : kitFiles)
      QVERIFY2(planned.contains(QString::fromStdString(name)), qPrintable(planned));
    QSignalSpy exported(dialog, &ExportDialog::exported);
    dialog->exportButton()->click();
    QVERIFY(waitSignal(exported));
    // The project's budgets (from the slots before) do not fit: confirmed.
    QVERIFY(dialog->budgetExceeded());
    QCOMPARE(exported.last().at(0).toBool(), false);
    QCOMPARE(dialog->exportButton()->text(), QStringLiteral("Export Anyway"));
    exported.clear();
    dialog->exportButton()->click();
    QVERIFY(waitSignal(exported));
    QVERIFY2(exported.last().at(0).toBool(), qPrintable(dialog->messageLabel()->text()));
    const QString shots = qEnvironmentVariable("KILN_SCREENSHOT_DIR");
    if (!shots.isEmpty())
      QVERIFY(dialog->grab().save(shots + "/export-dialog-kit.png"));
    dialog->close();
    auto written = folderFiles(dir);
    for (const std::string &name : kitFiles)
      QVERIFY2(written.count(QString::fromStdString(name)), name.c_str());
    QCOMPARE(written.size(), size_t(4 + 7 + 2));
    QVERIFY(written["Makefile"].contains("QEMU = qemu-system-arm"));
    QVERIFY(written["Makefile"].contains("$(QEMU) -M mps2-an386"));
    QJsonObject manifest = QJsonDocument::fromJson(written["manifest.json"]).object();
    QCOMPARE(manifest["kit"].toObject()["board"].toString(), QStringLiteral("mps2-an386"));
    auto saved = kiln::loadProject(ctl()->projectPath().toStdString());
    QVERIFY2(bool(saved), saved ? "" : llvm::toString(saved.takeError()).c_str());
    QVERIFY(saved->exportSettings.kit);

    const QString cliDir = tmp.filePath("m4-kit-cli");
    QProcess cli;
    cli.start(KILN_BINARY_PATH, {"export", "--project=" + ctl()->projectPath(), "-o", cliDir});
    QVERIFY(cli.waitForFinished(300000));
    QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
    auto cliFiles = folderFiles(cliDir);
    QCOMPARE(cliFiles.size(), written.size());
    for (const auto &[name, bytes] : written)
      QVERIFY2(cliFiles[name] == bytes, qPrintable(name + " differs from kiln export --project's"));
    ctl()->undoStack()->undo(); // the kit off again
    QVERIFY(!ctl()->project().exportSettings.kit);
  }

  /// A project file that cannot be written: the warning names it in
  /// Diagnostics, which is raised, and Tune's message line keeps "Not
  /// saved" after the re-plan and the build; once it can be written again
  /// the note goes. (A folder in the project file's place: the atomic
  /// rename onto it fails even for root, which file modes would not stop.)
  void unwritableProjectFileIsReported() {
    const QString path = ctl()->projectPath();
    QVERIFY(QFile::exists(path));
    QVERIFY(QFile::remove(path));
    QVERIFY(QDir().mkpath(path + "/occupied"));
    QDockWidget *diagnosticsDock = w->dockOf(w->diagnostics());
    QVERIFY(diagnosticsDock);
    // Another tab of its group in front of Diagnostics.
    const QList<QDockWidget *> tabs = w->tabifiedDockWidgets(diagnosticsDock);
    QVERIFY2(!tabs.isEmpty(), "Diagnostics shares a tab group");
    tabs.front()->raise();
    // (A tab behind another keeps isVisible() but is moved out of sight.)
    auto diagnosticsShown = [&] { return !diagnosticsDock->visibleRegion().isEmpty(); };
    QVERIFY(QTest::qWaitFor([&] { return !diagnosticsShown(); }, 5000));
    const int warnings = w->diagnostics()->count(DiagnosticsView::Severity::Warning);

    QSignalSpy replanned(ctl(), &ProjectController::replanFinished);
    const bool fusion = ctl()->project().recipe.fusion;
    ctl()->tuningView()->fusionBox()->click();
    QCOMPARE(ctl()->project().recipe.fusion, !fusion);
    QCOMPARE(w->diagnostics()->count(DiagnosticsView::Severity::Warning), warnings + 1);
    QTreeWidgetItem *last = w->diagnostics()->topLevelItem(w->diagnostics()->topLevelItemCount() - 1);
    QStringList columns;
    for (int c = 0; c < w->diagnostics()->columnCount(); ++c)
      columns << last->text(c);
    QVERIFY2(columns.join(' ').contains(QFileInfo(path).fileName()), qPrintable(columns.join(' ')));
    QVERIFY2(QTest::qWaitFor(diagnosticsShown, 5000), "the Diagnostics dock is raised");
    QLabel *message = ctl()->tuningView()->messageLabel();
    QVERIFY(waitSignal(replanned));
    QVERIFY(replanned.last().at(0).toBool());
    QVERIFY2(message->text().contains("Re-planned") && message->text().contains("Not saved"),
             qPrintable(message->text()));
    QVERIFY(waitBuilt());
    QVERIFY2(message->text().contains("Not saved"), qPrintable(message->text()));
    QVERIFY(!QFileInfo(path).isFile());

    // Writable again: the next change saves it and the note goes.
    QVERIFY(QDir(path).removeRecursively());
    replanned.clear();
    ctl()->undoStack()->undo();
    QCOMPARE(ctl()->project().recipe.fusion, fusion);
    QCOMPARE(w->diagnostics()->count(DiagnosticsView::Severity::Warning), warnings + 1);
    QVERIFY(QFileInfo(path).isFile());
    QVERIFY(waitSignal(replanned));
    QVERIFY(waitBuilt());
    QVERIFY2(!message->text().contains("Not saved"), qPrintable(message->text()));
    auto saved = kiln::loadProject(path.toStdString());
    QVERIFY(bool(saved));
    QCOMPARE(saved->recipe.fusion, fusion);
  }

  /// What a target cannot take is said when it is chosen; a build over
  /// budget is written only when confirmed; budgets and the C module stay
  /// with the board they were chosen for; Close stops an export.
  void deviceChoicesStayWithTheirTarget() {
    ExportDialog *dialog = ctl()->openExportDialog();
    QSignalSpy checked(dialog, &ExportDialog::checked);
    // The Cortex-M0+ has no FPU: this float model is refused by the quick
    // check (a plan), before any Compute.
    dialog->setTarget("thumbv6m-none-eabi");
    QVERIFY(QTest::qWaitFor([&] { return !dialog->isChecking() && checked.count() > 0; }, 120000));
    QVERIFY2(dialog->refusal().contains("no FPU"), qPrintable(dialog->refusal()));
    QVERIFY(!dialog->computeButton()->isEnabled());
    QVERIFY(!dialog->exportButton()->isEnabled());
    QVERIFY(dialog->messageLabel()->text().contains("no FPU"));
    QVERIFY(dialog->exportButton()->toolTip().contains("no FPU"));

    // The M4 takes it; a budget it exceeds stops the write until confirmed.
    checked.clear();
    dialog->setTarget("thumbv7em-none-eabihf");
    QVERIFY(QTest::qWaitFor([&] { return !dialog->isChecking() && checked.count() > 0; }, 120000));
    QVERIFY2(dialog->refusal().isEmpty(), qPrintable(dialog->refusal()));
    QVERIFY(dialog->exportButton()->isEnabled());
    dialog->ramBudgetBox()->setValue(1); // 1 KiB: the arena alone is more
    const QString tight = tmp.filePath("tight");
    dialog->folderEdit()->setText(tight);
    QSignalSpy exported(dialog, &ExportDialog::exported);
    dialog->exportNow();
    QVERIFY(waitSignal(exported));
    QCOMPARE(exported.last().at(0).toBool(), false);
    QVERIFY(dialog->budgetExceeded());
    QVERIFY(!QFile::exists(tight + "/manifest.json"));
    QCOMPARE(dialog->exportButton()->text(), QStringLiteral("Export Anyway"));
    QVERIFY(dialog->messageLabel()->text().contains("Nothing written"));
    exported.clear();
    dialog->exportNow();
    QVERIFY(waitSignal(exported));
    QVERIFY(exported.last().at(0).toBool());
    QVERIFY(QFile::exists(tight + "/manifest.json"));
    QCOMPARE(dialog->exportButton()->text(), QStringLiteral("Export"));

    // aarch64 Linux: the artifact and no budgets; the M4 gets its own back.
    dialog->setTarget("aarch64-linux-gnu");
    QCOMPARE(dialog->formatBox()->currentData().toString(), QStringLiteral("kiln"));
    QCOMPARE(dialog->ramBudgetBox()->value(), 0);
    QCOMPARE(dialog->chosenBudget().ramBytes, int64_t(0));
    dialog->setTarget("thumbv7em-none-eabihf");
    QCOMPARE(dialog->ramBudgetBox()->value(), 1);

    dialog->close();

    // Close while it builds: the build stops and nothing is written. (A
    // dialog of its own: Export's deletes itself when closed.)
    ExportDialog closing(ctl()->project(), ctl()->projectPath());
    closing.setTarget("host");
    const QString stopped = tmp.filePath("stopped");
    closing.folderEdit()->setText(stopped);
    QVERIFY(QTest::qWaitFor([&] { return !closing.isChecking(); }, 120000));
    QSignalSpy ended(&closing, &ExportDialog::exported);
    closing.exportNow();
    QVERIFY(closing.isBusy());
    closing.reject();
    QVERIFY(waitSignal(ended));
    QCOMPARE(ended.last().at(0).toBool(), false);
    QVERIFY(!QFile::exists(stopped + "/manifest.json"));
    QVERIFY(closing.messageLabel()->text().contains("Cancelled"));

    // A dialog that opens on a saved Cortex-M0+ C module export: a hosted
    // target chosen next gets the artifact, not the M0+'s format.
    kiln::Project p = ctl()->project();
    p.exportSettings.target = "thumbv6m-none-eabi";
    p.exportSettings.format = kiln::OutputFormat::CModule;
    ExportDialog reopened(p, ctl()->projectPath());
    QCOMPARE(reopened.formatBox()->currentData().toString(), QStringLiteral("c-module"));
    reopened.setTarget("aarch64-linux-gnu");
    QCOMPARE(reopened.formatBox()->currentData().toString(), QStringLiteral("kiln"));
  }

  // Choices made and the dialog closed without exporting are kept too (the
  // review found them dropped): one undoable "Export settings" step, no
  // rebuild; the default folder follows the choices and is not pinned.
  // Opening and closing it unchanged adds no step.
  void closingWithoutExportKeepsTheChoices() {
    QUndoStack *undo = ctl()->undoStack();
    const kiln::Project before = ctl()->project();
    ExportDialog *dialog = ctl()->openExportDialog();
    const int steps = undo->count();
    dialog->close();
    QCOMPARE(undo->count(), steps);
    QVERIFY(ctl()->project() == before);

    dialog = ctl()->openExportDialog();
    const QString other = dialog->profileBox()->currentText() == QStringLiteral("stripped")
                              ? QStringLiteral("default")
                              : QStringLiteral("stripped");
    dialog->profileBox()->setCurrentText(other);
    dialog->setTarget("aarch64-linux-gnu");
    dialog->close(); // no Export pressed
    QCOMPARE(undo->count(), steps + 1);
    QCOMPARE(undo->text(undo->index() - 1), QStringLiteral("Export settings"));
    QCOMPARE(ctl()->project().exportSettings.target, std::string("aarch64-linux-gnu"));
    QVERIFY(!ctl()->isBuildPending());
    QVERIFY(ctl()->project().recipe == before.recipe);
    QCOMPARE(ctl()->project().exportDir, before.exportDir);
    dialog = ctl()->openExportDialog();
    QCOMPARE(dialog->chosenTarget(), std::string("aarch64-linux-gnu"));
    QCOMPARE(dialog->profileBox()->currentText(), other);
    dialog->close();
    QCOMPARE(undo->count(), steps + 1);
    undo->undo();
    QVERIFY(ctl()->project() == before);
  }
};

QTEST_MAIN(ExportSettingsTest)
#include "ExportSettingsTest.moc"
