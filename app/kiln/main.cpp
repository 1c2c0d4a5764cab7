//===- main.cpp - The `kiln` command-line tool ----------------------------===//
//
//   kiln compile MODEL [-o OUT.kiln] [--emit=STAGE] [tuning flags]
//   kiln run MODEL|ARTIFACT --input=@in.npy ... [--output=@out.npy ...]
//            [--benchmark=N] [--device=local-sync|local-task] [--threads=N]
//            [--trace=FILE.json]
//   kiln inspect MODEL|ARTIFACT [--json] [--sizes] [--dump-dispatch-graph=FILE.dot]
//            [--dump-schedule=FILE.csv]
//   kiln diff A.kiln B.kiln [--json] [--benchmark=N] [--device=...] [--threads=N]
//   kiln validate MODEL|ARTIFACT DIR [--json] [--atol=A --rtol=R] [--tolerance-lsb=N]
//            (exit 3 when outputs differ)
//   kiln export MODEL --target=T [--profile=P] [--output-format=kiln|c-module] -o DIR
//   kiln --version
//
// Exit status: 0 on success, 1 on a user error (one message on stderr),
// 2 on bad usage.
//
//===----------------------------------------------------------------------===//
#include "kiln/Artifact.h"
#include "kiln/AtomicWrite.h"
#include "kiln/Compiler.h"
#include "kiln/Export.h"
#include "kiln/ModelInputs.h"
#include "kiln/Npy.h"
#include "kiln/Plan.h"
#include "kiln/Project.h"
#include "kiln/ReadFile.h"
#include "kiln/Recipe.h"
#include "kiln/Run.h"
#include "kiln/Targets.h"

#include "Usage.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <cmath>
#include <cstring>
#include <unistd.h>

namespace cl = llvm::cl;

static cl::OptionCategory kilnCategory("kiln options");

/// --target's help: every kiln::kDeviceTargets name, with its note.
static llvm::StringRef targetHelp() {
  static const std::string text = [] {
    std::string s = "Device target: ";
    for (const kiln::DeviceTarget &t : kiln::kDeviceTargets)
      s += std::string(&t == kiln::kDeviceTargets ? "" : ", ") + t.name +
           (*t.helpNote ? std::string(" (") + t.helpNote + ")" : "");
    return s;
  }();
  return text;
}

/// --target-cpu's help, with the bare-metal targets' default CPUs
/// ("cortex-m4 for thumbv7em").
static llvm::StringRef targetCpuHelp() {
  static const std::string text = [] {
    std::string s = "LLVM CPU name, or host for this machine's CPU and features (default: "
                    "generic, or the target's: ";
    const char *separator = "";
    for (const kiln::DeviceTarget &t : kiln::kDeviceTargets)
      if (t.bareMetal) {
        s += separator + std::string(t.cpu) + " for " +
             llvm::StringRef(t.name).split('-').first.str();
        separator = ", ";
      }
    return s + ")";
  }();
  return text;
}

static cl::SubCommand compileCmd("compile",
                                 "Compile a model to a .kiln artifact or print "
                                 "an intermediate stage");
static cl::SubCommand runCmd("run", "Run a .kiln artifact (or compile a model "
                                    "in memory and run it)");
static cl::SubCommand inspectCmd("inspect", "Print the dispatches, schedule and memory "
                                            "plan of a model or artifact");
static cl::SubCommand diffCmd("diff", "Per-section size difference of two artifacts");
static cl::SubCommand validateCmd("validate",
                                  "Run a model or artifact on DIR/input_K.npy and compare "
                                  "with DIR/output_K.npy (max error, RMSE, cosine)");
static cl::SubCommand exportCmd("export", "Compile for a device and write a bundle: the "
                                          "artifact or C module, manifest.json, report.md");

// compile
static cl::opt<std::string> compileModel(cl::Positional, cl::Optional,
                                         cl::desc("<model.tflite|model.onnx|model.mlir>"),
                                         cl::sub(compileCmd));
static cl::opt<std::string> compileOutput("o", cl::desc("Output file (default: MODEL.kiln, or stdout with --emit)"),
                                          cl::value_desc("file"), cl::sub(compileCmd),
                                          cl::cat(kilnCategory));
static cl::opt<std::string> emit("emit",
                                 cl::desc("Print the module after a stage: tosa, linalg, "
                                          "dispatches, buffers, llvm-ir, asm"),
                                 cl::value_desc("stage"), cl::sub(compileCmd),
                                 cl::cat(kilnCategory));

// run
static cl::opt<std::string> runModel(cl::Positional, cl::Optional,
                                     cl::desc("<artifact.kiln|model.tflite|model.onnx>"),
                                     cl::sub(runCmd));
static cl::list<std::string> runInputs("input",
                                       cl::desc("An input, in signature order: @file.npy "
                                                "or DIMSxTYPE=VALUE (e.g. 1x16x96xf32=0.5, "
                                                "1x96x96x1xi8=3, 2x3xu8=200)"),
                                       cl::value_desc("spec"), cl::sub(runCmd),
                                       cl::cat(kilnCategory));
static cl::list<std::string> runOutputs("output",
                                        cl::desc("Where to write an output, in signature "
                                                 "order: @file.npy"),
                                        cl::value_desc("@file.npy"), cl::sub(runCmd),
                                        cl::cat(kilnCategory));
static cl::opt<unsigned> benchmark("benchmark",
                                   cl::desc("Run N more warm inferences and print the median, "
                                            "min and max latency"),
                                   cl::init(0), cl::value_desc("N"), cl::sub(runCmd),
                                   cl::sub(diffCmd), cl::cat(kilnCategory));

static cl::opt<std::string> device("device", cl::desc("HAL device: local-sync or local-task"),
                                   cl::init("local-sync"), cl::sub(runCmd), cl::sub(diffCmd),
                                   cl::cat(kilnCategory));
static cl::opt<unsigned> threads("threads",
                                 cl::desc("Threads of the local-task device (default 1)"),
                                 cl::init(1), cl::sub(runCmd), cl::sub(diffCmd),
                                 cl::cat(kilnCategory));
static cl::opt<std::string> traceFile("trace",
                                      cl::desc("Write the measured start and end of every "
                                               "dispatch and workgroup of the first run (with "
                                               "--benchmark, one more warm run after the untraced timed ones) as a "
                                               "Chrome trace-event JSON file"),
                                      cl::value_desc("file.json"), cl::sub(runCmd),
                                      cl::cat(kilnCategory));

// inspect
static cl::opt<std::string> inspectPath(cl::Positional, cl::Optional,
                                        cl::desc("<model.tflite|model.onnx|artifact.kiln>"),
                                        cl::sub(inspectCmd));
static cl::opt<bool> inspectJson("json", cl::desc("Print JSON instead of a table"),
                                 cl::sub(validateCmd),
                                 cl::sub(inspectCmd), cl::sub(diffCmd), cl::cat(kilnCategory));
static cl::opt<bool> inspectSizes("sizes",
                                  cl::desc("Print the bytes of each artifact section (io, "
                                           "commands, memory_plan, executables, device, "
                                           "constants, reflection) and the format overhead"),
                                  cl::sub(inspectCmd), cl::cat(kilnCategory));

// diff
static cl::list<std::string> diffPaths(cl::Positional, cl::desc("<a.kiln> <b.kiln>"),
                                       cl::sub(diffCmd));

// validate
static cl::list<std::string> validatePaths(cl::Positional,
                                           cl::desc("<model|artifact> <dir with input_K.npy, "
                                                    "output_K.npy>"),
                                           cl::sub(validateCmd));

static cl::opt<int64_t> validateSamples(
    "samples",
    cl::desc("DIR/input_K.npy and output_K.npy each hold N samples stacked on a leading axis "
             "(default: one sample, or DIR/sample_S/ folders of them)"),
    cl::value_desc("N"), cl::init(0), cl::sub(validateCmd), cl::cat(kilnCategory));
static cl::opt<double> validateAtol("atol",
                                    cl::desc("Absolute tolerance: an element passes when "
                                             "|error| <= atol + rtol x |reference| (default 1e-4)"),
                                    cl::init(1e-4), cl::sub(validateCmd), cl::cat(kilnCategory));
static cl::opt<double> validateRtol("rtol", cl::desc("Relative tolerance (default 1e-4)"),
                                    cl::init(1e-4), cl::sub(validateCmd), cl::cat(kilnCategory));
