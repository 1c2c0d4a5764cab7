//===- Kiln.h - What the kiln subcommands share -----------------*- C++ -*-===//
//
// The `kiln` tool is one file per subcommand (Compile.cpp, Run.cpp,
// Inspect.cpp, Diff.cpp, Validate.cpp, Export.cpp), each with its run*
// function, main.cpp choosing one. They share the flags (defined in
// Flags.cpp, in the order `kiln help` lists them), the functions that turn
// flags into Kiln's structs (Flags.cpp) and the way errors, warnings and
// memory reports are printed (Output.cpp), declared here.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_APP_KILN_H
#define KILN_APP_KILN_H

#include "kiln/AtomicWrite.h"
#include "kiln/Export.h"
#include "kiln/Plan.h"
#include "kiln/Project.h"
#include "kiln/Recipe.h"
#include "kiln/Run.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kiln::cli {

namespace cl = llvm::cl;

// --- Flags (Flags.cpp) ------------------------------------------------------

extern cl::OptionCategory kilnCategory;
extern cl::SubCommand compileCmd;
extern cl::SubCommand runCmd;
extern cl::SubCommand inspectCmd;
extern cl::SubCommand diffCmd;
extern cl::SubCommand validateCmd;
extern cl::SubCommand exportCmd;
extern cl::opt<std::string> compileModel;
extern cl::opt<std::string> compileOutput;
extern cl::opt<std::string> emit;
extern cl::opt<std::string> runModel;
extern cl::list<std::string> runInputs;
extern cl::list<std::string> runOutputs;
extern cl::opt<unsigned> benchmark;
extern cl::opt<std::string> device;
extern cl::opt<unsigned> threads;
extern cl::opt<std::string> traceFile;
extern cl::opt<std::string> inspectPath;
extern cl::opt<bool> inspectJson;
extern cl::opt<bool> inspectSizes;
extern cl::list<std::string> diffPaths;
extern cl::list<std::string> validatePaths;
extern cl::opt<int64_t> validateSamples;
extern cl::opt<std::string> validateCompareWith;
extern cl::opt<uint64_t> validateSeed;
extern cl::opt<double> validateAtol;
extern cl::opt<double> validateRtol;
extern cl::opt<int64_t> validateLsb;
extern cl::opt<std::string> profile;
extern cl::opt<bool> debugSymbols;
extern cl::opt<bool> reflectionData;
extern cl::opt<std::string> dumpGraph;
extern cl::opt<std::string> dumpSchedule;
extern cl::list<std::string> tiles;
extern cl::opt<std::string> tuning;
extern cl::opt<bool> fusion;
extern cl::list<std::string> noFusion;
extern cl::opt<bool> checkBounds;
extern cl::list<std::string> fixShapes;
extern cl::opt<std::string> signature;
extern cl::list<std::string> fixValues;
extern cl::opt<std::string> targetTriple;
extern cl::opt<std::string> targetCpu;
extern cl::opt<std::string> targetFeatures;
extern cl::opt<uint64_t> maxBufferBytes;
extern cl::opt<std::string> targetName;
extern cl::opt<std::string> ramBudget;
extern cl::opt<std::string> flashBudget;
extern cl::opt<std::string> outputFormat;
extern cl::opt<std::string> moduleName;
extern cl::opt<std::string> exportModel;
extern cl::opt<std::string> exportOutput;
extern cl::opt<std::string> projectFile;
extern cl::opt<bool> kitFlag;
extern cl::list<std::string> kitInputs;
extern cl::opt<bool> onTarget;

// --- Shared functions (Flags.cpp, Output.cpp) and the subcommands ----------

/// True when a flag that --project also sets was given (a build setting,
/// --target-triple or --tuning).
bool recipeFlagsGiven();

/// The files a command reads and must never write: the model or artifact
/// at `path`, its external data (kiln::modelDataFiles), the --tuning and
/// --project files. Call before compiling (which resets llvm::cl values).
std::vector<std::string> filesRead(const std::string &path);

