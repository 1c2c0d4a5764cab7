//===- GraphView.h - Graphs in a QGraphicsView -----------------*- C++ -*-===//
//
// GraphCanvas draws a GraphLayout's geometry (boxes, input/output
// ellipses, labelled edges) with zoom (Ctrl+wheel, +/-), pan (drag) and a
// readable fit (text at least at the UI font's size, the graph's top, its
// inputs, in view); it highlights a set of nodes. Two graphs use it:
//   - GraphView, the dispatch graph (buffers labelled with their bytes),
//     with search by name or operator and a collapsed mode;
//   - SourceGraphView (SourceGraphView.h), the model's own operators.
// Selection is the shared one: clicking a node selects its dispatch row in
// the QItemSelectionModel given to setSelectionModel().
//
//===----------------------------------------------------------------------===//
#ifndef KILN_VIEWS_GRAPHVIEW_H
#define KILN_VIEWS_GRAPHVIEW_H

#include "Document.h"
#include "GraphLayout.h"

#include <QGraphicsView>
#include <QPointer>
#include <QWidget>

#include <map>
#include <memory>
#include <set>

class QItemSelectionModel;
class QLineEdit;
class QCheckBox;
class QLabel;
class QHBoxLayout;

namespace kiln::views {

class DispatchListModel;

/// A laid-out graph on screen: drawing, zoom, pan, the readable view and
/// highlighted nodes. Subclasses build the layout and say what a click on a
/// node means (nodeClicked).
class GraphCanvas : public QGraphicsView {
  Q_OBJECT
public:
  explicit GraphCanvas(QWidget *parent = nullptr);
  /// The last layout drawn (for tests and the screenshot mode).
  const GraphLayout &layout() const { return layout_; }
  /// Index in layout().nodes of the node of `kind` and `id`, -1 if none.
  int nodeIndex(GraphNode::Kind kind, int64_t id) const;
  /// Index in layout().nodes of the node at scene point `p`, -1 if none.
  int nodeAt(const QPointF &scenePos) const;
  /// The nodes of `kind` whose ids are in `ids` are highlighted, the rest
  /// not; with `reveal`, the view scrolls to show the first of them.
  void highlightNodes(GraphNode::Kind kind, const std::vector<int64_t> &ids, bool reveal);
  /// The ids of the nodes of `kind` highlighted now, ascending.
  std::vector<int64_t> highlightedNodes(GraphNode::Kind kind) const;
  /// The scene rectangle the viewport shows now.
  QRectF visibleSceneRect() const;

public slots:
  /// Fit (the Fit button, 0, Ctrl+0): the same readable view a new graph
  /// opens with (readableView()).
  void fitToWindow();
  /// The view a new graph opens with: the whole graph if it fits with its
  /// node text at least at the UI font's point size (enlarged at most
  /// 1.5x); else the graph's whole width at that legible scale or larger
  /// (at most 1.25x; horizontal scrolling only where even the legible scale
  /// is too wide), scrolled to the inputs at the top (centred on them
  /// across). A graph smaller than
  /// the view sits at its top, without blank space above the inputs. Asked
  /// before the view has its size (a hidden dock, a window still being laid
  /// out), it waits for the first resize; until the user zooms or pans, a
  /// resize applies it again, so the inputs stay in view as docks settle.
  void readableView();
  void zoomIn();
  void zoomOut();

protected:
  /// Draws `layout` (replacing the scene; nothing highlighted).
  void showLayout(GraphLayout layout);
  /// A left click on node `node` (an index into layout().nodes); true
  /// when it meant something (else the click starts a pan).
  virtual bool nodeClicked(int node) {
    (void)node;
    return false;
  }
  void wheelEvent(QWheelEvent *event) override;
  void mousePressEvent(QMouseEvent *event) override;
  void keyPressEvent(QKeyEvent *event) override;
  void resizeEvent(QResizeEvent *event) override;
  void showEvent(QShowEvent *event) override;
  void scrollContentsBy(int dx, int dy) override;

private:
  void applyReadableView();

