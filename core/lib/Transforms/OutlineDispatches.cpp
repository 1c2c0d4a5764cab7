//===- OutlineDispatches.cpp - One function per dispatch region -----------===//
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
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/CastInterfaces.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/RegionUtils.h"

#include <map>

using namespace mlir;

namespace kiln {
namespace {

/// Values cheap enough to rebuild inside the dispatch instead of binding
/// them: scalar and splat constants, undefined tensors.
bool isCloneable(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return false;
  if (isa<tensor::EmptyOp>(def))
    return true;
  if (auto cst = dyn_cast<arith::ConstantOp>(def)) {
    auto dense = cst.getValue().dyn_cast<DenseElementsAttr>();
    return !dense || dense.isSplat();
  }
  return false;
}

/// Adds the source operator names found in `loc` ("CONV_2D#12").
void collectSources(Location loc, llvm::SetVector<StringRef> &out) {
  if (auto name = loc.dyn_cast<NameLoc>()) {
    StringRef text = name.getName().getValue();
    if (text.contains('#'))
      out.insert(text);
    collectSources(name.getChildLoc(), out);
  } else if (auto fused = loc.dyn_cast<FusedLoc>()) {
    for (Location l : fused.getLocations())
      collectSources(l, out);
  }
}

/// Finds the operand that carries `result`'s destination back to a
/// tensor.empty (through DPS inits and insert_slice destinations).
OpOperand *findEmptyDestination(Value result) {
  Value v = result;
  OpOperand *use = nullptr;
  while (Operation *def = v.getDefiningOp()) {
    if (isa<tensor::EmptyOp>(def))
      return use;
    if (auto dps = dyn_cast<DestinationStyleOpInterface>(def)) {
      use = dps.getDpsInitOperand(v.cast<OpResult>().getResultNumber());
    } else if (auto insert = dyn_cast<tensor::InsertSliceOp>(def)) {
      use = &insert->getOpOperand(1); // dest
    } else {
      return nullptr;
    }
    v = use->get();
  }
  return nullptr;
}

/// `v` with value-preserving casts (extsi, extf, trunci, ...) looked through.
Value throughCasts(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<CastOpInterface>(def) || def->getNumOperands() != 1)
      break;
    v = def->getOperand(0);
  }
  return v;
}

/// Whether `op` is an integer multiply-accumulation: it has a reduction loop
/// and its body yields an integer sum with a product among its terms, casts
/// looked through. This covers what the interfaces below miss: the
/// quantized named ops (linalg.quantized_matmul, quantized_batch_matmul:
/// zero points subtracted before the product, four inputs) and integer
/// contractions written as linalg.generic (an i8 x i8 -> i32 body extends
/// before it multiplies). Float generics keep their per-op count.
bool multiplyAccumulatesIntegers(linalg::LinalgOp op) {
  if (op.getNumReductionLoops() == 0 || op->getNumRegions() != 1 ||
      op->getRegion(0).empty())
    return false;
  for (Value yielded : op.getBlock()->getTerminator()->getOperands()) {
    Operation *sum = throughCasts(yielded).getDefiningOp();
    if (!sum || !isa<arith::AddIOp>(sum))
      continue;
    for (Value term : sum->getOperands())
      if (Operation *product = throughCasts(term).getDefiningOp();
          product && isa<arith::MulIOp>(product))
        return true;
  }
  return false;
}

/// Arithmetic operations of one linalg op (the plan's `flops`; docs/design.md,
/// "Operation counts"): 2 per multiply-accumulate for contractions,
/// convolutions and pooling, whatever the element type (an i8 x i8 -> i32
/// product and its accumulation count 2, as an f32 FMA does), else one per
/// floating-point op in the body (integer elementwise arithmetic such as a
/// requantization is not counted), times the iteration count.
int64_t estimateFlops(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || isa<linalg::FillOp, linalg::CopyOp>(op))
    return 0;
  int64_t iterations = 1;
  for (int64_t r : linalgOp.getStaticLoopRanges())
    iterations *= std::max<int64_t>(r, 1);
  if (linalg::isaContractionOpInterface(linalgOp) ||
      isa<linalg::ConvolutionOpInterface>(op) ||
      multiplyAccumulatesIntegers(linalgOp))
    return 2 * iterations;
  int64_t perIteration = 0;
  op->getRegion(0).walk([&](Operation *inner) {
    if (inner->getNumResults() == 1 &&
        inner->getResult(0).getType().isa<FloatType>() &&
        !isa<arith::ConstantOp>(inner))
      ++perIteration;
  });
  return iterations * perIteration;
}

