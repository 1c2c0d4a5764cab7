//===- OutlineConstants.cpp - Move tensor constants to arguments ----------===//
//
// See Passes.h for what holds before and after.
//
//===----------------------------------------------------------------------===//
#include "Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;

namespace kiln {
namespace {

struct OutlineConstantsPass
    : public PassWrapper<OutlineConstantsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(OutlineConstantsPass)

  StringRef getArgument() const final { return "kiln-outline-constants"; }
  StringRef getDescription() const final {
    return "Turn tensor constants (all but 32-bit splats) into function arguments";
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = module.getContext();
    SmallVector<Attribute> entries;
    if (auto existing = module->getAttrOfType<ArrayAttr>(kConstantsAttrName))
      entries.append(existing.begin(), existing.end());

    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isPrivate() || func.isExternal())
        continue;
      SmallVector<arith::ConstantOp> constants;
      func.walk([&](arith::ConstantOp op) {
        auto dense = op.getValue().dyn_cast<DenseElementsAttr>();
        // Splats of 32-bit elements become fills (the runtime's 4-byte
        // pattern); splats of other widths (i64, i1) are stored like any
        // other constant.
        bool fillable = dense && dense.isSplat() &&
                        dense.getElementType().isIntOrFloat() &&
                        dense.getElementType().getIntOrFloatBitWidth() == 32;
        if (dense && !fillable && op.getType().isa<RankedTensorType>())
          constants.push_back(op);
      });
      // Identical constants (same uniqued attribute) share one argument.
      llvm::DenseMap<Attribute, BlockArgument> outlined;
      for (arith::ConstantOp op : constants) {
        Attribute value = op.getValue();
        auto it = outlined.find(value);
        if (it == outlined.end()) {
          unsigned index = func.getNumArguments();
          func.insertArgument(index, op.getType(), DictionaryAttr(),
                              op.getLoc());
          BlockArgument arg = func.getArgument(index);
          it = outlined.try_emplace(value, arg).first;
          std::string name = "c" + std::to_string(entries.size());
          NamedAttribute fields[] = {
              NamedAttribute(StringAttr::get(ctx, "name"),
                             StringAttr::get(ctx, name)),
              NamedAttribute(StringAttr::get(ctx, "value"), value)};
          entries.push_back(DictionaryAttr::get(ctx, fields));
        }
        op.getResult().replaceAllUsesWith(it->second);
        op.erase();
      }
      // Inputs belong to the caller and constants to the loaded artifact:
      // bufferization must never write into either.
      for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
        func.setArgAttr(i, "bufferization.writable", BoolAttr::get(ctx, false));
    }
    module->setAttr(kConstantsAttrName, ArrayAttr::get(ctx, entries));
  }
};

} // namespace

std::unique_ptr<Pass> createOutlineConstantsPass() {
  return std::make_unique<OutlineConstantsPass>();
}

} // namespace kiln
