//===- HoistStaticAllocas.cpp - Static stack temporaries up front ----------===//
//
// See Passes.h for what holds before and after.
//
//===----------------------------------------------------------------------===//
#include "Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;

namespace kiln {
namespace {

struct HoistStaticAllocasPass
    : public PassWrapper<HoistStaticAllocasPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(HoistStaticAllocasPass)
  StringRef getArgument() const final { return "kiln-hoist-static-allocas"; }
  StringRef getDescription() const final {
    return "Static-size stack temporaries into the entry block";
  }
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (fn.isExternal())
      return;
    Block &entry = fn.getBody().front();
    SmallVector<memref::AllocaOp> allocas;
    fn.walk([&](memref::AllocaOp alloca) {
      if (alloca->getNumOperands() == 0 && alloca.getType().hasStaticShape() &&
          alloca->getParentWithTrait<OpTrait::AutomaticAllocationScope>() == fn)
        allocas.push_back(alloca);
    });
    // Reverse walk order, each to the front: the entry keeps their order.
    for (memref::AllocaOp alloca : llvm::reverse(allocas))
      alloca->moveBefore(&entry, entry.begin());
  }
};


} // namespace

std::unique_ptr<Pass> createHoistStaticAllocasPass() {
  return std::make_unique<HoistStaticAllocasPass>();
}

} // namespace kiln
