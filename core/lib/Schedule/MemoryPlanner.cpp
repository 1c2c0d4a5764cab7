//===- MemoryPlanner.cpp - Static arena placement -------------------------===//
#include "kiln/MemoryPlanner.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace kiln {

static int64_t alignUp(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

static bool overlapsInTime(const LiveRange &a, const LiveRange &b) {
  return a.start <= b.end && b.start <= a.end;
}

int64_t arenaLowerBound(const std::vector<LiveRange> &ranges,
                        int64_t alignment) {
  std::map<int64_t, int64_t> delta;
  for (const LiveRange &r : ranges) {
    delta[r.start] += alignUp(r.bytes, alignment);
    delta[r.end + 1] -= alignUp(r.bytes, alignment);
  }
  int64_t live = 0, best = 0;
  for (auto &[time, d] : delta) {
    live += d;
    best = std::max(best, live);
  }
  return best;
}

Placement placeInOrder(const std::vector<LiveRange> &ranges,
                       const std::vector<size_t> &order, int64_t alignment) {
  Placement p;
  p.offsets.assign(ranges.size(), 0);
  std::vector<size_t> placed;
  placed.reserve(ranges.size());
  std::vector<std::pair<int64_t, int64_t>> busy; // [offset, end) intervals
  for (size_t i : order) {
    const LiveRange &r = ranges[i];
    int64_t size = alignUp(r.bytes, alignment);
    busy.clear();
    for (size_t j : placed)
      if (overlapsInTime(r, ranges[j]))
        busy.push_back({p.offsets[j], p.offsets[j] + alignUp(ranges[j].bytes, alignment)});
    std::sort(busy.begin(), busy.end());
    int64_t offset = 0;
    for (auto [begin, end] : busy) {
      if (offset + size <= begin)
        break;
      offset = std::max(offset, alignUp(end, alignment));
    }
    p.offsets[i] = offset;
    p.arenaBytes = std::max(p.arenaBytes, offset + size);
    placed.push_back(i);
  }
  return p;
}

static std::vector<size_t> sizeOrder(const std::vector<LiveRange> &ranges) {
  std::vector<size_t> order(ranges.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (ranges[a].bytes != ranges[b].bytes)
      return ranges[a].bytes > ranges[b].bytes;
    return ranges[a].start < ranges[b].start;
  });
  return order;
}

Placement placeGreedyBySize(const std::vector<LiveRange> &ranges,
                            int64_t alignment) {
  Placement p = placeInOrder(ranges, sizeOrder(ranges), alignment);
  p.planner = "greedy-by-size";
  return p;
}

Placement placeHillClimb(const std::vector<LiveRange> &ranges,
                         int64_t alignment, int iterations, uint64_t seed) {
  std::vector<size_t> order = sizeOrder(ranges);
  Placement best = placeInOrder(ranges, order, alignment);
  best.planner = "greedy-by-size";
  int64_t bound = arenaLowerBound(ranges, alignment);
  // xorshift64*: deterministic across platforms.
  uint64_t state = seed ? seed : 1;
  auto next = [&]() {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 2685821657736338717ull;
  };
  for (int it = 0; it < iterations && best.arenaBytes > bound && order.size() > 1;
       ++it) {
    size_t a = next() % order.size(), b = next() % order.size();
    if (a == b)
      continue;
    std::swap(order[a], order[b]);
    Placement candidate = placeInOrder(ranges, order, alignment);
    if (candidate.arenaBytes <= best.arenaBytes) {
      if (candidate.arenaBytes < best.arenaBytes)
        candidate.planner = "hill-climb";
      else
        candidate.planner = best.planner;
      best = std::move(candidate);
    } else {
      std::swap(order[a], order[b]);
    }
  }
  return best;
}

bool placementIsValid(const std::vector<LiveRange> &ranges,
                      const Placement &placement, std::string *why) {
  for (size_t i = 0; i < ranges.size(); ++i) {
    if (placement.offsets[i] < 0 ||
        placement.offsets[i] + ranges[i].bytes > placement.arenaBytes) {
      if (why)
        *why = "buffer " + std::to_string(i) + " does not fit in the arena";
      return false;
    }
    for (size_t j = i + 1; j < ranges.size(); ++j) {
      if (!overlapsInTime(ranges[i], ranges[j]))
        continue;
      int64_t ai = placement.offsets[i], bi = ai + ranges[i].bytes;
      int64_t aj = placement.offsets[j], bj = aj + ranges[j].bytes;
      if (ai < bj && aj < bi) {
        if (why)
          *why = "buffers " + std::to_string(i) + " and " + std::to_string(j) +
                 " are live together and overlap";
        return false;
      }
    }
  }
  return true;
}

} // namespace kiln
