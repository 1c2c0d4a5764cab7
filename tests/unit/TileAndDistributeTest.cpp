//===- TileAndDistributeTest.cpp - kiln-tile-and-distribute ---------------===//
#include "Pipeline.h"
#include "Transforms/Passes.h"
#include "kiln/Plan.h"
#include "kiln/Recipe.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace mlir;

namespace {

OwningOpRef<ModuleOp> parse(MLIRContext &context, const char *source) {
  DialectRegistry registry;
  kiln::registerKilnDialects(registry);
  context.appendDialectRegistry(registry);
  // Like Compiler.cpp: every registered dialect is loaded. The pass does not
  // declare the dialects it creates (scf.for, affine.min ...; see
  // DeclaresTheDialectsItCreates), so without this it aborts with "Building
  // op `scf.for` but it isn't registered in this MLIRContext".
  context.loadAllAvailableDialects();
  return parseSourceString<ModuleOp>(source, &context);
}

/// form-dispatch-regions, outline-dispatches, tile-and-distribute; error
/// diagnostics are appended to `errors`.
LogicalResult runTile(MLIRContext &context, ModuleOp module,
                      const kiln::DispatchOptions &options,
                      std::string *errors = nullptr) {
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (errors)
      *errors += diag.str() + "\n";
    return success();
  });
  PassManager pm(&context);
  pm.addPass(kiln::createFormDispatchRegionsPass(options));
  pm.addPass(kiln::createOutlineDispatchesPass());
  pm.addPass(kiln::createTileAndDistributePass(options));
  return pm.run(module);
}

std::vector<int64_t> ints(func::FuncOp fn, const char *name) {
  std::vector<int64_t> out;
  auto attr = fn->getAttrOfType<ArrayAttr>(name);
  EXPECT_TRUE(attr) << name;
  if (attr)
    for (Attribute a : attr)
      out.push_back(a.cast<IntegerAttr>().getInt());
  return out;
}

// relu over a 1x64x64x32 f32 activation: one elementwise dispatch.
const char *kRelu = R"mlir(
#nhwc = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @main(%x: tensor<1x64x64x32xf32>) -> tensor<1x64x64x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x64x64x32xf32>
  %r = linalg.generic {indexing_maps = [#nhwc, #nhwc],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x64x64x32xf32>) outs(%e : tensor<1x64x64x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maxf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x64x64x32xf32> loc("RELU#0")
  return %r : tensor<1x64x64x32xf32>
}
)mlir";

TEST(TileAndDistribute, HeuristicTilesRowsToTheWorkgroupBudget) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kRelu);
  ASSERT_TRUE(module);
  kiln::DispatchOptions options; // workgroupBytes = 64 KiB, vectorBytes = 16
  ASSERT_TRUE(succeeded(runTile(context, *module, options)));
  auto fn = module->lookupSymbol<func::FuncOp>("main_dispatch_0");
  ASSERT_TRUE(fn);

  // Innermost first, f32 = 4 bytes:
  //   d3 (C = 32): 32 * 4      =   128 B <= 64 KiB, keep whole
  //   d2 (W = 64): 64 * 128 B  =  8 KiB  <= 64 KiB, keep whole (one row)
  //   d1 (H = 64): 64 * 8 KiB  = 512 KiB >  64 KiB -> tile to
  //                floor(64 KiB / 8 KiB) = 8 rows (not innermost: no SIMD
  //                rounding)
  //   d0 (N = 1): unit, left alone.
  // One tiled loop, 64 / 8 = 8 tiles -> x = 8 workgroups.
  EXPECT_EQ(ints(fn, "kiln.tile_sizes"), (std::vector<int64_t>{0, 8, 0, 0}));
  EXPECT_EQ(ints(fn, "kiln.workgroup_count"), (std::vector<int64_t>{8, 1, 1}));
  EXPECT_EQ(ints(fn, "kiln.loop_ranges"),
            (std::vector<int64_t>{1, 64, 64, 32}));

  // (x, out) + workgroup ids x, y, z.
  ASSERT_EQ(fn.getNumArguments(), 5u);
  for (unsigned i = 2; i < 5; ++i)
    EXPECT_TRUE(fn.getArgument(i).getType().isIndex()) << i;
  // The tile loop became the workgroup id: no loop left, one generic on an
  // 8-row tile.
  int loops = 0;
  fn.walk([&](scf::ForOp) { ++loops; });
  EXPECT_EQ(loops, 0);
  std::vector<linalg::GenericOp> generics;
  fn.walk([&](linalg::GenericOp op) { generics.push_back(op); });
  ASSERT_EQ(generics.size(), 1u);
  EXPECT_EQ(generics[0]->getResult(0).getType().cast<RankedTensorType>().getShape(),
            (ArrayRef<int64_t>{1, 8, 64, 32}));
  // The tile's offset along H depends on workgroup id x (argument 2).
  bool usesX = false;
  fn.walk([&](Operation *op) {
    for (Value v : op->getOperands())
      usesX |= v == fn.getArgument(2);
  });
  EXPECT_TRUE(usesX);

  // @main passes three extra index operands (0) to the dispatch.
  auto main = module->lookupSymbol<func::FuncOp>("main");
  std::vector<func::CallOp> calls;
  main.walk([&](func::CallOp call) { calls.push_back(call); });
  ASSERT_EQ(calls.size(), 1u);
  ASSERT_EQ(calls[0].getNumOperands(), 5u);
  for (unsigned i = 2; i < 5; ++i) {
    auto zero = calls[0].getOperand(i).getDefiningOp<arith::ConstantIndexOp>();
    ASSERT_TRUE(zero) << i;
    EXPECT_EQ(zero.value(), 0);
  }
}

