//===- Bridge.cpp - The Python package's calls into Kiln's core -----------===//
//
// See Bridge.h. Each function is the in-memory form of one `kiln` command
// and calls the core functions that command calls (app/kiln/main.cpp).
//
//===----------------------------------------------------------------------===//
#include "Bridge.h"

#include "kiln/Artifact.h"
#include "kiln/AtomicWrite.h"
#include "kiln/Compare.h"
#include "kiln/Compiler.h"
#include "kiln/Export.h"
#include "kiln/ModelInputs.h"
#include "kiln/Plan.h"
#include "kiln/Project.h"
#include "kiln/Recipe.h"
#include "kiln/Run.h"
#include "kiln/Targets.h"
#include "kiln/runtime.h"

#include <mutex>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln::python {
namespace {

/// Compilations run one at a time in a process: the in-process LLD link
/// and llvm::cl keep global state.
std::mutex compileMutex;

[[noreturn]] void fail(llvm::Error err) { throw Failure(llvm::toString(std::move(err))); }

template <typename T> T unwrap(llvm::Expected<T> value) {
  if (!value)
    fail(value.takeError());
  return std::move(*value);
}

void check(llvm::Error err) {
  if (err)
    fail(std::move(err));
}

llvm::ArrayRef<uint8_t> bytesOf(std::string_view text) {
  return {reinterpret_cast<const uint8_t *>(text.data()), text.size()};
}

std::string textOf(llvm::ArrayRef<uint8_t> bytes) {
  return {reinterpret_cast<const char *>(bytes.data()), bytes.size()};
}

/// `value` as compact JSON text.
std::string jsonText(llvm::json::Value value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << value;
  return os.str();
}

/// The recipe of `settings`, each through kiln::setRecipeOption (the one
/// parser of every setting; its errors name the flag).
BuildRecipe recipeOf(const Settings &settings) {
  BuildRecipe recipe;
  for (const auto &[key, value] : settings)
    check(setRecipeOption(recipe, key, value));
  check(validateRecipe(recipe));
  return recipe;
}

/// The model and recipe of `source`: the model and settings given, or a
/// project file's (errors name the file); `exportDir` gets the project's
/// export folder.
BuildRecipe resolve(const Source &source, std::string &model, std::string *exportDir = nullptr) {
  if (source.project.empty()) {
    model = source.model;
    return recipeOf(source.settings);
  }
  Project project = unwrap(loadProject(source.project));
  model = projectModelPath(project, source.project);
  if (exportDir)
    *exportDir = projectExportDir(project, source.project);
  return project.recipe;
}

/// The model path and compile options `source` gives, as `kiln compile`
/// and `kiln inspect` derive them from their flags or --project.
CompileOptions optionsOf(const Source &source, std::string &model) {
  BuildRecipe recipe = resolve(source, model);
  auto options = recipeCompileOptions(recipe);
  if (!options && !source.project.empty())
    throw Failure(source.project + ": " + llvm::toString(options.takeError()));
  return unwrap(std::move(options));
}

/// `kiln inspect MODEL --json` of a build (kiln::inspectModelJson); `what`
/// names the model in errors.
std::string modelJsonOf(const CompileResult &result, const std::string &what) {
  return jsonText(unwrap(kiln::inspectModelJson(*result.plan, result.inputs, result.outputs, what,
                                                result.fixedInputs)));
}

RunOptions runOptionsOf(const Device &device) {
  RunOptions options;
  options.device = device.name;
  options.threads = device.threads;
  return options;
}

} // namespace

Compiled compile(const Source &source) {
  std::string model;
  CompileOptions options = optionsOf(source, model);
  std::lock_guard<std::mutex> lock(compileMutex);
  CompileResult result = unwrap(kiln::compile(model, options));
  Compiled out;
  out.format = toString(options.format);
  out.artifact = textOf(result.artifact);
  for (const GeneratedFile &file : result.files)
    out.files.emplace_back(file.name, textOf(file.bytes));
  out.modelJson = modelJsonOf(result, model);
  out.warnings = result.warnings;
  return out;
}

