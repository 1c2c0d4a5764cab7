//===- kiln/KitRun.h - Run a firmware kit and validate it -------*- C++ -*-===//
//
// `kiln validate MODEL --target=T --on-target` (or an exported BUNDLE's
// folder): exports the model with a
// firmware kit (kiln/Kit.h), builds it with the kit's Makefile, runs it on
// the device (`make run`: QEMU's board for a Cortex-M, qemu-user for a
// foreign Linux architecture, directly for this machine's) and compares
// every output with the host build's on the same inputs, as STM32Cube.AI's
// validate-on-target does. Part of kiln_host (it runs the host build).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_KITRUN_H
#define KILN_KITRUN_H

#include "kiln/Export.h"
#include "kiln/Run.h"

#include <string>
#include <vector>

#include "llvm/Support/Error.h"

namespace kiln {

/// The first tool missing on this machine that building and running the
/// kit of `target` needs (make, arm-none-eabi-gcc, qemu-system-arm; or the
/// target's gcc and qemu-ARCH), as one sentence naming the tool and
/// its Debian package; "" when all are found (on PATH).
std::string missingKitTools(const std::string &target);

/// Runs `make -C DIR run` for the kit written in `dir` and returns the
/// outputs its program printed (parseKitOutputs), waiting at most
/// `timeoutSeconds`. Errors: make's failure with the last lines of its
/// output (a link that does not fit quotes the linker script's message),
/// a timeout, or parseKitOutputs'.
llvm::Expected<std::vector<std::vector<uint8_t>>> runKit(const std::string &dir,
                                                         unsigned timeoutSeconds = 600);

/// What validateKitOnTarget did.
struct OnTargetReport {
  /// The bundle's folder and the board or runner ("mps2-an386").
  std::string dir;
  std::string device;
  /// One sample (the kit's inputs) named by `device`, outputs compared with the host's:
  /// integer outputs in LSB (Tolerance::lsb, exact by default), f32 within
  /// atol + rtol x |host|.
  ValidationReport report;
};

/// Exports `request` (its kit enabled) into `dir`, checks the tools
/// (missingKitTools), runs the kit (runKit), builds the same model for the
/// host (target "host", a .kiln, the request's other settings) and runs it
/// on the kit's inputs, then compares output by output with `tolerance`.
/// Errors: the export's, a missing tool, runKit's, the host run's.
llvm::Expected<OnTargetReport> validateKitOnTarget(ExportRequest request, const std::string &dir,
                                                   const Tolerance &tolerance);

/// `kiln validate BUNDLE --on-target`: runs the kit a `kiln export --kit`
/// wrote into `dir` as it is there (edits to its main.c included) and
/// compares with the host build of the model and recipe its manifest.json
/// records ("kit": {"model"}, the path as the export was given it;
/// "recipe"), on the kit's inputs (the --kit-input files named there, or
/// the pattern). Errors: no manifest or no kit in it, a model that cannot
/// be read or whose SHA-256 is not the manifest's, and
/// validateKitOnTarget's.
llvm::Expected<OnTargetReport> validateKitBundle(const std::string &dir,
                                                 const Tolerance &tolerance);

} // namespace kiln

#endif
