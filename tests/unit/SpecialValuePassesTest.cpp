//===- SpecialValuePassesTest.cpp - NaN, -inf and globals passes ----------===//
//
// kiln-propagate-nan, kiln-reduction-nan-flags, kiln-max-identity-neg-inf
// and kiln-order-globals.
//
// Each pass's rewrite (what Passes.h promises) and what it leaves alone
// are checked in core/test/Transforms (propagate-nan.mlir,
// reduction-nan-flags.mlir, max-identity-neg-inf.mlir, order-globals.mlir).
// Here, end to end: max, clamp and a max reduction over a row with a NaN
// compiled and run give NaN; a max reduction of -inf gives -inf. Expected
// values are IEEE's, written here.
//
//===----------------------------------------------------------------------===//
#include "TestSupport.h"

#include "kiln/Compiler.h"
#include "kiln/Npy.h"
#include "kiln/Run.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace {

/// Runs `source` (one f32 input x [N]) on `x` and returns the output.
std::vector<float> run(const std::string &source, const std::vector<float> &x) {
  return kiln::test::runMlirOnFloats(source, {int64_t(x.size())}, x);
}

TEST(SpecialValuePasses, CompiledMaxMinClampAndReductionsKeepNaNAndInfinity) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {nan, 1, -inf, 0, 2, -1, inf, 0.5};
  std::vector<float> clamped = run(R"mlir(
    func.func @main(%x: tensor<8xf32> {kiln.name = "x"}) -> (tensor<8xf32> {kiln.name = "y"}) {
      %0 = "tosa.clamp"(%x) {min_int = 0 : i64, max_int = 6 : i64, min_fp = 0.0 : f32, max_fp = 6.0 : f32}
           : (tensor<8xf32>) -> tensor<8xf32>
      return %0 : tensor<8xf32>
    })mlir", x);
  ASSERT_EQ(clamped.size(), 8u);
  EXPECT_TRUE(std::isnan(clamped[0]));
  EXPECT_EQ(clamped[2], 0.0f);
  EXPECT_EQ(clamped[6], 6.0f);
  std::vector<float> reduced = run(R"mlir(
    func.func @main(%x: tensor<8xf32> {kiln.name = "x"}) -> (tensor<1xf32> {kiln.name = "y"}) {
      %0 = "tosa.reduce_max"(%x) {axis = 0 : i64} : (tensor<8xf32>) -> tensor<1xf32>
      return %0 : tensor<1xf32>
    })mlir", x);
  ASSERT_EQ(reduced.size(), 1u);
  EXPECT_TRUE(std::isnan(reduced[0]));
  std::vector<float> lowest = run(R"mlir(
    func.func @main(%x: tensor<8xf32> {kiln.name = "x"}) -> (tensor<1xf32> {kiln.name = "y"}) {
      %0 = "tosa.reduce_max"(%x) {axis = 0 : i64} : (tensor<8xf32>) -> tensor<1xf32>
      return %0 : tensor<1xf32>
    })mlir", std::vector<float>(8, -inf));
  ASSERT_EQ(lowest.size(), 1u);
  EXPECT_EQ(lowest[0], -inf);
  std::vector<float> maxed = run(R"mlir(
    func.func @main(%x: tensor<8xf32> {kiln.name = "x"}) -> (tensor<8xf32> {kiln.name = "y"}) {
      %r = "tosa.reverse"(%x) {axis = 0 : i64} : (tensor<8xf32>) -> tensor<8xf32>
      %0 = "tosa.maximum"(%x, %r) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
      return %0 : tensor<8xf32>
    })mlir", x);
  ASSERT_EQ(maxed.size(), 8u);
  EXPECT_TRUE(std::isnan(maxed[0])); // max(NaN, 0.5)
  EXPECT_TRUE(std::isnan(maxed[7])); // max(0.5, NaN)
  EXPECT_EQ(maxed[1], inf);          // max(1, inf)
  EXPECT_EQ(maxed[2], -1.0f);        // max(-inf, -1)
}

} // namespace
