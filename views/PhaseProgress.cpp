//===- PhaseProgress.cpp - One progress segment per compile phase --------===//
#include "PhaseProgress.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>

namespace kiln::views {

PhaseProgress::PhaseProgress(QWidget *parent) : QWidget(parent), label_(new QLabel(this)) {
  auto *layout = new QHBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  layout->addWidget(label_);
  for (int i = 0; i < kiln::kNumCompilePhases; ++i) {
    auto *bar = new QProgressBar(this);
    bar->setRange(0, 1);
    bar->setValue(0);
    bar->setTextVisible(false);
    bar->setFixedWidth(22);
    bar->setMaximumHeight(12);
    bar->setToolTip(QString::fromLatin1(kiln::toString(kiln::CompilePhase(i))));
    bar->setAccessibleName(bar->toolTip());
    layout->addWidget(bar);
    bars_.push_back(bar);
  }
  label_->setMinimumWidth(label_->fontMetrics().horizontalAdvance(QStringLiteral("stripped build: lower-to-llvm")));
}

void PhaseProgress::start(const QString &what) {
  what_ = what;
  current_ = -1;
  seen_ = 0;
  for (QProgressBar *b : bars_) {
    b->setRange(0, 1);
    b->setValue(0);
  }
  label_->setText(tr("%1: starting").arg(what));
}

void PhaseProgress::setPhase(kiln::CompilePhase phase) {
  int p = int(phase);
  for (int i = 0; i < (int)bars_.size(); ++i) {
    if (i < p) {
      bars_[i]->setRange(0, 1);
      bars_[i]->setValue(1);
    } else if (i == p) {
      bars_[i]->setRange(0, 0); // busy
    }
  }
  current_ = p;
  ++seen_;
  label_->setText(tr("%1: %2").arg(what_, QString::fromLatin1(kiln::toString(phase))));
}

void PhaseProgress::finish(bool ok, const QString &message) {
  for (int i = 0; i < (int)bars_.size(); ++i) {
    bars_[i]->setRange(0, 1);
    bars_[i]->setValue(ok || i < current_ ? 1 : 0);
  }
  current_ = -1;
  label_->setText(message);
}

} // namespace kiln::views
