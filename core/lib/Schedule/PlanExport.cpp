//===- PlanExport.cpp - Dispatch graph (DOT) and schedule (CSV) -----------===//
#include "kiln/Plan.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

namespace kiln {

static std::string escape(const std::string &s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out;
}

static std::string joinInts(const std::vector<int64_t> &v, const char *sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? sep : "") + std::to_string(v[i]);
  return s;
}

std::string describeOutputWriters(const CompilationPlan &plan, const OutputBinding &output) {
  std::map<int64_t, std::string> dispatchName;
  for (const Dispatch &d : plan.dispatches)
    dispatchName[d.id] = d.name;
  std::string text;
  for (int64_t index : output.writers) {
    if (index < 0 || index >= static_cast<int64_t>(plan.schedule.commands.size()))
      continue;
    const Command &c = plan.schedule.commands[index];
    std::string one = toString(c.kind);
    if (c.kind == CommandKind::Dispatch) {
      one = dispatchName.count(c.dispatch) ? dispatchName[c.dispatch]
                                           : "dispatch " + std::to_string(c.dispatch);
    } else if (c.kind == CommandKind::Fill) {
      char pattern[16];
      std::snprintf(pattern, sizeof(pattern), "0x%08x", c.fillPattern);
      one = std::string("fill ") + pattern;
    } else if (c.kind == CommandKind::Copy && !c.bindings.empty() &&
               c.bindings[0].buffer >= 0 &&
               c.bindings[0].buffer < static_cast<int64_t>(plan.memory.buffers.size())) {
      const Buffer &from = plan.memory.buffers[c.bindings[0].buffer];
      one = std::string("copy of ") + toString(from.kind) +
            (from.kind == BufferKind::Transient ? " buffer " + std::to_string(from.id)
                                                : " " + std::to_string(from.index));
    }
    text += (text.empty() ? "" : " + ") + one;
  }
  return text.empty() ? "nothing" : text;
}

std::string formatStateRows(const CompilationPlan &plan) {
  return formatStateRows(plan.state, plan.memory.persistentBytes);
}

std::string formatStateRows(const std::vector<StateVariable> &state, int64_t persistentBytes) {
  if (state.empty())
    return "";
  std::string text = "state     " + std::to_string(persistentBytes) + " bytes persistent (" +
                     std::to_string(state.size()) +
                     (state.size() == 1 ? " variable" : " variables") +
                     ", carried across invocations)\n";
  for (size_t k = 0; k < state.size(); ++k) {
    const StateVariable &v = state[k];
    text += "  state " + std::to_string(k) + " '" + v.name + "' " + v.type + ", " +
            std::to_string(v.bytes) + " bytes at arena offset " + std::to_string(v.offset) + "\n";
  }
  return text;
}

std::string planToDot(const CompilationPlan &plan) {
  std::ostringstream os;
  os << "digraph dispatches {\n"
     << "  rankdir=TB;\n"
     << "  node [shape=box, fontname=\"monospace\", fontsize=10];\n"
     << "  edge [fontname=\"monospace\", fontsize=9];\n";
  std::map<int64_t, const Dispatch *> byId;
  for (const Dispatch &d : plan.dispatches)
    byId[d.id] = &d;
  // Writer and readers of every buffer, through the commands.
  std::map<int64_t, std::string> writer;
  std::map<int64_t, std::vector<std::string>> readers;
  auto nodeOf = [&](const Command &c) {
    return c.kind == CommandKind::Dispatch ? "d" + std::to_string(c.dispatch)
                                           : "c" + std::to_string(c.index);
  };
  for (const Command &c : plan.schedule.commands) {
    if (c.kind == CommandKind::Barrier)
      continue;
    std::string node = nodeOf(c);
    if (c.kind == CommandKind::Dispatch) {
      const Dispatch *d = byId.count(c.dispatch) ? byId[c.dispatch] : nullptr;
      std::string label = d ? d->name : node;
      if (d) {
        std::string ops;
        for (const SourceOp &op : d->ops)
          ops += (ops.empty() ? "" : ", ") + op.name +
                 (op.sourceIndex >= 0 ? "#" + std::to_string(op.sourceIndex) : "");
        label += "\\n" + escape(ops);
        label += "\\nworkgroups " + std::to_string(d->workgroupCount[0]) + "x" +
                 std::to_string(d->workgroupCount[1]) + "x" +
                 std::to_string(d->workgroupCount[2]);
        label += "  tiles [" + joinInts(d->tileSizes, ",") + "]";
        label += "\\n" + std::to_string(d->flops) + " FLOPs  wave " + std::to_string(c.wave);
      }
      os << "  " << node << " [label=\"" << label << "\"];\n";
    } else {
      os << "  " << node << " [label=\"" << toString(c.kind) << " " << c.index
         << "\", shape=cds];\n";
    }
    for (const BindingRef &b : c.bindings) {
      if (b.write)
        writer[b.buffer] = node;
      else
        readers[b.buffer].push_back(node);
    }
  }
  for (const Buffer &b : plan.memory.buffers) {
    if (b.kind == BufferKind::Input) {
      std::string node = "in" + std::to_string(b.index);
      os << "  " << node << " [label=\"input " << b.index << "\\n" << escape(b.type)
         << "\", shape=ellipse];\n";
      writer[b.id] = node;
    } else if (b.kind == BufferKind::State) {
      // The value the previous invocation left (its copy-in is no node).
      std::string node = "state" + std::to_string(b.index);
      std::string name;
      for (const StateVariable &v : plan.state)
        if (v.buffer == b.id)
          name = " '" + escape(v.name) + "'";
      os << "  " << node << " [label=\"state " << b.index << name << "\\n"
         << escape(b.type) << "\", shape=ellipse, style=dashed];\n";
      writer[b.id] = node;
    } else if (b.kind == BufferKind::Output) {
      std::string node = "out" + std::to_string(b.index);
      std::string name;
      for (const OutputBinding &o : plan.outputs)
        if (o.buffer == b.id && !o.name.empty())
          name = " '" + escape(o.name) + "'";
      os << "  " << node << " [label=\"output " << b.index << name << "\\n" << escape(b.type)
         << "\", shape=ellipse];\n";
      readers[b.id].push_back(node);
    }
  }
  for (const Buffer &b : plan.memory.buffers) {
    if (b.kind == BufferKind::Constant || !writer.count(b.id))
      continue;
    std::set<std::string> seen;
    for (const std::string &r : readers[b.id]) {
      if (!seen.insert(r).second || r == writer[b.id])
        continue;
      os << "  " << writer[b.id] << " -> " << r << " [label=\"" << b.bytes << " B\"];\n";
    }
  }
  os << "}\n";
  return os.str();
}

