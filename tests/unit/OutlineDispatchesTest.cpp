//===- OutlineDispatchesTest.cpp - kiln-outline-dispatches ----------------===//
#include "PassTestSupport.h"
#include "Pipeline.h"
#include "Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace mlir;

namespace {

using kiln::test::str;
using kiln::test::parse;



LogicalResult runOutline(MLIRContext &context, ModuleOp module,
                         const kiln::DispatchOptions &options) {
  PassManager pm(&context);
  pm.addPass(kiln::createFormDispatchRegionsPass(options));
  pm.addPass(kiln::createOutlineDispatchesPass());
  return pm.run(module);
}

/// Follows a tensor back through destination operands (DPS inits) to the
/// value that is finally written: a block argument if the result is
/// computed in place in an argument.
Value destinationOf(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    auto dps = dyn_cast<DestinationStyleOpInterface>(def);
    if (!dps)
      return v;
    v = dps.getDpsInitOperand(v.cast<OpResult>().getResultNumber())->get();
  }
  return v;
}

bool writable(func::FuncOp fn, unsigned i) {
  auto attr = fn.getArgAttrOfType<BoolAttr>(i, "bufferization.writable");
  EXPECT_TRUE(attr) << fn.getName().str() << " argument " << i;
  return attr && attr.getValue();
}

std::vector<std::string> sources(func::FuncOp fn) {
  std::vector<std::string> out;
  if (auto attr = fn->getAttrOfType<ArrayAttr>("kiln.sources"))
    for (Attribute a : attr)
      out.push_back(a.cast<StringAttr>().str());
  return out;
}

// A fully connected layer (dense 8x2 weights, zero-filled accumulator) then
// bias (a splat) + relu. Without fusion: dispatch 0 = fill + matmul,
// dispatch 1 = the generic.
const char *kDenseBiasRelu = R"mlir(
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x2xf32> {
  %w = arith.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0],
                             [9.0, 10.0], [11.0, 12.0], [13.0, 14.0], [15.0, 16.0]]>
      : tensor<8x2xf32>
  %bias = arith.constant dense<0.5> : tensor<4x2xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
  %m = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x2xf32>)
                     outs(%f : tensor<4x2xf32>) -> tensor<4x2xf32> loc("FULLY_CONNECTED#1")
  %e2 = tensor.empty() : tensor<4x2xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%m, %bias : tensor<4x2xf32>, tensor<4x2xf32>)
      outs(%e2 : tensor<4x2xf32>) {
  ^bb0(%in: f32, %b: f32, %out: f32):
    %s = arith.addf %in, %b : f32
    %v = arith.maxf %s, %zero : f32
    linalg.yield %v : f32
  } -> tensor<4x2xf32> loc(fused["ADD#2", "RELU#3"])
  return %r : tensor<4x2xf32>
}
)mlir";

class OutlineDispatches : public ::testing::Test {
protected:
  void SetUp() override {
    module = parse(context, kDenseBiasRelu);
    ASSERT_TRUE(module);
    kiln::DispatchOptions options;
    options.fusion = false;
    ASSERT_TRUE(succeeded(runOutline(context, *module, options)));
    main = module->lookupSymbol<func::FuncOp>("main");
    d0 = module->lookupSymbol<func::FuncOp>("main_dispatch_0");
    d1 = module->lookupSymbol<func::FuncOp>("main_dispatch_1");
    ASSERT_TRUE(main);
    ASSERT_TRUE(d0);
    ASSERT_TRUE(d1);
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  func::FuncOp main, d0, d1;
};

TEST_F(OutlineDispatches, MainOnlyCallsDispatches) {
  std::vector<func::CallOp> calls;
  for (Operation &op : main.getBody().front()) {
    EXPECT_TRUE((isa<arith::ConstantOp, tensor::EmptyOp, tensor::ExpandShapeOp,
                     tensor::CollapseShapeOp, func::CallOp, func::ReturnOp>(op)))
        << str(op);
    EXPECT_FALSE(op.hasAttr(kiln::kDispatchAttrName)) << str(op);
    if (auto call = dyn_cast<func::CallOp>(op))
      calls.push_back(call);
  }
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].getCallee(), "main_dispatch_0");
  EXPECT_EQ(calls[1].getCallee(), "main_dispatch_1");
  // dispatch 1 reads dispatch 0's result; @main returns dispatch 1's.
  EXPECT_EQ(calls[1].getOperand(0), calls[0].getResult(0));
  auto ret = cast<func::ReturnOp>(main.getBody().front().getTerminator());
  EXPECT_EQ(ret.getOperand(0), calls[1].getResult(0));
  // Each output operand is a fresh tensor.empty of the result's type.
  for (func::CallOp call : calls) {
    Value out = call.getOperands().back();
    auto empty = out.getDefiningOp<tensor::EmptyOp>();
    ASSERT_TRUE(empty) << str(call);
    EXPECT_EQ(empty.getType(), call.getResult(0).getType());
  }
}

