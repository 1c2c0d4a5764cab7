//===- TuningView.h - The Tune panel ----------------------------*- C++ -*-===//
//
// Target, profile, output format and fusion choosers (one per row, so the
// panel fits a narrow side dock), Reset Tuning and Build; the dynamic input
// dimensions (ShapesPanel); the dispatch table with editable tile sizes and
// fusion per dispatch (TuningModel); a message line that explains refused
// input in red. The panel only reports what the user asked for; the
// workbench applies it (undoable), saves the project and re-plans.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_VIEWS_TUNINGVIEW_H
#define KILN_VIEWS_TUNINGVIEW_H

#include "ShapesPanel.h"
#include "TuningModel.h"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QLabel;
class QPushButton;
class QTableView;

namespace kiln::views {

class TuningView : public QWidget {
  Q_OBJECT
public:
  explicit TuningView(QWidget *parent = nullptr);

  /// Shows the settings (combos are set without emitting).
  void setSettings(const QString &target, const QString &profile, const QString &format, bool fusion);
  TuningModel *model() const { return model_; }
  QTableView *table() const { return table_; }
  ShapesPanel *shapes() const { return shapes_; }
  QComboBox *targetBox() const { return target_; }
  QComboBox *profileBox() const { return profile_; }
  QComboBox *formatBox() const { return format_; }
  QCheckBox *fusionBox() const { return fusion_; }
  QPushButton *buildButton() const { return build_; }
  QPushButton *resetButton() const { return reset_; }
  /// The message line: refusals in red, re-plan status otherwise.
  QLabel *messageLabel() const { return message_; }
  /// Shows `text` on the message line (`error`: red).
  void showMessage(const QString &text, bool error);

signals:
  void targetChosen(const QString &target);
  void profileChosen(const QString &profile);
  void formatChosen(const QString &format);
  void fusionChosen(bool on);
  void buildRequested();
  /// Back to the compiler's tile sizes and fusion everywhere.
  void resetRequested();

private:
  TuningModel *model_;
  QTableView *table_;
  ShapesPanel *shapes_;
  QComboBox *target_, *profile_, *format_;
  QCheckBox *fusion_;
  QPushButton *build_, *reset_;
  QLabel *message_;
  bool updating_ = false;
};

} // namespace kiln::views

#endif
