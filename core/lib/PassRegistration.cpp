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
#include <vector>

namespace kiln {

using mlir::OpPassManager;
using mlir::Pass;

namespace {
/// kiln-interchange-for-vectorization-threshold's option: the pass's
/// minContiguousReduction (Passes.h), which kiln-interchange-for-vectorization
/// itself takes at its default of 8.
struct InterchangeThresholdOptions : mlir::PassPipelineOptions<InterchangeThresholdOptions> {
  Option<int64_t> minContiguousReduction{
      *this, "min-contiguous-reduction",
      llvm::cl::desc("shortest reduction over the inputs' contiguous dimension kept innermost"),
      llvm::cl::init(8)};
};

/// The options of kiln-form-dispatch-regions-with and
/// kiln-tile-and-distribute-with: DispatchOptions beyond kiln-opt's
/// --kiln-fusion and --kiln-workgroup-bytes (kiln compile --no-fusion,
/// --tile-sizes, a microcontroller's dividing tiles); the rest come from
/// the defaults.
struct DispatchPassOptions : mlir::PassPipelineOptions<DispatchPassOptions> {
  ListOption<int64_t> noFusion{*this, "no-fusion", llvm::cl::desc("dispatch ids not to fuse into")};
  Option<int64_t> tileDispatch{*this, "tile-dispatch", llvm::cl::init(0),
                               llvm::cl::desc("the dispatch id tile-sizes is for")};
  ListOption<int64_t> tileSizes{*this, "tile-sizes",
                                llvm::cl::desc("workgroup tile sizes of dispatch tile-dispatch")};
  Option<bool> dividingTiles{*this, "dividing-tiles", llvm::cl::init(false),
                             llvm::cl::desc("tiled outer loops get dividing tiles")};

  DispatchOptions apply(DispatchOptions options) const {
    options.noFusion.insert(noFusion.begin(), noFusion.end());
    if (!tileSizes.empty())
      options.tileSizes[tileDispatch] = std::vector<int64_t>(tileSizes.begin(), tileSizes.end());
    options.dividingTiles = options.dividingTiles || dividingTiles;
    return options;
  }
};
} // namespace

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
  // The same pass with another threshold, for its lit test:
  // func.func(kiln-interchange-for-vectorization-threshold{min-contiguous-reduction=32}).
  mlir::PassPipelineRegistration<InterchangeThresholdOptions>(
      "kiln-interchange-for-vectorization-threshold",
      "kiln-interchange-for-vectorization with another min-contiguous-reduction (on func.func)",
      [](OpPassManager &pm, const InterchangeThresholdOptions &options) {
        pm.addPass(createInterchangeForVectorizationPass(options.minContiguousReduction));
      });
  // Passes that take the target or the dispatch options.
  mlir::registerPass([dispatch] { return createFormDispatchRegionsPass(dispatch()); });
  // The same passes with more DispatchOptions, for their lit tests:
  // builtin.module(kiln-form-dispatch-regions-with{no-fusion=0}).
  mlir::PassPipelineRegistration<DispatchPassOptions>(
      "kiln-form-dispatch-regions-with",
      "kiln-form-dispatch-regions with no-fusion, tile-sizes, dividing-tiles (on the module)",
      [dispatch](OpPassManager &pm, const DispatchPassOptions &options) {
        pm.addPass(createFormDispatchRegionsPass(options.apply(dispatch())));
      });
  mlir::PassPipelineRegistration<DispatchPassOptions>(
      "kiln-tile-and-distribute-with",
      "kiln-tile-and-distribute with no-fusion, tile-sizes, dividing-tiles (on the module)",
      [dispatch](OpPassManager &pm, const DispatchPassOptions &options) {
        pm.addPass(createTileAndDistributePass(options.apply(dispatch())));
      });
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
