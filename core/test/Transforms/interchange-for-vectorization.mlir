// RUN: kiln-opt %s --split-input-file --mlir-print-local-scope --pass-pipeline='builtin.module(func.func(kiln-interchange-for-vectorization))' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --mlir-print-local-scope --pass-pipeline='builtin.module(func.func(kiln-interchange-for-vectorization-threshold{min-contiguous-reduction=32}))' | FileCheck %s --check-prefix=T32
// RUN: kiln-opt %s --split-input-file --mlir-print-local-scope --pass-pipeline='builtin.module(func.func(kiln-interchange-for-vectorization-threshold{min-contiguous-reduction=1}))' | FileCheck %s --check-prefix=T1

// The CHECK lines are the pass as the pipeline runs it (a contiguous
// reduction of at least 8 elements stays innermost), the T32 and T1 lines
// the pass with thresholds 32 and 1
// (kiln-interchange-for-vectorization-threshold).

// C(4x16) += A(4x8) * B(8x16) on buffers: loops (m, n, k) -> (m, k, n),
// so the innermost loop walks the output's last (contiguous) dimension.
// Still C += A * B on the same buffers, as a generic; the pass's
// bookkeeping attribute kiln.interchanged does not leak. At any threshold
// (the T1 run): A[m, k] is contiguous along the reduction k, but B[k, n] along the
// output's n, so the contraction keeps n innermost.

// CHECK-LABEL: func.func @mm(
// CHECK-SAME:    %[[A:.*]]: memref<4x8xf32>, %[[B:.*]]: memref<8x16xf32>, %[[C:.*]]: memref<4x16xf32>)
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[A]], %[[B]] : memref<4x8xf32>, memref<8x16xf32>) outs(%[[C]] : memref<4x16xf32>) {
// CHECK-NEXT:    ^bb0(%[[IA:.*]]: f32, %[[IB:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK-NEXT:      %[[P:.*]] = arith.mulf %[[IA]], %[[IB]] : f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[OUT]], %[[P]] : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    return
// CHECK-NOT:     kiln.interchanged
// CHECK-NOT:     linalg.matmul

// T1-LABEL:    func.func @mm(
// T1:            linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]
func.func @mm(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>)
                outs(%c : memref<4x16xf32>)
  return
}

// -----

// A 3x3 convolution on tensors, 8 output channels: (n, oh, ow, f, kh, kw,
// c) -> (n, oh, ow, kh, kw, c, f). The output [n, oh, ow, f] has f as the
// last loop, as does the filter [kh, kw, c, f]; the input is
// [n, oh + kh, ow + kw, c] (stride 1, dilation 1). The generic writes into
// the accumulator argument and is what the function returns.

// CHECK-LABEL: func.func @conv(
// CHECK-SAME:    %[[X:.*]]: tensor<1x6x6x3xf32>, %[[W:.*]]: tensor<3x3x3x8xf32>, %[[ACC:.*]]: tensor<1x4x4x8xf32>)
// CHECK-NEXT:    %[[R:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d3, d2 + d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%[[X]], %[[W]] : tensor<1x6x6x3xf32>, tensor<3x3x3x8xf32>) outs(%[[ACC]] : tensor<1x4x4x8xf32>) {
// CHECK:         } -> tensor<1x4x4x8xf32>
// CHECK-NEXT:    return %[[R]]
// CHECK-NOT:     linalg.conv_2d
func.func @conv(%x: tensor<1x6x6x3xf32>, %w: tensor<3x3x3x8xf32>,
                %acc: tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>,
                                 strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x6x6x3xf32>, tensor<3x3x3x8xf32>)
      outs(%acc : tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  return %c : tensor<1x4x4x8xf32>
}

// -----

// x * 2 on buffers: no reduction, nothing to interchange; the function
// is printed as it was.

