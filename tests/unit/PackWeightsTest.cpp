//===- PackWeightsTest.cpp - kiln-pack-weights ----------------------------===//
//
// The panel layout (kiln::panelOffsetOf) against hand-computed positions.
// What the pass writes (the packed constant, the argument types, the marked
// cast, the constants it must leave alone) is checked in
// core/test/Transforms/pack-weights.mlir; the kernels reading packed
// weights numerically in tests/model/PackedWeightsTest.cpp.
//
//===----------------------------------------------------------------------===//
#include "Transforms/Passes.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <tuple>

namespace {

TEST(PackWeights, PanelOffsetsByHand) {
  // K = 2, N = 6, panels of 4: panel 0 holds columns 0-3 (2 rows of 4),
  // then the 2-wide tail panel holds columns 4-5.
  kiln::PanelLayout l{2, 6, 4};
  EXPECT_EQ(kiln::panelOffsetOf(l, 0, 0), 0);
  EXPECT_EQ(kiln::panelOffsetOf(l, 0, 3), 3);
  EXPECT_EQ(kiln::panelOffsetOf(l, 1, 0), 4);
  EXPECT_EQ(kiln::panelOffsetOf(l, 1, 3), 7);
  EXPECT_EQ(kiln::panelOffsetOf(l, 0, 4), 8);
  EXPECT_EQ(kiln::panelOffsetOf(l, 0, 5), 9);
  EXPECT_EQ(kiln::panelOffsetOf(l, 1, 4), 10);
  EXPECT_EQ(kiln::panelOffsetOf(l, 1, 5), 11);
  // Every layout is a permutation of [0, K x N): no padding, no overlap.
  for (auto [k, n, p] : {std::tuple{3, 10, 4}, std::tuple{5, 64, 16}, std::tuple{1, 7, 8},
                         std::tuple{9, 100, 64}}) {
    std::set<int64_t> seen;
    for (int64_t r = 0; r < k; ++r)
      for (int64_t c = 0; c < n; ++c) {
        int64_t at = kiln::panelOffsetOf({k, n, p}, r, c);
        EXPECT_GE(at, 0);
        EXPECT_LT(at, k * n);
        seen.insert(at);
      }
    EXPECT_EQ(int64_t(seen.size()), k * n);
  }
}

} // namespace
