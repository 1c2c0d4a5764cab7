//===- Usage.h - kiln's command-line usage errors and help -----*- C++ -*-===//
//
// Every usage error of the `kiln` tool (unknown command or flag, missing or
// extra argument, a flag value of the wrong form) is one line,
// "kiln: error: ...", and exit status 2; LLVM's option parser's own text
// ("Try: 'kiln --help'", "Did you mean ...") is never shown unfiltered.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_APP_USAGE_H
#define KILN_APP_USAGE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln::cli {

/// Exit status of a usage error.
constexpr int kUsageExit = 2;

/// An error in how kiln was called, not in the files it was given:
/// reported with exit status 2.
class UsageError : public llvm::ErrorInfo<UsageError> {
public:
  static char ID;
  explicit UsageError(std::string message) : message(std::move(message)) {}
  void log(llvm::raw_ostream &os) const override { os << message; }
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }
  std::string message;
};

/// A UsageError carrying `message`.
llvm::Error usageError(const llvm::Twine &message);

/// Wraps any error of `err` as a UsageError (for flag values whose text
/// the core rejected: --profile, --fix-shape, --tile, ...).
llvm::Error asUsageError(llvm::Error err);

/// Checks argv before LLVM's parser sees it: the command (first argument)
/// is one of `commands` or --help/--version, and every flag is one the
/// command takes (the options registered for its subcommand in
/// `category`, or LLVM's --help/--version). Rewrites `kiln help [COMMAND]`
/// to `kiln [COMMAND] --help`. Returns the (possibly rewritten) arguments,
/// or a UsageError naming the command or flag and, for a misspelt flag,
/// the closest one (edit distance at most 2).
llvm::Expected<std::vector<std::string>>
checkArguments(const std::vector<std::string> &args, llvm::cl::OptionCategory &category);

/// Runs LLVM's parser on `args` with its messages captured and returns
/// them as one UsageError line when it fails (too many positional
/// arguments, a value of the wrong type such as --threads=abc).
llvm::Error parseArguments(const std::vector<std::string> &args, llvm::StringRef overview);

} // namespace kiln::cli

#endif
