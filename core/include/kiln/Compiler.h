//===- kiln/Compiler.h - Kiln's compiler entry points ----------*- C++ -*-===//
//
// The public, MLIR-free face of Kiln's compiler. The CLI (`kiln`) and the
// workbench call these functions, so both run exactly the same pipeline
// (built in core/lib/Pipeline.cpp).
//
// Errors are returned as llvm::Error carrying one readable message that names
// the file and, where it applies, the operator (type and index) or tensor
// (name) at fault and what is supported. No MLIR IR is ever dumped.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_H
#define KILN_COMPILER_H

#include <cstdint>
#include <string>
#include <vector>

#include "llvm/Support/Error.h"

namespace kiln {

/// The stages `kiln compile --emit=` can stop after, in pipeline order
/// (like `iree-compile --compile-to=`).
enum class EmitStage {
  Tosa,   ///< After import: one func.func in the TOSA dialect, static shapes.
  Linalg, ///< After TOSA -> linalg on tensors and elementwise fusion.
  LLVMIR, ///< LLVM IR of the host kernels after optimization.
  Asm,    ///< Target assembly of the kernels.
};

/// Parses "tosa", "linalg", "llvm-ir" or "asm". Returns false if unknown.
bool parseEmitStage(const std::string &text, EmitStage &out);

/// Code generation target.
struct TargetOptions {
  /// LLVM target triple; empty means the host's (e.g. "x86_64-pc-linux-gnu").
  std::string triple;
  /// LLVM CPU name; "generic" is portable. Default x86-64-v2 on x86-64 hosts
  /// would exclude old CPUs, so the default stays "generic".
  std::string cpu = "generic";
  /// LLVM feature string, e.g. "+avx2,+fma"; empty = the CPU's defaults.
  std::string features;
};

/// A user-fixed shape for a model input whose shape has dynamic dimensions
/// (TFLite `shape_signature` -1), as given by `--fix-shape=INPUT=1x76x32x1`.
struct ShapeFix {
  /// Input name, or its index in signature order as decimal text.
  std::string input;
  /// The full static shape, elements per dimension.
  std::vector<int64_t> shape;
};

/// Parses "NAME=1x76x32x1" (or "0=1x76x32x1"). Errors explain the syntax.
llvm::Expected<ShapeFix> parseShapeFix(const std::string &text);

/// Options that shape a compilation.
struct CompileOptions {
  TargetOptions target;
  /// Shapes for inputs with dynamic dimensions.
  std::vector<ShapeFix> fixedShapes;
  /// LLVM optimization level for the kernels, 0..3.
  unsigned optLevel = 3;
};

/// Compiles the model file at `path` (a `.tflite` flatbuffer) and returns the
/// textual module after `stage` (MLIR for Tosa/Linalg, LLVM IR, or assembly).
llvm::Expected<std::string> emitStage(const std::string &path, EmitStage stage,
                                      const CompileOptions &options);

/// Compiles the model file at `path` into a `.kiln` artifact (flatbuffer bytes,
/// format of runtime/schema/kiln_artifact.fbs).
llvm::Expected<std::vector<uint8_t>>
compileArtifact(const std::string &path, const CompileOptions &options);

/// Kiln's version, e.g. "0.1.0".
const char *version();
/// The LLVM/MLIR version Kiln was built with, e.g. "16.0.6".
const char *llvmVersion();

} // namespace kiln

#endif // KILN_COMPILER_H
