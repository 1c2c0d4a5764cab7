//===- PassRegistration.cpp - Kiln's passes and pipelines by name ---------===//
//
// Registers every pass of core/lib/Transforms under its argument and the
// phase pipelines of Pipeline.h, for kiln-opt (app/kiln-opt) and its lit
// tests (core/test). The compiler itself builds its pipelines directly.
//
//===----------------------------------------------------------------------===//
#include "Pipeline.h"
#include "Transforms/Passes.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include <memory>

namespace kiln {

using mlir::OpPassManager;
using mlir::Pass;

void registerKilnPasses(PassDefaults defaults) {
  auto shared = std::make_shared<PassDefaults>(std::move(defaults));
  auto target = [shared] { return shared->target ? shared->target() : KernelTarget(); };
  auto dispatch = [shared] { return shared->dispatch ? shared->dispatch() : DispatchOptions(); };
  // Passes that need nothing but the IR.
  for (std::unique_ptr<Pass> (*create)() :
       {&createSinkTransposesPass, &createOutlineConstantsPass, &createMaterializeOutputsPass,
        &createStridedCopiesToLinalgPass, &createHoistStaticAllocasPass,
        &createReductionNaNFlagsPass, &createMaxIdentityNegInfPass, &createPropagateNaNPass,
        &createOrderGlobalsPass, &createExactAvgPoolDivisorsPass, &createDropZeroPointsPass,
        &createFuseElementwisePass, &createCollapseReshapesPass, &createOutlineDispatchesPass})
    mlir::registerPass([create] { return create(); });
  mlir::registerPass([] { return createInterchangeForVectorizationPass(); });
  // Passes that take the target or the dispatch options.
  mlir::registerPass([dispatch] { return createFormDispatchRegionsPass(dispatch()); });
  mlir::registerPass([dispatch] { return createTileAndDistributePass(dispatch()); });
  mlir::registerPass([target] { return createRegisterTileContractionsPass(target()); });
  mlir::registerPass([target] { return createApproximateMathPass(target()); });
  auto inputs = [shared] { return shared->modelInputs ? shared->modelInputs() : 1u; };
  mlir::registerPass([target, inputs] { return createPackWeightsPass(target(), inputs()); });

  mlir::PassPipelineRegistration<>(
      "kiln-tosa-to-linalg", "Kiln's TOSA -> linalg on tensors phase (Pipeline.h)",
      [](OpPassManager &pm) { buildTosaToLinalgPipeline(pm); });
  mlir::PassPipelineRegistration<>(
      "kiln-dispatch", "Kiln's dispatch formation, outlining and workgroup tiling phase",
      [dispatch](OpPassManager &pm) { buildDispatchPipeline(pm, dispatch()); });
  mlir::PassPipelineRegistration<>(
      "kiln-bufferize", "Kiln's tensors -> buffers phase",
      [](OpPassManager &pm) { buildBufferizationPipeline(pm); });
  mlir::PassPipelineRegistration<>(
      "kiln-lower-dispatches", "Kiln's dispatch functions -> LLVM dialect phase",
      [target](OpPassManager &pm) { buildDispatchLoweringPipeline(pm, target()); });
}

} // namespace kiln
