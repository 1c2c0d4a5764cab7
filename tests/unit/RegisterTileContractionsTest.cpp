//===- RegisterTileContractionsTest.cpp - kiln-register-tile-contractions ===//
//
// The tile choice against hand-computed register budgets, the IR shape the
// pass leaves (accumulators carried by the reduction loop, one load and one
// store per accumulator, no linalg op left), what it refuses, and the
// strategy the plan records. The numbers themselves are checked end to end
// by the op cases (OpCaseTest: 4-, 8- and 16-lane tiles against TFLite).
//
//===----------------------------------------------------------------------===//
#include "PassTestSupport.h"
#include "Transforms/Passes.h"

#include "kiln/Compiler.h"
#include "kiln/Npy.h"
#include "kiln/Plan.h"
#include "kiln/Run.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

using namespace mlir;

namespace {

using kiln::test::parse;
using kiln::test::str;

const kiln::KernelTarget kSSE{4, 16, 2, 2};
const kiln::KernelTarget kAVX2{8, 16, 2, 2};
const kiln::KernelTarget kAVX512{16, 32, 2, 2};
const kiln::KernelTarget kScalar{1, 32, 1, 1};

TEST(RegisterTileContractions, TilesFitTheRegisterFile) {
  // AVX2, 24 columns: 3 vectors; rows = (16 - 3 - 1) / 3 = 4 (12 accumulators).
  kiln::RegisterTile t = kiln::chooseRegisterTile(24, kAVX2);
  EXPECT_EQ(t.rows, 4);
  EXPECT_EQ(t.vectors, 3);
  EXPECT_EQ(t.lanes, 8);
  // AVX2, 64 columns: 2 vectors per block; rows = (16 - 2 - 1) / 2 = 6
  // (MLAS's 6 x 16 FMA3 kernel).
  t = kiln::chooseRegisterTile(64, kAVX2);
  EXPECT_EQ(t.rows, 6);
  EXPECT_EQ(t.vectors, 2);
  // AVX-512, 64 columns: 4 vectors; rows = (32 - 4 - 1) / 4 = 6.
  t = kiln::chooseRegisterTile(64, kAVX512);
  EXPECT_EQ(t.rows, 6);
  EXPECT_EQ(t.vectors, 4);
  EXPECT_EQ(t.lanes, 16);
  // SSE, 5 columns: 2 vectors (4 + 1); rows 6.
  t = kiln::chooseRegisterTile(5, kSSE);
  EXPECT_EQ(t.vectors, 2);
  EXPECT_EQ(t.rows, 6);
  // Scalar FP registers: 4 columns x 6 rows = 24 of 32 registers.
  t = kiln::chooseRegisterTile(100, kScalar);
  EXPECT_EQ(t.lanes, 1);
  EXPECT_EQ(t.vectors, 4);
  EXPECT_EQ(t.rows, 6);
  // One column: one vector, rows capped at 8.
  t = kiln::chooseRegisterTile(1, kAVX512);
  EXPECT_EQ(t.vectors, 1);
  EXPECT_EQ(t.rows, 8);
  // Every choice leaves a weight register per column vector and a
  // broadcast register.
  for (const kiln::KernelTarget &target : {kSSE, kAVX2, kAVX512, kScalar})
    for (int64_t columns : {1, 3, 7, 8, 13, 16, 24, 37, 50, 64, 100, 1000}) {
      kiln::RegisterTile tile = kiln::chooseRegisterTile(columns, target);
      EXPECT_LE(tile.rows * tile.vectors + tile.vectors + 1, target.vectorRegisters)
          << columns << " columns, " << target.vectorLanes << " lanes";
      kiln::RegisterTile dw = kiln::chooseDepthwiseTile(columns, target);
      EXPECT_LE(dw.rows * dw.vectors + 2 * dw.vectors, target.vectorRegisters);
    }
}

const char *kMatmul = R"mlir(
func.func @mm(%a: memref<?x24xf32, strided<[24, 1], offset: ?>>, %b: memref<24x24xf32>,
              %c: memref<?x24xf32>) {
  linalg.matmul ins(%a, %b : memref<?x24xf32, strided<[24, 1], offset: ?>>, memref<24x24xf32>)
                outs(%c : memref<?x24xf32>)
  return
}
)mlir";

LogicalResult runPass(MLIRContext &context, ModuleOp module, const kiln::KernelTarget &target) {
  PassManager pm(&context);
  pm.addNestedPass<func::FuncOp>(kiln::createRegisterTileContractionsPass(target));
  return pm.run(module);
}