// CHECK-LABEL: func.func @scale(
// CHECK-SAME:    %[[X:.*]]: memref<4x16xf32>, %[[Y:.*]]: memref<4x16xf32>) {
// CHECK-NEXT:    %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[X]] : memref<4x16xf32>) outs(%[[Y]] : memref<4x16xf32>) {
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[IN]], %[[TWO]] : f32
// CHECK-NEXT:      linalg.yield %[[M]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    return
// CHECK-NEXT:  }
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @scale(%x: memref<4x16xf32>, %y: memref<4x16xf32>) {
  %two = arith.constant 2.0 : f32
  linalg.generic {indexing_maps = [#id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x16xf32>) outs(%y : memref<4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %two : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// Softmax's row maximum over 24 channels on buffers, the output filled
// with the lowest float first (as TOSA lowers reduce_max), written
// rows-innermost: loops (c, r), out[r] = max(out[r], x[r, c]). 24 is at
// least 8: (c, r) -> (r, c), the channels innermost, a unit-stride
// reduction, x[r, c] -> m[r]. The combiner becomes the form LLVM 16
// vectorizes, with the same results: max nnan nsz(isnan(x) ? -inf : x,
// acc). Below a threshold of 32 (the T32 run) the rows stay innermost (one output
// vector across rows, the channels outside).

// CHECK-LABEL: func.func @rowmax_filled(
// CHECK-DAG:     %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG:     linalg.fill
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[NAN:.*]] = arith.cmpf uno, %[[IN]], %[[IN]] : f32
// CHECK-NEXT:      %[[X:.*]] = arith.select %[[NAN]], %[[NEGINF]], %[[IN]] : f32
// CHECK-NEXT:      %[[MAX:.*]] = arith.maxf %[[X]], %[[ACC]] fastmath<nnan,nsz> : f32
// CHECK-NEXT:      linalg.yield %[[MAX]] : f32

// T32-LABEL:   func.func @rowmax_filled(
// T32:           linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]}
func.func @rowmax_filled(%x: memref<64x24xf32>, %m: memref<64xf32>) {
  %lowest = arith.constant -3.40282347E+38 : f32
  linalg.fill ins(%lowest : f32) outs(%m : memref<64xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>,
                                   affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<64x24xf32>) outs(%m : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maxf %in, %out : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// The same maximum into a buffer nothing filled: it may hold a NaN, so
// the NaN-free combiner cannot be claimed, and a scalar max chain per row
// is slower than the rows in vectors: the rows go innermost, and the
// combiner stays a plain maxf (no select).

// CHECK-LABEL: func.func @rowmax_unfilled(
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]}
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[MAX:.*]] = arith.maxf %[[IN]], %[[ACC]] : f32
// CHECK-NEXT:      linalg.yield %[[MAX]] : f32
// CHECK-NOT:     arith.select
// CHECK:         return
func.func @rowmax_unfilled(%x: memref<64x24xf32>, %m: memref<64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x24xf32>) outs(%m : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maxf %in, %out : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A 1x1000 softmax's maximum, on tensors: one row, so every output
// dimension has size 1; the channel loop is innermost already and only the
// combiner changes, to max nnan nsz(isnan(x) ? -inf : x, acc).

// CHECK-LABEL: func.func @rowmax_one_row(
// CHECK-DAG:     %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG:     %[[FILLED:.*]] = linalg.fill
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<1x1000xf32>) outs(%[[FILLED]] : tensor<1xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[NAN:.*]] = arith.cmpf uno, %[[IN]], %[[IN]] : f32
// CHECK-NEXT:      %[[X:.*]] = arith.select %[[NAN]], %[[NEGINF]], %[[IN]] : f32
// CHECK-NEXT:      %[[MAX:.*]] = arith.maxf %[[X]], %[[ACC]] fastmath<nnan,nsz> : f32
// CHECK-NEXT:      linalg.yield %[[MAX]] : f32
func.func @rowmax_one_row(%x: tensor<1x1000xf32>, %init: tensor<1xf32>) -> tensor<1xf32> {
  %lowest = arith.constant -3.40282347E+38 : f32
  %filled = linalg.fill ins(%lowest : f32) outs(%init : tensor<1xf32>) -> tensor<1xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<1x1000xf32>) outs(%filled : tensor<1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maxf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<1xf32>
  return %m : tensor<1xf32>
}

// -----

// Softmax's sum of exp(x - max) over 24 channels as TOSA lowers it:
// loops (r, c), channels already innermost; max[r] is not walked by the
// reduction and must not pull the rows innermost: printed as it was.
// Below a threshold of 32 (the T32 run) it is interchanged to rows innermost.

// CHECK-LABEL: func.func @rowsum(
// CHECK-SAME:    %[[X:.*]]: tensor<64x24xf32>, %[[MAX:.*]]: tensor<64xf32>, %[[ACC:.*]]: tensor<64xf32>) -> tensor<64xf32> {
// CHECK-NEXT:    %[[R:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%[[X]], %[[MAX]] : tensor<64x24xf32>, tensor<64xf32>) outs(%[[ACC]] : tensor<64xf32>) {
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %[[M:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK-NEXT:      %[[D:.*]] = arith.subf %[[IN]], %[[M]] : f32
// CHECK-NEXT:      %[[E:.*]] = math.exp %[[D]] : f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[E]], %[[OUT]] : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
// CHECK-NEXT:    } -> tensor<64xf32>
// CHECK-NEXT:    return %[[R]] : tensor<64xf32>
// CHECK-NEXT:  }

// T32-LABEL:   func.func @rowsum(
// T32:           linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]}
func.func @rowsum(%x: tensor<64x24xf32>, %max: tensor<64xf32>,
                  %acc: tensor<64xf32>) -> tensor<64xf32> {
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0)>,
                                        affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x, %max : tensor<64x24xf32>, tensor<64xf32>) outs(%acc : tensor<64xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %d = arith.subf %in, %m : f32
    %e = math.exp %d : f32
    %r = arith.addf %e, %out : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  return %s : tensor<64xf32>
}

// -----

// The pipeline's threshold is 8 channels: below it the rows in vectors
// were as fast or faster (Passes.h). The same sum over 4 channels gets the
// rows innermost ...

// CHECK-LABEL: func.func @rowsum_4(
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]
func.func @rowsum_4(%x: tensor<64x4xf32>, %max: tensor<64xf32>,
                  %acc: tensor<64xf32>) -> tensor<64xf32> {
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0)>,
                                        affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x, %max : tensor<64x4xf32>, tensor<64xf32>) outs(%acc : tensor<64xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %d = arith.subf %in, %m : f32
    %e = math.exp %d : f32
    %r = arith.addf %e, %out : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  return %s : tensor<64xf32>
}

// -----

// ... over 8 channels it keeps the channels innermost.

// CHECK-LABEL: func.func @rowsum_8(
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
func.func @rowsum_8(%x: tensor<64x8xf32>, %max: tensor<64xf32>,
                  %acc: tensor<64xf32>) -> tensor<64xf32> {
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0)>,
                                        affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x, %max : tensor<64x8xf32>, tensor<64xf32>) outs(%acc : tensor<64xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %d = arith.subf %in, %m : f32
    %e = math.exp %d : f32
    %r = arith.addf %e, %out : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  return %s : tensor<64xf32>
}