// relu over 4096x24 f32 rows (a 1x1 convolution's output as a GEMM).
const char *kRows = R"mlir(
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%x: tensor<4096x24xf32>) -> tensor<4096x24xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4096x24xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4096x24xf32>) outs(%e : tensor<4096x24xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maxf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4096x24xf32> loc("RELU#0")
  return %r : tensor<4096x24xf32>
}
)mlir";

TEST(TileAndDistribute, MicrocontrollerBudgetGivesSmallDividingTiles) {
  // A Cortex-M's budget (KernelTarget for thumbv7em): 4 KiB of output per
  // workgroup. One row is 24 * 4 = 96 bytes: floor(4096 / 96) = 42 rows.
  //   dividing tiles (one thread): the largest divisor of 4096 <= 42 = 32,
  //     128 workgroups of equal, static extent;
  //   without (threads to balance): ceil(4096 / 42) = 98 tiles, rounded up
  //     to 100 (a multiple of 4), of ceil(4096 / 100) = 41 rows.
  for (bool dividing : {true, false}) {
    MLIRContext context;
    OwningOpRef<ModuleOp> module = parse(context, kRows);
    ASSERT_TRUE(module);
    kiln::DispatchOptions options;
    options.workgroupBytes = kiln::kMicrocontrollerWorkgroupBytes;
    options.dividingTiles = dividing;
    ASSERT_TRUE(succeeded(runTile(context, *module, options)));
    auto fn = module->lookupSymbol<func::FuncOp>("main_dispatch_0");
    ASSERT_TRUE(fn);
    EXPECT_EQ(ints(fn, "kiln.tile_sizes"), (std::vector<int64_t>{dividing ? 32 : 41, 0}));
    EXPECT_EQ(ints(fn, "kiln.workgroup_count"),
              (std::vector<int64_t>{dividing ? 128 : 100, 1, 1}));
  }
  // The application-core budget (64 KiB, at least 8 workgroups of 4 KiB):
  // 393216 / 8 = 48 KiB -> 512 rows, 8 workgroups, as before.
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kRows);
  ASSERT_TRUE(succeeded(runTile(context, *module, kiln::DispatchOptions())));
  EXPECT_EQ(ints(module->lookupSymbol<func::FuncOp>("main_dispatch_0"), "kiln.tile_sizes"),
            (std::vector<int64_t>{512, 0}));
}

// An int8 1x1 convolution as a GEMM (person_detect's CONV_2D #2: 2304
// pixels x 8 -> 16 channels): i8 x i8 products accumulated in an i32 tile,
// then requantized to the i8 output by the fused consumer.
const char *kInt8Gemm = R"mlir(
#xk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%x: tensor<2304x8xi8>) -> tensor<2304x16xi8> {
  %w = arith.constant dense<3> : tensor<8x16xi8>
  %zero = arith.constant 0 : i32
  %shift = arith.constant 6 : i32
  %e = tensor.empty() : tensor<2304x16xi32>
  %f = linalg.fill ins(%zero : i32) outs(%e : tensor<2304x16xi32>) -> tensor<2304x16xi32>
  %acc = linalg.matmul ins(%x, %w : tensor<2304x8xi8>, tensor<8x16xi8>)
      outs(%f : tensor<2304x16xi32>) -> tensor<2304x16xi32> loc("CONV_2D#0")
  %o = tensor.empty() : tensor<2304x16xi8>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%acc : tensor<2304x16xi32>) outs(%o : tensor<2304x16xi8>) {
  ^bb0(%in: i32, %out: i8):
    %s = arith.shrsi %in, %shift : i32
    %t = arith.trunci %s : i32 to i8
    linalg.yield %t : i8
  } -> tensor<2304x16xi8> loc("CONV_2D#0")
  return %r : tensor<2304x16xi8>
}
)mlir";

