//===- Validate.cpp - kiln validate ---------------------------------------===//
//
// kiln validate MODEL|ARTIFACT DIR [--json] [--atol=A --rtol=R]
//               [--tolerance-lsb=N] [--samples=N] (exit 3 when outputs differ)
// kiln validate MODEL --target=T --on-target [--kit-input=FILE.npy ...]
// kiln validate BUNDLE --on-target (a folder `kiln export --kit` wrote)
//               [--json] [--atol=A --rtol=R] [--tolerance-lsb=N]
// kiln validate A --compare-with=B [DIR] [--samples=N] [--seed=S] [--json]
//
//===----------------------------------------------------------------------===//
#include "Kiln.h"

#include "kiln/Artifact.h"
#include "kiln/Compare.h"
#include "kiln/Compiler.h"
#include "kiln/KitRun.h"
#include "kiln/ReadFile.h"
#include "kiln/Recipe.h"
#include "kiln/Run.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace kiln::cli {

/// One sample's rows of the metrics table: its name and its outputs.
using MetricsRows =
    std::vector<std::pair<std::string, const std::vector<kiln::ValidationMetrics> *>>;

/// Prints the metrics table, a row per sample and output: the sample and
/// output columns as wide as their longest name (at least 12 and 26
/// characters), so no name is cut. Integer outputs give max |error| in LSB
/// (integer units), e.g. "2 LSB".
static void printMetricsTable(const MetricsRows &rows) {
  int sampleWidth = 12, outputWidth = 26;
  for (const auto &[sample, metrics] : rows) {
    sampleWidth = std::max(sampleWidth, int(sample.size()));
    for (const kiln::ValidationMetrics &m : *metrics)
      outputWidth = std::max(outputWidth, int(m.name.size()));
  }
  const char *sampleTitle = "sample", *outputTitle = "output", *elementsTitle = "elements";
  llvm::outs() << llvm::format("%-*s %-*s %10s ", sampleWidth, sampleTitle, outputWidth,
                               outputTitle, elementsTitle)
               << "  max |error|         rmse      cosine  outside   differ\n";
  for (const auto &[sample, metrics] : rows)
    for (const kiln::ValidationMetrics &m : *metrics)
      llvm::outs() << llvm::format("%-*s %-*s %10lld ", sampleWidth, sample.c_str(), outputWidth,
                                   m.name.c_str(), (long long)m.elements)
                   << (m.integer ? llvm::format("%9.0f LSB", m.maxAbsError)
                                 : llvm::format("%13.4e", m.maxAbsError))
                   << llvm::format(" %12.4e %11.8f %8lld %8lld\n", m.rmse, m.cosine,
                                   (long long)m.outsideTolerance, (long long)m.differing);
}

/// The report's verdict line; the exit status (0 pass, 3 outputs differ).
static int printVerdict(const kiln::ValidationReport &report, const std::string &what) {
  llvm::outs() << (report.pass ? "PASS" : "FAIL") << ": every element of " << what << " "
               << kiln::passCriterionText(report) << (report.pass ? "" : " does not hold") << "\n";
  return report.pass ? 0 : 3;
}

