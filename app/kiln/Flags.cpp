//===- Flags.cpp - kiln's flags and what they make ------------------------===//
//
// Every flag of every subcommand, defined here in one translation unit (so
// llvm::cl registers them in this order, after their subcommands and
// category), and the functions that turn flags into Kiln's structs: the
// build recipe, compile, run and memory-budget options, the files a
// command reads and the --dump-* files it writes.
//
//===----------------------------------------------------------------------===//
#include "Kiln.h"
#include "Usage.h"

#include "kiln/Artifact.h"
#include "kiln/AtomicWrite.h"
#include "kiln/Error.h"
#include "kiln/Export.h"
#include "kiln/ModelInputs.h"
#include "kiln/Options.h"
#include "kiln/Plan.h"
#include "kiln/Project.h"
#include "kiln/Recipe.h"
#include "kiln/Run.h"
#include "kiln/Targets.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

namespace kiln::cli {

cl::OptionCategory kilnCategory("kiln options");

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

cl::SubCommand compileCmd("compile", "Compile a model to a .kiln artifact or print "
                                     "an intermediate stage");
cl::SubCommand runCmd("run", "Run a .kiln artifact (or compile a model "
                             "in memory and run it)");
cl::SubCommand inspectCmd("inspect", "Print the dispatches, schedule and memory "
                                     "plan of a model or artifact");
cl::SubCommand diffCmd("diff", "Per-section size difference of two artifacts");
cl::SubCommand validateCmd("validate", "Run a model or artifact on DIR/input_K.npy and compare "
                                       "with DIR/output_K.npy (max error, RMSE, cosine), or "
                                       "compare two models (--compare-with)");
cl::SubCommand exportCmd("export", "Compile for a device and write a bundle: the "
                                   "artifact or C module, manifest.json, report.md");

// compile
cl::opt<std::string> compileModel(cl::Positional, cl::Optional,
                                  cl::desc("<model.tflite|model.onnx|model.mlir>"),
                                  cl::sub(compileCmd));
cl::opt<std::string>
    compileOutput("o", cl::desc("Output file (default: MODEL.kiln, or stdout with --emit)"),
                  cl::value_desc("file"), cl::sub(compileCmd), cl::cat(kilnCategory));
cl::opt<std::string> emit("emit",
                          cl::desc("Print the module after a stage: tosa, linalg, "
                                   "dispatches, buffers, llvm-ir, asm"),
                          cl::value_desc("stage"), cl::sub(compileCmd), cl::cat(kilnCategory));

// run
cl::opt<std::string> runModel(cl::Positional, cl::Optional,
                              cl::desc("<artifact.kiln|model.tflite|model.onnx>"), cl::sub(runCmd));
cl::list<std::string> runInputs("input",
                                cl::desc("An input, in signature order: @file.npy "
                                         "or DIMSxTYPE=VALUE (e.g. 1x16x96xf32=0.5, "
                                         "1x96x96x1xi8=3, 2x3xu8=200)"),
                                cl::value_desc("spec"), cl::sub(runCmd), cl::cat(kilnCategory));
cl::list<std::string> runOutputs("output",
                                 cl::desc("Where to write an output, in signature "
                                          "order: @file.npy"),
                                 cl::value_desc("@file.npy"), cl::sub(runCmd),
                                 cl::cat(kilnCategory));
cl::opt<unsigned> benchmark("benchmark",
                            cl::desc("Run N more warm inferences and print the median, "
                                     "min and max latency"),
                            cl::init(0), cl::value_desc("N"), cl::sub(runCmd), cl::sub(diffCmd),
                            cl::cat(kilnCategory));

cl::opt<std::string> device("device", cl::desc("HAL device: local-sync or local-task"),
                            cl::init("local-sync"), cl::sub(runCmd), cl::sub(diffCmd),
                            cl::cat(kilnCategory));
cl::opt<unsigned> threads("threads", cl::desc("Threads of the local-task device (default 1)"),
                          cl::init(1), cl::sub(runCmd), cl::sub(diffCmd), cl::cat(kilnCategory));
cl::opt<std::string>
    traceFile("trace",
              cl::desc("Write the measured start and end of every "
                       "dispatch and workgroup of the first run (with "
                       "--benchmark, one more warm run after the untraced timed ones) as a "
                       "Chrome trace-event JSON file"),
              cl::value_desc("file.json"), cl::sub(runCmd), cl::cat(kilnCategory));

// inspect
cl::opt<std::string> inspectPath(cl::Positional, cl::Optional,
                                 cl::desc("<model.tflite|model.onnx|artifact.kiln>"),
                                 cl::sub(inspectCmd));
cl::opt<bool> inspectJson("json", cl::desc("Print JSON instead of a table"), cl::sub(validateCmd),
                          cl::sub(inspectCmd), cl::sub(diffCmd), cl::cat(kilnCategory));
cl::opt<bool> inspectSizes("sizes",
                           cl::desc("Print the bytes of each artifact section (io, "
                                    "commands, memory_plan, executables, device, "
                                    "constants, reflection) and the format overhead"),
                           cl::sub(inspectCmd), cl::cat(kilnCategory));

// diff
cl::list<std::string> diffPaths(cl::Positional, cl::desc("<a.kiln> <b.kiln>"), cl::sub(diffCmd));

// validate
cl::list<std::string> validatePaths(cl::Positional,
                                    cl::desc("<model|artifact> <dir with input_K.npy, "
                                             "output_K.npy> (with --compare-with: the dir "
                                             "is optional, input_K.npy only)"),
                                    cl::sub(validateCmd));

cl::opt<int64_t> validateSamples(
    "samples",
    cl::desc("DIR/input_K.npy and output_K.npy each hold N samples stacked on a leading axis "
             "(default: one sample, or DIR/sample_S/ folders of them)"),
    cl::value_desc("N"), cl::init(0), cl::sub(validateCmd), cl::cat(kilnCategory));
cl::opt<std::string> validateCompareWith(
    "compare-with",
    cl::desc("Compare the model with model or artifact B on the same inputs, output by output "
             "(max |error|, RMSE, cosine, top-1 agreement; integer outputs dequantized): "
             "random inputs, or DIR/input_K.npy when a folder is given"),
    cl::value_desc("B"), cl::sub(validateCmd), cl::cat(kilnCategory));
cl::opt<uint64_t> validateSeed("seed",
                               cl::desc("Seed of --compare-with's random inputs (default 1)"),
                               cl::value_desc("S"), cl::init(1), cl::sub(validateCmd),
                               cl::cat(kilnCategory));
cl::opt<double> validateAtol("atol",
                             cl::desc("Absolute tolerance: an element passes when "
                                      "|error| <= atol + rtol x |reference| (default 1e-4)"),
                             cl::init(1e-4), cl::sub(validateCmd), cl::cat(kilnCategory));
cl::opt<double> validateRtol("rtol", cl::desc("Relative tolerance (default 1e-4)"), cl::init(1e-4),
                             cl::sub(validateCmd), cl::cat(kilnCategory));
cl::opt<int64_t> validateLsb(
    "tolerance-lsb",
    cl::desc("Integer outputs (i8, u8, i32): an element passes when |error| <= N integer "
             "units (LSB); default 0, exact equality. --atol/--rtol apply to f32 outputs"),
    cl::value_desc("N"), cl::init(0), cl::sub(validateCmd), cl::cat(kilnCategory));

// build profile (compile, run, inspect)
cl::opt<std::string> profile("profile",
                             cl::desc("Build profile: default (debug symbols and "
                                      "reflection) or stripped (neither)"),
                             cl::init("default"), cl::sub(compileCmd), cl::sub(exportCmd),
                             cl::sub(validateCmd), cl::sub(runCmd), cl::sub(inspectCmd),
                             cl::cat(kilnCategory));
cl::opt<bool> debugSymbols("debug-symbols",
                           cl::desc("Keep the kernels' symbol table (overrides the "
                                    "profile; .kiln only)"),
                           cl::sub(compileCmd), cl::sub(exportCmd), cl::sub(runCmd),
                           cl::sub(inspectCmd), cl::cat(kilnCategory));
cl::opt<bool> reflectionData("reflection",
                             cl::desc("Embed the plan for tools (overrides the profile; "
                                      ".kiln only)"),
                             cl::sub(compileCmd), cl::sub(exportCmd), cl::sub(runCmd),
                             cl::sub(inspectCmd), cl::cat(kilnCategory));

// shared by compile, run and inspect (compiling a model)
cl::opt<std::string> dumpGraph("dump-dispatch-graph",
                               cl::desc("Write the dispatch graph as Graphviz DOT"),
                               cl::value_desc("file.dot"), cl::sub(compileCmd), cl::sub(inspectCmd),
                               cl::cat(kilnCategory));
cl::opt<std::string> dumpSchedule("dump-schedule", cl::desc("Write the command list as CSV"),
                                  cl::value_desc("file.csv"), cl::sub(compileCmd),
                                  cl::sub(inspectCmd), cl::cat(kilnCategory));
cl::list<std::string> tiles("tile",
                            cl::desc("Workgroup tile sizes of one dispatch: ID=S0,S1,... "
                                     "(one per loop of its tiled op, 0 = whole loop)"),
                            cl::value_desc("id=sizes"), cl::sub(compileCmd), cl::sub(exportCmd),
                            cl::sub(validateCmd), cl::sub(runCmd), cl::sub(inspectCmd),
                            cl::cat(kilnCategory));
cl::opt<std::string> tuning("tuning",
                            cl::desc("JSON file of build settings, e.g. {\"tiles\": "
                                     "{\"ID\": [..]}, \"no_fusion\": [ID, ..], "
                                     "\"fusion\": bool} (a bundle manifest's \"recipe\"); "
                                     "flags given too win"),
                            cl::value_desc("file.json"), cl::sub(compileCmd), cl::sub(exportCmd),
                            cl::sub(validateCmd), cl::sub(runCmd), cl::sub(inspectCmd),
                            cl::cat(kilnCategory));
cl::opt<bool> fusion("fusion",
                     cl::desc("Fuse elementwise consumers and padding into their "
                              "root's dispatch (default true; --fusion=false: off)"),
                     cl::init(true), cl::sub(compileCmd), cl::sub(exportCmd), cl::sub(validateCmd),
                     cl::sub(runCmd), cl::sub(inspectCmd), cl::cat(kilnCategory));
cl::list<std::string> noFusion("no-fusion", cl::desc("Turn fusion off for one dispatch id"),
                               cl::value_desc("id"), cl::sub(compileCmd), cl::sub(exportCmd),
                               cl::sub(validateCmd), cl::sub(runCmd), cl::sub(inspectCmd),
                               cl::cat(kilnCategory));
cl::opt<bool> checkBounds("check-bounds",
                          cl::desc("Bounds-checked kernels: every load and store checks "
                                   "its binding's extent; a refused access fails the run "
                                   "with KILN_OUT_OF_RANGE naming the dispatch (slow; "
                                   ".kiln only)"),
                          cl::sub(compileCmd), cl::sub(exportCmd), cl::sub(validateCmd),
                          cl::sub(runCmd), cl::sub(inspectCmd), cl::cat(kilnCategory));
cl::opt<std::string> signature("signature",
                               cl::desc("The TFLite signature to compile (a signature_key, "
                                        "as `kiln inspect MODEL` lists them), its inputs and "
                                        "outputs named and ordered as it lists them (default: "
                                        "subgraph 0, with its tensors' names)"),
                               cl::value_desc("name"), cl::sub(compileCmd), cl::sub(exportCmd),
                               cl::sub(validateCmd), cl::sub(runCmd), cl::sub(inspectCmd),
                               cl::cat(kilnCategory));
cl::list<std::string> fixShapes("fix-shape",
                                cl::desc("Give a dynamic input a static shape: "
                                         "INPUT=DIMS (name or index), e.g. 0=1x76x32x1"),
                                cl::value_desc("input=dims"), cl::sub(compileCmd),
                                cl::sub(exportCmd), cl::sub(validateCmd), cl::sub(runCmd),
                                cl::sub(inspectCmd), cl::cat(kilnCategory));
cl::list<std::string> fixValues("fix-value",
                                cl::desc("Fix an input (ONNX) to a value, a constant of the "
                                         "build that leaves the signature: INPUT=VALUE (name "
                                         "or index), VALUE a number (sr=16000, flag=true) or "
                                         "one per element, e.g. x=1,2,3 or x=[1,2,3]"),
                                cl::value_desc("input=value"), cl::sub(compileCmd),
                                cl::sub(exportCmd), cl::sub(validateCmd), cl::sub(runCmd),
                                cl::sub(inspectCmd), cl::cat(kilnCategory));
cl::opt<std::string> targetTriple("target-triple", cl::desc("LLVM target triple (default: host)"),
                                  cl::sub(compileCmd), cl::sub(runCmd), cl::sub(inspectCmd),
                                  cl::cat(kilnCategory));
cl::opt<std::string> targetCpu("target-cpu", cl::desc(targetCpuHelp()), cl::init("generic"),
                               cl::sub(compileCmd), cl::sub(exportCmd), cl::sub(validateCmd),
                               cl::sub(runCmd), cl::sub(inspectCmd), cl::cat(kilnCategory));
cl::opt<std::string> targetFeatures("target-cpu-features",
                                    cl::desc("LLVM CPU features, e.g. +avx2,+fma, or host"),
                                    cl::sub(compileCmd), cl::sub(exportCmd), cl::sub(validateCmd),
                                    cl::sub(runCmd), cl::sub(inspectCmd), cl::cat(kilnCategory));

cl::opt<uint64_t> maxBufferBytes(
    "max-buffer-bytes",
    cl::desc("Largest buffer (one tensor, the arena) the build may ask the device for, "
             "bytes (default: 2147483647 on 32-bit targets, 4294967296 on 64-bit ones)"),
    cl::value_desc("bytes"), cl::init(0), cl::sub(compileCmd), cl::sub(exportCmd),
    cl::sub(validateCmd), cl::sub(runCmd), cl::sub(inspectCmd), cl::cat(kilnCategory));

// target and output (compile, export)
cl::opt<std::string> targetName("target", cl::desc(targetHelp()), cl::value_desc("name"),
                                cl::sub(compileCmd), cl::sub(runCmd), cl::sub(inspectCmd),
                                cl::sub(exportCmd), cl::sub(validateCmd), cl::cat(kilnCategory));
cl::opt<std::string> ramBudget("ram-budget",
                               cl::desc("Warn when RAM (arena + I/O + kernel stack) "
                                        "exceeds this: bytes, or with K, KiB, M, MiB "
                                        "(1K = 1024)"),
                               cl::value_desc("bytes"), cl::sub(inspectCmd), cl::sub(exportCmd),
                               cl::cat(kilnCategory));
cl::opt<std::string> flashBudget("flash-budget",
                                 cl::desc("Warn when flash (code + weights + metadata) "
                                          "exceeds this: bytes, or with K, KiB, M, MiB "
                                          "(1K = 1024)"),
                                 cl::value_desc("bytes"), cl::sub(inspectCmd), cl::sub(exportCmd),
                                 cl::cat(kilnCategory));
cl::opt<std::string> outputFormat("output-format",
                                  cl::desc("kiln (a .kiln artifact, default) or c-module "
                                           "(NAME.h, NAME.c, NAME_constants.c, "
                                           "NAME_kernels.o in the -o folder)"),
                                  cl::init("kiln"), cl::sub(compileCmd), cl::sub(exportCmd),
                                  cl::cat(kilnCategory));
cl::opt<std::string> moduleName("module-name",
                                cl::desc("C module symbol prefix (default: the model's "
                                         "file name)"),
                                cl::sub(compileCmd), cl::sub(exportCmd), cl::cat(kilnCategory));
cl::opt<std::string> exportModel(cl::Positional, cl::Optional,
                                 cl::desc("<model.tflite|model.onnx|model.mlir>"),
                                 cl::sub(exportCmd));
cl::opt<std::string> exportOutput("o",
                                  cl::desc("Bundle folder (created if missing; "
                                           "default MODEL-TARGET-PROFILE)"),
                                  cl::value_desc("dir"), cl::sub(exportCmd), cl::cat(kilnCategory));
cl::opt<std::string> projectFile("project",
                                 cl::desc("Build with the settings of a .kilnproj "
                                          "project (as the workbench saved them; "
                                          "export uses its export settings)"),
                                 cl::value_desc("file.kilnproj"), cl::sub(compileCmd),
                                 cl::sub(exportCmd), cl::cat(kilnCategory));

// firmware kits (export, validate --on-target; kiln/Kit.h)
cl::opt<bool> kitFlag("kit",
                      cl::desc("Add a firmware kit to the bundle: for a Cortex-M target "
                               "startup code, a linker script sized for the board, main.c "
                               "and a Makefile for arm-none-eabi-gcc (make run: QEMU); for a "
                               "Linux target the runtime archive, runtime.h, main.c and a "
                               "Makefile"),
                      cl::sub(exportCmd), cl::cat(kilnCategory));
cl::list<std::string> kitInputs("kit-input",
                                cl::desc("An input the kit's program runs on, one .npy per "
                                         "model input in order (default: a deterministic "
                                         "pattern, see kit.h)"),
                                cl::value_desc("file.npy"), cl::sub(exportCmd),
                                cl::sub(validateCmd), cl::cat(kilnCategory));
cl::opt<bool> onTarget("on-target",
                       cl::desc("Build the model's firmware kit for --target, run it on the "
                                "device (QEMU's board for a Cortex-M, qemu-user for a foreign "
                                "Linux) and compare its outputs with the host build's"),
                       cl::sub(validateCmd), cl::cat(kilnCategory));

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
  list("fix-value", fixValues);
  boolean("check-bounds", checkBounds);
  text("signature", signature);
  return flags;
}

