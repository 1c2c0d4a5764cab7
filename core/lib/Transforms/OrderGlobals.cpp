//===- OrderGlobals.cpp - memref.globals named and placed by first use ----===//
//
// See Passes.h for what holds before and after.
//
//===----------------------------------------------------------------------===//
#include "Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/Pass.h"

#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <limits>

using namespace mlir;

namespace kiln {
namespace {

/// "1x64x64x4xf32" for memref<1x64x64x4xf32>.
std::string shapeName(MemRefType type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  for (int64_t d : type.getShape())
    os << d << "x";
  os << type.getElementType();
  return os.str();
}

struct OrderGlobalsPass : public PassWrapper<OrderGlobalsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(OrderGlobalsPass)

  StringRef getArgument() const final { return "kiln-order-globals"; }
  StringRef getDescription() const final {
    return "Names and places memref.globals by their first use (reproducible builds)";
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<memref::GlobalOp> globals;
    for (auto global : module.getOps<memref::GlobalOp>())
      globals.push_back(global);
    if (globals.empty())
      return;
    // The position of each global's first memref.get_global in the
    // module's order (functions and ops as they stand, which the earlier
    // passes fix); unused globals after every used one.
    llvm::StringMap<size_t> firstUse;
    size_t position = 0;
    module.walk([&](memref::GetGlobalOp get) {
      firstUse.try_emplace(get.getName(), position++);
    });
    auto key = [&](memref::GlobalOp g) {
      auto it = firstUse.find(g.getSymName());
      return it == firstUse.end() ? std::numeric_limits<size_t>::max() : it->second;
    };
    std::stable_sort(globals.begin(), globals.end(),
                     [&](memref::GlobalOp a, memref::GlobalOp b) {
                       if (key(a) != key(b))
                         return key(a) < key(b);
                       return a.getSymName() < b.getSymName(); // unused ones
                     });
    // Two renames, so no new name collides with an old one on the way.
    for (int round = 0; round < 2; ++round)
      for (size_t k = 0; k < globals.size(); ++k) {
        memref::GlobalOp g = globals[k];
        std::string name = (round == 0 ? "__kiln_renaming_" : "__constant_") +
                           std::to_string(k) + "_" + shapeName(g.getType());
        StringAttr attr = StringAttr::get(&getContext(), name);
        if (failed(SymbolTable::replaceAllSymbolUses(g, attr, module))) {
          g.emitError("cannot rename the global's uses");
          return signalPassFailure();
        }
        SymbolTable::setSymbolName(g, attr);
      }
    // At the top of the module, in that order.
    Block *body = module.getBody();
    for (auto it = globals.rbegin(); it != globals.rend(); ++it)
      (*it)->moveBefore(body, body->begin());
  }
};

} // namespace

std::unique_ptr<Pass> createOrderGlobalsPass() { return std::make_unique<OrderGlobalsPass>(); }

} // namespace kiln