TEST_F(OutlineDispatches, DispatchFunctionsAreDestinationPassing) {
  std::vector<std::pair<int64_t, func::FuncOp>> dispatches = {{0, d0}, {1, d1}};
  for (auto [id, fn] : dispatches) {
    SCOPED_TRACE(fn.getName().str());
    EXPECT_TRUE(fn.isPrivate());
    auto dispatchId = fn->getAttrOfType<IntegerAttr>("kiln.dispatch_id");
    ASSERT_TRUE(dispatchId);
    EXPECT_EQ(dispatchId.getInt(), id);
    auto outputs = fn->getAttrOfType<IntegerAttr>("kiln.num_outputs");
    ASSERT_TRUE(outputs);
    EXPECT_EQ(outputs.getInt(), 1);
    ASSERT_EQ(fn.getNumResults(), 1u);

    // The result is computed in the last argument, the only writable one.
    unsigned n = fn.getNumArguments();
    ASSERT_GE(n, 1u);
    auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
    EXPECT_EQ(destinationOf(ret.getOperand(0)), fn.getArgument(n - 1));
    EXPECT_EQ(fn.getArgument(n - 1).getType(), fn.getResultTypes()[0]);
    for (unsigned i = 0; i < n; ++i)
      EXPECT_EQ(writable(fn, i), i == n - 1) << "argument " << i;
  }
}

TEST_F(OutlineDispatches, DispatchArgumentsAndSources) {
  // dispatch 0: (x, w, out). The dense weights are an argument; the scalar
  // zero and the accumulator's empty tensor are rebuilt inside.
  ASSERT_EQ(d0.getNumArguments(), 3u);
  EXPECT_EQ(d0.getArgument(0).getType(), main.getArgument(0).getType());
  EXPECT_EQ(d0.getArgument(1).getType().cast<RankedTensorType>().getShape(),
            (ArrayRef<int64_t>{8, 2}));
  EXPECT_EQ(sources(d0), (std::vector<std::string>{"FULLY_CONNECTED#1"}));
  int d0Matmuls = 0, d0Fills = 0;
  d0.walk([&](Operation *op) {
    d0Matmuls += isa<linalg::MatmulOp>(op);
    d0Fills += isa<linalg::FillOp>(op);
    if (auto cst = dyn_cast<arith::ConstantOp>(op))
      EXPECT_FALSE(cst.getType().isa<TensorType>())
          << "dense weights were cloned into the dispatch: " << str(*op);
  });
  EXPECT_EQ(d0Matmuls, 1);
  EXPECT_EQ(d0Fills, 1);
  auto call0 = *main.getBody().front().getOps<func::CallOp>().begin();
  auto weights = call0.getOperand(1).getDefiningOp<arith::ConstantOp>();
  ASSERT_TRUE(weights) << "weights are not passed from @main's constant";
  auto dense = weights.getValue().cast<DenseElementsAttr>();
  EXPECT_FALSE(dense.isSplat());
  EXPECT_EQ(dense.getValues<float>()[15], 16.0f);

  // dispatch 1: (m, out). The splat bias and the scalar zero are cloned.
  ASSERT_EQ(d1.getNumArguments(), 2u);
  std::vector<std::string> d1Sources = sources(d1);
  EXPECT_EQ(d1Sources, (std::vector<std::string>{"ADD#2", "RELU#3"}));
  int splats = 0;
  d1.walk([&](arith::ConstantOp cst) {
    auto value = cst.getValue().dyn_cast<DenseElementsAttr>();
    if (!value)
      return;
    ++splats;
    EXPECT_TRUE(value.isSplat());
    EXPECT_EQ(value.getSplatValue<float>(), 0.5f);
    EXPECT_EQ(cst.getType(), d1.getResultTypes()[0]);
  });
  EXPECT_EQ(splats, 1);
  int d1Generics = 0;
  d1.walk([&](linalg::GenericOp generic) {
    ++d1Generics;
    EXPECT_EQ(generic.getDpsInputOperand(0)->get(), d1.getArgument(0));
    EXPECT_EQ(generic.getDpsInitOperand(0)->get(), d1.getArgument(1));
  });
  EXPECT_EQ(d1Generics, 1);
}

