//===- kiln/Export.h - Deployment bundles for devices ----------*- C++ -*-===//
//
// `kiln export` and the workbench's Export dialog: compile a model for a
// device target and write a bundle folder holding
//   - the artifact (NAME.kiln) or the static C module (NAME.h, NAME.c,
//     NAME_constants.c, NAME_kernels.o),
//   - manifest.json: target, profile, compiler version, the build's recipe
//     ("recipe": recipeToJson, readable back as a tuning file), the
//     resolved options and the command that repeats the build, every
//     file's bytes and SHA-256, bytes per section, flash and RAM needs, one
//     row per dispatch,
//   - report.md: the same for people,
//   - with a firmware kit (ExportRequest::kit, `--kit`; kiln/Kit.h): the
//     files that build and run it on the device (startup code, linker
//     script and Makefile for a Cortex-M; the runtime archive and a
//     program for a Linux target).
// Nothing in a bundle depends on the time, the host or the output path, so
// two exports with the same options are byte-identical.
//
// Flash and RAM are counted as STM32Cube.AI and Vela report them: flash =
// code + weights (+ the .kiln metadata for an artifact), RAM = activations
// (the arena) + the model's input and output buffers (+ for a C module, the
// largest kernel stack frame, which LLVM records in .stack_sizes). Per
// dispatch: its kernel's stack frame, its share of the arena and its
// weights. Optional budgets (`--ram-budget=`, `--flash-budget=`) are checked
// against the totals, as STM32Cube.AI's analyze does.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_EXPORT_H
#define KILN_EXPORT_H

#include "kiln/Compiler.h"
#include "kiln/Recipe.h"

#include <cstdint>
#include <map>
#include "kiln/AtomicWrite.h"

#include <string>
#include <vector>

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

namespace kiln {

struct CompilationPlan;

/// Memory budgets of the device (`--ram-budget=`, `--flash-budget=`),
/// bytes; 0 = no budget.
struct MemoryBudget {
  int64_t ramBytes = 0;
  int64_t flashBytes = 0;

  bool operator==(const MemoryBudget &other) const = default;
};

/// Parses and checks the value of the budget flag `flag` (e.g.
/// "--ram-budget"): a whole number of bytes, optionally followed by K or
/// KiB (x 1024) or M or MiB (x 1048576): 262144, 256K, 256KiB, 2M. At least
/// 1 byte, at most 2^63 - 1. The error is one sentence naming the flag and
/// the text.
llvm::Expected<int64_t> parseBudgetBytes(llvm::StringRef flag, llvm::StringRef text);

/// One input of a firmware kit: the array its program runs the model on.
struct KitInput {
  /// The .npy file it came from as the user named it (`--kit-input=`);
  /// empty for the deterministic pattern (kitPatternInputs, kiln/Kit.h).
  std::string file;
  /// NumPy descriptor ("|i1", "<f4") and shape; they must equal the
  /// model's input.
  std::string dtype;
  std::vector<int64_t> shape;
  /// The elements, row-major, little-endian.
  std::vector<uint8_t> bytes;

  bool operator==(const KitInput &other) const = default;
};

/// Whether and how an export adds a firmware kit (`kiln export --kit
/// [--kit-input=FILE.npy ...]`, the Export dialog's "Firmware kit" box).
struct KitRequest {
  bool enabled = false;
  /// One per model input, in signature order; empty = the deterministic
  /// pattern for every input.
  std::vector<KitInput> inputs;

