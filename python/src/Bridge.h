//===- Bridge.h - The Python package's calls into Kiln's core ---*- C++ -*-===//
//
// The `kiln` Python package (python/kiln/__init__.py, the `_kiln` extension
// in Module.cpp) reaches Kiln's compiler only through these functions. They
// take and return plain C++ values (strings, byte strings, vectors) and
// call the same core functions as the `kiln` command line: a build's
// settings go into a kiln::BuildRecipe through kiln::setRecipeOption, then
// kiln::recipeCompileOptions and kiln::compile; inspect, diff, validate,
// export and benchmark call what `kiln inspect|diff|validate|export|run
// --benchmark` call. Nothing here re-implements a compiler decision.
//
// Bridge.cpp is built like core (no RTTI, LLVM headers); Module.cpp (the
// pybind11 bindings, which need RTTI) includes only this header and the
// runtime's C API, so no LLVM type crosses into an RTTI translation unit.
//
// Errors: every function throws Failure carrying the message the CLI prints
// after "kiln: error: " (the Python package raises it as kiln.Error).
// Thread safety: compilations (compile, inspect of a model, export) are
// serialized process-wide (the in-process LLD link keeps global state);
// everything else may run concurrently. Callers release the GIL around
// these calls.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PYTHON_BRIDGE_H
#define KILN_PYTHON_BRIDGE_H

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::python {

/// A failure of the core, with the CLI's one-line message.
struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Build settings as (recipe key, value text) pairs, in order, exactly as
/// `kiln::setRecipeOption` takes them ("tile", "3=0,8,0,0"); repeatable
/// keys appear once per entry.
using Settings = std::vector<std::pair<std::string, std::string>>;

/// A model, or a project file giving the model and its settings: exactly
/// one of `model` and `project` is non-empty; a project comes with no
/// settings.
struct Source {
  std::string model;
  std::string project;
  Settings settings;
};

/// A finished compilation.
struct Compiled {
  /// "kiln" or "c-module".
  std::string format;
  /// The .kiln bytes (empty for a C module).
  std::string artifact;
  /// A C module's files (name, bytes) in kiln::CompileResult's order.
  std::vector<std::pair<std::string, std::string>> files;
  /// `kiln inspect MODEL --json` of this build (the plan's keys plus
  /// "signature"): what a C module, which has no reflection section,
  /// shows as its plan.
  std::string modelJson;
  /// Settings that changed nothing, one sentence each (CLI warnings).
  std::vector<std::string> warnings;
};

/// `kiln compile MODEL [flags]` / `kiln compile --project=FILE`, in memory.
Compiled compile(const Source &source);

/// `kiln inspect ARTIFACT --json` of the artifact `bytes` (any profile: a
/// stripped one gives "plan": null and "plan_missing"). `what` names it in
/// errors.
std::string inspectArtifactJson(std::string_view bytes, const std::string &what);

/// `kiln inspect MODEL [flags] --json`; warnings go to `warnings`.
std::string inspectModelJson(const Source &source, std::vector<std::string> &warnings);

/// `kiln inspect ARTIFACT --sizes`: bytes per section in the writer's
/// order, the format overhead and the file's bytes.
struct Sections {
  std::vector<std::pair<std::string, int64_t>> sections;
  int64_t overhead = 0;
  int64_t fileBytes = 0;
};
Sections sectionSizes(std::string_view bytes, const std::string &what);

/// `kiln diff A B [--benchmark=N] --json` of two artifacts named `nameA`
/// and `nameB`. When this host cannot run them the sizes still compare and
/// the reason goes to `warnings` (as the CLI warns).
std::string diffJson(std::string_view a, std::string_view b, const std::string &nameA,
                     const std::string &nameB, unsigned benchmarkRuns,
                     std::vector<std::string> &warnings);

/// How to run: "local-sync" or "local-task" and its threads.
struct Device {
  std::string name = "local-sync";
  unsigned threads = 1;
};

/// `kiln validate ARTIFACT DIR --json` (exit status 3 is "pass": false).
/// `samples` as --samples= (0: sample_S folders or one sample); `what`
/// names the artifact in errors; `lsb` as --tolerance-lsb= (integer
/// outputs).
std::string validateJson(std::string_view artifact, const std::string &what,
                         const std::string &dir, int64_t samples, double atol, double rtol,
                         int64_t lsb, const Device &device);

/// `kiln validate A --compare-with=B --json` (kiln::compareModels): two
/// artifacts on the same inputs, `samples` random ones seeded with `seed`,
/// or DIR/input_K.npy when `inputDir` is not empty; errors name `nameA` or
/// `nameB`.
std::string compareJson(std::string_view a, std::string_view b, const std::string &nameA,
                        const std::string &nameB, int64_t samples, uint64_t seed,
                        const std::string &inputDir, const Device &device);

/// `kiln export MODEL --target=... [-o DIR]` / `kiln export --project=FILE`:
/// writes the bundle and returns {"dir", "files": [names], "command",
/// "warnings": [...], "budgets": [{memory, bytes, budget_bytes, exceeded,
/// message}], "manifest": {manifest.json}} as JSON text. `outDir`
/// empty: the project's export folder, or the CLI's default folder beside
/// the model. Budgets as --ram-budget= / --flash-budget= text ("" = none);
/// `kit`: add a firmware kit with the pattern inputs (--kit; kiln/Kit.h).
std::string exportBundle(const Source &source, const std::string &outDir,
                         const std::string &ramBudget, const std::string &flashBudget, bool kit);

/// Writes a C module's files into `dir` as `kiln compile
/// --output-format=c-module -o DIR` does (all or nothing).
void writeFiles(const std::vector<std::pair<std::string, std::string>> &files,
                const std::string &dir);

/// Writes `bytes` to `path` as `kiln compile -o PATH` writes an artifact
/// (kiln::writeFileAtomically: whole or not at all).
void writeFile(const std::string &path, std::string_view bytes);

/// Median, fastest and slowest of `runs` timed invocations of the artifact
/// on seeded random inputs after a warm-up run (kiln::benchmarkArtifact, as
/// `kiln diff --benchmark` measures), milliseconds.
struct Latency {
  double medianMs = -1, minMs = -1, maxMs = -1;
  unsigned runs = 0;
  std::string device;
  unsigned threads = 1;
};
Latency benchmark(std::string_view artifact, unsigned runs, const Device &device);

/// Whether the file at `path` is read as an artifact (kiln::isArtifactFile:
/// by content, the extension as a hint).
bool isArtifactFile(const std::string &path);

/// One row of kiln::kDeviceTargets (kiln/Targets.h), the table `target=`
/// names: `name` is what target= takes.
struct DeviceTargetInfo {
  std::string name, displayName, triple, cpu, features, abi;
  bool bareMetal = false, integerOnly = false;
  int64_t workgroupBytes = 0;
};

/// kiln::kDeviceTargets, in order.
std::vector<DeviceTargetInfo> deviceTargets();

/// kiln::version(), kiln::llvmVersion().
std::string version();
std::string llvmVersion();

} // namespace kiln::python

#endif
