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
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kiln/Options.h"
#include "kiln/Targets.h"
#include "kiln/TensorTypes.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

struct kiln_artifact_info_t; // kiln/runtime.h

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

struct CompilationPlan;

/// A finished compilation: the artifact bytes and every decision made.
struct CompileResult {
  /// The `.kiln` bytes (OutputFormat::Artifact; empty for a C module).
  std::vector<uint8_t> artifact;
  /// The C module's files (OutputFormat::CModule): NAME.h, NAME.c,
  /// NAME_constants.c, NAME_kernels.o, in that order.
  std::vector<GeneratedFile> files;
  /// Normalized target triple and CPU the kernels were compiled for.
  std::string triple;
  std::string cpu;
  /// The LLVM feature string the kernels were compiled with (resolved:
  /// --target-cpu-features=host gives the detected list).
  std::string features;
  /// Bytes of the kernels' loadable code and read-only data (the ELF
  /// sections with SHF_ALLOC), bytes of the weights (for a C module, the
  /// NAME_constants array with its 64-byte alignment padding), and the
  /// arena.
  int64_t codeBytes = 0;
  int64_t constantBytes = 0;
  int64_t arenaBytes = 0;
  /// Largest stack frame of the kernels (C module only: from LLVM's
  /// .stack_sizes section), bytes; -1 when not recorded.
  int64_t stackBytes = -1;
  /// Stack frame of each kernel entry point (C module only: from LLVM's
  /// .stack_sizes section), bytes, keyed by the plan's entry point name
  /// ("main_dispatch_3", without the C module's prefix); dispatches that
  /// share an entry point (Dispatch::entryPoint) share its frame. -1 for a
  /// kernel with stack objects of run-time size, whose frame LLVM does not
  /// record. Empty when not recorded (.kiln artifacts).
  std::map<std::string, int64_t> stackFrameBytes;
  /// Bytes of all inputs and of all outputs.
  int64_t inputBytes = 0;
  int64_t outputBytes = 0;
  /// Shared so the plan type stays out of this header.
  std::shared_ptr<const CompilationPlan> plan;
  /// The model's I/O signature, in order (also for a plan without code).
  std::vector<IOInfo> inputs, outputs;
  /// The model inputs fixed to values (--fix-value), in the model's input
  /// order; they are not in `inputs`.
  std::vector<FixedInput> fixedInputs;
  /// What the ONNX importer did with each If, Loop and Scan (folded to a
  /// branch, selected at run time, unrolled) and why; empty for TFLite.
  std::vector<ControlFlowDecision> controlFlow;
  /// Options that changed nothing (a --fix-shape of a static input), one
  /// sentence each; the tools print them as warnings.
  std::vector<std::string> warnings;
};

/// Compiles the model file at `path` into a `.kiln` artifact and its plan.
llvm::Expected<CompileResult> compile(const std::string &path,
                                      const CompileOptions &options);

/// Compiles `path` up to and including scheduling and memory planning, with
/// no code generation (the fast path for re-planning after a tuning
/// change). The plan is the one compile() would produce with `options`.
llvm::Expected<std::shared_ptr<const CompilationPlan>>
planModel(const std::string &path, const CompileOptions &options);

/// planModel with the rest of what is known before code generation:
/// CompileResult's plan, inputs, outputs, their bytes, the arena bytes and
/// warnings (no code, files, weights or stack frames). `kiln inspect MODEL`
/// prints them.
llvm::Expected<CompileResult> planOnly(const std::string &path, const CompileOptions &options);

/// The plan of `path`: a model is compiled with `options`; an artifact
/// (kiln::isArtifact) passes the gate once and its plan is read from its
/// reflection data (errors if the artifact was built without it).
llvm::Expected<std::shared_ptr<const CompilationPlan>>
inspectFile(const std::string &path, const CompileOptions &options);

/// The plan an artifact carries as reflection data; `info` comes from the
/// gate (kiln::verifyArtifact). Errors name `what` when the artifact was
/// built without reflection or its data does not parse.
llvm::Expected<std::shared_ptr<const CompilationPlan>>
planOfArtifact(const kiln_artifact_info_t &info, const std::string &what);

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
