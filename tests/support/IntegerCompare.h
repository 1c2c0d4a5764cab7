//===- IntegerCompare.h - Bit-exact comparison of integer arrays -*- C++ -*-===//
#ifndef KILN_TESTS_INTEGERCOMPARE_H
#define KILN_TESTS_INTEGERCOMPARE_H

#include "kiln/Npy.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::test {

/// How two integer arrays of one dtype and shape differ.
struct IntegerDiff {
  int64_t elements = 0;
  /// Elements not equal.
  int64_t differing = 0;
  /// Largest |got - want|, in LSB (integer units of the type).
  int64_t maxDiffLsb = 0;
  /// Flat index of the first differing element, -1 if none.
  int64_t first = -1;
  /// Text: "N of M elements differ, max |diff| D LSB[; first at ...]".
  std::string text;
};

/// Compares `got` with `want`: same dtype (an integer descriptor: |i1 |u1
/// <i2 <u2 <i4 <u4 <i8 |b1), same shape, then element by element. The
/// assertion fails on a dtype, shape or size mismatch or when some element
/// differs by more than `maxLsb`; its message (also on success) is
/// IntegerDiff::text, or what does not match. `diff`, when given, receives
/// the counts.
::testing::AssertionResult integersEqual(const NpyArray &got, const NpyArray &want,
                                         int64_t maxLsb = 0, IntegerDiff *diff = nullptr);

/// Element `index` of an integer array as int64 (sign- or zero-extended
/// from its dtype). Requires an integer dtype and index < numElements().
int64_t integerAt(const NpyArray &array, int64_t index);

/// Sample `s` of an array holding `samples` runs stacked on a leading axis
/// (shape [samples, ...]): that run's array, shape without the leading axis.
NpyArray sampleOf(const NpyArray &stacked, int64_t samples, int64_t s);

/// Concatenates per-sample arrays of one shape and dtype on a new leading
/// axis (sampleOf's inverse).
NpyArray stackSamples(const std::vector<NpyArray> &samples);

} // namespace kiln::test

#endif
