//===- DiagnosticsView.h - Errors, warnings and notes ----------*- C++ -*-===//
//
// A list of messages (the compiler's llvm::Error text, plan checker
// findings, notes). A message naming a source operator ("CONV_2D #12",
// "OP#12") can be activated (double-click, Enter) to jump to the dispatch
// that fused it; one suggesting "--fix-shape=..." offers to apply it.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_VIEWS_DIAGNOSTICSVIEW_H
#define KILN_VIEWS_DIAGNOSTICSVIEW_H

#include <QTreeWidget>

namespace kiln::views {

/// The diagnostics panel.
class DiagnosticsView : public QTreeWidget {
  Q_OBJECT
public:
  enum class Severity { Note, Warning, Error };
  explicit DiagnosticsView(QWidget *parent = nullptr);
  /// Appends a message about `file` and scrolls to it.
  void add(Severity severity, const QString &file, const QString &message);
  /// Messages of `severity` so far.
  int count(Severity severity) const;
  /// Text of the last message (empty if none).
  QString lastMessage() const;
  /// The source operator index a message names ("CONV_2D #12",
  /// "operator CUSTOM #3", "OP#7"), -1 if none.
  static int64_t operatorIndexIn(const QString &message);
  /// The "--fix-shape=" value a message suggests, empty if none.
  static QString shapeFixIn(const QString &message);

signals:
  /// The user activated a message naming source operator `index`.
  void operatorActivated(qint64 index);
  /// The user chose to apply a suggested shape fix ("INPUT=1x76x32x1").
  void shapeFixRequested(const QString &fix);

protected:
  void contextMenuEvent(QContextMenuEvent *event) override;

private:
  void activate(QTreeWidgetItem *item);
};

} // namespace kiln::views

#endif
