//===- OutlineConstantsTest.cpp - kiln-outline-constants ------------------===//
#include "Pipeline.h"
#include "Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {

// Two uses of one dense constant, a second dense constant and a splat.
const char *kInput = R"mlir(
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %a = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %c = arith.constant dense<[3.0, 4.0]> : tensor<2xf32>
  %s = arith.constant dense<7.0> : tensor<2xf32>
  %0 = arith.addf %x, %a : tensor<2xf32>
  %1 = arith.addf %0, %b : tensor<2xf32>
  %2 = arith.mulf %1, %c : tensor<2xf32>
  %3 = arith.subf %2, %s : tensor<2xf32>
  return %3 : tensor<2xf32>
}
)mlir";

TEST(OutlineConstants, MovesDenseConstantsToArgumentsOnce) {
  MLIRContext context;
  DialectRegistry registry;
  kiln::registerKilnDialects(registry);
  context.appendDialectRegistry(registry);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kInput, &context);
  ASSERT_TRUE(module);
  PassManager pm(&context);
  pm.addPass(kiln::createOutlineConstantsPass());
  ASSERT_TRUE(succeeded(pm.run(*module)));

  auto main = module->lookupSymbol<func::FuncOp>("main");
  // x + the two distinct dense constants ([1,2] uniqued, [3,4]).
  EXPECT_EQ(main.getNumArguments(), 3u);
  auto constants = (*module)->getAttrOfType<ArrayAttr>(kiln::kConstantsAttrName);
  ASSERT_TRUE(constants);
  ASSERT_EQ(constants.size(), 2u);
  auto first = constants[0].cast<DictionaryAttr>().getAs<DenseElementsAttr>("value");
  EXPECT_EQ(first.getValues<float>()[1], 2.0f);
  EXPECT_EQ(constants[1].cast<DictionaryAttr>().getAs<StringAttr>("name").str(), "c1");
  // The splat stays an inline constant; nothing else does.
  int remaining = 0;
  main.walk([&](arith::ConstantOp op) {
    ++remaining;
    EXPECT_TRUE(op.getValue().cast<DenseElementsAttr>().isSplat());
  });
  EXPECT_EQ(remaining, 1);
  for (unsigned i = 0; i < main.getNumArguments(); ++i) {
    auto writable = main.getArgAttrOfType<BoolAttr>(i, "bufferization.writable");
    ASSERT_TRUE(writable) << i;
    EXPECT_FALSE(writable.getValue()) << i;
  }
}

} // namespace
