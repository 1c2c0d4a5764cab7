//===- kiln/MemoryPlanner.h - Static arena placement -----------*- C++ -*-===//
//
// Places transient buffers in one arena so that buffers live at the same
// time never overlap. Time is the schedule's wave index: a buffer is live
// from the wave that writes it to the last wave that reads it, inclusive
// (waves are separated by barriers, so memory freed after wave w can be
// reused from wave w + 1).
//
// Planners (swappable, all deterministic):
//  - greedy-by-size: largest first, each at the lowest offset that does not
//    collide with an already placed, time-overlapping buffer (TFLite Micro's
//    GreedyMemoryPlanner, TVM USMP's greedy_by_size);
//  - hill-climb: starts from greedy-by-size and repeatedly swaps two
//    buffers in the placement order, keeping any order that is no worse,
//    until the arena reaches the lower bound or the iteration budget ends
//    (Arm Vela's HillClimb allocator; TVM USMP hill_climb).
// The lower bound is the maximum over waves of the bytes live at once.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_MEMORYPLANNER_H
#define KILN_MEMORYPLANNER_H

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

/// One buffer to place: size in bytes, first and last wave (inclusive).
struct LiveRange {
  int64_t bytes = 0;
  int64_t start = 0;
  int64_t end = 0;
};

/// A placement: one arena offset (bytes) per range, and the arena size.
struct Placement {
  std::vector<int64_t> offsets;
  int64_t arenaBytes = 0;
  std::string planner;
};

/// Maximum over time of the sum of live sizes (each rounded up to
/// `alignment`), bytes.
int64_t arenaLowerBound(const std::vector<LiveRange> &ranges,
                        int64_t alignment = 64);

/// Places ranges in the given order, each at the lowest aligned offset free
/// during its lifetime.
Placement placeInOrder(const std::vector<LiveRange> &ranges,
                       const std::vector<size_t> &order,
                       int64_t alignment = 64);

/// Greedy-by-size placement (largest first; ties: earlier start first).
Placement placeGreedyBySize(const std::vector<LiveRange> &ranges,
                            int64_t alignment = 64);

/// Hill-climbing over placement orders from greedy-by-size; `iterations`
/// swaps at most, seeded PRNG (deterministic). Never worse than greedy.
Placement placeHillClimb(const std::vector<LiveRange> &ranges,
                         int64_t alignment = 64, int iterations = 2000,
                         uint64_t seed = 1);

/// True if no two time-overlapping ranges overlap in memory and every range
/// fits in the arena; otherwise `why` says which pair collides.
bool placementIsValid(const std::vector<LiveRange> &ranges,
                      const Placement &placement, std::string *why = nullptr);

} // namespace kiln

#endif