static cl::opt<int64_t> validateLsb(
    "tolerance-lsb",
    cl::desc("Integer outputs (i8, u8, i32): an element passes when |error| <= N integer "
             "units (LSB); default 0, exact equality. --atol/--rtol apply to f32 outputs"),
    cl::value_desc("N"), cl::init(0), cl::sub(validateCmd), cl::cat(kilnCategory));

// build profile (compile, run, inspect)
static cl::opt<std::string> profile("profile",
                                    cl::desc("Build profile: default (debug symbols and "
                                             "reflection) or stripped (neither)"),
                                    cl::init("default"), cl::sub(compileCmd), cl::sub(exportCmd), cl::sub(validateCmd), cl::sub(runCmd),
                                    cl::sub(inspectCmd), cl::cat(kilnCategory));
static cl::opt<bool> debugSymbols("debug-symbols",
                                  cl::desc("Keep the kernels' symbol table (overrides the "
                                           "profile; .kiln only)"),
                                  cl::sub(compileCmd), cl::sub(exportCmd), cl::sub(runCmd), cl::sub(inspectCmd),
                                  cl::cat(kilnCategory));
static cl::opt<bool> reflectionData("reflection",
                                    cl::desc("Embed the plan for tools (overrides the profile; "
                                             ".kiln only)"),
                                    cl::sub(compileCmd), cl::sub(exportCmd), cl::sub(runCmd), cl::sub(inspectCmd),
                                    cl::cat(kilnCategory));

// shared by compile, run and inspect (compiling a model)
static cl::opt<std::string> dumpGraph("dump-dispatch-graph",
                                      cl::desc("Write the dispatch graph as Graphviz DOT"),
                                      cl::value_desc("file.dot"), cl::sub(compileCmd),
                                      cl::sub(inspectCmd), cl::cat(kilnCategory));
static cl::opt<std::string> dumpSchedule("dump-schedule",
                                         cl::desc("Write the command list as CSV"),
                                         cl::value_desc("file.csv"), cl::sub(compileCmd),
                                         cl::sub(inspectCmd), cl::cat(kilnCategory));
static cl::list<std::string> tiles("tile",
                                   cl::desc("Workgroup tile sizes of one dispatch: ID=S0,S1,... "
                                            "(one per loop of its tiled op, 0 = whole loop)"),
                                   cl::value_desc("id=sizes"), cl::sub(compileCmd), cl::sub(exportCmd), cl::sub(validateCmd),
                                   cl::sub(runCmd), cl::sub(inspectCmd), cl::cat(kilnCategory));
static cl::opt<std::string> tuning("tuning",
                                   cl::desc("JSON file of build settings, e.g. {\"tiles\": "
                                            "{\"ID\": [..]}, \"no_fusion\": [ID, ..], "
                                            "\"fusion\": bool} (a bundle manifest's \"recipe\"); "
                                            "flags given too win"),
                                   cl::value_desc("file.json"), cl::sub(compileCmd), cl::sub(exportCmd), cl::sub(validateCmd),
                                   cl::sub(runCmd), cl::sub(inspectCmd), cl::cat(kilnCategory));
static cl::opt<bool> fusion("fusion",
                            cl::desc("Fuse elementwise consumers and padding into their "
                                     "root's dispatch (default true; --fusion=false: off)"),
                            cl::init(true), cl::sub(compileCmd), cl::sub(exportCmd), cl::sub(validateCmd), cl::sub(runCmd),
                            cl::sub(inspectCmd), cl::cat(kilnCategory));
static cl::list<std::string> noFusion("no-fusion",
                                  cl::desc("Turn fusion off for one dispatch id"),
                                  cl::value_desc("id"), cl::sub(compileCmd), cl::sub(exportCmd), cl::sub(validateCmd), cl::sub(runCmd),
                                  cl::sub(inspectCmd), cl::cat(kilnCategory));
static cl::opt<bool> checkBounds("check-bounds",
                                 cl::desc("Bounds-checked kernels: every load and store checks "
                                          "its binding's extent; a refused access fails the run "
                                          "with KILN_OUT_OF_RANGE naming the dispatch (slow; "
                                          ".kiln only)"),
                                 cl::sub(compileCmd), cl::sub(exportCmd), cl::sub(validateCmd),
                                 cl::sub(runCmd), cl::sub(inspectCmd), cl::cat(kilnCategory));
static cl::list<std::string> fixShapes("fix-shape",
                                       cl::desc("Give a dynamic input a static shape: "
                                                "INPUT=DIMS (name or index), e.g. 0=1x76x32x1"),
                                       cl::value_desc("input=dims"), cl::sub(compileCmd), cl::sub(exportCmd), cl::sub(validateCmd),
                                       cl::sub(runCmd), cl::sub(inspectCmd),
                                       cl::cat(kilnCategory));
static cl::opt<std::string> targetTriple("target-triple",
                                         cl::desc("LLVM target triple (default: host)"),
                                         cl::sub(compileCmd), cl::sub(runCmd), cl::sub(inspectCmd),
                                         cl::cat(kilnCategory));
static cl::opt<std::string> targetCpu("target-cpu", cl::desc(targetCpuHelp()),
                                      cl::init("generic"), cl::sub(compileCmd), cl::sub(exportCmd), cl::sub(validateCmd),
                                      cl::sub(runCmd), cl::sub(inspectCmd), cl::cat(kilnCategory));
static cl::opt<std::string> targetFeatures("target-cpu-features",
                                           cl::desc("LLVM CPU features, e.g. +avx2,+fma, or host"),
                                           cl::sub(compileCmd), cl::sub(exportCmd), cl::sub(validateCmd), cl::sub(runCmd), cl::sub(inspectCmd),
                                           cl::cat(kilnCategory));

static cl::opt<uint64_t> maxBufferBytes(
    "max-buffer-bytes",
    cl::desc("Largest buffer (one tensor, the arena) the build may ask the device for, "
             "bytes (default: 2147483647 on 32-bit targets, 4294967296 on 64-bit ones)"),
    cl::value_desc("bytes"), cl::init(0), cl::sub(compileCmd), cl::sub(exportCmd),
    cl::sub(validateCmd), cl::sub(runCmd), cl::sub(inspectCmd), cl::cat(kilnCategory));

// target and output (compile, export)
static cl::opt<std::string> targetName("target", cl::desc(targetHelp()),
                                       cl::value_desc("name"), cl::sub(compileCmd),
                                       cl::sub(runCmd), cl::sub(inspectCmd), cl::sub(exportCmd),
                                       cl::cat(kilnCategory));
static cl::opt<std::string> ramBudget("ram-budget",
                                      cl::desc("Warn when RAM (arena + I/O + kernel stack) "
                                               "exceeds this: bytes, or with K, KiB, M, MiB "
                                               "(1K = 1024)"),
                                      cl::value_desc("bytes"), cl::sub(inspectCmd),
                                      cl::sub(exportCmd), cl::cat(kilnCategory));
static cl::opt<std::string> flashBudget("flash-budget",
                                        cl::desc("Warn when flash (code + weights + metadata) "
                                                 "exceeds this: bytes, or with K, KiB, M, MiB "
                                                 "(1K = 1024)"),
                                        cl::value_desc("bytes"), cl::sub(inspectCmd),
                                        cl::sub(exportCmd), cl::cat(kilnCategory));
static cl::opt<std::string> outputFormat("output-format",
                                         cl::desc("kiln (a .kiln artifact, default) or c-module "
                                                  "(NAME.h, NAME.c, NAME_constants.c, "
                                                  "NAME_kernels.o in the -o folder)"),
                                         cl::init("kiln"), cl::sub(compileCmd),
                                         cl::sub(exportCmd), cl::cat(kilnCategory));
static cl::opt<std::string> moduleName("module-name",
                                       cl::desc("C module symbol prefix (default: the model's "
                                                "file name)"),
                                       cl::sub(compileCmd), cl::sub(exportCmd),
                                       cl::cat(kilnCategory));
static cl::opt<std::string> exportModel(cl::Positional, cl::Optional,
                                        cl::desc("<model.tflite|model.onnx|model.mlir>"),
                                        cl::sub(exportCmd));
static cl::opt<std::string> exportOutput("o", cl::desc("Bundle folder (created if missing; "
                                                  "default MODEL-TARGET-PROFILE)"),
                                         cl::value_desc("dir"), cl::sub(exportCmd),
                                         cl::cat(kilnCategory));
