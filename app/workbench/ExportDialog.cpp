//===- ExportDialog.cpp - Export a deployment bundle ----------------------===//
#include "ExportDialog.h"

#include "PlanModels.h"

#include <QComboBox>
#include <QDesktopServices>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QUrl>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

namespace kiln::workbench {

using kiln::views::formatBytes;

static QString errorText(llvm::Error e) { return QString::fromStdString(llvm::toString(std::move(e))); }

kiln::ExportRequest ExportDialog::requestFor(const kiln::Project &project, const QString &projectPath) {
  // As app/kiln/main.cpp runExport() does for --project=FILE.
  kiln::ExportRequest request;
  request.model = kiln::projectModelPath(project, projectPath.toStdString());
  request.recipe = project.recipe;
  return request;
}

ExportDialog::ExportDialog(const kiln::Project &project, const QString &projectPath, QWidget *parent)
    : QDialog(parent), project_(project), projectPath_(projectPath) {
  setWindowTitle(tr("Export \u2014 %1").arg(QString::fromStdString(project.model)));
  auto *v = new QVBoxLayout(this);
  auto *form = new QFormLayout;
  target_ = new QComboBox(this);
  for (const std::string &t : kiln::knownTargets())
    target_->addItem(QString::fromStdString(t));
  target_->setCurrentText(QString::fromStdString(project.recipe.target));
  format_ = new QComboBox(this);
  format_->addItem(tr(".kiln artifact"), QStringLiteral("kiln"));
  format_->addItem(tr("static C module"), QStringLiteral("c-module"));
  format_->setCurrentIndex(project.recipe.format == kiln::OutputFormat::CModule ? 1 : 0);
  profile_ = new QComboBox(this);
  profile_->addItems({QStringLiteral("default"), QStringLiteral("stripped")});
  profile_->setCurrentText(QString::fromStdString(project.recipe.profile));
  folder_ = new QLineEdit(this);
  folder_->setMinimumWidth(420);
  QString dir = QString::fromStdString(kiln::projectExportDir(project, projectPath.toStdString()));
  folder_->setText(dir.isEmpty() ? defaultFolder() : QDir::cleanPath(dir));
  browse_ = new QPushButton(tr("Browse\u2026"), this);
  auto *folderRow = new QHBoxLayout;
  folderRow->addWidget(folder_, 1);
  folderRow->addWidget(browse_);
  form->addRow(tr("Device target"), target_);
  form->addRow(tr("Output format"), format_);
  form->addRow(tr("Profile"), profile_);
  form->addRow(tr("Folder"), folderRow);
  v->addLayout(form);
  footprint_ = new QLabel(tr("Flash and RAM: press Compute (nothing is written)."), this);
  footprint_->setWordWrap(true);
  footprint_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  v->addWidget(footprint_);
  message_ = new QLabel(this);
  message_->setWordWrap(true);
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  v->addWidget(message_);
  auto *buttons = new QDialogButtonBox(this);
  compute_ = buttons->addButton(tr("Compute Flash/RAM"), QDialogButtonBox::ActionRole);
  export_ = buttons->addButton(tr("Export"), QDialogButtonBox::AcceptRole);
  open_ = buttons->addButton(tr("Open Folder"), QDialogButtonBox::ActionRole);
  open_->setEnabled(false);
  buttons->addButton(QDialogButtonBox::Close);
  v->addWidget(buttons);

  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(compute_, &QPushButton::clicked, this, &ExportDialog::computeFootprint);
  connect(export_, &QPushButton::clicked, this, &ExportDialog::exportNow);
  connect(open_, &QPushButton::clicked, this,
          [this] { QDesktopServices::openUrl(QUrl::fromLocalFile(writtenDir_)); });
  connect(browse_, &QPushButton::clicked, this, [this] {
    QString d = QFileDialog::getExistingDirectory(this, tr("Export folder"), folder_->text());
    if (!d.isEmpty())
      folder_->setText(d);
  });
  // The default folder follows the choices until the user types one.
  auto changed = [this] { choicesChanged(); };
  connect(target_, &QComboBox::currentIndexChanged, this, changed);
  connect(format_, &QComboBox::currentIndexChanged, this, changed);
  connect(profile_, &QComboBox::currentIndexChanged, this, changed);
  connect(&watcher_, &QFutureWatcher<ExportWork>::finished, this, &ExportDialog::finished);
  bundleFor_ = chosenProject();
}

ExportDialog::~ExportDialog() { watcher_.waitForFinished(); }

QString ExportDialog::defaultFolder() const {
  kiln::ExportRequest r = requestFor(chosenProject(), projectPath_);
  // Beside the model (kiln::defaultExportDir), as `kiln export` writes it.
  return QDir::cleanPath(QDir::current().absoluteFilePath(QString::fromStdString(kiln::defaultExportDir(r))));
}

void ExportDialog::choicesChanged() {
  QString before = folder_->text();
  kiln::Project p = project_;
  // The default for the previous choices?
  bool wasDefault = false;
  for (const char *format : {"kiln", "c-module"})
    for (const std::string &target : kiln::knownTargets())
      for (const char *profile : {"default", "stripped"}) {
        for (auto [key, value] : {std::pair<const char *, std::string>{"output-format", format},
                                  {"target", target}, {"profile", profile}})
          llvm::cantFail(kiln::setRecipeOption(p.recipe, key, value)); // the dialog's own choices
        kiln::ExportRequest r = requestFor(p, projectPath_);
        wasDefault |= before == QDir::cleanPath(QDir::current().absoluteFilePath(
                                    QString::fromStdString(kiln::defaultExportDir(r))));
      }
  if (wasDefault || before.isEmpty())
    folder_->setText(defaultFolder());
  if (!(chosenProject() == bundleFor_)) {
    bundle_.reset();
    footprint_->setText(tr("Flash and RAM: press Compute (nothing is written)."));
  }
  message_->clear();
}

kiln::Project ExportDialog::chosenProject() const {
  kiln::Project p = project_;
  // The combo boxes offer only what the recipe's parser takes.
  llvm::cantFail(kiln::setRecipeOption(p.recipe, "target", target_->currentText().toStdString()));
  llvm::cantFail(kiln::setRecipeOption(p.recipe, "profile", profile_->currentText().toStdString()));
  llvm::cantFail(kiln::setRecipeOption(p.recipe, "output-format",
                                       format_->currentData().toString().toStdString()));
  QString dir = QDir::cleanPath(folder_->text().trimmed());
  QString base = QFileInfo(projectPath_).absolutePath();
  QString rel = QDir(base).relativeFilePath(dir);
  p.exportDir = (rel.startsWith(QLatin1String("..")) || QFileInfo(rel).isAbsolute() ? dir : rel).toStdString();
  if (folder_->text().trimmed().isEmpty())
    p.exportDir.clear();
  return p;
}

QString ExportDialog::folderProblem(const QString &dirText) {
  QString dir = dirText.trimmed();
  if (dir.isEmpty())
    return tr("Choose a folder to write the bundle into.");
  QFileInfo info(dir);
  if (info.exists()) {
    if (!info.isDir())
      return tr("%1 is a file, not a folder.").arg(dir);
    if (!info.isWritable())
      return tr("%1: this folder cannot be written (permission denied).").arg(dir);
    return {};
  }
  // Walk up to the first existing ancestor: the folder is created there.
  QString parent = QFileInfo(QDir::cleanPath(QDir(dir).absolutePath())).absolutePath();
  for (int guard = 0; guard < 256; ++guard) {
    QFileInfo p(parent);
    if (p.exists()) {
      if (!p.isDir())
        return tr("%1 cannot be created: %2 is a file, not a folder.").arg(dir, parent);
      if (!p.isWritable())
        return tr("%1 cannot be created: %2 cannot be written (permission denied).").arg(dir, parent);
      return {};
    }
    QString up = p.absolutePath();
    if (up == parent)
      break;
    parent = up;
  }
  return {};
}

void ExportDialog::showError(const QString &text) {
  message_->setStyleSheet(QStringLiteral("color: #b00000"));
  message_->setText(text);
  folder_->setToolTip(text);
}

void ExportDialog::computeFootprint() { start(false); }

void ExportDialog::exportNow() {
  QString why = folderProblem(folder_->text());
  if (!why.isEmpty()) {
    showError(why);
    folder_->setStyleSheet(QStringLiteral("background: #ffd8d8"));
    emit exported(false);
    return;
  }
  folder_->setStyleSheet(QString());
  folder_->setToolTip(QString());
  start(true);
}

void ExportDialog::start(bool write) {
  if (isBusy())
    return;
  kiln::Project chosen = chosenProject();
  writing_ = write;
  writingTo_ = QDir::cleanPath(folder_->text().trimmed());
  std::optional<kiln::ExportBundle> have;
  if (bundle_ && chosen.recipe == bundleFor_.recipe)
    have = bundle_;
  bundleFor_ = chosen;
  kiln::ExportRequest request = requestFor(chosen, projectPath_);
  message_->setStyleSheet(QString());
  message_->setText(have ? tr("Writing\u2026")
                         : tr("Compiling for %1\u2026").arg(QString::fromStdString(chosen.recipe.target)));
  compute_->setEnabled(false);
  export_->setEnabled(false);
  std::string dir = writingTo_.toStdString();
  watcher_.setFuture(QtConcurrent::run([request, have, write, dir]() -> ExportWork {
    ExportWork w;
    if (have) {
      w.bundle = have;
    } else {
      auto b = kiln::buildExportBundle(request);
      if (!b) {
        w.error = errorText(b.takeError());
        return w;
      }
      w.bundle = std::move(*b);
    }
    if (write) {
      if (llvm::Error e = kiln::writeExportBundle(*w.bundle, dir)) {
        w.error = errorText(std::move(e));
        w.ok = false;
        return w;
      }
      w.written = true;
    }
    w.ok = true;
    return w;
  }));
}

QString ExportDialog::summaryText() const {
  if (!bundle_)
    return {};
  const kiln::ExportFootprint &f = bundle_->footprint;
  QString stack = f.stackBytes >= 0 ? tr(", kernel stack %1").arg(formatBytes(f.stackBytes)) : QString();
  return tr("flash %1 (code %2, weights %3, metadata %4); RAM %5 (arena %6, inputs and outputs %7%8); %9 files")
      .arg(formatBytes(f.flashBytes), formatBytes(f.codeBytes), formatBytes(f.constantBytes),
           formatBytes(f.metadataBytes), formatBytes(f.ramBytes), formatBytes(f.arenaBytes), formatBytes(f.ioBytes),
           stack)
      .arg(bundle_->files.size());
}

void ExportDialog::finished() {
  ExportWork w = watcher_.result();
  compute_->setEnabled(true);
  export_->setEnabled(true);
  if (w.bundle)
    bundle_ = w.bundle;
  if (bundle_)
    footprint_->setText(tr("<b>Flash</b> %1 bytes &nbsp; <b>RAM</b> %2 bytes<br>%3")
                            .arg(bundle_->footprint.flashBytes).arg(bundle_->footprint.ramBytes)
                            .arg(summaryText().toHtmlEscaped()));
  if (!w.ok) {
    showError(w.error);
    writing_ ? emit exported(false) : emit footprintReady(false);
    return;
  }
  if (!writing_) {
    message_->setText(tr("Nothing written yet; Export writes into %1.").arg(folder_->text()));
    emit footprintReady(true);
    return;
  }
  emit footprintReady(true);
  writtenDir_ = writingTo_;
  open_->setEnabled(true);
  message_->setText(tr("Wrote %1 files into %2. Repeat with: %3")
                        .arg(bundle_->files.size()).arg(writtenDir_, QString::fromStdString(bundle_->command)));
  emit exported(true);
}

} // namespace kiln::workbench
