//===- kiln-opt - Kiln's passes, one at a time, on a .mlir file ----------===//
//
// MLIR's opt driver (MlirOptMain) with Kiln's dialects, passes and phase
// pipelines registered beside MLIR's own, as every MLIR project has:
//
//   kiln-opt model.mlir --kiln-sink-transposes
//   kiln-opt model.mlir --kiln-tosa-to-linalg --kiln-dispatch
//   kiln-opt dispatch.mlir --kiln-register-tile-contractions --kiln-vector-lanes=8
//
// The lit tests of core/test run it (CTest `Lit`). Passes that need a
// kernel target or dispatch options read them from the --kiln-* flags
// below (defaults: generic x86-64, SSE: 4 f32 lanes, 16 registers).
//
//===----------------------------------------------------------------------===//
#include "Pipeline.h"
#include "Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"

namespace cl = llvm::cl;

static cl::OptionCategory kilnOptCategory("Kiln pass defaults");
static cl::opt<int64_t> vectorLanes("kiln-vector-lanes", cl::init(4), cl::cat(kilnOptCategory),
                                    cl::desc("f32 lanes of one SIMD register (KernelTarget)"));
static cl::opt<int64_t> vectorRegisters("kiln-vector-registers", cl::init(16),
                                        cl::cat(kilnOptCategory),
                                        cl::desc("SIMD registers (KernelTarget)"));
static cl::opt<bool> hasFma("kiln-fma", cl::init(true), cl::cat(kilnOptCategory),
                         cl::desc("the target has fused multiply-add (KernelTarget)"));
static cl::opt<int64_t> workgroupBytes("kiln-workgroup-bytes", cl::init(64 * 1024),
                                       cl::cat(kilnOptCategory),
                                       cl::desc("tile budget of one workgroup, bytes"));
static cl::opt<bool> fusion("kiln-fusion", cl::init(true), cl::cat(kilnOptCategory),
                            cl::desc("fuse elementwise consumers into dispatches"));
static cl::opt<unsigned> modelInputs("kiln-model-inputs", cl::init(1), cl::cat(kilnOptCategory),
                                     cl::desc("model inputs before the constants (kiln-pack-weights)"));

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  kiln::PassDefaults defaults;
  defaults.target = [] {
    kiln::KernelTarget t;
    t.vectorLanes = vectorLanes;
    t.vectorRegisters = vectorRegisters;
    t.fma = hasFma;
    t.workgroupBytes = workgroupBytes;
    return t;
  };
  defaults.dispatch = [] {
    kiln::DispatchOptions d;
    d.fusion = fusion;
    d.workgroupBytes = workgroupBytes;
    d.vectorBytes = 4 * vectorLanes;
    return d;
  };
  defaults.modelInputs = [] { return unsigned(modelInputs); };
  kiln::registerKilnPasses(std::move(defaults));
  mlir::DialectRegistry registry;
  kiln::registerKilnDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Kiln's passes and pipelines (MLIR 16 opt driver)", registry));
}