static cl::opt<std::string> projectFile("project",
                                        cl::desc("Build with the settings of a .kilnproj "
                                                 "project (as the workbench saved them; "
                                                 "export uses its export settings)"),
                                        cl::value_desc("file.kilnproj"), cl::sub(compileCmd),
                                        cl::sub(exportCmd), cl::cat(kilnCategory));

/// The build flags given (the recipe's settings, kiln/Recipe.h), as
/// (recipe key, value text) in recipeKeys() order. Read before anything
/// compiles: compiling resets llvm::cl option values (see runRun).
static std::vector<std::pair<std::string, std::string>> recipeFlags() {
  std::vector<std::pair<std::string, std::string>> flags;
  auto text = [&](const char *key, const cl::opt<std::string> &option) {
    if (option.getNumOccurrences())
      flags.push_back({key, option});
  };
  auto boolean = [&](const char *key, const cl::opt<bool> &option) {
    if (option.getNumOccurrences())
      flags.push_back({key, option ? "true" : "false"});
  };
  auto list = [&](const char *key, const cl::list<std::string> &option) {
    for (const std::string &value : option)
      flags.push_back({key, value});
  };
  text("target", targetName);
  text("target-cpu", targetCpu);
  text("target-cpu-features", targetFeatures);
  text("profile", profile);
  boolean("debug-symbols", debugSymbols);
  boolean("reflection", reflectionData);
  text("output-format", outputFormat);
  text("module-name", moduleName);
  list("tile", tiles);
  boolean("fusion", fusion);
  list("no-fusion", noFusion);
  list("fix-shape", fixShapes);
  boolean("check-bounds", checkBounds);
  return flags;
}

/// True when a flag that --project also sets was given (a build setting,
/// --target-triple or --tuning).
static bool recipeFlagsGiven() {
  return !recipeFlags().empty() || !targetTriple.empty() || !tuning.empty();
}

static int fail(const llvm::Twine &message) {
  llvm::errs() << "kiln: error: " << message << "\n";
  return 1;
}

/// The files a command reads and must never write: the model or artifact
/// at `path`, its external data (kiln::modelDataFiles), the --tuning and
/// --project files. Call before compiling (which resets llvm::cl values).
static std::vector<std::string> filesRead(const std::string &path) {
  std::vector<std::string> reads = {path};
  for (std::string data : kiln::modelDataFiles(path))
    reads.push_back(std::move(data));
  for (const std::string &flag : {std::string(tuning), std::string(projectFile)})
    if (!flag.empty())
      reads.push_back(flag);
  return reads;
}

/// The error for build flags given with an artifact, which is already
/// built: `verb` is "running", "inspecting" or "validating".
static int alreadyCompiled(llvm::StringRef path, const char *verb) {
  return fail(path + " is already compiled; compile options (--fix-shape, --target-*, --tile, "
                     "--tuning, --fusion, --no-fusion, --check-bounds, --profile, ...) apply when " +
              llvm::Twine(verb) + " a model");
}

/// Reports `err` as one line: exit status 2 for a usage error, else 1.
static int fail(llvm::Error err) {
  int status = 1;
  std::string message;
  llvm::handleAllErrors(
      std::move(err),
      [&](const kiln::cli::UsageError &usage) {
        status = kiln::cli::kUsageExit;
        message = usage.message;
      },
      [&](const llvm::ErrorInfoBase &other) { message = other.message(); });
  fail(message);
  return status;
}

/// "1 dispatch", "53 dispatches".
static std::string counted(int64_t n, const char *one, const char *many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

/// One warning line on stderr: a flag that changed nothing.
static void warn(const llvm::Twine &message) {
  llvm::errs() << "kiln: warning: " << message << "\n";
}

static void printWarnings(const std::vector<std::string> &warnings) {
  for (const std::string &w : warnings)
    warn(w);
}

/// Reports a usage error: one line, exit status 2.
static int usage(const llvm::Twine &message) {
  return fail(kiln::cli::usageError(message));
}

/// The recipe of the build flags given and of --tuning (flags win over the
/// file). A flag's bad value is a usage error; a bad file is not.
static llvm::Expected<kiln::BuildRecipe> recipeOfFlags() {
  const auto flags = recipeFlags();
  auto apply = [&](kiln::BuildRecipe &recipe) -> llvm::Error {
    for (const auto &[key, value] : flags)
      if (llvm::Error err = kiln::setRecipeOption(recipe, key, value))
        return kiln::cli::asUsageError(std::move(err));
    return llvm::Error::success();
  };
  kiln::BuildRecipe recipe;
  if (llvm::Error err = apply(recipe))
    return std::move(err);
  if (tuning.empty())
    return recipe;
  auto file = kiln::loadRecipe(tuning);
  if (!file)
    return file.takeError();
  if (llvm::Error err = apply(*file))
    return std::move(err);
  return *file;
}

/// --max-buffer-bytes, checked (0 = the target's default).
static llvm::Expected<int64_t> maxBufferBytesFlag() {
  if (maxBufferBytes > static_cast<uint64_t>(INT64_MAX))
    return kiln::cli::usageError("--max-buffer-bytes=" + llvm::Twine(maxBufferBytes) +
                                 " is above 2^63 - 1");
  return static_cast<int64_t>(maxBufferBytes);
}

/// Compile options of `recipe` plus the flags no recipe holds
/// (--target-triple, --max-buffer-bytes).
static llvm::Expected<kiln::CompileOptions> compileOptionsOf(const kiln::BuildRecipe &recipe) {
  if (!targetTriple.empty() && targetName.getNumOccurrences())
    return kiln::cli::usageError("--target and --target-triple both given; use one");
  auto bufferBytes = maxBufferBytesFlag();
  if (!bufferBytes)
    return bufferBytes.takeError();
  auto options = kiln::recipeCompileOptions(recipe);
  if (!options)
    return options.takeError();
  if (!targetTriple.empty())
    options->target.triple = targetTriple;
  options->maxBufferBytes = *bufferBytes;
  return options;
}

/// Warns about settings that change nothing for the recipe's format.
static void warnUnusedSettings(const kiln::BuildRecipe &recipe) {
  if (recipe.format == kiln::OutputFormat::CModule && (recipe.debugSymbols || recipe.reflection))
    warn(llvm::Twine(recipe.debugSymbols ? "--debug-symbols" : "--reflection") +
         " changes nothing for a C module: its kernels object keeps the symbols the "
         "firmware links against, and it carries no reflection section");
}

/// Loads --project: the model path, recipe and export folder it gives,
/// the recipe checked (errors name the project file).
static llvm::Expected<kiln::Project> loadProjectFlag(const std::string &path, std::string &model) {
  auto project = kiln::loadProject(path);
  if (!project)
    return project.takeError();
  if (llvm::Error err = kiln::validateRecipe(project->recipe))
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s: %s", path.c_str(),
                                   llvm::toString(std::move(err)).c_str());
  model = kiln::projectModelPath(*project, path);
  return project;
}

/// Refuses build flags next to --project (it sets them all).
static int projectFlagsError(const std::string &project) {
  return fail("--project=" + project +
              " sets the target, profile, format and tuning; edit the project "
              "instead of adding --target*/--profile/--tile/--fusion/--fix-shape flags");
}

/// The --dump-dispatch-graph / --dump-schedule files of `plan` (texts kept
/// in `texts`), written in one group with the build's own files: on any
/// failure none of them is.
static std::vector<kiln::OutputFile> dumpFiles(const kiln::CompilationPlan &plan,
                                               const std::string &dot, const std::string &csv,
                                               std::vector<std::string> &texts) {
  texts.reserve(2);
  std::vector<kiln::OutputFile> files;
  auto add = [&](const std::string &path, std::string text) {
    texts.push_back(std::move(text));
    const std::string *kept = &texts.back();
    files.push_back({path, [kept](llvm::raw_ostream &os) { os << *kept; }});
  };
  if (!dot.empty())
    add(dot, kiln::planToDot(plan));
  if (!csv.empty())
    add(csv, kiln::planToCsv(plan));
  return files;
}

