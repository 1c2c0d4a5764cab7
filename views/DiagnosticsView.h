//===- DiagnosticsView.h - Errors, warnings and notes ----------*- C++ -*-===//
//
// A list of messages (the compiler's llvm::Error text, plan checker
// findings, notes). Errors are the compiler's and the files'; a setting
// the user typed and the workbench refused is a warning. A message naming
// a source operator ("CONV_2D #12", "OP#12") can be activated
// (double-click, Enter) to jump to the dispatch that fused it; one
// reporting a dynamic input dimension gets a button under it ("Fix input
// 'x' to 1×76×32×1 and open") that applies the size the compiler
// suggests, as Tune's shapes would.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_VIEWS_DIAGNOSTICSVIEW_H
#define KILN_VIEWS_DIAGNOSTICSVIEW_H

#include "ShapesPanel.h"

#include <QTreeWidget>

#include <vector>

class QAbstractButton;

namespace kiln::views {

/// The diagnostics panel.
class DiagnosticsView : public QTreeWidget {
  Q_OBJECT
public:
  enum class Severity { Note, Warning, Error };
  explicit DiagnosticsView(QWidget *parent = nullptr);
  /// Appends a message about `file` and scrolls to it (and to its fix
  /// button, on a row of its own spanning the panel, if it has one).
  /// `unfixed`: the inputs whose dynamic dimensions stopped the import
  /// (kiln::UnfixedInputError's data); the first with a suggested shape
  /// gets the button.
  void add(Severity severity, const QString &file, const QString &message,
           const std::vector<DynamicInput> &unfixed = {});
  /// Messages of `severity` so far.
  int count(Severity severity) const;
  /// Text of the last message (empty if none).
  QString lastMessage() const;
  /// The source operator index a message names ("CONV_2D #12",
  /// "operator CUSTOM #3", "OP#7", ONNX "node #12 Conv"), -1 if none.
  static int64_t operatorIndexIn(const QString &message);
  /// The "--fix-shape=" value a message suggests, empty if none.
  static QString shapeFixIn(const QString &message);
  /// The shape-fix button under top-level message `row` (nullptr if that
  /// message offers none).
  QAbstractButton *fixButton(int row) const;

signals:
  /// The user activated a message naming source operator `index`.
  void operatorActivated(qint64 index);
  /// The user chose to apply a suggested shape fix ("INPUT=1x76x32x1") to
  /// the model file `file` (the message's, absolute).
  void shapeFixRequested(const QString &file, const QString &fix);

protected:
  void contextMenuEvent(QContextMenuEvent *event) override;

private:
  void activate(QTreeWidgetItem *item);
};

} // namespace kiln::views

#endif
