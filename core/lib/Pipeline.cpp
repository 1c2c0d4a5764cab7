//===- Pipeline.cpp - Kiln's pass pipelines --------------------------------===//
#include "Pipeline.h"

#include "Transforms/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/LLVMCommon/LoweringOptions.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/TosaToArith/TosaToArith.h"
#include "mlir/Conversion/TosaToLinalg/TosaToLinalg.h"
#include "mlir/Conversion/TosaToTensor/TosaToTensor.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/TensorTilingInterfaceImpl.h"
#include "mlir/Dialect/Linalg/Transforms/TilingInterfaceImpl.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Tosa/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace kiln {

void registerKilnDialects(DialectRegistry &registry) {
  registry.insert<AffineDialect, arith::ArithDialect,
                  bufferization::BufferizationDialect, cf::ControlFlowDialect,
                  func::FuncDialect, LLVM::LLVMDialect, linalg::LinalgDialect,
                  math::MathDialect, memref::MemRefDialect, scf::SCFDialect,
                  tensor::TensorDialect, tosa::TosaDialect,
                  vector::VectorDialect>();
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerTilingInterfaceExternalModels(registry);
  linalg::registerTilingInterfaceExternalModels(registry);
  registerLLVMDialectTranslation(registry);
}

void buildTosaToLinalgPipeline(OpPassManager &pm) {
  OpPassManager &fn = pm.nest<func::FuncOp>();
  // Moves layout transposes (ONNX's NCHW around every NHWC convolution and
  // pool) until they cancel, and folds BatchNormalization's per-channel
  // scale and shift into the convolution before it.
  fn.addPass(createSinkTransposesPass());
  // Rewrites tosa.transpose_conv2d into tosa.conv2d on a padded/reversed
  // input and fully_connected/depthwise special cases the lowerings expect.
  fn.addPass(tosa::createTosaOptionalDecompositions());
  // MLIR 16's 1x1 stride-1 depthwise decomposition multiplies a rank-5
  // view by a rank-4 weight and adds a rank-1 bias, which tosa-to-linalg
  // cannot legalize: equal ranks by reshapes (no-op for the importers'
  // ops, which have equal ranks already).
  fn.addPass(tosa::createTosaMakeBroadcastablePass());
  // Padded average pools with divisors that MLIR 16's lowering gets wrong
  // at strides above 1: a zero pad and a constant factor instead.
  fn.addPass(createExactAvgPoolDivisorsPass());
  // Max/min reductions return NaN for a row with a NaN even where their
  // loop is vectorized ignoring NaNs.
  fn.addPass(createReductionNaNFlagsPass());
  // Named ops first (conv, matmul, pooling) so tosa-to-linalg does not
  // claim them; then elementwise and reductions as linalg.generic.
  fn.addPass(tosa::createTosaToLinalgNamed());
  fn.addPass(tosa::createTosaToLinalg());
  // Max reductions and max pools from -inf, not the lowest finite float.
  fn.addPass(createMaxIdentityNegInfPass());
  // tosa.const -> arith; tosa.apply_scale (from tosa.rescale) -> 64-bit
  // arith with TOSA's double rounding; slices, pads, reshapes -> tensor.
  fn.addPass(tosa::createTosaToArith(/*includeApplyRescale=*/true,
                                     /*use32BitApplyRescale=*/false));
  fn.addPass(tosa::createTosaToTensor());
  // int8 convolutions and matmuls whose zero points the importer folded
  // away: the plain named ops, which the kernels below recognise.
  fn.addPass(createDropZeroPointsPass());
  // Folds the weight transposes the conv lowerings insert on constants, so
  // weights reach the artifact already in the kernel's layout.
  pm.addPass(createCanonicalizerPass());
  // Fuses chains of elementwise linalg.generic ops (bias + activation, ...)
  // so they run as one loop nest without intermediates, and folds the
  // layout transposes of constant weights. Dispatch-level fusion (the
  // --fusion switches) comes later, in kiln-form-dispatch-regions.
  pm.addNestedPass<func::FuncOp>(createFuseElementwisePass());
  pm.addPass(createCanonicalizerPass());
}

