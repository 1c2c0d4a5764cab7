//===- DeduplicateDispatches.cpp - One kernel for identical dispatches ----===//
//
// See BuildPlan.h. Models repeat blocks: BlazeFace runs the same 3x3
// depthwise convolution on 8x8x96 four times, each on other weights. The
// weights are bindings, not part of the kernel, so the four dispatch
// functions are the same code; compiling it once saves LLVM time and
// executable bytes. IREE's DeduplicateExecutables pass does the same at the
// executable level.
//
//===----------------------------------------------------------------------===//
#include "BuildPlan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace mlir;

namespace kiln {

/// The text of `fn` without what differs between identical kernels: its
/// name and its dialect attributes ("kiln.*": dispatch id, source operators,
/// tiles and loop ranges, which the body already implies). Printed without
/// locations, so the source operators do not enter either.
static std::string kernelText(func::FuncOp fn) {
  auto copy = fn.clone();
  copy.setSymName("kernel");
  SmallVector<StringAttr> discardable;
  for (NamedAttribute attr : copy->getAttrs())
    if (attr.getName().getValue().contains('.'))
      discardable.push_back(attr.getName());
  for (StringAttr name : discardable)
    copy->removeAttr(name);
  std::string text;
  llvm::raw_string_ostream os(text);
  copy->print(os, OpPrintingFlags().useLocalScope());
  copy->erase();
  return os.str();
}

void deduplicateDispatches(ModuleOp module, CompilationPlan &plan) {
  std::map<int64_t, func::FuncOp> functionOf;
  for (auto fn : module.getOps<func::FuncOp>())
    if (auto id = fn->getAttrOfType<IntegerAttr>("kiln.dispatch_id"))
      functionOf[id.getInt()] = fn;
  // Key: the kernel text and the aliased bindings (the plan's, not in the
  // IR: two equal bodies whose bindings alias differently get different
  // noalias promises, hence different code).
  std::map<std::pair<std::string, std::vector<int64_t>>, std::string> first;
  for (Dispatch &d : plan.dispatches) {
    d.entryPoint = d.name;
    auto fn = functionOf.find(d.id);
    if (fn == functionOf.end())
      continue;
    auto [it, inserted] =
        first.try_emplace({kernelText(fn->second), d.aliasedBindings}, d.name);
    if (!inserted)
      d.entryPoint = it->second;
  }
}

void eraseDeduplicatedDispatches(ModuleOp module, const CompilationPlan &plan) {
  for (const Dispatch &d : plan.dispatches)
    if (d.entryPoint != d.name)
      if (auto fn = module.lookupSymbol<func::FuncOp>(d.name))
        fn.erase();
}

} // namespace kiln
