//===- kiln/Project.h - .kilnproj project files ----------------*- C++ -*-===//
//
// A project holds every setting a user gives one model: the build recipe
// (kiln/Recipe.h: target, CPU, profile, output format, tiles, fusion,
// fixed shapes, ...) and the export folder. The workbench keeps it in
// `MODEL.kilnproj` beside the model (autosaved); `kiln compile
// --project=FILE` and `kiln export --project=FILE` build exactly what the
// workbench built.
//
// Format (JSON, version 1; unknown keys are errors so typos never pass
// silently; every key but "kiln_project" and "model" is optional):
//   {
//     "kiln_project": 1,
//     "model": "blazeface.tflite",        // relative to the project file
//     "export_dir": "export",             // relative to the project file
//     ... the recipe's keys (recipeToJson): "target", "target_cpu",
//     "target_cpu_features", "profile", "debug_symbols", "reflection",
//     "output_format", "module_name", "tiles", "fusion", "no_fusion",
//     "fixed_shapes"; settings at their default are not written
//   }
// Files written before the recipe (every key written, "" and [] for
// unset ones) read the same.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PROJECT_H
#define KILN_PROJECT_H

#include "kiln/Recipe.h"

#include <string>

#include "llvm/Support/Error.h"

namespace kiln {

/// The settings of one model (see the file comment for the JSON form).
struct Project {
  /// The model, as written in the file (relative to the project's folder
  /// unless absolute).
  std::string model;
  /// How the model is built.
  BuildRecipe recipe;
  /// Export folder, relative to the project's folder unless absolute;
  /// empty = none chosen yet.
  std::string exportDir;

  bool operator==(const Project &other) const = default;
};

/// `model.tflite` -> `model.kilnproj` (same folder).
std::string projectPathFor(const std::string &modelPath);

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

/// Renames an unreadable project file out of the way
/// (`X.kilnproj` -> `X.kilnproj.unreadable`, `.unreadable-2`, ...) so a
/// fresh one can be saved without losing it. Returns the new path.
llvm::Expected<std::string> setAsideProject(const std::string &path);

/// The model's path resolved against the folder of `projectPath`.
std::string projectModelPath(const Project &project, const std::string &projectPath);

/// The export folder resolved against the folder of `projectPath` (empty
/// if none is set).
std::string projectExportDir(const Project &project, const std::string &projectPath);

} // namespace kiln

#endif
