//===- BoundsChecks.h - --check-bounds kernels ------------------*- C++ -*-===//
//
// `--check-bounds` builds: every load, store and memory intrinsic of a
// dispatch's kernel whose address derives from one of its bindings is
// checked against that binding's extent before it runs. A violation is
// recorded in the executable's exported `__kiln_bounds_report` (the first
// one wins, atomically) and the workgroup returns without the access; the
// runtime reads the report after each wave and fails the invocation with
// KILN_OUT_OF_RANGE naming the dispatch, binding, offset and extent
// (runtime/src/bounds_report.h holds the record's layout, kiln_bounds_
// report_t, shared by both sides).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CORE_CODEGEN_BOUNDSCHECKS_H
#define KILN_CORE_CODEGEN_BOUNDSCHECKS_H

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace llvm {
class Function;
class Module;
} // namespace llvm

namespace kiln {

/// Name of the report record every checked executable exports.
inline constexpr const char *kBoundsReportSymbol = "__kiln_bounds_report";

/// Instruments `kernel` (a translated dispatch function: binding i is
/// argument i, a bare pointer to `bindingBytes[i]` bytes; it returns void)
/// in place, before LLVM optimizes it. `label` names the dispatch in the
/// report ("main_dispatch_4 (MaxPool #2)"). Accesses whose address does not
/// derive from a binding (stack tiles, globals) are left alone. Returns the
/// number of accesses checked; an error if the kernel is not of that form.
llvm::Expected<unsigned> instrumentBoundsChecks(llvm::Module &module, llvm::Function &kernel,
                                                const std::vector<uint64_t> &bindingBytes,
                                                const std::string &label);

} // namespace kiln

#endif
