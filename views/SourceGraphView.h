//===- SourceGraphView.h - The model's own graph, beside the plan -*- C++ -*-===//
//
// The source model's operators as their file describes them (a
// kiln::SourceGraph, read by the workbench with kiln::readSourceGraph), laid
// out by the same Graphviz code and drawn by the same canvas as the
// dispatch graph (GraphLayout.h, GraphView.h), with a details pane for the
// selected operator: attributes, inputs and outputs with shapes, element
// types, quantization and weights, and the dispatches covering it.
//
// Selection is linked both ways through the shared dispatch selection and
// kiln::sourceDispatchMap (the one map of the plan's dispatches and their
// source operators): clicking an operator selects the dispatch(es)
// covering it; a dispatch selected anywhere highlights the operators it
// covers. No compiler logic here.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_VIEWS_SOURCEGRAPHVIEW_H
#define KILN_VIEWS_SOURCEGRAPHVIEW_H

#include "GraphView.h"

#include "kiln/SourceGraph.h"

#include <QPointer>
#include <QWidget>

#include <memory>

class QCheckBox;
class QItemSelectionModel;
class QLabel;
class QSplitter;
class QTreeWidget;

namespace kiln::views {

/// The source graph canvas.
class SourceGraphView : public GraphCanvas, public DocumentView {
  Q_OBJECT
public:
  explicit SourceGraphView(QWidget *parent = nullptr);
  /// DocumentView: the plan whose dispatches the selection links to (the
  /// graph itself comes from setSourceGraph). Another file's document
  /// empties the graph until its own source graph is set.
  void setDocument(std::shared_ptr<const ModelDocument> doc) override;
  void setSelectionModel(QItemSelectionModel *selection) override;
  void clear() override;
  /// Shows `graph`, the source graph of the model at `path` (null: none,
  /// with `note` saying why, e.g. the reader's error); the readable view.
  /// Ignored unless `path` is the document's (a late answer for a model
  /// no longer shown).
  void setSourceGraph(const QString &path, std::shared_ptr<const kiln::SourceGraph> graph,
                      const QString &note = QString());
  /// The graph shown (null if none) and what it leaves out or why there is
  /// none (SourceGraph::note, the reader's error).
  const kiln::SourceGraph *sourceGraph() const { return graph_.get(); }
  const QString &note() const { return note_; }
  /// True from a model's document until its setSourceGraph (the workbench
  /// still reading the file); false for an artifact, which has none.
  bool waitingForGraph() const { return !path_.isEmpty() && graphPath_ != path_; }
  /// Collapsed mode: operator types only, no edge labels.
  void setCollapsed(bool collapsed);
  /// Number of operator nodes drawn.
  int operatorNodeCount() const;
  /// Scene rectangle of operator `sourceIndex`'s node (empty if none).
  QRectF operatorRect(int64_t sourceIndex) const;
  /// The operator the details pane shows (-1: none).
  int64_t selectedOperator() const { return picked_; }
  /// The operators highlighted (those of the selected dispatch, or the
  /// picked one when no dispatch covers it), ascending.
  std::vector<int64_t> highlightedOperators() const {
    return highlightedNodes(GraphNode::Operator);
  }
  /// The dispatch map of the plan shown, and the plan (null if none).
  const kiln::SourceDispatchMap &dispatchMap() const { return map_; }
  const kiln::CompilationPlan *plan() const { return plan_.get(); }

public slots:
  /// Picks operator `sourceIndex` as a click does: the details pane shows
  /// it and the shared selection gets the dispatches covering it (the
  /// first one current); an operator in no dispatch (folded away at
  /// compile time) is highlighted alone.
  void selectOperator(qint64 sourceIndex);

signals:
  /// The operator the details pane should show changed (-1: none).
  void operatorPicked(qint64 sourceIndex);

protected:
  bool nodeClicked(int node) override;

private:
  void rebuild();
  void followDispatch(int64_t id);
  void pick(int64_t sourceIndex);

  QString path_;
  std::shared_ptr<const kiln::CompilationPlan> plan_;
  std::shared_ptr<const kiln::SourceGraph> graph_;
  QString graphPath_;
  QString note_;
  kiln::SourceDispatchMap map_;
  QPointer<QItemSelectionModel> selection_;
  bool collapsed_ = false;
  int64_t picked_ = -1;
  /// Set while selectOperator moves the shared selection.
  bool picking_ = false;
};

/// The source graph with its toolbar (note, Fit, zoom, Collapsed) and the
/// selected operator's details, side by side or stacked (a narrow dock).
class SourceGraphPanel : public QWidget {
  Q_OBJECT
public:
  explicit SourceGraphPanel(QWidget *parent = nullptr);
  SourceGraphView *view() const { return view_; }
  /// The details of the picked operator: "Operator" (type, index, name,
  /// dispatches), "Attributes", "Inputs" and "Outputs" (one row per tensor:
  /// its name, then its shape and type and, for weights, their bytes; its
  /// quantization under it).
  QTreeWidget *details() const { return details_; }
  QCheckBox *collapsedBox() const { return collapsed_; }

protected:
  void resizeEvent(QResizeEvent *event) override;

private:
  void showOperator(int64_t sourceIndex);

  SourceGraphView *view_;
  QTreeWidget *details_;
  QSplitter *splitter_;
  QLabel *note_;
  QCheckBox *collapsed_;
  /// The splitter's sizes were set for its orientation.
  bool sized_ = false;
};

} // namespace kiln::views

#endif