/// The recipe of the build flags given and of --tuning (flags win over the
/// file). A flag's bad value is a usage error; a bad file is not.
llvm::Expected<kiln::BuildRecipe> recipeOfFlags();

/// --max-buffer-bytes, checked (0 = the target's default).
llvm::Expected<int64_t> maxBufferBytesFlag();

/// Compile options of `recipe` plus the flags no recipe holds
/// (--target-triple, --max-buffer-bytes).
llvm::Expected<kiln::CompileOptions> compileOptionsOf(const kiln::BuildRecipe &recipe);

/// Warns about settings that change nothing for the recipe's format.
void warnUnusedSettings(const kiln::BuildRecipe &recipe);

/// Loads --project: the model path, recipe and export folder it gives,
/// the recipe checked (errors name the project file).
llvm::Expected<kiln::Project> loadProjectFlag(const std::string &path, std::string &model);

/// Refuses build flags next to --project (it sets them all).
int projectFlagsError(const std::string &project);

/// The --dump-dispatch-graph / --dump-schedule files of `plan` (texts kept
/// in `texts`), written in one group with the build's own files: on any
/// failure none of them is.
std::vector<kiln::OutputFile> dumpFiles(const kiln::CompilationPlan &plan, const std::string &dot,
                                        const std::string &csv, std::vector<std::string> &texts);

/// The budgets of --ram-budget and --flash-budget (0 = none given).
llvm::Expected<kiln::MemoryBudget> memoryBudget();

/// The firmware kit of the flags: `enabled` (--kit, or validate's
/// --on-target) and each --kit-input .npy read (kiln::readNpyFile; the
/// model's signature checks them when the kit is built). Errors: a file
/// that cannot be read, naming --kit-input; --kit-input without a kit (a
/// usage error).
llvm::Expected<kiln::KitRequest> kitRequestOfFlags(bool enabled);

/// Reads --benchmark, --device and --threads (kiln run, kiln diff) into
/// `options`; 0, or the exit status of the usage error printed.
int runOptionsOfFlags(kiln::RunOptions &options);

/// Prints "kiln: error: MESSAGE" on stderr; returns exit status 1.
int fail(const llvm::Twine &message);

/// Reports `err` as one line: exit status 2 for a usage error, else 1.
int fail(llvm::Error err);

/// The error for build flags given with an artifact, which is already
/// built: `verb` is "running", "inspecting" or "validating".
int alreadyCompiled(llvm::StringRef path, const char *verb);

/// "1 dispatch", "53 dispatches".
std::string counted(int64_t n, const char *one, const char *many);

/// One warning line on stderr: a flag that changed nothing.
void warn(const llvm::Twine &message);

/// warn() for each of `warnings` (a compilation's, kiln::CompileResult).
void printWarnings(const std::vector<std::string> &warnings);

/// Reports a usage error: one line, exit status 2.
int usage(const llvm::Twine &message);

/// "flash N bytes (code C, weights W, metadata M), RAM N bytes (arena A,
/// I/O B, kernel stack S)", as `kiln export` prints it.
std::string footprintText(const kiln::ExportFootprint &fp);

/// Each dispatch's kernel stack frame ("-" when no code was generated),
/// arena share and weights.
void printDispatchMemory(const std::vector<kiln::DispatchMemory> &rows);

/// Budget verdicts: within on stdout, exceeded as a warning on stderr
/// (exit status stays 0).
void reportBudgets(const std::vector<kiln::BudgetCheck> &checks);

/// The subcommands, each in its file: the exit status (0 success, 1 an
/// error in the files given, 2 a usage error, 3 for `kiln validate` when
/// outputs differ). Each reads its flags first: compiling resets llvm::cl
/// option values (see runRun).
int runCompile();  // Compile.cpp
int runRun();      // Run.cpp
int runInspect();  // Inspect.cpp
int runDiff();     // Diff.cpp
int runValidate(); // Validate.cpp
int runExport();   // Export.cpp

} // namespace kiln::cli

#endif // KILN_APP_KILN_H