/// Parses `source` and runs the pass for `target`: null, with a test
/// failure, if either fails.
OwningOpRef<ModuleOp> parseAndTile(MLIRContext &context, const char *source,
                                   const kiln::KernelTarget &target = kAVX2) {
  OwningOpRef<ModuleOp> module = parse(context, source);
  if (!module) {
    ADD_FAILURE() << "syntax error in the test's IR";
    return nullptr;
  }
  if (failed(runPass(context, *module, target))) {
    ADD_FAILURE() << "the pass failed";
    return nullptr;
  }
  return module;
}

/// Ops of type OpT in `module`.
template <typename OpT> int countOps(ModuleOp module) {
  int n = 0;
  module.walk([&](OpT) { ++n; });
  return n;
}

TEST(RegisterTileContractions, MatmulAccumulatorsAreCarriedByTheReductionLoop) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kMatmul);
  ASSERT_TRUE(module);
  ASSERT_TRUE(succeeded(runPass(context, *module, kAVX2)));
  int matmuls = 0;
  module->walk([&](linalg::LinalgOp) { ++matmuls; });
  EXPECT_EQ(matmuls, 0) << str(*module);
  // Reduction loops: the ones carrying values. The full 4-row blocks carry
  // 4 x 3 = 12 vector<8xf32>; the remainder (0 to 3 rows) runs a 2-row
  // block (6) and a 1-row block (3).
  std::vector<size_t> carried;
  module->walk([&](scf::ForOp loop) {
    if (loop.getNumIterOperands() == 0)
      return;
    carried.push_back(loop.getNumIterOperands());
    for (Value v : loop.getInitArgs())
      EXPECT_EQ(str(v.getType()), "vector<8xf32>");
  });
  std::sort(carried.begin(), carried.end());
  EXPECT_EQ(carried, (std::vector<size_t>{3, 6, 12})) << str(*module);
  // One load and one store per accumulator outside the reduction
  // (12 + 6 + 3), three weight loads inside each reduction loop; no masks
  // (24 = 3 x 8).
  int stores = 0, loads = 0, masked = 0;
  module->walk([&](vector::StoreOp) { ++stores; });
  module->walk([&](vector::LoadOp) { ++loads; });
  module->walk([&](vector::MaskedLoadOp) { ++masked; });
  EXPECT_EQ(stores, 21);
  EXPECT_EQ(loads, 21 + 3 * 3);
  EXPECT_EQ(masked, 0);
}

TEST(RegisterTileContractions, ColumnTailsUseNarrowOrMaskedVectors) {
  // 20 columns on AVX2: 2 full vectors and a 4-lane tail (unmasked); 13
  // columns: 1 full vector and a masked one (5 of 8 lanes).
  for (auto [columns, narrow, maskedExpected] :
       {std::tuple<int, bool, bool>{20, true, false}, {13, false, true}}) {
    MLIRContext context;
    std::string source = std::string(kMatmul);
    for (size_t at; (at = source.find("x24xf32")) != std::string::npos;)
      source.replace(at, 7, "x" + std::to_string(columns) + "xf32");
    for (size_t at; (at = source.find("[24, 1]")) != std::string::npos;)
      source.replace(at, 7, "[" + std::to_string(columns) + ", 1]");
    OwningOpRef<ModuleOp> module = parse(context, source.c_str());
    ASSERT_TRUE(module) << source;
    ASSERT_TRUE(succeeded(runPass(context, *module, kAVX2)));
    bool sawNarrow = false;
    module->walk([&](vector::LoadOp op) { sawNarrow |= op.getVectorType().getNumElements() == 4; });
    int masked = 0;
    module->walk([&](vector::MaskedLoadOp op) {
      ++masked;
      EXPECT_EQ(op.getVectorType().getNumElements(), 8);
    });
    EXPECT_EQ(sawNarrow, narrow) << columns;
    EXPECT_EQ(masked > 0, maskedExpected) << columns;
  }
}

