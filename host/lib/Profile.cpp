//===- Profile.cpp - Per-dispatch profile of a plan and a run -------------===//
#include "kiln/Profile.h"

#include "kiln/Export.h"

#include <algorithm>

namespace kiln {

double CostModel::durationUs(const CompilationPlan &plan, const Command &c) const {
  if (c.kind == CommandKind::Barrier)
    return barrierUs;
  int64_t bytes = 0;
  int64_t flops = 0;
  if (c.kind == CommandKind::Dispatch && c.dispatch >= 0) {
    for (const Dispatch &d : plan.dispatches)
      if (d.id == c.dispatch) {
        flops = d.flops;
        bytes = d.bytesRead + d.bytesWritten;
        break;
      }
  } else {
    for (const BindingRef &b : c.bindings)
      bytes += b.length;
  }
  return launchUs + std::max(flops / flopsPerUs, bytes / bytesPerUs);
}

std::string elementTypeOf(const Buffer &buffer) {
  size_t x = buffer.type.rfind('x');
  return x == std::string::npos ? buffer.type : buffer.type.substr(x + 1);
}

bool isIntegerDispatch(const CompilationPlan &plan, const Dispatch &d) {
  bool bound = false;
  for (const Command &c : plan.schedule.commands) {
    if (c.kind != CommandKind::Dispatch || c.dispatch != d.id)
      continue;
    for (const BindingRef &b : c.bindings) {
      if (b.buffer < 0 || size_t(b.buffer) >= plan.memory.buffers.size())
        return false;
      std::string type = elementTypeOf(plan.memory.buffers[b.buffer]);
      if (type.size() < 2 || (type[0] != 'i' && type[0] != 'u') ||
          !std::all_of(type.begin() + 1, type.end(),
                       [](char ch) { return ch >= '0' && ch <= '9'; }))
        return false;
      bound = true;
    }
  }
  return bound;
}

const char *workUnit(bool integer) { return integer ? "OP" : "FLOP"; }

std::string describeDispatchKernel(const CompilationPlan &plan, const Dispatch &d) {
  std::string text = describeKernel(d.kernel);
  const std::string flop = " FLOP/cycle";
  if (isIntegerDispatch(plan, d) && text.size() >= flop.size() &&
      text.compare(text.size() - flop.size(), flop.size(), flop) == 0)
    text.replace(text.size() - flop.size(), flop.size(), " OP/cycle");
  return text;
}

/// Each dispatch command's traced intervals, ns, by command index.
static std::map<int64_t, std::vector<double>>
commandIntervals(const std::vector<TraceEvent> &trace) {
  std::map<int64_t, std::vector<double>> out;
  for (const TraceEvent &e : trace)
    if (e.workgroup < 0 && e.endNs >= e.startNs)
      out[e.command].push_back(double(e.endNs - e.startNs));
  return out;
}

std::vector<DispatchProfile>
profileDispatches(const CompilationPlan &plan, const std::vector<TraceEvent> *trace,
                  const std::map<std::string, int64_t> &stackFrameBytes, const CostModel &model) {
  std::map<int64_t, std::vector<double>> intervals;
  if (trace)
    intervals = commandIntervals(*trace);
  std::vector<DispatchMemory> memory = dispatchMemoryOf(plan, stackFrameBytes);
  std::map<int64_t, size_t> rowOf;
  std::vector<DispatchProfile> rows;
  for (size_t i = 0; i < plan.dispatches.size(); ++i) {
    const Dispatch &d = plan.dispatches[i];
    DispatchProfile row;
    row.id = d.id;
    row.name = d.name;
    for (const SourceOp &op : d.ops)
      row.operators += (row.operators.empty() ? "" : " + ") + sourceOpText(op);
    row.work = d.flops;
    row.integer = isIntegerDispatch(plan, d);
    row.bytesRead = d.bytesRead;
    row.bytesWritten = d.bytesWritten;
    row.arenaBytes = memory[i].arenaBytes;
    row.stackBytes = memory[i].dynamicStack ? -1 : memory[i].stackBytes;
    row.dynamicStack = memory[i].dynamicStack;
    row.kernel = kernelTileText(d.kernel);
    row.kernelDetail = describeDispatchKernel(plan, d);
    rowOf[d.id] = rows.size();
    rows.push_back(std::move(row));
  }
  for (const Command &c : plan.schedule.commands) {
    auto it = rowOf.find(c.dispatch);
    if (c.kind != CommandKind::Dispatch || it == rowOf.end())
      continue;
    DispatchProfile &row = rows[it->second];
    row.estimatedNs += model.durationUs(plan, c) * 1000.0;
    if (auto traced = intervals.find(c.index); traced != intervals.end())
      row.measuredNs = std::max(row.measuredNs, 0.0) + medianOf(traced->second);
  }
  double total = 0;
  for (DispatchProfile &row : rows) {
    row.timeNs = trace ? row.measuredNs : row.estimatedNs;
    total += std::max(row.timeNs, 0.0);
    if (row.measuredNs > 0)
      row.workPerSecond = double(row.work) / row.measuredNs * 1e9;
  }
  for (DispatchProfile &row : rows)
    row.share = total > 0 && row.timeNs > 0 ? row.timeNs / total : 0;
  return rows;
}

std::vector<std::string> traceCommandNames(const CompilationPlan &plan) {
  std::map<int64_t, std::string> byId;
  for (const Dispatch &d : plan.dispatches)
    byId[d.id] = dispatchLabel(d);
  std::vector<std::string> names;
  for (const Command &c : plan.schedule.commands) {
    if (c.index < 0)
      continue;
    if (size_t(c.index) >= names.size())
      names.resize(size_t(c.index) + 1);
    names[c.index] = c.kind == CommandKind::Dispatch ? byId[c.dispatch] : toString(c.kind);
  }
  return names;
}

} // namespace kiln
