//===- ExportDialog.cpp - Export a deployment bundle ----------------------===//
#include "ExportDialog.h"

#include "PlanModels.h"

#include <QCheckBox>
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
#include <QScreen>
#include <QScrollArea>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QStyle>
#include <QUrl>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <limits>

namespace kiln::workbench {

using kiln::views::formatBytes;

static QString errorText(llvm::Error e) { return QString::fromStdString(llvm::toString(std::move(e))); }

/// True if `target` (a knownTargets() name) is bare metal.
static bool bareMetal(const std::string &target) {
  kiln::BuildRecipe r;
  r.target = target;
  return kiln::recipeIsBareMetal(r);
}

/// The KiB a budget of `bytes` shows (rounded up; 0 = none).
static int budgetKiB(int64_t bytes) {
  return int(std::min<int64_t>((bytes + 1023) / 1024, std::numeric_limits<int>::max()));
}

QString ExportDialog::targetLabel(const std::string &target) {
  return kiln::views::targetLabel(target);
}

ExportDialog::ExportDialog(const kiln::Project &project, const QString &projectPath, QWidget *parent)
    : QDialog(parent), project_(project), projectPath_(projectPath) {
  setWindowTitle(tr("Export \u2014 %1").arg(QString::fromStdString(project.model)));
  auto *v = new QVBoxLayout(this);
  // The form and the buttons keep their size hints; the results below the
  // form (what will be written, the footprint, the budget check, the
  // message) scroll in the space left, so no field is ever squashed.
  buildForm(v);
  auto *results = new QWidget;
  auto *r = new QVBoxLayout(results);
  r->setContentsMargins(0, 0, 0, 0);
  auto label = [results](const QString &text = QString()) {
    auto *l = new QLabel(text, results);
    l->setWordWrap(true);
    l->setTextInteractionFlags(Qt::TextSelectableByMouse);
    l->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    return l;
  };
  planned_ = label();
  r->addWidget(planned_);
  footprint_ = label(tr("Flash and RAM: press Compute (nothing is written)."));
  r->addWidget(footprint_);
  auto *budgetRow = new QHBoxLayout;
  budgetIcon_ = new QLabel(results);
  budgetIcon_->setPixmap(style()->standardIcon(QStyle::SP_MessageBoxWarning).pixmap(16, 16));
  budgetIcon_->hide();
  budget_ = label();
  budget_->hide();
  budgetRow->addWidget(budgetIcon_, 0, Qt::AlignTop);
  budgetRow->addWidget(budget_, 1);
  r->addLayout(budgetRow);
  message_ = label();
  r->addWidget(message_);
  r->addStretch(1);
  results_ = new QScrollArea(this);
  results_->setWidget(results);
  results_->setWidgetResizable(true);
  results_->setFrameShape(QFrame::NoFrame);
  results_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  results_->setMinimumHeight(3 * fontMetrics().lineSpacing());
  v->addWidget(results_, 1);
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
  connect(target_, &QComboBox::currentIndexChanged, this, &ExportDialog::targetChanged);
  connect(format_, &QComboBox::currentIndexChanged, this, [this] {
    if (!forcingFormat_)
      formatForced_ = false; // the user's own choice
    choicesChanged();
  });
  connect(profile_, &QComboBox::currentIndexChanged, this, changed);
  connect(kit_, &QCheckBox::toggled, this, changed);
  connect(folder_, &QLineEdit::textChanged, this, &ExportDialog::showPlanned);
  for (QSpinBox *box : {ramBudget_, flashBudget_})
    connect(box, &QSpinBox::valueChanged, this, &ExportDialog::showBudgetCheck);
  connect(&watcher_, &QFutureWatcher<ExportWork>::finished, this, &ExportDialog::finished);
  connect(&checkWatcher_, &QFutureWatcher<QString>::finished, this, &ExportDialog::checkFinished);
  budgetTarget_ = chosenTarget();
  budgetsByTarget_[budgetTarget_] = project_.exportSettings.budget;
  targetChanged(); // a bare-metal target gets the C module
  bundleFor_ = chosenRequest();
  showPlanned();
}

void ExportDialog::buildForm(QVBoxLayout *layout) {
  // The export's own settings, else the working build's (exportRecipe).
  const kiln::BuildRecipe recipe = kiln::exportRecipe(project_);
  auto *form = new QFormLayout;
  target_ = new QComboBox(this);
  for (const std::string &t : kiln::knownTargets())
    target_->addItem(targetLabel(t), QString::fromStdString(t));
  target_->setCurrentIndex(std::max(0, target_->findData(QString::fromStdString(recipe.target))));
  format_ = new QComboBox(this);
  format_->addItem(tr(".kiln artifact"), QStringLiteral("kiln"));
  format_->addItem(tr("static C module"), QStringLiteral("c-module"));
  format_->setCurrentIndex(recipe.format == kiln::OutputFormat::CModule ? 1 : 0);
  profile_ = new QComboBox(this);
  profile_->addItems({QStringLiteral("default"), QStringLiteral("stripped")});
  profile_->setCurrentText(QString::fromStdString(recipe.profile));
  auto budgetBox = [this](int64_t bytes, const QString &tip) {
    auto *box = new QSpinBox(this);
    box->setRange(0, std::numeric_limits<int>::max());
    box->setSuffix(tr(" KiB"));
    box->setSpecialValueText(tr("none"));
    box->setValue(budgetKiB(bytes));
    box->setToolTip(tip);
    return box;
  };
  const kiln::MemoryBudget &budget = project_.exportSettings.budget;
  ramBudget_ = budgetBox(budget.ramBytes, tr("RAM of the device (arena, inputs and outputs, kernel stack)"));
  flashBudget_ = budgetBox(budget.flashBytes, tr("Flash of the device (code, weights, metadata)"));
  folder_ = new QLineEdit(this);
  folder_->setMinimumWidth(420);
  QString dir = QString::fromStdString(kiln::projectExportDir(project_, projectPath_.toStdString()));
  folder_->setText(dir.isEmpty() ? folderFor(kiln::projectExportRequest(project_, projectPath_.toStdString()))
                                 : QDir::cleanPath(dir));
  browse_ = new QPushButton(tr("Browse\u2026"), this);
  auto *folderRow = new QHBoxLayout;
  folderRow->addWidget(folder_, 1);
  folderRow->addWidget(browse_);
  form->addRow(tr("Device target"), target_);
  form->addRow(tr("Output format"), format_);
  form->addRow(tr("Profile"), profile_);
  form->addRow(tr("RAM budget"), ramBudget_);
  form->addRow(tr("Flash budget"), flashBudget_);
  kit_ = new QCheckBox(tr("Add a project that builds and runs it on the device"), this);
  kit_->setChecked(project_.exportSettings.kit);
  kit_->setToolTip(tr("Cortex-M: startup code, a linker script sized for the board, main.c and a "
                      "Makefile for arm-none-eabi-gcc (make run: QEMU). Linux: the runtime "
                      "archive for the target, runtime.h, main.c and a Makefile. The program runs "
                      "the model on a deterministic pattern and prints every output."));
  form->addRow(tr("Firmware kit"), kit_);
  form->addRow(tr("Folder"), folderRow);
  layout->addLayout(form);
}

ExportDialog::~ExportDialog() {
  cancel_->store(true); // a build still running stops at its next phase
  watcher_.waitForFinished();
  checkWatcher_.waitForFinished();
}

QString ExportDialog::folderFor(const kiln::ExportRequest &request) const {
  // Beside the model (kiln::defaultExportDir), as `kiln export` writes it.
  return QDir::cleanPath(QDir::current().absoluteFilePath(QString::fromStdString(kiln::defaultExportDir(request))));
}

QString ExportDialog::defaultFolder() const { return folderFor(chosenRequest()); }

bool ExportDialog::folderIsDefault() const {
  return QDir::cleanPath(folder_->text().trimmed()) == defaultFolder();
}

void ExportDialog::targetChanged() {
  // A bare-metal target takes only the C module: switch at once (and back
  // to the artifact for a hosted target if this switch made it).
  const bool bare = bareMetal(chosenTarget());
  if (auto *model = qobject_cast<QStandardItemModel *>(format_->model()))
    if (QStandardItem *artifact = model->item(0)) {
      artifact->setEnabled(!bare);
      artifact->setToolTip(bare ? tr("A bare-metal target cannot load a .kiln artifact: it gets a static C module")
                                : QString());
    }
  // On bare metal the C module is the only format, whoever chose it: a
  // hosted target chosen next gets the artifact back.
  forcingFormat_ = true;
  if (bare) {
    format_->setCurrentIndex(1);
    formatForced_ = true;
  } else if (formatForced_) {
    format_->setCurrentIndex(0);
    formatForced_ = false;
  }
  forcingFormat_ = false;
  // Budgets belong to a device: the last target's stay with it, this one's
  // come back (none for a target not budgeted yet).
  const std::string target = chosenTarget();
  if (target != budgetTarget_) {
    auto had = budgetsByTarget_.find(budgetTarget_);
    budgetsByTarget_[budgetTarget_] =
        budgetFrom(had == budgetsByTarget_.end() ? kiln::MemoryBudget() : had->second);
    budgetTarget_ = target;
    const kiln::MemoryBudget now = storedBudget();
    const QSignalBlocker blockRam(ramBudget_), blockFlash(flashBudget_);
    ramBudget_->setValue(budgetKiB(now.ramBytes));
    flashBudget_->setValue(budgetKiB(now.flashBytes));
  }
  choicesChanged();
}

kiln::MemoryBudget ExportDialog::storedBudget() const {
  auto at = budgetsByTarget_.find(budgetTarget_);
  return at == budgetsByTarget_.end() ? kiln::MemoryBudget() : at->second;
}

void ExportDialog::choicesChanged() {
  QString before = QDir::cleanPath(folder_->text().trimmed());
  // The default for some earlier choices?
  bool wasDefault = false;
  kiln::ExportRequest r = chosenRequest();
  for (kiln::OutputFormat format : {kiln::OutputFormat::Artifact, kiln::OutputFormat::CModule})
    for (const std::string &target : kiln::knownTargets())
      for (const char *profile : {"default", "stripped"}) {
        r.recipe.format = format;
        r.recipe.target = target;
        r.recipe.profile = profile;
        wasDefault |= before == folderFor(r);
      }
  if (wasDefault || before.isEmpty())
    folder_->setText(defaultFolder());
  const kiln::ExportRequest chosen = chosenRequest();
  if (!(chosen.recipe == bundleFor_.recipe) || !(chosen.kit == bundleFor_.kit)) {
    bundle_.reset();
    footprint_->setText(tr("Flash and RAM: press Compute (nothing is written)."));
  }
  message_->clear();
  showPlanned();
  showBudgetCheck();
  startCheck();
}

void ExportDialog::startCheck() {
  const int generation = ++checkGeneration_;
  refusal_.clear();
  updateButtons();
  kiln::ExportRequest request = chosenRequest();
  auto cancel = cancel_;
  request.onPhase = [cancel](kiln::CompilePhase) { return !cancel->load(); };
  if (checkWatcher_.isRunning())
    return; // checkFinished starts the check of the newest choices
  checkedGeneration_ = generation;
  checkWatcher_.setFuture(QtConcurrent::run([request]() -> QString {
    if (llvm::Error e = kiln::checkExportRequest(request))
      return errorText(std::move(e));
    return {};
  }));
}

void ExportDialog::checkFinished() {
  if (checkedGeneration_ != checkGeneration_) {
    startCheck(); // the choices changed while it ran
    return;
  }
  refusal_ = checkWatcher_.result();
  if (!refusal_.isEmpty())
    showError(refusal_);
  updateButtons();
  emit checked(!refusal_.isEmpty());
}

void ExportDialog::updateButtons() {
  const bool can = !isBusy() && refusal_.isEmpty();
  compute_->setEnabled(can);
  export_->setEnabled(can);
  const QString why =
      refusal_.isEmpty() ? QString() : tr("Not possible with these choices: %1").arg(refusal_);
  compute_->setToolTip(why);
  export_->setToolTip(why);
}

void ExportDialog::setWorkingRecipe(const kiln::BuildRecipe &recipe) {
  if (recipe == project_.recipe)
    return;
  project_.recipe = recipe;
  choicesChanged();
}

std::string ExportDialog::chosenTarget() const { return target_->currentData().toString().toStdString(); }

void ExportDialog::setTarget(const std::string &target) {
  int i = target_->findData(QString::fromStdString(target));
  if (i >= 0)
    target_->setCurrentIndex(i);
}

kiln::MemoryBudget ExportDialog::chosenBudget() const { return budgetFrom(storedBudget()); }

kiln::MemoryBudget ExportDialog::budgetFrom(const kiln::MemoryBudget &had) const {
  // A budget the user left alone keeps its bytes (a hand-written one need
  // not be whole KiB).
  auto bytes = [](QSpinBox *box, int64_t before) {
    return box->value() == budgetKiB(before) ? before : int64_t(box->value()) * 1024;
  };
  return {bytes(ramBudget_, had.ramBytes), bytes(flashBudget_, had.flashBytes)};
}

kiln::Project ExportDialog::chosenProject() const {
  kiln::Project p = project_;
  kiln::ExportSettings &e = p.exportSettings;
  const kiln::BuildRecipe &working = project_.recipe;
  // The combo boxes offer only what the recipe's parser takes.
  const std::string target = chosenTarget();
  if (target == working.target) {
    e.target.clear(); // the working build's target, CPU and features
    e.targetCpu.clear();
    e.targetFeatures.clear();
  } else if (target != e.target) {
    e.target = target; // the target's own CPU and features
    e.targetCpu.clear();
    e.targetFeatures.clear();
  }
  const std::string profile = profile_->currentText().toStdString();
  e.profile = profile == working.profile ? std::string() : profile;
  kiln::OutputFormat format = kiln::OutputFormat::Artifact;
  kiln::parseOutputFormat(format_->currentData().toString().toStdString(), format);
  e.format = format == working.format ? std::nullopt : std::optional(format);
  e.budget = chosenBudget();
  e.kit = kit_->isChecked();
  QString dir = QDir::cleanPath(folder_->text().trimmed());
  QString base = QFileInfo(projectPath_).absolutePath();
  QString rel = QDir(base).relativeFilePath(dir);
  p.exportDir = (rel.startsWith(QLatin1String("..")) || QFileInfo(rel).isAbsolute() ? dir : rel).toStdString();
  if (folder_->text().trimmed().isEmpty())
    p.exportDir.clear();
  return p;
}

kiln::ExportRequest ExportDialog::chosenRequest() const {
  return kiln::projectExportRequest(chosenProject(), projectPath_.toStdString());
}

void ExportDialog::showPlanned() {
  kiln::ExportRequest r = chosenRequest();
  QStringList files;
  for (const std::string &name : kiln::exportFileNames(r))
    files << QString::fromStdString(name);
  QString format = r.recipe.format == kiln::OutputFormat::CModule ? tr("a static C module") : tr("a .kiln artifact");
  // The host's name is a phrase ("This computer"): lower case mid-sentence.
  auto inSentence = [](const std::string &target) {
    QString label = targetLabel(target);
    if (target == "host" && !label.isEmpty())
      label[0] = label[0].toLower();
    return label;
  };
  QString working = inSentence(project_.recipe.target);
  planned_->setText(tr("Export writes %1 for %2, profile %3, into %4: %5. The workbench keeps building for "
                       "%6; exporting does not change that.")
                        .arg(format, inSentence(r.recipe.target), QString::fromStdString(r.recipe.profile),
                             QDir::cleanPath(folder_->text().trimmed()), files.join(QStringLiteral(", ")),
                             working));
}

void ExportDialog::showBudgetCheck() {
  if (overBudgetOffered_) { // Export Anyway was for the budgets shown before
    overBudgetOffered_ = false;
    export_->setText(tr("Export"));
  }
  std::vector<kiln::BudgetCheck> checks;
  if (bundle_)
    checks = kiln::checkBudget(bundle_->footprint, chosenBudget()); // the footprint does not depend on them
  budgetExceeded_ = std::any_of(checks.begin(), checks.end(), [](const kiln::BudgetCheck &c) { return c.exceeded; });
  QStringList lines;
  for (const kiln::BudgetCheck &c : checks)
    lines << QString::fromStdString(c.message);
  budget_->setText(budgetExceeded_ ? tr("Does not fit: %1.").arg(lines.join(QStringLiteral("; ")))
                                   : tr("Fits: %1.").arg(lines.join(QStringLiteral("; "))));
  budget_->setStyleSheet(budgetExceeded_ ? QStringLiteral("color: #b00000") : QString());
  budget_->setVisible(!checks.empty());
  budgetIcon_->setVisible(budgetExceeded_);
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
  fitResults();
}

void ExportDialog::fitResults() {
  if (!isVisible())
    return;
  QWidget *content = results_->widget();
  content->layout()->activate();
  const int width = results_->viewport()->width();
  const int wanted = content->hasHeightForWidth() ? content->heightForWidth(width) : content->sizeHint().height();
  const int extra = wanted - results_->viewport()->height();
  if (extra <= 0)
    return;
  // Grow (never shrink) by what the results need, up to the screen; past
  // that the results scroll.
  const QRect avail = screen()->availableGeometry();
  const int frame = frameGeometry().height() - height();
  const int h = std::min(height() + extra, avail.height() - frame);
  if (h <= height())
    return;
  resize(this->width(), h);
  if (frameGeometry().bottom() > avail.bottom())
    move(x(), std::max(avail.top(), avail.bottom() - frameGeometry().height() + 1));
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
  if (isBusy() || !refusal_.isEmpty())
    return;
  kiln::ExportRequest request = chosenRequest();
  auto cancel = cancel_;
  request.onPhase = [cancel](kiln::CompilePhase) { return !cancel->load(); };
  const bool overBudgetConfirmed = write && overBudgetOffered_;
  writing_ = write;
  writingTo_ = QDir::cleanPath(folder_->text().trimmed());
  // The manifest records the budgets: a bundle built with others is
  // rebuilt to be written.
  std::optional<kiln::ExportBundle> have;
  // The kit's linker script holds the budgets: a written bundle is built
  // for the budgets shown.
  if (bundle_ && request.recipe == bundleFor_.recipe && request.kit == bundleFor_.kit &&
      (!write || request.budget == bundleFor_.budget))
    have = bundle_;
  bundleFor_ = request;
  message_->setStyleSheet(QString());
  message_->setText(have ? tr("Writing\u2026")
                         : tr("Compiling for %1\u2026").arg(targetLabel(request.recipe.target)));
  std::string dir = writingTo_.toStdString();
  watcher_.setFuture(
      QtConcurrent::run([request, have, write, dir, cancel, overBudgetConfirmed]() -> ExportWork {
        ExportWork w;
        if (have) {
          w.bundle = have;
        } else {
          auto b = kiln::buildExportBundle(request);
          if (!b) {
            w.cancelled = cancel->load();
            w.error = errorText(b.takeError());
            return w;
          }
          w.bundle = std::move(*b);
        }
        if (write && cancel->load()) {
          w.cancelled = true;
          return w;
        }
        auto checks = kiln::checkBudget(w.bundle->footprint, request.budget);
        if (write && !overBudgetConfirmed &&
            std::any_of(checks.begin(), checks.end(),
                        [](const kiln::BudgetCheck &c) { return c.exceeded; })) {
          w.overBudget = true;
          w.ok = true;
          return w;
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
  updateButtons();
}

void ExportDialog::reject() {
  if (isBusy()) {
    cancel_->store(true); // the build stops at its next phase; nothing is written
    message_->setText(tr("Cancelled: nothing written."));
  }
  QDialog::reject();
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
  updateButtons();
  if (w.cancelled) {
    message_->setText(tr("Cancelled: nothing written."));
    writing_ ? emit exported(false) : emit footprintReady(false);
    return;
  }
  if (w.bundle)
    bundle_ = w.bundle;
  if (bundle_)
    footprint_->setText(tr("<b>Flash</b> %1 bytes &nbsp; <b>RAM</b> %2 bytes<br>%3")
                            .arg(bundle_->footprint.flashBytes).arg(bundle_->footprint.ramBytes)
                            .arg(summaryText().toHtmlEscaped()));
  showBudgetCheck();
  fitResults();
  if (!w.ok) {
    showError(w.error);
    writing_ ? emit exported(false) : emit footprintReady(false);
    return;
  }
  if (!writing_) {
    message_->setText(tr("Nothing written yet."));
    emit footprintReady(true);
    return;
  }
  if (w.overBudget) {
    // Asked in the dialog, not in a second window: Export Anyway writes it.
    emit footprintReady(true);
    overBudgetOffered_ = true;
    export_->setText(tr("Export Anyway"));
    message_->setStyleSheet(QStringLiteral("color: #b00000"));
    message_->setText(
        tr("Nothing written: the build does not fit the budgets above. Change the choices, or "
           "press Export Anyway to write it as it is."));
    fitResults();
    emit exported(false);
    return;
  }
  emit footprintReady(true);
  overBudgetOffered_ = false;
  export_->setText(tr("Export"));
  writtenDir_ = writingTo_;
  open_->setEnabled(true);
  message_->setText(tr("Wrote %1 files into %2. Repeat with: %3")
                        .arg(bundle_->files.size()).arg(writtenDir_, QString::fromStdString(bundle_->command)));
  fitResults();
  emit exported(true);
}

} // namespace kiln::workbench