static int runCompile() {
  // Copied first: compiling resets llvm::cl occurrences (see runRun).
  std::string model = compileModel;
  const std::string output = compileOutput;
  const std::string emitText = emit;
  const std::string dot = dumpGraph, csv = dumpSchedule;
  const std::string project = projectFile;
  if (model.empty() == project.empty())
    return usage("kiln compile takes a model file or --project=FILE.kilnproj (one of them)");
  auto recipe = recipeOfFlags();
  if (!recipe)
    return fail(recipe.takeError());
  if (!project.empty()) {
    if (recipeFlagsGiven())
      return projectFlagsError(project);
    auto loaded = loadProjectFlag(project, model);
    if (!loaded)
      return fail(loaded.takeError());
    *recipe = loaded->recipe;
  }
  const std::vector<std::string> reads = filesRead(model);
  warnUnusedSettings(*recipe);
  auto options = compileOptionsOf(*recipe);
  if (!options)
    return fail(options.takeError());
  if (!emitText.empty()) {
    for (const auto &[flag, value] : {std::pair{"--dump-dispatch-graph", dot},
                                      std::pair{"--dump-schedule", csv}})
      if (!value.empty())
        warn(llvm::Twine(flag) + " has no effect with --emit (no plan is made); drop one of them");
    // On a terminal, elide big constants; a file gets them all, so it
    // compiles again (`kiln compile --emit=tosa -o m.mlir; kiln compile m.mlir`).
    options->elideConstants = output.empty() || output == "-";
    kiln::EmitStage stage;
    if (!kiln::parseEmitStage(emitText, stage))
      return usage("--emit='" + emitText +
                   "' is not a stage; use tosa, linalg, dispatches, buffers, llvm-ir or asm");
    auto text = kiln::emitStage(model, stage, *options);
    if (!text)
      return fail(text.takeError());
    if (output.empty() || output == "-") {
      llvm::outs() << *text;
      return 0;
    }
    if (llvm::Error err = kiln::writeFileAtomically(output, *text, reads))
      return fail(std::move(err));
    return 0;
  }
  if (options->format == kiln::OutputFormat::CModule) {
    if (output.empty())
      return usage("--output-format=c-module writes several files: give the folder with -o DIR");
    auto result = kiln::compile(model, *options);
    if (!result)
      return fail(result.takeError());
    printWarnings(result->warnings);
    kiln::ExportBundle bundle;
    bundle.files = result->files;
    std::vector<std::string> texts;
    if (llvm::Error err = kiln::writeExportBundle(
            bundle, output, dumpFiles(*result->plan, dot, csv, texts), reads))
      return fail(std::move(err));
    llvm::outs() << "wrote " << output << "/{";
    for (size_t i = 0; i < result->files.size(); ++i)
      llvm::outs() << (i ? "," : "") << result->files[i].name;
    llvm::outs() << "} (" << result->triple << ", code " << result->codeBytes
                 << " bytes, weights " << result->constantBytes << " bytes, arena "
                 << result->arenaBytes << " bytes)\n";
    return 0;
  }
  std::string out = output;
  if (out.empty()) {
    llvm::SmallString<256> path(model);
    llvm::sys::path::replace_extension(path, "kiln");
    out = path.str().str();
  }
  auto result = kiln::compile(model, *options);
  if (!result)
    return fail(result.takeError());
  printWarnings(result->warnings);
  std::vector<std::string> texts;
  std::vector<kiln::OutputFile> files = dumpFiles(*result->plan, dot, csv, texts);
  const std::vector<uint8_t> &artifact = result->artifact;
  files.insert(files.begin(), {out, [&artifact](llvm::raw_ostream &os) {
                                 os.write(reinterpret_cast<const char *>(artifact.data()),
                                          artifact.size());
                               }});
  if (llvm::Error err = kiln::writeFilesAtomically(files, reads))
    return fail(std::move(err));
  llvm::outs() << "wrote " << out << " (" << result->artifact.size() << " bytes, "
               << counted(result->plan->dispatches.size(), "dispatch", "dispatches") << ", "
               << counted(result->plan->schedule.waves, "wave", "waves") << ", arena "
               << result->plan->memory.arenaBytes << " bytes)\n";
  return 0;
}

/// `kiln inspect` of an artifact without reflection: what the artifact
/// holds, and which rows need the plan.
static int inspectStripped(const std::string &path, const kiln::ArtifactDescription &d,
                           bool asJson, const std::string &dot, const std::string &csv) {
  if (!dot.empty() || !csv.empty())
    return fail(path + ": --dump-dispatch-graph and --dump-schedule need the plan, which "
                       "this artifact does not carry (built with --profile=stripped or "
                       "--reflection=false); inspect the model instead");
  if (asJson) {
    auto out = kiln::inspectArtifactJson(d, nullptr, path);
    if (!out)
      return fail(out.takeError());
    llvm::outs() << llvm::formatv("{0:2}", *out) << "\n";
    return 0;
  }
  llvm::outs() << llvm::sys::path::filename(path) << "\n"
               << kiln::formatArtifactDescription(d, true) << llvm::left_justify("plan", 10)
               << kiln::planMissingReason() << "\n";
  return 0;
}

/// The budgets of --ram-budget and --flash-budget (0 = none given).
static llvm::Expected<kiln::MemoryBudget> memoryBudget() {
  kiln::MemoryBudget budget;
  for (auto [flag, option, bytes] :
       {std::tuple{"--ram-budget", &ramBudget, &budget.ramBytes},
        std::tuple{"--flash-budget", &flashBudget, &budget.flashBytes}}) {
    if (!option->getNumOccurrences())
      continue;
    auto parsed = kiln::parseBudgetBytes(flag, *option);
    if (!parsed)
      return kiln::cli::asUsageError(parsed.takeError());
    *bytes = *parsed;
  }
  return budget;
}

/// "flash N bytes (code C, weights W, metadata M), RAM N bytes (arena A,
/// I/O B, kernel stack S)", as `kiln export` prints it.
static std::string footprintText(const kiln::ExportFootprint &fp) {
  std::string text = "flash " + std::to_string(fp.flashBytes) + " bytes (code " +
                     std::to_string(fp.codeBytes) + ", weights " +
                     std::to_string(fp.constantBytes) + ", metadata " +
                     std::to_string(fp.metadataBytes) + "), RAM " +
                     std::to_string(fp.ramBytes) + " bytes (arena " +
                     std::to_string(fp.arenaBytes) + ", I/O " + std::to_string(fp.ioBytes);
  if (fp.stackBytes >= 0)
    text += ", kernel stack " + std::to_string(fp.stackBytes);
  return text + ")";
}

/// Each dispatch's kernel stack frame ("-" when no code was generated),
/// arena share and weights.
static void printDispatchMemory(const std::vector<kiln::DispatchMemory> &rows) {
  llvm::outs() << "memory per dispatch (bytes): kernel stack frame (\"dynamic\": sized at "
                  "run time, not recorded by LLVM), arena share, weights\n";
  for (const kiln::DispatchMemory &m : rows) {
    std::string stack = m.stackBytes >= 0 ? std::to_string(m.stackBytes)
                        : m.dynamicStack   ? "dynamic"
                                           : "-";
    llvm::outs() << llvm::format("  %-20s stack %7s  arena %9lld  weights %8lld", m.name.c_str(),
                                 stack.c_str(), (long long)m.arenaBytes,
                                 (long long)m.weightBytes);
    if (m.entryPoint != m.name)
      llvm::outs() << "  (the code of " << m.entryPoint << ")";
    llvm::outs() << "\n";
  }
}

/// Budget verdicts: within on stdout, exceeded as a warning on stderr
/// (exit status stays 0).
static void reportBudgets(const std::vector<kiln::BudgetCheck> &checks) {
  for (const kiln::BudgetCheck &c : checks)
    if (c.exceeded)
      warn(c.message);
    else
      llvm::outs() << "budget: " << c.message << "\n";
}

