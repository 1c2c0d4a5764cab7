//===- main.cpp - The `kiln` command-line tool ----------------------------===//
//
//   kiln compile MODEL [-o OUT.kiln] [--emit=STAGE] [tuning flags]
//   kiln run MODEL|ARTIFACT --input=@in.npy ... [--output=@out.npy ...]
//            [--benchmark=N] [--device=local-sync|local-task] [--threads=N]
//            [--trace=FILE.json]
//   kiln inspect MODEL|ARTIFACT [--json] [--sizes] [--dump-dispatch-graph=FILE.dot]
//            [--dump-schedule=FILE.csv]
//   kiln diff A.kiln B.kiln [--json]
//   kiln validate MODEL|ARTIFACT DIR [--json]   (exit 3 when outputs differ)
//   kiln export MODEL --target=T [--profile=P] [--output-format=kiln|c-module] -o DIR
//   kiln --version
//
// Exit status: 0 on success, 1 on a user error (one message on stderr),
// 2 on bad usage.
//
//===----------------------------------------------------------------------===//
#include "kiln/Artifact.h"
#include "kiln/Compiler.h"
#include "kiln/Export.h"
#include "kiln/Npy.h"
#include "kiln/Plan.h"
#include "kiln/Project.h"
#include "kiln/Run.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <cmath>
#include <cstring>

namespace cl = llvm::cl;

static cl::OptionCategory kilnCategory("kiln options");

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
                                         cl::desc("<model.tflite|model.mlir>"),
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
static cl::opt<std::string> runModel(cl::Positional, cl::Required,
                                     cl::desc("<artifact.kiln|model.tflite>"),
                                     cl::sub(runCmd));
static cl::list<std::string> runInputs("input",
                                       cl::desc("An input, in signature order: @file.npy "
                                                "or DIMSxTYPE=VALUE (e.g. 1x16x96xf32=0.5)"),
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
                                   cl::init("local-sync"), cl::sub(runCmd), cl::cat(kilnCategory));
static cl::opt<unsigned> threads("threads",
                                 cl::desc("Threads of the local-task device (default 1)"),
                                 cl::init(1), cl::sub(runCmd), cl::cat(kilnCategory));
static cl::opt<std::string> traceFile("trace",
                                      cl::desc("Write the measured start and end of every "
                                               "dispatch and workgroup of the first run (with "
                                               "--benchmark, the last warm run) as a "
                                               "Chrome trace-event JSON file"),
                                      cl::value_desc("file.json"), cl::sub(runCmd),
                                      cl::cat(kilnCategory));

// inspect
static cl::opt<std::string> inspectPath(cl::Positional, cl::Required,
                                        cl::desc("<model.tflite|artifact.kiln>"),
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
                                   cl::desc("JSON tuning file: {\"tiles\": {\"ID\": [..]}, "
                                            "\"no_fusion\": [ID, ..], \"fusion\": bool}"),
                                   cl::value_desc("file.json"), cl::sub(compileCmd), cl::sub(exportCmd), cl::sub(validateCmd),
                                   cl::sub(runCmd), cl::sub(inspectCmd), cl::cat(kilnCategory));
static cl::opt<bool> fusion("fusion",
                            cl::desc("Fuse elementwise consumers and padding into their "
                                     "root's dispatch (default true; --fusion=false: off)"),
                            cl::init(true), cl::sub(compileCmd), cl::sub(exportCmd), cl::sub(validateCmd), cl::sub(runCmd),
                            cl::sub(inspectCmd), cl::cat(kilnCategory));