TEST(RegisterTileContractions, DepthwiseWithMultiplierTwoIsLeftToLoops) {
  const char *source = R"mlir(
func.func @dw(%in: memref<1x6x6x3xf32>, %w: memref<3x3x3x2xf32>, %out: memref<1x4x4x3x2xf32>) {
  linalg.depthwise_conv_2d_nhwc_hwcm {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%in, %w : memref<1x6x6x3xf32>, memref<3x3x3x2xf32>) outs(%out : memref<1x4x4x3x2xf32>)
  return
}
)mlir";
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, source);
  ASSERT_TRUE(module);
  linalg::LinalgOp op;
  module->walk([&](linalg::LinalgOp l) { op = l; });
  std::string why;
  EXPECT_FALSE(kiln::registerTileFor(op, kAVX2, &why).has_value());
  EXPECT_EQ(why, "channel multiplier is not 1");
  ASSERT_TRUE(succeeded(runPass(context, *module, kAVX2)));
  int left = 0;
  module->walk([&](linalg::DepthwiseConv2DNhwcHwcmOp) { ++left; });
  EXPECT_EQ(left, 1);
}

TEST(RegisterTileContractions, DepthwiseUnrollsTheWindow) {
  const char *source = R"mlir(
func.func @dw(%in: memref<1x6x10x16xf32>, %w: memref<3x3x16x1xf32>, %out: memref<1x4x8x16x1xf32>) {
  linalg.depthwise_conv_2d_nhwc_hwcm {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%in, %w : memref<1x6x10x16xf32>, memref<3x3x16x1xf32>) outs(%out : memref<1x4x8x16x1xf32>)
  return
}
)mlir";
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parseAndTile(context, source);
  ASSERT_TRUE(module);
  EXPECT_EQ(countOps<linalg::LinalgOp>(*module), 0);
  // 16 channels = 2 vectors; 4-pixel blocks, then 2- and 1-pixel blocks
  // for the remainder; 9 taps unrolled: stores = (4 + 2 + 1) x 2.
  int stores = 0;
  module->walk([&](vector::StoreOp) { ++stores; });
  EXPECT_EQ(stores, 14);
}

// A 1x1 convolution as the dispatch leaves it: the matmul into a zeroed
// stack tile, then bias + residual ADD + RELU6 into the output.
const char *kMatmulEpilogue = R"mlir(
#rows = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>
func.func @mm(%a: memref<16x24xf32>, %b: memref<24x24xf32>, %bias: memref<24xf32>,
              %res: memref<16x24xf32>, %out: memref<16x24xf32>) {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %tile = memref.alloca() {alignment = 64 : i64} : memref<16x24xf32>
  linalg.fill ins(%zero : f32) outs(%tile : memref<16x24xf32>)
  linalg.matmul ins(%a, %b : memref<16x24xf32>, memref<24x24xf32>)
                outs(%tile : memref<16x24xf32>)
  linalg.generic {indexing_maps = [#rows, #bias, #rows, #rows],
                  iterator_types = ["parallel", "parallel"]}
      ins(%res, %bias, %tile : memref<16x24xf32>, memref<24xf32>, memref<16x24xf32>)
      outs(%out : memref<16x24xf32>) {
  ^bb0(%r: f32, %bi: f32, %t: f32, %o: f32):
    %0 = arith.addf %t, %bi : f32
    %1 = arith.addf %r, %0 : f32
    %2 = arith.minf %1, %six : f32
    %3 = arith.maxf %2, %zero : f32
    linalg.yield %3 : f32
  }
  return
}
)mlir";

TEST(RegisterTileContractions, ElementwiseConsumerRunsOnTheAccumulators) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parseAndTile(context, kMatmulEpilogue);
  ASSERT_TRUE(module);
  // Matmul, fill and generic are gone: the tile is never written.
  EXPECT_EQ(countOps<linalg::LinalgOp>(*module), 0) << str(*module);
  auto fn = module->lookupSymbol<func::FuncOp>("mm");
  Value out = fn.getArgument(4), res = fn.getArgument(3), bias = fn.getArgument(2);
  // Row blocks of 4, 2 and 1 rows (the last two for remainders) of 3
  // vectors: 12 + 6 + 3 accumulators, each stored once, into the output,
  // after loading its residual and bias vector.
  int storesToOut = 0, otherStores = 0, residualLoads = 0, biasLoads = 0;
  module->walk([&](vector::StoreOp store) {
    (store.getBase() == out ? storesToOut : otherStores)++;
  });
  module->walk([&](vector::LoadOp load) {
    residualLoads += load.getBase() == res;
    biasLoads += load.getBase() == bias;
  });
  EXPECT_EQ(storesToOut, 21) << str(*module);
  EXPECT_EQ(otherStores, 0);
  EXPECT_EQ(residualLoads, 21);
  EXPECT_EQ(biasLoads, 21);
  // The body ran on vector<8xf32>: two adds, a min and a max per vector.
  int vectorMax = 0;
  module->walk([&](arith::MaxFOp op) {
    vectorMax += op.getType().isa<VectorType>();
  });
  EXPECT_EQ(vectorMax, 21);
  // Accumulators start at the fill value, not loaded from the tile.
  module->walk([&](vector::LoadOp load) {
    EXPECT_FALSE(load.getBase().getDefiningOp<memref::AllocaOp>()) << "the tile is read";
  });
}

