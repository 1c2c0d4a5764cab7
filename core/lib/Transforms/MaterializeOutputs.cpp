//===- MaterializeOutputs.cpp - Every model output its own value ----------===//
//
// See Passes.h for what holds before and after.
//
//===----------------------------------------------------------------------===//
#include "Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include "llvm/ADT/DenseSet.h"

using namespace mlir;

namespace kiln {
namespace {

/// The value whose memory `v` will share after bufferization: `v` with
/// reshapes and casts (views, never copies) peeled off.
Value storageRoot(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp>(def))
      break;
    v = def->getOperand(0);
  }
  return v;
}

/// True if returned value `v` cannot be bufferized into an output buffer of
/// its own as it is: its storage is an argument of @main (a model input or
/// an outlined constant, which bufferization would return instead of
/// copying, and drop-equivalent-buffer-results would then drop), an inline
/// constant (a global, not a buffer of the plan), or the storage of an
/// earlier result.
bool needsOwnValue(Value v, const llvm::DenseSet<Value> &earlierRoots) {
  Value root = storageRoot(v);
  return root.isa<BlockArgument>() || root.getDefiningOp<arith::ConstantOp>() ||
         earlierRoots.contains(root);
}

struct MaterializeOutputsPass
    : public PassWrapper<MaterializeOutputsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(MaterializeOutputsPass)

  StringRef getArgument() const final { return "kiln-materialize-outputs"; }
  StringRef getDescription() const final {
    return "Give every result of @main a value of its own (copy or fill)";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<bufferization::BufferizationDialect, linalg::LinalgDialect,
                    tensor::TensorDialect>();
  }

  void runOnOperation() override {
    auto main = getOperation().lookupSymbol<func::FuncOp>("main");
    if (!main || main.isExternal())
      return;
    for (Block &block : main.getBody()) {
      auto ret = dyn_cast<func::ReturnOp>(block.getTerminator());
      if (!ret)
        continue;
      llvm::DenseSet<Value> roots;
      for (OpOperand &operand : ret->getOpOperands()) {
        Value v = operand.get();
        auto type = v.getType().dyn_cast<RankedTensorType>();
        if (!type || !needsOwnValue(v, roots)) {
          roots.insert(storageRoot(v));
          continue;
        }
        OpBuilder b(ret);
        operand.set(materialize(b, v, type));
        roots.insert(operand.get());
      }
    }
  }

  /// A fresh tensor holding `v`: a fill for a splat constant of 32-bit
  /// elements (the runtime writes the 4-byte pattern, no constant is
  /// stored), else a copy (i64, i1 and other splats too).
  static Value materialize(OpBuilder &b, Value v, RankedTensorType type) {
    Location loc = v.getLoc();
    if (auto cst = v.getDefiningOp<arith::ConstantOp>()) {
      auto dense = cst.getValue().dyn_cast<DenseElementsAttr>();
      if (dense && dense.isSplat() && type.hasStaticShape() &&
          type.getElementType().isIntOrFloat() &&
          type.getElementType().getIntOrFloatBitWidth() == 32) {
        Value scalar = b.create<arith::ConstantOp>(
            loc, dense.getSplatValue<TypedAttr>());
        Value empty = b.create<tensor::EmptyOp>(loc, type.getShape(),
                                                type.getElementType());
        return b.create<linalg::FillOp>(loc, scalar, empty).getResult(0);
      }
    }
    return b.create<bufferization::AllocTensorOp>(loc, type, ValueRange(), v);
  }
};

} // namespace

std::unique_ptr<Pass> createMaterializeOutputsPass() {
  return std::make_unique<MaterializeOutputsPass>();
}

} // namespace kiln
