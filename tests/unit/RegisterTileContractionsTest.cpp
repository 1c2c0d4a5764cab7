//===- RegisterTileContractionsTest.cpp - kiln-register-tile-contractions ===//
//
// The tile choice against hand-computed register budgets, what it refuses
// (kiln::registerTileFor), the strategy the plan records, and int8 kernels
// run end to end. The IR shape the pass leaves (accumulators carried by
// the reduction loop, one load and one store per accumulator, epilogues,
// padding, no linalg op left) is checked in
// core/test/Transforms/register-tile-contractions.mlir. The numbers
// themselves are checked end to end by the op cases (OpCaseTest: 4-, 8-
// and 16-lane tiles against TFLite).
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
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

using namespace mlir;

namespace {

using kiln::test::parse;

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

/// Ops of type OpT in `module`.
template <typename OpT> int countOps(ModuleOp module) {
  int n = 0;
  module.walk([&](OpT) { ++n; });
  return n;
}

TEST(RegisterTileContractions, DepthwiseWithMultiplierTwoHasNoRegisterTile) {
  // What the pass then does (leaves it to the loops):
  // core/test/Transforms/register-tile-contractions.mlir.
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

TEST(RegisterTileContractions, Int8MatmulGetsTheF32Tile) {
  // The kernel it becomes (i32 accumulators, widened i8 products):
  // core/test/Transforms/register-tile-contractions.mlir.
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