TEST(RegisterTileContractions, ConsumerThatIsNotElementwiseKeepsTheTile) {
  // The generic reads the tile transposed: not an epilogue; the tile is
  // stored and the generic left to the loop lowering.
  std::string source = kMatmulEpilogue;
  source.replace(source.find("#rows, #bias, #rows, #rows"), 26,
                 "#rows, #bias, #cols, #rows");
  source.insert(source.find("func.func"), "#cols = affine_map<(d0, d1) -> (d1, d0)>\n");
  for (size_t at = 0; (at = source.find("16x24xf32", at)) != std::string::npos; at += 9)
    source.replace(at, 9, "24x24xf32");
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parseAndTile(context, source.c_str());
  ASSERT_TRUE(module);
  EXPECT_EQ(countOps<linalg::GenericOp>(*module), 1) << str(*module);
  int storesToTile = 0;
  module->walk([&](vector::StoreOp store) {
    storesToTile += bool(store.getBase().getDefiningOp<memref::AllocaOp>());
  });
  EXPECT_GT(storesToTile, 0);
}

TEST(RegisterTileContractions, DepthwiseReadsPaddingAtTheEdges) {
  // SAME padding as the tiled dispatch leaves it: the 4x8 input copied into
  // a zeroed 6x10 stack buffer at (1, 1), the convolution reading the
  // buffer. The kernel reads the input itself (positions clamped, the
  // fill value selected at the edges); fill, copy and buffer are gone.
  const char *source = R"mlir(
func.func @dw(%in: memref<1x4x8x16xf32>, %w: memref<3x3x16x1xf32>, %out: memref<1x4x8x16x1xf32>) {
  %zero = arith.constant 0.0 : f32
  %pad = memref.alloca() {alignment = 64 : i64} : memref<1x6x10x16xf32>
  linalg.fill ins(%zero : f32) outs(%pad : memref<1x6x10x16xf32>)
  %inner = memref.subview %pad[0, 1, 1, 0] [1, 4, 8, 16] [1, 1, 1, 1]
      : memref<1x6x10x16xf32> to memref<1x4x8x16xf32, strided<[960, 160, 16, 1], offset: 176>>
  linalg.copy ins(%in : memref<1x4x8x16xf32>)
              outs(%inner : memref<1x4x8x16xf32, strided<[960, 160, 16, 1], offset: 176>>)
  linalg.depthwise_conv_2d_nhwc_hwcm {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%pad, %w : memref<1x6x10x16xf32>, memref<3x3x16x1xf32>) outs(%out : memref<1x4x8x16x1xf32>)
  return
}
)mlir";
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parseAndTile(context, source);
  ASSERT_TRUE(module);
  EXPECT_EQ(countOps<linalg::LinalgOp>(*module), 0) << str(*module);
  auto fn = module->lookupSymbol<func::FuncOp>("dw");
  Value in = fn.getArgument(0);
  // Every input vector comes from the input, none from the buffer, each
  // chosen against the fill value: 9 taps x 2 vectors x (4 + 2 + 1) pixels.
  int inputLoads = 0, bufferLoads = 0, vectorSelects = 0;
  module->walk([&](vector::LoadOp load) {
    inputLoads += load.getBase() == in;
    bufferLoads += bool(load.getBase().getDefiningOp<memref::AllocaOp>());
  });
  module->walk([&](arith::SelectOp select) {
    vectorSelects += select.getType().isa<VectorType>();
  });
  EXPECT_EQ(inputLoads, 9 * 2 * 7) << str(*module);
  EXPECT_EQ(bufferLoads, 0);
  EXPECT_EQ(vectorSelects, inputLoads);
}

