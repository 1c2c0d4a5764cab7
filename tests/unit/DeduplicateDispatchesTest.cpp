//===- DeduplicateDispatchesTest.cpp - One kernel for identical dispatches ===//
//
// Which dispatches deduplicateDispatches points at an earlier one's entry
// point: equal bodies and binding types merge whatever their names, ids and
// source operators; a different body, a different binding type or
// different aliased bindings do not. End to end (BlazeFace's repeated
// blocks run through shared entry points and still match TFLite) in
// ScheduleTest and RealModel.BlazeFace.
//
//===----------------------------------------------------------------------===//
#include "PassTestSupport.h"
#include "Schedule/BuildPlan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {

// Four dispatches: 0 and 1 identical but for their attributes; 2 adds
// instead of multiplying; 3 is 0 on a longer buffer.
const char *kModule = R"mlir(
func.func private @main_dispatch_0(%a: memref<8xf32>, %b: memref<8xf32>) attributes {kiln.dispatch_id = 0 : i64, kiln.sources = ["MUL#1"]} {
  %c0 = arith.constant 0 : index
  %x = memref.load %a[%c0] : memref<8xf32>
  %y = arith.mulf %x, %x : f32
  memref.store %y, %b[%c0] : memref<8xf32>
  return
}
func.func private @main_dispatch_1(%a: memref<8xf32>, %b: memref<8xf32>) attributes {kiln.dispatch_id = 1 : i64, kiln.sources = ["MUL#7"], kiln.tile_sizes = [4]} {
  %c0 = arith.constant 0 : index
  %x = memref.load %a[%c0] : memref<8xf32>
  %y = arith.mulf %x, %x : f32
  memref.store %y, %b[%c0] : memref<8xf32>
  return
}
func.func private @main_dispatch_2(%a: memref<8xf32>, %b: memref<8xf32>) attributes {kiln.dispatch_id = 2 : i64} {
  %c0 = arith.constant 0 : index
  %x = memref.load %a[%c0] : memref<8xf32>
  %y = arith.addf %x, %x : f32
  memref.store %y, %b[%c0] : memref<8xf32>
  return
}
func.func private @main_dispatch_3(%a: memref<16xf32>, %b: memref<16xf32>) attributes {kiln.dispatch_id = 3 : i64} {
  %c0 = arith.constant 0 : index
  %x = memref.load %a[%c0] : memref<16xf32>
  %y = arith.mulf %x, %x : f32
  memref.store %y, %b[%c0] : memref<16xf32>
  return
}
)mlir";

kiln::CompilationPlan planOf(int n) {
  kiln::CompilationPlan plan;
  for (int i = 0; i < n; ++i) {
    kiln::Dispatch d;
    d.id = i;
    d.name = "main_dispatch_" + std::to_string(i);
    plan.dispatches.push_back(d);
  }
  return plan;
}

TEST(DeduplicateDispatches, IdenticalKernelsShareTheFirstEntryPoint) {
  MLIRContext context;
  auto module = kiln::test::parse(context, kModule);
  ASSERT_TRUE(module);
  kiln::CompilationPlan plan = planOf(4);
  kiln::deduplicateDispatches(*module, plan);
  EXPECT_EQ(plan.dispatches[0].entryPoint, "main_dispatch_0");
  EXPECT_EQ(plan.dispatches[1].entryPoint, "main_dispatch_0")
      << "only the name and kiln.* attributes differ";
  EXPECT_EQ(plan.dispatches[2].entryPoint, "main_dispatch_2") << "another body";
  EXPECT_EQ(plan.dispatches[3].entryPoint, "main_dispatch_3") << "other binding types";
  // Deciding changes no IR; erasing drops exactly the merged function.
  EXPECT_TRUE(module->lookupSymbol<func::FuncOp>("main_dispatch_1"));
  kiln::eraseDeduplicatedDispatches(*module, plan);
  EXPECT_FALSE(module->lookupSymbol<func::FuncOp>("main_dispatch_1"));
  for (const char *kept : {"main_dispatch_0", "main_dispatch_2", "main_dispatch_3"})
    EXPECT_TRUE(module->lookupSymbol<func::FuncOp>(kept)) << kept;
}

TEST(DeduplicateDispatches, DifferentAliasedBindingsKeepTheirOwnKernel) {
  // Dispatch 1 writes in place of its input: its kernel may not promise
  // that the two bindings are distinct, so it cannot run 0's code.
  MLIRContext context;
  auto module = kiln::test::parse(context, kModule);
  ASSERT_TRUE(module);
  kiln::CompilationPlan plan = planOf(4);
  plan.dispatches[1].aliasedBindings = {0, 1};
  kiln::deduplicateDispatches(*module, plan);
  EXPECT_EQ(plan.dispatches[1].entryPoint, "main_dispatch_1");
}

} // namespace
