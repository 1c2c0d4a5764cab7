//===- IntegerTargets.h - Targets without a floating-point unit -*- C++ -*-===//
//
// Some device targets have no floating-point unit (thumbv6m-none-eabi, the
// Cortex-M0+: ARMv6-M, soft-float EABI). Kiln compiles only integer models
// for them: float arithmetic there would be software emulation, tens of
// cycles per operation, and a float model rarely fits such a device anyway.
// This is the one check, run by compile() (and so by export and by
// `kiln inspect --target=`) before dispatch formation. Internal to core.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CORE_CODEGEN_INTEGERTARGETS_H
#define KILN_CORE_CODEGEN_INTEGERTARGETS_H

#include "llvm/Support/Error.h"

#include <string>

namespace llvm {
class TargetMachine;
} // namespace llvm

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace kiln {

/// Whether `tm`'s CPU has floating-point hardware for float32: an Arm or
/// Thumb CPU with a VFP (LLVM feature vfp2sp: Cortex-M4F/M7/M33 yes,
/// Cortex-M0/M0+/M3 no), a RISC-V CPU with F; every x86-64 and AArch64 CPU.
bool targetHasFloatUnit(const llvm::TargetMachine &tm);

/// On a target without a floating-point unit (targetHasFloatUnit false),
/// refuses a model that computes in floating point: a float tensor (f16,
/// bf16, f32, f64) that one source operator hands to another or to the
/// model's outputs, or a float model input. Float values inside one
/// operator of an integer model are allowed and compiled as software
/// floating point (libgcc's __aeabi_fadd, __aeabi_fmul, ...): TFLite's int8
/// SOFTMAX computes its exponentials from a 256-entry float table and
/// Kiln reproduces it bit for bit that way. Operators are told apart by
/// the importers' locations ("CONV_2D#3"); in TOSA .mlir input, which has
/// none, every float tensor counts. Runs on @main as linalg on tensors
/// (before dispatch formation). The error is one line naming the target
/// (its --target= name where it is a known target, else the triple and
/// CPU), the model (`source`) and the operator: "thumbv6m-none-eabi has no
/// FPU: Kiln compiles only integer models for it; m.tflite computes in
/// float32 (operator CONV_2D #3: its output is float32)". Success on
/// targets with an FPU.
llvm::Error checkIntegerOnlyTarget(mlir::ModuleOp module, const llvm::TargetMachine &tm,
                                   const std::string &source);

} // namespace kiln

#endif // KILN_CORE_CODEGEN_INTEGERTARGETS_H