static cl::list<int64_t> noFusion("no-fusion",
                                  cl::desc("Turn fusion off for one dispatch id"),
                                  cl::value_desc("id"), cl::sub(compileCmd), cl::sub(exportCmd), cl::sub(validateCmd), cl::sub(runCmd),
                                  cl::sub(inspectCmd), cl::cat(kilnCategory));
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
static cl::opt<std::string> targetCpu("target-cpu",
                                      cl::desc("LLVM CPU name, or host for this machine's CPU "
                                               "and features (default: generic, or the "
                                               "target's: cortex-m4 for thumbv7em)"),
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
static cl::opt<std::string> targetName("target",
                                       cl::desc("Device target: host, x86_64-linux-gnu, "
                                                "aarch64-linux-gnu, riscv64-linux-gnu, "
                                                "thumbv7em-none-eabihf (Cortex-M4F)"),
                                       cl::value_desc("name"), cl::sub(compileCmd),
                                       cl::sub(runCmd), cl::sub(inspectCmd), cl::sub(exportCmd),
                                       cl::cat(kilnCategory));
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
                                        cl::desc("<model.tflite|model.mlir>"),
                                        cl::sub(exportCmd));
static cl::opt<std::string> exportOutput("o", cl::desc("Bundle folder (created if missing; "
                                                  "default MODEL-TARGET-PROFILE)"),
                                         cl::value_desc("dir"), cl::sub(exportCmd),
                                         cl::cat(kilnCategory));
static cl::opt<std::string> projectFile("project",
                                        cl::desc("Build with the settings of a .kilnproj "
                                                 "project (as the workbench saved them)"),
                                        cl::value_desc("file.kilnproj"), cl::sub(compileCmd),
                                        cl::sub(exportCmd), cl::cat(kilnCategory));

/// True when a flag that --project also sets was given.
static bool tuningFlagsGiven() {
  return !fixShapes.empty() || !targetTriple.empty() || !targetName.empty() ||
         targetCpu.getNumOccurrences() || targetFeatures.getNumOccurrences() ||
         !tiles.empty() || !tuning.empty() || fusion.getNumOccurrences() ||
         !noFusion.empty() || profile.getNumOccurrences() ||
         debugSymbols.getNumOccurrences() || reflectionData.getNumOccurrences() ||
         outputFormat.getNumOccurrences() || moduleName.getNumOccurrences();
}

/// Loads --project: the model path and compile options it gives.
static llvm::Error loadProjectOptions(const std::string &path, std::string &model,
                                      kiln::CompileOptions &options) {
  auto project = kiln::loadProject(path);
  if (!project)
    return project.takeError();
  auto projectOptions = kiln::projectCompileOptions(*project);
  if (!projectOptions)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s: %s", path.c_str(),
                                   llvm::toString(projectOptions.takeError()).c_str());
  model = kiln::projectModelPath(*project, path);
  options = *projectOptions;
  return llvm::Error::success();
}

static int fail(const llvm::Twine &message) {
  llvm::errs() << "kiln: error: " << message << "\n";
  return 1;
}

static int fail(llvm::Error err) {
  std::string message = llvm::toString(std::move(err));
  return fail(message);
}

static llvm::Expected<kiln::CompileOptions> compileOptions() {
  kiln::CompileOptions options;
  options.target.cpu = targetCpu;
  options.target.features = targetFeatures;
  if (!targetName.empty()) {
    if (!targetTriple.empty())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "--target and --target-triple both given; use one");
    if (llvm::Error err = kiln::applyTarget(targetName, options.target))
      return std::move(err);
  } else {
    options.target.triple = targetTriple;
  }
  if (!kiln::parseOutputFormat(outputFormat, options.format))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "--output-format='%s' is not a format (kiln, c-module)",
                                   outputFormat.c_str());
  options.moduleName = moduleName;
  if (maxBufferBytes > static_cast<uint64_t>(INT64_MAX))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "--max-buffer-bytes=%llu is above 2^63 - 1",
                                   static_cast<unsigned long long>(maxBufferBytes));
  options.maxBufferBytes = static_cast<int64_t>(maxBufferBytes);
  if (llvm::Error err = kiln::applyProfile(profile, options))
    return std::move(err);
  if (debugSymbols.getNumOccurrences())
    options.debugSymbols = debugSymbols;
  if (reflectionData.getNumOccurrences())
    options.reflection = reflectionData;
  for (const std::string &text : fixShapes) {
    auto fix = kiln::parseShapeFix(text);
    if (!fix)
      return fix.takeError();
    options.fixedShapes.push_back(*fix);
  }
  if (!tuning.empty())
    if (llvm::Error err = kiln::loadTuningFile(tuning, options))
      return std::move(err);
  options.fusion = options.fusion && fusion;
  for (int64_t id : noFusion)
    options.noFusion.push_back(id);
  for (const std::string &text : tiles) {
    auto tile = kiln::parseTileOverride(text);
    if (!tile)
      return tile.takeError();
    options.tileSizes.push_back(*tile);
  }
  return options;
}

