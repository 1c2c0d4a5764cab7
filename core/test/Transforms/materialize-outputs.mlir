// RUN: kiln-opt %s --split-input-file --kiln-materialize-outputs | FileCheck %s

// Every result of @main gets a value of its own. Results: 0 the input
// itself and 1 a reshape of it (copied), 2 a splat constant (a fill), 3 a
// computed value (kept as it is), 4 the same computed value again and 5 a
// reshape of it (copied), 6 a non-splat constant (copied).

// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>)
// CHECK:         %[[VIEW:.*]] = tensor.collapse_shape %[[X]]
// CHECK:         %[[NEG:.*]] = linalg.generic
// CHECK:         %[[NEGVIEW:.*]] = tensor.collapse_shape %[[NEG]]
// CHECK:         %[[CST:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00]>
// CHECK:         %[[R0:.*]] = bufferization.alloc_tensor() copy(%[[X]])
// CHECK:         %[[R1:.*]] = bufferization.alloc_tensor() copy(%[[VIEW]])
// CHECK:         %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:         %[[R2:.*]] = linalg.fill ins(%[[ONE]] : f32)
// CHECK:         %[[R4:.*]] = bufferization.alloc_tensor() copy(%[[NEG]])
// CHECK:         %[[R5:.*]] = bufferization.alloc_tensor() copy(%[[NEGVIEW]])
// CHECK:         %[[R6:.*]] = bufferization.alloc_tensor() copy(%[[CST]])
// CHECK:         return %[[R0]], %[[R1]], %[[R2]], %[[NEG]], %[[R4]], %[[R5]], %[[R6]] :
func.func @main(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<6xf32>,
    tensor<3x2xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<6xf32>,
    tensor<2xf32>) {
  %v = tensor.collapse_shape %x [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %one = arith.constant dense<1.0> : tensor<3x2xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%a: f32, %b: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<2x3xf32>
  %nv = tensor.collapse_shape %n [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %c = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return %x, %v, %one, %n, %n, %nv, %c : tensor<2x3xf32>, tensor<6xf32>,
      tensor<3x2xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<6xf32>, tensor<2xf32>
}

// -----

// Nothing to do: a computed, distinct result stays untouched.

// CHECK-LABEL: func.func @main
// CHECK:         %[[NEG:.*]] = linalg.generic
// CHECK-NOT:     alloc_tensor
// CHECK-NOT:     linalg.fill
// CHECK:         return %[[NEG]] : tensor<4xf32>
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %n : tensor<4xf32>
}
