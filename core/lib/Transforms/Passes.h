//===- Passes.h - Kiln's own MLIR passes -----------------------*- C++ -*-===//
//
// One pass per file in this directory, each with its own test: its IR cases
// in core/test/Transforms/<pass>.mlir (lit, run through kiln-opt), what is
// not IR (compiled runs, C++ APIs) in tests/unit. Internal to core.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CORE_TRANSFORMS_PASSES_H
#define KILN_CORE_TRANSFORMS_PASSES_H

#include "kiln/Plan.h"
#include "kiln/Targets.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <memory>
#include <set>
#include <vector>

namespace mlir {
class Operation;
class Pass;
namespace func {
class FuncOp;
} // namespace func
class RewritePatternSet;
} // namespace mlir

namespace kiln {

/// Name of the module attribute kiln-outline-constants writes: an ArrayAttr
/// of DictionaryAttr {name: StringAttr, value: DenseElementsAttr}, one per
/// outlined constant in argument order.
inline constexpr const char *kConstantsAttrName = "kiln.constants";

/// kiln-sink-transposes (on func.func, TOSA; first pass after import): moves
/// layout transposes (the ONNX importer wraps every NCHW convolution and pool
/// in transpose(NCHW -> NHWC) ... transpose(NHWC -> NCHW)) towards their
/// consumers until they meet their inverse, so a chain of convolutions runs
/// in NHWC with no transpose inside. Rewrites (P: a constant permutation):
///   transpose(transpose(x, P), Q)  -> transpose(x, R), R[i] = P[Q[i]];
///                                     x when R is the identity
///   transpose(tosa.const)          -> tosa.const, elements reordered
///   reciprocal / rsqrt / negate(tosa.const f32) -> tosa.const
///   elementwise(transpose(a, P), transpose(b, P), tosa.const c)
///                                  -> transpose(elementwise(a, b, c'), P),
///                                     c' = c transposed by P^-1 (at compile
///                                     time); also tosa.cast, tosa.select
///   concat(transpose(a, P), ..., axis) -> transpose(concat(a, ..., P[axis]), P)
///   pad(transpose(x, P), paddings) -> transpose(pad(x, paddings'), P),
///                                     paddings'[P[i]] = paddings[i]
///   reduce_*(transpose(x, P), axis) -> transpose(reduce_*(x, P[axis]), P)
/// A transpose moves only when every user of it moves it (a transpose with
/// a user that keeps it, e.g. a convolution or the return, is not copied),
/// and a large constant is transposed only when nothing else reads it.
/// Then a per-channel multiply, add or subtract of a constant after a float
/// tosa.conv2d / tosa.depthwise_conv2d with constant weights and bias (a
/// BatchNormalization after a Conv) whose result has no other user folds
/// into the convolution: weights (OHWI; depthwise [KH, KW, C, M], channel
/// c * M + m) and bias [O] times the scale, bias plus or minus the shift.
/// A function with no transpose and no such op (most TFLite models) is left
/// untouched: the rewrite driver would otherwise also fold and merge its
/// constants.
///
/// Before:
///   %0 = tosa.transpose %x, [0, 2, 3, 1]       // NCHW -> NHWC
///   %1 = tosa.conv2d %0, %w1, %b1 : tensor<1x8x8x16xf32>
///   %2 = tosa.transpose %1, [0, 3, 1, 2]       // NHWC -> NCHW
///   %3 = tosa.mul %2, %scale (1x16x1x1)        // BatchNormalization
///   %4 = tosa.add %3, %shift (1x16x1x1)
///   %5 = tosa.clamp %4 {min_fp = 0.0, max_fp = 6.0}
///   %6 = tosa.transpose %5, [0, 2, 3, 1]
///   %7 = tosa.conv2d %6, %w2, %b2
///   %8 = tosa.transpose %7, [0, 3, 1, 2]
/// After:
///   %0 = tosa.transpose %x, [0, 2, 3, 1]
///   %1 = tosa.conv2d %0, %w1', %b1'            // w1 * scale, b1 * scale + shift
///   %5 = tosa.clamp %1 {min_fp = 0.0, max_fp = 6.0}
///   %7 = tosa.conv2d %5, %w2, %b2
///   %8 = tosa.transpose %7, [0, 3, 1, 2]
std::unique_ptr<mlir::Pass> createSinkTransposesPass();
void populateSinkTransposesPatterns(mlir::RewritePatternSet &patterns);

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

/// kiln-materialize-outputs: gives every result of @main (tensors, before
/// bufferization) a value of its own, so each model output gets its own
/// output buffer written by exactly one command. A result whose storage is
/// an argument of @main (a model input, or a constant outlined by
/// kiln-outline-constants), possibly through reshapes, becomes a copy; a
/// splat constant becomes a linalg.fill (a fill command); a result sharing
/// its storage with an earlier result (the same tensor listed twice, or a
/// reshape of another output) becomes a copy of it. Without this,
/// bufferization returns the argument itself and
/// drop-equivalent-buffer-results removes the result, shifting every later
/// output into the wrong slot.
///
/// Before:
///   func.func @main(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3x2xf32>) {
///     %t = tosa.transpose ... (folded away: identity permutation)
///     return %x, %c : ...            // %c = arith.constant dense<1.0>
/// After:
///     %0 = bufferization.alloc_tensor() copy(%x) : tensor<2x3xf32>
///     %1 = linalg.fill ins(%one : f32) outs(%empty : tensor<3x2xf32>)
///     return %0, %1 : ...
std::unique_ptr<mlir::Pass> createMaterializeOutputsPass();

/// kiln-strided-copies-to-linalg (on func.func): rewrites every memref.copy
/// whose source or target is not densely packed (e.g. the subview of a
/// tosa.slice returned as a model output, which buffer-results-to-out-params
/// copies into the out parameter) as linalg.copy, so it lowers to loops
/// rather than to a call of the C runner's `memrefCopy`, which the runtime
/// does not ship. Contiguous copies stay memref.copy (a memcpy). Copies of
/// a buffer onto itself (left by in-place tiles) are erased.
///
/// Before:
///   memref.copy %view, %out : memref<3x3xf32, strided<[6, 1], offset: 8>>
///                             to memref<3x3xf32>
/// After:
///   linalg.copy ins(%view : memref<3x3xf32, strided<[6, 1], offset: 8>>)
///               outs(%out : memref<3x3xf32>)
std::unique_ptr<mlir::Pass> createStridedCopiesToLinalgPass();

/// Knobs of dispatch formation and tiling (from CompileOptions).
struct DispatchOptions {
  /// Fuse elementwise consumers and padding into their root's dispatch.
  bool fusion = true;
  /// Dispatch ids (as formed with these options) not to fuse into.
  std::set<int64_t> noFusion;
  /// Workgroup tile sizes per dispatch id, one per loop of the dispatch's
  /// tiled op (0 = not tiled).
  std::map<int64_t, std::vector<int64_t>> tileSizes;
  /// Bytes of its widest tile (the output, or wider intermediates such as
  /// i32 accumulators) one workgroup should keep (the tiling heuristic's
  /// budget; about half a typical 512 KiB-1 MiB L2; the target's
  /// KernelTarget::workgroupBytes).
  int64_t workgroupBytes = 64 * 1024;
  /// SIMD register width of the target, bytes (16 SSE/NEON, 32 AVX2,
  /// 64 AVX-512): a tiled innermost dimension is a multiple of it.
  int64_t vectorBytes = 16;
  /// Tiled outer loops get dividing tiles (KernelTarget::dividingTiles).
  bool dividingTiles = false;
};

/// Attribute on ops of @main naming their dispatch region (i64 id).
inline constexpr const char *kDispatchAttrName = "kiln.dispatch";

/// kiln-hoist-static-allocas (on func.func, buffers, after dispatch
/// outlining):
/// moves every static-size memref.alloca whose allocation scope is the
/// function to the start of the function's entry block. After the SCF ->
/// CF lowering an alloca placed after a loop (a tile's i32 accumulators
/// after the padded window's copy loop) would sit in a later basic block,
/// and LLVM treats an alloca outside the entry block as a stack object of
/// run-time size: it records no frame for the kernel in .stack_sizes (the
/// manifest's "dynamic_stack"). Static allocas have no operands, so moving
/// them keeps every use dominated; the allocation happens once per call
/// instead of once per pass over its block, which is what the frame holds
/// anyway.
///
/// Before: func.func @main_dispatch_1(...) { scf.for ... { copy };
///           %acc = memref.alloca() : memref<8x32xi32> ... }
/// After:  func.func @main_dispatch_1(...) {
///           %acc = memref.alloca() : memref<8x32xi32>
///           scf.for ... { copy } ... }
std::unique_ptr<mlir::Pass> createHoistStaticAllocasPass();

/// kiln-reduction-nan-flags (on func.func, TOSA, before tosa-to-linalg):
/// a f32 tosa.reduce_max / reduce_min returns NaN when its row holds a NaN,
/// by a second, NaN-free reduction that LLVM vectorizes: the minimum of
/// equal(x, x) as 1.0 / 0.0 over the same axis, 0 exactly where a NaN was.
/// The max reduction itself may then be vectorized ignoring NaNs
/// (kiln-interchange-for-vectorization). A reduction whose every user is
/// tosa.sub(its input, it) (softmax's and log-softmax's row maximum) is left
/// alone: there the NaN element's own difference is NaN, and the sum that
/// follows carries it to the whole row.
///
/// Before: %m = tosa.reduce_max %x {axis = 1}
/// After:  %r = tosa.reduce_max %x {axis = 1}
///         %f = tosa.cast (tosa.equal %x, %x) : i1 -> f32
///         %z = tosa.reduce_min %f {axis = 1}
///         %m = tosa.select (tosa.equal %z, 0.0), NaN, %r
std::unique_ptr<mlir::Pass> createReductionNaNFlagsPass();

/// kiln-max-identity-neg-inf (on func.func, linalg on tensors, right after
/// tosa-to-linalg): the max reductions, max pools and their padding that
/// MLIR 16 starts from the lowest finite float (-3.4028235e38, its
/// identity of max) start from -inf: the maximum of an all -inf window or
/// row is -inf, as TFLite, ONNX and IEEE compute it, not -FLT_MAX. Min
/// reductions likewise start from +inf instead of +FLT_MAX (the minimum of
/// an all +inf row is +inf). A fill is changed only where it is the
/// accumulator of a linalg op combining with arith.maxf (arith.minf) and
/// has no other use; a pad only where it feeds a max pool.
///
/// Before: %f = linalg.fill ins(%cst_lowest) outs(%e) ; linalg.pooling_nhwc_max
///           ins(tensor.pad %x low .. high .. { yield %cst_lowest }) outs(%f)
/// After:  the same with %cst_ninf = arith.constant 0xFF800000 : f32
std::unique_ptr<mlir::Pass> createMaxIdentityNegInfPass();

/// kiln-propagate-nan (on func.func, loops or linalg on buffers, before the
/// lowering to LLVM): arith.maxf and arith.minf (from tosa.maximum/minimum,
/// tosa.clamp, ReLU, max pools, reduce_max, softmax's max, the exp/tanh
/// approximations' input clamps and the register tiles' epilogues) return
/// NaN when either operand is NaN, as their MLIR definition, IEEE 754-2019
/// maximum/minimum, ONNX (numpy) and TFLite's reference RELU/RELU6 say
/// (ops marked `nnan`, the vectorizable reduction combiners, excepted):
/// the op stays (it lowers to llvm.maxnum / llvm.minnum, which return the
/// other operand) and a select returns the NaN. ReLU(NaN) was 0 and a NaN
/// reaching a sigmoid through a clamp came out as 1.0. A constant bound
/// (no NaN) needs no NaN test of its own.
///
/// Before: %m = arith.maxf %x, %y : vector<8xf32>
/// After:  %e = arith.maxf %x, %y
///         %u = arith.cmpf uno, %x, %y       // either is NaN
///         %n = arith.addf %x, %y            // NaN then
///         %m = arith.select %u, %n, %e
/// and arith.maxf %x, 0.0 -> select(cmpf uno %x, %x; %x; maxf %x, 0.0).
void populatePropagateNaNPatterns(mlir::RewritePatternSet &patterns);
std::unique_ptr<mlir::Pass> createPropagateNaNPass();

/// kiln-order-globals (on the module, right after one-shot bufferization):
/// every memref.global is renamed "__constant_<k>_<shape>" and moved to the
/// top of the module in the order of its first memref.get_global (the
/// module's own op order), so builds of one model are byte-identical.
/// MLIR 16's module bufferization visits functions in the iteration order
/// of a DenseMap keyed by FuncOp pointers (getFuncOpsOrderedByCalls), so
/// the globals it creates came out in a different order, and two constants
/// of one type with different values under swapped names, from one
/// process to the next (two `kiln export` runs of BlazeFace's ONNX model
/// differed in 8 bytes of code offsets).
///
/// Before: memref.global @__constant_1x8xf32_0 = dense<2.0> ...
///         memref.global @__constant_1x8xf32 = dense<1.0> ...
///         func @main_dispatch_0 { memref.get_global @__constant_1x8xf32 }
///         func @main_dispatch_1 { memref.get_global @__constant_1x8xf32_0 }
/// After:  memref.global @__constant_0_1x8xf32 = dense<1.0> ...
///         memref.global @__constant_1_1x8xf32 = dense<2.0> ...
///         (uses renamed alike)
std::unique_ptr<mlir::Pass> createOrderGlobalsPass();

/// kiln-exact-avg-pool-divisors (on func.func, TOSA, right before
/// tosa-to-linalg-named): a f32 tosa.avg_pool2d that MLIR 16 would divide
/// wrongly (stride above 1 and a pad of 2 or more on that axis) becomes a
/// zero pad,
/// an unpadded avg_pool2d (which divides every window by KH * KW) and a
/// multiply by the constant KH * KW / count, count being the window's
/// elements inside the input (avgPoolWindowCount). MLIR 16's lowering
/// counts the padding a window covers from the output index, not from the
/// index times the stride, so with stride > 1 and a pad of 2 or more at an
/// end (ONNX ceil_mode with explicit pads, a 5x5 stride-2 SAME pool) it
/// divides some windows by too few elements (for kernel 3, stride 2, pads
/// 1 + 1 overhang on 8: 2 3 3 2 1 instead of 2 3 3 3 1). Other pools
/// (stride 1, pads of at most 1: the lowering is right there and keeps its
/// vectorized channels) and integer pools are left alone.
///
/// Before: %y = tosa.avg_pool2d %x {kernel = [1, 3], stride = [1, 2],
///            pad = [0, 0, 1, 2]} : (tensor<1x1x8x1xf32>) -> tensor<1x1x5x1xf32>
/// After:  %p = tosa.pad %x, [[0,0],[0,0],[1,2],[0,0]] : -> tensor<1x1x11x1xf32>
///         %m = tosa.avg_pool2d %p {kernel = [1, 3], stride = [1, 2], pad = [0,0,0,0]}
///         %y = tosa.mul %m, dense<[1.5, 1, 1, 1, 3]> : tensor<1x1x5x1xf32>
void populateExactAvgPoolDivisorsPatterns(mlir::RewritePatternSet &patterns);
std::unique_ptr<mlir::Pass> createExactAvgPoolDivisorsPass();

/// Elements of window `o` (stride, padBegin, kernel) inside an input of
/// `in` elements along one axis: TOSA AVG_POOL2D's divisor factor for it.
int64_t avgPoolWindowCount(int64_t o, int64_t stride, int64_t padBegin, int64_t kernel,
                           int64_t in);

/// kiln-drop-zero-points (on func.func, linalg on tensors, right after
/// tosa-to-linalg): the quantized named ops MLIR lowers int8 TOSA
/// convolutions, fully connected layers and matmuls to become the plain
/// named ops when both zero points are the constant 0 (the int8 importer
/// folds the input zero point into the bias and weights are symmetric), so
/// the inner loop multiplies raw int8 values and Kiln's kernels (register
/// tiles, packed weights) recognise them. Same values: the plain ops
/// sign-extend i8 operands to the i32 accumulator, as the quantized ones do
/// after subtracting zero points.
///
/// Before: linalg.conv_2d_nhwc_hwcf_q ins(%x, %w, %c0_i32, %c0_i32 :
///             tensor<1x8x8x16xi8>, tensor<3x3x16x32xi8>, i32, i32)
///             outs(%acc : tensor<1x6x6x32xi32>)
/// After:  linalg.conv_2d_nhwc_hwcf ins(%x, %w : tensor<1x8x8x16xi8>,
///             tensor<3x3x16x32xi8>) outs(%acc : tensor<1x6x6x32xi32>)
/// Ops (MLIR 16): quantized_matmul, quantized_batch_matmul,
/// conv_2d_nhwc_hwcf_q, depthwise_conv_2d_nhwc_hwcm_q.
void populateDropZeroPointsPatterns(mlir::RewritePatternSet &patterns);
std::unique_ptr<mlir::Pass> createDropZeroPointsPass();

/// kiln-fuse-elementwise (on func.func, linalg on tensors): MLIR's
/// elementwise fusion (populateElementwiseOpsFusionPatterns, reshape
/// propagation by expansion, constant folding of linalg ops such as weight
/// transposes), with one difference: a fused op's location is a FusedLoc
/// of its producers' and its own, so every source operator fused into a
/// loop nest stays named in the plan.
///
/// Before: %a = linalg.generic ... loc("ADD#10")
///         %r = linalg.generic ins(%a) ... loc("RELU#11")
/// After:  %r = linalg.generic ... loc(fused["ADD#10", "RELU#11"])
std::unique_ptr<mlir::Pass> createFuseElementwisePass();

/// kiln-collapse-reshapes: folds tensor.expand_shape/collapse_shape into
/// neighbouring elementwise linalg.generic ops by collapsing the generic's
/// loops (MLIR's populateFoldReshapeOpsByCollapsingPatterns), so a bias-add
/// can read a matmul's result directly and fuse with it.
///
/// Before:
///   %m = linalg.matmul ... -> tensor<4096x24xf32>
///   %e = tensor.expand_shape %m [[0, 1, 2], [3]] : ... into tensor<1x64x64x24xf32>
///   %b = linalg.generic ins(%e, %bias) ... -> tensor<1x64x64x24xf32>
/// After:
///   %m = linalg.matmul ... -> tensor<4096x24xf32>
///   %b = linalg.generic ins(%m, %bias) ... -> tensor<4096x24xf32>
///   %e = tensor.expand_shape %b ...
std::unique_ptr<mlir::Pass> createCollapseReshapesPass();

/// kiln-form-dispatch-regions: partitions @main (linalg on tensors) into
/// dispatch regions, each a future kernel launch, and tags every op that
/// belongs to one with `kiln.dispatch = <id>` (roots get ids in program
/// order, then regions formed by producers no root absorbed).
///
/// A region has one root (a linalg op other than linalg.fill, a tensor.pad
/// or tensor.insert_slice chain that nothing absorbs, ...) plus, with fusion
/// on: the linalg.fill initializing the root's output; a tensor.pad or
/// tensor.extract_slice whose only user is the root (padding folded into
/// the convolution); elementwise linalg.generic consumers of the root's
/// single-use result with the same iteration space (bias + activation).
/// tensor.expand_shape/collapse_shape are views and launch nothing;
/// constants and tensor.empty are not tagged.
///
/// Before:
///   %p = tensor.pad %x ...
///   %f = linalg.fill ins(%zero) outs(%e)
///   %c = linalg.conv_2d_nhwc_hwcf ins(%p, %w) outs(%f)
///   %r = linalg.generic ins(%c, %bias) ...        // bias + relu
/// After: the same ops, each with {kiln.dispatch = 0 : i64}.
std::unique_ptr<mlir::Pass>
createFormDispatchRegionsPass(const DispatchOptions &options);

/// kiln-outline-dispatches: moves each tagged region into its own
/// `func.func private @main_dispatch_<id>` in destination-passing style and
/// replaces it in @main with a func.call. Region inputs become arguments
/// (read-only), each region result gets an output argument that the
/// result's `tensor.empty` destination is replaced with (writable), so
/// bufferization writes results in place; splat constants and scalars are
/// cloned into the region. The function records `kiln.dispatch_id` and
/// `kiln.sources` (the source operators, "CONV_2D#12" = type and index).
///
/// Before (in @main):
///   %c = linalg.conv_2d_nhwc_hwcf {kiln.dispatch = 0} ins(%x, %w) outs(%f)
/// After:
///   %o = tensor.empty() : tensor<1x64x64x24xf32>
///   %c = call @main_dispatch_0(%x, %w, %o)
///   func.func private @main_dispatch_0(%x, %w, %out) -> tensor<...> {
///     ... linalg.conv_2d_nhwc_hwcf ins(%x, %w) outs(fill(%out)) ...
std::unique_ptr<mlir::Pass> createOutlineDispatchesPass();

/// kiln-tile-and-distribute: tiles the last op of every dispatch function
/// (fusing its producers into the tile loops with MLIR's
/// tileConsumerAndFuseProducerGreedilyUsingSCFForOp) and turns the
/// outermost tile loops (at most 3, innermost = x) into workgroup ids: the
/// function gains three trailing `index` arguments (x, y, z) and records
/// `kiln.workgroup_count` and `kiln.tile_sizes`.
///
/// Tile-size heuristic (documented in docs/design.md): over the tiled op's
/// parallel loops, innermost first, keep whole dimensions while the output
/// tile stays within the budget (options.workgroupBytes, divided by the
/// ratio of the widest intermediate element to the output's, e.g. 4 for an
/// int8 convolution's i32 accumulators; then lowered to output bytes / 8
/// but not below 4 KiB, so a dispatch has at least 8 workgroups for the
/// runtime's threads); tile the first dimension that does not fit
/// to floor(budget / inner bytes) (a multiple of the target's vector width
/// when it is the innermost dimension, else evened out to equal tiles in a
/// count that is a multiple of 4 when above 2); outer dimensions get 1
/// (so each becomes a workgroup dimension); reduction loops are never tiled.
///
/// Before:  func @d(%in, %out) { %r = linalg.generic ... outs(%out); return %r }
/// After:   func @d(%in, %out, %x: index, %y: index, %z: index) {
///            %off = %y * 8 ; %s = tensor.extract_slice %in[%off] ...
///            %t = linalg.generic ins(%s) outs(slice of %out)
///            %r = tensor.insert_slice %t into %out[%off] ... ; return %r }
std::unique_ptr<mlir::Pass>
createTileAndDistributePass(const DispatchOptions &options);

/// The register file the kernels are built for (from the target CPU; see
/// kernelTargetOf in Codegen/MachineCode.h).
struct KernelTarget {
  /// f32 lanes of one SIMD register: 16 AVX-512, 8 AVX2, 4 SSE/NEON, 1 for
  /// a CPU without SIMD (Cortex-M4F, RV64GC).
  int64_t vectorLanes = 4;
  /// Architectural SIMD (or, without SIMD, FP) registers: 16 SSE/AVX2,
  /// 32 AVX-512, NEON, Cortex-M4F (s0-s31) and RV64 (f0-f31).
  int64_t vectorRegisters = 16;
  /// Vector FMAs and loads the core can issue per cycle (the throughput
  /// model behind KernelStrategy::flopsPerCycle): 2 and 2 on recent x86-64
  /// and AArch64 cores, 1 and 1 on in-order scalar cores.
  int64_t fmaPerCycle = 2;
  int64_t loadsPerCycle = 2;
  /// Whether a multiply-add is one instruction (FMA); without it (SSE2,
  /// AVX without FMA3) it issues as a multiply and an add.
  bool fma = true;
  /// Bytes of its widest tile one workgroup should keep (the tiling
  /// heuristic's budget, DispatchOptions::workgroupBytes): 64 KiB where an L2 cache
  /// keeps a tile and its inputs resident (application cores); 4 KiB
  /// (kiln/Targets.h, kMicrocontrollerWorkgroupBytes) on
  /// M-profile Arm (Cortex-M: thumbv6m, thumbv7m, thumbv7em, thumbv8m),
  /// which has no cache worth the name, runs one thread, and keeps tile
  /// temporaries (a convolution's padded input window) on a stack of a few
  /// KiB to tens of KiB.
  int64_t workgroupBytes = 64 * 1024;
  /// Whether a tiled outer loop gets the largest tile that divides it
  /// (no partial last tile, so no code for one) rather than a tile count
  /// that 2 and 4 threads split evenly: single-core microcontrollers,
  /// where flash is scarce and there are no threads to balance.
  bool dividingTiles = false;
};

/// A register tile: `rows` x (`vectors` x `lanes`) output values held in
/// rows x vectors SIMD registers for a whole reduction.
struct RegisterTile {
  int64_t rows = 1;
  int64_t vectors = 1;
  int64_t lanes = 1;
};

/// The register tile of a matmul-family kernel (matmul, batch matmul,
/// implicit-GEMM convolution) with `columns` output columns: up to 3
/// column vectors (4 with 32 registers), and as many rows (at most 8) as
/// leave one weight vector per column vector and one broadcast register
/// free (AVX2, 24 columns: 4 x 3 x 8; 16+ columns: 6 x 2 x 8, as MLAS's
/// FMA3 SGEMM kernel).
RegisterTile chooseRegisterTile(int64_t columns, const KernelTarget &target);

/// The register tile of a depthwise convolution with `channels` channels:
/// up to 2 channel vectors, up to 4 output pixels per step.
RegisterTile chooseDepthwiseTile(int64_t channels, const KernelTarget &target);

/// kiln-register-tile-contractions (on func.func, buffers): rewrites f32
/// (and, on targets with at least 4 vector lanes, int8: i8 operands
/// sign-extended into i32 vector accumulators, the requantizing epilogue
/// applied on the vectors before the store) linalg.matmul, linalg.batch_matmul, linalg.conv_2d_nhwc_hwcf (an
/// implicit GEMM over the input window, no im2col copy) and
/// linalg.depthwise_conv_2d_nhwc_hwcm with multiplier 1 into scf loops over
/// register tiles (chooseRegisterTile): the tile's accumulators are vector
/// values loaded once from the output, carried through the reduction loops
/// as loop-carried values (they stay in registers) and stored once.
/// Remainder rows use smaller power-of-two row tiles (7 left of 8:
/// 4 + 2 + 1); remainder columns a narrower
/// power-of-two vector or one masked vector, never scalar loops. Weights
/// kiln-pack-weights packed (a marked unrealized cast) are read from their
/// panels (PanelLayout); the pass fails if a marked cast is left in use.
/// Ops it cannot handle (dynamic column count, non-unit-stride columns,
/// other element types, int8 on scalar targets) are left to
/// kiln-interchange-for-vectorization.
///
/// Before: linalg.matmul ins(%a, %b : memref<?x24xf32>, memref<24x24xf32>)
///                       outs(%c : memref<?x24xf32>)
/// After:  scf.for %m = 0 to %full step 4 {            // 4 x 3 x 8 tile
///           %c00 = vector.load %c[%m, 0] : vector<8xf32> ... (12 loads)
///           %r:12 = scf.for %k = 0 to 24 iter_args(%acc00 = %c00, ...) {
///             %b0 = vector.load %b[%k, 0] ... %b2 = vector.load %b[%k, 16]
///             %a0 = memref.load %a[%m, %k] ; %s0 = vector.broadcast %a0
///             %n00 = arith.addf (arith.mulf %s0, %b0), %acc00 ... (12)
///             scf.yield %n00, ... }
///           vector.store %r#0, %c[%m, 0] ... }
///         // the remaining 0-3 rows: at most one 2-row and one 1-row tile
///         scf.for %m = %full to %two step 2 { 2 x 3 x 8 tile }
///         scf.for %m = %two to %rows step 1 { 1 x 3 x 8 tile }
std::unique_ptr<mlir::Pass>
createRegisterTileContractionsPass(const KernelTarget &target);

/// The register tile kiln-register-tile-contractions gives `op` (a linalg
/// op on buffers), or nullopt with the reason in `whyNot` when it leaves
/// the op to the loop path. The pass and the plan's record both ask here.
std::optional<RegisterTile> registerTileFor(mlir::Operation *op, const KernelTarget &target,
                                            std::string *whyNot = nullptr);

/// The strategy of one dispatch function on buffers (its root op's), as
/// recorded in the plan: kind, register tile, weight layout and the
/// throughput model's FLOP per cycle.
KernelStrategy kernelStrategyOf(mlir::func::FuncOp dispatch, const KernelTarget &target);
void populateRegisterTileContractionsPatterns(mlir::RewritePatternSet &patterns,
                                              const KernelTarget &target);

/// The panel layout of a K x N weight matrix (kiln-pack-weights): the
/// columns are cut into panels of `panel` columns (the kernel's column
/// block: register-tile vectors x lanes), the last panel narrower when N is
/// not a multiple; each panel is stored whole, K rows of its width, one
/// after the other. No padding: the packed matrix has K x N elements.
/// Element (k, n) in panel p = n / panel (starting at column s = p x panel,
/// width w = min(panel, N - s)) is at s x K + k x w + (n - s).
/// For a convolution's HWCF weights K = H x W x C and N = F.
struct PanelLayout {
  int64_t rows = 0;    ///< K
  int64_t columns = 0; ///< N
  int64_t panel = 0;   ///< columns per full panel
};

/// The position (elements) of (k, n) in `layout`, as above.
int64_t panelOffsetOf(const PanelLayout &layout, int64_t k, int64_t n);

/// Attribute kiln-pack-weights puts on the unrealized cast through which a
/// dispatch reads packed weights: the panel width (i64 columns).
inline constexpr const char *kPanelColumnsAttrName = "kiln.panel_columns";

/// kiln-pack-weights (on the module, buffers, @main and its dispatch
/// functions; before the plan is built): stores constant weights in the
/// panel layout (PanelLayout) the register-tiled kernels read, so each
/// reduction step's weight vectors are contiguous with the previous step's
/// instead of N columns apart. A constant (@main argument numInputs + i for
/// entry i of kiln.constants) is packed when every use is a dispatch that
/// reads it only as the weights of a linalg.matmul or
/// linalg.conv_2d_nhwc_hwcf that registerTileFor tiles, N is wider than
/// that tile's column block (else the layout already is one panel), all
/// uses agree on the panel width, and each workgroup's column slice starts
/// on a panel boundary and covers whole panels (or all N columns). The
/// constant's value becomes the packed 1-D tensor (same bytes: no padding),
/// the @main and dispatch arguments 1-D memrefs, and the dispatch reads
/// the argument through an unrealized cast back to the logical type,
/// marked with kPanelColumnsAttrName; kiln-register-tile-contractions
/// indexes the packed buffer and the cast disappears.
///
/// Before:
///   kiln.constants = [{name = "c0", value = dense<...> : tensor<8x96xf32>}]
///   func.func private @main_dispatch_0(%a: memref<?x8xf32>,
///       %w: memref<8x96xf32>, %c: memref<?x96xf32>, ...) {
///     linalg.matmul ins(%a, %w : ...) outs(%c : ...)
/// After (panel 64: one 8x64 panel, then an 8x32 one):
///   kiln.constants = [{name = "c0", value = dense<...> : tensor<768xf32>}]
///   func.func private @main_dispatch_0(%a: memref<?x8xf32>,
///       %w: memref<768xf32>, %c: memref<?x96xf32>, ...) {
///     %0 = builtin.unrealized_conversion_cast %w : memref<768xf32> to
///          memref<8x96xf32> {kiln.panel_columns = 64 : i64}
///     linalg.matmul ins(%a, %0 : ...) outs(%c : ...)
std::unique_ptr<mlir::Pass> createPackWeightsPass(const KernelTarget &target,
                                                  unsigned numInputs);

/// kiln-interchange-for-vectorization (on func.func, buffers or tensors):
/// generalizes convolutions, contractions and pooling ops and interchanges
/// their loops so the output's innermost non-unit dimension is the
/// innermost loop, the reductions just outside it, and the other parallel
/// loops outermost. The innermost loop is then parallel and unit-stride in
/// the output and the weights, which LLVM's loop vectorizer turns into
/// SIMD multiply-adds (broadcast input x weight vector).
///
/// Before: linalg.matmul            loops (m, n, k), k innermost (reduction)
/// After:  linalg.generic           loops (m, k, n), n innermost (parallel)
/// Conv NHWC/HWCF (n, oh, ow, f, kh, kw, c) -> (n, oh, ow, kh, kw, c, f).
///
/// Exception: a reduction over the inputs' contiguous dimension (softmax's
/// row max and sum, MEAN over channels: every input the reductions walk is
/// contiguous along that one reduction loop, none along the output's) of
/// at least `minContiguousReduction` elements keeps that loop innermost,
/// which LLVM vectorizes as a unit-stride reduction (loads, vaddps/vmaxps,
/// one horizontal step per row) instead of gathering the rows into
/// vectors. A max/min combiner becomes max nnan nsz(isnan(x) ? -inf : x,
/// acc), the form LLVM 16 vectorizes: it ignores a NaN element, so a NaN
/// must reach the result another way (kiln-reduction-nan-flags). Below 8
/// channels the rows
/// in vectors were as fast or faster (softmax over 4096 rows, AVX2: 2
/// channels 18 us against 26 us, 4 equal, 8 28 against 22, 24 175 against
/// 64; SSE2 and AVX-512 alike), hence the default of 8.
///   loops (r, c) [parallel, reduction], x[r, c] -> m[r]: left as is
///   (below 8 channels: (c, r), r innermost, as before).
std::unique_ptr<mlir::Pass> createInterchangeForVectorizationPass(int64_t minContiguousReduction = 8);
void populateInterchangeForVectorizationPatterns(mlir::RewritePatternSet &patterns,
                                                 int64_t minContiguousReduction = 8);

/// kiln-approximate-math (on func.func, before math is lowered to LLVM):
/// rewrites f32 math.exp and math.tanh (SOFTMAX, EXP, LOGISTIC, TANH) into
/// MLIR's polynomial approximations (populateMathPolynomialApproximation-
/// Patterns), plain arith ops that LLVM's loop vectorizer vectorizes along
/// channels. Without it LLVM has no vector exp: a vectorized loop called
/// expf once per lane. The approximations' math.fma become mulf + addf
/// (LLVM fuses them again where the CPU has FMA, never a libm fmaf call).
/// Measured against double precision over the float range: exp within
/// 1.9e-6 relative (5.7e-6 without FMA), tanh 3.1e-7; overflow to inf,
/// -inf to 0, NaN kept (with kiln-propagate-nan, which makes the input
/// clamps keep it); results below 1.2e-38 flush to 0. tanh is exactly +-1
/// for |x| >= 9 (a select: the approximation alone stops at 0.99999976,
/// also for +-inf). math.log stays
/// libm: its approximation reads a denormal input as 1.2e-38. Without FMA
/// (`target.fma` false: SSE2, SSE4) an op in a linalg op whose innermost
/// loop is shorter than the vector width (it stays scalar) keeps libm too:
/// there one approximation costs as much as expf or more.
///
/// Before: %e = math.exp %x : f32
/// After:  %k = math.floor (%x * log2(e)) ; %r = %x - %k * ln(2)
///         %p = polynomial in %r           ; arith.mulf/addf
///         %e = %p * bitcast((fptosi %k + 127) << 23)
///              selected to inf / 0 / %x for overflow, underflow, NaN
std::unique_ptr<mlir::Pass> createApproximateMathPass(const KernelTarget &target);
void populateApproximateMathPatterns(mlir::RewritePatternSet &patterns);

} // namespace kiln

#endif
