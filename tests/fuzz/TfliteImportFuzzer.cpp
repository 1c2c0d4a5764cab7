//===- TfliteImportFuzzer.cpp - Fuzz target: TFLite bytes -> TOSA ---------===//
//
// Bytes -> kiln::importTFLite (core/lib/Import), which verifies the TOSA it
// builds. Invariants: an error is one line and never an internal error; no
// MLIR diagnostic escapes the importer (the CLI would print it on stderr);
// an imported module has a @main and verifies.
//
// One MLIRContext serves many inputs (creating one per input would halve
// the speed); it is replaced every kContextReuse inputs because a context
// keeps every attribute it ever uniqued (weights included) until it dies.
//
//===----------------------------------------------------------------------===//
#include "FuzzContext.h"
#include "FuzzSupport.h"

#include "Import/Import.h"
#include "kiln/Compiler.h"
#include "Pipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <memory>

using kiln::fuzz::fuzzCheck;
using kiln::fuzz::fuzzContext;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);
  mlir::MLIRContext &context = fuzzContext();
  std::string escaped;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diag) {
    if (escaped.empty())
      escaped = diag.str();
    return mlir::success();
  });
  auto module = kiln::importTFLite(context, llvm::ArrayRef<uint8_t>(data, size),
                                   "model.tflite", {});
  fuzzCheck(escaped.empty(), "an MLIR diagnostic escaped the importer: " + escaped);
  if (!module) {
    kiln::fuzz::expectOneLineError(module.takeError(), "importTFLite", input);
    return 0;
  }
  fuzzCheck(static_cast<bool>((*module)->lookupSymbol<mlir::func::FuncOp>("main")),
            "imported module has no @main");
  fuzzCheck(mlir::succeeded(mlir::verify(**module)), "imported module does not verify");
  fuzzCheck(escaped.empty(), "verifying the imported module emitted: " + escaped);
  return 0;
}