bool recipeFlagsGiven() {
  return !recipeFlags().empty() || !targetTriple.empty() || !tuning.empty();
}

std::vector<std::string> filesRead(const std::string &path) {
  std::vector<std::string> reads = {path};
  for (std::string data : kiln::modelDataFiles(path))
    reads.push_back(std::move(data));
  for (const std::string &flag : {std::string(tuning), std::string(projectFile)})
    if (!flag.empty())
      reads.push_back(flag);
  return reads;
}

llvm::Expected<kiln::BuildRecipe> recipeOfFlags() {
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

llvm::Expected<int64_t> maxBufferBytesFlag() {
  if (maxBufferBytes > static_cast<uint64_t>(INT64_MAX))
    return kiln::cli::usageError("--max-buffer-bytes=" + llvm::Twine(maxBufferBytes) +
                                 " is above 2^63 - 1");
  return static_cast<int64_t>(maxBufferBytes);
}

llvm::Expected<kiln::CompileOptions> compileOptionsOf(const kiln::BuildRecipe &recipe) {
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

void warnUnusedSettings(const kiln::BuildRecipe &recipe) {
  if (recipe.format == kiln::OutputFormat::CModule && (recipe.debugSymbols || recipe.reflection))
    warn(llvm::Twine(recipe.debugSymbols ? "--debug-symbols" : "--reflection") +
         " changes nothing for a C module: its kernels object keeps the symbols the "
         "firmware links against, and it carries no reflection section");
}

llvm::Expected<kiln::Project> loadProjectFlag(const std::string &path, std::string &model) {
  auto project = kiln::loadProject(path);
  if (!project)
    return project.takeError();
  if (llvm::Error err = kiln::validateRecipe(project->recipe))
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s: %s", path.c_str(),
                                   llvm::toString(std::move(err)).c_str());
  model = kiln::projectModelPath(*project, path);
  return project;
}

int projectFlagsError(const std::string &project) {
  return usage(
      "--project=" + project +
      " sets the target, profile, format and tuning; edit the project "
      "instead of adding --target*/--profile/--tile/--fusion/--fix-shape/--fix-value/--signature "
      "flags");
}

std::vector<kiln::OutputFile> dumpFiles(const kiln::CompilationPlan &plan, const std::string &dot,
                                        const std::string &csv, std::vector<std::string> &texts) {
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

llvm::Expected<kiln::MemoryBudget> memoryBudget() {
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

llvm::Expected<kiln::KitRequest> kitRequestOfFlags(bool enabled) {
  kiln::KitRequest kit;
  kit.enabled = enabled;
  if (!enabled && !kitInputs.empty())
    return usageError("--kit-input applies with --kit (kiln export) or --on-target "
                      "(kiln validate)");
  for (const std::string &file : kitInputs) {
    auto array = kiln::readNpyFile(file);
    if (!array)
      return kiln::makeError("--kit-input=" + file + ": " + llvm::toString(array.takeError()));
    kit.inputs.push_back({file, array->dtype, array->shape, std::move(array->data)});
  }
  return kit;
}

int runOptionsOfFlags(kiln::RunOptions &options) {
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

} // namespace kiln::cli