TEST(RegisterTileContractions, StrategyRecordsTileLayoutAndThroughput) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kMatmul);
  ASSERT_TRUE(module);
  func::FuncOp fn = *module->getOps<func::FuncOp>().begin();
  kiln::KernelStrategy s = kiln::kernelStrategyOf(fn, kAVX2);
  EXPECT_EQ(s.kind, "gemm");
  EXPECT_EQ(s.tileRows, 4);
  EXPECT_EQ(s.tileVectors, 3);
  EXPECT_EQ(s.lanes, 8);
  EXPECT_EQ(s.weightLayout, "24x24 KxN (N contiguous)");
  // 12 FMAs and 7 loads per step: max(12/2, 7/2) = 6 cycles for
  // 2 x 8 x 12 = 192 FLOP.
  EXPECT_DOUBLE_EQ(s.flopsPerCycle, 32.0);
  EXPECT_EQ(kiln::describeKernel(s), "gemm 4x3x8, 24x24 KxN (N contiguous), 32 FLOP/cycle");
  // SSE2 has no FMA: 6 x 2 x 4 tile, 12 multiply-adds at 1 per cycle
  // (a multiply and an add each, 2 pipes) = 12 cycles for 2 x 8 x 6 FLOP.
  kiln::KernelTarget sse2 = kSSE;
  sse2.fma = false;
  kiln::KernelStrategy noFma = kiln::kernelStrategyOf(fn, sse2);
  EXPECT_EQ(noFma.tileRows, 6);
  EXPECT_EQ(noFma.tileVectors, 2);
  EXPECT_DOUBLE_EQ(noFma.flopsPerCycle, 8.0);
  // A dispatch without a contraction: loops.
  const char *copy = R"mlir(
func.func @c(%a: memref<4xf32>, %b: memref<4xf32>) {
  linalg.copy ins(%a : memref<4xf32>) outs(%b : memref<4xf32>)
  return
}
)mlir";
  OwningOpRef<ModuleOp> other = parse(context, copy);
  ASSERT_TRUE(other);
  kiln::KernelStrategy loops = kiln::kernelStrategyOf(*other->getOps<func::FuncOp>().begin(), kAVX2);
  EXPECT_EQ(loops.kind, "loops");
  EXPECT_EQ(kiln::describeKernel(loops), "loops");
}

//===----------------------------------------------------------------------===//
// int8: i8 x i8 products accumulated in i32 vectors
//===----------------------------------------------------------------------===//

/// kMatmul with i8 operands and an i32 accumulator.
std::string int8Matmul() {
  std::string source = kMatmul;
  using Edit = std::pair<std::string, std::string>;
  for (auto [from, to] : {Edit{"?x24xf32, strided", "?x24xi8, strided"},
                          Edit{"memref<24x24xf32>", "memref<24x24xi8>"},
                          Edit{"%c: memref<?x24xf32>", "%c: memref<?x24xi32>"},
                          Edit{"outs(%c : memref<?x24xf32>)", "outs(%c : memref<?x24xi32>)"}})
    for (size_t at; (at = source.find(from)) != std::string::npos;)
      source.replace(at, from.size(), to);
  return source;
}

/// Number of arith.muli on vectors whose operands are both arith.extsi of
/// i8 vectors to `lanes` x i32, and of those that are not.
std::pair<int, int> widenedProducts(ModuleOp module, int64_t lanes) {
  int widened = 0, other = 0;
  auto isWidenedI8 = [&](Value v) {
    auto ext = v.getDefiningOp<arith::ExtSIOp>();
    if (!ext)
      return false;
    auto from = ext.getIn().getType().dyn_cast<VectorType>();
    auto to = ext.getType().dyn_cast<VectorType>();
    return from && to && from.getElementType().isInteger(8) &&
           to.getElementType().isInteger(32) && to.getNumElements() == lanes;
  };
  module.walk([&](arith::MulIOp mul) {
    if (!mul.getType().isa<VectorType>())
      return;
    (isWidenedI8(mul.getLhs()) && isWidenedI8(mul.getRhs()) ? widened : other)++;
  });
  return {widened, other};
}

