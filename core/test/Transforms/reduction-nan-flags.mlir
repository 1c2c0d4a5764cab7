// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-reduction-nan-flags))' | FileCheck %s

// An f32 reduce_max that is a result gets a NaN flag per row: x == x as
// 0.0 or 1.0, its reduce_min 0 where the row holds a NaN, and a select of
// NaN there over the maximum, which the function then returns.

// CHECK-LABEL: func.func @max(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<4x8xf32>)
// CHECK-NEXT:    %[[MAX:.*]] = "tosa.reduce_max"(%[[X]]) {axis = 1 : i64}
// CHECK-NEXT:    %[[ORDERED:.*]] = "tosa.equal"(%[[X]], %[[X]])
// CHECK-NEXT:    %[[AS_F32:.*]] = "tosa.cast"(%[[ORDERED]])
// CHECK-NEXT:    %[[ALL:.*]] = "tosa.reduce_min"(%[[AS_F32]]) {axis = 1 : i64}
// CHECK-NEXT:    %[[ZERO:.*]] = "tosa.const"() {value = dense<0.000000e+00> : tensor<1x1xf32>}
// CHECK-NEXT:    %[[HAS_NAN:.*]] = "tosa.equal"(%[[ALL]], %[[ZERO]])
// CHECK-NEXT:    %[[NAN:.*]] = "tosa.const"() {value = dense<0x7FC00000> : tensor<1x1xf32>}
// CHECK-NEXT:    %[[R:.*]] = "tosa.select"(%[[HAS_NAN]], %[[NAN]], %[[MAX]])
// CHECK-NEXT:    return %[[R]]
func.func @max(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %m = "tosa.reduce_max"(%x) {axis = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  return %m : tensor<4x1xf32>
}

// -----

// A softmax's maximum (subtracted from its input) gets none: no
// reduce_min, no select.

// CHECK-LABEL: func.func @softmax_max(
// CHECK-NEXT:    "tosa.reduce_max"
// CHECK-NEXT:    "tosa.sub"
// CHECK-NEXT:    return
func.func @softmax_max(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = "tosa.reduce_max"(%x) {axis = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %d = "tosa.sub"(%x, %m) : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %d : tensor<4x8xf32>
}
