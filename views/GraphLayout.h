//===- GraphLayout.h - The dispatch graph laid out by Graphviz --*- C++ -*-===//
//
// Builds the dispatch graph of a plan (dispatches as nodes, model inputs
// and outputs as end points, one edge per buffer from the dispatch that
// writes it to each dispatch that reads it, views followed to the buffer
// they alias) and lays it out with Graphviz's dot through libgvc. Returns
// plain geometry in scene coordinates (points, y down).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_VIEWS_GRAPHLAYOUT_H
#define KILN_VIEWS_GRAPHLAYOUT_H

#include "kiln/Plan.h"

#include <QFont>
#include <QPainterPath>
#include <QRectF>
#include <QStringList>

#include <vector>

namespace kiln::views {

/// A node of the dispatch graph.
struct GraphNode {
  enum Kind { Dispatch, Input, Output };
  Kind kind = Dispatch;
  /// Dispatch id (Dispatch) or buffer id (Input/Output).
  int64_t id = 0;
  /// First line (bold) and the lines under it.
  QString title;
  QStringList lines;
  /// Tooltip text: everything, whatever the mode.
  QString tooltip;
  QRectF rect;
};

/// A buffer flowing from one node to another.
struct GraphEdge {
  int from = 0, to = 0; ///< Node indices.
  int64_t buffer = 0;   ///< The (alias root) buffer id.
  int64_t bytes = 0;
  QString label;        ///< Empty in collapsed mode.
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

} // namespace kiln::views

#endif
