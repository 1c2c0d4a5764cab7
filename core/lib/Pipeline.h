//===- Pipeline.h - Kiln's pass pipelines ----------------------*- C++ -*-===//
//
// The one place the compiler's phase pipelines are built, so the CLI and the
// workbench run exactly the same passes. Internal to core (includes MLIR).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CORE_PIPELINE_H
#define KILN_CORE_PIPELINE_H

namespace mlir {
class PassManager;
class DialectRegistry;
} // namespace mlir

namespace kiln {

/// Registers every dialect and external interface model the pipelines need.
void registerKilnDialects(mlir::DialectRegistry &registry);

/// TOSA (one func.func, static shapes) -> linalg on tensors.
/// Before: tosa.conv2d / tosa.add / ... ; after: linalg named and generic ops
/// on tensors, tensor.pad/extract_slice/collapse_shape, arith constants.
void buildTosaToLinalgPipeline(mlir::PassManager &pm);

/// linalg on tensors -> LLVM dialect, with bare-pointer calling convention.
/// Before: `func.func @main(%in: tensor<..>) -> tensor<..>`;
/// after: `llvm.func @main(%in: !llvm.ptr<f32>, %c0: ..., %out: ...)` where
/// large constants became arguments (kiln-outline-constants) and results
/// became out-parameters.
void buildLinalgToLLVMPipeline(mlir::PassManager &pm);

} // namespace kiln

#endif
