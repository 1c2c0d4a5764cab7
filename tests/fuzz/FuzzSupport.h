//===- FuzzSupport.h - Shared helpers of Kiln's fuzz targets ----*- C++ -*-===//
//
// Every fuzz target under tests/fuzz defines LLVMFuzzerTestOneInput (the
// libFuzzer entry point, https://llvm.org/docs/LibFuzzer.html). The same
// entry points are built twice: against libFuzzer (KILN_FUZZ=ON, clang) and
// against ReplayMain.cpp, which feeds files to them in the normal build so
// the regression inputs under tests/fuzz/regressions replay in CTest.
//
// A fuzz target reports a finding by aborting (fuzzCheck); everything else a
// reader may legitimately do with bad input (return an error) passes.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TESTS_FUZZ_FUZZSUPPORT_H
#define KILN_TESTS_FUZZ_FUZZSUPPORT_H

#include <cstddef>
#include <cstdint>
#include <string>

#include "llvm/Support/Error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace kiln::fuzz {

/// Aborts with `what` on stderr when `condition` is false: a broken
/// invariant is a finding (libFuzzer saves the input as crash-*).
void fuzzCheck(bool condition, const std::string &what);

/// Consumes `error` and checks it is what users get for bad input: one
/// non-empty line that does not say "internal error" (no input
/// makes Kiln print an internal error, dump MLIR or print several lines)
/// unless `input`, the fuzz input, holds those words itself (an echoed key).
/// Returns the message.
std::string expectOneLineError(llvm::Error error, const char *what, llvm::StringRef input);

/// Writes data[0, size) to this process's scratch file with extension
/// `extension` (".tflite", ".kiln") in $TMPDIR (default /tmp) and returns
/// its path, for readers that take a path. The file is reused per process.
std::string writeScratchFile(const uint8_t *data, size_t size, const std::string &extension);

} // namespace kiln::fuzz

#endif