/// Writes `path` through a temporary file in the same directory renamed
/// over it, so a failed write (disk full) never leaves a truncated file.
static llvm::Error writeFile(const std::string &path, const void *data, size_t size) {
  llvm::sys::fs::file_status status;
  bool regular = !llvm::sys::fs::status(path, status) &&
                 status.type() == llvm::sys::fs::file_type::regular_file;
  bool exists = llvm::sys::fs::exists(path);
  // Special files (/dev/stdout, a FIFO) are written directly.
  std::string target = (exists && !regular) ? path : path + ".kiln-tmp";
  std::error_code ec;
  {
    llvm::raw_fd_ostream os(target, ec, llvm::sys::fs::OF_None);
    if (ec)
      return llvm::createStringError(ec, "%s: cannot write: %s", path.c_str(),
                                     ec.message().c_str());
    os.write(static_cast<const char *>(data), size);
    os.close();
    if (os.has_error()) {
      ec = os.error();
      os.clear_error(); // reported below, not as a fatal error
    }
  }
  if (!ec && target != path)
    ec = llvm::sys::fs::rename(target, path);
  if (ec) {
    if (target != path)
      llvm::sys::fs::remove(target);
    return llvm::createStringError(ec, "%s: write failed: %s", path.c_str(),
                                   ec.message().c_str());
  }
  return llvm::Error::success();
}

/// Writes the --dump-dispatch-graph / --dump-schedule files of `plan`.
static llvm::Error writeDumps(const kiln::CompilationPlan &plan, const std::string &dot,
                              const std::string &csv) {
  if (!dot.empty()) {
    std::string text = kiln::planToDot(plan);
    if (llvm::Error err = writeFile(dot, text.data(), text.size()))
      return err;
  }
  if (!csv.empty()) {
    std::string text = kiln::planToCsv(plan);
    if (llvm::Error err = writeFile(csv, text.data(), text.size()))
      return err;
  }
  return llvm::Error::success();
}

