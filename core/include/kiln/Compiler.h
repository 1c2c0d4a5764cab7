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
#include <memory>
#include <string>
#include <vector>

#include "llvm/Support/Error.h"

namespace kiln {

/// The stages `kiln compile --emit=` can stop after, in pipeline order
/// (like `iree-compile --compile-to=`).
enum class EmitStage {
  Tosa,       ///< After import: one func.func in the TOSA dialect, static shapes.
  Linalg,     ///< After TOSA -> linalg on tensors and elementwise fusion.
  Dispatches, ///< Dispatch functions, tiled for workgroups, and @main calling them.
  Buffers,    ///< After bufferization: @main allocates, dispatches take memrefs.
  LLVMIR,     ///< LLVM IR of the host kernels after optimization.
  Asm,        ///< Target assembly of the kernels.
};

/// Parses "tosa", "linalg", "dispatches", "buffers", "llvm-ir" or "asm".
/// Returns false if unknown.
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
  /// With --emit: elide constants larger than 16 elements in MLIR output
  /// (for reading on a terminal). Off, the output parses back in.
  bool elideConstants = true;
  /// LLVM optimization level for the kernels, 0..3.
  unsigned optLevel = 3;
  /// Keep the kernels' symbol table (names of every function) in the
  /// executable; false strips it (`--debug-symbols=false`). Entry points
  /// stay exported either way.
  bool debugSymbols = true;
  /// Embed the reflection section (the full plan as JSON, source operator
  /// names) so tools can inspect the artifact (`--reflection=false` drops
  /// it).
  bool reflection = true;
  /// Fuse elementwise consumers and padding into their root's dispatch.
  bool fusion = true;
  /// Dispatch ids that get no fusion (ids as numbered with these options).
  std::vector<int64_t> noFusion;
  /// Workgroup tile sizes per dispatch id (one per loop of its tiled op,
  /// 0 = whole loop), overriding the heuristic.
  std::vector<std::pair<int64_t, std::vector<int64_t>>> tileSizes;
};

/// Applies a build profile (`--profile=`): "default" keeps debug symbols
/// and reflection; "stripped" drops both (the target CPU and features are
/// whatever `options.target` says). Errors name the unknown profile.
llvm::Error applyProfile(const std::string &profile, CompileOptions &options);

/// Parses "--tile=" text "DISPATCH=32,64,0". Errors explain the syntax.
llvm::Expected<std::pair<int64_t, std::vector<int64_t>>>
parseTileOverride(const std::string &text);

/// Reads a JSON tuning file {"tiles": {"3": [1, 8, 0, 0], ...},
/// "no_fusion": [5], "fusion": true} into `options`. Errors name the file
/// and the offending key.
llvm::Error loadTuningFile(const std::string &path, CompileOptions &options);

struct CompilationPlan;

/// A finished compilation: the artifact bytes and every decision made.
struct CompileResult {
  std::vector<uint8_t> artifact;
  /// Shared so the plan type stays out of this header.
  std::shared_ptr<const CompilationPlan> plan;
};

/// Compiles the model file at `path` into a `.kiln` artifact and its plan.
llvm::Expected<CompileResult> compile(const std::string &path,
                                      const CompileOptions &options);

/// The plan of `path`: a model is compiled with `options`; a `.kiln`
/// artifact's plan is read from its reflection data (errors if the
/// artifact was built without it).
llvm::Expected<std::shared_ptr<const CompilationPlan>>
inspectFile(const std::string &path, const CompileOptions &options);

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
