//===- Timeline.cpp - Commands on a time axis ----------------------------===//
#include "Timeline.h"

#include <algorithm>
#include <map>

namespace kiln::views {

TimelineData estimateTimeline(const kiln::CompilationPlan &plan, const CostModel &model) {
  TimelineData data;
  for (int64_t w = 0; w < plan.schedule.waves; ++w)
    data.lanes << QStringLiteral("wave %1").arg(w);
  double waveStart = 0, waveEnd = 0;
  int64_t currentWave = -1;
  for (const kiln::Command &c : plan.schedule.commands) {
    if (c.kind == kiln::CommandKind::Barrier) {
      data.barriers.push_back({c.index, c.wave, waveEnd});
      waveStart = waveEnd = waveEnd + model.barrierUs;
      continue;
    }
    if (c.wave != currentWave) {
      // A new wave without a barrier before it (first wave) starts where
      // the last one ended.
      if (currentWave >= 0 && waveEnd > waveStart)
        waveStart = waveEnd;
      currentWave = c.wave;
    }
    TimelineBar bar;
    bar.command = c.index;
    bar.kind = c.kind;
    bar.dispatch = c.dispatch;
    bar.wave = c.wave;
    bar.lane = int(c.wave);
    bar.startUs = waveStart;
    bar.endUs = waveStart + model.durationUs(plan, c);
    bar.estimated = true;
    waveEnd = std::max(waveEnd, bar.endUs);
    data.commands.push_back(bar);
    while (data.lanes.size() <= bar.lane)
      data.lanes << QStringLiteral("wave %1").arg(data.lanes.size());
  }
  data.totalUs = waveEnd;
  return data;
}

TimelineData measuredTimeline(const kiln::CompilationPlan &plan,
                              const std::vector<kiln::TraceEvent> &events,
                              const CostModel &model) {
  TimelineData data;
  data.measured = true;
  uint64_t t0 = UINT64_MAX;
  int64_t maxThread = 0;
  std::map<int64_t, const kiln::TraceEvent *> byCommand;
  for (const kiln::TraceEvent &e : events) {
    t0 = std::min(t0, e.startNs);
    maxThread = std::max(maxThread, e.thread);
    if (e.workgroup < 0)
      byCommand[e.command] = &e;
  }
  // A measured command spans its own event and its workgroups' (the
  // threads' clocks are read apart, so a workgroup may end after it).
  std::map<int64_t, std::pair<uint64_t, uint64_t>> span;
  for (const kiln::TraceEvent &e : events)
    if (byCommand.count(e.command)) {
      auto it = span.try_emplace(e.command, e.startNs, e.endNs).first;
      it->second = {std::min(it->second.first, e.startNs), std::max(it->second.second, e.endNs)};
    }
  if (t0 == UINT64_MAX)
    t0 = 0;
  for (int64_t t = 0; t <= maxThread; ++t)
    data.lanes << QStringLiteral("thread %1").arg(t);
  auto us = [&](uint64_t ns) { return (double(ns) - double(t0)) / 1000.0; };

  double cursor = 0, waveEnd = 0;
  for (const kiln::Command &c : plan.schedule.commands) {
    if (c.kind == kiln::CommandKind::Barrier) {
      data.barriers.push_back({c.index, c.wave, waveEnd});
      cursor = waveEnd;
      continue;
    }
    TimelineBar bar;
    bar.command = c.index;
    bar.kind = c.kind;
    bar.dispatch = c.dispatch;
    bar.wave = c.wave;
    auto it = byCommand.find(c.index);
    if (it != byCommand.end()) {
      bar.lane = int(it->second->thread);
      bar.startUs = us(span[c.index].first);
      bar.endUs = us(span[c.index].second);
    } else {
      bar.lane = 0;
      bar.startUs = cursor;
      bar.endUs = cursor + model.durationUs(plan, c);
      bar.estimated = true;
    }
    cursor = std::max(cursor, bar.endUs);
    waveEnd = std::max(waveEnd, bar.endUs);
    data.commands.push_back(bar);
  }
  std::map<int64_t, const kiln::Command *> commandAt;
  for (const kiln::Command &c : plan.schedule.commands)
    commandAt[c.index] = &c;
  for (const kiln::TraceEvent &e : events) {
    if (e.workgroup < 0)
      continue;
    TimelineBar bar;
    bar.command = e.command;
    bar.workgroup = e.workgroup;
    bar.lane = int(e.thread);
    if (auto it = commandAt.find(e.command); it != commandAt.end()) {
      bar.kind = it->second->kind;
      bar.dispatch = it->second->dispatch;
      bar.wave = it->second->wave;
    }
    bar.startUs = us(e.startNs);
    bar.endUs = us(e.endNs);
    data.workgroups.push_back(bar);
    waveEnd = std::max(waveEnd, bar.endUs);
  }
  data.totalUs = waveEnd;
  return data;
}

} // namespace kiln::views