static int runCompile() {
  // Copied first: compiling resets llvm::cl occurrences (see runRun).
  std::string model = compileModel;
  const std::string output = compileOutput;
  const std::string emitText = emit;
  const std::string dot = dumpGraph, csv = dumpSchedule;
  const std::string project = projectFile;
  if (model.empty() == project.empty()) {
    llvm::errs() << "kiln compile: give a model file or --project=FILE.kilnproj (one of them)\n";
    return 2;
  }
  auto options = compileOptions();
  if (!options)
    return fail(options.takeError());
  if (!project.empty()) {
    if (tuningFlagsGiven())
      return fail("--project=" + project +
                  " sets the target, profile, format and tuning; edit the project "
                  "instead of adding --target*/--profile/--tile/--fusion/--fix-shape flags");
    if (llvm::Error err = loadProjectOptions(project, model, *options))
      return fail(std::move(err));
  }
  if (!emitText.empty()) {
    // On a terminal, elide big constants; a file gets them all, so it
    // compiles again (`kiln compile --emit=tosa -o m.mlir; kiln compile m.mlir`).
    options->elideConstants = output.empty() || output == "-";
    kiln::EmitStage stage;
    if (!kiln::parseEmitStage(emitText, stage))
      return fail("--emit='" + emitText +
                  "' is not a stage; use tosa, linalg, dispatches, buffers, llvm-ir or asm");
    auto text = kiln::emitStage(model, stage, *options);
    if (!text)
      return fail(text.takeError());
    if (output.empty() || output == "-") {
      llvm::outs() << *text;
      return 0;
    }
    if (llvm::Error err = writeFile(output, text->data(), text->size()))
      return fail(std::move(err));
    return 0;
  }
  if (options->format == kiln::OutputFormat::CModule) {
    if (output.empty())
      return fail("--output-format=c-module writes several files: give the folder with -o DIR");
    auto result = kiln::compile(model, *options);
    if (!result)
      return fail(result.takeError());
    kiln::ExportBundle bundle;
    bundle.files = result->files;
    if (llvm::Error err = kiln::writeExportBundle(bundle, output))
      return fail(std::move(err));
    if (llvm::Error err = writeDumps(*result->plan, dot, csv))
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
  if (llvm::Error err = writeFile(out, result->artifact.data(), result->artifact.size()))
    return fail(std::move(err));
  if (llvm::Error err = writeDumps(*result->plan, dot, csv))
    return fail(std::move(err));
  llvm::outs() << "wrote " << out << " (" << result->artifact.size() << " bytes, "
               << result->plan->dispatches.size() << " dispatches, "
               << result->plan->schedule.waves << " waves, arena "
               << result->plan->memory.arenaBytes << " bytes)\n";
  return 0;
}

static int runInspect() {
  const std::string path = inspectPath;
  const bool asJson = inspectJson;
  const std::string dot = dumpGraph, csv = dumpSchedule;
  const bool compileFlagsGiven = !fixShapes.empty() || !targetTriple.empty() ||
                                 !targetName.empty() ||
                                 targetCpu != "generic" || !targetFeatures.empty() ||
                                 !tiles.empty() || !tuning.empty() || !fusion ||
                                 !noFusion.empty() || profile.getNumOccurrences() ||
                                 debugSymbols.getNumOccurrences() ||
                                 reflectionData.getNumOccurrences();
  auto options = compileOptions();
  if (!options)
    return fail(options.takeError());
  auto buffer = llvm::MemoryBuffer::getFile(path, false, false);
  if (!buffer)
    return fail(path + ": cannot read: " + buffer.getError().message());
  llvm::ArrayRef<uint8_t> data(reinterpret_cast<const uint8_t *>((*buffer)->getBufferStart()),
                               (*buffer)->getBufferSize());
  // An artifact passes the gate once; its sizes and plan come from there.
  std::optional<kiln_artifact_info_t> artifact;
  if (kiln::isArtifact(path, data)) {
    if (compileFlagsGiven)
      return fail(path + " is already compiled; compile options (--fix-shape, "
                         "--target-*, --tile, --tuning, --fusion, --no-fusion) apply "
                         "when inspecting a model");
    auto info = kiln::verifyArtifact(data, path);
    if (!info)
      return fail(info.takeError());
    artifact = *info;
  }
  if (inspectSizes) {
    std::vector<uint8_t> compiledBytes;
    if (!artifact) {
      auto compiled = kiln::compile(path, *options);
      if (!compiled)
        return fail(compiled.takeError());
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
  auto plan = artifact ? kiln::planOfArtifact(*artifact, path) : kiln::inspectFile(path, *options);
  if (!plan)
    return fail(plan.takeError());
  if (llvm::Error err = writeDumps(**plan, dot, csv))
    return fail(std::move(err));
  const kiln::CompilationPlan &p = **plan;
  if (asJson) {
    llvm::outs() << kiln::planToJson(p) << "\n";
    return 0;
  }
  int64_t flops = 0;
  for (const kiln::Dispatch &d : p.dispatches)
    flops += d.flops;
  llvm::StringRef shown = llvm::sys::path::filename(path);
  llvm::outs() << shown;
  if (shown != p.source)
    llvm::outs() << " (compiled from " << p.source << ")";
  llvm::outs() << ": " << p.dispatches.size() << " dispatches, "
               << p.schedule.commands.size() << " commands in " << p.schedule.waves
               << " waves, " << flops << " FLOPs\n"
               << "arena " << p.memory.arenaBytes << " bytes (lower bound "
               << p.memory.lowerBoundBytes << ", " << p.memory.planner << ")\n";
  for (const kiln::Dispatch &d : p.dispatches) {
    std::string ops;
    for (const kiln::SourceOp &op : d.ops)
      ops += (ops.empty() ? "" : " ") + op.name + "#" + std::to_string(op.sourceIndex);
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
  }
  for (const kiln::OutputBinding &o : p.outputs)
    llvm::outs() << "  output " << o.slot << " '" << o.name << "' (" << o.bytes
                 << " bytes) <- " << kiln::describeOutputWriters(p, o) << "\n";
  return 0;
}

static std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "x" : "") + std::to_string(shape[i]);
  return s;
}

static void printSummary(const kiln::IOInfo &info, const kiln::NpyArray &value,
                         size_t index) {
  llvm::outs() << "output " << index << " '" << info.name << "': "
               << shapeText(info.shape) << "x"
               << (info.dtype == "<f4" ? "f32" : info.dtype);
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
  }
  llvm::outs() << "\n";
}