/// The memory part of `kiln inspect MODEL`: target, flash, RAM and memory
/// per dispatch, for `target` as the user named it. `device` is the build
/// for the target when code was generated (a bare-metal target is built as
/// the C module it exports, and any target when a budget is given: code
/// bytes and stack frames exist only after code generation); otherwise
/// `planned` gives RAM and each
/// dispatch's arena share and weights, and the output says what needs code
/// generation.
static int inspectDeviceMemory(const std::string &target, const kiln::CompileOptions &options,
                               const kiln::CompileResult &planned,
                               const std::optional<kiln::DeviceBuild> &device,
                               const kiln::MemoryBudget &budget) {
  if (!device) {
    kiln::ExportFootprint fp = kiln::planFootprint(planned);
    std::string triple = options.target.triple.empty() ? llvm::sys::getDefaultTargetTriple()
                                                       : options.target.triple;
    llvm::outs() << "target " << (target.empty() ? "host" : target) << ": " << triple
                 << ", planned as a .kiln without code generation\n"
                 << "RAM " << fp.ramBytes << " bytes (arena " << fp.arenaBytes << ", I/O "
                 << fp.ioBytes << "); flash and kernel stack frames need code generation "
                 << "(a bare-metal --target, --ram-budget/--flash-budget, or kiln export)\n";
    printDispatchMemory(fp.dispatches);
    return 0;
  }
  const kiln::CompileResult &c = device->compiled;
  llvm::outs() << "target " << (target.empty() ? "host" : target) << ": " << c.triple
               << ", cpu " << c.cpu << ", features "
               << (c.features.empty() ? std::string("(the CPU's)") : c.features)
               << ", as " << kiln::toString(device->format) << "\n"
               << footprintText(device->footprint) << "\n";
  printDispatchMemory(device->footprint.dispatches);
  reportBudgets(kiln::checkBudget(device->footprint, budget));
  return 0;
}

/// `kiln inspect --sizes`: the section table of the artifact, or of the
/// artifact the model compiles to.
static int inspectSectionSizes(const std::string &path, const kiln::CompileOptions &options,
                               std::optional<kiln_artifact_info_t> artifact, bool asJson) {
  std::vector<uint8_t> compiledBytes;
  if (!artifact) {
    auto compiled = kiln::compile(path, options);
    if (!compiled)
      return fail(compiled.takeError());
    printWarnings(compiled->warnings);
    compiledBytes = std::move(compiled->artifact);
    auto info = kiln::verifyArtifact(compiledBytes, path);
    if (!info)
      return fail(info.takeError());
    artifact = *info;
  }
  auto sizes = kiln::sectionSizesOf(*artifact, path);
  if (!sizes)
    return fail(sizes.takeError());
  llvm::outs() << kiln::formatSectionSizes(*sizes, asJson);
  return 0;
}

/// One row per dispatch of `p`: grid, tiles, source operators, kernel,
/// quantization of its output and weights.
static void printDispatchRows(const kiln::CompilationPlan &p) {
  for (const kiln::Dispatch &d : p.dispatches) {
    std::string ops;
    for (const kiln::SourceOp &op : d.ops)
      ops += (ops.empty() ? "" : ", ") + kiln::sourceOpText(op);
    std::string tileText;
    for (size_t i = 0; i < d.tileSizes.size(); ++i)
      tileText += (i ? "," : "") + std::to_string(d.tileSizes[i]);
    llvm::outs() << llvm::format("  %-20s wg %4lldx%lldx%lld  tiles [%s]  %s\n",
                                 d.name.c_str(), (long long)d.workgroupCount[0],
                                 (long long)d.workgroupCount[1], (long long)d.workgroupCount[2],
                                 tileText.c_str(), ops.c_str());
    llvm::outs() << "  " << std::string(20, ' ') << " kernel " << kiln::describeKernel(d.kernel);
    if (kiln::entryPointOf(d) != d.name)
      llvm::outs() << " (the code of " << kiln::entryPointOf(d) << ")";
    llvm::outs() << "\n";
    if (const kiln::TensorQuantization *q = kiln::findQuantization(p, d.outputTensor))
      llvm::outs() << "  " << std::string(20, ' ') << " output '" << d.outputTensor << "' "
                   << kiln::describeQuantization(*q) << "\n";
    for (const kiln::TensorQuantization *w : kiln::weightsOf(p, d))
      llvm::outs() << "  " << std::string(20, ' ') << " weights '" << w->tensor << "' "
                   << kiln::describeQuantization(*w) << "\n";
  }
}

/// The text of `kiln inspect`: what the artifact is (`description`), the
/// plan's header, the signature and quantization of a planned model,
/// whether its kernels are bounds-checked, its dynamic inputs, the
/// dispatches and the outputs.
static void printPlan(const std::string &path, const kiln::CompilationPlan &p,
                      const kiln::CompileResult *planned,
                      const std::optional<kiln::ArtifactDescription> &description,
                      const std::optional<std::vector<kiln::ModelInput>> &modelInputs,
                      bool boundsChecked) {
  if (description)
    llvm::outs() << llvm::sys::path::filename(path) << "\n"
                 << kiln::formatArtifactDescription(*description, false) << "plan\n";
  int64_t flops = 0;
  for (const kiln::Dispatch &d : p.dispatches)
    flops += d.flops;
  llvm::StringRef shown = llvm::sys::path::filename(path);
  llvm::outs() << shown;
  if (shown != p.source)
    llvm::outs() << " (compiled from " << p.source << ")";
  llvm::outs() << ": " << counted(p.dispatches.size(), "dispatch", "dispatches") << ", "
               << counted(p.schedule.commands.size(), "command", "commands") << " in "
               << counted(p.schedule.waves, "wave", "waves") << ", " << flops << " FLOPs\n"
               << "arena " << p.memory.arenaBytes << " bytes (lower bound "
               << p.memory.lowerBoundBytes << ", " << p.memory.planner << ")\n";
  if (planned)
    llvm::outs() << kiln::formatSignature(planned->inputs, planned->outputs);
  // Scale and zero point of each quantized input and output.
  if (planned || description) {
    auto quantRows = [&](const char *kind, const std::vector<kiln::IOInfo> &list) {
      for (size_t i = 0; i < list.size(); ++i)
        if (const kiln::TensorQuantization *q = kiln::findQuantization(p, list[i].name))
          llvm::outs() << llvm::left_justify(std::string(kind) + " " + std::to_string(i), 10)
                       << "'" << list[i].name << "' quantization: " << kiln::describeQuantization(*q) << "\n";
    };
    quantRows("input", planned ? planned->inputs : description->inputs);
    quantRows("output", planned ? planned->outputs : description->outputs);
  }
  // The model's own dynamic dimensions (what --fix-shape sized above).
  if (modelInputs && llvm::any_of(*modelInputs, [](const kiln::ModelInput &in) { return in.isDynamic(); }))
    llvm::outs() << kiln::formatModelInputs(*modelInputs);
  if (planned && boundsChecked)
    llvm::outs() << "kernels   bounds-checked (--check-bounds)\n";
  printDispatchRows(p);
  for (const kiln::OutputBinding &o : p.outputs)
    llvm::outs() << "  output " << o.slot << " '" << o.name << "' (" << o.bytes
                 << " bytes) <- " << kiln::describeOutputWriters(p, o) << "\n";
}

