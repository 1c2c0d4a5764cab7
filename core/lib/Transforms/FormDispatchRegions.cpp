//===- FormDispatchRegions.cpp - Partition @main into dispatches ----------===//
//
// See Passes.h for what holds before and after.
//
//===----------------------------------------------------------------------===//
#include "Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;

namespace kiln {
namespace {

/// Ops that launch nothing: views, constants and undefined tensors.
bool isFree(Operation *op) {
  return isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::EmptyOp,
             arith::ConstantOp, func::ReturnOp>(op);
}

/// An all-parallel linalg.generic whose output map is the identity: each
/// output element depends only on input elements at projected positions.
bool isElementwise(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInits() != 1)
    return false;
  if (generic.getNumParallelLoops() != generic.getNumLoops())
    return false;
  for (AffineMap map : generic.getIndexingMapsArray())
    if (!map.isProjectedPermutation())
      return false;
  return generic.getIndexingMapsArray().back().isIdentity();
}

/// Roots that can absorb their input padding (windowed ops).
bool absorbsPadding(Operation *op) {
  return isa<linalg::ConvolutionOpInterface>(op);
}

struct FormDispatchRegionsPass
    : public PassWrapper<FormDispatchRegionsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FormDispatchRegionsPass)

  explicit FormDispatchRegionsPass(const DispatchOptions &options)
      : options(options) {}

  StringRef getArgument() const final { return "kiln-form-dispatch-regions"; }
  StringRef getDescription() const final {
    return "Partition @main into dispatch regions";
  }

  void runOnOperation() override {
    auto main = getOperation().lookupSymbol<func::FuncOp>("main");
    if (!main || main.isExternal())
      return;
    Builder b(&getContext());
    llvm::DenseMap<Operation *, int64_t> group;
    int64_t next = 0;
    auto fusionAllowed = [&](int64_t id) {
      return options.fusion && !options.noFusion.count(id);
    };
    auto tag = [&](Operation *op, int64_t id) {
      group[op] = id;
      op->setAttr(kDispatchAttrName, b.getI64IntegerAttr(id));
    };

    Block &body = main.getBody().front();
    // CSE may have merged identical fills that initialize different roots'
    // accumulators: give every use its own fill, so each joins its root.
    for (Operation &op : llvm::make_early_inc_range(body)) {
      auto fill = dyn_cast<linalg::FillOp>(&op);
      if (!fill)
        continue;
      llvm::SmallVector<OpOperand *> uses;
      for (OpOperand &use : fill->getResult(0).getUses())
        uses.push_back(&use);
      if (uses.size() > 1)
        fill->setLoc(uses[0]->getOwner()->getLoc());
      for (size_t i = 1; i < uses.size(); ++i) {
        OpBuilder builder(uses[i]->getOwner());
        Operation *copy = builder.clone(*fill);
        copy->setLoc(uses[i]->getOwner()->getLoc());
        uses[i]->set(copy->getResult(0));
      }
    }
    // Pass 1: roots and consumer fusion, in program order.
    for (Operation &op : body) {
      if (isFree(&op) || isa<linalg::FillOp, tensor::PadOp,
                             tensor::ExtractSliceOp>(&op))
        continue;
      // tensor.insert_slice chains (concatenation) form one region.
      if (auto insert = dyn_cast<tensor::InsertSliceOp>(&op)) {
        Operation *dest = insert.getDest().getDefiningOp();
        if (dest && group.count(dest) && isa<tensor::InsertSliceOp>(dest) &&
            dest->hasOneUse()) {
          tag(&op, group[dest]);
          continue;
        }
        tag(&op, next++);
        continue;
      }
      if (isElementwise(&op)) {
        // Join the producer region of a single-use operand whose result has
        // this op's shape (same iteration space).
        bool joined = false;
        for (Value operand : op.getOperands()) {
          Operation *producer = operand.getDefiningOp();
          if (!producer || !group.count(producer) || !operand.hasOneUse())
            continue;
          int64_t id = group[producer];
          if (!fusionAllowed(id) || isa<tensor::InsertSliceOp>(producer))
            continue;
          // Same iteration space: equal shapes. Element types may differ
          // (an int8 requantization consumes its root's i32 accumulator).
          if (operand.getType().cast<ShapedType>().getShape() !=
              op.getResult(0).getType().cast<ShapedType>().getShape())
            continue;
          if (producer->getNumResults() != 1)
            continue;
          tag(&op, id);
          joined = true;
          break;
        }
        if (joined)
          continue;
      }
      tag(&op, next++);
    }

    // Pass 2 (reverse order): producers whose every user sits in one region
    // join it: fills (always: they initialize the root's accumulator), pads
    // into windowed ops and slices (with fusion on). Anything left gets a
    // region of its own.
    llvm::SmallVector<Operation *> pending;
    for (Operation &op : body)
      if (isa<linalg::FillOp, tensor::PadOp, tensor::ExtractSliceOp>(&op))
        pending.push_back(&op);
    for (Operation *op : llvm::reverse(pending)) {
      std::optional<int64_t> common;
      bool single = true;
      for (Operation *user : op->getUsers()) {
        auto it = group.find(user);
        if (it == group.end() || (common && *common != it->second)) {
          single = false;
          break;
        }
        common = it->second;
      }
      bool join = single && common.has_value();
      if (join && isa<tensor::PadOp>(op)) {
        Operation *user = *op->getUsers().begin();
        join = fusionAllowed(*common) && op->hasOneUse() && absorbsPadding(user);
      } else if (join && isa<tensor::ExtractSliceOp>(op)) {
        join = fusionAllowed(*common) && op->hasOneUse();
      }
      if (join)
        tag(op, *common);
    }
    // Stragglers, numbered after every root so root ids stay stable.
    for (Operation &op : body)
      if (!isFree(&op) && !group.count(&op))
        tag(&op, next++);
    for (int64_t id : options.noFusion)
      if (id < 0 || id >= next) {
        auto diag = main.emitError()
                    << "--no-fusion names dispatch " << id << ", which does not exist (";
        if (next == 0)
          diag << "the model has no dispatches; see kiln inspect)";
        else
          diag << next << " dispatches, ids 0 to " << next - 1 << "; see kiln inspect)";
        return signalPassFailure();
      }
  }

  DispatchOptions options;
};

} // namespace

std::unique_ptr<Pass>
createFormDispatchRegionsPass(const DispatchOptions &options) {
  return std::make_unique<FormDispatchRegionsPass>(options);
}

} // namespace kiln
