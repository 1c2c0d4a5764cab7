//===- PackWeightsTest.cpp - kiln-pack-weights ----------------------------===//
//
// The panel layout against hand-computed positions, the packed constant's
// values, the argument types and the marked cast the pass leaves, and the
// constants it must leave alone. The kernels reading packed weights are
// checked numerically in tests/model/PackedWeightsTest.cpp.
//
//===----------------------------------------------------------------------===//
#include "PassTestSupport.h"
#include "Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <functional>
#include <set>

using namespace mlir;

namespace {

using kiln::test::parse;
using kiln::test::str;

const kiln::KernelTarget kSSE{4, 16, 2, 2};

TEST(PackWeights, PanelOffsetsByHand) {
  // K = 2, N = 6, panels of 4: panel 0 holds columns 0-3 (2 rows of 4),
  // then the 2-wide tail panel holds columns 4-5.
  kiln::PanelLayout l{2, 6, 4};
  EXPECT_EQ(kiln::panelOffsetOf(l, 0, 0), 0);
  EXPECT_EQ(kiln::panelOffsetOf(l, 0, 3), 3);
  EXPECT_EQ(kiln::panelOffsetOf(l, 1, 0), 4);
  EXPECT_EQ(kiln::panelOffsetOf(l, 1, 3), 7);
  EXPECT_EQ(kiln::panelOffsetOf(l, 0, 4), 8);
  EXPECT_EQ(kiln::panelOffsetOf(l, 0, 5), 9);
  EXPECT_EQ(kiln::panelOffsetOf(l, 1, 4), 10);
  EXPECT_EQ(kiln::panelOffsetOf(l, 1, 5), 11);
  // Every layout is a permutation of [0, K x N): no padding, no overlap.
  for (auto [k, n, p] : {std::tuple{3, 10, 4}, std::tuple{5, 64, 16}, std::tuple{1, 7, 8},
                         std::tuple{9, 100, 64}}) {
    std::set<int64_t> seen;
    for (int64_t r = 0; r < k; ++r)
      for (int64_t c = 0; c < n; ++c) {
        int64_t at = kiln::panelOffsetOf({k, n, p}, r, c);
        EXPECT_GE(at, 0);
        EXPECT_LT(at, k * n);
        seen.insert(at);
      }
    EXPECT_EQ(int64_t(seen.size()), k * n);
  }
}

// @main as bufferization leaves it: input %in, constant %w (entry c0, a
// 2 x 20 K x N matrix holding 0..39 row-major), output %out; the dispatch
// reads %w only as the matmul's weights. SSE (4 lanes): 20 columns get
// column blocks of 2 vectors = 8 columns, so two 8-wide panels and a
// 4-wide tail panel.
const char *kModule = R"mlir(
module attributes {kiln.constants = [{name = "c0", value = dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0], [20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0]]> : tensor<2x20xf32>}]} {
  func.func private @main_dispatch_0(%a: memref<3x2xf32>, %w: memref<2x20xf32>, %c: memref<3x20xf32>,
                                     %x: index, %y: index, %z: index) attributes {kiln.dispatch_id = 0 : i64} {
    linalg.matmul ins(%a, %w : memref<3x2xf32>, memref<2x20xf32>) outs(%c : memref<3x20xf32>)
    return
  }
  func.func @main(%in: memref<3x2xf32>, %w: memref<2x20xf32>, %out: memref<3x20xf32>) {
    %c0 = arith.constant 0 : index
    call @main_dispatch_0(%in, %w, %out, %c0, %c0, %c0) : (memref<3x2xf32>, memref<2x20xf32>, memref<3x20xf32>, index, index, index) -> ()
    return
  }
}
)mlir";

void runPass(ModuleOp module) {
  PassManager pm(module.getContext());
  pm.addPass(kiln::createPackWeightsPass(kSSE, /*numInputs=*/1));
  ASSERT_TRUE(succeeded(pm.run(module)));
}