  GraphLayout layout_;
  std::vector<QGraphicsItem *> items_; ///< One per layout node.
  std::set<int> highlighted_;
  /// readableView() is owed once the view has a size (it had none).
  bool readablePending_ = false;
  /// The view is readableView()'s, not moved by the user since.
  bool readableShown_ = false;
  /// Set while the canvas itself scrolls (not the user's pan).
  bool scrolling_ = false;
  /// The viewport's size when readableView() last applied.
  QSize readableSize_;
};

/// The dispatch graph.
class GraphView : public GraphCanvas, public DocumentView {
  Q_OBJECT
public:
  explicit GraphView(QWidget *parent = nullptr);
  /// Shows `plan` (null clears): a new layout, the readable view.
  void setPlan(std::shared_ptr<const kiln::CompilationPlan> plan);
  /// DocumentView: draws `doc`'s plan (setPlan); the plan already drawn
  /// leaves the graph as it is (zoom, scroll, the selection's highlight).
  void setDocument(std::shared_ptr<const ModelDocument> doc) override;
  /// The shared selection (a selection model over a DispatchListModel).
  void setSelectionModel(QItemSelectionModel *selection) override;
  /// No graph (setPlan(nullptr)).
  void clear() override;
  /// Collapsed mode: one-line boxes, no edge labels.
  void setCollapsed(bool collapsed);
  bool isCollapsed() const { return collapsed_; }
  /// Number of dispatch nodes drawn.
  int dispatchNodeCount() const { return dispatchNodes_; }
  /// Number of buffer edges drawn.
  int edgeCount() const { return edgeCount_; }
  /// Scene rectangle of dispatch `id`'s node (empty if none).
  QRectF nodeRect(int64_t id) const;
  /// Dispatch id of the node at scene point `p`, -1 if none.
  int64_t dispatchAt(const QPointF &scenePos) const;
  /// Dispatch whose node is highlighted as selected (-1 if none).
  int64_t selectedDispatch() const { return selected_; }

public slots:
  /// Selects the dispatch named `text` or with id `text`; failing that, the
  /// next dispatch whose name or operators contain `text` (after the
  /// current one, wrapping). Returns false if none matches.
  bool find(const QString &text);

signals:
  /// The user asked to select dispatch `id` (click or search).
  void dispatchActivated(qint64 id);

protected:
  bool nodeClicked(int node) override;
  void keyPressEvent(QKeyEvent *event) override;

private:
  void rebuild();
  void highlight(int64_t id, bool center);
  void selectDispatch(int64_t id);

  std::shared_ptr<const kiln::CompilationPlan> plan_;
  QPointer<QItemSelectionModel> selection_;
  int dispatchNodes_ = 0;
  int edgeCount_ = 0;
  bool collapsed_ = false;
  int64_t selected_ = -1;
};

/// Adds the Fit, zoom in and zoom out buttons for `canvas` to `bar`.
void addZoomButtons(QHBoxLayout *bar, GraphCanvas *canvas);

/// GraphView with its toolbar: search box, Fit, zoom and Collapsed.
class GraphPanel : public QWidget {
  Q_OBJECT
public:
  explicit GraphPanel(QWidget *parent = nullptr);
  GraphView *view() const { return view_; }
  QLineEdit *searchBox() const { return search_; }
  QCheckBox *collapsedBox() const { return collapsed_; }
  /// A line above the graph saying why it is empty or partial (an
  /// artifact without reflection data); empty text hides it.
  void setNote(const QString &text);
  QLabel *noteLabel() const { return note_; }

private:
  GraphView *view_;
  QLabel *note_;
  QLineEdit *search_;
  QCheckBox *collapsed_;
  QLabel *status_;
};

} // namespace kiln::views

#endif
