// RUN: kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-exact-avg-pool-divisors))' | FileCheck %s

// kiln-exact-avg-pool-divisors: a f32 avg_pool2d with a stride above 1 and
// a pad of 2 or more becomes a zero pad, an unpadded pool (dividing by
// KH * KW) and a multiply by KH * KW / count. The multipliers below are
// computed by hand from the windows, not from the pass.

// One axis: kernel 3, stride 2, pads 1 and 2 on 8 elements gives 5 windows
// starting at -1, 1, 3, 5, 7; inside the input they hold 2, 3, 3, 3, 1
// elements, so the multipliers are 3/2, 1, 1, 1, 3.

// CHECK-LABEL: func.func @row(
// CHECK:         %[[PADS:.*]] = "tosa.const"() {value = dense<{{\[\[}}0, 0], [0, 0], [1, 2], [0, 0]]> : tensor<4x2xi32>}
// CHECK:         %[[PADDED:.*]] = "tosa.pad"(%arg0, %[[PADS]]) : (tensor<1x1x8x1xf32>, tensor<4x2xi32>) -> tensor<1x1x11x1xf32>
// CHECK:         %[[POOL:.*]] = "tosa.avg_pool2d"(%[[PADDED]]) {kernel = array<i64: 1, 3>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 2>}
// CHECK:         %[[SCALE:.*]] = "tosa.const"() {value = dense<{{\[\[\[\[}}1.500000e+00], [1.000000e+00], [1.000000e+00], [1.000000e+00], [3.000000e+00]]]]>
// CHECK:         %[[OUT:.*]] = "tosa.mul"(%[[POOL]], %[[SCALE]]) {shift = 0 : i32}
// CHECK:         return %[[OUT]]
func.func @row(%x: tensor<1x1x8x1xf32>) -> tensor<1x1x5x1xf32> {
  %y = "tosa.avg_pool2d"(%x) {kernel = array<i64: 1, 3>, stride = array<i64: 1, 2>, pad = array<i64: 0, 0, 1, 2>} : (tensor<1x1x8x1xf32>) -> tensor<1x1x5x1xf32>
  return %y : tensor<1x1x5x1xf32>
}

// Both axes alike: counts 2, 3, 3, 3, 1 on each, so the multiplier of
// window (h, w) is 9 / (count_h * count_w): 9/4 in the corner, 9/6 along
// the first row, 9/2 at its end, 9 at the last corner.

// CHECK-LABEL: func.func @square(
// CHECK:         "tosa.const"() {value = dense<{{\[\[\[\[}}2.250000e+00], [1.500000e+00], [1.500000e+00], [1.500000e+00], [4.500000e+00]], {{\[\[}}1.500000e+00], [1.000000e+00], [1.000000e+00], [1.000000e+00], [3.000000e+00]],
// CHECK-SAME:    {{\[\[}}4.500000e+00], [3.000000e+00], [3.000000e+00], [3.000000e+00], [9.000000e+00]]]]> : tensor<1x5x5x1xf32>}
// CHECK:         "tosa.mul"
func.func @square(%x: tensor<1x8x8x1xf32>) -> tensor<1x5x5x1xf32> {
  %y = "tosa.avg_pool2d"(%x) {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, pad = array<i64: 1, 2, 1, 2>} : (tensor<1x8x8x1xf32>) -> tensor<1x5x5x1xf32>
  return %y : tensor<1x5x5x1xf32>
}

// Stride 1 with pads of 1 (MLIR's lowering is right there) and stride 2
// with pads of at most 1 are left alone.

// CHECK-LABEL: func.func @stride1(
// CHECK-NOT:     tosa.pad
// CHECK:         "tosa.avg_pool2d"(%arg0) {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>}
// CHECK-NOT:     tosa.mul
// CHECK:         return
func.func @stride1(%x: tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32> {
  %y = "tosa.avg_pool2d"(%x) {kernel = array<i64: 3, 3>, stride = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
  return %y : tensor<1x8x8x4xf32>
}

// CHECK-LABEL: func.func @smallpads(
// CHECK-NOT:     tosa.pad
// CHECK:         "tosa.avg_pool2d"(%arg0) {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 2, 2>}
// CHECK-NOT:     tosa.mul
// CHECK:         return
func.func @smallpads(%x: tensor<1x9x9x4xf32>) -> tensor<1x5x5x4xf32> {
  %y = "tosa.avg_pool2d"(%x) {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>} : (tensor<1x9x9x4xf32>) -> tensor<1x5x5x4xf32>
  return %y : tensor<1x5x5x4xf32>
}
