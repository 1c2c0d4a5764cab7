//===- PlanChecker.cpp - Invariants every plan must hold ------------------===//
#include "kiln/Plan.h"

#include <algorithm>
#include <array>
#include <map>

namespace kiln {

const char *toString(BufferKind kind) {
  switch (kind) {
  case BufferKind::Input: return "input";
  case BufferKind::Output: return "output";
  case BufferKind::Constant: return "constant";
  case BufferKind::Transient: return "transient";
  case BufferKind::State:
    return "state";
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

/// Output slots: slot K is bound to the Output buffer of index K, every byte
/// of it is written by exactly one command (the writers' ranges tile it),
/// and every read of it comes in a wave after all of its writes.
static void checkOutputs(const CompilationPlan &plan, std::vector<std::string> &errors) {
  const auto &buffers = plan.memory.buffers;
  const auto &commands = plan.schedule.commands;
  int64_t outputBuffers = 0;
  for (const Buffer &buf : buffers)
    outputBuffers += buf.kind == BufferKind::Output;
  if (outputBuffers != static_cast<int64_t>(plan.outputs.size()))
    errors.push_back("the plan has " + std::to_string(outputBuffers) +
                     " output buffers for " + std::to_string(plan.outputs.size()) +
                     " model outputs");
  for (size_t k = 0; k < plan.outputs.size(); ++k) {
    const OutputBinding &out = plan.outputs[k];
    std::string who = "output " + std::to_string(k) + " ('" + out.name + "')";
    if (out.slot != static_cast<int64_t>(k) || out.buffer < 0 ||
        out.buffer >= static_cast<int64_t>(buffers.size()) ||
        buffers[out.buffer].kind != BufferKind::Output ||
        buffers[out.buffer].index != out.slot) {
      errors.push_back(who + " is not bound to output buffer " + std::to_string(k));
      continue;
    }
    const Buffer &buf = buffers[out.buffer];
    if (out.bytes != buf.bytes)
      errors.push_back(who + " has " + std::to_string(out.bytes) + " bytes, its buffer " +
                       std::to_string(buf.bytes));
    // Every write of the buffer, as [offset, end) with its command.
    std::vector<std::array<int64_t, 3>> writes;
    int64_t lastWriteWave = -1;
    std::vector<int64_t> writers;
    for (const Command &cmd : commands)
      for (const BindingRef &b : cmd.bindings)
        if (b.write && b.buffer == out.buffer) {
          writes.push_back({b.offset, b.offset + b.length, cmd.index});
          lastWriteWave = std::max(lastWriteWave, cmd.wave);
          if (writers.empty() || writers.back() != cmd.index)
            writers.push_back(cmd.index);
        }
    if (writers != out.writers)
      errors.push_back(who + ": the binding's writers differ from the commands "
                             "that write buffer " + std::to_string(out.buffer));
    std::sort(writes.begin(), writes.end());
    int64_t covered = 0;
    for (const auto &w : writes) {
      if (w[0] < covered) {
        errors.push_back(who + ": bytes from " + std::to_string(w[0]) +
                         " are written twice (command " + std::to_string(w[2]) + ")");
        break;
      }
      if (w[0] > covered)
        break;
      covered = w[1];
    }
    if (covered != buf.bytes)
      errors.push_back(who + ": " + std::to_string(covered < buf.bytes ? buf.bytes - covered : 0) +
                       " of its " + std::to_string(buf.bytes) +
                       " bytes are never written (first unwritten byte " +
                       std::to_string(covered) + ")");
    for (const Command &cmd : commands)
      for (const BindingRef &b : cmd.bindings)
        if (!b.write && b.buffer == out.buffer && cmd.wave <= lastWriteWave)
          errors.push_back("command " + std::to_string(cmd.index) + " (wave " +
                           std::to_string(cmd.wave) + ") reads " + who +
                           " before its last write (wave " +
                           std::to_string(lastWriteWave) + ")");
  }
}

/// State buffers: each inside [0, persistentBytes) and apart from the
/// others, every transient buffer at or above persistentBytes, one state
/// variable per state buffer, and exactly one write of each, whole and in a
/// wave after every read of it (the next invocation then reads the new
/// value, this one only the old).
static void checkState(const CompilationPlan &plan, std::vector<std::string> &errors) {
  const auto &buffers = plan.memory.buffers;
  const int64_t persistent = plan.memory.persistentBytes;
  std::vector<const Buffer *> states;
  for (const Buffer &buf : buffers) {
    if (buf.kind == BufferKind::Transient && buf.firstCommand >= 0 && buf.offset < persistent)
      errors.push_back("buffer " + std::to_string(buf.id) + " at arena offset " +
                       std::to_string(buf.offset) + " lies in the " + std::to_string(persistent) +
                       "-byte persistent region");
    if (buf.kind != BufferKind::State)
      continue;
    states.push_back(&buf);
    if (buf.offset < 0 || buf.offset + buf.bytes > persistent)
      errors.push_back("state buffer " + std::to_string(buf.id) + " [" +
                       std::to_string(buf.offset) + ", +" + std::to_string(buf.bytes) +
                       ") lies outside the " + std::to_string(persistent) +
                       "-byte persistent region");
  }
  for (size_t i = 0; i < states.size(); ++i)
    for (size_t j = i + 1; j < states.size(); ++j)
      if (states[i]->offset < states[j]->offset + states[j]->bytes &&
          states[j]->offset < states[i]->offset + states[i]->bytes)
        errors.push_back("state buffers " + std::to_string(states[i]->id) + " and " +
                         std::to_string(states[j]->id) + " overlap");
  if (states.size() != plan.state.size())
    errors.push_back("the plan has " + std::to_string(states.size()) + " state buffers for " +
                     std::to_string(plan.state.size()) + " state variables");
  for (const Buffer *buf : states) {
    int64_t writes = 0, writeWave = -1, lastReadWave = -1;
    bool whole = true;
    for (const Command &cmd : plan.schedule.commands)
      for (const BindingRef &b : cmd.bindings) {
        if (b.buffer != buf->id)
          continue;
        if (b.write) {
          ++writes;
          writeWave = cmd.wave;
          whole &= b.offset == 0 && b.length == buf->bytes;
        } else {
          lastReadWave = std::max(lastReadWave, cmd.wave);
        }
      }
    std::string who = "state buffer " + std::to_string(buf->id);
    if (writes != 1 || !whole)
      errors.push_back(who + " is written by " + std::to_string(writes) +
                       " commands; one whole write is expected");
    else if (writeWave <= lastReadWave)
      errors.push_back(who + " is written in wave " + std::to_string(writeWave) +
                       ", not after its last read (wave " + std::to_string(lastReadWave) + ")");
  }
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
      // State buffers hold the previous invocation's value when read.
      if (kind == BufferKind::Input || kind == BufferKind::Constant || kind == BufferKind::State)
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
  checkOutputs(plan, errors);
  checkState(plan, errors);
  if (plan.memory.arenaBytes < plan.memory.lowerBoundBytes)
    errors.push_back("arena (" + std::to_string(plan.memory.arenaBytes) +
                     " bytes) is below the lower bound (" +
                     std::to_string(plan.memory.lowerBoundBytes) + ")");
  return errors;
}

} // namespace kiln