TEST(RegisterTileContractions, Int8MatmulAccumulatesInI32Vectors) {
  MLIRContext context;
  std::string source = int8Matmul();
  OwningOpRef<ModuleOp> module = parse(context, source.c_str());
  ASSERT_TRUE(module) << source;
  linalg::LinalgOp op;
  module->walk([&](linalg::LinalgOp l) { op = l; });
  std::string why;
  std::optional<kiln::RegisterTile> tile = kiln::registerTileFor(op, kAVX2, &why);
  ASSERT_TRUE(tile.has_value()) << why;
  // The f32 tile for 24 columns: 4 rows of 3 x 8 i32 lanes.
  EXPECT_EQ(tile->rows, 4);
  EXPECT_EQ(tile->vectors, 3);
  EXPECT_EQ(tile->lanes, 8);
  ASSERT_TRUE(succeeded(runPass(context, *module, kAVX2)));
  EXPECT_EQ(countOps<linalg::LinalgOp>(*module), 0) << str(*module);
  // Accumulators: 12 + 6 + 3 vector<8xi32> carried by the reduction loops.
  std::vector<size_t> carried;
  module->walk([&](scf::ForOp loop) {
    if (loop.getNumIterOperands() == 0)
      return;
    carried.push_back(loop.getNumIterOperands());
    for (Value v : loop.getInitArgs())
      EXPECT_EQ(str(v.getType()), "vector<8xi32>");
  });
  std::sort(carried.begin(), carried.end());
  EXPECT_EQ(carried, (std::vector<size_t>{3, 6, 12})) << str(*module);
  // One multiply-add per accumulator and step: muli of two sign-extended
  // i8 vectors, then addi; no float arithmetic.
  auto [widened, other] = widenedProducts(*module, 8);
  EXPECT_EQ(widened, 21) << str(*module);
  EXPECT_EQ(other, 0);
  int vectorAdds = 0, floatOps = 0;
  module->walk([&](arith::AddIOp add) {
    if (add.getType().isa<VectorType>() && add.getLhs().getDefiningOp<arith::MulIOp>())
      ++vectorAdds;
  });
  module->walk([&](Operation *o) { floatOps += isa<arith::MulFOp, arith::AddFOp>(o); });
  EXPECT_EQ(vectorAdds, 21);
  EXPECT_EQ(floatOps, 0);
  // Weights are loaded as i8 vectors (3 per step and block), accumulators
  // as i32 vectors (21).
  int i8Loads = 0, i32Loads = 0;
  module->walk([&](vector::LoadOp load) {
    Type e = load.getVectorType().getElementType();
    i8Loads += e.isInteger(8);
    i32Loads += e.isInteger(32);
  });
  EXPECT_EQ(i8Loads, 3 * 3);
  EXPECT_EQ(i32Loads, 21);
}

TEST(RegisterTileContractions, Int8NeedsI8OperandsAndAnI32Accumulator) {
  // i8 x i8 -> i8 (no wide accumulator), f32 activations with i8 weights
  // and i8 activations with f32 weights: all left to the loop path.
  const char *cases[][3] = {{"i8", "i8", "i8"},  {"f32", "i8", "f32"}, {"i8", "f32", "i32"},
                            {"i8", "i8", "f32"}, {"i32", "i8", "i32"}, {"i8", "i8", "i64"}};
  for (auto &c : cases) {
    std::string a = c[0], b = c[1], out = c[2];
    SCOPED_TRACE(a + " x " + b + " -> " + out);
    std::string source =
        "func.func @mm(%a: memref<4x24x" + a + ">, %b: memref<24x24x" + b + ">, %c: memref<4x24x" +
        out + ">) {\n  linalg.matmul ins(%a, %b : memref<4x24x" + a + ">, memref<24x24x" + b +
        ">) outs(%c : memref<4x24x" + out + ">)\n  return\n}\n";
    MLIRContext context;
    OwningOpRef<ModuleOp> module = parse(context, source.c_str());
    ASSERT_TRUE(module) << source;
    linalg::LinalgOp op;
    module->walk([&](linalg::LinalgOp l) { op = l; });
    std::string why;
    EXPECT_FALSE(kiln::registerTileFor(op, kAVX2, &why).has_value());
    EXPECT_EQ(why, "needs f32 operands (or i8 operands with an i32 accumulator) whose "
                   "innermost dimension has unit stride");
    ASSERT_TRUE(succeeded(runPass(context, *module, kAVX2)));
    EXPECT_EQ(countOps<linalg::MatmulOp>(*module), 1);
  }
}

TEST(RegisterTileContractions, Int8DepthwiseWidensBothOperands) {
  const char *source = R"mlir(
func.func @dw(%in: memref<1x6x10x16xi8>, %w: memref<3x3x16x1xi8>, %out: memref<1x4x8x16x1xi32>) {
  linalg.depthwise_conv_2d_nhwc_hwcm {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%in, %w : memref<1x6x10x16xi8>, memref<3x3x16x1xi8>) outs(%out : memref<1x4x8x16x1xi32>)
  return
}
)mlir";
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parseAndTile(context, source);
  ASSERT_TRUE(module);
  EXPECT_EQ(countOps<linalg::LinalgOp>(*module), 0) << str(*module);
  // As the f32 kernel: (4 + 2 + 1) pixels x 2 channel vectors, 9 taps
  // unrolled; each product of two sign-extended i8 vectors, stored as i32.
  auto [widened, other] = widenedProducts(*module, 8);
  EXPECT_EQ(widened, 9 * 2 * 7) << str(*module);
  EXPECT_EQ(other, 0);
  int stores = 0;
  module->walk([&](vector::StoreOp store) {
    ++stores;
    EXPECT_EQ(str(store.getVectorType()), "vector<8xi32>");
  });
  EXPECT_EQ(stores, 14);
}

