//===- InspectorView.h - The selected dispatch in detail -------*- C++ -*-===//
//
// For the dispatch selected in the shared selection: its fused source
// operators (names and indices), loops and tile sizes, workgroups, FLOPs,
// bindings; and its IR at every stage, shown read-only with an
// IrHighlighter, scrolled to the dispatch's function where the stage has
// one. The IR is asked for on demand (irRequested; the workbench's IrJob
// runs kiln::emitStage on a worker thread) and cached per document.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_VIEWS_INSPECTORVIEW_H
#define KILN_VIEWS_INSPECTORVIEW_H

#include "Document.h"

#include <QPointer>
#include <QWidget>

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

/// One IR text the inspector asks for: the IR of the model `doc` was
/// opened from (its path and options) after pipeline stage `stage`.
struct IrRequest {
  std::shared_ptr<const ModelDocument> doc;
  kiln::EmitStage stage = kiln::EmitStage::LLVMIR;
  /// Which of the inspector's documents it is for (one more for every
  /// setDocument or clear): an answer for an older one is not shown.
  unsigned generation = 0;
};

/// The inspector panel.
class InspectorView : public QWidget, public DocumentView {
  Q_OBJECT
public:
  explicit InspectorView(QWidget *parent = nullptr);
  /// DocumentView: the opened document; every one resets the panel (no
  /// dispatch shown, the IR cache emptied). IR is asked for lazily.
  void setDocument(std::shared_ptr<const ModelDocument> doc) override;
  /// No document: the panel empty.
  void clear() override;
  void setSelectionModel(QItemSelectionModel *selection) override;
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

public slots:
  /// The answer to irRequested: `text` is `request`'s module, or
  /// "// error: MESSAGE". Cached and shown if it is for the document shown;
  /// then the stage chosen meanwhile, if another, is asked for.
  void setIr(const kiln::views::IrRequest &request, const QString &text);

signals:
  /// The IR of `request` is needed; answer with setIr. One at a time: the
  /// next request waits for the answer.
  void irRequested(const kiln::views::IrRequest &request);
  /// A new document (or none) was set: a request of another generation
  /// than `generation` is no longer wanted (its worker may stop).
  void irObsolete(unsigned generation);
  /// The IR of a stage arrived (or failed) and is shown.
  void irShown();

private:
  void requestIr();
  void showIr();
  void reset(std::shared_ptr<const ModelDocument> doc);

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
  /// The stage index asked for and not answered yet (-1: none).
  int pending_ = -1;
  unsigned generation_ = 0;
};

} // namespace kiln::views

#endif
