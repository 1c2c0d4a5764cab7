//===- PackWeights.cpp - Constant weights into the kernels' panel layout --===//
//
// See Passes.h for what holds before and after. The panel layout is the
// packed B operand of the BLIS microkernel (Van Zee and van de Geijn,
// "BLIS: A Framework for Rapidly Instantiating BLAS Functionality", ACM
// TOMS 41(3), 2015, section 2): the columns one register block covers,
// for every reduction step, stored next to each other, so the kernel's
// weight loads walk memory sequentially instead of at the row stride N.
//
//===----------------------------------------------------------------------===//
#include "Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <map>

using namespace mlir;

namespace kiln {

int64_t panelOffsetOf(const PanelLayout &layout, int64_t k, int64_t n) {
  const int64_t start = n - n % layout.panel;
  const int64_t width = std::min(layout.panel, layout.columns - start);
  return start * layout.rows + k * width + (n - start);
}

namespace {

/// Whether the index `v` is a multiple of `factor` for every value its
/// operands can take: a constant, an affine.apply whose expression is
/// (AffineExpr::isMultipleOf), or a product or sum of such values.
bool isMultipleOf(Value v, int64_t factor) {
  if (std::optional<int64_t> c = getConstantIntValue(v))
    return *c % factor == 0;
  if (auto apply = v.getDefiningOp<AffineApplyOp>())
    return apply.getAffineMap().getResult(0).isMultipleOf(factor);
  if (auto mul = v.getDefiningOp<arith::MulIOp>()) {
    std::optional<int64_t> l = getConstantIntValue(mul.getLhs()),
                           r = getConstantIntValue(mul.getRhs());
    return (l && *l % factor == 0) || (r && *r % factor == 0);
  }
  if (auto add = v.getDefiningOp<arith::AddIOp>())
    return isMultipleOf(add.getLhs(), factor) && isMultipleOf(add.getRhs(), factor);
  return false;
}

/// How one dispatch argument would be read as packed weights: the op that
/// reads it as its B operand, and the panel width that op's register tile
/// needs.
struct PackedUse {
  func::FuncOp callee;
  unsigned argument = 0;
  int64_t panel = 0;
};

/// The PackedUse of argument `index` of `callee`, or a reason why not. The
/// argument must be read only by a linalg.matmul or NHWC/HWCF convolution
/// as its weights (operand 1), directly or through one subview that slices
/// only the last (column) dimension; that op must get a register tile
/// (registerTileFor) whose column block of `panel` columns is narrower than
/// N; and every workgroup's slice must start on a panel boundary and cover
/// whole panels, or cover all N columns.
FailureOr<PackedUse> packedUseOf(func::FuncOp callee, unsigned index,
                                 const KernelTarget &target, std::string &why) {
  BlockArgument arg = callee.getArgument(index);
  auto type = arg.getType().dyn_cast<MemRefType>();
  if (!type || !type.hasStaticShape() || !type.getLayout().isIdentity() ||
      type.getRank() < 2) {
    why = "not a static identity-layout memref of rank 2 or more";
    return failure();
  }
  if (!arg.hasOneUse()) {
    why = "read by more than one op";
    return failure();
  }
  Operation *user = *arg.getUsers().begin();
  Value weights = arg;
  OpFoldResult columnOffset = OpBuilder(arg.getContext()).getIndexAttr(0);
  int64_t sliceColumns = type.getShape().back();
  if (auto subview = dyn_cast<memref::SubViewOp>(user)) {
    const int64_t rank = type.getRank();
    for (int64_t d = 0; d < rank; ++d) {
      std::optional<int64_t> offset = getConstantIntValue(subview.getMixedOffsets()[d]);
      std::optional<int64_t> size = getConstantIntValue(subview.getMixedSizes()[d]);
      std::optional<int64_t> stride = getConstantIntValue(subview.getMixedStrides()[d]);
      if (!size || stride != 1 || (d + 1 < rank && (offset != 0 || *size != type.getDimSize(d)))) {
        why = "sliced along a dimension other than the columns";
        return failure();
      }
    }
    if (!subview->hasOneUse()) {
      why = "its slice is read by more than one op";
      return failure();
    }
    columnOffset = subview.getMixedOffsets().back();
    sliceColumns = *getConstantIntValue(subview.getMixedSizes().back());
    weights = subview.getResult();
    user = *subview->getUsers().begin();
  }
  if (!isa<linalg::MatmulOp, linalg::Conv2DNhwcHwcfOp>(user) ||
      cast<linalg::LinalgOp>(user).getDpsInputOperand(1)->get() != weights ||
      (isa<linalg::MatmulOp>(user) && type.getRank() != 2)) {
    why = "not the weights of a matmul or NHWC/HWCF convolution";
    return failure();
  }
  std::optional<RegisterTile> tile = registerTileFor(user, target, &why);
  if (!tile)
    return failure();
  const int64_t panel = tile->vectors * tile->lanes;
  const int64_t columns = type.getShape().back();
  if (columns <= panel) {
    why = "already one panel (N <= the kernel's column block)";
    return failure();
  }
  std::optional<int64_t> staticOffset = getConstantIntValue(columnOffset);
  const bool whole = sliceColumns == columns && staticOffset == 0;
  const bool aligned =
      sliceColumns % panel == 0 &&
      (staticOffset ? *staticOffset % panel == 0
                    : isMultipleOf(columnOffset.get<Value>(), panel));
  if (!whole && !aligned) {
    why = "workgroup slices do not start on panel boundaries";
    return failure();
  }
  return PackedUse{callee, index, panel};
}

/// `value` (f32, K x N flattened row-major, N the last dimension) in the
/// panel layout, 1-D.
DenseElementsAttr pack(DenseElementsAttr value, const PanelLayout &layout) {
  std::vector<float> source(value.getValues<float>().begin(), value.getValues<float>().end());
  std::vector<float> packed(source.size());
  for (int64_t k = 0; k < layout.rows; ++k)
    for (int64_t n = 0; n < layout.columns; ++n)
      packed[panelOffsetOf(layout, k, n)] = source[k * layout.columns + n];
  auto type = RankedTensorType::get({int64_t(packed.size())},
                                    Float32Type::get(value.getContext()));
  return DenseElementsAttr::get(type, llvm::ArrayRef<float>(packed));
}

/// Gives `fn`'s argument `index` the type `type` (the function type too).
void setArgumentType(func::FuncOp fn, unsigned index, Type type) {
  fn.getArgument(index).setType(type);
  SmallVector<Type> inputs(fn.getArgumentTypes());
  inputs[index] = type;
  fn.setType(FunctionType::get(fn.getContext(), inputs, fn.getResultTypes()));
}

struct PackWeightsPass : public PassWrapper<PackWeightsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(PackWeightsPass)