TEST(TileAndDistribute, BudgetCountsTheTilesI32Accumulators) {
  // The tile keeps 4-byte accumulators per 1-byte output element, so the
  // Cortex-M's 4 KiB budget is 1 KiB of output: one row is 16 bytes,
  // floor(1024 / 16) = 64 rows (divides 2304: 36 workgroups), whose i32
  // accumulators are 64 * 16 * 4 = 4096 bytes. (Counting the i8 output
  // alone gave 256 rows and a 16 KiB accumulator tile on the stack.)
  {
    MLIRContext context;
    OwningOpRef<ModuleOp> module = parse(context, kInt8Gemm);
    ASSERT_TRUE(module);
    kiln::DispatchOptions options;
    options.workgroupBytes = kiln::kMicrocontrollerWorkgroupBytes;
    options.dividingTiles = true;
    options.vectorBytes = 4;
    ASSERT_TRUE(succeeded(runTile(context, *module, options)));
    auto fn = module->lookupSymbol<func::FuncOp>("main_dispatch_0");
    ASSERT_TRUE(fn);
    EXPECT_EQ(ints(fn, "kiln.tile_sizes"), (std::vector<int64_t>{64, 0}));
    EXPECT_EQ(ints(fn, "kiln.workgroup_count"), (std::vector<int64_t>{36, 1, 1}));
    int64_t accumulatorBytes = 0;
    fn.walk([&](linalg::MatmulOp mm) {
      auto t = mm->getResult(0).getType().cast<RankedTensorType>();
      accumulatorBytes = t.getNumElements() * t.getElementTypeBitWidth() / 8;
    });
    EXPECT_EQ(accumulatorBytes, 4096);
  }
  // Application cores: 64 KiB of accumulators is 16 KiB of output, but the
  // parallelism floor (8 workgroups of at least 4 KiB of output) binds
  // first and stays in output bytes: 36864 / 8 = 4608 bytes, 288 rows,
  // 8 workgroups, as before the accumulators were counted.
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kInt8Gemm);
  ASSERT_TRUE(succeeded(runTile(context, *module, kiln::DispatchOptions())));
  auto fn = module->lookupSymbol<func::FuncOp>("main_dispatch_0");
  EXPECT_EQ(ints(fn, "kiln.tile_sizes"), (std::vector<int64_t>{288, 0}));
  EXPECT_EQ(ints(fn, "kiln.workgroup_count"), (std::vector<int64_t>{8, 1, 1}));
}

TEST(TileAndDistribute, ExplicitNonDividingTileSizesAreRecorded) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kRelu);
  ASSERT_TRUE(module);
  kiln::DispatchOptions options;
  options.tileSizes[0] = {0, 5, 0, 0};
  ASSERT_TRUE(succeeded(runTile(context, *module, options)));
  auto fn = module->lookupSymbol<func::FuncOp>("main_dispatch_0");
  ASSERT_TRUE(fn);
  // ceil(64 / 5) = 13 workgroups (12 full tiles of 5 rows + one of 4).
  EXPECT_EQ(ints(fn, "kiln.tile_sizes"), (std::vector<int64_t>{0, 5, 0, 0}));
  EXPECT_EQ(ints(fn, "kiln.workgroup_count"), (std::vector<int64_t>{13, 1, 1}));
  EXPECT_EQ(fn.getNumArguments(), 5u);
  int loops = 0;
  fn.walk([&](scf::ForOp) { ++loops; });
  EXPECT_EQ(loops, 0);
}

// A fully connected layer: loops (m = 4, n = 2, k = 8), k a reduction.
const char *kMatmul = R"mlir(
func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x2xf32>) -> tensor<4x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
  %m = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x2xf32>)
                     outs(%f : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %m : tensor<4x2xf32>
}
)mlir";

