//===- kiln/Options.h - What shapes a compilation --------------*- C++ -*-===//
//
// The plain-data options of Kiln's compiler: the code generation target,
// the output format, fixed input shapes, the phases reported as they start,
// and CompileOptions, which holds them all; plus GeneratedFile, one file of
// a C module. The compiler's entry points (kiln/Compiler.h) take these, and
// the internal libraries (Import/, Codegen/, Artifact/) include this header
// instead of the entry points.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_OPTIONS_H
#define KILN_OPTIONS_H

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace kiln {

/// Code generation target.
struct TargetOptions {
  /// LLVM target triple; empty means the host's (e.g. "x86_64-pc-linux-gnu").
  std::string triple;
  /// LLVM CPU name; "generic" is portable. Default x86-64-v2 on x86-64 hosts
  /// would exclude old CPUs, so the default stays "generic".
  std::string cpu = "generic";
  /// LLVM feature string, e.g. "+avx2,+fma"; empty = the CPU's defaults.
  std::string features;
  /// Target ABI name where the triple leaves a choice (RISC-V "lp64d");
  /// empty = LLVM's default for the triple.
  std::string abi;
};

/// What `kiln compile` writes (`--output-format=`).
enum class OutputFormat {
  /// One `.kiln` flatbuffer replayed by Kiln's runtime.
  Artifact,
  /// A static C module: NAME.h, NAME.c (the command list unrolled into
  /// straight-line calls at fixed arena offsets), NAME_constants.c (the
  /// weights as one aligned C array) and NAME_kernels.o (the kernels,
  /// an ELF relocatable object for the target). No runtime needed.
  CModule,
};

/// Parses "kiln" (also "artifact") or "c-module". Returns false if unknown.
bool parseOutputFormat(const std::string &text, OutputFormat &out);

/// "kiln" or "c-module".
const char *toString(OutputFormat format);

/// A user-fixed shape for a model input whose shape has dynamic dimensions
/// (TFLite `shape_signature` -1), as given by `--fix-shape=INPUT=1x76x32x1`
/// (parsed and checked by kiln/Recipe.h's setRecipeOption).
struct ShapeFix {
  /// Input name, or its index in signature order as decimal text.
  std::string input;
  /// The full static shape, elements per dimension.
  std::vector<int64_t> shape;
};

/// One element of a fixed input value (`--fix-value`), as parsed: a whole
/// number, kept exactly (for integer inputs; a real number with an integral
/// value, "2.0" or "1e3", is held as one), or a finite real number.
using FixedNumber = std::variant<int64_t, double>;

/// A model input fixed to a value, as given by `--fix-value=INPUT=VALUE`
/// (parsed and checked by kiln/Recipe.h's setRecipeOption; checked against
/// the model by kiln/ModelInputs.h's checkValueFixes): the input becomes a
/// constant of the build and leaves the artifact's signature.
struct ValueFix {
  /// Input name, or its index in signature order as decimal text.
  std::string input;
  /// Every element in row-major order (one for a scalar); the element
  /// type and shape are the input's.
  std::vector<FixedNumber> values;
};

/// The text form of a fixed value, as --fix-value takes it: the elements
/// separated by ',' ("16000", "1,2.5,3"); whole numbers in decimal, real
/// ones in the shortest form that reads back to the same double.
std::string fixValueText(const std::vector<FixedNumber> &values);

/// The phases of a compilation, in order; reported to
/// CompileOptions::onPhase as each one starts.
enum class CompilePhase {
  Import,        ///< Read the model, build TOSA.
  TosaToLinalg,  ///< TOSA -> linalg on tensors, elementwise fusion.
  Dispatches,    ///< Dispatch regions, outlining, workgroup tiling.
  Bufferization, ///< One-shot bufferization, constants outlined.
  Schedule,      ///< Waves, barriers, memory plan.
  LowerToLLVM,   ///< Kernels to the LLVM dialect and LLVM IR.
  Optimize,      ///< LLVM's -O pipeline and machine code, kernels in parallel.
  Codegen,       ///< Linking the kernels' objects.
  Artifact,      ///< Writing the .kiln flatbuffer (or C module).
};
/// Number of CompilePhase values.
constexpr int kNumCompilePhases = 9;
/// "import", "tosa-to-linalg", "dispatches", "bufferization", "schedule",
/// "lower-to-llvm", "optimize", "codegen", "artifact".
const char *toString(CompilePhase phase);

/// Options that shape a compilation. The tools make them from a build
/// recipe (kiln/Recipe.h, recipeCompileOptions), which holds and checks the
/// user's settings; the fields below are what the compiler reads.
struct CompileOptions {
  /// Progress hook, called on the compiling thread as each phase starts.
  /// Returning false cancels: the compilation stops at that phase boundary
  /// and fails with "compilation cancelled". Empty = no reporting.
  std::function<bool(CompilePhase)> onPhase;
  TargetOptions target;
  /// The TFLite SignatureDef compiled (`--signature=KEY`): its subgraph,
  /// with the inputs and outputs named and ordered as the signature lists
  /// them. Empty = subgraph 0 with its tensors' names. TFLite models only:
  /// set for an ONNX or .mlir model, the import fails.
  std::string signature;
  /// Shapes for inputs with dynamic dimensions.
  std::vector<ShapeFix> fixedShapes;
  /// Inputs fixed to values: constants of the build, not in its signature
  /// (ONNX models only).
  std::vector<ValueFix> fixedValues;
  /// With --emit: elide constants larger than 16 elements in MLIR output
  /// (for reading on a terminal). Off, the output parses back in.
  bool elideConstants = true;
  /// LLVM optimization level for the kernels, 0..3.
  unsigned optLevel = 3;
  /// Keep the kernels' symbol table (names of every function) in the
  /// executable; false strips it (`--debug-symbols=false`). Entry points
  /// stay exported either way.
  bool debugSymbols = true;
  /// `--check-bounds`: every load, store and memory intrinsic of every
  /// kernel checks its address against its binding's extent (bytes); a
  /// refused access stops the workgroup and the runtime's invoke returns
  /// KILN_OUT_OF_RANGE naming the dispatch, binding, offset and extent
  /// (core/lib/Codegen/BoundsChecks.h). For finding kernel bugs: kernels
  /// ran about 2x slower on two real models (README, "Bounds-checked
  /// kernels"). .kiln
  /// artifacts on 64-bit hosted targets only.
  bool checkBounds = false;
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
  /// What compile() produces: a `.kiln` artifact or a static C module.
  OutputFormat format = OutputFormat::Artifact;
  /// C identifier prefixing every symbol of a C module; empty = derived
  /// from the model's file name ("blazeface.tflite" -> "blazeface").
  std::string moduleName;
  /// Largest buffer the build may ask the device for, bytes: every tensor
  /// and the arena (`--max-buffer-bytes=`). 0 = the target's default:
  /// 2^31 - 1 with 32-bit pointers, 4 GiB with 64-bit ones. A model that
  /// needs more is refused at compile time, naming the tensor, its shape
  /// and its byte size.
  int64_t maxBufferBytes = 0;
};

/// One file of a compilation's output (C module files), named relative to
/// the output folder.
struct GeneratedFile {
  std::string name;
  std::vector<uint8_t> bytes;
};

} // namespace kiln

#endif // KILN_OPTIONS_H
