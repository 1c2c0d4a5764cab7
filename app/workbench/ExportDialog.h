//===- ExportDialog.h - Export a deployment bundle --------------*- C++ -*-===//
//
// Device target, output format (.kiln or static C module), profile and
// folder; shows the bundle's flash and RAM (kiln::buildExportBundle, on a
// worker thread) before anything is written; writes it with
// kiln::writeExportBundle and offers to open the folder. The request is
// built from the project exactly as `kiln export --project=FILE` builds it,
// so the files are byte-identical to the CLI's. A folder that cannot be
// written is explained on the dialog's message line and nothing else
// changes.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_WORKBENCH_EXPORTDIALOG_H
#define KILN_WORKBENCH_EXPORTDIALOG_H

#include "kiln/Export.h"
#include "kiln/Project.h"

#include <QDialog>
#include <QFutureWatcher>

#include <optional>

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;

namespace kiln::workbench {

/// What a worker produced: a bundle or an error.
struct ExportWork {
  bool ok = false;
  QString error;
  std::optional<kiln::ExportBundle> bundle;
  bool written = false;
};

class ExportDialog : public QDialog {
  Q_OBJECT
public:
  ExportDialog(const kiln::Project &project, const QString &projectPath, QWidget *parent = nullptr);
  ~ExportDialog() override;

  /// The request `kiln export --project=FILE` builds for `project`.
  static kiln::ExportRequest requestFor(const kiln::Project &project, const QString &projectPath);
  /// The project with the dialog's target, format, profile and folder.
  kiln::Project chosenProject() const;
  /// Why `dir` cannot take a bundle ("" if it can, as far as can be told
  /// before writing).
  static QString folderProblem(const QString &dir);

  /// Builds the bundle and shows its footprint (nothing written).
  void computeFootprint();
  /// Builds (if needed) and writes the bundle into the folder.
  void exportNow();
  bool isBusy() const { return watcher_.isRunning(); }
  /// The last bundle built (for the current choices), if any.
  const std::optional<kiln::ExportBundle> &bundle() const { return bundle_; }
  QString writtenDir() const { return writtenDir_; }
  QString summaryText() const;

  QComboBox *targetBox() const { return target_; }
  QComboBox *formatBox() const { return format_; }
  QComboBox *profileBox() const { return profile_; }
  QLineEdit *folderEdit() const { return folder_; }
  QLabel *footprintLabel() const { return footprint_; }
  QLabel *messageLabel() const { return message_; }
  QPushButton *computeButton() const { return compute_; }
  QPushButton *exportButton() const { return export_; }
  QPushButton *openFolderButton() const { return open_; }

signals:
  void footprintReady(bool ok);
  /// The bundle was written (ok) or writing failed.
  void exported(bool ok);

private:
  void start(bool write);
  void finished();
  void choicesChanged();
  void showError(const QString &text);
  QString defaultFolder() const;

  kiln::Project project_;
  QString projectPath_;
  QComboBox *target_, *format_, *profile_;
  QLineEdit *folder_;
  QLabel *footprint_, *message_;
  QPushButton *compute_, *export_, *open_, *browse_;
  QFutureWatcher<ExportWork> watcher_;
  std::optional<kiln::ExportBundle> bundle_;
  kiln::Project bundleFor_;
  bool writing_ = false;
  QString writingTo_, writtenDir_;
};

} // namespace kiln::workbench

#endif
