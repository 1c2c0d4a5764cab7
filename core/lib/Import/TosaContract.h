//===- TosaContract.h - TOSA 0.60 ERROR_IF checks after import -*- C++ -*-===//
//
// The gate between every importer (TFLite, ONNX, TOSA .mlir) and lowering:
// each TOSA op is checked against the conditions of the TOSA 0.60.0
// specification (https://www.mlplatform.org/tosa/tosa_spec.html, the
// ERROR_IF lines of each operator) that MLIR 16's verifiers leave out and
// Kiln's lowerings rely on. A violation never reaches code generation: a
// negative pad, for one, becomes a kernel that reads out of bounds.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CORE_IMPORT_TOSACONTRACT_H
#define KILN_CORE_IMPORT_TOSACONTRACT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mlir {
class ModuleOp;
class Operation;
} // namespace mlir

namespace kiln {

/// The first condition `op` breaks, as "<attribute or operand> <value>
/// <relation> <bound>" (e.g. "pad -1 < 0", "output height 4 != (8 + 0 + 0
/// - 3) / 2 + 1"), or ""
/// when it keeps them all (also for ops the gate does not know).
///
/// Checked (TOSA 0.60 section, operator): 2.3 CONV2D, DEPTHWISE_CONV2D,
/// TRANSPOSE_CONV2D (pads >= 0, or out_pad > -kernel; stride >= 1;
/// dilation >= 1; output sizes by the spec's formula, a remainder of unread
/// input allowed only without end padding, Kiln's one relaxation of
/// idiv_check, WindowShape.h); 2.3 AVG_POOL2D, MAX_POOL2D (kernel >= 1,
/// stride >= 1, 0 <= pad < kernel, output sizes as for CONV2D); 2.8 PAD (paddings >= 0, output = input + pads);
/// 2.8 SLICE (start >= 0, size >= 1, start + size <= input); 2.7 REDUCE_*,
/// ARGMAX, 2.8 CONCAT, REVERSE (axis in [0, rank)); 2.8 TRANSPOSE (perms a
/// permutation); 2.11 RESCALE (shift in [2, 62], multiplier >= 0, one
/// multiplier and shift per channel or one in all, zero points 0 unless
/// 8-bit); 2.5 CLAMP (min <= max).
std::string tosaContractViolation(mlir::Operation *op);

/// Runs tosaContractViolation on every op of `module`. The error names the
/// source operator from the op's location and the condition:
///   imported (TFLite, ONNX):
///     "internal error: the importer built an invalid TOSA op for
///      Conv "conv1" #3 (tosa.conv2d): pad -1 < 0"
///   a TOSA .mlir file (`imported` false):
///     "<file>: line 7: tosa.conv2d: pad -1 < 0 (TOSA 0.60 ERROR_IF)".
llvm::Error checkTosaContract(mlir::ModuleOp module, llvm::StringRef file, bool imported);

} // namespace kiln

#endif
