//===- ApproximateMathTest.cpp - kiln-approximate-math ---------------------===//
#include "PassTestSupport.h"
#include "Pipeline.h"
#include "Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {

using kiln::test::parse;
using kiln::test::str;

LogicalResult runApproximateMath(MLIRContext &context, ModuleOp module,
                                 const kiln::KernelTarget &target = {}) {
  PassManager pm(&context);
  pm.addNestedPass<func::FuncOp>(kiln::createApproximateMathPass(target));
  return pm.run(module);
}

// The math a softmax, a LOGISTIC, a TANH and a LOG leave in a kernel,
// scalar (the loop path) and on vectors (a register-tiled epilogue).
const char *kMath = R"mlir(
func.func @math(%x: f32, %v: vector<8xf32>) -> (f32, f32, f32, vector<8xf32>, vector<8xf32>) {
  %e = math.exp %x : f32
  %t = math.tanh %x : f32
  %l = math.log %x : f32
  %ev = math.exp %v : vector<8xf32>
  %tv = math.tanh %v : vector<8xf32>
  return %e, %t, %l, %ev, %tv : f32, f32, f32, vector<8xf32>, vector<8xf32>
}
)mlir";

TEST(ApproximateMath, ExpAndTanhBecomeArithmeticLogStaysLibm) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kMath);
  ASSERT_TRUE(module);
  ASSERT_TRUE(succeeded(runApproximateMath(context, *module)));

  int exps = 0, tanhs = 0, logs = 0, fmas = 0, mulfs = 0, bitcasts = 0;
  module->walk([&](Operation *op) {
    exps += isa<math::ExpOp>(op);
    tanhs += isa<math::TanhOp>(op);
    logs += isa<math::LogOp>(op);
    fmas += isa<math::FmaOp>(op);
    mulfs += isa<arith::MulFOp>(op);
    bitcasts += isa<arith::BitcastOp>(op);
  });
  EXPECT_EQ(exps, 0) << str(*module);
  EXPECT_EQ(tanhs, 0) << str(*module);
  // log's approximation misreads denormal inputs: left to libm.
  EXPECT_EQ(logs, 1) << str(*module);
  // Polynomials as multiplies and adds (LLVM contracts them to FMA where
  // the CPU has it), never math.fma, which becomes a libm fmaf call
  // without FMA hardware.
  EXPECT_EQ(fmas, 0) << str(*module);
  EXPECT_GT(mulfs, 0);
  // exp scales by 2^k through the exponent bits.
  EXPECT_GT(bitcasts, 0);
  // The vector forms stay vectors.
  auto fn = module->lookupSymbol<func::FuncOp>("math");
  auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  EXPECT_TRUE(ret.getOperand(3).getType().isa<VectorType>());
  EXPECT_FALSE(ret.getOperand(3).getDefiningOp<math::ExpOp>());
}

// exp(x - max) of a softmax over 2 and over 24 channels: loops (r, c),
// c innermost.
const char *kSoftmaxExp = R"mlir(
#x = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @two(%x: memref<896x2xf32>, %m: memref<896xf32>, %y: memref<896x2xf32>) {
  linalg.generic {indexing_maps = [#x, #row, #x], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : memref<896x2xf32>, memref<896xf32>) outs(%y : memref<896x2xf32>) {
  ^bb0(%in: f32, %max: f32, %out: f32):
    %d = arith.subf %in, %max : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  }
  return
}
func.func @wide(%x: memref<64x24xf32>, %m: memref<64xf32>, %y: memref<64x24xf32>) {
  linalg.generic {indexing_maps = [#x, #row, #x], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : memref<64x24xf32>, memref<64xf32>) outs(%y : memref<64x24xf32>) {
  ^bb0(%in: f32, %max: f32, %out: f32):
    %d = arith.subf %in, %max : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  }
  return
}
)mlir";

TEST(ApproximateMath, ScalarLoopsWithoutFmaKeepLibm) {
  for (bool fma : {false, true}) {
    SCOPED_TRACE(fma ? "FMA" : "no FMA");
    MLIRContext context;
    OwningOpRef<ModuleOp> module = parse(context, kSoftmaxExp);
    ASSERT_TRUE(module);
    kiln::KernelTarget target;
    target.vectorLanes = 4;
    target.fma = fma;
    ASSERT_TRUE(succeeded(runApproximateMath(context, *module, target)));
    auto exps = [&](const char *name) {
      int n = 0;
      module->lookupSymbol<func::FuncOp>(name).walk([&](math::ExpOp) { ++n; });
      return n;
    };
    // 2 channels stay a scalar loop: without FMA the approximation is
    // slower than expf there. 24 channels vectorize: approximated.
    EXPECT_EQ(exps("two"), fma ? 0 : 1);
    EXPECT_EQ(exps("wide"), 0);
  }
}

} // namespace