static int runRun() {
  // Copy every option first: the in-process LLD link inside compile()
  // resets llvm::cl occurrences (cl::ResetAllOptionOccurrences), which
  // empties cl::list values.
  const std::string pathText = runModel;
  const std::vector<std::string> outputSpecs(runOutputs.begin(), runOutputs.end());
  kiln::RunOptions runOptions;
  runOptions.benchmarkRuns = benchmark;
  runOptions.device = device;
  runOptions.threads = threads;
  const std::string tracePath = traceFile;
  runOptions.trace = !tracePath.empty();
  std::vector<kiln::NpyArray> inputs;
  for (const std::string &spec : runInputs) {
    auto array = kiln::parseInputSpec(spec);
    if (!array)
      return fail(array.takeError());
    inputs.push_back(std::move(*array));
  }
  const bool compileFlagsGiven = !fixShapes.empty() || !targetTriple.empty() ||
                                 !targetName.empty() ||
                                 targetCpu != "generic" || !targetFeatures.empty() ||
                                 !tiles.empty() || !tuning.empty() || !fusion ||
                                 !noFusion.empty() || profile.getNumOccurrences() ||
                                 debugSymbols.getNumOccurrences() ||
                                 reflectionData.getNumOccurrences();
  auto options = compileOptions();
  if (!options)
    return fail(options.takeError());
  if (runOptions.device == "local-sync" && threads.getNumOccurrences() && runOptions.threads != 1)
    return fail("--threads=" + llvm::Twine(runOptions.threads) +
                " applies to --device=local-task; local-sync runs on the calling thread");
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
    if (!target.consume_front("@") || target.empty())
      return fail("--output='" + spec + "': expected @file.npy");
    if (llvm::sys::fs::is_directory(target))
      return fail("--output='" + spec + "': " + target + " is a directory");
    llvm::StringRef parent = llvm::sys::path::parent_path(target);
    if (!parent.empty() && !llvm::sys::fs::is_directory(parent))
      return fail("--output='" + spec + "': directory " + parent + " does not exist");
    if (!outputPaths.insert(target.str()).second)
      return fail("--output='" + spec + "' is given twice");
  }
  std::vector<uint8_t> compiledArtifact;
  llvm::ArrayRef<uint8_t> artifact;
  std::shared_ptr<const kiln::CompilationPlan> plan;
  llvm::StringRef path(pathText);
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(path, status))
    return fail(path + ": cannot read: " + ec.message());
  if (status.type() != llvm::sys::fs::file_type::regular_file)
    return fail(path + ": not a regular file (expected a .kiln, .tflite or .mlir file)");
  auto buffer = llvm::MemoryBuffer::getFile(path, false, false);
  if (!buffer)
    return fail(path + ": cannot read: " + buffer.getError().message());
  llvm::ArrayRef<uint8_t> data(reinterpret_cast<const uint8_t *>((*buffer)->getBufferStart()),
                               (*buffer)->getBufferSize());
  bool isArtifact = kiln::isArtifact(path, data);
  if (isArtifact && compileFlagsGiven)
    return fail(path + " is already compiled; compile options (--fix-shape, "
                       "--target-*, --tile, --tuning, --fusion, --no-fusion) apply "
                       "when running a model");
  if (isArtifact) {
    // runArtifact passes it through the gate once (kiln_module_load) and,
    // when tracing, reads its plan from there.
    artifact = data;
  } else {
    auto compiled = kiln::compile(pathText, *options);
    if (!compiled)
      return fail(compiled.takeError());
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
  for (size_t i = 0; i < result->outputs.size(); ++i) {
    printSummary(result->outputs[i], result->outputValues[i], i);
    if (i < outputSpecs.size()) {
      llvm::StringRef target(outputSpecs[i]);
      if (!target.consume_front("@"))
        return fail("--output='" + outputSpecs[i] + "': expected @file.npy");
      if (llvm::Error err = kiln::writeNpyFile(target.str(), result->outputValues[i]))
        return fail(std::move(err));
    }
  }
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
    std::string json = kiln::traceToChromeJson(result->trace, names);
    if (llvm::Error err = writeFile(tracePath, json.data(), json.size()))
      return fail(std::move(err));
  }
  if (runOptions.benchmarkRuns > 0) {
    std::vector<double> t = result->timesMs;
    std::sort(t.begin(), t.end());
    double median = t.size() % 2 ? t[t.size() / 2] : (t[t.size() / 2 - 1] + t[t.size() / 2]) / 2;
    llvm::outs() << llvm::format("median: %.4f ms (min %.4f ms, max %.4f ms, %zu runs)\n", median,
                                 t.front(), t.back(), t.size());
  }
  return 0;
}