/// kiln validate MODEL --target=T --on-target: the model's kit run on the
/// device against the host build (kiln/KitRun.h).
static int validateOnTarget(const std::string &model, const kiln::Tolerance &tolerance,
                            bool asJson) {
  auto kit = kitRequestOfFlags(true);
  if (!kit)
    return fail(kit.takeError());
  auto recipe = recipeOfFlags();
  if (!recipe)
    return fail(recipe.takeError());
  kiln::ExportRequest request;
  request.model = model;
  request.recipe = *recipe;
  request.recipe.format = kiln::recipeIsBareMetal(request.recipe) ? kiln::OutputFormat::CModule
                                                                  : kiln::OutputFormat::Artifact;
  request.kit = std::move(*kit);
  const bool bundle = llvm::sys::fs::is_directory(model);
  // A bundle holds its settings: only the comparison's flags apply.
  if (bundle &&
      (recipeFlagsGiven() || targetName.getNumOccurrences() || !request.kit.inputs.empty()))
    return usage("kiln validate " + model +
                 " --on-target runs the bundle's kit with its own settings; build flags, "
                 "--target and --kit-input apply to a model");
  // The temporary kit is removed afterwards, unless its outputs differ
  // from the host's: then it stays for the user to look into.
  llvm::SmallString<128> dir;
  if (!bundle)
    if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("kiln-on-target", dir))
      return fail("cannot create a folder for the kit: " + ec.message());
  bool keep = bundle;
  auto removeKit = llvm::make_scope_exit([&] {
    if (!keep)
      (void)llvm::sys::fs::remove_directories(dir);
  });
  auto result = bundle ? kiln::validateKitBundle(model, tolerance)
                       : kiln::validateKitOnTarget(request, dir.str().str(), tolerance);
  if (!result) {
    // The model named once: the compiler's errors start with its file name.
    std::string why = llvm::toString(result.takeError());
    const std::string file = llvm::sys::path::filename(model).str();
    bool named =
        llvm::StringRef(why).startswith(file + ":") || llvm::StringRef(why).startswith(model + ":");
    return fail(named ? why : model + ": " + why);
  }
  const kiln::ValidationReport &report = result->report;
  keep = bundle || !report.pass;
  if (asJson) {
    llvm::outs() << llvm::formatv("{0:2}", kiln::validationReportToJson(report)) << "\n";
    return report.pass ? 0 : 3;
  }
  llvm::outs() << (bundle ? "kit in " + model
                   : keep ? "kit of " + model + " for " + request.recipe.target + " built in " +
                                result->dir + " (kept: its outputs differ) and"
                          : "kit of " + model + " for " + request.recipe.target +
                                " built in a temporary folder and")
               << " run on " << result->device
               << "; compared with the host build on the same inputs\n";
  printMetricsTable({{report.sampleNames[0], &report.overall}});
  return printVerdict(report, "output on " + result->device);
}

/// The recipe of the command line as compile options, read once before
/// anything compiles (compiling resets llvm::cl options; see runRun).
/// Null after printing the error (`code` then holds the exit status).
static std::optional<kiln::CompileOptions> flagOptions(int &code) {
  auto recipe = recipeOfFlags();
  if (!recipe) {
    code = fail(recipe.takeError());
    return std::nullopt;
  }
  auto options = compileOptionsOf(*recipe);
  if (!options) {
    code = fail(options.takeError());
    return std::nullopt;
  }
  return std::move(*options);
}

/// The artifact bytes of `path`: the file itself when it is an artifact
/// (refused when `recipeGiven`: it is compiled already), else the model
/// compiled with `options`. Null after printing the error (`code` then
/// holds the exit status).
static std::optional<std::vector<uint8_t>> artifactOf(const std::string &path,
                                                      const kiln::CompileOptions &options,
                                                      bool recipeGiven, int &code) {
  auto buffer = kiln::readRegularFile(path, "a .kiln, .tflite, .onnx or .mlir file");
  if (!buffer) {
    code = fail(buffer.takeError());
    return std::nullopt;
  }
  llvm::ArrayRef<uint8_t> bytes(reinterpret_cast<const uint8_t *>((*buffer)->getBufferStart()),
                                (*buffer)->getBufferSize());
  if (kiln::isArtifact(path, bytes)) {
    if (recipeGiven) {
      code = alreadyCompiled(path, "validating");
      return std::nullopt;
    }
    return std::vector<uint8_t>(bytes.begin(), bytes.end());
  }
  auto compiled = kiln::compile(path, options);
  if (!compiled) {
    code = fail(compiled.takeError());
    return std::nullopt;
  }
  printWarnings(compiled->warnings);
  return std::move(compiled->artifact);
}

