//===- Pipeline.h - Kiln's pass pipelines ----------------------*- C++ -*-===//
//
// The one place the compiler's phase pipelines are built, so the CLI and the
// workbench run exactly the same passes. Internal to core (includes MLIR).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CORE_PIPELINE_H
#define KILN_CORE_PIPELINE_H

#include <functional>

namespace mlir {
class OpPassManager;
class DialectRegistry;
} // namespace mlir

namespace kiln {

struct DispatchOptions;
struct KernelTarget;

/// Registers every dialect and external interface model the pipelines need.
void registerKilnDialects(mlir::DialectRegistry &registry);

/// TOSA (one func.func, static shapes) -> linalg on tensors.
/// Before: tosa.conv2d / tosa.add / ... ; after: linalg named and generic ops
/// on tensors, tensor.pad/extract_slice/collapse_shape, arith constants.
void buildTosaToLinalgPipeline(mlir::OpPassManager &pm);

/// linalg on tensors -> dispatch functions on tensors, tiled for workgroups.
/// Before: @main holds every linalg op. After: @main holds only constants,
/// views, tensor.empty and func.call @main_dispatch_N; each
/// @main_dispatch_N is destination-passing, tiled, and takes workgroup ids.
void buildDispatchPipeline(mlir::OpPassManager &pm,
                           const DispatchOptions &options);

/// Tensors -> buffers. After: @main takes (inputs, constants, outputs) as
/// memrefs and holds memref.alloc (transient buffers), views, copies and
/// calls; dispatch functions take memrefs and return nothing; tile-local
/// temporaries are stack allocations (memref.alloca), so kernels never
/// call malloc.
void buildBufferizationPipeline(mlir::OpPassManager &pm);

/// Dispatch functions on memrefs -> LLVM dialect with the bare-pointer
/// calling convention: `llvm.func @main_dispatch_N(%b0: !llvm.ptr<f32>,
/// ..., %x: i64, %y: i64, %z: i64)`. @main must have been removed (its
/// content is the plan, see core/lib/Schedule). Matmuls and convolutions
/// become register-tiled vector kernels for `target`
/// (kiln-register-tile-contractions).
void buildDispatchLoweringPipeline(mlir::OpPassManager &pm, const KernelTarget &target);

/// What registered passes and pipelines take that a command line does not
/// give: the kernel target and the dispatch options (kiln-opt's flags).
/// Called when a pipeline is parsed, i.e. after the flags are.
struct PassDefaults {
  std::function<KernelTarget()> target;
  std::function<DispatchOptions()> dispatch;
  /// Inputs of the model (@main's leading arguments; kiln-pack-weights).
  std::function<unsigned()> modelInputs;
};

/// Registers every Kiln pass under its argument (kiln-sink-transposes, ...)
/// and the four pipelines above as kiln-tosa-to-linalg, kiln-dispatch,
/// kiln-bufferize and kiln-lower-dispatches, so `kiln-opt` (app/kiln-opt)
/// runs any of them alone on a file. Passes that need a target or dispatch
/// options take them from `defaults`. Call once, before parsing flags.
void registerKilnPasses(PassDefaults defaults);

} // namespace kiln

#endif