std::string inspectArtifactJson(std::string_view bytes, const std::string &what) {
  llvm::ArrayRef<uint8_t> data = bytesOf(bytes);
  kiln_artifact_info_t info = unwrap(verifyArtifact(data, what));
  ArtifactDescription description = unwrap(artifactDescriptionOf(info, data, what));
  std::shared_ptr<const CompilationPlan> plan;
  if (description.reflection)
    plan = unwrap(planOfArtifact(info, what));
  return jsonText(unwrap(kiln::inspectArtifactJson(description, plan.get(), what)));
}

std::string inspectModelJson(const Source &source, std::vector<std::string> &warnings) {
  std::string model;
  CompileOptions options = optionsOf(source, model);
  std::lock_guard<std::mutex> lock(compileMutex);
  // As `kiln inspect MODEL`: a bare-metal target is built as the C module
  // it exports; any other is planned without code generation.
  CompileResult result = isBareMetalTriple(options.target.triple)
                             ? unwrap(buildForDevice(model, options)).compiled
                             : unwrap(planOnly(model, options));
  warnings = result.warnings;
  // As `kiln inspect MODEL --json`: the inputs the model declares too.
  llvm::json::Value json = unwrap(kiln::inspectModelJson(
      *result.plan, result.inputs, result.outputs, model, result.fixedInputs, result.controlFlow));
  auto inputs = readModelInputs(model, options.signature);
  if (inputs && json.getAsObject())
    json.getAsObject()->insert({"model_inputs", modelInputsJson(*inputs)});
  else if (!inputs)
    llvm::consumeError(inputs.takeError());
  auto signatures = readModelSignatures(model, options.signature);
  if (signatures && json.getAsObject())
    json.getAsObject()->insert({"signatures", modelSignaturesJson(*signatures)});
  else if (!signatures)
    llvm::consumeError(signatures.takeError());
  return jsonText(std::move(json));
}

Sections sectionSizes(std::string_view bytes, const std::string &what) {
  kiln_artifact_info_t info = unwrap(verifyArtifact(bytesOf(bytes), what));
  SectionSizes sizes = unwrap(sectionSizesOf(info, what));
  Sections out;
  out.sections = sizes.sections;
  out.overhead = sizes.overhead;
  out.fileBytes = sizes.fileBytes;
  return out;
}

std::string diffJson(std::string_view a, std::string_view b, const std::string &nameA,
                     const std::string &nameB, unsigned benchmarkRuns,
                     std::vector<std::string> &warnings) {
  std::vector<uint8_t> builds[2] = {std::vector<uint8_t>(a.begin(), a.end()),
                                    std::vector<uint8_t>(b.begin(), b.end())};
  auto compared = unwrap(compareBuilds(builds[0], builds[1], nameA, nameB, benchmarkRuns, warnings));
  return formatBuildDiff(compared.first, compared.second, /*json=*/true);
}

std::string validateJson(std::string_view artifact, const std::string &what,
                         const std::string &dir, int64_t samples, double atol, double rtol,
                         int64_t lsb, const Device &device) {
  ValidationOptions validation;
  validation.stackedSamples = samples;
  validation.tolerance.atol = atol;
  validation.tolerance.rtol = rtol;
  validation.tolerance.lsb = lsb;
  validation.run = runOptionsOf(device);
  auto report = validateArtifact(bytesOf(artifact), dir, validation);
  if (!report)
    throw Failure(what + ": " + llvm::toString(report.takeError()));
  return jsonText(validationReportToJson(*report));
}

std::string compareJson(std::string_view a, std::string_view b, const std::string &nameA,
                        const std::string &nameB, int64_t samples, uint64_t seed,
                        const std::string &inputDir, const Device &device) {
  ModelComparisonOptions options;
  options.samples = samples;
  options.seed = seed;
  options.inputDir = inputDir;
  options.run = runOptionsOf(device);
  auto c = compareModels(bytesOf(a), bytesOf(b), nameA, nameB, options);
  if (!c)
    throw Failure(llvm::toString(c.takeError()));
  return jsonText(modelComparisonToJson(*c));
}