  PackWeightsPass() = default;
  PackWeightsPass(const KernelTarget &target, unsigned numInputs)
      : target(target), numInputs(numInputs) {}

  StringRef getArgument() const final { return "kiln-pack-weights"; }
  StringRef getDescription() const final {
    return "Constant matmul and convolution weights -> the kernels' panel layout";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect, memref::MemRefDialect>();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto main = module.lookupSymbol<func::FuncOp>("main");
    auto entries = module->getAttrOfType<ArrayAttr>(kConstantsAttrName);
    if (!main || !entries)
      return;
    SmallVector<Attribute> newEntries(entries.begin(), entries.end());
    for (unsigned i = 0; i < entries.size(); ++i) {
      if (numInputs + i >= main.getNumArguments())
        break;
      auto dict = entries[i].cast<DictionaryAttr>();
      auto value = dict.getAs<DenseElementsAttr>("value");
      if (!value || !value.getElementType().isF32() || value.isSplat())
        continue;
      BlockArgument arg = main.getArgument(numInputs + i);
      std::optional<SmallVector<PackedUse>> uses = packedUsesOf(module, arg);
      if (!uses || uses->empty())
        continue;
      auto type = arg.getType().cast<MemRefType>();
      PanelLayout layout{type.getNumElements() / type.getShape().back(),
                         type.getShape().back(), uses->front().panel};
      auto packedType = MemRefType::get({type.getNumElements()}, type.getElementType());
      NamedAttrList fields(dict);
      fields.set("value", pack(value, layout));
      newEntries[i] = fields.getDictionary(&getContext());
      setArgumentType(main, arg.getArgNumber(), packedType);
      for (const PackedUse &use : *uses)
        rewriteUse(use, type, layout.panel);
    }
    module->setAttr(kConstantsAttrName, ArrayAttr::get(&getContext(), newEntries));
  }

  /// Every use of @main's constant argument `arg` as packable weights, with
  /// one panel width; nullopt if any use is not packable (the constant
  /// then keeps its layout for all of them).
  std::optional<SmallVector<PackedUse>> packedUsesOf(ModuleOp module, BlockArgument arg) {
    SmallVector<PackedUse> uses;
    for (OpOperand &use : arg.getUses()) {
      auto call = dyn_cast<func::CallOp>(use.getOwner());
      auto callee = call ? module.lookupSymbol<func::FuncOp>(call.getCallee()) : nullptr;
      if (!callee || !callee->hasAttr("kiln.dispatch_id") || callee.isExternal())
        return std::nullopt;
      // One call site per dispatch function (kiln-outline-dispatches).
      std::optional<SymbolTable::UseRange> symbolUses = callee.getSymbolUses(module);
      if (!symbolUses || std::distance(symbolUses->begin(), symbolUses->end()) != 1)
        return std::nullopt;
      std::string why;
      FailureOr<PackedUse> packed = packedUseOf(callee, use.getOperandNumber(), target, why);
      if (failed(packed) || (!uses.empty() && packed->panel != uses.front().panel))
        return std::nullopt;
      uses.push_back(*packed);
    }
    return uses;
  }

  /// Inside the dispatch: the argument becomes the packed 1-D buffer, read
  /// through an unrealized cast to its former type that records the panel
  /// width (kiln-register-tile-contractions indexes the packed buffer and
  /// erases the cast).
  void rewriteUse(PackedUse use, MemRefType logicalType, int64_t panel) {
    BlockArgument arg = use.callee.getArgument(use.argument);
    auto packedType = MemRefType::get({logicalType.getNumElements()}, logicalType.getElementType());
    setArgumentType(use.callee, use.argument, packedType);
    OpBuilder b = OpBuilder::atBlockBegin(&use.callee.getBody().front());
    auto cast = b.create<UnrealizedConversionCastOp>(arg.getLoc(), logicalType, ValueRange{arg});
    cast->setAttr(kPanelColumnsAttrName, b.getI64IntegerAttr(panel));
    arg.replaceAllUsesExcept(cast.getResult(0), cast);
  }

  KernelTarget target;
  unsigned numInputs = 0;
};

} // namespace

std::unique_ptr<Pass> createPackWeightsPass(const KernelTarget &target, unsigned numInputs) {
  return std::make_unique<PackWeightsPass>(target, numInputs);
}

} // namespace kiln
