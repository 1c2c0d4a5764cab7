//===- GraphLayout.h - Graphs laid out by Graphviz -------------*- C++ -*-===//
//
// Builds the two graphs the workbench draws and lays them out with
// Graphviz's dot through libgvc (one layout code for both):
//   - the dispatch graph of a plan (dispatches as nodes, model inputs and
//     outputs as end points, one edge per buffer from the dispatch that
//     writes it to each dispatch that reads it, views followed to the
//     buffer they alias);
//   - the source graph of the model file (kiln/SourceGraph.h: operators as
//     nodes, model inputs and outputs as end points, one edge per tensor
//     from its producer to each operator reading it, labelled with its
//     shape; weights stay inside their operator's box).
// Text wider than a box's limit is elided in the middle, so the distinctive
// ends of long ONNX names ("/model/.../pointwise/Conv") stay; the tooltip
// has it whole. Returns plain geometry in scene coordinates (points, y
// down).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_VIEWS_GRAPHLAYOUT_H
#define KILN_VIEWS_GRAPHLAYOUT_H

#include "kiln/Plan.h"
#include "kiln/SourceGraph.h"

#include <QFont>
#include <QPainterPath>
#include <QRectF>
#include <QStringList>

#include <vector>

namespace kiln::views {

/// A node of a graph.
struct GraphNode {
  enum Kind { Dispatch, Input, Output, Operator };
  Kind kind = Dispatch;
  /// Dispatch id (Dispatch), source operator index (Operator,
  /// SourceOperator::index), buffer id (Input/Output of the dispatch graph)
  /// or tensor index (Input/Output of the source graph).
  int64_t id = 0;
  /// First line (bold) and the lines under it, elided in the middle to the
  /// box's width limit (kMaxNodeChars average characters).
  QString title;
  QStringList lines;
  /// Tooltip text: everything, whatever the mode.
  QString tooltip;
  QRectF rect;
};

/// The widest a node's text gets, in average character widths of its
/// font: longer lines are elided in the middle (Qt::ElideMiddle).
inline constexpr int kMaxNodeChars = 40;

/// A buffer (dispatch graph) or tensor (source graph) flowing from one
/// node to another.
struct GraphEdge {
  int from = 0, to = 0; ///< Node indices.
  int64_t buffer = 0;   ///< The (alias root) buffer id, or the tensor index.
  int64_t bytes = 0;    ///< The buffer's bytes (0 in the source graph).
  QString label;        ///< Empty in collapsed mode.
  QString tooltip;      ///< "buffer 3, 12.0 KiB", "tensor 'x' 1x8x8x3 float32".
  QPainterPath path;    ///< Spline, from tail to head.
  QPointF head;         ///< Arrow tip.
  QPointF headFrom;     ///< Where the arrow's shaft ends.
  QPointF labelPos;     ///< Centre of the label.
};

/// A laid-out graph.
struct GraphLayout {
  std::vector<GraphNode> nodes;
  std::vector<GraphEdge> edges;
  QRectF bounds;
  /// Empty on success, else what Graphviz reported.
  QString error;
};

/// Lays out `plan`. Collapsed mode draws each dispatch as one line ("12
/// CONV_2D +2") and leaves edge labels off, so a graph of 150 dispatches
/// stays readable; the full mode shows name, fused operators, workgroups,
/// tile sizes and FLOPs. `font` sizes the boxes. Runs Graphviz on the
/// calling thread (libgvc is not thread-safe: call from one thread).
GraphLayout layoutPlan(const kiln::CompilationPlan &plan, bool collapsed, const QFont &font);

/// Lays out the source graph `graph`: one Operator node per operator (its
/// type in bold; in full mode its name and the shapes of its weights), an
/// Input and an Output node per model input and output (tensor name and
/// shape), one edge per non-constant tensor from its producer (or input)
/// to each reader, labelled with its shape in full mode. Same thread rule
/// as layoutPlan.
GraphLayout layoutSourceGraph(const kiln::SourceGraph &graph, bool collapsed, const QFont &font);

} // namespace kiln::views

#endif
