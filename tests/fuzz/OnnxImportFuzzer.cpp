//===- OnnxImportFuzzer.cpp - Fuzz target: ONNX bytes -> TOSA -------------===//
//
// Bytes -> kiln::importONNX (core/lib/Import), the importer `kiln compile
// model.onnx` runs after reading the file: libonnx's protobuf parse, Kiln's
// version, domain and attribute checks, onnx::checker, shape inference,
// then the node converters, which verify the TOSA they build. The bytes go
// in as "fuzz.onnx", with external data looked up in an empty scratch folder
// (so a fuzzed `location` never reads the working directory).
//
// Invariants, as for tflite_import: an error is one line and never an
// internal error; no MLIR diagnostic escapes the importer; an imported
// module has a @main and verifies. libonnx 1.12's checker and shape
// inference are not hardened against bad attribute values (a zero stride
// divides by zero), so this target mostly finds inputs that Kiln must refuse
// before handing the model to libonnx (core/lib/Import/ONNXModel.cpp).
//
// One MLIRContext serves many inputs, replaced every kContextReuse inputs
// (it keeps every attribute it uniqued, weights included).
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

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

using kiln::fuzz::fuzzCheck;
using kiln::fuzz::fuzzContext;

namespace {

/// An empty folder in $TMPDIR, the model's "directory" (one for every
/// process: nothing writes into it, and fork mode's jobs leave no folders).
const std::string &scratchDirectory() {
  static const std::string dir = [] {
    const char *tmp = std::getenv("TMPDIR");
    std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/kiln-fuzz-onnx-empty";
    std::filesystem::create_directories(path);
    return path;
  }();
  return dir;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);
  mlir::MLIRContext &context = fuzzContext();
  std::string escaped;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diag) {
    if (escaped.empty())
      escaped = diag.str();
    return mlir::success();
  });
  auto module = kiln::importONNX(context, llvm::ArrayRef<uint8_t>(data, size), "fuzz.onnx",
                                 scratchDirectory(), {});
  fuzzCheck(escaped.empty(), "an MLIR diagnostic escaped the importer: " + escaped);
  if (!module) {
    kiln::fuzz::expectOneLineError(module.takeError(), "importONNX", input);
    return 0;
  }
  fuzzCheck(static_cast<bool>((*module)->lookupSymbol<mlir::func::FuncOp>("main")),
            "imported module has no @main");
  fuzzCheck(mlir::succeeded(mlir::verify(**module)), "imported module does not verify");
  fuzzCheck(escaped.empty(), "verifying the imported module emitted: " + escaped);
  return 0;
}