/// One dispatch region of @main being outlined: its ops (in @main's order)
/// and their boundary with the rest of @main.
struct DispatchGroup {
  int64_t id = 0;
  llvm::ArrayRef<Operation *> ops;
  llvm::SmallPtrSet<Operation *, 16> members;
  /// Values the group uses but does not define: bound as arguments
  /// (`inputs`, in first-use order) or rebuilt inside (`cloned`).
  llvm::SetVector<Value> inputs, cloned;
  /// Values the group defines that @main uses after it.
  llvm::SmallVector<Value> results;
};

/// The group's inputs and cloned values (operands and values used in the
/// ops' regions, defined outside the group) and its results (values used
/// outside it).
DispatchGroup boundaryOf(int64_t id, llvm::ArrayRef<Operation *> ops) {
  DispatchGroup g;
  g.id = id;
  g.ops = ops;
  g.members.insert(ops.begin(), ops.end());
  for (Operation *op : ops) {
    auto consider = [&](Value v) {
      Operation *def = v.getDefiningOp();
      if (def && g.members.count(def))
        return;
      if (isCloneable(v))
        g.cloned.insert(v);
      else
        g.inputs.insert(v);
    };
    for (Value v : op->getOperands())
      consider(v);
    llvm::SetVector<Value> above;
    for (Region &region : op->getRegions())
      getUsedValuesDefinedAbove(region, above);
    for (Value v : above)
      consider(v);
  }
  for (Operation *op : ops)
    for (Value r : op->getResults())
      if (llvm::any_of(r.getUsers(), [&](Operation *u) { return !g.members.count(u); }))
        g.results.push_back(r);
  return g;
}

/// The private function @main_dispatch_<id> before @main: arguments the
/// inputs, then one output per result; a body of the cloned values and
/// the group's ops (without their dispatch attribute), returning the
/// results. `b` is left inside the body.
func::FuncOp createFunction(OpBuilder &b, func::FuncOp main, const DispatchGroup &g) {
  llvm::SmallVector<Type> argTypes;
  for (Value v : g.inputs)
    argTypes.push_back(v.getType());
  for (Value r : g.results)
    argTypes.push_back(r.getType());
  llvm::SmallVector<Type> resultTypes;
  for (Value r : g.results)
    resultTypes.push_back(r.getType());

  b.setInsertionPoint(main);
  std::string name = "main_dispatch_" + std::to_string(g.id);
  auto fn = b.create<func::FuncOp>(g.ops.back()->getLoc(), name,
                                   b.getFunctionType(argTypes, resultTypes));
  fn.setPrivate();
  Block *entry = fn.addEntryBlock();
  b.setInsertionPointToEnd(entry);
  IRMapping map;
  for (auto [i, v] : llvm::enumerate(g.inputs))
    map.map(v, entry->getArgument(i));
  for (Value v : g.cloned)
    map.map(v, b.clone(*v.getDefiningOp())->getResult(0));
  for (Operation *op : g.ops) {
    Operation *copy = b.clone(*op, map);
    copy->removeAttr(kDispatchAttrName);
  }
  llvm::SmallVector<Value> mappedResults;
  for (Value r : g.results)
    mappedResults.push_back(map.lookup(r));
  b.create<func::ReturnOp>(g.ops.back()->getLoc(), mappedResults);
  return fn;
}

