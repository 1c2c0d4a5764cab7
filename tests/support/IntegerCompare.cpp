//===- IntegerCompare.cpp - Bit-exact comparison of integer arrays --------===//
#include "IntegerCompare.h"

#include <cstdlib>
#include <cstring>

namespace kiln::test {

namespace {

bool isIntegerDtype(const std::string &d) {
  return d == "|i1" || d == "|u1" || d == "|b1" || d == "<i2" || d == "<u2" || d == "<i4" ||
         d == "<u4" || d == "<i8";
}

template <typename T> int64_t load(const std::vector<uint8_t> &bytes, int64_t index) {
  T v;
  std::memcpy(&v, bytes.data() + index * sizeof(T), sizeof(T));
  return static_cast<int64_t>(v);
}

} // namespace

int64_t integerAt(const NpyArray &a, int64_t i) {
  const std::string &d = a.dtype;
  if (d == "|i1")
    return load<int8_t>(a.data, i);
  if (d == "|u1" || d == "|b1")
    return load<uint8_t>(a.data, i);
  if (d == "<i2")
    return load<int16_t>(a.data, i);
  if (d == "<u2")
    return load<uint16_t>(a.data, i);
  if (d == "<i4")
    return load<int32_t>(a.data, i);
  if (d == "<u4")
    return load<uint32_t>(a.data, i);
  return load<int64_t>(a.data, i);
}

::testing::AssertionResult integersEqual(const NpyArray &got, const NpyArray &want,
                                         int64_t maxLsb, IntegerDiff *diff) {
  if (!isIntegerDtype(want.dtype))
    return ::testing::AssertionFailure() << "reference dtype " << want.dtype << " is not an integer type";
  if (got.dtype != want.dtype)
    return ::testing::AssertionFailure() << "dtype " << got.dtype << ", reference " << want.dtype;
  if (got.shape != want.shape)
    return ::testing::AssertionFailure() << "shape " << tensorTypeText(got.shape, got.dtype)
                                         << ", reference " << tensorTypeText(want.shape, want.dtype);
  IntegerDiff d;
  d.elements = want.numElements();
  if (static_cast<int64_t>(got.data.size()) != d.elements * static_cast<int64_t>(npyDtypeSize(got.dtype)))
    return ::testing::AssertionFailure() << got.data.size() << " bytes for " << d.elements << " elements";
  for (int64_t i = 0; i < d.elements; ++i) {
    int64_t a = integerAt(got, i), b = integerAt(want, i);
    if (a == b)
      continue;
    if (d.first < 0)
      d.first = i;
    ++d.differing;
    int64_t delta = a > b ? a - b : b - a;
    d.maxDiffLsb = delta > d.maxDiffLsb ? delta : d.maxDiffLsb;
  }
  d.text = std::to_string(d.differing) + " of " + std::to_string(d.elements) +
           " elements differ, max |diff| " + std::to_string(d.maxDiffLsb) + " LSB";
  if (d.first >= 0)
    d.text += "; first at flat index " + std::to_string(d.first) + ": got " +
              std::to_string(integerAt(got, d.first)) + ", reference " +
              std::to_string(integerAt(want, d.first));
  if (diff)
    *diff = d;
  if (d.maxDiffLsb > maxLsb)
    return ::testing::AssertionFailure() << d.text << " (allowed: " << maxLsb << " LSB)";
  return ::testing::AssertionSuccess() << d.text;
}

NpyArray sampleOf(const NpyArray &stacked, int64_t samples, int64_t s) {
  NpyArray one;
  one.dtype = stacked.dtype;
  one.shape.assign(stacked.shape.begin() + 1, stacked.shape.end());
  size_t bytes = stacked.data.size() / static_cast<size_t>(samples);
  one.data.assign(stacked.data.begin() + s * bytes, stacked.data.begin() + (s + 1) * bytes);
  return one;
}

NpyArray stackSamples(const std::vector<NpyArray> &samples) {
  NpyArray all;
  if (samples.empty())
    return all;
  all.dtype = samples[0].dtype;
  all.shape = samples[0].shape;
  all.shape.insert(all.shape.begin(), static_cast<int64_t>(samples.size()));
  for (const NpyArray &a : samples)
    all.data.insert(all.data.end(), a.data.begin(), a.data.end());
  return all;
}

} // namespace kiln::test
