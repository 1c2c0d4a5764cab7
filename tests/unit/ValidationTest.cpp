//===- ValidationTest.cpp - Validation metrics and random inputs ----------===//
#include "kiln/Run.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace {

kiln::NpyArray floats(std::vector<float> values, std::vector<int64_t> shape) {
  kiln::NpyArray a;
  a.shape = std::move(shape);
  a.data.resize(values.size() * 4);
  std::memcpy(a.data.data(), values.data(), a.data.size());
  return a;
}

TEST(Validation, MetricsMatchHandComputedValues) {
  // got = (1, 2, 3), ref = (1, 2, 4): error (0, 0, -1).
  auto metrics = kiln::validateOutputs({floats({1, 2, 3}, {3})}, {floats({1, 2, 4}, {3})},
                                       {"y"});
  ASSERT_TRUE(static_cast<bool>(metrics)) << llvm::toString(metrics.takeError());
  ASSERT_EQ(metrics->size(), 1u);
  const kiln::ValidationMetrics &m = (*metrics)[0];
  EXPECT_EQ(m.name, "y");
  EXPECT_EQ(m.elements, 3);
  EXPECT_DOUBLE_EQ(m.maxAbsError, 1.0);
  EXPECT_NEAR(m.rmse, std::sqrt(1.0 / 3.0), 1e-12);
  // <g, r> = 1 + 4 + 12 = 17; |g| = sqrt(14); |r| = sqrt(21).
  EXPECT_NEAR(m.cosine, 17.0 / std::sqrt(14.0 * 21.0), 1e-12);
  EXPECT_EQ(m.outsideTolerance, 1);
}

TEST(Validation, EqualOutputsAndZeroVectors) {
  auto same = kiln::validateOutputs({floats({0.5f, -2}, {2})}, {floats({0.5f, -2}, {2})});
  ASSERT_TRUE(static_cast<bool>(same));
  EXPECT_EQ((*same)[0].maxAbsError, 0.0);
  EXPECT_NEAR((*same)[0].cosine, 1.0, 1e-12);
  EXPECT_EQ((*same)[0].outsideTolerance, 0);
  EXPECT_EQ((*same)[0].name, "output 0");
  auto zeros = kiln::validateOutputs({floats({0, 0}, {2})}, {floats({0, 0}, {2})});
  ASSERT_TRUE(static_cast<bool>(zeros));
  EXPECT_EQ((*zeros)[0].cosine, 1.0);
  // A NaN output is never within tolerance.
  auto nan = kiln::validateOutputs({floats({NAN}, {1})}, {floats({0}, {1})});
  ASSERT_TRUE(static_cast<bool>(nan));
  EXPECT_EQ((*nan)[0].outsideTolerance, 1);
}

TEST(Validation, MismatchesAreNamed) {
  auto count = kiln::validateOutputs({floats({1}, {1})}, {});
  ASSERT_FALSE(static_cast<bool>(count));
  EXPECT_NE(llvm::toString(count.takeError()).find("1 outputs; 0 reference"), std::string::npos);
  auto shape = kiln::validateOutputs({floats({1, 2}, {2})}, {floats({1, 2}, {1, 2})}, {"scores"});
  ASSERT_FALSE(static_cast<bool>(shape));
  EXPECT_NE(llvm::toString(shape.takeError()).find("scores: shape 2, the reference is 1x2"),
            std::string::npos);
}

TEST(Validation, RandomInputsAreSeededAndInRange) {
  std::vector<kiln::IOInfo> infos = {{"x", "<f4", {2, 500}}, {"n", "<i4", {3}}};
  auto a = kiln::randomInputs(infos, 7), b = kiln::randomInputs(infos, 7),
       c = kiln::randomInputs(infos, 8);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].data, b[0].data);
  EXPECT_NE(a[0].data, c[0].data);
  EXPECT_EQ(a[0].shape, (std::vector<int64_t>{2, 500}));
  const float *f = reinterpret_cast<const float *>(a[0].data.data());
  double sum = 0;
  for (int i = 0; i < 1000; ++i) {
    EXPECT_GE(f[i], -1.0f);
    EXPECT_LT(f[i], 1.0f);
    sum += f[i];
  }
  EXPECT_LT(std::fabs(sum / 1000), 0.1); // uniform on [-1, 1): mean near 0
  EXPECT_EQ(a[1].data, std::vector<uint8_t>(12, 0));
}

} // namespace