static int runInspect() {
  const std::string path = inspectPath;
  if (path.empty())
    return usage("kiln inspect takes a model or artifact file");
  const bool asJson = inspectJson;
  const std::string dot = dumpGraph, csv = dumpSchedule;
  // Copied first: compiling resets llvm::cl options (see runRun).
  const std::string target = targetName.empty() ? std::string(targetTriple) : targetName;
  const bool compileFlagsGiven = recipeFlagsGiven();
  const std::vector<std::string> reads = filesRead(path);
  auto recipe = recipeOfFlags();
  if (!recipe)
    return fail(recipe.takeError());
  // A bare-metal target is planned as the C module it exports.
  if (kiln::recipeIsBareMetal(*recipe))
    recipe->format = kiln::OutputFormat::CModule;
  auto options = compileOptionsOf(*recipe);
  if (!options)
    return fail(options.takeError());
  auto buffer = kiln::readRegularFile(std::string(path), "a .kiln, .tflite, .onnx or .mlir file");
  if (!buffer)
    return fail(buffer.takeError());
  llvm::ArrayRef<uint8_t> data(reinterpret_cast<const uint8_t *>((*buffer)->getBufferStart()),
                               (*buffer)->getBufferSize());
  // An artifact passes the gate once; its sizes and plan come from there.
  std::optional<kiln_artifact_info_t> artifact;
  if (kiln::isArtifact(path, data)) {
    if (compileFlagsGiven)
      return alreadyCompiled(path, "inspecting");
    auto info = kiln::verifyArtifact(data, path);
    if (!info)
      return fail(info.takeError());
    artifact = *info;
  }
  // A model's inputs as it declares them, symbolic dimensions included
  // (a file that does not read fails below, with the importer's message).
  std::optional<std::vector<kiln::ModelInput>> modelInputs;
  if (!artifact) {
    auto read = kiln::readModelInputs(path);
    if (read)
      modelInputs = std::move(*read);
    else
      llvm::consumeError(read.takeError());
  }
  // An import stopped by unfixed dynamic inputs lists the inputs first.
  auto failModel = [&](llvm::Error err) {
    if (modelInputs && !asJson && err.isA<kiln::UnfixedInputError>())
      llvm::outs() << kiln::formatModelInputs(*modelInputs);
    return fail(std::move(err));
  };
  // What the artifact is comes first; the plan follows when it has
  // reflection.
  std::optional<kiln::ArtifactDescription> description;
  if (artifact && !inspectSizes) {
    auto d = kiln::artifactDescriptionOf(*artifact, data, path);
    if (!d)
      return fail(d.takeError());
    if (!d->reflection)
      return inspectStripped(path, *d, asJson, dot, csv);
    description = std::move(*d);
  }
  if (inspectSizes)
    return inspectSectionSizes(path, *options, artifact, asJson);
  auto budget = memoryBudget();
  if (!budget)
    return fail(budget.takeError());
  const bool budgets = budget->ramBytes > 0 || budget->flashBytes > 0;
  if (artifact && budgets)
    return usage("--ram-budget and --flash-budget apply when inspecting a model (or to "
                 "kiln export)");
  // A model is planned without code generation, or built once for its
  // device when stack frames and flash are asked for (a bare-metal target,
  // a budget); its signature comes along either way.
  std::optional<kiln::CompileResult> planOnly;
  std::optional<kiln::DeviceBuild> device;
  if (!artifact && (kiln::isBareMetalTriple(options->target.triple) || budgets)) {
    auto build = kiln::buildForDevice(path, *options);
    if (!build)
      return failModel(build.takeError());
    device = std::move(*build);
  } else if (!artifact) {
    auto result = kiln::planOnly(path, *options);
    if (!result)
      return failModel(result.takeError());
    planOnly = std::move(*result);
  }
  const kiln::CompileResult *planned = device ? &device->compiled : planOnly ? &*planOnly : nullptr;
  if (planned)
    printWarnings(planned->warnings);
  auto plan = artifact ? kiln::planOfArtifact(*artifact, path)
                       : llvm::Expected<std::shared_ptr<const kiln::CompilationPlan>>(planned->plan);
  if (!plan)
    return fail(plan.takeError());
  std::vector<std::string> dumpTexts;
  if (llvm::Error err = kiln::writeFilesAtomically(dumpFiles(**plan, dot, csv, dumpTexts), reads))
    return fail(std::move(err));
  const kiln::CompilationPlan &p = **plan;
  if (asJson) {
    auto out = description ? kiln::inspectArtifactJson(*description, &p, path)
                           : kiln::inspectModelJson(p, planned->inputs, planned->outputs, path);
    if (!out)
      return fail(out.takeError());
    if (!description && modelInputs && out->getAsObject())
      out->getAsObject()->insert({"model_inputs", kiln::modelInputsJson(*modelInputs)});
    llvm::outs() << llvm::formatv("{0:2}", *out) << "\n";
    return 0;
  }
  printPlan(path, p, planned, description, modelInputs, options->checkBounds);
  if (artifact)
    return 0;
  return inspectDeviceMemory(target, *options, *planned, device, *budget);
}

static void printSummary(const kiln::IOInfo &info, const kiln::NpyArray &value,
                         size_t index) {
  llvm::outs() << "output " << index << " '" << info.name << "': "
               << kiln::tensorTypeText(info.shape, info.dtype);
  if (info.dtype == "<f4") {
    size_t n = value.data.size() / 4;
    const float *f = reinterpret_cast<const float *>(value.data.data());
    double sum = 0, lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; ++i) {
      sum += f[i];
      lo = std::min<double>(lo, f[i]);
      hi = std::max<double>(hi, f[i]);
    }
    llvm::outs() << llvm::format(" min %.6g max %.6g mean %.6g", lo, hi, n ? sum / n : 0.0)
                 << " [";
    for (size_t i = 0; i < std::min<size_t>(n, 6); ++i)
      llvm::outs() << (i ? ", " : "") << llvm::format("%.6g", f[i]);
    llvm::outs() << (n > 6 ? ", ...]" : "]");
  } else if (kiln::isIntegerDtype(info.dtype) && value.numElements() > 0) {
    const int64_t n = value.numElements();
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      int64_t x = kiln::integerElement(value, i);
      lo = std::min(lo, x);
      hi = std::max(hi, x);
      sum += double(x);
    }
    llvm::outs() << " min " << lo << " max " << hi << llvm::format(" mean %.6g", sum / n) << " [";
    for (int64_t i = 0; i < std::min<int64_t>(n, 6); ++i)
      llvm::outs() << (i ? ", " : "") << kiln::integerElement(value, i);
    llvm::outs() << (n > 6 ? ", ...]" : "]");
  }
  llvm::outs() << "\n";
}

/// Prints every element of `value` (--output=-), one innermost row per
/// line, as iree-run-module's --output=- does.
static void printElements(const kiln::NpyArray &value) {
  const size_t size = kiln::npyDtypeSize(value.dtype);
  const int64_t n = value.numElements();
  const int64_t row = value.shape.empty() || value.shape.back() == 0 ? 1 : value.shape.back();
  const std::string type = kiln::elementTypeName(value.dtype);
  for (int64_t i = 0; i < n && size; ++i) {
    const uint8_t *at = value.data.data() + i * size;
    if (type == "f32") {
      float f;
      std::memcpy(&f, at, 4);
      llvm::outs() << llvm::format("%.9g", f);
    } else if (type == "i32") {
      int32_t x;
      std::memcpy(&x, at, 4);
      llvm::outs() << x;
    } else if (type == "i64") {
      int64_t x;
      std::memcpy(&x, at, 8);
      llvm::outs() << x;
    } else if (type == "i8") {
      llvm::outs() << static_cast<int>(static_cast<int8_t>(*at));
    } else if (type == "f16") {
      uint16_t h;
      std::memcpy(&h, at, 2);
      llvm::outs() << llvm::format("0x%04x", h);
    } else {
      llvm::outs() << static_cast<unsigned>(*at);
    }
    llvm::outs() << ((i + 1) % row == 0 ? "\n" : " ");
  }
}

/// Reads --benchmark, --device and --threads (kiln run, kiln diff) into
/// `options`; 0, or the exit status of the usage error printed.
static int runOptionsOfFlags(kiln::RunOptions &options) {
  options.benchmarkRuns = benchmark;
  options.device = device;
  options.threads = threads;
  if (options.device != "local-sync" && options.device != "local-task")
    return usage("--device='" + options.device + "' is not a device (local-sync, local-task)");
  if (options.threads == 0 || options.threads > 256)
    return usage("--threads=" + llvm::Twine(options.threads) + " must be from 1 to 256");
  if (options.device == "local-sync" && threads.getNumOccurrences() && options.threads != 1)
    return usage("--threads=" + llvm::Twine(options.threads) +
                 " applies to --device=local-task; local-sync runs on the calling thread");
  return 0;
}

