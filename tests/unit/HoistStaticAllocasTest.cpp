//===- HoistStaticAllocasTest.cpp - kiln-hoist-static-allocas -------------===//
//
// Static allocas whose allocation scope is the function (the window before
// the loop, the accumulator after it) move to the start of the entry
// block, keeping their order and their uses; one with a dynamic size stays
// where it is (its size operand is computed there), as does one inside
// scf.for, itself an allocation scope (a stack object per iteration).
//
//===----------------------------------------------------------------------===//
#include "PassTestSupport.h"
#include "Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {

using kiln::test::parse;
using kiln::test::str;

constexpr const char *kInput = R"mlir(
func.func @kernel(%n: index, %src: memref<64xi8>) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %window = memref.alloca() : memref<64xi8>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %src[%i] : memref<64xi8>
    memref.store %v, %window[%i] : memref<64xi8>
    %scratch = memref.alloca() : memref<4xi32>
  }
  %acc = memref.alloca() : memref<8x32xi32>
  %dyn = memref.alloca(%n) : memref<?xi32>
  %r = memref.load %acc[%c0, %c0] : memref<8x32xi32>
  return %r : i32
}
)mlir";

TEST(HoistStaticAllocas, StaticAllocasMoveToTheEntryBlockStart) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kInput);
  ASSERT_TRUE(module);
  PassManager pm(&context);
  pm.addNestedPass<func::FuncOp>(kiln::createHoistStaticAllocasPass());
  ASSERT_TRUE(succeeded(pm.run(*module)));
  ASSERT_TRUE(succeeded(verify(*module))) << str(*module);
  auto fn = module->lookupSymbol<func::FuncOp>("kernel");
  Block &entry = fn.getBody().front();
  // The two function-scope static allocas lead the entry block in their
  // original order: the window, the accumulator.
  std::vector<std::string> leading;
  for (Operation &op : entry) {
    auto alloca = dyn_cast<memref::AllocaOp>(&op);
    if (!alloca || alloca->getNumOperands() != 0)
      break;
    leading.push_back(str(alloca.getType()));
  }
  EXPECT_EQ(leading, (std::vector<std::string>{"memref<64xi8>", "memref<8x32xi32>"}))
      << str(*module);
  // The loop's scratch stays in the loop.
  int inLoop = 0;
  fn.walk([&](memref::AllocaOp alloca) {
    inLoop += alloca->getParentOp()->getName().getStringRef() == "scf.for";
  });
  EXPECT_EQ(inLoop, 1) << str(*module);
  // The dynamic one stays after the loop, in the entry block.
  int dynamicAfterLoop = 0;
  bool seenLoop = false;
  for (Operation &op : entry) {
    seenLoop |= op.getName().getStringRef() == "scf.for";
    if (auto alloca = dyn_cast<memref::AllocaOp>(&op))
      dynamicAfterLoop += seenLoop && alloca->getNumOperands() == 1;
  }
  EXPECT_EQ(dynamicAfterLoop, 1) << str(*module);
}

} // namespace