/// Deterministic int8 values over the whole range (-128 and 127 included):
/// element i is ((i * step + offset) mod 256) - 128.
std::vector<int> int8Values(int count, int step, int offset) {
  std::vector<int> v(count);
  for (int i = 0; i < count; ++i)
    v[i] = (i * step + offset) % 256 - 128;
  return v;
}

std::string joinInts(const std::vector<int> &values) {
  std::string s;
  for (size_t i = 0; i < values.size(); ++i)
    s += (i ? ", " : "") + std::to_string(values[i]);
  return s;
}

/// The CPUs the end-to-end cases compile for: generic x86-64 (SSE, 4
/// lanes) and, where the host runs it, x86-64-v3 (AVX2, 8 lanes).
std::vector<std::string> hostCpus() {
  std::vector<std::string> cpus = {"generic"};
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    cpus.push_back("x86-64-v3");
#endif
  return cpus;
}

/// Compiles the TOSA model `text` for `cpu`, checks its one dispatch has
/// kernel `kind`, runs it on the int8 input `x` and returns its one i32
/// output (empty, with a test failure, on any error).
std::vector<int32_t> runInt8Model(const std::string &text, const std::string &cpu,
                                  const std::string &kind, std::vector<int64_t> shape,
                                  const std::vector<int> &x) {
  // One file per test: CTest runs the cases of this file in parallel, and
  // a shared name let one case compile the other's model.
  std::string path = ::testing::TempDir() + "kiln_register_tile_" +
                     ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" + cpu +
                     ".mlir";
  std::ofstream(path) << text;
  kiln::CompileOptions options;
  options.target.cpu = cpu;
  auto compiled = kiln::compile(path, options);
  if (!compiled) {
    ADD_FAILURE() << llvm::toString(compiled.takeError());
    return {};
  }
  std::vector<std::string> kinds;
  for (const kiln::Dispatch &d : compiled->plan->dispatches)
    kinds.push_back(d.kernel.kind);
  EXPECT_EQ(kinds, std::vector<std::string>{kind});
  kiln::NpyArray input;
  input.dtype = "|i1";
  input.shape = std::move(shape);
  for (int v : x)
    input.data.push_back(static_cast<uint8_t>(static_cast<int8_t>(v)));
  auto result = kiln::runArtifact(compiled->artifact, {input});
  if (!result) {
    ADD_FAILURE() << llvm::toString(result.takeError());
    return {};
  }
  if (result->outputValues.size() != 1 || result->outputValues[0].dtype != "<i4") {
    ADD_FAILURE() << "expected one i32 output";
    return {};
  }
  const kiln::NpyArray &out = result->outputValues[0];
  std::vector<int32_t> values(out.numElements());
  std::memcpy(values.data(), out.data.data(), values.size() * sizeof(int32_t));
  return values;
}