  bool operator==(const KitRequest &other) const = default;
};

/// What to export: the model and how to build it.
struct ExportRequest {
  /// The model file (.tflite or TOSA .mlir), as the user named it.
  std::string model;
  /// The build's settings: target, CPU, profile, format, tuning, shapes.
  BuildRecipe recipe;
  /// Largest buffer the build may ask the device for, bytes
  /// (`--max-buffer-bytes=`, CompileOptions::maxBufferBytes); 0 = the
  /// target's default.
  int64_t maxBufferBytes = 0;
  /// Checked against the footprint; the verdict goes into manifest.json
  /// and report.md (and the budgets into the command that repeats the
  /// build).
  MemoryBudget budget;
  /// Progress and cancellation, passed to the compiler as
  /// CompileOptions::onPhase (returning false stops the build at the next
  /// phase: "compilation cancelled"). Empty = none; not part of the bundle.
  std::function<bool(CompilePhase)> onPhase;
  /// The firmware kit, if any (kiln/Kit.h says what it holds).
  KitRequest kit;
};

/// Memory one dispatch needs on the device, bytes.
struct DispatchMemory {
  int64_t id = 0;
  std::string name;
  /// The entry point that runs it (entryPointOf): dispatches deduplicated
  /// to one entry point share its kernel and its stack frame.
  std::string entryPoint;
  /// Stack frame of its kernel (LLVM's .stack_sizes of a C module's
  /// kernels); -1 when unknown (no code generated, a .kiln artifact, or
  /// dynamicStack).
  int64_t stackBytes = -1;
  /// The kernel allocates stack of a size known only at run time (a
  /// padded input window whose extent depends on the workgroup), so LLVM
  /// records no frame for it.
  bool dynamicStack = false;
  /// Bytes of the arena its bindings occupy (the union of the bound ranges
  /// of arena buffers, inputs and outputs of the dispatch alike).
  int64_t arenaBytes = 0;
  /// Bytes of weights (constants) it binds.
  int64_t weightBytes = 0;
};

/// One row per dispatch of `plan`, in plan order; stack frames from
/// `stackFrameBytes` (CompileResult::stackFrameBytes, by entry point).
std::vector<DispatchMemory>
dispatchMemoryOf(const CompilationPlan &plan,
                 const std::map<std::string, int64_t> &stackFrameBytes);

/// Flash and RAM a bundle needs on the device, bytes.
struct ExportFootprint {
  /// Kernels' loadable code and read-only data.
  int64_t codeBytes = 0;
  /// Weights.
  int64_t constantBytes = 0;
  /// Everything else that sits in flash: for a .kiln, the artifact's other
  /// sections and format overhead; 0 for a C module (its glue code is
  /// compiled by the user's compiler and not counted).
  int64_t metadataBytes = 0;
  /// code + constants + metadata.
  int64_t flashBytes = 0;
  /// Arena (activations).
  int64_t arenaBytes = 0;
  /// Input and output buffers.
  int64_t ioBytes = 0;
  /// Largest stack frame of the kernels (C modules, from LLVM's
  /// .stack_sizes; kernels with dynamicStack are not in it); -1 when not
  /// recorded (.kiln artifacts).
  int64_t stackBytes = -1;
  /// arena + I/O (+ the kernels' stack when recorded).
  int64_t ramBytes = 0;
  /// Stack frame, arena share and weights of each dispatch.
  std::vector<DispatchMemory> dispatches;
};

/// The footprint of a build as far as `compiled` knows it, with no section
/// table: a planOnly() result has no code (code, weights and flash 0,
/// stackBytes -1) and gives RAM = arena + I/O and each dispatch's arena
/// share and weights; a compile() result adds code, weights and stack
/// frames. Bytes. `kiln inspect MODEL` prints it for a hosted target.
ExportFootprint planFootprint(const CompileResult &compiled);

/// A footprint total held against its budget.
struct BudgetCheck {
  /// "RAM" or "flash".
  std::string memory;
  /// The footprint's total and the budget, bytes.
  int64_t bytes = 0;
  int64_t budgetBytes = 0;
  bool exceeded = false;
  /// "RAM 1.5 MiB exceeds the budget 256 KiB by 1.3 MiB" or "flash 474.1
  /// KiB is within the budget 1 MiB (549.9 KiB left)".
  std::string message;
};

/// The totals of `footprint` against each budget given (RAM first).
std::vector<BudgetCheck> checkBudget(const ExportFootprint &footprint,
                                     const MemoryBudget &budget);

/// A bundle in memory, before it is written.
struct ExportBundle {
  /// Files in writing order, names relative to the bundle folder.
  std::vector<GeneratedFile> files;
  ExportFootprint footprint;
  /// The `kiln export` command line that repeats this build, shell-quoted:
  /// the model's path as the request gave it, the recipe's flags
  /// (recipeCommandLine), --max-buffer-bytes and the budgets; it writes to
  /// defaultExportDir() (add `-o DIR` to choose the folder).
  std::string command;
  /// The request's budgets, checked (empty without budgets).
  std::vector<BudgetCheck> budgetChecks;
  /// The compiler's warnings (CompileResult::warnings).
  std::vector<std::string> warnings;
  /// With a kit: the inputs its program runs on (the request's, or the
  /// pattern), one per model input; empty without a kit.
  std::vector<KitInput> kitInputs;
};

/// A model compiled for its device and measured, nothing written: what
/// `kiln inspect MODEL --target=...` prints. A bare-metal target is built
/// as the C module it would export (its kernels' stack frames recorded);
/// others as `options.format` says.
struct DeviceBuild {
  CompileResult compiled;
  OutputFormat format = OutputFormat::Artifact;
  ExportFootprint footprint;
};

/// Compiles `path` with `options` (target already applied) and measures
/// it as buildExportBundle would. Errors are the compiler's.
llvm::Expected<DeviceBuild> buildForDevice(const std::string &path, CompileOptions options);

/// The checks of `request` that need no code generation, in about the
/// time of a plan: the recipe, the model, and the target's own limits (an
/// integer-only target such as the Cortex-M0+ refuses a float model). What
/// the Export dialog asks as soon as a target is chosen. Errors: those
/// buildExportBundle would give for the same reasons.
llvm::Error checkExportRequest(const ExportRequest &request);

/// Compiles `request` and assembles the bundle without writing anything (the
/// Export dialog shows the footprint before writing). Errors are the
/// compiler's (unknown target, bad model, ...) and, with a kit,
/// buildKitFiles' (kiln/Kit.h: a target with no kit, a missing runtime
/// archive, kit inputs that do not match the model).
llvm::Expected<ExportBundle> buildExportBundle(const ExportRequest &request);

/// Writes `bundle` into `dir` (created if missing) with
/// writeFilesAtomically: all files are written under temporary names first
/// and renamed into place only when every one succeeded, so a failed
/// export leaves no partial bundle. A name taken by a folder or special
/// file is refused before anything is written. A folder holding the
/// bundle of another model (its manifest.json names another model file) is
/// refused, naming both. After a write, the files an earlier bundle of the
/// same model listed and this one does not (a kit exported before) are
/// removed where they are as that export wrote them (same SHA-256); other
/// files of `dir` are left alone. Errors name the folder or file and
/// the system's reason.
/// `extra` files (a CLI's --dump-* files) join the same all-or-nothing
/// group; `reads` (the model) are never written. A `dir` that exists and
/// is not a folder is refused and left alone; a folder this call created
/// is removed again when the write fails.
llvm::Error writeExportBundle(const ExportBundle &bundle, const std::string &dir,
                              const std::vector<OutputFile> &extra = {},
                              const std::vector<std::string> &reads = {});

/// What a bundle's manifest.json (format "kiln-export-1", written by
/// buildExportBundle) records of the export, as the tools that read a
/// bundle back need it: writeExportBundle (whose bundle a folder holds)
/// and `kiln validate BUNDLE --on-target` (validateKitBundle).
struct BundleManifest {
  /// DIR/manifest.json, as read (errors name it).
  std::string path;
  /// "model": the model's file name (no folder) and SHA-256 (hex).
  std::string modelFile;
  std::string modelSha256;
  /// "files": each file's SHA-256 by name.
  std::map<std::string, std::string> fileSha256;
  /// "recipe": the settings as given, for recipeFromJson (a manifest of
  /// an older Kiln whose recipe this one refuses is still a bundle).
  llvm::json::Object recipeJson;
  /// "kit" (a firmware kit, kiln/Kit.h): the model's path as the export
  /// was given it, and each input's source (a .npy path, or "pattern").
  bool hasKit = false;
  std::string kitModel;
  std::vector<std::string> kitInputSources;
};

/// Reads `text` as the manifest `path` (named in the errors). Errors: not
/// JSON, not a "kiln-export-1" manifest, a "model" without "file", no
/// "recipe" object, a "kit" without "model" or "inputs".
llvm::Expected<BundleManifest> parseBundleManifest(llvm::StringRef text, const std::string &path);

/// parseBundleManifest of DIR/manifest.json; an unreadable file is an
/// error naming it and the system's reason.
llvm::Expected<BundleManifest> readBundleManifest(const std::string &dir);

/// The names of the files buildExportBundle() puts in the bundle of
/// `request`, in writing order, known before compiling: NAME.kiln for an
/// artifact (NAME = the model's file name without extension), or the C
/// module's NAME.h, NAME.c, NAME_constants.c, NAME_kernels.o (NAME = the
/// recipe's module name, else derived from the model's file name as the
/// compiler derives it), then the kit's files (kitFileNames, kiln/Kit.h)
/// when the request has a kit, then manifest.json and report.md.
std::vector<std::string> exportFileNames(const ExportRequest &request);

/// The folder `kiln export` writes to without -o: MODEL-EXT-TARGET-PROFILE
/// (the model's file name and extension, the recipe's target and profile;
/// "-c" added for a C module) beside the model: `kiln export sub/m.tflite`
/// writes sub/m-tflite-host-default/, and m.onnx beside it
/// m-onnx-host-default/ (one folder per model file, as its project).
std::string defaultExportDir(const ExportRequest &request);

} // namespace kiln

#endif
