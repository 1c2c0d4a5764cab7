//===- StridedCopiesToLinalg.cpp - memref.copy of strided views -> loops --===//
//
// See Passes.h for what holds before and after.
//
//===----------------------------------------------------------------------===//
#include "Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;

namespace kiln {
namespace {

/// True if `type` is a static memref whose elements are densely packed in
/// row-major order (what memref.copy lowers to a plain memcpy for).
bool isContiguous(MemRefType type) {
  if (!type.hasStaticShape())
    return false;
  if (type.getLayout().isIdentity())
    return true;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(getStridesAndOffset(type, strides, offset)))
    return false;
  int64_t expected = 1;
  for (int64_t d = type.getRank() - 1; d >= 0; --d) {
    if (type.getDimSize(d) != 1 && strides[d] != expected)
      return false;
    expected *= type.getDimSize(d);
  }
  return true;
}

struct StridedCopiesToLinalgPass
    : public PassWrapper<StridedCopiesToLinalgPass,
                         OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(StridedCopiesToLinalgPass)

  StringRef getArgument() const final {
    return "kiln-strided-copies-to-linalg";
  }
  StringRef getDescription() const final {
    return "Rewrite memref.copy between non-contiguous memrefs as linalg.copy";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<linalg::LinalgDialect>();
  }

  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp op) {
      auto source = op.getSource().getType().dyn_cast<MemRefType>();
      auto target = op.getTarget().getType().dyn_cast<MemRefType>();
      if (source && target && (!isContiguous(source) || !isContiguous(target)))
        copies.push_back(op);
    });
    for (memref::CopyOp op : copies) {
      OpBuilder b(op);
      b.create<linalg::CopyOp>(op.getLoc(), op.getSource(), op.getTarget());
      op.erase();
    }
    // A copy of a buffer onto itself (left where a tile was computed in
    // place in its destination) moves nothing.
    SmallVector<Operation *> selfCopies;
    getOperation().walk([&](Operation *op) {
      if (auto copy = dyn_cast<linalg::CopyOp>(op)) {
        if (copy.hasBufferSemantics() &&
            copy.getInputs()[0] == copy.getOutputs()[0])
          selfCopies.push_back(op);
      } else if (auto copy = dyn_cast<memref::CopyOp>(op)) {
        if (copy.getSource() == copy.getTarget())
          selfCopies.push_back(op);
      }
    });
    for (Operation *op : selfCopies)
      op->erase();
  }
};

} // namespace

std::unique_ptr<Pass> createStridedCopiesToLinalgPass() {
  return std::make_unique<StridedCopiesToLinalgPass>();
}

} // namespace kiln
