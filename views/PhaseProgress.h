//===- PhaseProgress.h - One progress segment per compile phase -*- C++ -*-===//
#ifndef KILN_VIEWS_PHASEPROGRESS_H
#define KILN_VIEWS_PHASEPROGRESS_H

#include "kiln/Compiler.h"

#include <QWidget>

#include <vector>

class QLabel;
class QProgressBar;

namespace kiln::views {

/// A row of kNumCompilePhases small bars, one per pipeline phase (import
/// .. artifact): done phases full, the running one busy, later ones empty,
/// with the current phase named beside them.
class PhaseProgress : public QWidget {
  Q_OBJECT
public:
  explicit PhaseProgress(QWidget *parent = nullptr);
  /// Starts a new compilation named `what` (e.g. "default build").
  void start(const QString &what);
  /// Phase `phase` has started.
  void setPhase(kiln::CompilePhase phase);
  /// Finished (all full) or stopped (`ok` false: bars keep their state).
  void finish(bool ok, const QString &message);
  /// Index of the running phase, -1 when idle.
  int currentPhase() const { return current_; }
  /// Phases started since start().
  int phasesSeen() const { return seen_; }

private:
  std::vector<QProgressBar *> bars_;
  QLabel *label_;
  QString what_;
  int current_ = -1;
  int seen_ = 0;
};

} // namespace kiln::views

#endif
