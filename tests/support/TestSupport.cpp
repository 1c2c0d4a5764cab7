//===- TestSupport.cpp - Shared helpers for Kiln's tests ------------------===//
#include "TestSupport.h"
#include "IntegerCompare.h"

#include "kiln/Compiler.h"
#include "kiln/Run.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sys/wait.h>

namespace kiln::test {

std::string shellQuote(const std::string &s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

CommandResult runCommand(const std::string &command) {
  CommandResult result;
  std::string full = command + " 2>&1";
  FILE *pipe = popen(full.c_str(), "r");
  if (!pipe)
    return result;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0)
    result.output.append(buffer, n);
  int status = pclose(pipe);
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

std::string kilnBinary() {
  const char *env = std::getenv("KILN_BINARY");
  return env ? env : KILN_BINARY_PATH;
}

TempDir::TempDir() {
  char tmpl[] = "/tmp/kiln-test-XXXXXX";
  const char *made = mkdtemp(tmpl);
  dir = made ? made : "/tmp";
}

TempDir::~TempDir() {
  std::error_code ec;
  if (dir != "/tmp")
    std::filesystem::remove_all(dir, ec);
}

::testing::AssertionResult allClose(const NpyArray &got, const NpyArray &want,
                                    double tolerance) {
  if (got.dtype != "<f4" || want.dtype != "<f4")
    return ::testing::AssertionFailure()
           << "expected float32 arrays, got " << got.dtype << " and " << want.dtype;
  if (got.shape != want.shape) {
    auto text = [](const std::vector<int64_t> &s) {
      std::string t;
      for (int64_t d : s)
        t += std::to_string(d) + " ";
      return t;
    };
    return ::testing::AssertionFailure()
           << "shape mismatch: got [" << text(got.shape) << "], want [" << text(want.shape) << "]";
  }
  size_t n = got.data.size() / 4;
  const float *g = reinterpret_cast<const float *>(got.data.data());
  const float *w = reinterpret_cast<const float *>(want.data.data());
  size_t bad = 0, worst = 0;
  double worstRatio = 0;
  for (size_t i = 0; i < n; ++i) {
    double limit = tolerance * (1.0 + std::fabs(w[i]));
    double err = std::fabs(double(g[i]) - double(w[i]));
    bool ok = err <= limit || (std::isnan(g[i]) && std::isnan(w[i]));
    if (!ok)
      ++bad;
    double ratio = std::isnan(err) ? INFINITY : err / limit;
    if (ratio > worstRatio || (!ok && bad == 1)) {
      worstRatio = ratio;
      worst = i;
    }
  }
  if (bad == 0)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << bad << " of " << n << " elements outside " << tolerance
         << "*(1+|ref|); worst at flat index " << worst << ": got " << g[worst] << ", want "
         << w[worst];
}

std::vector<float> runMlirOnFloats(const std::string &source, const std::vector<int64_t> &shape,
                                   const std::vector<float> &x) {
  TempDir tmp;
  std::string path = tmp.file("model.mlir");
  std::ofstream(path) << source;
  auto artifact = compileArtifact(path, CompileOptions());
  EXPECT_TRUE(static_cast<bool>(artifact)) << llvm::toString(artifact.takeError());
  if (!artifact)
    return {};
  NpyArray in;
  in.shape = shape;
  in.data.resize(4 * x.size());
  if (!x.empty())
    std::memcpy(in.data.data(), x.data(), in.data.size());
  auto result = runArtifact(*artifact, {in}, RunOptions());
  EXPECT_TRUE(static_cast<bool>(result)) << llvm::toString(result.takeError());
  if (!result)
    return {};
  const NpyArray &y = result->outputValues.at(0);
  std::vector<float> out(y.data.size() / 4);
  if (!out.empty())
    std::memcpy(out.data(), y.data.data(), y.data.size());
  return out;
}

NpyArray loadNpy(const std::string &path) {
  auto array = readNpyFile(path);
  if (!array) {
    ADD_FAILURE() << llvm::toString(array.takeError());
    return {};
  }
  return std::move(*array);
}

std::vector<std::string> numberedFiles(const std::string &dir, const std::string &prefix) {
  std::vector<std::string> files;
  for (int k = 0;; ++k) {
    std::string path = dir + "/" + prefix + "_" + std::to_string(k) + ".npy";
    if (!std::filesystem::exists(path))
      break;
    files.push_back(path);
  }
  return files;
}

::testing::AssertionResult kilnFailsCleanly(const std::string &args,
                                            std::initializer_list<std::string> needles) {
  CommandResult r = runCommand(kilnBinary() + " " + args);
  if (r.exitCode != 1)
    return ::testing::AssertionFailure() << "exit status " << r.exitCode << ", not 1:\n" << r.output;
  for (const std::string &needle : needles)
    if (r.output.find(needle) == std::string::npos)
      return ::testing::AssertionFailure() << "missing '" << needle << "' in:\n" << r.output;
  for (const char *bad : {"Stack dump", "PLEASE submit", "module {", "func.func", "Assertion",
                          "internal error", "loc("})
    if (r.output.find(bad) != std::string::npos)
      return ::testing::AssertionFailure() << "leaked '" << bad << "':\n" << r.output;
  size_t count = 0;
  for (size_t p = r.output.find("error:"); p != std::string::npos; p = r.output.find("error:", p + 1))
    ++count;
  if (count != 1)
    return ::testing::AssertionFailure() << count << " error lines, not 1:\n" << r.output;
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult matchesOnBothDevices(const std::vector<uint8_t> &artifact,
                                                const std::vector<NpyArray> &inputs,
                                                const std::vector<NpyArray> &expected) {
  for (const char *device : {"local-sync", "local-task"}) {
    kiln::RunOptions options;
    options.device = device;
    options.threads = 2;
    auto result = kiln::runArtifact(artifact, inputs, options);
    if (!result)
      return ::testing::AssertionFailure() << device << ": " << llvm::toString(result.takeError());
    if (result->outputValues.size() != expected.size())
      return ::testing::AssertionFailure() << device << ": " << result->outputValues.size()
                                           << " outputs, expected " << expected.size();
    for (size_t k = 0; k < expected.size(); ++k) {
      if (result->outputValues[k].shape != expected[k].shape)
        return ::testing::AssertionFailure() << device << ": output " << k << " has another shape";
      if (::testing::AssertionResult close = allClose(result->outputValues[k], expected[k]); !close)
        return ::testing::AssertionFailure() << device << ": output " << k << ": " << close.message();
    }
  }
  return ::testing::AssertionSuccess();
}

void expectFolderMatchesReference(const std::string &dir, const kiln::CompileOptions &options) {
  auto artifact = kiln::compileArtifact(dir + "/model.tflite", options);
  ASSERT_TRUE(static_cast<bool>(artifact)) << llvm::toString(artifact.takeError());
  std::vector<NpyArray> inputs;
  for (const std::string &path : numberedFiles(dir, "input"))
    inputs.push_back(loadNpy(path));
  auto result = kiln::runArtifact(*artifact, inputs);
  ASSERT_TRUE(static_cast<bool>(result)) << llvm::toString(result.takeError());
  std::vector<std::string> expected = numberedFiles(dir, "output");
  ASSERT_EQ(result->outputValues.size(), expected.size());
  for (size_t k = 0; k < expected.size(); ++k) {
    SCOPED_TRACE("output " + std::to_string(k));
    NpyArray want = loadNpy(expected[k]);
    if (want.dtype == "<f4")
      EXPECT_TRUE(allClose(result->outputValues[k], want));
    else
      EXPECT_TRUE(integersEqual(result->outputValues[k], want));
  }
}

} // namespace kiln::test
