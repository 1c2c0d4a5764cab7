//===- BuildPlan.h - Schedule and memory plan from bufferized @main -*- C++ -*-===//
//
// Reads @main after buildBufferizationPipeline (memref.alloc, views,
// copies, func.call @main_dispatch_N) and decides, ahead of time: the
// execution wave of every command (ASAP over data dependencies), the
// barriers between waves, the liveness of every transient buffer and its
// arena offset (kiln/MemoryPlanner.h). Internal to core.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CORE_SCHEDULE_BUILDPLAN_H
#define KILN_CORE_SCHEDULE_BUILDPLAN_H

#include "kiln/Plan.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace kiln {

/// Rewrites @main so that a transient buffer whose last use is a copy into
/// a model output becomes (a view of) that output: the producing dispatch
/// then writes the output directly and the copy disappears.
void coalesceOutputCopies(mlir::ModuleOp module);

/// Builds the plan of the bufferized module. @main's arguments are
/// `numInputs` inputs, then `numConstants` constants, then the outputs, one
/// per entry of `outputNames` (the model's output tensor names in signature
/// order; plan.outputs binds each slot). With state (`stateNames`, the
/// variables in kStateVariablesAttr order), the last stateNames.size()
/// inputs are the variables' values at the start of an invocation and the
/// outputs after the model's their values at the end: each variable gets a
/// State buffer in the arena's persistent region, its final value a
/// transient buffer, and one copy from that into the State buffer after
/// every read (CompilationPlan::state). Errors are internal (an op @main
/// should not contain).
llvm::Expected<CompilationPlan> buildPlan(mlir::ModuleOp module, size_t numInputs,
                                          size_t numConstants,
                                          const std::vector<std::string> &outputNames,
                                          const std::vector<std::string> &stateNames = {});

/// Sets every dispatch's `entryPoint`: its own name, or the name of the
/// first dispatch (in plan order) whose function is the same kernel: equal
/// text once the name, the dialect ("kiln.*") attributes and the locations
/// are dropped, and equal `aliasedBindings`. Runs after buildPlan (which gives
/// the aliased bindings); changes nothing in `module`.
void deduplicateDispatches(mlir::ModuleOp module, CompilationPlan &plan);

/// Erases the functions of the dispatches that deduplicateDispatches
/// pointed at another's entry point. Call once @main (which calls them) is
/// gone, before lowering the kernels.
void eraseDeduplicatedDispatches(mlir::ModuleOp module, const CompilationPlan &plan);

} // namespace kiln

#endif
