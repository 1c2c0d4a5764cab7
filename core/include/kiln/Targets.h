//===- kiln/Targets.h - The device targets --target= names -----*- C++ -*-===//
//
// The one table of Kiln's device targets. `--target=NAME` (the CLI, the
// recipe's "target", Python's target=, the workbench's target menus) picks
// a row; applyTarget turns it into TargetOptions; code generation reads the
// row of the triple it compiles for (tile budget, the name in messages);
// the CLI's help, the workbench's menus and Python's kiln.targets() list
// the rows. Adding a target is one row here (docs/design.md, "Where to
// add"). Plain data (no MLIR).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TARGETS_H
#define KILN_TARGETS_H

#include "kiln/Options.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

/// The workgroup budget of cache-less microcontrollers, bytes: a
/// workgroup's tile and its temporaries fit in a few KiB of SRAM
/// (KernelTarget::workgroupBytes; hosted targets get 64 KiB).
inline constexpr int64_t kMicrocontrollerWorkgroupBytes = 4 * 1024;

/// One device target: what `--target=` sets and what the tools say of it.
struct DeviceTarget {
  /// The `--target=` name: "host" or an OS-style triple
  /// ("aarch64-linux-gnu", "thumbv7em-none-eabihf").
  const char *name;
  /// What people know it by, for menus beside the name ("This computer",
  /// "Cortex-M4F bare metal").
  const char *displayName;
  /// The note `kiln help` prints after the name ("Cortex-M4F"); "" = none.
  const char *helpNote;
  /// The LLVM triple it compiles for, normalized; "" = the machine
  /// compiling (llvm::sys::getDefaultTargetTriple()).
  const char *triple;
  /// Default LLVM CPU, feature string and ABI (applyTarget); a
  /// `--target-cpu=` or `--target-cpu-features=` given wins.
  const char *cpu;
  const char *features;
  const char *abi;
  /// No operating system: output format c-module only (nothing there loads
  /// a `.kiln` artifact's shared object); hosted targets write both.
  bool bareMetal;
  /// No floating-point unit on its default CPU: integer models only (the
  /// check itself, checkIntegerOnlyTarget, asks the CPU, so a triple given
  /// with --target-triple is judged the same way).
  bool integerOnly;
  /// Workgroup budget, bytes (KernelTarget::workgroupBytes), with tiles that
  /// divide their loops (single-core devices); 0 = the hosted default of
  /// 64 KiB with tiles split evenly for threads.
  int64_t workgroupBytes;
};

/// The device targets, in the order every list shows them.
inline constexpr DeviceTarget kDeviceTargets[] = {
    {"host", "This computer", "", "", "generic", "", "", false, false, 0},
    {"x86_64-linux-gnu", "x86-64 Linux", "", "x86_64-unknown-linux-gnu", "generic", "", "",
     false, false, 0},
    {"aarch64-linux-gnu", "aarch64 Linux", "", "aarch64-unknown-linux-gnu", "generic", "+neon",
     "", false, false, 0},
    // RV64GC, Debian's riscv64 baseline.
    {"riscv64-linux-gnu", "RISC-V 64 Linux (RV64GC)", "", "riscv64-unknown-linux-gnu",
     "generic-rv64", "+m,+a,+f,+d,+c", "lp64d", false, false, 0},
    // Cortex-M4F: FPv4-SP, hard-float EABI.
    {"thumbv7em-none-eabihf", "Cortex-M4F bare metal", "Cortex-M4F",
     "thumbv7em-none-unknown-eabihf", "cortex-m4", "", "", true, false,
     kMicrocontrollerWorkgroupBytes},
    // Cortex-M0+: ARMv6-M, no FPU, no DSP, soft-float EABI.
    {"thumbv6m-none-eabi", "Cortex-M0+ bare metal, integer models", "Cortex-M0+, integer models",
     "thumbv6m-none-unknown-eabi", "cortex-m0plus", "", "", true, true,
     kMicrocontrollerWorkgroupBytes},
};

/// The row named `name`; null for a name the table lacks.
const DeviceTarget *findDeviceTarget(llvm::StringRef name);

/// The row (other than "host") whose triple is `triple` once normalized;
/// null for a triple the table lacks (one given with --target-triple).
const DeviceTarget *deviceTargetOfTriple(llvm::StringRef triple);

/// The names of kDeviceTargets, in order.
std::vector<std::string> knownTargets();

/// The DeviceTarget::displayName of the target `name`; empty for a name
/// knownTargets() lacks.
std::string targetDisplayName(const std::string &name);

/// Sets `target` to the named device target's triple, CPU, features and
/// ABI; a CPU other than "generic" already in `target.cpu`, and features
/// already in `target.features`, are kept. Errors name the unknown target
/// and list the supported ones.
llvm::Error applyTarget(const std::string &name, TargetOptions &target);

/// True if `triple` (normalized or not) has no operating system (bare
/// metal): such targets get the static C module, never a `.kiln` artifact,
/// since nothing there can load a shared object (DeviceTarget::bareMetal
/// for the table's rows, any triple alike).
bool isBareMetalTriple(const std::string &triple);

} // namespace kiln

#endif // KILN_TARGETS_H
