//===- InspectorView.h - The selected dispatch in detail -------*- C++ -*-===//
//
// For the dispatch selected in the shared selection: its fused source
// operators (names and indices), loops and tile sizes, workgroups, FLOPs,
// bindings; and its IR at every stage (kiln::emitStage, run on demand on a
// worker thread and cached per document), shown read-only with an
// IrHighlighter, scrolled to the dispatch's function where the stage has
// one.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_VIEWS_INSPECTORVIEW_H
#define KILN_VIEWS_INSPECTORVIEW_H

#include "Document.h"

#include <QFutureWatcher>
#include <QPointer>
#include <QWidget>

#include <atomic>
#include <map>
#include <memory>

class QCheckBox;
class QComboBox;
class QItemSelectionModel;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QTreeWidget;

namespace kiln::views {

/// The inspector panel.
class InspectorView : public QWidget {
  Q_OBJECT
public:
  explicit InspectorView(QWidget *parent = nullptr);
  ~InspectorView() override;
  /// The opened document (null clears). IR is fetched lazily.
  void setDocument(std::shared_ptr<const ModelDocument> doc);
  void setSelectionModel(QItemSelectionModel *selection);
  /// Shows dispatch `id` (-1: nothing).
  void showDispatch(int64_t id);
  int64_t dispatch() const { return dispatch_; }
  /// The property tree (operators, tiles, bindings).
  QTreeWidget *tree() const { return tree_; }
  /// The IR text view and the stage chooser.
  QPlainTextEdit *irView() const { return ir_; }
  QComboBox *stageBox() const { return stage_; }
  /// Off (default): only the dispatch's function where the stage has one
  /// per dispatch; on: the whole module, scrolled to it.
  QCheckBox *wholeModuleBox() const { return whole_; }
  QLabel *irStatusLabel() const { return irStatus_; }
  /// The text of function `name` in `module` (MLIR func.func, LLVM IR
  /// define, or assembly label through .size), empty if none.
  static QString functionText(const QString &module, const QString &name);
  /// True while an IR request runs.
  bool irPending() const { return pending_ >= 0; }

signals:
  /// The IR of a stage arrived (or failed) and is shown.
  void irShown();

private:
  void requestIr();
  void showIr();

  QTreeWidget *tree_;
  QComboBox *stage_;
  QLineEdit *find_;
  QCheckBox *whole_;
  class IrHighlighter *highlighter_;
  QPlainTextEdit *ir_;
  QLabel *irStatus_;
  std::shared_ptr<const ModelDocument> doc_;
  QPointer<QItemSelectionModel> selection_;
  int64_t dispatch_ = -1;
  /// Text (or "error: ...") per stage index, for doc_.
  std::map<int, QString> cache_;
  int pending_ = -1;
  unsigned generation_ = 0;
  /// generation_ as the worker sees it: a request of an older document
  /// stops at its next compile phase.
  std::shared_ptr<std::atomic<unsigned>> liveGeneration_ = std::make_shared<std::atomic<unsigned>>(0);
  QFutureWatcher<QString> *watcher_;
};

} // namespace kiln::views

#endif
