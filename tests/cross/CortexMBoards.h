//===- CortexMBoards.h - Kiln C modules on QEMU's Cortex-M boards -*- C++ -*-===//
//
// The Cortex-M C module tests build a static C module with
// arm-none-eabi-gcc (the firmware kits' resources/kits/cortexm/startup.c
// and a linker script written by kiln::firmwareLinkerScript for the board,
// with this folder's cortexm/module_main.c), run it under qemu-system-arm
// with semihosting (I/O as
// input_K.bin / output_K.bin files in QEMU's working directory), and build
// the same module for the host with the system C compiler
// (../module_main.c) to compare outputs byte for byte.
//
//   thumbv7em-none-eabihf  mps2-an386  Cortex-M4F, hard-float
//   thumbv6m-none-eabi     mps2-an385  Cortex-M3 running ARMv6-M code
//
// QEMU 7.2 models no Cortex-M0+ board with room for a model (its micro:bit
// is a Cortex-M0 with 16 KiB of RAM); an M3 executes every ARMv6-M
// instruction, and startup.c sets the M3's CCR.UNALIGN_TRP for ARMv6-M
// builds so unaligned word and halfword accesses fault as on an M0+.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TESTS_CROSS_CORTEXMBOARDS_H
#define KILN_TESTS_CROSS_CORTEXMBOARDS_H

#include "kiln/Compiler.h"

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace kiln::test {

/// A QEMU board that runs one device target's C modules: the fields of
/// kiln::cortexMBoardOf(target) the tests use.
struct CortexMBoard {
  /// The --target= name, e.g. "thumbv6m-none-eabi".
  std::string target;
  /// qemu-system-arm -M, e.g. "mps2-an385".
  std::string machine;
  /// arm-none-eabi-gcc's CPU and ABI flags.
  std::string cpuFlags;
};

/// The folder of the kits' Cortex-M sources (startup.c, semihost.h).
std::string cortexMKitDir();

/// Writes DIR/firmware.ld for `board` (kiln::firmwareLinkerScript: the
/// board's 4 MiB of flash and RAM, a 256 KiB stack after .bss, which holds
/// module_main.c's 3 MiB pool) and returns its path.
std::string writeLinkerScript(const CortexMBoard &board, const std::string &dir);

/// "thumbv6m-none-eabi on mps2-an385" (test names and failure messages).
void PrintTo(const CortexMBoard &board, std::ostream *os);

/// thumbv7em-none-eabihf on mps2-an386 (Cortex-M4F).
CortexMBoard cortexM4Board();
/// thumbv6m-none-eabi (Cortex-M0+) on mps2-an385 (Cortex-M3).
CortexMBoard cortexM0PlusBoard();

/// Why Cortex-M programs cannot be built and run here (the missing tool and
/// the Debian packages that bring it), or "" when they can.
std::string missingCortexMTools();

/// What one run of a C module gave.
struct ModuleRun {
  /// Empty on success; else the failing command and its output.
  std::string error;
  /// Output K's bytes, in signature order.
  std::vector<std::vector<uint8_t>> outputs;
  /// The linked program's .text + .rodata (+ .vectors) bytes (flash) and
  /// .data + .bss bytes (static RAM, including module_main.c's 3 MiB pool),
  /// from arm-none-eabi-size; 0 for the host.
  int64_t flashBytes = 0, staticRamBytes = 0;
  /// Wall time of the run (QEMU start to exit), seconds.
  double seconds = 0;
};

/// Compiles `model` to a C module named `name` for `target` (the --target=
/// name) into `dir` with `options` otherwise; "" or the compiler's error.
/// `compiled`, if given, receives the result.
std::string writeCModule(const std::string &model, const std::string &name,
                         const std::string &target, kiln::CompileOptions options,
                         const std::string &dir, kiln::CompileResult *compiled = nullptr);

/// Links the C module `name` in `dir` for `board` (-O2, -Werror; the
/// linker script written into `dir`) and runs it
/// under QEMU on `inputs` (raw bytes per input), reading `outputBytes[K]`
/// bytes of output K.
ModuleRun runOnBoard(const CortexMBoard &board, const std::string &dir, const std::string &name,
                     const std::vector<std::vector<uint8_t>> &inputs,
                     const std::vector<size_t> &outputBytes);

/// Builds the C module `name` in `dir` (a host-target build) with the
/// system C compiler and runs it on `inputs`.
ModuleRun runOnHost(const std::string &dir, const std::string &name,
                    const std::vector<std::vector<uint8_t>> &inputs,
                    const std::vector<size_t> &outputBytes);

} // namespace kiln::test

#endif