static int runDiff() {
  const std::vector<std::string> paths(diffPaths.begin(), diffPaths.end());
  const unsigned runs = benchmark;
  if (paths.size() != 2)
    return fail("kiln diff takes two artifacts, " + llvm::Twine(paths.size()) + " given");
  std::vector<kiln::BuildSummary> summaries;
  for (const std::string &path : paths) {
    auto buffer = llvm::MemoryBuffer::getFile(path, false, false);
    if (!buffer)
      return fail(path + ": cannot read: " + buffer.getError().message());
    llvm::StringRef data = (*buffer)->getBuffer();
    std::vector<uint8_t> bytes(data.begin(), data.end());
    auto s = kiln::summarizeArtifact(bytes, path);
    if (!s)
      return fail(s.takeError());
    if (runs > 0) {
      auto median = kiln::benchmarkArtifact(bytes, runs);
      if (!median)
        return fail(path + ": " + llvm::toString(median.takeError()));
      s->medianMs = *median;
    }
    summaries.push_back(std::move(*s));
  }
  llvm::outs() << kiln::formatBuildDiff(summaries[0], summaries[1], inspectJson);
  return 0;
}

static int runValidate() {
  const std::vector<std::string> paths(validatePaths.begin(), validatePaths.end());
  const bool asJson = inspectJson;
  if (paths.size() != 2)
    return fail("kiln validate takes a model or artifact and a folder, " +
                llvm::Twine(paths.size()) + " given");
  const std::string &path = paths[0], &dir = paths[1];
  if (!llvm::sys::fs::is_directory(dir))
    return fail(dir + ": not a folder (expected input_K.npy and output_K.npy files)");
  auto numbered = [&](const char *prefix) {
    std::vector<std::string> files;
    for (int k = 0;; ++k) {
      llvm::SmallString<256> file(dir);
      llvm::sys::path::append(file, std::string(prefix) + "_" + std::to_string(k) + ".npy");
      if (!llvm::sys::fs::exists(file))
        break;
      files.push_back(file.str().str());
    }
    return files;
  };
  std::vector<kiln::NpyArray> inputs, reference;
  for (const std::string &file : numbered("input")) {
    auto a = kiln::readNpyFile(file);
    if (!a)
      return fail(a.takeError());
    inputs.push_back(std::move(*a));
  }
  for (const std::string &file : numbered("output")) {
    auto a = kiln::readNpyFile(file);
    if (!a)
      return fail(a.takeError());
    reference.push_back(std::move(*a));
  }
  if (inputs.empty() || reference.empty())
    return fail(dir + ": no input_0.npy or output_0.npy (validation reads input_K.npy and "
                      "output_K.npy, K = 0, 1, ...)");
  auto options = compileOptions();
  if (!options)
    return fail(options.takeError());
  std::vector<uint8_t> compiledArtifact;
  auto buffer = llvm::MemoryBuffer::getFile(path, false, false);
  if (!buffer)
    return fail(path + ": cannot read: " + buffer.getError().message());
  llvm::ArrayRef<uint8_t> artifact(
      reinterpret_cast<const uint8_t *>((*buffer)->getBufferStart()), (*buffer)->getBufferSize());
  if (!kiln::isArtifact(path, artifact)) {
    auto compiled = kiln::compile(path, *options);
    if (!compiled)
      return fail(compiled.takeError());
    compiledArtifact = std::move(compiled->artifact);
    artifact = compiledArtifact;
  }
  auto result = kiln::runArtifact(artifact, inputs);
  if (!result)
    return fail(path + ": " + llvm::toString(result.takeError()));
  std::vector<std::string> names;
  for (const kiln::IOInfo &info : result->outputs)
    names.push_back(info.name);
  auto metrics = kiln::validateOutputs(result->outputValues, reference, names);
  if (!metrics)
    return fail(path + ": " + llvm::toString(metrics.takeError()));
  bool pass = true;
  for (const kiln::ValidationMetrics &m : *metrics)
    pass = pass && m.outsideTolerance == 0;
  if (asJson) {
    llvm::json::Array outputs;
    for (const kiln::ValidationMetrics &m : *metrics)
      outputs.push_back(llvm::json::Object{{"name", m.name},
                                           {"elements", m.elements},
                                           {"max_abs_error", m.maxAbsError},
                                           {"rmse", m.rmse},
                                           {"cosine", m.cosine},
                                           {"outside_tolerance", m.outsideTolerance}});
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{
                                               {"outputs", std::move(outputs)},
                                               {"tolerance", "1e-4 x (1 + |reference|)"},
                                               {"pass", pass}}))
                 << "\n";
  } else {
    llvm::outs() << "output                           elements   max |error|         rmse    "
                    "  cosine  outside\n";
    for (const kiln::ValidationMetrics &m : *metrics)
      llvm::outs() << llvm::format("%-30s %10lld %13.4e %12.4e %11.8f %8lld\n",
                                   m.name.substr(0, 30).c_str(), (long long)m.elements,
                                   m.maxAbsError, m.rmse, m.cosine,
                                   (long long)m.outsideTolerance);
    llvm::outs() << (pass ? "PASS" : "FAIL")
                 << ": every element within 1e-4 x (1 + |reference|)"
                 << (pass ? "" : " does not hold") << "\n";
  }
  return pass ? 0 : 3;
}