std::string planToCsv(const CompilationPlan &plan) {
  std::map<int64_t, const Dispatch *> byId;
  for (const Dispatch &d : plan.dispatches)
    byId[d.id] = &d;
  std::ostringstream os;
  os << "index,kind,wave,dispatch,name,workgroups,bindings\n";
  for (const Command &c : plan.schedule.commands) {
    const Dispatch *d = c.dispatch >= 0 && byId.count(c.dispatch) ? byId[c.dispatch] : nullptr;
    os << c.index << "," << toString(c.kind) << "," << c.wave << ","
       << (c.dispatch >= 0 ? std::to_string(c.dispatch) : "") << "," << (d ? d->name : "")
       << ",";
    if (d)
      os << d->workgroupCount[0] << "x" << d->workgroupCount[1] << "x" << d->workgroupCount[2];
    os << ",";
    for (size_t i = 0; i < c.bindings.size(); ++i)
      os << (i ? " " : "") << c.bindings[i].buffer << ":" << c.bindings[i].offset << ":"
         << c.bindings[i].length << (c.bindings[i].write ? ":w" : ":r");
    os << "\n";
  }
  return os.str();
}

std::string kernelTileText(const KernelStrategy &kernel) {
  if (kernel.tileRows <= 0)
    return kernel.kind;
  return kernel.kind + " " + std::to_string(kernel.tileRows) + "x" +
         std::to_string(kernel.tileVectors) + "x" + std::to_string(kernel.lanes);
}

std::string describeKernel(const KernelStrategy &kernel) {
  if (kernel.tileRows <= 0)
    return kernel.kind;
  std::string text = kernelTileText(kernel);
  if (!kernel.weightLayout.empty())
    text += ", " + kernel.weightLayout;
  char rate[32];
  std::snprintf(rate, sizeof rate, "%.3g", kernel.flopsPerCycle);
  return text + ", " + rate + " FLOP/cycle";
}

std::string describeQuantization(const TensorQuantization &quant) {
  char text[160];
  if (quant.scales.empty())
    return "no scale";
  if (!quant.perChannel()) {
    std::snprintf(text, sizeof(text), "scale %g zero point %lld", quant.scales.front(),
                  quant.zeroPoints.empty() ? 0LL : (long long)quant.zeroPoints.front());
    return text;
  }
  auto [lo, hi] = std::minmax_element(quant.scales.begin(), quant.scales.end());
  std::snprintf(text, sizeof(text), "per-channel: %lld scales, min %g max %g, dimension %lld",
                (long long)quant.scaleCount(), *lo, *hi, (long long)quant.dimension);
  return text;
}

std::vector<const TensorQuantization *> weightsOf(const CompilationPlan &plan,
                                                  const Dispatch &d) {
  std::vector<const TensorQuantization *> weights;
  for (const TensorQuantization &q : plan.quantization)
    for (const SourceOp &op : d.ops)
      if (op.sourceIndex >= 0 &&
          std::find(q.readers.begin(), q.readers.end(), op.sourceIndex) != q.readers.end()) {
        weights.push_back(&q);
        break;
      }
  return weights;
}

const TensorQuantization *findQuantization(const CompilationPlan &plan,
                                           const std::string &tensor) {
  if (tensor.empty())
    return nullptr;
  for (const TensorQuantization &q : plan.quantization)
    if (q.tensor == tensor)
      return &q;
  return nullptr;
}

std::string sourceOpText(const SourceOp &op) {
  return op.sourceIndex >= 0 ? op.name + " #" + std::to_string(op.sourceIndex) : op.name;
}

std::string dispatchLabel(const Dispatch &dispatch) {
  std::string text = dispatch.name;
  for (const SourceOp &op : dispatch.ops)
    text += " " + sourceOpText(op);
  return text + " [" + kernelTileText(dispatch.kernel) + "]";
}

} // namespace kiln
