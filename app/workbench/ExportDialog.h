//===- ExportDialog.h - Export a deployment bundle --------------*- C++ -*-===//
//
// Device target (listed by name beside the triple, kiln::targetDisplayName),
// output format (.kiln or static C module; a bare-metal target switches to
// the C module at once and back when a hosted one is chosen again),
// profile, flash and RAM budgets (KiB), a "Firmware kit" box (the bundle
// then holds what builds and runs it on the device, kiln/Kit.h, with the
// pattern inputs) and folder. These are the project's
// export settings (kiln::ExportSettings), kept apart from the working
// build: exporting never changes the target, format or profile the
// workbench builds and runs. The dialog says what will be written (files,
// format, folder) before Export is pressed; Compute shows the bundle's
// flash and RAM (kiln::buildExportBundle, on a worker thread) against the
// budgets (kiln::checkBudget, a warning when it does not fit) before
// anything is written; Export writes it with kiln::writeExportBundle and
// offers to open the folder. The request is kiln::projectExportRequest of
// the chosen settings, as `kiln export --project=FILE` builds it, so the
// files are byte-identical to the CLI's. A folder that cannot be written
// is explained on the dialog's message line and nothing else changes.
// The form's fields keep their size hints: what will be written, the
// footprint, the budget check and the message scroll below them, and the
// dialog grows (up to the screen) when they get longer.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_WORKBENCH_EXPORTDIALOG_H
#define KILN_WORKBENCH_EXPORTDIALOG_H

#include "kiln/Export.h"
#include "kiln/Project.h"

#include <QDialog>
#include <QFutureWatcher>

#include <atomic>
#include <map>
#include <memory>
#include <optional>

class QCheckBox;
class QComboBox;
class QLabel;
class QSpinBox;
class QVBoxLayout;
class QLineEdit;
class QPushButton;
class QScrollArea;

namespace kiln::workbench {

/// What a worker produced: a bundle or an error.
struct ExportWork {
  bool ok = false;
  QString error;
  std::optional<kiln::ExportBundle> bundle;
  bool written = false;
  /// Not written: the bundle exceeds a budget and writing it was not
  /// confirmed (Export Anyway).
  bool overBudget = false;
  /// The dialog was closed while the worker ran: nothing written.
  bool cancelled = false;
};

class ExportDialog : public QDialog {
  Q_OBJECT
public:
  ExportDialog(const kiln::Project &project, const QString &projectPath, QWidget *parent = nullptr);
  ~ExportDialog() override;

  /// "Cortex-M4F bare metal (thumbv7em-none-eabihf)": a knownTargets()
  /// name as the target list shows it.
  static QString targetLabel(const std::string &target);
  /// The project given with the dialog's export settings (target, format,
  /// profile, budgets) and folder; its working recipe unchanged. A choice
  /// equal to the working build's (target, profile, format) is left unset
  /// in the settings, so the export follows the working build there (its
  /// CPU, features and profile overrides too).
  kiln::Project chosenProject() const;
  /// The folder box holds the default folder of the current choices
  /// (defaultFolder(): it follows them, so closing the dialog does not pin
  /// it in the project).
  bool folderIsDefault() const;
  /// What Export builds: kiln::projectExportRequest of chosenProject().
  kiln::ExportRequest chosenRequest() const;
  /// The working build changed while the dialog is open (a tile, a shape,
  /// the Tune dock's target): the export follows its recipe; the dialog's
  /// own choices stay.
  void setWorkingRecipe(const kiln::BuildRecipe &recipe);
  /// The chosen target's knownTargets() name.
  std::string chosenTarget() const;
  /// Selects the target named `target` (a knownTargets() name).
  void setTarget(const std::string &target);
  /// The budgets typed, bytes (0 = none).
  kiln::MemoryBudget chosenBudget() const;
  /// True when a footprint is shown and exceeds a budget typed.
  bool budgetExceeded() const { return budgetExceeded_; }
  /// Why `dir` cannot take a bundle ("" if it can, as far as can be told
  /// before writing).
  static QString folderProblem(const QString &dir);

