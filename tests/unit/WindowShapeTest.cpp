//===- WindowShapeTest.cpp - fitWindow: windows fitted to TOSA's tiling ---===//
//
// Hand-computed axes (the examples), then every small axis
// (in 1..12, kernel 1..4, stride 1..4, dilation 1..3, pads 0..3, floor and
// ceil): the fitted axis has pads >= 0 and a remainder only without end
// padding, its output size is the model's formula computed here
// independently, and the windows read the same input elements as the
// model's windows.
//
//===----------------------------------------------------------------------===//
#include "Import/WindowShape.h"

#include <gtest/gtest.h>

#include <set>

using kiln::fitWindow;
using kiln::TosaWindowAxis;
using kiln::WindowAxis;
using kiln::WindowRounding;

namespace {

TEST(WindowShape, LeftoverLeavesTheEndPadThenTheInput) {
  // 1x1 stride 2 on 6, no pads: windows at 0, 2, 4; element 5 is unread.
  TosaWindowAxis t = fitWindow({6, 1, 2, 1, 0, 0}, WindowRounding::Floor);
  EXPECT_EQ(t.out, 3);
  EXPECT_EQ(t.padEnd, 0);
  EXPECT_EQ(t.remainder, 1);
  // MaxPool 2/2 on 7: windows at 0, 2, 4; element 6 unread.
  t = fitWindow({7, 2, 2, 1, 0, 0}, WindowRounding::Floor);
  EXPECT_EQ(t.out, 3);
  EXPECT_EQ(t.remainder, 1);
  // Kernel 3 stride 2 on 8, pads 0/1: span 6, the end pad absorbs nothing
  // more than itself: out 4, pad end 0 (the pad cell is never read).
  t = fitWindow({8, 3, 2, 1, 0, 1}, WindowRounding::Floor);
  EXPECT_EQ(t.out, 4);
  EXPECT_EQ(t.padEnd, 1);
  EXPECT_EQ(t.remainder, 0);
  t = fitWindow({8, 3, 2, 1, 0, 2}, WindowRounding::Floor); // span 7: one left over
  EXPECT_EQ(t.out, 4);
  EXPECT_EQ(t.padEnd, 1);
  EXPECT_EQ(t.remainder, 0);
}

TEST(WindowShape, CeilAddsTheOverhangToTheEndPad) {
  // Kernel 3 stride 2 pads 1/1 on 8: out 5, windows at -1..7,
  // the last one 2 past the input: end pad 1 + 1 overhang.
  TosaWindowAxis t = fitWindow({8, 3, 2, 1, 1, 1}, WindowRounding::Ceil);
  EXPECT_EQ(t.out, 5);
  EXPECT_EQ(t.padBegin, 1);
  EXPECT_EQ(t.padEnd, 2);
  EXPECT_EQ(t.overhang, 1);
  // Kernel 2 stride 3 on 7: ceil(5/3) = 2 steps, windows at 0, 3, 6 (6 is
  // inside the input): out 3, overhang 1.
  t = fitWindow({7, 2, 3, 1, 0, 0}, WindowRounding::Ceil);
  EXPECT_EQ(t.out, 3);
  EXPECT_EQ(t.overhang, 1);
  // Kernel 2 stride 2 pads 0/2 on 4: ceil(4/2) = 2 steps would start a
  // window at 4, in the end padding: PyTorch's rule drops it (out 2).
  t = fitWindow({4, 2, 2, 1, 0, 2}, WindowRounding::Ceil);
  EXPECT_EQ(t.out, 2);
}

/// Input positions window o reads, per the model's definition.
std::set<int64_t> modelReads(const WindowAxis &a, int64_t out) {
  std::set<int64_t> reads;
  for (int64_t o = 0; o < out; ++o)
    for (int64_t k = 0; k < a.kernel; ++k) {
      int64_t p = o * a.stride + k * a.dilation - a.padBegin;
      if (p >= 0 && p < a.in)
        reads.insert(p);
    }
  return reads;
}

TEST(WindowShape, EverySmallAxisTilesExactlyAndReadsWhatTheModelReads) {
  int checked = 0;
  for (int64_t in = 1; in <= 12; ++in)
    for (int64_t k = 1; k <= 4; ++k)
      for (int64_t s = 1; s <= 4; ++s)
        for (int64_t d = 1; d <= 3; ++d)
          for (int64_t pb = 0; pb <= 3; ++pb)
            for (int64_t pe = 0; pe <= 3; ++pe)
              for (WindowRounding r : {WindowRounding::Floor, WindowRounding::Ceil}) {
                WindowAxis a{in, k, s, d, pb, pe};
                int64_t span = in + pb + pe - ((k - 1) * d + 1);
                if (span < 0)
                  continue;
                int64_t steps = r == WindowRounding::Floor ? span / s : (span + s - 1) / s;
                if (r == WindowRounding::Ceil && steps * s >= in + pb)
                  --steps;
                TosaWindowAxis t = fitWindow(a, r);
                ASSERT_EQ(t.out, steps + 1) << in << " " << k << " " << s << " " << d;
                if (modelReads(a, t.out).empty())
                  continue; // windows entirely in padding: callers refuse these
                ASSERT_TRUE(kiln::fitsWindows(a, t))
                    << "in " << in << " k " << k << " s " << s << " d " << d << " pads " << pb
                    << "/" << pe << ": pads " << t.padBegin << "/" << t.padEnd << " remainder "
                    << t.remainder;
                WindowAxis fitted{in, k, s, d, t.padBegin, t.padEnd};
                ASSERT_EQ(modelReads(fitted, t.out), modelReads(a, t.out));
                ++checked;
              }
  EXPECT_GT(checked, 10000);
}

} // namespace

// Transposed windows: ONNX ConvTranspose's hand-computed case (in 3, kernel
// 3, stride 2, pads 1/1: out 2 * 2 + 3 - 2 = 5) gives out_pad [-1, -1]; then
// every small axis (in 1..6, extent 1..5, stride 1..4, pads 0..3, output
// padding 0..stride-1): TOSA's output-size formula holds and every
// (input i, tap k) pair lands on the output the model puts it on.
TEST(WindowShape, TransposedWindowsLandWhereTheModelPutsThem) {
  kiln::TosaTransposeAxis hand = kiln::fitTransposeWindow({3, 3, 2, 1, 5});
  EXPECT_EQ(hand.outPadBegin, -1);
  EXPECT_EQ(hand.outPadEnd, -1);
  int checked = 0;
  for (int64_t in = 1; in <= 6; ++in)
    for (int64_t extent = 1; extent <= 5; ++extent)
      for (int64_t stride = 1; stride <= 4; ++stride)
        for (int64_t padBegin = 0; padBegin <= 3; ++padBegin)
          for (int64_t padEnd = 0; padEnd <= 3; ++padEnd)
            for (int64_t outputPadding = 0; outputPadding < stride; ++outputPadding) {
              int64_t out = stride * (in - 1) + outputPadding + extent - padBegin - padEnd;
              if (out < 1)
                continue;
              kiln::TosaTransposeAxis t =
                  kiln::fitTransposeWindow({in, extent, stride, padBegin, out});
              ASSERT_EQ((in - 1) * stride + t.outPadBegin + t.outPadEnd + extent, out)
                  << in << " " << extent << " " << stride << " " << padBegin << " " << padEnd;
              for (int64_t i = 0; i < in; ++i)
                for (int64_t k = 0; k < extent; ++k)
                  ASSERT_EQ(i * stride + t.outPadBegin + k, i * stride - padBegin + k);
              ++checked;
            }
  EXPECT_GT(checked, 1000);
}
