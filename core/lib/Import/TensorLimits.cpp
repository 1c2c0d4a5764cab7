//===- TensorLimits.cpp - Tensors the target can hold ---------------------===//
//
// Every shape of the imported module is multiplied out once, with overflow
// checks, and compared with the largest buffer the build may ask the device
// for. Later phases (planner, artifact and C module writers) multiply the
// same shapes with plain arithmetic: this check is what makes that safe.
//
//===----------------------------------------------------------------------===//
#include "Import/Import.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;

namespace kiln {

std::string shapeString(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

void describeLocation(Location loc, std::string &op, std::string &tensor) {
  if (auto name = loc.dyn_cast<NameLoc>()) {
    llvm::StringRef text = name.getName().getValue();
    if (op.empty() && text.contains('#'))
      op = text.str();
    else if (tensor.empty())
      tensor = text.str();
    describeLocation(name.getChildLoc(), op, tensor);
  } else if (auto fused = loc.dyn_cast<FusedLoc>()) {
    for (Location l : fused.getLocations())
      describeLocation(l, op, tensor);
  }
}

/// "RESIZE_BILINEAR#0" -> "output of operator #0 RESIZE_BILINEAR", as the
/// importer's own messages name operators.
static std::string operatorPhrase(llvm::StringRef op) {
  auto [name, index] = op.rsplit('#');
  if (index.empty())
    return "output of " + op.str();
  return "output of operator #" + index.str() + " " + name.str();
}

std::optional<int64_t> tensorBytes(llvm::ArrayRef<int64_t> shape, int64_t elementBytes) {
  std::optional<int64_t> bytes = elementBytes;
  for (int64_t d : shape) {
    if (d < 0 || !bytes)
      return std::nullopt;
    bytes = llvm::checkedMul(*bytes, d);
  }
  return bytes;
}

int64_t defaultMaxBufferBytes(unsigned pointerBits) {
  return pointerBits <= 32 ? (int64_t(1) << 31) - 1 : int64_t(1) << 32;
}

llvm::Error checkTensorSizes(ModuleOp module, int64_t maxBytes,
                             llvm::StringRef filename, llvm::StringRef limitSource) {
  std::string problem;
  auto check = [&](Value v, Location loc) {
    auto type = v.getType().dyn_cast<RankedTensorType>();
    if (!problem.empty() || !type || !type.hasStaticShape())
      return;
    int64_t elementBytes =
        std::max<int64_t>(1, (type.getElementTypeBitWidth() + 7) / 8);
    std::optional<int64_t> bytes = tensorBytes(type.getShape(), elementBytes);
    if (bytes && *bytes <= maxBytes)
      return;
    std::string op, tensor;
    describeLocation(loc, op, tensor);
    std::string element;
    llvm::raw_string_ostream os(element);
    type.getElementType().print(os);
    problem = "tensor " + (tensor.empty() ? std::string("") : "'" + tensor + "' ") +
              (op.empty() ? "" : "(" + operatorPhrase(op) + ") ") + "has shape " +
              shapeString(type.getShape()) + " x " + os.str() + ": " +
              (bytes ? std::to_string(*bytes) + " bytes, above the " +
                           std::to_string(maxBytes) + "-byte limit on one buffer (" +
                           limitSource.str() + ")"
                     : std::string("its byte size overflows 64 bits"));
  };
  module.walk([&](Operation *op) {
    for (Value result : op->getResults())
      check(result, op->getLoc());
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          check(arg, arg.getLoc());
  });
  if (problem.empty())
    return llvm::Error::success();
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 filename.str() + ": " + problem);
}

} // namespace kiln