static int runRun() {
  // Copy every option first: the in-process LLD link inside compile()
  // resets llvm::cl occurrences (cl::ResetAllOptionOccurrences), which
  // empties cl::list values.
  const std::string pathText = runModel;
  if (pathText.empty())
    return usage("kiln run takes an artifact or model file");
  const std::vector<std::string> outputSpecs(runOutputs.begin(), runOutputs.end());
  kiln::RunOptions runOptions;
  if (int status = runOptionsOfFlags(runOptions))
    return status;
  const std::string tracePath = traceFile;
  runOptions.trace = !tracePath.empty();
  std::vector<kiln::NpyArray> inputs;
  for (const std::string &spec : runInputs) {
    auto array = kiln::parseInputSpec(spec);
    // A file that cannot be read is exit status 1; a spec of the wrong form
    // (no file named) is a usage error.
    if (!array)
      return llvm::StringRef(spec).contains('@') ? fail(array.takeError())
                                                 : fail(kiln::cli::asUsageError(array.takeError()));
    inputs.push_back(std::move(*array));
  }
  const bool compileFlagsGiven = recipeFlagsGiven();
  auto recipe = recipeOfFlags();
  if (!recipe)
    return fail(recipe.takeError());
  auto options = compileOptionsOf(*recipe);
  if (!options)
    return fail(options.takeError());
  if (traceFile.getNumOccurrences() && tracePath.empty())
    return fail("--trace= needs a file name, e.g. --trace=trace.json");
  if (!tracePath.empty()) {
    if (llvm::sys::fs::is_directory(tracePath))
      return fail("--trace='" + tracePath + "' is a directory");
    llvm::StringRef parent = llvm::sys::path::parent_path(tracePath);
    if (!parent.empty() && !llvm::sys::fs::is_directory(parent))
      return fail("--trace='" + tracePath + "': directory " + parent + " does not exist");
  }
  // Outputs are checked before anything runs.
  std::set<std::string> outputPaths;
  for (const std::string &spec : outputSpecs) {
    llvm::StringRef target(spec);
    if (spec == "-")
      continue;
    if (!target.consume_front("@") || target.empty())
      return usage("--output='" + spec + "': expected @file.npy, or - to print every element");
    if (llvm::sys::fs::is_directory(target))
      return fail("--output='" + spec + "': " + target + " is a directory");
    llvm::StringRef parent = llvm::sys::path::parent_path(target);
    if (!parent.empty() && !llvm::sys::fs::is_directory(parent))
      return fail("--output='" + spec + "': directory " + parent + " does not exist");
    if (!outputPaths.insert(target.str()).second)
      return fail("--output='" + spec + "' is given twice");
  }
  // No output may overwrite another, the model or artifact, or an input
  // file: refused before anything runs (the same check as at writing).
  std::vector<std::string> reads = filesRead(pathText);
  for (const std::string &spec : runInputs)
    if (size_t at = spec.find('@'); at != std::string::npos)
      reads.push_back(spec.substr(at + 1));
  std::vector<std::string> writes(outputPaths.begin(), outputPaths.end());
  if (!tracePath.empty())
    writes.push_back(tracePath);
  if (llvm::Error err = kiln::checkOutputPaths(writes, reads))
    return fail(std::move(err));
  std::vector<uint8_t> compiledArtifact;
  llvm::ArrayRef<uint8_t> artifact;
  std::shared_ptr<const kiln::CompilationPlan> plan;
  llvm::StringRef path(pathText);
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(path, status))
    return fail(path + ": cannot read: " + ec.message());
  if (status.type() != llvm::sys::fs::file_type::regular_file)
    return fail(path + ": not a regular file (expected a .kiln, .tflite, .onnx or .mlir file)");
  auto buffer = kiln::readRegularFile(std::string(path), "a .kiln, .tflite, .onnx or .mlir file");
  if (!buffer)
    return fail(buffer.takeError());
  llvm::ArrayRef<uint8_t> data(reinterpret_cast<const uint8_t *>((*buffer)->getBufferStart()),
                               (*buffer)->getBufferSize());
  bool isArtifact = kiln::isArtifact(path, data);
  if (isArtifact && compileFlagsGiven)
    return alreadyCompiled(path, "running");
  if (isArtifact) {
    // runArtifact passes it through the gate once (kiln_module_load) and,
    // when tracing, reads its plan from there.
    artifact = data;
  } else {
    auto compiled = kiln::compile(pathText, *options);
    if (!compiled)
      return fail(compiled.takeError());
    printWarnings(compiled->warnings);
    compiledArtifact = std::move(compiled->artifact);
    artifact = compiledArtifact;
    plan = compiled->plan;
  }
  auto result = kiln::runArtifact(artifact, inputs, runOptions);
  if (!result)
    return fail(llvm::Twine(path) + ": " + llvm::toString(result.takeError()));
  if (isArtifact)
    plan = result->plan;
  if (!outputSpecs.empty() && outputSpecs.size() != result->outputs.size())
    return fail("the model has " + llvm::Twine(result->outputs.size()) + " output(s), " +
                llvm::Twine(outputSpecs.size()) + " --output given");
  // The .npy outputs and the trace are written as one group: all or none.
  std::vector<kiln::OutputFile> files;
  for (size_t i = 0; i < result->outputs.size(); ++i) {
    printSummary(result->outputs[i], result->outputValues[i], i);
    if (i < outputSpecs.size() && outputSpecs[i] == "-") {
      printElements(result->outputValues[i]);
    } else if (i < outputSpecs.size()) {
      llvm::StringRef target(outputSpecs[i]);
      if (!target.consume_front("@"))
        return fail("--output='" + outputSpecs[i] + "': expected @file.npy");
      const kiln::NpyArray &value = result->outputValues[i];
      files.push_back({target.str(), [&value](llvm::raw_ostream &os) {
                         std::vector<uint8_t> bytes = kiln::serializeNpy(value);
                         os.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
                       }});
    }
  }
  std::string traceJson;
  if (runOptions.trace) {
    std::vector<std::string> names;
    if (plan) {
      std::map<int64_t, std::string> byId;
      for (const kiln::Dispatch &d : plan->dispatches)
        byId[d.id] = kiln::dispatchLabel(d);
      for (const kiln::Command &c : plan->schedule.commands)
        names.push_back(c.kind == kiln::CommandKind::Dispatch ? byId[c.dispatch]
                                                              : kiln::toString(c.kind));
    }
    traceJson = kiln::traceToChromeJson(result->trace, names);
    files.push_back({tracePath, [&traceJson](llvm::raw_ostream &os) { os << traceJson; }});
  }
  if (llvm::Error err = kiln::writeFilesAtomically(files, reads))
    return fail(std::move(err));
  if (runOptions.benchmarkRuns > 0) {
    const kiln::LatencyStats &latency = result->latency;
    llvm::outs() << llvm::format("median: %.4f ms (min %.4f ms, max %.4f ms, %u runs, ",
                                 latency.medianMs, latency.minMs, latency.maxMs, latency.runs)
                 << latency.device << ", " << latency.threads << " thread"
                 << (latency.threads == 1 ? "" : "s") << ")\n";
  }
  return 0;
}

static int runDiff() {
  const std::vector<std::string> paths(diffPaths.begin(), diffPaths.end());
  kiln::RunOptions runOptions;
  if (int status = runOptionsOfFlags(runOptions))
    return status;
  const unsigned runs = runOptions.benchmarkRuns;
  if (paths.size() != 2)
    return usage("kiln diff takes two artifacts, A and B; " + llvm::Twine(paths.size()) +
                 " given");
  std::vector<std::vector<uint8_t>> builds;
  for (const std::string &path : paths) {
    auto buffer = kiln::readRegularFile(std::string(path), "a .kiln, .tflite, .onnx or .mlir file");
    if (!buffer)
      return fail(buffer.takeError());
    llvm::StringRef data = (*buffer)->getBuffer();
    builds.emplace_back(data.begin(), data.end());
  }
  std::vector<std::string> warnings;
  auto compared =
      kiln::compareBuilds(builds[0], builds[1], paths[0], paths[1], runs, warnings, runOptions);
  if (!compared)
    return fail(compared.takeError());
  for (const std::string &w : warnings)
    warn(w);
  llvm::outs() << kiln::formatBuildDiff(compared->first, compared->second, inspectJson);
  return 0;
}

/// One row per output of `metrics`, labelled with `sample`.
static void printMetrics(const std::string &sample,
                         const std::vector<kiln::ValidationMetrics> &metrics) {
  // Integer outputs: max |error| in LSB (integer units), e.g. "2 LSB".
  for (const kiln::ValidationMetrics &m : metrics)
    llvm::outs() << llvm::format("%-12s %-26s %10lld ", sample.substr(0, 12).c_str(),
                                 m.name.substr(0, 26).c_str(), (long long)m.elements)
                 << (m.integer ? llvm::format("%9.0f LSB", m.maxAbsError)
                               : llvm::format("%13.4e", m.maxAbsError))
                 << llvm::format(" %12.4e %11.8f %8lld %8lld\n", m.rmse, m.cosine,
                                 (long long)m.outsideTolerance, (long long)m.differing);
}