/// kiln validate A --compare-with=B [DIR] [--samples=N] [--seed=S]
/// [--json]: the two models on the same inputs, output by output
/// (kiln/Compare.h compareModels).
static int runCompare(const std::vector<std::string> &paths) {
  if (paths.empty() || paths.size() > 2)
    return usage("kiln validate A --compare-with=B takes model A and optionally a folder of "
                 "input_K.npy; " +
                 llvm::Twine(paths.size()) + " paths given");
  kiln::ModelComparisonOptions options;
  options.seed = validateSeed;
  if (paths.size() == 2)
    options.inputDir = paths[1];
  else if (validateSamples.getNumOccurrences())
    options.samples = validateSamples;
  if (options.samples < 1)
    return usage("--samples=" + llvm::Twine(options.samples) + " must be at least 1");
  if (paths.size() == 2 && validateSamples.getNumOccurrences())
    return usage("--samples is for random inputs; DIR/input_K.npy give their own count "
                 "(a leading axis of N samples)");
  const std::string other = validateCompareWith;
  const bool asJson = inspectJson, recipeGiven = recipeFlagsGiven();
  int code = 1;
  auto compileOptions = flagOptions(code);
  if (!compileOptions)
    return code;
  // Both models are built with the command line's recipe.
  auto a = artifactOf(paths[0], *compileOptions, recipeGiven, code);
  if (!a)
    return code;
  auto b = artifactOf(other, *compileOptions, recipeGiven, code);
  if (!b)
    return code;
  auto c = kiln::compareModels(*a, *b, paths[0], other, options);
  if (!c)
    return fail(c.takeError());
  if (asJson)
    llvm::outs() << llvm::formatv("{0:2}", kiln::modelComparisonToJson(*c)) << "\n";
  else
    llvm::outs() << "A " << paths[0] << "\nB " << other << "\n" << kiln::formatModelComparison(*c);
  return 0;
}

int runValidate() {
  const std::vector<std::string> paths(validatePaths.begin(), validatePaths.end());
  const bool onDevice = onTarget;
  if (validateCompareWith.getNumOccurrences())
    return runCompare(paths);
  const bool asJson = inspectJson;
  kiln::ValidationOptions validation;
  validation.stackedSamples = validateSamples;
  validation.tolerance.atol = validateAtol;
  validation.tolerance.rtol = validateRtol;
  validation.tolerance.lsb = validateLsb;
  if (onDevice && paths.size() != 1)
    return usage("kiln validate --on-target takes one model or bundle folder; " +
                 llvm::Twine(paths.size()) + " paths given");
  if (!onDevice && targetName.getNumOccurrences())
    return usage("--target applies to kiln validate --on-target (without it the host "
                 "build is validated)");
  if (!onDevice && paths.size() != 2)
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
  if (onDevice) {
    if (validation.stackedSamples)
      return usage("--samples applies to a folder of samples, not to --on-target");
    return validateOnTarget(paths[0], validation.tolerance, asJson);
  }
  if (!kitInputs.empty())
    return usage("--kit-input applies with --on-target");
  // validateArtifact checks the folder (one place for the CLI and the
  // workbench).
  const std::string &path = paths[0], &dir = paths[1];
  int code = 1;
  auto compileOptions = flagOptions(code);
  if (!compileOptions)
    return code;
  auto artifact = artifactOf(path, *compileOptions, recipeFlagsGiven(), code);
  if (!artifact)
    return code;
  auto report = kiln::validateArtifact(*artifact, dir, validation);
  if (!report)
    return fail(path + ": " + llvm::toString(report.takeError()));
  if (asJson) {
    llvm::outs() << llvm::formatv("{0:2}", kiln::validationReportToJson(*report)) << "\n";
    return report->pass ? 0 : 3;
  }
  MetricsRows rows;
  if (report->samples.size() > 1)
    for (size_t s = 0; s < report->samples.size(); ++s)
      rows.push_back({report->sampleNames[s], &report->samples[s]});
  rows.push_back({report->samples.size() > 1 ? "all " + std::to_string(report->samples.size())
                                             : report->sampleNames[0],
                  &report->overall});
  printMetricsTable(rows);
  return printVerdict(*report, std::to_string(report->samples.size()) + " sample(s)");
}

} // namespace kiln::cli
