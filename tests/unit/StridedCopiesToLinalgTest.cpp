//===- StridedCopiesToLinalgTest.cpp - kiln-strided-copies-to-linalg ------===//
#include "PassTestSupport.h"
#include "Pipeline.h"
#include "Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <vector>

using namespace mlir;

namespace {

using kiln::test::parse;


LogicalResult runStridedCopies(MLIRContext &context, ModuleOp module) {
  PassManager pm(&context);
  pm.addNestedPass<func::FuncOp>(kiln::createStridedCopiesToLinalgPass());
  return pm.run(module);
}

// %buf is 6x6, row-major. The 3x3 window at [1, 2] starts at 1*6 + 2 = 8
// and keeps row stride 6: not contiguous. The 2x6 window at [1, 0] (two
// whole rows, offset 6) and the 1x3 window at [2, 1] (part of one row,
// offset 13) are contiguous.
const char *kCopies = R"mlir(
func.func @copies(%buf: memref<6x6xf32>, %out: memref<3x3xf32>,
                  %rows: memref<2x6xf32>, %row: memref<1x3xf32>,
                  %whole: memref<6x6xf32>) {
  %window = memref.subview %buf[1, 2] [3, 3] [1, 1]
      : memref<6x6xf32> to memref<3x3xf32, strided<[6, 1], offset: 8>>
  memref.copy %window, %out
      : memref<3x3xf32, strided<[6, 1], offset: 8>> to memref<3x3xf32>
  %two = memref.subview %buf[1, 0] [2, 6] [1, 1]
      : memref<6x6xf32> to memref<2x6xf32, strided<[6, 1], offset: 6>>
  memref.copy %two, %rows
      : memref<2x6xf32, strided<[6, 1], offset: 6>> to memref<2x6xf32>
  %part = memref.subview %buf[2, 1] [1, 3] [1, 1]
      : memref<6x6xf32> to memref<1x3xf32, strided<[6, 1], offset: 13>>
  memref.copy %part, %row
      : memref<1x3xf32, strided<[6, 1], offset: 13>> to memref<1x3xf32>
  memref.copy %buf, %whole : memref<6x6xf32> to memref<6x6xf32>
  memref.copy %whole, %whole : memref<6x6xf32> to memref<6x6xf32>
  linalg.copy ins(%out : memref<3x3xf32>) outs(%out : memref<3x3xf32>)
  return
}
)mlir";

TEST(StridedCopiesToLinalg, StridedCopiesBecomeLinalgCopySelfCopiesVanish) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kCopies);
  ASSERT_TRUE(module);
  ASSERT_TRUE(succeeded(runStridedCopies(context, *module)));
  auto fn = module->lookupSymbol<func::FuncOp>("copies");

  std::vector<memref::CopyOp> memrefCopies;
  std::vector<linalg::CopyOp> linalgCopies;
  fn.walk([&](memref::CopyOp op) { memrefCopies.push_back(op); });
  fn.walk([&](linalg::CopyOp op) { linalgCopies.push_back(op); });

  // The strided window: linalg.copy, same source and target.
  ASSERT_EQ(linalgCopies.size(), 1u);
  linalg::CopyOp strided = linalgCopies.front();
  auto view = strided.getInputs()[0].getDefiningOp<memref::SubViewOp>();
  ASSERT_TRUE(view);
  EXPECT_EQ(view.getType().getShape(), (ArrayRef<int64_t>{3, 3}));
  EXPECT_EQ(strided.getOutputs()[0], fn.getArgument(1));

  // The three contiguous copies stay memref.copy (a memcpy), in order; the
  // self copies (memref.copy and linalg.copy) are gone.
  ASSERT_EQ(memrefCopies.size(), 3u);
  EXPECT_EQ(memrefCopies[0].getTarget(), fn.getArgument(2));
  EXPECT_EQ(memrefCopies[1].getTarget(), fn.getArgument(3));
  EXPECT_EQ(memrefCopies[2].getSource(), fn.getArgument(0));
  EXPECT_EQ(memrefCopies[2].getTarget(), fn.getArgument(4));
  for (memref::CopyOp copy : memrefCopies)
    EXPECT_NE(copy.getSource(), copy.getTarget());
}

// A copy into a strided target (the out parameter side) is also strided.
const char *kStridedTarget = R"mlir(
func.func @scatter(%src: memref<3x3xf32>, %buf: memref<6x6xf32>) {
  %window = memref.subview %buf[0, 3] [3, 3] [1, 1]
      : memref<6x6xf32> to memref<3x3xf32, strided<[6, 1], offset: 3>>
  memref.copy %src, %window
      : memref<3x3xf32> to memref<3x3xf32, strided<[6, 1], offset: 3>>
  return
}
)mlir";

TEST(StridedCopiesToLinalg, CopyIntoStridedTargetBecomesLinalgCopy) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kStridedTarget);
  ASSERT_TRUE(module);
  ASSERT_TRUE(succeeded(runStridedCopies(context, *module)));
  auto fn = module->lookupSymbol<func::FuncOp>("scatter");
  int memrefCopies = 0;
  std::vector<linalg::CopyOp> linalgCopies;
  fn.walk([&](memref::CopyOp) { ++memrefCopies; });
  fn.walk([&](linalg::CopyOp op) { linalgCopies.push_back(op); });
  EXPECT_EQ(memrefCopies, 0);
  ASSERT_EQ(linalgCopies.size(), 1u);
  EXPECT_EQ(linalgCopies[0].getInputs()[0], fn.getArgument(0));
  EXPECT_TRUE(linalgCopies[0].getOutputs()[0].getDefiningOp<memref::SubViewOp>());
}

} // namespace