std::string exportBundle(const Source &source, const std::string &outDir,
                         const std::string &ramBudget, const std::string &flashBudget, bool kit) {
  ExportRequest request;
  request.kit.enabled = kit;
  std::string dir = outDir;
  if (!ramBudget.empty())
    request.budget.ramBytes = unwrap(parseBudgetBytes("--ram-budget", ramBudget));
  if (!flashBudget.empty())
    request.budget.flashBytes = unwrap(parseBudgetBytes("--flash-budget", flashBudget));
  std::string projectDir;
  request.recipe = resolve(source, request.model, &projectDir);
  if (!source.project.empty()) {
    // As `kiln export --project=`: the project's export settings
    // (kiln::exportRecipe) and budgets, budgets given here winning.
    ExportRequest fromProject = projectExportRequest(unwrap(loadProject(source.project)), source.project);
    request.recipe = fromProject.recipe;
    if (ramBudget.empty())
      request.budget.ramBytes = fromProject.budget.ramBytes;
    if (flashBudget.empty())
      request.budget.flashBytes = fromProject.budget.flashBytes;
    request.kit.enabled = kit || fromProject.kit.enabled;
  }
  if (!source.project.empty() && dir.empty()) {
    dir = projectDir;
    if (dir.empty())
      throw Failure(source.project + " names no export folder (\"export_dir\"); give out_dir=");
  }
  if (dir.empty())
    dir = defaultExportDir(request);

  std::lock_guard<std::mutex> lock(compileMutex);
  ExportBundle bundle = unwrap(buildExportBundle(request));
  check(writeExportBundle(bundle, dir));
  llvm::json::Array files, warnings;
  llvm::json::Value manifest = nullptr;
  for (const GeneratedFile &file : bundle.files) {
    files.push_back(file.name);
    if (file.name == "manifest.json")
      manifest = unwrap(llvm::json::parse(textOf(file.bytes)));
  }
  for (const std::string &w : bundle.warnings)
    warnings.push_back(w);
  llvm::json::Array budgets;
  for (const BudgetCheck &c : bundle.budgetChecks)
    budgets.push_back(llvm::json::Object{{"memory", c.memory},
                                         {"bytes", c.bytes},
                                         {"budget_bytes", c.budgetBytes},
                                         {"exceeded", c.exceeded},
                                         {"message", c.message}});
  return jsonText(llvm::json::Object{{"dir", dir},
                                     {"files", std::move(files)},
                                     {"command", bundle.command},
                                     {"warnings", std::move(warnings)},
                                     {"budgets", std::move(budgets)},
                                     {"manifest", std::move(manifest)}});
}

void writeFiles(const std::vector<std::pair<std::string, std::string>> &files,
                const std::string &dir) {
  ExportBundle bundle;
  for (const auto &[name, bytes] : files)
    bundle.files.push_back({name, std::vector<uint8_t>(bytes.begin(), bytes.end())});
  check(writeExportBundle(bundle, dir));
}

void writeFile(const std::string &path, std::string_view bytes) {
  check(writeFileAtomically(path, bytesOf(bytes)));
}

Latency benchmark(std::string_view artifact, unsigned runs, const Device &device) {
  LatencyStats stats = unwrap(benchmarkArtifact(bytesOf(artifact), runs, runOptionsOf(device)));
  return {stats.medianMs, stats.minMs, stats.maxMs, stats.runs, stats.device, stats.threads};
}

bool isArtifactFile(const std::string &path) { return kiln::isArtifactFile(path); }

std::vector<DeviceTargetInfo> deviceTargets() {
  std::vector<DeviceTargetInfo> rows;
  for (const DeviceTarget &t : kDeviceTargets)
    rows.push_back({t.name, t.displayName, t.triple, t.cpu, t.features, t.abi, t.bareMetal,
                    t.integerOnly, t.workgroupBytes});
  return rows;
}

std::string version() { return kiln::version(); }
std::string llvmVersion() { return kiln::llvmVersion(); }

} // namespace kiln::python
