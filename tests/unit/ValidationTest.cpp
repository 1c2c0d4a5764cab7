//===- ValidationTest.cpp - Validation metrics and random inputs ----------===//
#include "kiln/Run.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
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
  // An infinite rtol allows anything finite, and exact zeros stay within
  // it (inf x 0 was NaN and counted outside).
  kiln::Tolerance loose;
  loose.rtol = INFINITY;
  auto inf = kiln::validateOutputs({floats({0, 5}, {2})}, {floats({0, 1}, {2})}, {}, loose);
  ASSERT_TRUE(static_cast<bool>(inf)) << llvm::toString(inf.takeError());
  EXPECT_EQ((*inf)[0].outsideTolerance, 0);
  // The same infinity and NaN against NaN are no error (inf - inf is NaN).
  auto special = kiln::validateOutputs({floats({INFINITY, -INFINITY, NAN, 1}, {4})},
                                       {floats({INFINITY, -INFINITY, NAN, 1}, {4})});
  ASSERT_TRUE(static_cast<bool>(special));
  EXPECT_EQ((*special)[0].outsideTolerance, 0);
  EXPECT_EQ((*special)[0].differing, 0);
  EXPECT_EQ((*special)[0].maxAbsError, 0.0);
  EXPECT_EQ((*special)[0].rmse, 0.0);
  EXPECT_NEAR((*special)[0].cosine, 1.0, 1e-12);
  auto opposite = kiln::validateOutputs({floats({INFINITY}, {1})}, {floats({-INFINITY}, {1})});
  ASSERT_TRUE(static_cast<bool>(opposite));
  EXPECT_EQ((*opposite)[0].outsideTolerance, 1);
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

// int8 / uint8 inputs (kiln diff --benchmark runs on them) span their
// range: bytes are the top 8 bits of the LCG's steps. For seed 7 the first
// four steps' top bytes are 126, 244, 232, 69 (worked out in Python:
// s = s * 6364136223846793005 + 1442695040888963407 mod 2^64, s >> 56).
TEST(Validation, RandomIntegerInputsSpanTheirRange) {
  std::vector<kiln::IOInfo> infos = {{"q", "|i1", {4096}}, {"u", "|u1", {4096}}};
  auto a = kiln::randomInputs(infos, 7), b = kiln::randomInputs(infos, 7),
       c = kiln::randomInputs(infos, 8);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].data, b[0].data);
  EXPECT_NE(a[0].data, c[0].data);
  EXPECT_EQ(std::vector<uint8_t>(a[0].data.begin(), a[0].data.begin() + 4),
            (std::vector<uint8_t>{126, 244, 232, 69}));
  for (int k = 0; k < 2; ++k) {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    double sum = 0;
    for (int64_t i = 0; i < 4096; ++i) {
      int64_t x = kiln::integerElement(a[k], i);
      lo = std::min(lo, x);
      hi = std::max(hi, x);
      sum += double(x);
    }
    // 4096 uniform bytes: the extremes are reached within a few steps of
    // the range's ends; the mean is the range's middle within ~1.
    EXPECT_LE(lo, k == 0 ? -125 : 3);
    EXPECT_GE(hi, k == 0 ? 124 : 252);
    EXPECT_NEAR(sum / 4096, k == 0 ? -0.5 : 127.5, 3.0);
  }
}

kiln::NpyArray bytes(const char *dtype, std::vector<uint8_t> values) {
  kiln::NpyArray a;
  a.dtype = dtype;
  a.shape = {static_cast<int64_t>(values.size())};
  a.data = std::move(values);
  return a;
}