static int exportRequest(const kiln::ExportRequest &request, const std::string &dir);

static int runExport() {
  // Copied first: compiling resets llvm::cl occurrences (see runRun).
  kiln::ExportRequest request;
  request.model = exportModel;
  std::string dir = exportOutput;
  const std::string project = projectFile;
  if (request.model.empty() == project.empty()) {
    llvm::errs() << "kiln export: give a model file or --project=FILE.kilnproj (one of them)\n";
    return 2;
  }
  if (!project.empty()) {
    if (tuningFlagsGiven())
      return fail("--project=" + project +
                  " sets the target, profile, format and tuning; edit the project "
                  "instead of adding --target*/--profile/--tile/--fusion/--fix-shape flags");
    auto loaded = kiln::loadProject(project);
    if (!loaded)
      return fail(loaded.takeError());
    request.model = kiln::projectModelPath(*loaded, project);
    request.target = loaded->target;
    request.profile = loaded->profile;
    request.format = loaded->format;
    request.options.fusion = loaded->fusion;
    request.options.noFusion = loaded->noFusion;
    for (const auto &[id, sizes] : loaded->tiles)
      request.options.tileSizes.push_back({id, sizes});
    for (const auto &[input, shape] : loaded->fixedShapes)
      request.options.fixedShapes.push_back({input, shape});
    request.options.target.cpu = loaded->targetCpu.empty() ? "generic" : loaded->targetCpu;
    request.options.target.features = loaded->targetFeatures;
    if (dir.empty())
      dir = kiln::projectExportDir(*loaded, project);
    if (dir.empty())
      return fail(project + " names no export folder (\"export_dir\"); give -o DIR");
    return exportRequest(request, dir);
  }

  request.target = targetName.empty() ? "host" : std::string(targetName);
  request.profile = profile;
  if (debugSymbols.getNumOccurrences())
    request.debugSymbols = debugSymbols ? 1 : 0;
  if (reflectionData.getNumOccurrences())
    request.reflection = reflectionData ? 1 : 0;
  if (!targetTriple.empty())
    return fail("kiln export takes a named --target (" +
                llvm::join(kiln::knownTargets(), ", ") + "), not --target-triple");
  auto options = compileOptions();
  if (!options)
    return fail(options.takeError());
  request.format = options->format;
  request.options = *options;
  // The request applies target and profile itself; keep only explicit choices.
  request.options.target = kiln::TargetOptions();
  request.options.target.cpu = targetCpu;
  request.options.target.features = targetFeatures;
  return exportRequest(request, dir.empty() ? kiln::defaultExportDir(request) : dir);
}

