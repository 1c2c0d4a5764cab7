//===- TestSupport.h - Shared helpers for Kiln's tests ---------*- C++ -*-===//
#ifndef KILN_TESTS_TESTSUPPORT_H
#define KILN_TESTS_TESTSUPPORT_H

#include "kiln/Npy.h"
#include "kiln/Options.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kiln::test {

/// Output of a finished child process (stdout and stderr interleaved).
struct CommandResult {
  int exitCode = -1;
  std::string output;
};

/// Runs `command` through /bin/sh, capturing stdout and stderr.
CommandResult runCommand(const std::string &command);

/// Quotes `s` for /bin/sh.
std::string shellQuote(const std::string &s);

/// Path of the `kiln` binary under test (KILN_BINARY).
std::string kilnBinary();

/// A fresh temporary directory, removed when the object dies.
class TempDir {
public:
  TempDir();
  ~TempDir();
  const std::string &path() const { return dir; }
  std::string file(const std::string &name) const { return dir + "/" + name; }

private:
  std::string dir;
};

/// Runs `kiln ARGS` and checks it failed the way every bad input must: exit
/// status 1, exactly one "error:" line, each of `needles` in the output, and
/// no crash report, assertion or IR dump.
::testing::AssertionResult kilnFailsCleanly(const std::string &args,
                                            std::initializer_list<std::string> needles);

/// Runs `artifact` on `inputs` with local-sync and with local-task (2
/// threads) and checks both give `expected` (allClose, same count and
/// shapes).
::testing::AssertionResult matchesOnBothDevices(const std::vector<uint8_t> &artifact,
                                                const std::vector<NpyArray> &inputs,
                                                const std::vector<NpyArray> &expected);

/// Every element of `got` is within atol_rel * (1 + |want|) of `want`
/// (float32 arrays of equal shape). On failure the message gives the worst
/// element's index, both values and the count of violations.
::testing::AssertionResult allClose(const NpyArray &got, const NpyArray &want,
                                    double tolerance = 1e-4);

/// Compiles the TOSA `.mlir` text `source` (one f32 input of `shape`
/// holding `x`) with default options, runs it once on local-sync and
/// returns its first output's floats; empty, with a test failure, if it
/// does not compile or run.
std::vector<float> runMlirOnFloats(const std::string &source, const std::vector<int64_t> &shape,
                                   const std::vector<float> &x);

/// Compiles `dir`/model.tflite with `options`, runs it on `dir`'s
/// input_K.npy and compares every output with output_K.npy: float32 within
/// 1e-4 x (1 + |reference|) (allClose), other types exactly
/// (integersEqual). Test failures name the output. The op-case folders of
/// tests/data/ops and tests/data/control_flow use it.
void expectFolderMatchesReference(const std::string &dir, const kiln::CompileOptions &options);

/// Reads a .npy file or fails the test.
NpyArray loadNpy(const std::string &path);

/// Files named input_K.npy / output_K.npy in `dir`, K = 0, 1, ... in order.
std::vector<std::string> numberedFiles(const std::string &dir,
                                       const std::string &prefix);

} // namespace kiln::test

#endif
