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

/// kiln-strided-copies-to-linalg (on func.func): rewrites every memref.copy
/// whose source or target is not densely packed (e.g. the subview of a
/// tosa.slice returned as a model output, which buffer-results-to-out-params
/// copies into the out parameter) as linalg.copy, so it lowers to loops
/// rather than to a call of the C runner's `memrefCopy`, which the runtime
/// does not ship. Contiguous copies stay memref.copy (a memcpy).
///
/// Before:
///   memref.copy %view, %out : memref<3x3xf32, strided<[6, 1], offset: 8>>
///                             to memref<3x3xf32>
/// After:
///   linalg.copy ins(%view : memref<3x3xf32, strided<[6, 1], offset: 8>>)
///               outs(%out : memref<3x3xf32>)
std::unique_ptr<mlir::Pass> createStridedCopiesToLinalgPass();

} // namespace kiln

#endif
