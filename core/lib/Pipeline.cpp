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
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Tosa/Transforms/Passes.h"
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
                  tensor::TensorDialect, tosa::TosaDialect>();
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  registerLLVMDialectTranslation(registry);
}

void buildTosaToLinalgPipeline(PassManager &pm) {
  OpPassManager &fn = pm.nest<func::FuncOp>();
  // Rewrites tosa.transpose_conv2d into tosa.conv2d on a padded/reversed
  // input and fully_connected/depthwise special cases the lowerings expect.
  fn.addPass(tosa::createTosaOptionalDecompositions());
  // Named ops first (conv, matmul, pooling) so tosa-to-linalg does not
  // claim them; then elementwise and reductions as linalg.generic.
  fn.addPass(tosa::createTosaToLinalgNamed());
  fn.addPass(tosa::createTosaToLinalg());
  // tosa.const / tosa.apply_scale -> arith; slices, pads, reshapes -> tensor.
  fn.addPass(tosa::createTosaToArith());
  fn.addPass(tosa::createTosaToTensor());
  // Folds the weight transposes the conv lowerings insert on constants, so
  // weights reach the artifact already in the kernel's layout.
  pm.addPass(createCanonicalizerPass());
  // Fuses chains of elementwise linalg.generic ops (bias + activation, ...)
  // so they run as one loop nest without intermediates.
  pm.addNestedPass<func::FuncOp>(createLinalgElementwiseOpFusionPass());
  pm.addPass(createCanonicalizerPass());
}

void buildLinalgToLLVMPipeline(PassManager &pm) {
  MLIRContext *context = pm.getContext();
  // Large constants become function arguments (bindings) so the artifact
  // carries them in its constants table and kernels read them in place.
  pm.addPass(createOutlineConstantsPass());
  // tensor.empty has no buffer semantics; make allocations explicit.
  pm.addPass(bufferization::createEmptyTensorToAllocTensorPass());
  // Whole-module one-shot bufferization; function boundaries get plain
  // identity-layout memrefs (bare pointers later). Copies are emitted as
  // linalg.copy so they lower to loops rather than to the C runner's
  // `memrefCopy`, which the runtime does not ship.
  bufferization::OneShotBufferizationOptions options;
  options.bufferizeFunctionBoundaries = true;
  options.allowReturnAllocs = true;
  options.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  options.memCpyFn = [](OpBuilder &b, Location loc, Value from,
                        Value to) -> LogicalResult {
    b.create<linalg::CopyOp>(loc, from, to);
    return success();
  };
  pm.addPass(bufferization::createOneShotBufferizePass(options));
  // Destination-passing ABI: returned buffers become caller-owned outputs.
  pm.addPass(bufferization::createBufferResultsToOutParamsPass());
  // That pass copies returned views into the out-parameters with memref.copy.
  pm.addNestedPass<func::FuncOp>(createStridedCopiesToLinalgPass());
  pm.addNestedPass<func::FuncOp>(bufferization::createBufferDeallocationPass());
  pm.addPass(createCanonicalizerPass());
  // Scalar loops; LLVM's loop vectorizer and unroller take it from there.
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createConvertSCFToCFPass());
  // Subviews -> explicit base/offset/strides arithmetic.
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // Math ops with an LLVM intrinsic first (exp, log, sqrt, pow), the rest
  // (tanh, erf, ...) as libm calls.
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createMemRefToLLVMConversionPass());
  // Static-shape memrefs cross the ABI as bare element pointers.
  LowerToLLVMOptions llvmOptions(context);
  llvmOptions.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(llvmOptions));
  pm.addPass(cf::createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

} // namespace kiln