/// Whether `pad` (padding with the constant `padValue`, null if none) can
/// be written as a fill of its output then an insert of its source: static
/// source shape and low padding.
bool isStaticConstantPad(tensor::PadOp pad, Value padValue) {
  return pad && padValue && pad.getSourceType().hasStaticShape() &&
         pad.getStaticLow().size() == static_cast<size_t>(pad.getSourceType().getRank()) &&
         llvm::none_of(pad.getStaticLow(), ShapedType::isDynamic);
}

/// Destination passing: `fn`'s results (after its first `numInputs`
/// arguments come the outputs, one per result) are written into their
/// output argument: through the tensor.empty their destination starts
/// from, as a fill and insert for a static constant tensor.pad, else by a
/// copy. The arguments are marked writable exactly when they are outputs.
void passDestinations(OpBuilder &b, func::FuncOp fn, size_t numInputs) {
  Block *entry = &fn.getBody().front();
  auto returnOp = cast<func::ReturnOp>(entry->getTerminator());
  llvm::SmallVector<Value> results(returnOp.getOperands());
  for (auto [i, r] : llvm::enumerate(results)) {
    BlockArgument out = entry->getArgument(numInputs + i);
    if (OpOperand *use = findEmptyDestination(r)) {
      use->set(out);
      continue;
    }
    b.setInsertionPoint(returnOp);
    Value written;
    auto pad = r.getDefiningOp<tensor::PadOp>();
    Value padValue = pad ? pad.getConstantPaddingValue() : Value();
    if (isStaticConstantPad(pad, padValue)) {
      // tensor.pad -> fill the output with the pad value, then write the
      // source into its interior.
      Value filled = b.create<linalg::FillOp>(pad.getLoc(), padValue, Value(out)).getResult(0);
      SmallVector<OpFoldResult> offsets, sizes, strides;
      for (auto [lo, size] : llvm::zip(pad.getStaticLow(), pad.getSourceType().getShape())) {
        offsets.push_back(b.getIndexAttr(lo));
        sizes.push_back(b.getIndexAttr(size));
        strides.push_back(b.getIndexAttr(1));
      }
      written = b.create<tensor::InsertSliceOp>(pad.getLoc(), pad.getSource(), filled, offsets,
                                                sizes, strides);
      returnOp->setOperand(i, written);
      pad->erase();
      continue;
    }
    // Anything else: copy the result into the output argument.
    written = b.create<linalg::CopyOp>(r.getLoc(), r, Value(out)).getResult(0);
    returnOp->setOperand(i, written);
  }
  for (unsigned i = 0; i < fn.getNumArguments(); ++i)
    fn.setArgAttr(i, bufferization::BufferizationDialect::kWritableAttrName,
                  b.getBoolAttr(i >= numInputs));
}

/// Source operators: those of the computing ops, as "NAME#INDEX" strings.
/// A constant cloned into the region carries the location of the first
/// operator that read it (one model constant shared by many operators), so
/// constants count only in a region of constants alone.
ArrayAttr sourcesOf(Builder &b, llvm::ArrayRef<Operation *> ops) {
  llvm::SetVector<StringRef> sources;
  bool computes =
      llvm::any_of(ops, [](Operation *op) { return !op->hasTrait<OpTrait::ConstantLike>(); });
  for (Operation *op : ops)
    if (!computes || !op->hasTrait<OpTrait::ConstantLike>())
      collectSources(op->getLoc(), sources);
  llvm::SmallVector<Attribute> sourceAttrs;
  for (StringRef s : sources)
    sourceAttrs.push_back(b.getStringAttr(s));
  return b.getArrayAttr(sourceAttrs);
}

/// In-place candidates: when the region is one elementwise op, the
/// positions among the group's inputs of the op's inputs that have the
/// result's exact type and are read at the output's own index; they may
/// share the output's memory once nothing else needs them (the memory
/// planner decides; see BuildPlan.cpp). Empty otherwise.
SmallVector<int64_t> inplaceCandidates(const DispatchGroup &g) {
  SmallVector<int64_t> candidates;
  if (g.ops.size() != 1 || g.results.size() != 1)
    return candidates;
  auto generic = dyn_cast<linalg::GenericOp>(g.ops.front());
  if (!generic || generic.getNumParallelLoops() != generic.getNumLoops() ||
      generic.getNumDpsInits() != 1 || !generic.getIndexingMapsArray().back().isIdentity())
    return candidates;
  for (OpOperand *in : generic.getDpsInputOperands()) {
    if (in->get().getType() != g.results.front().getType() ||
        !generic.getMatchingIndexingMap(in).isIdentity())
      continue;
    auto it = llvm::find(g.inputs, in->get());
    if (it != g.inputs.end())
      candidates.push_back(it - g.inputs.begin());
  }
  return candidates;
}

