//===- FuzzSupport.cpp - Shared helpers of Kiln's fuzz targets ------------===//
#include "FuzzSupport.h"

#include <cstdio>
#include <cstdlib>
#include <unistd.h>

namespace kiln::fuzz {

void fuzzCheck(bool condition, const std::string &what) {
  if (condition)
    return;
  std::fprintf(stderr, "kiln fuzz: invariant broken: %s\n", what.c_str());
  std::abort();
}

std::string expectOneLineError(llvm::Error error, const char *what, llvm::StringRef input) {
  fuzzCheck(static_cast<bool>(error), std::string(what) + " failed without an error");
  std::string message = llvm::toString(std::move(error));
  fuzzCheck(!message.empty(), std::string(what) + " returned an empty error message");
  fuzzCheck(message.find('\n') == std::string::npos,
            std::string(what) + " returned a multi-line error: " + message);
  fuzzCheck(message.find("internal error") == std::string::npos ||
                input.contains("internal error"),
            std::string(what) + " reported an internal error: " + message);
  return message;
}

std::string writeScratchFile(const uint8_t *data, size_t size, const std::string &extension) {
  const char *dir = std::getenv("TMPDIR");
  std::string path = std::string(dir && *dir ? dir : "/tmp") + "/kiln-fuzz-" +
                     std::to_string(getpid()) + extension;
  FILE *f = std::fopen(path.c_str(), "wb");
  fuzzCheck(f != nullptr, "cannot write the scratch file " + path);
  fuzzCheck(size == 0 || std::fwrite(data, 1, size, f) == size, "short write to " + path);
  std::fclose(f);
  return path;
}

} // namespace kiln::fuzz
