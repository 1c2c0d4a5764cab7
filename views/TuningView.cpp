//===- TuningView.cpp - The Tune panel ------------------------------------===//
#include "TuningView.h"

#include "PlanModels.h"

#include "kiln/Compiler.h"

#include <QCheckBox>
#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>

#include <utility>

namespace kiln::views {

TuningView::TuningView(QWidget *parent) : QWidget(parent) {
  auto *v = new QVBoxLayout(this);
  auto *bar = new QHBoxLayout;
  target_ = new QComboBox(this);
  // Device names as Export lists them; the recipe's name is the item data.
  for (const std::string &t : kiln::knownTargets())
    target_->addItem(targetLabel(t), QString::fromStdString(t));
  target_->setToolTip(tr("Device target the workbench builds for"));
  profile_ = new QComboBox(this);
  profile_->addItems({QStringLiteral("default"), QStringLiteral("stripped")});
  profile_->setToolTip(tr("Build profile: stripped drops the symbol table and the reflection section"));
  format_ = new QComboBox(this);
  format_->addItems({QStringLiteral("kiln"), QStringLiteral("c-module")});
  format_->setToolTip(tr("Output format for export: .kiln artifact or static C module"));
  fusion_ = new QCheckBox(tr("Fusion"), this);
  fusion_->setToolTip(tr("Fuse elementwise consumers and padding into their root's dispatch (--fusion)"));
  build_ = new QPushButton(tr("Build"), this);
  build_->setToolTip(tr("Generate code for these settings now (it also starts by itself shortly after a change)"));
  reset_ = new QPushButton(tr("Reset Tuning"), this);
  reset_->setToolTip(tr("Back to the compiler's tile sizes and fusion for every dispatch (undoable)"));
  // One chooser per row, so the panel fits a narrow side dock (about 240
  // pixels); the combos may shrink below their longest entry.
  auto *form = new QGridLayout;
  int row = 0;
  for (auto [label, box] : {std::pair{tr("Target"), target_}, std::pair{tr("Profile"), profile_},
                            std::pair{tr("Format"), format_}}) {
    box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    box->setMinimumContentsLength(8);
    box->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    auto *l = new QLabel(label, this);
    l->setBuddy(box);
    form->addWidget(l, row, 0);
    form->addWidget(box, row++, 1);
  }
  form->addWidget(fusion_, row++, 1);
  form->setColumnStretch(1, 1);
  v->addLayout(form);
  bar->addStretch(1);
  bar->addWidget(reset_);
  bar->addWidget(build_);
  v->addLayout(bar);

  shapes_ = new ShapesPanel(this);
  shapes_->hide();
  v->addWidget(shapes_);

  model_ = new TuningModel(this);
  table_ = new QTableView(this);
  table_->setModel(model_);
  table_->setAccessibleName(tr("Tuning"));
  table_->setAlternatingRowColors(true);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(false);
  table_->horizontalHeader()->setSectionResizeMode(TuningModel::Ops, QHeaderView::Stretch);
  // What the user edits first (tile sizes, fusion), so a narrow dock shows
  // them without scrolling sideways; the model's column order is unchanged.
  table_->horizontalHeader()->moveSection(table_->horizontalHeader()->visualIndex(TuningModel::Tiles), 1);
  table_->horizontalHeader()->moveSection(table_->horizontalHeader()->visualIndex(TuningModel::Fusion), 2);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed |
                          QAbstractItemView::AnyKeyPressed);
  // A few rows at least: a short dock scrolls the panel (MainWindow puts
  // it in a scroll area) rather than squeezing the table away.
  table_->setMinimumHeight(table_->fontMetrics().height() * 8);
  v->addWidget(table_, 1);

  message_ = new QLabel(this);
  message_->setWordWrap(true);
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  v->addWidget(message_);

  connect(model_, &TuningModel::rejected, this, [this](qint64, const QString &m) { showMessage(m, true); });
  connect(shapes_, &ShapesPanel::rejected, this, [this](const QString &m) { showMessage(m, true); });
  // Long source names (ONNX paths such as /backbone/stage3/block2/conv/Conv)
  // are elided in the middle, keeping the distinctive tail, and no column
  // grows past about 28 characters; the tooltip has the whole text.
  table_->setTextElideMode(Qt::ElideMiddle);
  connect(model_, &QAbstractItemModel::modelReset, this, [this] {
    table_->resizeColumnsToContents();
    const int cap = table_->fontMetrics().averageCharWidth() * 28;
    for (int c = 0; c < model_->columnCount(); ++c)
      if (table_->horizontalHeader()->sectionResizeMode(c) != QHeaderView::Stretch &&
          table_->columnWidth(c) > cap)
        table_->setColumnWidth(c, cap);
  });
  connect(target_, &QComboBox::currentIndexChanged, this, [this] {
    if (!updating_)
      emit targetChosen(target_->currentData().toString());
  });
  connect(profile_, &QComboBox::currentTextChanged, this, [this](const QString &t) {
    if (!updating_)
      emit profileChosen(t);
  });
  connect(format_, &QComboBox::currentTextChanged, this, [this](const QString &t) {
    if (!updating_)
      emit formatChosen(t);
  });
  connect(fusion_, &QCheckBox::toggled, this, [this](bool on) {
    if (!updating_)
      emit fusionChosen(on);
  });
  connect(build_, &QPushButton::clicked, this, &TuningView::buildRequested);
  connect(reset_, &QPushButton::clicked, this, &TuningView::resetRequested);
}

void TuningView::setSettings(const QString &target, const QString &profile, const QString &format, bool fusion) {
  updating_ = true;
  target_->setCurrentIndex(target_->findData(target));
  profile_->setCurrentText(profile);
  format_->setCurrentText(format);
  fusion_->setChecked(fusion);
  updating_ = false;
}

void TuningView::showMessage(const QString &text, bool error) {
  message_->setStyleSheet(error ? QStringLiteral("color: #b00000") : QString());
  message_->setText(text);
}

} // namespace kiln::views
