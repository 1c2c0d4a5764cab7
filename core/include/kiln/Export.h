//===- kiln/Export.h - Deployment bundles for devices ----------*- C++ -*-===//
//
// `kiln export` and the workbench's Export dialog: compile a model for a
// device target and write a bundle folder holding
//   - the artifact (NAME.kiln) or the static C module (NAME.h, NAME.c,
//     NAME_constants.c, NAME_kernels.o),
//   - manifest.json: target, profile, compiler version, the exact options
//     and the command that repeats the build, every file's bytes and
//     SHA-256, bytes per section, flash and RAM needs, one row per dispatch,
//   - report.md: the same for people.
// Nothing in a bundle depends on the time, the host or the output path, so
// two exports with the same options are byte-identical.
//
// Flash and RAM are counted as STM32Cube.AI and Vela report them: flash =
// code + weights (+ the .kiln metadata for an artifact), RAM = activations
// (the arena) + the model's input and output buffers (+ for a C module, the
// largest kernel stack frame, which LLVM records in .stack_sizes).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_EXPORT_H
#define KILN_EXPORT_H

#include "kiln/Compiler.h"

#include <cstdint>
#include <string>
#include <vector>

#include "llvm/Support/Error.h"

namespace kiln {

/// What to export. `options` holds the tuning (tiles, fusion, fixed
/// shapes) and any explicit --target-cpu / --target-cpu-features /
/// --debug-symbols / --reflection choices; exportBundle applies `target`
/// and `profile` to it first (explicit choices win).
struct ExportRequest {
  /// The model file (.tflite or TOSA .mlir).
  std::string model;
  /// A name from knownTargets().
  std::string target = "host";
  /// "default" or "stripped".
  std::string profile = "default";
  OutputFormat format = OutputFormat::Artifact;
  CompileOptions options;
  /// Explicit overrides of the profile (unset = the profile decides).
  int debugSymbols = -1;
  int reflection = -1;
};

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
  /// .stack_sizes); -1 when not recorded (.kiln artifacts).
  int64_t stackBytes = -1;
  /// arena + I/O (+ the kernels' stack when recorded).
  int64_t ramBytes = 0;
};

/// A bundle in memory, before it is written.
struct ExportBundle {
  /// Files in writing order, names relative to the bundle folder.
  std::vector<GeneratedFile> files;
  ExportFootprint footprint;
  /// The `kiln export` command line that repeats this build, shell-quoted,
  /// model by file name, writing to defaultExportDir() (add `-o DIR` to
  /// choose the folder).
  std::string command;
};

/// Compiles `request` and assembles the bundle without writing anything (the
/// Export dialog shows the footprint before writing). Errors are the
/// compiler's (unknown target, bad model, ...).
llvm::Expected<ExportBundle> buildExportBundle(const ExportRequest &request);

/// Writes `bundle` into `dir` (created if missing). All files are written
/// under temporary names first and renamed into place only when every one
/// succeeded, so a failed export leaves no partial bundle. Files of `dir`
/// that the bundle does not name are left alone. Errors name the folder or
/// file and the system's reason.
llvm::Error writeExportBundle(const ExportBundle &bundle, const std::string &dir);

/// The folder `kiln export` writes to without -o: MODEL-TARGET-PROFILE
/// (with "-c" for a C module), relative to the working directory.
std::string defaultExportDir(const ExportRequest &request);

} // namespace kiln

#endif