void buildDispatchPipeline(OpPassManager &pm, const DispatchOptions &options) {
  // Reshapes between a root and its elementwise consumer would block
  // fusion: fold them into the consumer's iteration space.
  pm.addNestedPass<func::FuncOp>(createCollapseReshapesPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Partition @main into dispatch regions and outline each into its own
  // destination-passing function.
  pm.addPass(createFormDispatchRegionsPass(options));
  pm.addPass(createOutlineDispatchesPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Workgroup tiling: outer tile loops become workgroup ids.
  pm.addPass(createTileAndDistributePass(options));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

namespace {

/// Evaluates the index computation `v` of a dispatch function for one
/// workgroup: its last three index arguments are the workgroup id (x, y,
/// z) = `id`; arith constants and integer ops and affine.apply/min/max are
/// folded. std::nullopt for anything else (a loaded value, a loop index).
std::optional<int64_t> evaluateIndex(Value v, const std::array<int64_t, 3> &id,
                                     ArrayRef<BlockArgument> idArgs, int depth = 0) {
  if (depth > 64)
    return std::nullopt;
  for (size_t k = 0; k < idArgs.size(); ++k)
    if (v == idArgs[k])
      return id[k];
  Operation *op = v.getDefiningOp();
  if (!op)
    return std::nullopt;
  if (auto c = dyn_cast<arith::ConstantIndexOp>(op))
    return c.value();
  SmallVector<int64_t> args;
  for (Value operand : op->getOperands()) {
    auto x = evaluateIndex(operand, id, idArgs, depth + 1);
    if (!x)
      return std::nullopt;
    args.push_back(*x);
  }
  if (isa<arith::AddIOp>(op))
    return args[0] + args[1];
  if (isa<arith::SubIOp>(op))
    return args[0] - args[1];
  if (isa<arith::MulIOp>(op))
    return args[0] * args[1];
  if (isa<arith::MinSIOp>(op))
    return std::min(args[0], args[1]);
  if (isa<arith::MaxSIOp>(op))
    return std::max(args[0], args[1]);
  AffineMap map;
  if (auto a = dyn_cast<AffineApplyOp>(op))
    map = a.getAffineMap();
  else if (auto a = dyn_cast<AffineMinOp>(op))
    map = a.getAffineMap();
  else if (auto a = dyn_cast<AffineMaxOp>(op))
    map = a.getAffineMap();
  else
    return std::nullopt;
  Builder b(op->getContext());
  SmallVector<Attribute> constants;
  for (int64_t x : args)
    constants.push_back(b.getIndexAttr(x));
  SmallVector<Attribute> results;
  if (failed(map.constantFold(constants, results)) || results.empty())
    return std::nullopt;
  SmallVector<int64_t> values;
  for (Attribute r : results)
    values.push_back(r.cast<IntegerAttr>().getInt());
  if (isa<AffineMinOp>(op))
    return *std::min_element(values.begin(), values.end());
  if (isa<AffineMaxOp>(op))
    return *std::max_element(values.begin(), values.end());
  return values.front();
}

/// The largest value of `size` over every workgroup of the dispatch `fn`
/// (its kiln.workgroup_count grid, at most 65536 workgroups).
std::optional<int64_t> largestOverWorkgroups(func::FuncOp fn, Value size) {
  auto grid = fn->getAttrOfType<ArrayAttr>("kiln.workgroup_count");
  SmallVector<BlockArgument> indexArgs;
  for (BlockArgument arg : fn.getArguments())
    if (arg.getType().isIndex())
      indexArgs.push_back(arg);
  if (!grid || grid.size() != 3 || indexArgs.size() < 3)
    return std::nullopt;
  ArrayRef<BlockArgument> ids = ArrayRef<BlockArgument>(indexArgs).take_back(3);
  std::array<int64_t, 3> count;
  for (int k = 0; k < 3; ++k)
    count[k] = grid[k].cast<IntegerAttr>().getInt();
  if (count[0] * count[1] * count[2] > 65536)
    return std::nullopt;
  std::optional<int64_t> largest;
  for (int64_t z = 0; z < count[2]; ++z)
    for (int64_t y = 0; y < count[1]; ++y)
      for (int64_t x = 0; x < count[0]; ++x) {
        auto value = evaluateIndex(size, {x, y, z}, ids);
        if (!value)
          return std::nullopt;
        largest = std::max(largest.value_or(*value), *value);
      }
  return largest;
}

} // namespace

/// A dispatch's stack temporary of `type`. A dynamic size (a partial
/// tile's extent) gets the largest value it takes over the dispatch's
/// workgroups (largestOverWorkgroups: the workgroup grid is static, so its
/// index arithmetic can be evaluated for each workgroup) and the temporary
/// a static alloca of that many bytes viewed at the run-time sizes
/// (memref.view), so LLVM records the kernel's stack frame in .stack_sizes
/// and a C module's RAM counts it. Otherwise a dynamic alloca.
static Value allocateTileTemporary(OpBuilder &b, Location loc, MemRefType type,
                                   ValueRange dynamicSizes, IntegerAttr align) {
  auto dynamic = [&] {
    return b.create<memref::AllocaOp>(loc, type, dynamicSizes, align).getResult();
  };
  auto fn = b.getInsertionBlock()->getParentOp()->getParentOfType<func::FuncOp>();
  if (!fn)
    fn = dyn_cast<func::FuncOp>(b.getInsertionBlock()->getParentOp());
  unsigned elementBits = type.getElementTypeBitWidth();
  if (!fn || dynamicSizes.empty() || elementBits % 8 != 0 || !type.getLayout().isIdentity() ||
      type.getMemorySpace())
    return dynamic();
  int64_t bytes = elementBits / 8;
  size_t next = 0;
  for (int64_t size : type.getShape()) {
    int64_t bound = size;
    if (ShapedType::isDynamic(size)) {
      std::optional<int64_t> largest = largestOverWorkgroups(fn, dynamicSizes[next++]);
      if (!largest || *largest < 0)
        return dynamic();
      bound = std::max<int64_t>(*largest, 1);
    }
    // 16 MiB: beyond that a static frame would only hide a bad tile.
    if (bound > (int64_t(16) << 20) / bytes)
      return dynamic();
    bytes *= bound;
  }
  auto raw = b.create<memref::AllocaOp>(loc, MemRefType::get({bytes}, b.getI8Type()),
                                        ValueRange(), align);
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  return b.create<memref::ViewOp>(loc, type, raw, zero, dynamicSizes).getResult();
}

void buildBufferizationPipeline(OpPassManager &pm) {
  // Large constants become @main arguments (bindings) so the artifact
  // carries them in its constants table and kernels read them in place.
  pm.addPass(createOutlineConstantsPass());
  // Every model output gets a value of its own (a copy of an input or
  // constant, a fill, or a copy of an output listed twice), so every
  // output slot is written by exactly one command.
  pm.addPass(createMaterializeOutputsPass());
  // tensor.empty has no buffer semantics; make allocations explicit.
  pm.addPass(bufferization::createEmptyTensorToAllocTensorPass());
  // Whole-module one-shot bufferization; function boundaries get plain
  // identity-layout memrefs (bare pointers later). Buffers @main needs are
  // memref.alloc (the memory planner places them in the arena); buffers
  // inside a dispatch are tile-local and go on the stack. Copies are
  // linalg.copy so they lower to loops, not to the C runner's memrefCopy.
  bufferization::OneShotBufferizationOptions options;
  options.bufferizeFunctionBoundaries = true;
  options.allowReturnAllocs = true;
  options.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  options.allocationFn = [](OpBuilder &b, Location loc, MemRefType type,
                            ValueRange dynamicSizes,
                            unsigned alignment) -> FailureOr<Value> {
    auto fn = b.getInsertionBlock()->getParentOp()->getParentOfType<func::FuncOp>();
    if (!fn)
      fn = dyn_cast<func::FuncOp>(b.getInsertionBlock()->getParentOp());
    auto align = b.getI64IntegerAttr(64);
    if (fn && fn.getSymName() == "main")
      return b.create<memref::AllocOp>(loc, type, dynamicSizes, align)
          .getResult();
    return allocateTileTemporary(b, loc, type, dynamicSizes, align);
  };
  options.deallocationFn = [](OpBuilder &b, Location loc,
                              Value buffer) -> LogicalResult {
    if (buffer.getDefiningOp<memref::AllocOp>())
      b.create<memref::DeallocOp>(loc, buffer);
    return success();
  };
  options.memCpyFn = [](OpBuilder &b, Location loc, Value from,
                        Value to) -> LogicalResult {
    b.create<linalg::CopyOp>(loc, from, to);
    return success();
  };
  pm.addPass(bufferization::createOneShotBufferizePass(options));
  // The globals it creates, in an order (and under names) fixed by the
  // module rather than by the bufferizer's pointer-keyed maps.
  pm.addPass(createOrderGlobalsPass());
  // Dispatches write their results into their output arguments: drop the
  // returned (equivalent) buffers. @main's results become out-parameters.
  pm.addPass(bufferization::createDropEquivalentBufferResultsPass());
  pm.addPass(bufferization::createBufferResultsToOutParamsPass());
  // That pass copies returned views into the out-parameters with memref.copy;
  // strided ones would need the C runner's memrefCopy.
  pm.addNestedPass<func::FuncOp>(createStridedCopiesToLinalgPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}


void buildDispatchLoweringPipeline(OpPassManager &pm, const KernelTarget &target) {
  // Stack temporaries allocated inside loops would grow the stack per
  // iteration: hoist them to the function entry.
  pm.addNestedPass<func::FuncOp>(bufferization::createBufferLoopHoistingPass());
  // Matmuls and convolutions: register-tiled vector kernels whose
  // accumulators stay in registers for the whole reduction.
  pm.addNestedPass<func::FuncOp>(createRegisterTileContractionsPass(target));
  pm.addPass(createCanonicalizerPass());
  // Innermost loop = the output's contiguous dimension, so the loops below
  // vectorize (broadcast-multiply-add over output channels).
  pm.addNestedPass<func::FuncOp>(createInterchangeForVectorizationPass());
  // exp and tanh as polynomial arithmetic, which LLVM vectorizes; left to
  // the lowering below, each lane would call libm.
  pm.addNestedPass<func::FuncOp>(createApproximateMathPass(target));
  // max/min that return NaN for a NaN (MLIR 16 lowers them to maxnum).
  pm.addNestedPass<func::FuncOp>(createPropagateNaNPass());
  // Scalar loops; LLVM's loop vectorizer and unroller take it from there.
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  // Static stack temporaries into the entry block, so LLVM sees a static
  // frame (kiln-hoist-static-allocas).
  pm.addNestedPass<func::FuncOp>(createHoistStaticAllocasPass());
  pm.addPass(createConvertSCFToCFPass());
  // Subviews -> explicit base/offset/strides arithmetic.
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // vector.load/store/maskedload/broadcast of the register-tiled kernels.
  pm.addPass(createConvertVectorToLLVMPass());
  // Math ops with an LLVM intrinsic first (exp, log, sqrt, pow), the rest
  // (tanh, erf, ...) as libm calls.
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createMemRefToLLVMConversionPass());
  // Static-shape memrefs cross the ABI as bare element pointers (the
  // pass's option, so the pipeline needs no context to be built).
  std::unique_ptr<Pass> funcToLLVM = createConvertFuncToLLVMPass();
  if (failed(funcToLLVM->initializeOptions("use-bare-ptr-memref-call-conv=1")))
    llvm::report_fatal_error("convert-func-to-llvm has no use-bare-ptr-memref-call-conv option");
  pm.addPass(std::move(funcToLLVM));
  pm.addPass(cf::createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

} // namespace kiln