static int runValidate() {
  const std::vector<std::string> paths(validatePaths.begin(), validatePaths.end());
  const bool asJson = inspectJson;
  kiln::ValidationOptions validation;
  validation.stackedSamples = validateSamples;
  validation.tolerance.atol = validateAtol;
  validation.tolerance.rtol = validateRtol;
  validation.tolerance.lsb = validateLsb;
  if (paths.size() != 2)
    return usage("kiln validate takes a model or artifact and a folder; " +
                 llvm::Twine(paths.size()) + " given");
  if (!(validation.tolerance.atol >= 0) || !(validation.tolerance.rtol >= 0))
    return usage("--atol and --rtol must be numbers >= 0");
  if (validation.tolerance.lsb < 0)
    return usage("--tolerance-lsb=" + llvm::Twine(validation.tolerance.lsb) +
                 " must be an integer >= 0");
  if (validation.stackedSamples < 0)
    return usage("--samples=" + llvm::Twine(validation.stackedSamples) +
                 " must be at least 1 (or absent)");
  // validateArtifact checks the folder (one place for the CLI and the
  // workbench).
  const std::string &path = paths[0], &dir = paths[1];
  auto recipe = recipeOfFlags();
  if (!recipe)
    return fail(recipe.takeError());
  auto options = compileOptionsOf(*recipe);
  if (!options)
    return fail(options.takeError());
  std::vector<uint8_t> compiledArtifact;
  auto buffer = kiln::readRegularFile(std::string(path), "a .kiln, .tflite, .onnx or .mlir file");
  if (!buffer)
    return fail(buffer.takeError());
  llvm::ArrayRef<uint8_t> artifact(
      reinterpret_cast<const uint8_t *>((*buffer)->getBufferStart()), (*buffer)->getBufferSize());
  const bool isArtifact = kiln::isArtifact(path, artifact);
  if (isArtifact && recipeFlagsGiven())
    return alreadyCompiled(path, "validating");
  if (!isArtifact) {
    auto compiled = kiln::compile(path, *options);
    if (!compiled)
      return fail(compiled.takeError());
    printWarnings(compiled->warnings);
    compiledArtifact = std::move(compiled->artifact);
    artifact = compiledArtifact;
  }
  auto report = kiln::validateArtifact(artifact, dir, validation);
  if (!report)
    return fail(path + ": " + llvm::toString(report.takeError()));
  if (asJson) {
    llvm::outs() << llvm::formatv("{0:2}", kiln::validationReportToJson(*report)) << "\n";
    return report->pass ? 0 : 3;
  }
  llvm::outs() << "sample       output                       elements   max |error|         "
                  "rmse      cosine  outside   differ\n";
  if (report->samples.size() > 1)
    for (size_t s = 0; s < report->samples.size(); ++s)
      printMetrics(report->sampleNames[s], report->samples[s]);
  printMetrics(report->samples.size() > 1 ? "all " + std::to_string(report->samples.size())
                                          : report->sampleNames[0],
               report->overall);
  llvm::outs() << (report->pass ? "PASS" : "FAIL") << ": every element of "
               << report->samples.size() << " sample(s) " << kiln::passCriterionText(*report)
               << (report->pass ? "" : " does not hold") << "\n";
  return report->pass ? 0 : 3;
}

static int exportRequest(const kiln::ExportRequest &request, const std::string &dir);

static int runExport() {
  // Copied first: compiling resets llvm::cl occurrences (see runRun).
  kiln::ExportRequest request;
  request.model = exportModel;
  std::string dir = exportOutput;
  const std::string project = projectFile;
  auto budget = memoryBudget();
  if (!budget)
    return fail(budget.takeError());
  request.budget = *budget;
  auto bufferBytes = maxBufferBytesFlag();
  if (!bufferBytes)
    return fail(bufferBytes.takeError());
  request.maxBufferBytes = *bufferBytes;
  if (request.model.empty() == project.empty())
    return usage("kiln export takes a model file or --project=FILE.kilnproj (one of them)");
  if (!project.empty()) {
    if (recipeFlagsGiven())
      return projectFlagsError(project);
    auto loaded = loadProjectFlag(project, request.model);
    if (!loaded)
      return fail(loaded.takeError());
    // What the workbench's Export dialog exported: the working recipe with
    // the export's settings; budget flags given here win.
    kiln::ExportRequest exported = kiln::projectExportRequest(*loaded, project);
    if (llvm::Error err = kiln::validateRecipe(exported.recipe))
      return fail(project + ": export settings: " + llvm::toString(std::move(err)));
    request.recipe = exported.recipe;
    if (!ramBudget.getNumOccurrences())
      request.budget.ramBytes = exported.budget.ramBytes;
    if (!flashBudget.getNumOccurrences())
      request.budget.flashBytes = exported.budget.flashBytes;
    if (dir.empty())
      dir = kiln::projectExportDir(*loaded, project);
    if (dir.empty())
      return fail(project + " names no export folder (\"export_dir\"); give -o DIR");
  } else {
    if (!targetTriple.empty())
      return fail("kiln export takes a named --target (" +
                  llvm::join(kiln::knownTargets(), ", ") + "), not --target-triple");
    auto recipe = recipeOfFlags();
    if (!recipe)
      return fail(recipe.takeError());
    request.recipe = *recipe;
  }
  warnUnusedSettings(request.recipe);
  return exportRequest(request, dir.empty() ? kiln::defaultExportDir(request) : dir);
}

/// Builds and writes the bundle of `request` into `dir`.
static int exportRequest(const kiln::ExportRequest &request, const std::string &dir) {
  const std::vector<std::string> exportReads = filesRead(request.model);
  auto bundle = kiln::buildExportBundle(request);
  if (!bundle)
    return fail(bundle.takeError());
  printWarnings(bundle->warnings);
  if (llvm::Error err = kiln::writeExportBundle(*bundle, dir, {}, exportReads))
    return fail(std::move(err));
  llvm::outs() << "exported " << request.model << " for " << request.recipe.target << " to " << dir
               << ": ";
  for (size_t i = 0; i < bundle->files.size(); ++i)
    llvm::outs() << (i ? ", " : "") << bundle->files[i].name;
  llvm::outs() << "\n" << footprintText(bundle->footprint) << "\n";
  printDispatchMemory(bundle->footprint.dispatches);
  reportBudgets(bundle->budgetChecks);
  return 0;
}

int main(int argc, char **argv) {
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "kiln " << kiln::version() << "\n"
       << "built with LLVM/MLIR " << kiln::llvmVersion() << "\n";
  });
  // A backend that cannot compile for a target LLVM otherwise knows
  // (--target-triple=sparcv9-unknown-linux-gnu: "over-aligned dynamic
  // alloca not supported") reports a fatal error: one error line and exit
  // status 1, not an abort. No output file exists yet at that point.
  llvm::install_fatal_error_handler([](void *, const char *reason, bool) {
    // Every file stream's error is checked where it is written
    // (kiln/AtomicWrite.h); an I/O failure here is LLVM's own.
    llvm::StringRef why(reason);
    llvm::errs() << "kiln: error: "
                 << (why.contains("IO failure") ? "cannot write an output: "
                                                : "LLVM cannot compile this build: ")
                 << reason << "\n";
    llvm::errs().flush();
    std::_Exit(1);
  });
  // --help and --version print and exit inside llvm::cl; a standard output
  // that cannot be written (kiln --help > /dev/full) is reported here, at
  // exit, before outs() is destroyed (it was constructed first, so it is
  // destroyed after this handler runs). The parser runs with stderr
  // captured (kiln::cli::parseArguments), so the message goes to a copy of
  // the original stderr.
  llvm::outs();
  static int originalStderr = dup(STDERR_FILENO);
  std::atexit([] {
    llvm::outs().flush();
    if (!llvm::outs().has_error() || originalStderr < 0)
      return;
    llvm::raw_fd_ostream err(originalStderr, /*shouldClose=*/false, /*unbuffered=*/true);
    err << "kiln: error: cannot write to standard output: " << llvm::outs().error().message()
        << "\n";
    std::_Exit(1);
  });
  cl::HideUnrelatedOptions(kilnCategory);
  auto args = kiln::cli::checkArguments(std::vector<std::string>(argv, argv + argc), kilnCategory);
  if (!args)
    return fail(args.takeError());
  if (llvm::Error err = kiln::cli::parseArguments(
          *args, "Kiln: ahead-of-time compiler for neural-network models\n"))
    return fail(std::move(err));
  int status = 2;
  if (compileCmd)
    status = runCompile();
  else if (runCmd)
    status = runRun();
  else if (inspectCmd)
    status = runInspect();
  else if (diffCmd)
    status = runDiff();
  else if (exportCmd)
    status = runExport();
  else if (validateCmd)
    status = runValidate();
  else {
    cl::PrintHelpMessage(false, true);
    return 2;
  }
  llvm::outs().flush();
  if (llvm::outs().has_error()) {
    std::string message = llvm::outs().error().message();
    llvm::outs().clear_error();
    return fail("cannot write to standard output: " + message);
  }
  return status;
}
