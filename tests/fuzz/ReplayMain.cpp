//===- ReplayMain.cpp - Runs a fuzz entry point over files ----------------===//
//
// The `main` of the replay builds of the fuzz targets (no libFuzzer needed):
//   kiln_fuzz_<target>_replay FILE_OR_DIR...
// feeds every file (directories recursively, in sorted order) to
// LLVMFuzzerTestOneInput, after LLVMFuzzerInitialize if the target has one.
// A finding aborts, as under libFuzzer; otherwise exits 0 after printing how
// many inputs ran. Exits 2 when no input file was found, so a test whose
// folders went missing cannot pass by replaying nothing.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <vector>

extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

namespace fs = std::filesystem;

int main(int argc, char **argv) {
  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize(&argc, &argv);
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    fs::path arg(argv[i]);
    if (fs::is_directory(arg)) {
      for (const auto &entry : fs::recursive_directory_iterator(arg))
        if (entry.is_regular_file() && entry.path().filename() != "README.md")
          files.push_back(entry.path());
    } else if (fs::is_regular_file(arg)) {
      files.push_back(arg);
    } else {
      std::fprintf(stderr, "%s: no such file or folder: %s\n", argv[0], argv[i]);
      return 2;
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::fprintf(stderr, "%s: no input files\n", argv[0]);
    return 2;
  }
  for (const fs::path &file : files) {
    std::ifstream in(file, std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
    std::fprintf(stderr, "replay %s (%zu bytes)\n", file.c_str(), bytes.size());
    // An exactly sized heap copy, as libFuzzer passes it, so reads past the
    // end land outside the allocation (AddressSanitizer builds report them).
    std::unique_ptr<uint8_t[]> copy(new uint8_t[bytes.size() ? bytes.size() : 1]);
    std::copy(bytes.begin(), bytes.end(), copy.get());
    LLVMFuzzerTestOneInput(copy.get(), bytes.size());
  }
  std::printf("%zu inputs replayed without a finding\n", files.size());
  return 0;
}