  /// Builds the bundle and shows its footprint (nothing written).
  void computeFootprint();
  /// Builds (if needed) and writes the bundle into the folder. A bundle
  /// that exceeds a budget is not written: the message says so and the
  /// Export button becomes Export Anyway, which writes it (until a choice
  /// changes).
  void exportNow();
  bool isBusy() const { return watcher_.isRunning(); }
  /// Close while a bundle is built: the build stops at its next phase and
  /// nothing is written.
  void reject() override;
  /// The quick check of the chosen target and model (checkExportRequest)
  /// is running.
  bool isChecking() const { return checkWatcher_.isRunning(); }
  /// What that check refused ("" when the choices can be built).
  QString refusal() const { return refusal_; }
  /// The last bundle built (for the current choices), if any.
  const std::optional<kiln::ExportBundle> &bundle() const { return bundle_; }
  QString writtenDir() const { return writtenDir_; }
  QString summaryText() const;

  QComboBox *targetBox() const { return target_; }
  QComboBox *formatBox() const { return format_; }
  QComboBox *profileBox() const { return profile_; }
  QLineEdit *folderEdit() const { return folder_; }
  /// RAM and flash budgets, KiB (0 shows "none").
  QSpinBox *ramBudgetBox() const { return ramBudget_; }
  QSpinBox *flashBudgetBox() const { return flashBudget_; }
  /// Adds a firmware kit (kiln::ExportSettings::kit).
  QCheckBox *kitBox() const { return kit_; }
  /// What Export will write: format, target, files and folder.
  QLabel *plannedLabel() const { return planned_; }
  QLabel *footprintLabel() const { return footprint_; }
  /// The footprint against the budgets (hidden without a footprint or a
  /// budget); a warning icon beside it when the build does not fit.
  QLabel *budgetLabel() const { return budget_; }
  QLabel *budgetIcon() const { return budgetIcon_; }
  QLabel *messageLabel() const { return message_; }
  QPushButton *computeButton() const { return compute_; }
  QPushButton *exportButton() const { return export_; }
  QPushButton *openFolderButton() const { return open_; }

signals:
  void footprintReady(bool ok);
  /// The quick check of the chosen target ended (`refused` = its error).
  void checked(bool refused);
  /// The bundle was written (ok) or writing failed.
  void exported(bool ok);

private:
  void buildForm(QVBoxLayout *layout);
  void start(bool write);
  /// Starts checkExportRequest of the choices on a worker (a target change).
  void startCheck();
  void checkFinished();
  /// Compute and Export enabled unless busy or refused.
  void updateButtons();
  /// The chosen target's budgets as last kept (budgetsByTarget_).
  kiln::MemoryBudget storedBudget() const;
  /// The budgets typed, bytes; a box left at `had`'s KiB keeps its bytes.
  kiln::MemoryBudget budgetFrom(const kiln::MemoryBudget &had) const;
  void finished();
  void targetChanged();
  void choicesChanged();
  void showPlanned();
  void showBudgetCheck();
  void showError(const QString &text);
  /// Grows the dialog (up to the screen) so the results below the form
  /// show without scrolling; the form's fields keep their size hints.
  void fitResults();
  QString defaultFolder() const;
  QString folderFor(const kiln::ExportRequest &request) const;

  kiln::Project project_;
  QString projectPath_;
  QComboBox *target_, *format_, *profile_;
  QSpinBox *ramBudget_, *flashBudget_;
  QCheckBox *kit_;
  QLineEdit *folder_;
  QLabel *planned_, *footprint_, *budget_, *budgetIcon_, *message_;
  /// Budgets typed for each target this session (a board's budgets do not
  /// follow to another target); the dialog opened with the project's.
  std::map<std::string, kiln::MemoryBudget> budgetsByTarget_;
  std::string budgetTarget_;
  /// Set by reject(): the worker's compile stops and writes nothing.
  std::shared_ptr<std::atomic<bool>> cancel_ = std::make_shared<std::atomic<bool>>(false);
  /// Export Anyway was offered for these choices.
  bool overBudgetOffered_ = false;
  QFutureWatcher<QString> checkWatcher_;
  int checkGeneration_ = 0, checkedGeneration_ = 0;
  QString refusal_;
  QPushButton *compute_, *export_, *open_, *browse_;
  /// Scrolls the results (planned, footprint, budget check, message).
  QScrollArea *results_;
  QFutureWatcher<ExportWork> watcher_;
  std::optional<kiln::ExportBundle> bundle_;
  /// The request bundle_ was built for.
  kiln::ExportRequest bundleFor_;
  /// The format was switched to the C module by a bare-metal target (not
  /// by the user): a hosted target switches it back.
  bool formatForced_ = false, forcingFormat_ = false;
  bool budgetExceeded_ = false;
  bool writing_ = false;
  QString writingTo_, writtenDir_;
};

} // namespace kiln::workbench

#endif
