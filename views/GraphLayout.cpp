//===- GraphLayout.cpp - The dispatch graph laid out by Graphviz ---------===//
#include "GraphLayout.h"
#include "PlanModels.h"

#include "kiln/Profile.h"

#include <QFontMetricsF>

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include <map>
#include <set>
#include <string>

namespace kiln::views {
namespace {

GVC_t *context() {
  static GVC_t *gvc = gvContext();
  return gvc;
}

void set(void *obj, const char *name, const std::string &value) {
  agsafeset(obj, const_cast<char *>(name), const_cast<char *>(value.c_str()), const_cast<char *>(""));
}

/// Where each node of the graph is in GraphLayout::nodes: the dispatches
/// by id, the model inputs and outputs by (alias root) buffer id.
struct NodeIndex {
  std::map<int64_t, int> ofDispatch, ofIo;
};

/// Dispatch `d`'s node: its name, fused operators, workgroups, tile sizes
/// and work (FLOP, or OP when `integer`; collapsed: "12 CONV_2D +2"), and
/// a tooltip with everything (`kernel`: kiln::describeDispatchKernel).
GraphNode dispatchNode(const kiln::Dispatch &d, bool collapsed, bool integer,
                       const QString &kernel) {
  GraphNode n;
  n.kind = GraphNode::Dispatch;
  n.id = d.id;
  n.tooltip =
      QStringLiteral(
          "%1 (dispatch %2)\n%3\nworkgroups %4, tiles %5\n%6, reads %7, writes %8\nkernel %9")
          .arg(QString::fromStdString(d.name))
          .arg(d.id)
          .arg(opsText(d, QStringLiteral("\n")), gridText(d), tilesText(d),
               formatFlops(d.flops, integer), formatBytes(d.bytesRead), formatBytes(d.bytesWritten),
               kernel);
  if (collapsed) {
    QString first =
        d.ops.empty() ? QStringLiteral("?") : QString::fromStdString(d.ops.front().name);
    n.title = QStringLiteral("%1 %2%3").arg(d.id).arg(first).arg(
        d.ops.size() > 1 ? QStringLiteral(" +%1").arg(d.ops.size() - 1) : QString());
  } else {
    n.title = QString::fromStdString(d.name);
    for (const kiln::SourceOp &op : d.ops)
      n.lines << opText(op);
    n.lines << QStringLiteral("wg %1  tiles %2").arg(gridText(d), tilesText(d));
    n.lines << QStringLiteral("%1  %2").arg(formatFlops(d.flops, integer),
                                            QString::fromStdString(kiln::kernelTileText(d.kernel)));
  }
  return n;
}

/// The node of model input or output buffer `b`: "input 0" and its type.
GraphNode ioNode(const kiln::Buffer &b, bool collapsed) {
  GraphNode n;
  n.kind = b.kind == kiln::BufferKind::Input ? GraphNode::Input : GraphNode::Output;
  n.id = b.id;
  n.title =
      QStringLiteral("%1 %2").arg(n.kind == GraphNode::Input ? "input" : "output").arg(b.index);
  if (!collapsed)
    n.lines << QString::fromStdString(b.type);
  n.tooltip = QStringLiteral("%1\nbuffer %2, %3, %4")
                  .arg(n.title)
                  .arg(b.id)
                  .arg(QString::fromStdString(b.type), formatBytes(b.bytes));
  return n;
}

/// Nodes: dispatches, then each model input and output (alias roots).
NodeIndex addNodes(const kiln::CompilationPlan &plan, bool collapsed, GraphLayout &out) {
  NodeIndex index;
  for (const kiln::Dispatch &d : plan.dispatches) {
    index.ofDispatch[d.id] = int(out.nodes.size());
    out.nodes.push_back(
        dispatchNode(d, collapsed, kiln::isIntegerDispatch(plan, d),
                     QString::fromStdString(kiln::describeDispatchKernel(plan, d))));
  }
  for (const kiln::Buffer &b : plan.memory.buffers) {
    if ((b.kind != kiln::BufferKind::Input && b.kind != kiln::BufferKind::Output) || b.aliasOf >= 0)
      continue;
    index.ofIo[b.id] = int(out.nodes.size());
    out.nodes.push_back(ioNode(b, collapsed));
  }
  return index;
}

/// Edges: per alias group, from each node that writes it to each reader;
/// a copy passes its source's writers on to its target. Labelled with the
/// group's bytes (not in collapsed mode).
void addEdges(const kiln::CompilationPlan &plan, bool collapsed, const NodeIndex &index,
              GraphLayout &out) {
  std::map<int64_t, std::set<int>> writers, readers;
  std::vector<std::pair<int64_t, int64_t>> copies; // (source group, target group)
  for (const kiln::Command &c : plan.schedule.commands) {
    if (c.kind == kiln::CommandKind::Dispatch) {
      auto it = index.ofDispatch.find(c.dispatch);
      if (it == index.ofDispatch.end())
        continue;
      for (const kiln::BindingRef &b : c.bindings)
        (b.write ? writers : readers)[aliasRoot(plan, b.buffer)].insert(it->second);
    } else if (c.kind == kiln::CommandKind::Copy && c.bindings.size() == 2) {
      copies.push_back({aliasRoot(plan, c.bindings[0].buffer), aliasRoot(plan, c.bindings[1].buffer)});
    }
  }
  for (auto &[root, node] : index.ofIo) {
    if (out.nodes[node].kind == GraphNode::Input)
      writers[root].insert(node);
    else
      readers[root].insert(node);
  }
  for (int pass = 0; pass < 2; ++pass)
    for (auto &[src, dst] : copies)
      writers[dst].insert(writers[src].begin(), writers[src].end());

  std::set<std::tuple<int, int, int64_t>> seen;
  for (auto &[root, ws] : readers) {
    auto wit = writers.find(root);
    if (wit == writers.end())
      continue;
    int64_t bytes = root >= 0 && root < (int64_t)plan.memory.buffers.size() ? plan.memory.buffers[root].bytes : 0;
    for (int w : wit->second)
      for (int r : ws) {
        if (w == r || !seen.insert({w, r, root}).second)
          continue;
        GraphEdge e;
        e.from = w;
        e.to = r;
        e.buffer = root;
        e.bytes = bytes;
        e.tooltip = QStringLiteral("buffer %1, %2").arg(root).arg(formatBytes(bytes));
        if (!collapsed)
          e.label = formatBytes(bytes);
        out.edges.push_back(e);
      }
  }
}

/// Each node's box (at the origin) measured with Qt's `font`: the bold
/// title and the lines under it, each elided in the middle to
/// kMaxNodeChars average characters, padded.
void sizeNodes(GraphLayout &out, bool collapsed, const QFont &font) {
  QFont bold = font;
  bold.setBold(true);
  QFontMetricsF fm(font), fmb(bold);
  const double pad = collapsed ? 6 : 10;
  const double widest = kMaxNodeChars * fm.averageCharWidth();
  for (GraphNode &n : out.nodes) {
    n.title = fmb.elidedText(n.title, Qt::ElideMiddle, widest);
    for (QString &l : n.lines)
      l = fm.elidedText(l, Qt::ElideMiddle, widest);
    double w = fmb.horizontalAdvance(n.title);
    for (const QString &l : n.lines)
      w = std::max(w, fm.horizontalAdvance(l));
    double h = fmb.height() + n.lines.size() * fm.height();
    w += 2 * pad;
    h += pad;
    n.rect = QRectF(0, 0, w, h);
  }
}

/// Reads the dot layout of `g` back into `out`, y pointing down: node
/// centres, edge splines with their arrow heads, label positions, bounds.
void readGeometry(Agraph_t *g, const std::vector<Agnode_t *> &gvNodes,
                  const std::vector<Agedge_t *> &gvEdges, GraphLayout &out) {
  boxf bb = GD_bb(g);
  auto flip = [&](pointf p) { return QPointF(p.x - bb.LL.x, bb.UR.y - p.y); };
  for (size_t i = 0; i < out.nodes.size(); ++i) {
    QPointF c = flip(ND_coord(gvNodes[i]));
    QRectF &r = out.nodes[i].rect;
    r.moveCenter(c);
  }
  for (size_t i = 0; i < out.edges.size(); ++i) {
    GraphEdge &e = out.edges[i];
    splines *spl = ED_spl(gvEdges[i]);
    if (spl && spl->size > 0) {
      const bezier &bz = spl->list[0];
      if (bz.size > 0) {
        QPointF start = bz.sflag ? flip(bz.sp) : flip(bz.list[0]);
        e.path.moveTo(start);
        if (bz.sflag)
          e.path.lineTo(flip(bz.list[0]));
        for (int k = 1; k + 2 < bz.size; k += 3)
          e.path.cubicTo(flip(bz.list[k]), flip(bz.list[k + 1]), flip(bz.list[k + 2]));
        e.headFrom = flip(bz.list[bz.size - 1]);
        e.head = bz.eflag ? flip(bz.ep) : e.headFrom;
      }
    }
    if (textlabel_t *l = ED_label(gvEdges[i]))
      e.labelPos = flip(l->pos);
  }
  out.bounds = QRectF(0, 0, bb.UR.x - bb.LL.x, bb.UR.y - bb.LL.y);
}

/// Graphviz: the sized nodes as fixed-size boxes (inputs and outputs as
/// ellipses) and the edges with their labels, laid out by dot, top to
/// bottom; out.error says why if dot fails (the geometry is then unset).
void placeWithDot(GraphLayout &out, bool collapsed, const QFont &font) {
  Agraph_t *g = agopen(const_cast<char *>("plan"), Agdirected, nullptr);
  set(g, "rankdir", "TB");
  set(g, "nodesep", collapsed ? "0.15" : "0.3");
  set(g, "ranksep", collapsed ? "0.25" : "0.4");
  set(g, "splines", "spline");
  std::vector<Agnode_t *> gvNodes;
  for (size_t i = 0; i < out.nodes.size(); ++i) {
    const GraphNode &n = out.nodes[i];
    std::string name = "n" + std::to_string(i);
    Agnode_t *gn = agnode(g, name.data(), 1);
    const bool box = n.kind == GraphNode::Dispatch || n.kind == GraphNode::Operator;
    set(gn, "shape", box ? "box" : "ellipse");
    set(gn, "fixedsize", "true");
    set(gn, "label", "");
    set(gn, "width", std::to_string(n.rect.width() / 72.0));
    set(gn, "height", std::to_string(n.rect.height() / 72.0));
    gvNodes.push_back(gn);
  }
  std::vector<Agedge_t *> gvEdges;
  for (size_t i = 0; i < out.edges.size(); ++i) {
    std::string name = "e" + std::to_string(i);
    Agedge_t *ge = agedge(g, gvNodes[out.edges[i].from], gvNodes[out.edges[i].to], name.data(), 1);
    if (!out.edges[i].label.isEmpty()) {
      set(ge, "label", out.edges[i].label.toStdString());
      set(ge, "fontsize", std::to_string(font.pointSizeF() > 0 ? font.pointSizeF() : 9.0));
    }
    gvEdges.push_back(ge);
  }
  if (gvLayout(context(), g, "dot") != 0) {
    out.error = QStringLiteral("Graphviz could not lay out the graph");
    agclose(g);
    return;
  }
  readGeometry(g, gvNodes, gvEdges, out);
  gvFreeLayout(context(), g);
  agclose(g);
}

// --- The source graph ----------------------------------------------------------

QString shapeText(const kiln::SourceTensor &t) {
  return QString::fromStdString(kiln::sourceShapeText(t));
}

/// "tensor 'conv_2d' 1x8x8x4 float32" (and its quantization): an edge's
/// or an end point's tooltip line.
QString tensorText(const kiln::SourceTensor &t) {
  QString text =
      QStringLiteral("tensor '%1' %2 %3")
          .arg(QString::fromStdString(t.name), shapeText(t), QString::fromStdString(t.elementType));
  if (t.quantization)
    text +=
        QStringLiteral(", ") + QString::fromStdString(kiln::describeQuantization(*t.quantization));
  return text;
}

/// Operator `op`'s node: its type; in full mode its name and one line of
/// the shapes of its constant inputs ("weights 8x3x3x3, 8"); the tooltip
/// has the operator as the plan writes it, the name and every operand.
GraphNode operatorNode(const kiln::SourceGraph &g, const kiln::SourceOperator &op, bool collapsed) {
  GraphNode n;
  n.kind = GraphNode::Operator;
  n.id = op.index;
  n.title = QString::fromStdString(op.type);
  QStringList weights;
  QString tip = QStringLiteral("%1 #%2").arg(QString::fromStdString(op.type)).arg(op.index);
  if (!op.name.empty())
    tip += QStringLiteral("\n") + QString::fromStdString(op.name);
  for (int t : op.inputs)
    if (t >= 0) {
      tip += QStringLiteral("\nin: ") + tensorText(g.tensors[t]);
      if (g.tensors[t].isConstant) {
        weights << shapeText(g.tensors[t]);
        tip += QStringLiteral(" (weights, %1)").arg(formatBytes(g.tensors[t].bytes));
      }
    }
  for (int t : op.outputs)
    if (t >= 0)
      tip += QStringLiteral("\nout: ") + tensorText(g.tensors[t]);
  n.tooltip = tip;
  if (!collapsed) {
    if (!op.name.empty())
      n.lines << QString::fromStdString(op.name);
    if (!weights.isEmpty())
      n.lines << QStringLiteral("weights ") + weights.join(QStringLiteral(", "));
  }
  return n;
}

/// The model input or output node of tensor `t`: its name (and in full mode
/// its shape).
GraphNode endNode(const kiln::SourceGraph &g, int t, size_t position, GraphNode::Kind kind,
                  bool collapsed) {
  GraphNode n;
  n.kind = kind;
  n.id = t;
  n.title = QString::fromStdString(g.tensors[t].name);
  if (!collapsed)
    n.lines << shapeText(g.tensors[t]);
  n.tooltip =
      QStringLiteral("%1 %2\n%3")
          .arg(kind == GraphNode::Input ? QStringLiteral("input") : QStringLiteral("output"))
          .arg(position)
          .arg(tensorText(g.tensors[t]));
  return n;
}

/// Sizes and places `out`'s nodes and edges (both graphs).
void placeGraph(GraphLayout &out, bool collapsed, const QFont &font) {
  sizeNodes(out, collapsed, font);
  placeWithDot(out, collapsed, font);
}

} // namespace

GraphLayout layoutPlan(const kiln::CompilationPlan &plan, bool collapsed, const QFont &font) {
  GraphLayout out;
  const NodeIndex index = addNodes(plan, collapsed, out);
  addEdges(plan, collapsed, index, out);
  placeGraph(out, collapsed, font);
  return out;
}

GraphLayout layoutSourceGraph(const kiln::SourceGraph &graph, bool collapsed, const QFont &font) {
  GraphLayout out;
  // Where each tensor comes from: an operator's node or an input's.
  std::vector<int> source(graph.tensors.size(), -1);
  for (size_t k = 0; k < graph.inputs.size(); ++k)
    if (int t = graph.inputs[k]; t >= 0 && source[t] < 0) {
      source[t] = int(out.nodes.size());
      out.nodes.push_back(endNode(graph, t, k, GraphNode::Input, collapsed));
    }
  std::vector<int> opNode(graph.operators.size());
  for (size_t i = 0; i < graph.operators.size(); ++i) {
    opNode[i] = int(out.nodes.size());
    out.nodes.push_back(operatorNode(graph, graph.operators[i], collapsed));
    for (int t : graph.operators[i].outputs)
      if (t >= 0)
        source[t] = opNode[i];
  }
  auto edge = [&](int t, int to) {
    if (t < 0 || source[t] < 0 || graph.tensors[t].isConstant)
      return;
    GraphEdge e;
    e.from = source[t];
    e.to = to;
    e.buffer = t;
    e.tooltip = tensorText(graph.tensors[t]);
    if (!collapsed)
      e.label = shapeText(graph.tensors[t]);
    out.edges.push_back(e);
  };
  for (size_t i = 0; i < graph.operators.size(); ++i) {
    std::set<int> seen; // an operator reading one tensor twice (x * x): one edge
    for (int t : graph.operators[i].inputs)
      if (seen.insert(t).second)
        edge(t, opNode[i]);
  }
  for (size_t k = 0; k < graph.outputs.size(); ++k)
    if (int t = graph.outputs[k]; t >= 0) {
      int node = int(out.nodes.size());
      out.nodes.push_back(endNode(graph, t, k, GraphNode::Output, collapsed));
      edge(t, node);
    }
  placeGraph(out, collapsed, font);
  return out;
}

} // namespace kiln::views
