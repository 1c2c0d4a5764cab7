//===- GraphView.h - The dispatch graph in a QGraphicsView -----*- C++ -*-===//
//
// Draws GraphLayout's geometry: dispatch boxes, input/output ellipses and
// buffer edges labelled with their bytes. Zoom (Ctrl+wheel, +/-), pan
// (drag), a readable fit (text at least at the UI font's size, fit to width,
// scroll down), search by name or operator, and a collapsed mode.
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

class QItemSelectionModel;
class QLineEdit;
class QCheckBox;
class QLabel;

namespace kiln::views {

class DispatchListModel;

/// The graph canvas.
class GraphView : public QGraphicsView, public DocumentView {
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
  int dispatchNodeCount() const { return int(dispatchItems_.size()); }
  /// Number of buffer edges drawn.
  int edgeCount() const { return edgeCount_; }
  /// Scene rectangle of dispatch `id`'s node (empty if none).
  QRectF nodeRect(int64_t id) const;
  /// Dispatch id of the node at scene point `p`, -1 if none.
  int64_t dispatchAt(const QPointF &scenePos) const;
  /// Dispatch whose node is highlighted as selected (-1 if none).
  int64_t selectedDispatch() const { return selected_; }
  /// The last layout (for tests and the screenshot mode).
  const GraphLayout &layout() const { return layout_; }

public slots:
  /// Fit Graph (the Fit button, 0, Ctrl+0): the same readable view a new
  /// graph opens with (readableView()).
  void fitToWindow();
  /// The view a new graph opens with: the whole graph if it fits with its
  /// node text at least at the UI font's point size (enlarged at most
  /// 1.5x); else the graph's whole width at that legible scale or larger
  /// (at most 1.25x; horizontal scrolling only where even the legible scale
  /// is too wide), scrolled to the inputs at the top.
  void readableView();
  void zoomIn();
  void zoomOut();
  /// Selects the dispatch named `text` or with id `text`; failing that, the
  /// next dispatch whose name or operators contain `text` (after the
  /// current one, wrapping). Returns false if none matches.
  bool find(const QString &text);

signals:
  /// The user asked to select dispatch `id` (click or search).
  void dispatchActivated(qint64 id);

protected:
  void wheelEvent(QWheelEvent *event) override;
  void mousePressEvent(QMouseEvent *event) override;
  void keyPressEvent(QKeyEvent *event) override;

private:
  void rebuild();
  void highlight(int64_t id, bool center);
  void selectDispatch(int64_t id);

  std::shared_ptr<const kiln::CompilationPlan> plan_;
  QPointer<QItemSelectionModel> selection_;
  GraphLayout layout_;
  std::map<int64_t, QGraphicsItem *> dispatchItems_;
  int edgeCount_ = 0;
  bool collapsed_ = false;
  int64_t selected_ = -1;
};

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