TEST(PackWeights, PacksTheConstantAndMarksTheDispatchRead) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kModule);
  ASSERT_TRUE(module);
  module->walk([](linalg::MatmulOp op) {
    std::string why;
    EXPECT_TRUE(kiln::registerTileFor(op, kSSE, &why)) << why;
  });
  runPass(*module);
  auto entries = (*module)->getAttrOfType<ArrayAttr>(kiln::kConstantsAttrName);
  auto value = entries[0].cast<DictionaryAttr>().getAs<DenseElementsAttr>("value");
  ASSERT_EQ(value.getType().getRank(), 1);
  // Panel 0 (columns 0-7): row 0, then row 1; panel 1 (8-15) likewise;
  // the tail panel (16-19): row 0, then row 1.
  std::vector<float> expected = {0,  1,  2,  3,  4,  5,  6,  7,  20, 21, 22, 23, 24, 25,
                                 26, 27, 8,  9,  10, 11, 12, 13, 14, 15, 28, 29, 30, 31,
                                 32, 33, 34, 35, 16, 17, 18, 19, 36, 37, 38, 39};
  std::vector<float> got(value.getValues<float>().begin(), value.getValues<float>().end());
  EXPECT_EQ(got, expected);
  auto main = module->lookupSymbol<func::FuncOp>("main");
  auto dispatch = module->lookupSymbol<func::FuncOp>("main_dispatch_0");
  EXPECT_EQ(str(main.getArgumentTypes()[1]), "memref<40xf32>");
  EXPECT_EQ(str(dispatch.getArgumentTypes()[1]), "memref<40xf32>");
  EXPECT_TRUE(succeeded(verify(*module)));
  int casts = 0;
  dispatch.walk([&](UnrealizedConversionCastOp cast) {
    ++casts;
    EXPECT_EQ(cast->getAttrOfType<IntegerAttr>(kiln::kPanelColumnsAttrName).getInt(), 8);
    EXPECT_EQ(str(cast.getResult(0).getType()), "memref<2x20xf32>");
  });
  EXPECT_EQ(casts, 1);
}

/// Runs the pass on kModule edited by `edit` and expects no change.
void expectUnchanged(const std::function<std::string(std::string)> &edit) {
  MLIRContext context;
  std::string source = edit(kModule);
  OwningOpRef<ModuleOp> module = parse(context, source.c_str());
  ASSERT_TRUE(module) << source;
  std::string before = str(*module);
  runPass(*module);
  EXPECT_EQ(str(*module), before);
}

std::string replaced(std::string s, const std::string &from, const std::string &to) {
  size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos)
    s.replace(at, from.size(), to);
  return s;
}

TEST(PackWeights, LeavesConstantsOtherOpsReadAlone) {
  // The dispatch also copies the weights somewhere: that read needs K x N.
  expectUnchanged([](std::string s) {
    return replaced(s, "    return\n  }\n  func.func @main",
                    "    %v = memref.alloca() : memref<2x20xf32>\n"
                    "    memref.copy %w, %v : memref<2x20xf32> to memref<2x20xf32>\n"
                    "    return\n  }\n  func.func @main");
  });
}

TEST(PackWeights, LeavesInputsAlone) {
  // Argument 1 is a model input when the model has 2 inputs and no
  // constants table entry for it.
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kModule);
  ASSERT_TRUE(module);
  std::string before = str(*module);
  PassManager pm(&context);
  pm.addPass(kiln::createPackWeightsPass(kSSE, /*numInputs=*/2));
  ASSERT_TRUE(succeeded(pm.run(*module)));
  EXPECT_EQ(str(*module), before);
}

TEST(PackWeights, LeavesOnePanelAlone) {
  // 12 columns: one SSE block of 3 x 4 lanes, already the panel layout.
  expectUnchanged([](std::string s) {
    s = replaced(s, ", 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0]", "]");
    s = replaced(s, ", 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0]", "]");
    for (size_t at; (at = s.find("x20xf32")) != std::string::npos;)
      s.replace(at, 7, "x12xf32");
    return s;
  });
}

} // namespace
