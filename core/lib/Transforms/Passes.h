//===- Passes.h - Kiln's own MLIR passes -----------------------*- C++ -*-===//
//
// One pass per file in this directory, each with its own test in
// tests/unit. Internal to core.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CORE_TRANSFORMS_PASSES_H
#define KILN_CORE_TRANSFORMS_PASSES_H

#include <memory>

namespace mlir {
class Pass;
} // namespace mlir

namespace kiln {

/// Name of the module attribute kiln-outline-constants writes: an ArrayAttr
/// of DictionaryAttr {name: StringAttr, value: DenseElementsAttr}, one per
/// outlined constant in argument order.
inline constexpr const char *kConstantsAttrName = "kiln.constants";

/// kiln-outline-constants: turns every non-splat tensor constant of the
/// public functions into a trailing function argument, so the weights travel
/// in the artifact's constants table and kernels read them in place.
///
/// Before:
///   func.func @main(%x: tensor<1x4xf32>) -> tensor<1x2xf32> {
///     %w = arith.constant dense<[[...]]> : tensor<4x2xf32>
///     ... %w ...
/// After:
///   module attributes {kiln.constants = [{name = "c0", value = dense<...>}]}
///   func.func @main(%x: tensor<1x4xf32>, %c0: tensor<4x2xf32>) -> ... {
///     ... %c0 ...
/// Splat constants (cheap to rebuild in code) stay inline. Every argument
/// is marked `bufferization.writable = false`.
std::unique_ptr<mlir::Pass> createOutlineConstantsPass();

} // namespace kiln

#endif
