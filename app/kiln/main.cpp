//===- main.cpp - The `kiln` command-line tool ----------------------------===//
//
//   kiln compile MODEL [-o OUT.kiln] [--emit=STAGE] [tuning flags]
//   kiln run MODEL|ARTIFACT --input=@in.npy ... [--output=@out.npy ...]
//            [--benchmark=N] [--device=local-sync|local-task] [--threads=N]
//            [--trace=FILE.json]
//   kiln inspect MODEL|ARTIFACT [--json] [--sizes] [--dump-dispatch-graph=FILE.dot]
//            [--dump-schedule=FILE.csv]
//   kiln diff A.kiln B.kiln [--json] [--benchmark=N] [--device=...] [--threads=N]
//   kiln validate MODEL|ARTIFACT DIR [--json] [--atol=A --rtol=R] [--tolerance-lsb=N]
//            (exit 3 when outputs differ)
//   kiln validate A --compare-with=B [DIR] [--samples=N] [--seed=S] [--json]
//   kiln export MODEL --target=T [--profile=P] [--output-format=kiln|c-module] -o DIR
//   kiln --version
//
// Exit status: 0 on success, 1 on a user error (one message on stderr),
// 2 on bad usage. One file per subcommand (Kiln.h lists them); main()
// installs the error handlers, checks and parses the arguments and runs the
// subcommand given.
//
//===----------------------------------------------------------------------===//
#include "Kiln.h"
#include "Usage.h"

#include "kiln/Compiler.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <string>
#include <vector>

#include <unistd.h>

int main(int argc, char **argv) {
  using namespace kiln::cli;
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "kiln " << kiln::version() << "\n"
       << "built with LLVM/MLIR " << kiln::llvmVersion() << "\n";
  });
  // A backend that cannot compile for a target LLVM otherwise knows
  // (--target-triple=sparcv9-unknown-linux-gnu: "over-aligned dynamic
  // alloca not supported") reports a fatal error: one error line and exit
  // status 1, not an abort. No output file exists yet at that point.
  llvm::install_fatal_error_handler([](void *, const char *reason, bool) {
    // Every file stream's error is checked where it is written
    // (kiln/AtomicWrite.h); an I/O failure here is LLVM's own.
    llvm::StringRef why(reason);
    llvm::errs() << "kiln: error: "
                 << (why.contains("IO failure") ? "cannot write an output: "
                                                : "LLVM cannot compile this build: ")
                 << reason << "\n";
    llvm::errs().flush();
    std::_Exit(1);
  });
  // --help and --version print and exit inside llvm::cl; a standard output
  // that cannot be written (kiln --help > /dev/full) is reported here, at
  // exit, before outs() is destroyed (it was constructed first, so it is
  // destroyed after this handler runs). The parser runs with stderr
  // captured (kiln::cli::parseArguments), so the message goes to a copy of
  // the original stderr.
  llvm::outs();
  static int originalStderr = dup(STDERR_FILENO);
  std::atexit([] {
    llvm::outs().flush();
    if (!llvm::outs().has_error() || originalStderr < 0)
      return;
    llvm::raw_fd_ostream err(originalStderr, /*shouldClose=*/false, /*unbuffered=*/true);
    err << "kiln: error: cannot write to standard output: " << llvm::outs().error().message()
        << "\n";
    std::_Exit(1);
  });
  cl::HideUnrelatedOptions(kilnCategory);
  auto args = kiln::cli::checkArguments(std::vector<std::string>(argv, argv + argc), kilnCategory);
  if (!args)
    return fail(args.takeError());
  if (llvm::Error err = kiln::cli::parseArguments(
          *args, "Kiln: ahead-of-time compiler for neural-network models\n"))
    return fail(std::move(err));
  int status = 2;
  if (compileCmd)
    status = runCompile();
  else if (runCmd)
    status = runRun();
  else if (inspectCmd)
    status = runInspect();
  else if (diffCmd)
    status = runDiff();
  else if (exportCmd)
    status = runExport();
  else if (validateCmd)
    status = runValidate();
  else {
    cl::PrintHelpMessage(false, true);
    return 2;
  }
  llvm::outs().flush();
  if (llvm::outs().has_error()) {
    std::string message = llvm::outs().error().message();
    llvm::outs().clear_error();
    return fail("cannot write to standard output: " + message);
  }
  return status;
}