TEST(TileAndDistribute, TilingAReductionLoopFails) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kMatmul);
  ASSERT_TRUE(module);
  kiln::DispatchOptions options;
  options.tileSizes[0] = {0, 0, 4};
  std::string errors;
  EXPECT_TRUE(failed(runTile(context, *module, options, &errors)));
  EXPECT_NE(errors.find("loop 2 is a reduction"), std::string::npos) << errors;
}

TEST(TileAndDistribute, ParallelTileSizesOfAMatmulAreAccepted) {
  // Control for the test above: the same dispatch tiled on m only.
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kMatmul);
  ASSERT_TRUE(module);
  kiln::DispatchOptions options;
  options.tileSizes[0] = {2, 0, 0};
  ASSERT_TRUE(succeeded(runTile(context, *module, options)));
  auto fn = module->lookupSymbol<func::FuncOp>("main_dispatch_0");
  ASSERT_TRUE(fn);
  EXPECT_EQ(ints(fn, "kiln.tile_sizes"), (std::vector<int64_t>{2, 0, 0}));
  EXPECT_EQ(ints(fn, "kiln.workgroup_count"), (std::vector<int64_t>{2, 1, 1}));
}

TEST(TileAndDistribute, TileLargerThanTheLoopFails) {
  // m = 4: a tile of 5 is never silently clamped.
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kMatmul);
  ASSERT_TRUE(module);
  kiln::DispatchOptions options;
  options.tileSizes[0] = {5, 0, 0};
  std::string errors;
  EXPECT_TRUE(failed(runTile(context, *module, options, &errors)));
  EXPECT_NE(errors.find("tile size 5 for loop 0 exceeds the loop's range 4"), std::string::npos)
      << errors;
}

TEST(TileAndDistribute, CheckTileSizesIsTheTilersRule) {
  // The matmul above as the plan describes it: loops m=4, n=2 parallel,
  // k=8 reduction. The tiler itself calls kiln::checkTileSizes (see
  // TileLargerThanTheLoopFails and the reduction test above).
  std::vector<int64_t> ranges = {4, 2, 8};
  std::vector<std::string> kinds = {"parallel", "parallel", "reduction"};
  auto check = [&](const std::vector<int64_t> &sizes) {
    llvm::Error err = kiln::checkTileSizes(0, sizes, ranges, kinds);
    return err ? llvm::toString(std::move(err)) : std::string();
  };
  EXPECT_EQ(check({2, 0, 0}), "");
  EXPECT_EQ(check({4, 2, 0}), ""); // whole loops
  EXPECT_NE(check({2, 0}).find("dispatch 0 has 3 loops; 2 tile sizes given"), std::string::npos);
  EXPECT_NE(check({5, 0, 0}).find("exceeds the loop's range 4"), std::string::npos);
  EXPECT_NE(check({-1, 0, 0}).find("negative"), std::string::npos);
  EXPECT_NE(check({0, 0, 4}).find("loop 2 is a reduction"), std::string::npos);
  ranges = {8, 8, 8, 8};
  kinds.assign(4, "parallel");
  EXPECT_NE(check({2, 2, 2, 2}).find("4 loops split; at most 3"), std::string::npos);
  EXPECT_EQ(check({2, 2, 2, 8}), "");
}

TEST(TileAndDistribute, TileSizesForMissingDispatchFail) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kRelu);
  ASSERT_TRUE(module);
  kiln::DispatchOptions options;
  // One dispatch (id 0): id 1 does not exist.
  options.tileSizes[1] = {0, 8, 0, 0};
  std::string errors;
  EXPECT_TRUE(failed(runTile(context, *module, options, &errors)));
  EXPECT_NE(errors.find("dispatch 1"), std::string::npos) << errors;
  EXPECT_NE(errors.find("does not exist"), std::string::npos) << errors;
}

TEST(TileAndDistribute, DeclaresTheDialectsItCreates) {
  // Tiling builds scf.for, affine.min/apply, arith index math and tensor
  // slices; a pass must declare such dialects so that it runs on a context
  // where only the input's dialects are loaded (mlir-opt, these tests).
  DialectRegistry registry;
  kiln::createTileAndDistributePass(kiln::DispatchOptions())
      ->getDependentDialects(registry);
  std::vector<std::string> names;
  for (StringRef name : registry.getDialectNames())
    names.push_back(name.str());
  for (const char *dialect : {"scf", "affine", "arith", "tensor"})
    EXPECT_TRUE(std::find(names.begin(), names.end(), dialect) != names.end())
        << dialect << " is not a dependent dialect of kiln-tile-and-distribute";
}

} // namespace
