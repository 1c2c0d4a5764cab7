//===- kiln/Project.h - .kilnproj project files ----------------*- C++ -*-===//
//
// A project holds every setting a user gives one model: the working
// build's recipe (kiln/Recipe.h: target, CPU, profile, output format,
// tiles, fusion, fixed shapes, ...) and, apart from it, the export's
// settings (device target, profile, output format, memory budgets) and
// folder. The workbench keeps it in `MODEL.EXT.kilnproj` beside the model
// (`blazeface.tflite.kilnproj`: one per model file, so `blazeface.tflite`
// and `blazeface.onnx` in one folder never share settings; autosaved); `kiln compile
// --project=FILE` builds exactly what the workbench built, `kiln export --project=FILE` exactly
// what its Export dialog exported (exportRecipe: the working recipe with the export's settings in
// place of its own).
//
// Format (JSON, version 1; unknown keys are errors so typos never pass
// silently; every key but "kiln_project" and "model" is optional):
//   {
//     "kiln_project": 1,
//     "model": "blazeface.tflite",        // relative to the project file
//     "export_dir": "export",             // relative to the project file
//     "export": {                         // ExportSettings; unset keys omitted
//       "target": "thumbv7em-none-eabihf", "target_cpu": "", "target_cpu_features": "",
//       "profile": "stripped", "output_format": "c-module",
//       "ram_budget_bytes": 262144, "flash_budget_bytes": 1048576,
//       "kit": true                       // add a firmware kit (kiln/Kit.h)
//     },
//     ... the working recipe's keys (recipeToJson): "target", "target_cpu",
//     "target_cpu_features", "profile", "debug_symbols", "reflection",
//     "output_format", "module_name", "tiles", "fusion", "no_fusion",
//     "fixed_shapes", "fixed_values", "check_bounds", "signature"; settings
//     at their default are not
//     written
//   }
// Files written before the recipe (every key written, "" and [] for
// unset ones) and before "export" (the export followed the working recipe)
// read the same.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PROJECT_H
#define KILN_PROJECT_H

#include "kiln/Export.h"
#include "kiln/Recipe.h"

#include <string>

#include "llvm/Support/Error.h"

namespace kiln {

/// How a project is exported, kept apart from its working build: the
/// Export dialog changes these and never the working recipe. Tiles,
/// fusion, fixed shapes and the module name always come from the working
/// recipe. Each unset field follows the working recipe (see exportRecipe).
struct ExportSettings {
  /// A knownTargets() name; empty = the working build's target, CPU and
  /// features.
  std::string target;
  /// With `target` set: its CPU and features (empty = the target's
  /// default); ignored without it.
  std::string targetCpu;
  std::string targetFeatures;
  /// "default" or "stripped"; empty = the working build's profile and its
  /// overrides. When set it replaces both (no debug_symbols/reflection
  /// override is carried over).
  std::string profile;
  /// nullopt = the working build's format.
  std::optional<OutputFormat> format;
  /// Flash and RAM budgets of the device, bytes (0 = none), checked in the
  /// bundle's manifest and report.
  MemoryBudget budget;
  /// Add a firmware kit (kiln/Kit.h) with the pattern inputs; the kit's
  /// --kit-input files are a command-line choice and are not kept.
  bool kit = false;

  bool operator==(const ExportSettings &other) const = default;
};

/// The settings of one model (see the file comment for the JSON form).
struct Project {
  /// The model, as written in the file (relative to the project's folder
  /// unless absolute).
  std::string model;
  /// How the model is built (the working build: the workbench's views,
  /// Run, `kiln compile --project=`).
  BuildRecipe recipe;
  /// How it is exported (the Export dialog, `kiln export --project=`).
  ExportSettings exportSettings;
  /// Export folder, relative to the project's folder unless absolute;
  /// empty = none chosen yet.
  std::string exportDir;

  bool operator==(const Project &other) const = default;
};

/// The recipe an export of `project` builds: the working recipe with the
/// export settings' target (and its CPU and features), profile (replacing
/// the profile overrides) and format in place of its own where set. Not
/// validated (validateRecipe says e.g. that a bare-metal target needs the
/// C module format).
BuildRecipe exportRecipe(const Project &project);

/// The request `kiln export --project=PROJECTPATH` and the workbench's
/// Export dialog build: the model resolved against the project's folder,
/// exportRecipe() and the export settings' budgets and kit.
ExportRequest projectExportRequest(const Project &project, const std::string &projectPath);

/// `model.tflite` -> `model.tflite.kilnproj` (same folder): the project
/// file the workbench writes for a model, one per model file.
std::string projectPathFor(const std::string &modelPath);

/// The project file to read for `modelPath`: projectPathFor's where it
/// exists; else the name workbenches before 2026-12-03 wrote
/// (`model.kilnproj`, the extension replaced) when that file is a readable
/// project whose "model" names this model's file (so `blazeface.onnx`
/// never reads the settings `blazeface.tflite` saved there); else
/// projectPathFor's (which need not exist yet). The workbench reads this
/// one and saves to projectPathFor's, leaving an older file as it was.
std::string projectPathToRead(const std::string &modelPath);

/// Reads a project file. Errors name the file and the offending key and
/// say what is expected; the file is left untouched.
llvm::Expected<Project> loadProject(const std::string &path);

/// Parses project JSON `text` (what loadProject reads from a file); `path`
/// names the file in errors. Errors as loadProject's.
llvm::Expected<Project> parseProject(llvm::StringRef text, const std::string &path);

/// The project as JSON text (keys sorted, 2-space indent, trailing newline).
std::string projectToJson(const Project &project);

/// Writes `project` to `path` atomically (writeFileAtomically), so a crash
/// mid-write never leaves a truncated project. Errors name the file.
llvm::Error saveProject(const Project &project, const std::string &path);

/// Renames a project file out of the way (`X.kilnproj` ->
/// `X.kilnproj.SUFFIX`, `.SUFFIX-2`, ...) so a fresh one can be saved
/// without losing it: "unreadable" for a file that does not parse,
/// "failed" for settings the model does not build with. Returns the new
/// path; errors name the file.
llvm::Expected<std::string> setAsideProject(const std::string &path,
                                            const std::string &suffix = "unreadable");

/// The model's path resolved against the folder of `projectPath`.
std::string projectModelPath(const Project &project, const std::string &projectPath);

/// The export folder resolved against the folder of `projectPath` (empty
/// if none is set).
std::string projectExportDir(const Project &project, const std::string &projectPath);

} // namespace kiln

#endif