/// Builds and writes the bundle of `request` into `dir`.
static int exportRequest(const kiln::ExportRequest &request, const std::string &dir) {
  auto bundle = kiln::buildExportBundle(request);
  if (!bundle)
    return fail(bundle.takeError());
  if (llvm::Error err = kiln::writeExportBundle(*bundle, dir))
    return fail(std::move(err));
  llvm::outs() << "exported " << request.model << " for " << request.target << " to " << dir
               << ": ";
  for (size_t i = 0; i < bundle->files.size(); ++i)
    llvm::outs() << (i ? ", " : "") << bundle->files[i].name;
  llvm::outs() << "\nflash " << bundle->footprint.flashBytes << " bytes (code "
               << bundle->footprint.codeBytes << ", weights " << bundle->footprint.constantBytes
               << ", metadata " << bundle->footprint.metadataBytes << "), RAM "
               << bundle->footprint.ramBytes << " bytes (arena " << bundle->footprint.arenaBytes
               << ", I/O " << bundle->footprint.ioBytes;
  if (bundle->footprint.stackBytes >= 0)
    llvm::outs() << ", kernel stack " << bundle->footprint.stackBytes;
  llvm::outs() << ")\n";
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
    llvm::errs() << "kiln: error: LLVM cannot compile this build: " << reason << "\n";
    llvm::errs().flush();
    std::_Exit(1);
  });
  cl::HideUnrelatedOptions(kilnCategory);
  if (!cl::ParseCommandLineOptions(argc, argv,
                                   "Kiln: ahead-of-time compiler for neural-network models\n",
                                   &llvm::errs()))
    return 2;
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
