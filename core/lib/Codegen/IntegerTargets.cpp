//===- IntegerTargets.cpp - Targets without a floating-point unit ---------===//
//
// See IntegerTargets.h.
//
//===----------------------------------------------------------------------===//
#include "Codegen/IntegerTargets.h"

#include "kiln/Error.h"
#include "kiln/Targets.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"

#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Triple.h"

#include <optional>
#include <vector>

using namespace mlir;

namespace kiln {

bool targetHasFloatUnit(const llvm::TargetMachine &tm) {
  const llvm::Triple &triple = tm.getTargetTriple();
  const llvm::MCSubtargetInfo *sti = tm.getMCSubtargetInfo();
  if (triple.isARM() || triple.isThumb())
    return sti && sti->checkFeatures("+vfp2sp");
  if (triple.isRISCV())
    return sti && sti->checkFeatures("+f");
  return true;
}

/// The target as people name it: the --target= name whose triple `tm` has
/// (with the CPU where it is not that target's default), else the triple
/// and the CPU.
static std::string targetLabel(const llvm::TargetMachine &tm) {
  const std::string triple = tm.getTargetTriple().str();
  const std::string cpu = tm.getTargetCPU().str();
  if (const DeviceTarget *known = deviceTargetOfTriple(triple))
    return known->cpu == cpu ? known->name : std::string(known->name) + " (cpu " + cpu + ")";
  return "target '" + triple + "' (cpu " + cpu + ")";
}

/// "float32" for f32 (f16, bf16, f64 likewise), as .npy and TFLite name them.
static std::string floatName(FloatType type) {
  if (type.isBF16())
    return "bfloat16";
  return "float" + std::to_string(type.getWidth());
}

/// The float element type of `type` (a scalar or a shaped type), if any.
static std::optional<FloatType> floatElementOf(Type type) {
  if (auto f = getElementTypeOrSelf(type).dyn_cast<FloatType>())
    return f;
  return std::nullopt;
}

/// The source operators an operation was imported from ("CONV_2D#3", the
/// importers' NameLocs; several where a rewrite fused operations), none in
/// TOSA .mlir input.
static void collectSources(Location loc, std::vector<std::string> &out) {
  if (auto name = loc.dyn_cast<NameLoc>()) {
    if (name.getName().getValue().contains('#'))
      out.push_back(name.getName().str());
    else
      collectSources(name.getChildLoc(), out);
  } else if (auto fused = loc.dyn_cast<FusedLoc>()) {
    for (Location l : fused.getLocations())
      collectSources(l, out);
  }
}

static std::vector<std::string> sourcesOf(Operation *op) {
  std::vector<std::string> out;
  collectSources(op->getLoc(), out);
  return out;
}

/// How a message names the operation `op`: "operator CONV_2D #3" (its
/// source operators), else "the operation at line 5" (a .mlir file), else
/// its name.
static std::string describe(Operation *op) {
  std::vector<std::string> sources = sourcesOf(op);
  if (!sources.empty()) {
    std::string text = sources.size() > 1 ? "operators " : "operator ";
    for (size_t i = 0; i < sources.size(); ++i) {
      auto [name, index] = llvm::StringRef(sources[i]).rsplit('#');
      text += (i ? ", " : "") + name.str() + " #" + index.str();
    }
    return text;
  }
  if (auto line = op->getLoc()->findInstanceOf<FileLineColLoc>())
    return "the operation at line " + std::to_string(line.getLine());
  return "'" + op->getName().getStringRef().str() + "'";
}

/// Whether a float result of `producer` used by `user` passes between
/// source operators: `user` is the model's return, or the two share no
/// source operator (always, when `producer` has none).
static bool crossesOperators(Operation *producer, Operation *user) {
  if (isa<func::ReturnOp>(user))
    return true;
  std::vector<std::string> from = sourcesOf(producer), to = sourcesOf(user);
  for (const std::string &s : from)
    if (llvm::is_contained(to, s))
      return false;
  return true;
}

/// The first float tensor that one operator hands to another (or to the
/// model's outputs), as "float32 (operator ADD #0: its output is
/// float32)"; "" if floats stay inside operators.
static std::string floatBetweenOperators(func::FuncOp main) {
  for (Operation &op : main.getBody().front()) {
    // Constants and empty tensors carry no computed values; their users
    // are checked.
    if (op.hasTrait<OpTrait::ConstantLike>() || op.getName().getStringRef() == "tensor.empty")
      continue;
    for (Value result : op.getResults()) {
      std::optional<FloatType> f = floatElementOf(result.getType());
      if (!f)
        continue;
      for (Operation *user : result.getUsers())
        if (crossesOperators(&op, user))
          return floatName(*f) + " (" + describe(&op) + ": its output is " + floatName(*f) + ")";
    }
  }
  for (auto [i, arg] : llvm::enumerate(main.getArguments()))
    if (auto f = floatElementOf(arg.getType()))
      return floatName(*f) + " (model input " + std::to_string(i) + " is " + floatName(*f) + ")";
  return "";
}

llvm::Error checkIntegerOnlyTarget(ModuleOp module, const llvm::TargetMachine &tm,
                                   const std::string &source) {
  if (targetHasFloatUnit(tm))
    return llvm::Error::success();
  auto main = module.lookupSymbol<func::FuncOp>("main");
  std::string use = main ? floatBetweenOperators(main) : "";
  if (use.empty())
    return llvm::Error::success();
  return makeError(targetLabel(tm) + " has no FPU: Kiln compiles only integer models for it; " +
                   source + " computes in " + use);
}

} // namespace kiln
