//===- Output.cpp - Errors, warnings and reports --------------------------===//
//
// What every subcommand prints the same way: one-line errors (exit status 1,
// or 2 for usage), warnings, counts, and the device memory report that
// `kiln inspect --target=` and `kiln export` share.
//
//===----------------------------------------------------------------------===//
#include "Kiln.h"
#include "Usage.h"

#include "kiln/Export.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::cli {

int fail(const llvm::Twine &message) {
  llvm::errs() << "kiln: error: " << message << "\n";
  return 1;
}

int fail(llvm::Error err) {
  int status = 1;
  std::string message;
  llvm::handleAllErrors(
      std::move(err),
      [&](const kiln::cli::UsageError &usage) {
        status = kiln::cli::kUsageExit;
        message = usage.message;
      },
      [&](const llvm::ErrorInfoBase &other) { message = other.message(); });
  fail(message);
  return status;
}

int alreadyCompiled(llvm::StringRef path, const char *verb) {
  return fail(path +
              " is already compiled; compile options (--fix-shape, --target-*, --tile, "
              "--tuning, --fusion, --no-fusion, --check-bounds, --profile, ...) apply when " +
              llvm::Twine(verb) + " a model");
}

std::string counted(int64_t n, const char *one, const char *many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

void warn(const llvm::Twine &message) { llvm::errs() << "kiln: warning: " << message << "\n"; }

void printWarnings(const std::vector<std::string> &warnings) {
  for (const std::string &w : warnings)
    warn(w);
}

int usage(const llvm::Twine &message) { return fail(kiln::cli::usageError(message)); }

std::string footprintText(const kiln::ExportFootprint &fp) {
  std::string text =
      "flash " + std::to_string(fp.flashBytes) + " bytes (code " + std::to_string(fp.codeBytes) +
      ", weights " + std::to_string(fp.constantBytes) + ", metadata " +
      std::to_string(fp.metadataBytes) + "), RAM " + std::to_string(fp.ramBytes) +
      " bytes (arena " + std::to_string(fp.arenaBytes) + ", I/O " + std::to_string(fp.ioBytes);
  if (fp.stackBytes >= 0)
    text += ", kernel stack " + std::to_string(fp.stackBytes);
  return text + ")";
}

void printDispatchMemory(const std::vector<kiln::DispatchMemory> &rows) {
  llvm::outs() << "memory per dispatch (bytes): kernel stack frame (\"dynamic\": sized at "
                  "run time, not recorded by LLVM), arena share, weights\n";
  for (const kiln::DispatchMemory &m : rows) {
    std::string stack = m.stackBytes >= 0 ? std::to_string(m.stackBytes)
                        : m.dynamicStack  ? "dynamic"
                                          : "-";
    llvm::outs() << llvm::format("  %-20s stack %7s  arena %9lld  weights %8lld", m.name.c_str(),
                                 stack.c_str(), (long long)m.arenaBytes, (long long)m.weightBytes);
    if (m.entryPoint != m.name)
      llvm::outs() << "  (the code of " << m.entryPoint << ")";
    llvm::outs() << "\n";
  }
}

void reportBudgets(const std::vector<kiln::BudgetCheck> &checks) {
  for (const kiln::BudgetCheck &c : checks)
    if (c.exceeded)
      warn(c.message);
    else
      llvm::outs() << "budget: " << c.message << "\n";
}

} // namespace kiln::cli