/// The attributes the plan reads off the function (BuildPlan.cpp):
/// kiln.dispatch_id, kiln.flops (estimateFlops summed over the ops),
/// kiln.num_outputs, kiln.inplace_inputs (when there are candidates) and
/// kiln.sources.
void annotate(OpBuilder &b, func::FuncOp fn, const DispatchGroup &g) {
  ArrayAttr sources = sourcesOf(b, g.ops);
  int64_t flops = 0;
  for (Operation *op : g.ops)
    flops += estimateFlops(op);
  fn->setAttr("kiln.dispatch_id", b.getI64IntegerAttr(g.id));
  fn->setAttr("kiln.flops", b.getI64IntegerAttr(flops));
  fn->setAttr("kiln.num_outputs", b.getI64IntegerAttr(g.results.size()));
  if (SmallVector<int64_t> candidates = inplaceCandidates(g); !candidates.empty())
    fn->setAttr("kiln.inplace_inputs", b.getI64ArrayAttr(candidates));
  fn->setAttr("kiln.sources", sources);
}

/// Replaces the group in @main by a call of `fn` at the position of its
/// last op: the inputs, then a tensor.empty per result as its destination;
/// the results' uses take the call's results and the ops are erased.
void replaceByCall(OpBuilder &b, func::FuncOp fn, const DispatchGroup &g) {
  b.setInsertionPoint(g.ops.back());
  llvm::SmallVector<Value> callArgs(g.inputs.begin(), g.inputs.end());
  for (Value r : g.results) {
    auto type = r.getType().cast<RankedTensorType>();
    callArgs.push_back(
        b.create<tensor::EmptyOp>(r.getLoc(), type.getShape(), type.getElementType()));
  }
  auto call = b.create<func::CallOp>(g.ops.back()->getLoc(), fn, callArgs);
  call->setAttr("kiln.dispatch_id", b.getI64IntegerAttr(g.id));
  for (auto [r, v] : llvm::zip(g.results, call.getResults()))
    r.replaceAllUsesWith(v);
  for (Operation *op : llvm::reverse(g.ops))
    op->erase();
}

struct OutlineDispatchesPass
    : public PassWrapper<OutlineDispatchesPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(OutlineDispatchesPass)

  StringRef getArgument() const final { return "kiln-outline-dispatches"; }
  StringRef getDescription() const final {
    return "Outline each dispatch region into its own function";
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main || main.isExternal())
      return;
    std::map<int64_t, llvm::SmallVector<Operation *>> groups;
    for (Operation &op : main.getBody().front())
      if (auto id = op.getAttrOfType<IntegerAttr>(kDispatchAttrName))
        groups[id.getInt()].push_back(&op);
    for (auto &[id, ops] : groups)
      if (failed(outline(module, main, id, ops)))
        return signalPassFailure();
  }

  /// Outlines dispatch group `id` (`ops`, in @main's order) into the
  /// function @main_dispatch_<id> and calls it from @main in its place.
  LogicalResult outline(ModuleOp module, func::FuncOp main, int64_t id,
                        llvm::ArrayRef<Operation *> ops) {
    OpBuilder b(module.getContext());
    DispatchGroup group = boundaryOf(id, ops);
    func::FuncOp fn = createFunction(b, main, group);
    passDestinations(b, fn, group.inputs.size());
    annotate(b, fn, group);
    replaceByCall(b, fn, group);
    return success();
  }
};

} // namespace

std::unique_ptr<Pass> createOutlineDispatchesPass() {
  return std::make_unique<OutlineDispatchesPass>();
}

} // namespace kiln
