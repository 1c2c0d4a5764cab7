// RUN: kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-max-identity-neg-inf))' | FileCheck %s

// A max reduction's accumulator filled with -FLT_MAX (as TOSA lowers
// reduce_max) starts from -inf instead (0xFF800000), so a row of -inf
// reduces to -inf; a sum's accumulator is not a max identity and keeps its
// -FLT_MAX.

// CHECK-LABEL: func.func @reduce(
// CHECK-DAG:     %[[LOWEST:.*]] = arith.constant -3.40282347E+38 : f32
// CHECK-DAG:     %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         %[[F1:.*]] = linalg.fill ins(%[[NEGINF]] : f32)
// CHECK-NEXT:    linalg.generic {{.*}} outs(%[[F1]] : tensor<f32>)
// CHECK:           arith.maxf
// CHECK:         %[[F2:.*]] = linalg.fill ins(%[[LOWEST]] : f32)
// CHECK-NEXT:    linalg.generic {{.*}} outs(%[[F2]] : tensor<f32>)
// CHECK:           arith.addf
// CHECK-NOT:     linalg.fill
func.func @reduce(%x: tensor<16xf32>) -> (tensor<f32>, tensor<f32>) {
  %lowest = arith.constant -3.40282347E+38 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%lowest : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                       iterator_types = ["reduction"]} ins(%x : tensor<16xf32>) outs(%f : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maxf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %e2 = tensor.empty() : tensor<f32>
  %f2 = linalg.fill ins(%lowest : f32) outs(%e2 : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                       iterator_types = ["reduction"]} ins(%x : tensor<16xf32>) outs(%f2 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %m, %s : tensor<f32>, tensor<f32>
}