// Integer outputs are compared in LSB: got (-128, 5, 127, 0) against ref
// (-126, 5, 127, 1) differs by (2, 0, 0, 1).
TEST(Validation, IntegerOutputsInLsb) {
  auto got = bytes("|i1", {0x80, 5, 127, 0}), ref = bytes("|i1", {0x82, 5, 127, 1});
  auto exact = kiln::validateOutputs({got}, {ref}, {"q"});
  ASSERT_TRUE(static_cast<bool>(exact)) << llvm::toString(exact.takeError());
  const kiln::ValidationMetrics &m = (*exact)[0];
  EXPECT_TRUE(m.integer);
  EXPECT_EQ(m.maxAbsError, 2.0);
  EXPECT_EQ(m.differing, 2);
  EXPECT_EQ(m.outsideTolerance, 2); // default: exact equality
  EXPECT_NEAR(m.rmse, std::sqrt(5.0 / 4.0), 1e-12);
  kiln::Tolerance oneLsb;
  oneLsb.lsb = 1;
  auto loose = kiln::validateOutputs({got}, {ref}, {"q"}, oneLsb);
  ASSERT_TRUE(static_cast<bool>(loose));
  EXPECT_EQ((*loose)[0].outsideTolerance, 1);
  EXPECT_EQ((*loose)[0].differing, 2);
  // uint8 is unsigned: 255 against 0 is 255 LSB, not 1.
  auto u8 = kiln::validateOutputs({bytes("|u1", {255})}, {bytes("|u1", {0})});
  ASSERT_TRUE(static_cast<bool>(u8));
  EXPECT_EQ((*u8)[0].maxAbsError, 255.0);
  // A reference of another type is named.
  auto mixed = kiln::validateOutputs({got}, {bytes("|u1", {0, 0, 0, 0})}, {"q"});
  ASSERT_FALSE(static_cast<bool>(mixed));
  EXPECT_NE(llvm::toString(mixed.takeError()).find("q: the output is i8, the reference is u8"),
            std::string::npos);
}

TEST(Validation, PassCriterionNamesEachKindOfOutput) {
  kiln::ValidationReport report;
  report.outputs = {{"y", "<f4", {1}}};
  EXPECT_EQ(kiln::passCriterionText(report), "within |error| <= 0.0001 + 0.0001 x |reference|");
  report.outputs = {{"q", "|i1", {1}}};
  EXPECT_EQ(kiln::passCriterionText(report), "equal to the reference");
  report.tolerance.lsb = 1;
  EXPECT_EQ(kiln::passCriterionText(report), "within 1 LSB of the reference");
  report.outputs.push_back({"y", "<f4", {1}});
  EXPECT_EQ(kiln::passCriterionText(report),
            "within |error| <= 0.0001 + 0.0001 x |reference|; integer outputs within 1 LSB of "
            "the reference");
}

// --input= literals of the integer types: range-checked for the type.
TEST(Validation, IntegerInputLiterals) {
  auto i8 = kiln::parseInputSpec("2x2xi8=-128,127,0,3");
  ASSERT_TRUE(static_cast<bool>(i8)) << llvm::toString(i8.takeError());
  EXPECT_EQ(i8->dtype, "|i1");
  EXPECT_EQ(i8->shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(i8->data, (std::vector<uint8_t>{0x80, 0x7f, 0, 3}));
  auto u8 = kiln::parseInputSpec("1x3xu8=200");
  ASSERT_TRUE(static_cast<bool>(u8)) << llvm::toString(u8.takeError());
  EXPECT_EQ(u8->dtype, "|u1");
  EXPECT_EQ(u8->data, (std::vector<uint8_t>{200, 200, 200}));
  for (auto [spec, needle] :
       {std::pair<const char *, const char *>{"2xi8=128", "'128' is not an integer from -128 to 127 (i8)"},
        {"2xu8=256", "'256' is not an integer from 0 to 255 (u8)"},
        {"2xu8=-1", "'-1' is not an integer from 0 to 255 (u8)"},
        {"2xi8=1,2,3", "3 values for 2 elements"}}) {
    auto r = kiln::parseInputSpec(spec);
    ASSERT_FALSE(static_cast<bool>(r)) << spec;
    std::string message = llvm::toString(r.takeError());
    EXPECT_NE(message.find(needle), std::string::npos) << message;
    EXPECT_NE(message.find(spec), std::string::npos) << message;
  }
}

} // namespace
