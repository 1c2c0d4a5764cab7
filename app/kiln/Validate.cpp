//===- Validate.cpp - kiln validate ---------------------------------------===//
//
// kiln validate MODEL|ARTIFACT DIR [--json] [--atol=A --rtol=R]
//               [--tolerance-lsb=N] [--samples=N] (exit 3 when outputs differ)
//
//===----------------------------------------------------------------------===//
#include "Kiln.h"

#include "kiln/Artifact.h"
#include "kiln/Compiler.h"
#include "kiln/ReadFile.h"
#include "kiln/Run.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace kiln::cli {

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

int runValidate() {
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
  llvm::ArrayRef<uint8_t> artifact(reinterpret_cast<const uint8_t *>((*buffer)->getBufferStart()),
                                   (*buffer)->getBufferSize());
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

} // namespace kiln::cli
