//===- Import.cpp - Pick an importer for a model file ---------------------===//
#include "Import.h"

#include "kiln/Compiler.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

namespace kiln {

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 message.str());
}

llvm::Expected<OwningOpRef<ModuleOp>>
importModelFile(MLIRContext &context, llvm::StringRef path,
                const std::vector<ShapeFix> &fixes) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return makeError(path + ": cannot read: " + buffer.getError().message());
  llvm::StringRef name = llvm::sys::path::filename(path);
  llvm::StringRef data = (*buffer)->getBuffer();
  llvm::ArrayRef<uint8_t> bytes(
      reinterpret_cast<const uint8_t *>(data.data()), data.size());
  bool tfliteId = data.size() >= 8 && data.substr(4, 4) == "TFL3";
  if (tfliteId || path.ends_with(".tflite"))
    return importTFLite(context, bytes, name, fixes);
  if (path.ends_with(".mlir") || path.ends_with(".mlirbc"))
    return importTosaMLIR(context, data, name);
  return makeError(name + ": unrecognized model format (supported: TFLite "
                          "flatbuffers '.tflite', TOSA MLIR '.mlir')");
}

llvm::Expected<OwningOpRef<ModuleOp>>
importTosaMLIR(MLIRContext &context, llvm::StringRef text,
               llvm::StringRef filename) {
  std::string firstError;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (firstError.empty()) {
      llvm::raw_string_ostream os(firstError);
      if (auto loc = diag.getLocation().dyn_cast<FileLineColLoc>())
        os << "line " << loc.getLine() << ": ";
      os << diag.str();
    }
    return success();
  });
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, filename), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return makeError(filename + ": " + firstError);
  auto main = module->lookupSymbol<func::FuncOp>("main");
  if (!main)
    return makeError(filename + ": no func.func @main (Kiln compiles the "
                                "function named 'main')");
  for (Type t : main.getFunctionType().getInputs())
    if (!t.isa<RankedTensorType>() || !t.cast<RankedTensorType>().hasStaticShape())
      return makeError(filename + ": @main takes a non-static tensor type; "
                                  "Kiln compiles static shapes only");
  for (Type t : main.getFunctionType().getResults())
    if (!t.isa<RankedTensorType>() || !t.cast<RankedTensorType>().hasStaticShape())
      return makeError(filename + ": @main returns a non-static tensor type; "
                                  "Kiln compiles static shapes only");
  std::string unsupported;
  main.walk([&](Operation *op) {
    if (unsupported.empty() && !isa<func::FuncOp, func::ReturnOp>(op) &&
        op->getDialect() &&
        op->getDialect()->getNamespace() != tosa::TosaDialect::getDialectNamespace())
      unsupported = op->getName().getStringRef().str();
  });
  if (!unsupported.empty())
    return makeError(filename + ": operation '" + unsupported +
                     "' is not in the TOSA dialect (Kiln's .mlir input is "
                     "TOSA plus func.return)");
  (*module)->setAttr("kiln.source", StringAttr::get(&context, filename));
  return std::move(module);
}

} // namespace kiln
