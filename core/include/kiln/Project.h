//===- kiln/Project.h - .kilnproj project files ----------------*- C++ -*-===//
//
// A project holds every setting a user gives one model: target, profile,
// output format, workgroup tiles, fusion, fixed shapes and the export
// folder. The workbench keeps it in `MODEL.kilnproj` beside the model
// (autosaved); `kiln compile --project=FILE` and `kiln export --project=FILE`
// build exactly what the workbench built.
//
// Format (JSON, version 1; unknown keys are errors so typos never pass
// silently; every key but "model" is optional):
//   {
//     "kiln_project": 1,
//     "model": "blazeface.tflite",        // relative to the project file
//     "target": "host",                   // a knownTargets() name
//     "target_cpu": "x86-64-v3",          // "" or absent: the target's
//     "target_cpu_features": "+avx2",
//     "profile": "default",               // or "stripped"
//     "output_format": "kiln",            // or "c-module"
//     "fusion": true,
//     "no_fusion": [5],                   // dispatch ids
//     "tiles": {"3": [0, 8, 0, 0]},       // dispatch id -> one size per loop
//     "fixed_shapes": {"0": [1, 76, 32, 1]}, // input name or index -> shape
//     "export_dir": "export"              // relative to the project file
//   }
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PROJECT_H
#define KILN_PROJECT_H

#include "kiln/Compiler.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "llvm/Support/Error.h"

namespace kiln {

/// The settings of one model (see the file comment for the JSON form).
struct Project {
  /// The model, as written in the file (relative to the project's folder
  /// unless absolute).
  std::string model;
  std::string target = "host";
  std::string targetCpu;
  std::string targetFeatures;
  std::string profile = "default";
  OutputFormat format = OutputFormat::Artifact;
  bool fusion = true;
  std::vector<int64_t> noFusion;
  std::map<int64_t, std::vector<int64_t>> tiles;
  /// Input (name or index as text) -> full static shape.
  std::map<std::string, std::vector<int64_t>> fixedShapes;
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

/// Writes `project` to `path` through a temporary file renamed over it, so
/// a crash mid-write never leaves a truncated project. Errors name the file.
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

/// Compile options for the project: target, profile, format, fusion,
/// tiles and fixed shapes applied. Errors name the unknown target or
/// profile.
llvm::Expected<CompileOptions> projectCompileOptions(const Project &project);

} // namespace kiln

#endif
