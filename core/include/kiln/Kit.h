//===- kiln/Kit.h - Firmware kits: run an export on its device --*- C++ -*-===//
//
// `kiln export MODEL --target=T --kit` adds to the bundle what builds and
// runs the model on the device, as STM32Cube.AI's generated project and
// IREE's runtime samples do:
//
//   Cortex-M (thumbv7em-none-eabihf, thumbv6m-none-eabi), beside the C
//   module: main.c (runs the module on the inputs of kit_buffers.c and
//   prints every output over semihosting), kit.h, kit_buffers.c (inputs,
//   outputs and arena as static arrays), startup.c and semihost.h (reset
//   handler, vector table, semihosting calls), NAME.ld (the board's flash
//   and RAM, with ASSERTs quoting the export's footprint) and a Makefile
//   for arm-none-eabi-gcc whose `make run` runs the firmware on QEMU's
//   board for the core (cortexMBoardOf).
//
//   Linux (x86_64-, aarch64-, riscv64-linux-gnu; "host" on x86-64), beside
//   NAME.kiln: Kiln's runtime built for the target (libkiln_runtime.a,
//   found by runtimeArchivePath), runtime.h, main.c, kit.h, kit_buffers.c
//   and a Makefile for the target's gcc whose `make run` runs the program
//   (under qemu-user for a foreign architecture).
//
// Every program prints "kiln-output K BYTES HEX" per output and
// "kiln-done" (resources/kits/kit.h; parseKitOutputs reads them). The kit
// sources live once, in resources/kits, compiled into Kiln as data; the
// Cortex-M tests build their programs from the same files.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_KIT_H
#define KILN_KIT_H

#include "kiln/Compiler.h"
#include "kiln/Export.h"