TEST(OutlineDispatchesFused, OneDispatchForTheWholeLayer) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kDenseBiasRelu);
  ASSERT_TRUE(module);
  ASSERT_TRUE(succeeded(runOutline(context, *module, kiln::DispatchOptions())));
  auto main = module->lookupSymbol<func::FuncOp>("main");
  auto d0 = module->lookupSymbol<func::FuncOp>("main_dispatch_0");
  ASSERT_TRUE(d0);
  EXPECT_FALSE(module->lookupSymbol<func::FuncOp>("main_dispatch_1"));
  int calls = 0;
  main.walk([&](func::CallOp) { ++calls; });
  EXPECT_EQ(calls, 1);
  // (x, w, out): the bias splat is cloned, the matmul's result stays inside.
  ASSERT_EQ(d0.getNumArguments(), 3u);
  EXPECT_EQ(d0->getAttrOfType<IntegerAttr>("kiln.num_outputs").getInt(), 1);
  auto ret = cast<func::ReturnOp>(d0.getBody().front().getTerminator());
  EXPECT_EQ(destinationOf(ret.getOperand(0)), d0.getArgument(2));
  EXPECT_EQ(sources(d0), (std::vector<std::string>{"FULLY_CONNECTED#1",
                                                   "ADD#2", "RELU#3"}));
}

// Integer contractions the named-op interfaces miss: linalg.quantized_matmul
// (zero points as operands) and an i8 x i8 -> i32 linalg.generic; then an
// integer elementwise requantization (i32 -> i8 by a shift), which is not
// counted.
const char *kIntegerContractions = R"mlir(
#xk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
func.func @main(%x: tensor<4x8xi8>, %w: tensor<8x2xi8>, %y: tensor<3x5xi8>,
                %v: tensor<5x6xi8>) -> (tensor<4x2xi32>, tensor<3x6xi32>, tensor<3x6xi8>) {
  %zx = arith.constant -3 : i32
  %zw = arith.constant 5 : i32
  %zero = arith.constant 0 : i32
  %shift = arith.constant 7 : i32
  %e0 = tensor.empty() : tensor<4x2xi32>
  %f0 = linalg.fill ins(%zero : i32) outs(%e0 : tensor<4x2xi32>) -> tensor<4x2xi32>
  %q = linalg.quantized_matmul ins(%x, %w, %zx, %zw : tensor<4x8xi8>, tensor<8x2xi8>, i32, i32)
      outs(%f0 : tensor<4x2xi32>) -> tensor<4x2xi32> loc("FULLY_CONNECTED#0")
  %e1 = tensor.empty() : tensor<3x6xi32>
  %f1 = linalg.fill ins(%zero : i32) outs(%e1 : tensor<3x6xi32>) -> tensor<3x6xi32>
  %g = linalg.generic {indexing_maps = [#xk, #kn, #mn],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%y, %v : tensor<3x5xi8>, tensor<5x6xi8>) outs(%f1 : tensor<3x6xi32>) {
  ^bb0(%a: i8, %b: i8, %acc: i32):
    %ae = arith.extsi %a : i8 to i32
    %be = arith.extsi %b : i8 to i32
    %p = arith.muli %ae, %be : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  } -> tensor<3x6xi32> loc("BATCH_MATMUL#1")
  %e2 = tensor.empty() : tensor<3x6xi8>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<3x6xi32>) outs(%e2 : tensor<3x6xi8>) {
  ^bb0(%in: i32, %out: i8):
    %sh = arith.shrsi %in, %shift : i32
    %t = arith.trunci %sh : i32 to i8
    linalg.yield %t : i8
  } -> tensor<3x6xi8> loc("QUANTIZE#2")
  return %q, %g, %r : tensor<4x2xi32>, tensor<3x6xi32>, tensor<3x6xi8>
}
)mlir";

/// kiln.flops of the dispatch whose sources include `source`.
int64_t flopsOf(ModuleOp module, const std::string &source) {
  int64_t flops = -1;
  module.walk([&](func::FuncOp fn) {
    std::vector<std::string> s = sources(fn);
    if (std::find(s.begin(), s.end(), source) != s.end())
      flops = fn->getAttrOfType<IntegerAttr>("kiln.flops").getInt();
  });
  return flops;
}

TEST(OutlineDispatchesFlops, IntegerMultiplyAddsCountTwoEach) {
  MLIRContext context;
  OwningOpRef<ModuleOp> module = parse(context, kIntegerContractions);
  ASSERT_TRUE(module);
  kiln::DispatchOptions options;
  options.fusion = false;
  ASSERT_TRUE(succeeded(runOutline(context, *module, options)));
  // 2 x M x N x K.
  EXPECT_EQ(flopsOf(*module, "FULLY_CONNECTED#0"), 2 * 4 * 2 * 8);
  EXPECT_EQ(flopsOf(*module, "BATCH_MATMUL#1"), 2 * 3 * 6 * 5);
  // Integer elementwise arithmetic is not counted.
  EXPECT_EQ(flopsOf(*module, "QUANTIZE#2"), 0);
}

} // namespace
