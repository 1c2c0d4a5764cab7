//===- PlanChecker.cpp - Invariants every plan must hold ------------------===//
#include "kiln/Plan.h"

#include <map>

namespace kiln {

const char *toString(BufferKind kind) {
  switch (kind) {
  case BufferKind::Input: return "input";
  case BufferKind::Output: return "output";
  case BufferKind::Constant: return "constant";
  case BufferKind::Transient: return "transient";
  }
  return "?";
}

const char *toString(CommandKind kind) {
  switch (kind) {
  case CommandKind::Dispatch: return "dispatch";
  case CommandKind::Barrier: return "barrier";
  case CommandKind::Copy: return "copy";
  case CommandKind::Fill: return "fill";
  }
  return "?";
}

std::vector<std::string> checkPlan(const CompilationPlan &plan) {
  std::vector<std::string> errors;
  const auto &buffers = plan.memory.buffers;
  auto bufferName = [&](int64_t id) { return "buffer " + std::to_string(id); };

  // Waves per buffer, from the commands.
  std::map<int64_t, std::pair<int64_t, int64_t>> waves;
  std::map<int64_t, int64_t> firstWriteWave;
  for (const Command &cmd : plan.schedule.commands) {
    for (const BindingRef &b : cmd.bindings) {
      if (b.buffer < 0 || b.buffer >= static_cast<int64_t>(buffers.size())) {
        errors.push_back("command " + std::to_string(cmd.index) + " binds a missing buffer");
        continue;
      }
      const Buffer &buf = buffers[b.buffer];
      if (b.offset < 0 || b.length < 0 || b.offset + b.length > buf.bytes)
        errors.push_back("command " + std::to_string(cmd.index) + " binds [" +
                         std::to_string(b.offset) + ", +" + std::to_string(b.length) +
                         ") outside " + bufferName(b.buffer) + " of " +
                         std::to_string(buf.bytes) + " bytes");
      auto [it, inserted] = waves.try_emplace(b.buffer, cmd.wave, cmd.wave);
      it->second.first = std::min(it->second.first, cmd.wave);
      it->second.second = std::max(it->second.second, cmd.wave);
      if (b.write && !firstWriteWave.count(b.buffer))
        firstWriteWave[b.buffer] = cmd.wave;
    }
  }
  // Reads see data written by an earlier wave (inputs/constants are given).
  for (const Command &cmd : plan.schedule.commands)
    for (const BindingRef &b : cmd.bindings) {
      if (b.write || b.buffer < 0 || b.buffer >= static_cast<int64_t>(buffers.size()))
        continue;
      BufferKind kind = buffers[b.buffer].kind;
      if (kind == BufferKind::Input || kind == BufferKind::Constant)
        continue;
      auto it = firstWriteWave.find(b.buffer);
      if (it == firstWriteWave.end() || it->second >= cmd.wave)
        errors.push_back("command " + std::to_string(cmd.index) + " (wave " +
                         std::to_string(cmd.wave) + ") reads " + bufferName(b.buffer) +
                         " before an earlier wave wrote it");
    }
  // Transient buffers: inside the arena, no overlap while live together.
  std::vector<const Buffer *> transients;
  for (const Buffer &buf : buffers)
    if (buf.kind == BufferKind::Transient && waves.count(buf.id)) {
      transients.push_back(&buf);
      if (buf.offset < 0 || buf.offset + buf.bytes > plan.memory.arenaBytes)
        errors.push_back(bufferName(buf.id) + " [" + std::to_string(buf.offset) + ", +" +
                         std::to_string(buf.bytes) + ") lies outside the " +
                         std::to_string(plan.memory.arenaBytes) + "-byte arena");
    }
  auto root = [&](const Buffer *b) {
    while (b->aliasOf >= 0)
      b = &buffers[b->aliasOf];
    return b->id;
  };
  for (size_t i = 0; i < transients.size(); ++i)
    for (size_t j = i + 1; j < transients.size(); ++j) {
      const Buffer *a = transients[i], *b = transients[j];
      if (root(a) == root(b))
        continue;
      auto wa = waves[a->id], wb = waves[b->id];
      bool liveTogether = wa.first <= wb.second && wb.first <= wa.second;
      bool overlap = a->offset < b->offset + b->bytes && b->offset < a->offset + a->bytes;
      if (liveTogether && overlap)
        errors.push_back(bufferName(a->id) + " and " + bufferName(b->id) +
                         " are live together and overlap in the arena");
    }
  if (plan.memory.arenaBytes < plan.memory.lowerBoundBytes)
    errors.push_back("arena (" + std::to_string(plan.memory.arenaBytes) +
                     " bytes) is below the lower bound (" +
                     std::to_string(plan.memory.lowerBoundBytes) + ")");
  return errors;
}

std::string explainTileSizes(const Dispatch &d, const std::vector<int64_t> &sizes) {
  const std::string who = d.name.empty() ? "dispatch " + std::to_string(d.id) : d.name;
  if (sizes.size() != d.loopRanges.size())
    return who + " has " + std::to_string(d.loopRanges.size()) + " loops; " +
           std::to_string(sizes.size()) + " tile sizes given";
  int split = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    int64_t t = sizes[i], range = d.loopRanges[i];
    bool reduction = i < d.loopKinds.size() && d.loopKinds[i] == "reduction";
    if (t < 0)
      return "loop " + std::to_string(i) + ": tile size " + std::to_string(t) +
             " is negative (0 = the whole loop)";
    if (t > range)
      return "loop " + std::to_string(i) + ": tile size " + std::to_string(t) +
             " exceeds the loop's range " + std::to_string(range) + " (use " +
             std::to_string(range) + " or 0 for the whole loop)";
    if (reduction && t != 0)
      return "loop " + std::to_string(i) +
             " is a reduction and cannot be split across workgroups (use 0)";
    if (t != 0 && t < range)
      ++split;
  }
  if (split > 3)
    return std::to_string(split) + " loops split; at most 3 map to workgroups (x, y, z)";
  return "";
}

} // namespace kiln
