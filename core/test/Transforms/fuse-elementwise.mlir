// RUN: kiln-opt %s --split-input-file --mlir-print-debuginfo --mlir-print-local-scope --pass-pipeline='builtin.module(func.func(kiln-fuse-elementwise))' | FileCheck %s

// x + y, then relu: two elementwise generics on the same 4x8 iteration
// space, the add's only user is the relu. They fuse into one generic
// computing max(x + y, 0), with x and y its only inputs and its result what
// @main returns; its location is a FusedLoc naming both source operators
// once.

// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%[[X:[^:]*]]: tensor<4x8xf32> {{.*}}, %[[Y:[^:]*]]: tensor<4x8xf32>
// CHECK-NOT:     linalg.generic
// CHECK:         %[[FUSED:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[Y]] : tensor<4x8xf32>, tensor<4x8xf32>) outs(
// CHECK-NEXT:    ^bb0(%[[A:[^:]*]]: f32 {{.*}}, %[[B:[^:]*]]: f32 {{.*}}, %{{[^:]*}}: f32
// CHECK-NEXT:      %[[SUM:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK-NEXT:      %[[MAX:.*]] = arith.maxf %[[SUM]], %{{.*}} : f32
// CHECK-NEXT:      linalg.yield %[[MAX]] : f32
// CHECK-NEXT:    } -> tensor<4x8xf32> loc(fused["ADD#1", "RELU#2"])
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[FUSED]] : tensor<4x8xf32>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<4x8xf32>, tensor<4x8xf32>)
      outs(%e0 : tensor<4x8xf32>) {
  ^bb0(%in0: f32, %in1: f32, %out: f32):
    %s = arith.addf %in0, %in1 : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32> loc("ADD#1")
  %e1 = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xf32>)
      outs(%e1 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maxf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32> loc("RELU#2")
  return %r : tensor<4x8xf32>
}

// -----

// A 2x3 constant transposed by a linalg.generic into 3x2 (out[i][j] =
// in[j][i], the input read through (d0, d1) -> (d1, d0)) folds to the
// transposed constant [[1, 4], [2, 5], [3, 6]]; no generic is left.

// CHECK-LABEL: func.func @main
// CHECK-NOT:     linalg.generic
// CHECK:         %[[CST:.*]] = arith.constant dense<{{\[\[}}1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// CHECK-NEXT:    return %[[CST]] : tensor<3x2xf32>
func.func @main() -> tensor<3x2xf32> {
  %w = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %e = tensor.empty() : tensor<3x2xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>,
                                        affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<2x3xf32>) outs(%e : tensor<3x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<3x2xf32> loc("TRANSPOSE#0")
  return %t : tensor<3x2xf32>
}
