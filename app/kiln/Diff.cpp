//===- Diff.cpp - kiln diff -----------------------------------------------===//
//
// kiln diff A.kiln B.kiln [--json] [--benchmark=N] [--device=...] [--threads=N]
//
//===----------------------------------------------------------------------===//
#include "Kiln.h"

#include "kiln/Artifact.h"
#include "kiln/ReadFile.h"
#include "kiln/Run.h"

#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace kiln::cli {

int runDiff() {
  const std::vector<std::string> paths(diffPaths.begin(), diffPaths.end());
  kiln::RunOptions runOptions;
  if (int status = runOptionsOfFlags(runOptions))
    return status;
  const unsigned runs = runOptions.benchmarkRuns;
  if (paths.size() != 2)
    return usage("kiln diff takes two artifacts, A and B; " + llvm::Twine(paths.size()) + " given");
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

} // namespace kiln::cli