#include <cstdint>
#include <string>
#include <vector>

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace kiln {

/// The QEMU board a Cortex-M target's kit runs on, and how gcc builds for
/// its core.
struct CortexMBoard {
  /// The --target= name, e.g. "thumbv6m-none-eabi".
  std::string target;
  /// The core the code is for, e.g. "Cortex-M0+".
  std::string core;
  /// qemu-system-arm -M, e.g. "mps2-an385".
  std::string machine;
  /// arm-none-eabi-gcc's CPU and ABI flags (they also pick newlib's and
  /// libgcc's multilib: thumb/v6-m/nofp for the M0+, thumb/v7e-m+fp/hard
  /// for the M4F).
  std::string cpuFlags;
  /// Flash (code, weights) and RAM (data, arena, stack): base addresses
  /// and bytes, from the board's memory map.
  uint64_t flashOrigin = 0;
  int64_t flashBytes = 0;
  uint64_t ramOrigin = 0;
  int64_t ramBytes = 0;
  /// The board and its memory map for the linker script's comment, with
  /// its source (ARM's application note, QEMU's hw/arm/mps2.c).
  std::string description;
};

/// The board of a Cortex-M target: thumbv7em-none-eabihf on mps2-an386
/// (Cortex-M4F), thumbv6m-none-eabi on mps2-an385 (a Cortex-M3 running
/// ARMv6-M code; QEMU 7.2 models no Cortex-M0+ board with room for a
/// model, and startup.c makes the M3 fault on unaligned accesses as an
/// M0+ does). Both: 4 MiB of flash (ZBT SSRAM1 at 0x00000000) and 4 MiB of
/// RAM (ZBT SSRAM2/3 at 0x20000000). Null for any other target.
const CortexMBoard *cortexMBoardOf(llvm::StringRef target);

/// The memory a Cortex-M firmware may use, and what the linker script's
/// messages say when it does not fit.
struct FirmwareLayout {
  /// FLASH and RAM lengths, bytes.
  int64_t flashBytes = 0;
  int64_t ramBytes = 0;
  /// The stack reserved above .bss, bytes (a multiple of 8).
  int64_t stackBytes = 0;
  /// One line for the script's first comment ("person_detect for
  /// thumbv7em-none-eabihf").
  std::string title;
  /// The ASSERT messages when flash or RAM overflow (no '"').
  std::string flashMessage;
  std::string ramMessage;
};

/// The linker script of `board` (resources/kits/cortexm/firmware.ld.in
/// filled in): FLASH and RAM at the board's addresses with `layout`'s
/// lengths, .data loaded in flash and copied by startup.c, a .stack
/// section of layout.stackBytes after .bss, and ASSERTs that stop the link
/// with layout's messages.
std::string firmwareLinkerScript(const CortexMBoard &board, const FirmwareLayout &layout);

/// Stack a kit's firmware reserves beyond the largest kernel frame, bytes:
/// main(), the module's NAME_run, newlib's memcpy/memset and libgcc's
/// soft-float and 64-bit helpers.
inline constexpr int64_t kKitStackReserveBytes = 8 * 1024;

/// The deterministic inputs a kit runs on when none are given, one per
/// input of `inputs` (the model's signature): element i is
/// v = (37 i + 11) mod 256 - 128 for signed integer types, v + 128 for
/// unsigned ones (u8), i mod 2 for booleans and v / 128 for f32 and f64.
/// Errors: an input of another type (f16), naming it and --kit-input.
llvm::Expected<std::vector<KitInput>> kitPatternInputs(const std::vector<IOInfo> &inputs);

/// Checks that `given` (--kit-input, one .npy per input) matches the
/// model's `inputs`: the count, then each array's dtype and shape.
/// Errors: one line naming the file and the input ("--kit-input=x.npy is
/// i8 1x4, the model's input 0 "x" is i8 1x4x4x3").
llvm::Error checkKitInputs(const std::vector<KitInput> &given, const std::vector<IOInfo> &inputs);

/// Where `kiln export --kit` looks for the runtime archive of a Linux
/// target: DIR/../lib/kiln/TARGET/libkiln_runtime.a, DIR the folder of the
/// running executable (/usr/bin for the .deb, build/bin in a build tree);
/// "host" stands for its triple (x86_64-linux-gnu on x86-64).
std::string runtimeArchivePath(const std::string &target);

/// The names of the kit's files for `request`'s target, in writing order
/// (`moduleName`: the C module's name, for NAME.ld): empty for a target
/// without a kit.
std::vector<std::string> kitFileNames(const ExportRequest &request, const std::string &moduleName);

/// What a kit is built from.
struct KitSource {
  const ExportRequest &request;
  /// The export's build (its signature, sizes) and footprint.
  const CompileResult &compiled;
  const ExportFootprint &footprint;
  /// The model's file stem (NAME.kiln) and the C module's name.
  std::string name;
  std::string moduleName;
};

/// The kit's files (kitFileNames' order) and the inputs it runs on.
struct KitFiles {
  std::vector<GeneratedFile> files;
  std::vector<KitInput> inputs;
};

/// Builds the kit of `source` (see the file comment). The Cortex-M linker
/// script takes the board's flash and RAM, or the request's budgets when
/// they are smaller (the part's own memory), and a stack of the
/// footprint's largest kernel frame + kKitStackReserveBytes. Errors (one
/// line each): a target with no kit (naming the targets that have one), a
/// missing runtime archive (naming the path looked in and how to get
/// it), checkKitInputs' and kitPatternInputs'.
llvm::Expected<KitFiles> buildKitFiles(const KitSource &source);

/// The outputs a kit's program printed (`text`: its standard output, QEMU
/// semihosting's included): the bytes of each "kiln-output K BYTES HEX"
/// line, by K. Errors: a "kiln-error" line (quoted), no "kiln-done" line
/// (the program stopped early), a line whose K is out of order or whose
/// HEX is not 2 x BYTES hex digits.
llvm::Expected<std::vector<std::vector<uint8_t>>> parseKitOutputs(llvm::StringRef text);

} // namespace kiln

#endif
