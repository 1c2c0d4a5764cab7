//===- Run.cpp - kiln run -------------------------------------------------===//
//
// kiln run MODEL|ARTIFACT --input=... [--output=...] [--benchmark=N]
//          [--device=local-sync|local-task] [--threads=N] [--trace=FILE.json]
//
//===----------------------------------------------------------------------===//
#include "Kiln.h"
#include "Usage.h"

#include "kiln/Artifact.h"
#include "kiln/AtomicWrite.h"
#include "kiln/Compiler.h"
#include "kiln/Npy.h"
#include "kiln/Plan.h"
#include "kiln/Profile.h"
#include "kiln/ReadFile.h"
#include "kiln/Run.h"
#include "kiln/TensorTypes.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace kiln::cli {

static void printSummary(const kiln::IOInfo &info, const kiln::NpyArray &value, size_t index) {
  llvm::outs() << "output " << index << " '" << info.name
               << "': " << kiln::tensorTypeText(info.shape, info.dtype);
  kiln::ArraySummary summary = kiln::summarizeArray(value);
  if (!summary.min.empty())
    llvm::outs() << " min " << summary.min << " max " << summary.max << " mean " << summary.mean
                 << " [" << llvm::join(summary.first, ", ") << (summary.more ? ", ...]" : "]");
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

int runRun() {
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
    if (plan)
      names = kiln::traceCommandNames(*plan);
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

} // namespace kiln::cli
