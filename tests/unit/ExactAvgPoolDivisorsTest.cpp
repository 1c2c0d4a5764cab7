//===- ExactAvgPoolDivisorsTest.cpp - kiln-exact-avg-pool-divisors --------===//
//
// On IR: a f32 avg_pool2d MLIR 16 divides wrongly (stride 2, pad 2)
// becomes pad + unpadded avg_pool2d + mul by KH*KW/count (the counts
// checked against a direct count here); pools it divides right are left
// alone. End to end: the 1-D pool (kernel 3,
// stride 2, pads 1 and 1 + ceil overhang on 8 elements: divisors 2 3 3 3 1)
// and a 5x5 stride-2 pool with pads 2 (the SAME padding of TFLite on 9x9)
// compiled and run, against averages computed here.
//
//===----------------------------------------------------------------------===//
#include "PassTestSupport.h"
#include "TestSupport.h"
#include "Transforms/Passes.h"

#include "kiln/Compiler.h"
#include "kiln/Npy.h"
#include "kiln/Run.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

using namespace mlir;

namespace {

std::string poolModule(int64_t h, int64_t w, int64_t kh, int64_t kw, int64_t sh, int64_t sw,
                       const std::string &pad, int64_t oh, int64_t ow) {
  auto t = [](int64_t a, int64_t b) {
    return "tensor<1x" + std::to_string(a) + "x" + std::to_string(b) + "x1xf32>";
  };
  return "func.func @main(%x: " + t(h, w) + " {kiln.name = \"x\"}) -> (" + t(oh, ow) +
         " {kiln.name = \"y\"}) {\n  %y = \"tosa.avg_pool2d\"(%x) {kernel = array<i64: " +
         std::to_string(kh) + ", " + std::to_string(kw) + ">, stride = array<i64: " +
         std::to_string(sh) + ", " + std::to_string(sw) + ">, pad = array<i64: " + pad +
         ">} : (" + t(h, w) + ") -> " + t(oh, ow) + "\n  return %y : " + t(oh, ow) + "\n}\n";
}

TEST(ExactAvgPoolDivisors, PaddedPoolGetsTheExactFactor) {
  MLIRContext context;
  auto module = kiln::test::parse(context, poolModule(1, 8, 1, 3, 1, 2, "0, 0, 1, 2", 1, 5).c_str());
  ASSERT_TRUE(module);
  PassManager pm(&context);
  pm.addNestedPass<func::FuncOp>(kiln::createExactAvgPoolDivisorsPass());
  ASSERT_TRUE(succeeded(pm.run(*module)));
  auto fn = module->lookupSymbol<func::FuncOp>("main");
  SmallVector<tosa::AvgPool2dOp> pools;
  fn.walk([&](tosa::AvgPool2dOp op) { pools.push_back(op); });
  ASSERT_EQ(pools.size(), 1u) << kiln::test::str(*module);
  EXPECT_EQ(pools[0].getPad(), llvm::ArrayRef<int64_t>({0, 0, 0, 0}));
  ASSERT_TRUE(pools[0].getInput().getDefiningOp<tosa::PadOp>()) << kiln::test::str(*module);
  tosa::MulOp mul;
  fn.walk([&](tosa::MulOp op) { mul = op; });
  ASSERT_TRUE(mul) << kiln::test::str(*module);
  DenseElementsAttr factor;
  ASSERT_TRUE(matchPattern(mul.getInput2(), m_Constant(&factor)));
  // Window o covers [2o - 1, 2o + 1] of [0, 8): counts 2 3 3 3 1.
  const double counts[5] = {2, 3, 3, 3, 1};
  int i = 0;
  for (float f : factor.getValues<float>())
    EXPECT_FLOAT_EQ(f, static_cast<float>(3.0 / counts[i++])) << i;
  EXPECT_EQ(i, 5);
}

TEST(ExactAvgPoolDivisors, PoolsTheLoweringDividesRightAreLeftAlone) {
  // Unpadded; stride 1 with pads of 1 and 2; stride 2 with pads of 1.
  for (std::string source : {poolModule(4, 4, 2, 2, 2, 2, "0, 0, 0, 0", 2, 2),
                             poolModule(6, 6, 3, 3, 1, 1, "1, 2, 1, 2", 7, 7),
                             poolModule(7, 7, 3, 3, 2, 2, "1, 1, 1, 1", 4, 4)}) {
    MLIRContext context;
    auto module = kiln::test::parse(context, source.c_str());
    ASSERT_TRUE(module) << source;
    std::string before = kiln::test::str(*module);
    PassManager pm(&context);
    pm.addNestedPass<func::FuncOp>(kiln::createExactAvgPoolDivisorsPass());
    ASSERT_TRUE(succeeded(pm.run(*module)));
    EXPECT_EQ(kiln::test::str(*module), before);
  }
}

/// Compiles `source`, runs it on x[i] = i (as floats) and returns y.
std::vector<float> run(const std::string &source, int64_t h, int64_t w) {
  std::vector<float> x(h * w);
  for (int64_t i = 0; i < h * w; ++i)
    x[i] = static_cast<float>(i);
  return kiln::test::runMlirOnFloats(source, {1, h, w, 1}, x);
}

/// The average of the window elements inside the input, computed directly.
double expected(int64_t h, int64_t w, int64_t kh, int64_t kw, int64_t sh, int64_t sw,
                int64_t top, int64_t left, int64_t oy, int64_t ox) {
  double sum = 0;
  int count = 0;
  for (int64_t y = oy * sh - top; y < oy * sh - top + kh; ++y)
    for (int64_t x = ox * sw - left; x < ox * sw - left + kw; ++x)
      if (y >= 0 && y < h && x >= 0 && x < w) {
        sum += static_cast<double>(y * w + x);
        ++count;
      }
  return sum / count;
}

TEST(ExactAvgPoolDivisors, CompiledPoolsDivideByTheElementsInside) {
  std::vector<float> y = run(poolModule(1, 8, 1, 3, 1, 2, "0, 0, 1, 2", 1, 5), 1, 8);
  ASSERT_EQ(y.size(), 5u);
  for (int64_t o = 0; o < 5; ++o)
    EXPECT_NEAR(y[o], expected(1, 8, 1, 3, 1, 2, 0, 1, 0, o), 1e-5) << o;
  // 5x5 stride 2 on 9x9 with pads 2 (TFLite SAME): 5x5 outputs.
  y = run(poolModule(9, 9, 5, 5, 2, 2, "2, 2, 2, 2", 5, 5), 9, 9);
  ASSERT_EQ(y.size(), 25u);
  for (int64_t oy = 0; oy < 5; ++oy)
    for (int64_t ox = 0; ox < 5; ++ox)
      EXPECT_NEAR(y[oy * 5 + ox], expected(9, 9, 5, 5, 2, 2, 2, 2, oy, ox), 1e-4)
          << oy << "," << ox;
}

} // namespace