TEST(RegisterTileContractions, Int8FullyConnectedRunsEndToEnd) {
  // FULLY_CONNECTED 7x5 int8 -> 15 i32 columns (zero points 0): 15 columns
  // are 8 + 4 + 3 at 4 lanes and 8 + 7 at 8 lanes, so the last vector is
  // masked on both; 7 rows need remainder row tiles. Row 0 of x is all
  // -128, row 1 all 127.
  const int M = 7, K = 5, N = 15;
  std::vector<int> x = int8Values(M * K, 37, 11), w = int8Values(N * K, 53, 7);
  for (int k = 0; k < K; ++k) {
    x[k] = -128;
    x[K + k] = 127;
  }
  std::vector<int> bias(N);
  for (int n = 0; n < N; ++n)
    bias[n] = 1000 * n - 7000;
  std::string model =
      "func.func @main(%x: tensor<7x5xi8> {kiln.name = \"x\"}) -> (tensor<7x15xi32> {kiln.name = \"y\"}) {\n"
      "  %w = \"tosa.const\"() {value = dense<[" + joinInts(w) + "]> : tensor<75xi8>} : () -> tensor<75xi8>\n"
      "  %w2 = \"tosa.reshape\"(%w) {new_shape = array<i64: 15, 5>} : (tensor<75xi8>) -> tensor<15x5xi8>\n"
      "  %b = \"tosa.const\"() {value = dense<[" + joinInts(bias) + "]> : tensor<15xi32>} : () -> tensor<15xi32>\n"
      "  %y = \"tosa.fully_connected\"(%x, %w2, %b) {quantization_info = #tosa.conv_quant<input_zp = 0, weight_zp = 0>}"
      " : (tensor<7x5xi8>, tensor<15x5xi8>, tensor<15xi32>) -> tensor<7x15xi32>\n"
      "  return %y : tensor<7x15xi32>\n}\n";
  // Hand-computed: w[0, :] = -121, -68, -15, 38, 91 (sum -75), so
  // y[0, 0] = -128 x -75 - 7000 = 2600 and y[1, 0] = 127 x -75 - 7000 = -16525.
  for (const std::string &cpu : hostCpus()) {
    SCOPED_TRACE(cpu);
    std::vector<int32_t> got = runInt8Model(model, cpu, "gemm", {M, K}, x);
    ASSERT_EQ(got.size(), size_t(M * N));
    EXPECT_EQ(got[0], 2600);
    EXPECT_EQ(got[N], -16525);
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) {
        int64_t want = bias[n];
        for (int k = 0; k < K; ++k)
          want += int64_t(x[m * K + k]) * w[n * K + k];
        EXPECT_EQ(got[m * N + n], want) << "at " << m << ", " << n;
      }
  }
}

TEST(RegisterTileContractions, Int8DepthwiseRunsEndToEnd) {
  // DEPTHWISE_CONV_2D 3x3, SAME padding (zero points 0, so the padding is
  // 0), 1x5x6x15 int8 -> i32: 15 channels end in a masked vector at 4 and
  // 8 lanes; 30 pixels need remainder pixel blocks.
  const int H = 5, W = 6, C = 15;
  std::vector<int> x = int8Values(H * W * C, 37, 11), w = int8Values(3 * 3 * C, 53, 7);
  std::vector<int> bias(C);
  for (int c = 0; c < C; ++c)
    bias[c] = 300 * c - 2000;
  std::string model =
      "func.func @main(%x: tensor<1x5x6x15xi8> {kiln.name = \"x\"}) -> (tensor<1x5x6x15xi32> {kiln.name = \"y\"}) {\n"
      "  %w = \"tosa.const\"() {value = dense<[" + joinInts(w) + "]> : tensor<135xi8>} : () -> tensor<135xi8>\n"
      "  %w4 = \"tosa.reshape\"(%w) {new_shape = array<i64: 3, 3, 15, 1>} : (tensor<135xi8>) -> tensor<3x3x15x1xi8>\n"
      "  %b = \"tosa.const\"() {value = dense<[" + joinInts(bias) + "]> : tensor<15xi32>} : () -> tensor<15xi32>\n"
      "  %y = \"tosa.depthwise_conv2d\"(%x, %w4, %b) {pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>,"
      " dilation = array<i64: 1, 1>, quantization_info = #tosa.conv_quant<input_zp = 0, weight_zp = 0>}"
      " : (tensor<1x5x6x15xi8>, tensor<3x3x15x1xi8>, tensor<15xi32>) -> tensor<1x5x6x15xi32>\n"
      "  return %y : tensor<1x5x6x15xi32>\n}\n";
  for (const std::string &cpu : hostCpus()) {
    SCOPED_TRACE(cpu);
    std::vector<int32_t> got = runInt8Model(model, cpu, "depthwise", {1, H, W, C}, x);
    ASSERT_EQ(got.size(), size_t(H * W * C));
    for (int oh = 0; oh < H; ++oh)
      for (int ow = 0; ow < W; ++ow)
        for (int c = 0; c < C; ++c) {
          int64_t want = bias[c];
          for (int kh = 0; kh < 3; ++kh)
            for (int kw = 0; kw < 3; ++kw) {
              int ih = oh + kh - 1, iw = ow + kw - 1;
              if (ih >= 0 && ih < H && iw >= 0 && iw < W)
                want += int64_t(x[(ih * W + iw) * C + c]) * w[(kh * 3 + kw) * C + c];
            }
          EXPECT_EQ(got[(oh * W + ow) * C + c], want) << "at " << oh << ", " << ow << ", " << c;
        }
  }
}

} // namespace
