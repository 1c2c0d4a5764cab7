// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-sink-transposes))' | FileCheck %s

// What the ONNX importer emits for NCHW Conv -> BatchNormalization -> Clip
// -> Conv (1x1 convolutions, 2 -> 2 -> 1 channels, on a 1x2x2x2 input):
// each convolution between transposes to NHWC and back, the batch norm as a
// per-channel multiply and add of [1, C, 1, 1] constants. Only the input's
// transpose to NHWC and the output's back to NCHW are left; the batch norm
// folds into the first convolution: weight row o times scale[o] = [2, 0.5],
// bias b * scale + shift = [0.5 * 2 + 1, -0.5 * 0.5 - 2] = [2, -2.25].
// (ConvChainComputesTheSameThroughTheCompiler in tests/unit runs it.)

// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%[[X:.*]]: tensor<1x2x2x2xf32> {kiln.name = "x"})
// CHECK-NOT:     "tosa.transpose"
// CHECK-DAG:     %[[W1:.*]] = "tosa.const"() {value = dense<{{\[\[\[\[}}2.000000e+00, 4.000000e+00]]], {{\[\[\[}}1.500000e+00, -5.000000e-01]]]]> : tensor<2x1x1x2xf32>}
// CHECK-DAG:     %[[B1:.*]] = "tosa.const"() {value = dense<[2.000000e+00, -2.250000e+00]> : tensor<2xf32>}
// CHECK-DAG:     %[[TO_NHWC:.*]] = "tosa.const"() {value = dense<[0, 2, 3, 1]> : tensor<4xi32>}
// CHECK-DAG:     %[[TO_NCHW:.*]] = "tosa.const"() {value = dense<[0, 3, 1, 2]> : tensor<4xi32>}
// CHECK-DAG:     %[[W2:.*]] = "tosa.const"() {value = dense<1.000000e+00> : tensor<1x1x1x2xf32>}
// CHECK-DAG:     %[[B2:.*]] = "tosa.const"() {value = dense<0.000000e+00> : tensor<1xf32>}
// CHECK-NOT:     "tosa.{{transpose|mul|add}}"
// CHECK:         %[[IN:.*]] = "tosa.transpose"(%[[X]], %[[TO_NHWC]])
// CHECK-NEXT:    %[[CONV1:.*]] = "tosa.conv2d"(%[[IN]], %[[W1]], %[[B1]])
// CHECK-NEXT:    %[[CLAMP:.*]] = "tosa.clamp"(%[[CONV1]]) {{.*}} : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
// CHECK-NEXT:    %[[CONV2:.*]] = "tosa.conv2d"(%[[CLAMP]], %[[W2]], %[[B2]])
// CHECK-NEXT:    %[[OUT:.*]] = "tosa.transpose"(%[[CONV2]], %[[TO_NCHW]]) : (tensor<1x2x2x1xf32>, tensor<4xi32>) -> tensor<1x1x2x2xf32>
// CHECK-NEXT:    return %[[OUT]]
func.func @main(%x: tensor<1x2x2x2xf32> {kiln.name = "x"})
    -> (tensor<1x1x2x2xf32> {kiln.name = "y"}) {
  %to_nhwc = "tosa.const"() {value = dense<[0, 2, 3, 1]> : tensor<4xi32>} : () -> tensor<4xi32>
  %to_nchw = "tosa.const"() {value = dense<[0, 3, 1, 2]> : tensor<4xi32>} : () -> tensor<4xi32>
  %w1 = "tosa.const"() {value = dense<[[[[1.0, 2.0]]], [[[3.0, -1.0]]]]> : tensor<2x1x1x2xf32>} : () -> tensor<2x1x1x2xf32>
  %b1 = "tosa.const"() {value = dense<[0.5, -0.5]> : tensor<2xf32>} : () -> tensor<2xf32>
  %w2 = "tosa.const"() {value = dense<[[[[1.0, 1.0]]]]> : tensor<1x1x1x2xf32>} : () -> tensor<1x1x1x2xf32>
  %b2 = "tosa.const"() {value = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %scale = "tosa.const"() {value = dense<[[[[2.0]], [[0.5]]]]> : tensor<1x2x1x1xf32>} : () -> tensor<1x2x1x1xf32>
  %shift = "tosa.const"() {value = dense<[[[[1.0]], [[-2.0]]]]> : tensor<1x2x1x1xf32>} : () -> tensor<1x2x1x1xf32>
  %0 = "tosa.transpose"(%x, %to_nhwc) : (tensor<1x2x2x2xf32>, tensor<4xi32>) -> tensor<1x2x2x2xf32>
  %1 = "tosa.conv2d"(%0, %w1, %b1) {dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>}
      : (tensor<1x2x2x2xf32>, tensor<2x1x1x2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %2 = "tosa.transpose"(%1, %to_nchw) : (tensor<1x2x2x2xf32>, tensor<4xi32>) -> tensor<1x2x2x2xf32>
  %3 = "tosa.mul"(%2, %scale) {shift = 0 : i32} : (tensor<1x2x2x2xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x2x2xf32>
  %4 = "tosa.add"(%3, %shift) : (tensor<1x2x2x2xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x2x2xf32>
  %5 = "tosa.clamp"(%4) {min_fp = 0.0 : f32, max_fp = 6.0 : f32, min_int = 0 : i64, max_int = 6 : i64}
      : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %6 = "tosa.transpose"(%5, %to_nhwc) : (tensor<1x2x2x2xf32>, tensor<4xi32>) -> tensor<1x2x2x2xf32>
  %7 = "tosa.conv2d"(%6, %w2, %b2) {dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>}
      : (tensor<1x2x2x2xf32>, tensor<1x1x1x2xf32>, tensor<1xf32>) -> tensor<1x2x2x1xf32>
  %8 = "tosa.transpose"(%7, %to_nchw) : (tensor<1x2x2x1xf32>, tensor<4xi32>) -> tensor<1x1x2x2xf32>
  return %8 : tensor<1x1x2x2xf32>
}

// -----

// Two NCHW branches concatenated on channels, padded, reduced over H, fed
// to an NHWC consumer: no transpose is left. The concat moves to NHWC's
// channel dimension 3, the H padding [1, 2] to dimension 1, the reduction
// over C to dimension 3.

// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%[[A:.*]]: tensor<1x2x3x4xf32>, %[[B:.*]]: tensor<1x2x3x1xf32>)
// CHECK-NOT:     "tosa.transpose"
// CHECK:         %[[PADS:.*]] = "tosa.const"() {value = dense<{{\[\[}}0, 0], [1, 2], [0, 0], [0, 0]]> : tensor<4x2xi32>}
// CHECK-NOT:     "tosa.transpose"
// CHECK:         %[[CAT:.*]] = "tosa.concat"(%[[A]], %[[B]]) {axis = 3 : i64} : {{.*}} -> tensor<1x2x3x5xf32>
// CHECK-NEXT:    %[[PAD:.*]] = "tosa.pad"(%[[CAT]], %[[PADS]]) : {{.*}} -> tensor<1x5x3x5xf32>
// CHECK-NEXT:    %[[SUM:.*]] = "tosa.reduce_sum"(%[[PAD]]) {axis = 3 : i64} : {{.*}} -> tensor<1x5x3x1xf32>
// CHECK-NOT:     "tosa.transpose"
// CHECK:         return
func.func @main(%a: tensor<1x2x3x4xf32>, %b: tensor<1x2x3x1xf32>) -> tensor<1x1x6x3xf32> {
  %to_nchw = "tosa.const"() {value = dense<[0, 3, 1, 2]> : tensor<4xi32>} : () -> tensor<4xi32>
  %to_nhwc = "tosa.const"() {value = dense<[0, 2, 3, 1]> : tensor<4xi32>} : () -> tensor<4xi32>
  %pads = "tosa.const"() {value = dense<[[0, 0], [0, 0], [1, 2], [0, 0]]> : tensor<4x2xi32>} : () -> tensor<4x2xi32>
  %0 = "tosa.transpose"(%a, %to_nchw) : (tensor<1x2x3x4xf32>, tensor<4xi32>) -> tensor<1x4x2x3xf32>
  %1 = "tosa.transpose"(%b, %to_nchw) : (tensor<1x2x3x1xf32>, tensor<4xi32>) -> tensor<1x1x2x3xf32>
  %2 = "tosa.concat"(%0, %1) {axis = 1 : i64} : (tensor<1x4x2x3xf32>, tensor<1x1x2x3xf32>) -> tensor<1x5x2x3xf32>
  %3 = "tosa.pad"(%2, %pads) : (tensor<1x5x2x3xf32>, tensor<4x2xi32>) -> tensor<1x5x5x3xf32>
  %4 = "tosa.reduce_sum"(%3) {axis = 1 : i64} : (tensor<1x5x5x3xf32>) -> tensor<1x1x5x3xf32>
  %5 = "tosa.transpose"(%4, %to_nhwc) : (tensor<1x1x5x3xf32>, tensor<4xi32>) -> tensor<1x5x3x1xf32>
  %6 = "tosa.reshape"(%5) {new_shape = array<i64: 1, 1, 5, 3>} : (tensor<1x5x3x1xf32>) -> tensor<1x1x5x3xf32>
  %7 = "tosa.concat"(%6, %6) {axis = 2 : i64} : (tensor<1x1x5x3xf32>, tensor<1x1x5x3xf32>) -> tensor<1x1x10x3xf32>
  %8 = "tosa.slice"(%7) {start = array<i64: 0, 0, 0, 0>, size = array<i64: 1, 1, 6, 3>} : (tensor<1x1x10x3xf32>) -> tensor<1x1x6x3xf32>
  return %8 : tensor<1x1x6x3xf32>
}

// -----

// A transpose also returned as a model output stays where it is, and the
// elementwise op reading it does not get a copy of it: one transpose, read
// by the sigmoid and returned.

// CHECK-LABEL: func.func @main
// CHECK-NOT:     "tosa.transpose"
// CHECK:         %[[T:.*]] = "tosa.transpose"
// CHECK-NOT:     "tosa.transpose"
// CHECK:         %[[S:.*]] = "tosa.sigmoid"(%[[T]])
// CHECK-NOT:     "tosa.transpose"
// CHECK:         return %[[T]], %[[S]]
func.func @main(%x: tensor<1x2x3x4xf32>) -> (tensor<1x4x2x3xf32>, tensor<1x4x2x3xf32>) {
  %to_nchw = "tosa.const"() {value = dense<[0, 3, 1, 2]> : tensor<4xi32>} : () -> tensor<4xi32>
  %0 = "tosa.transpose"(%x, %to_nchw) : (tensor<1x2x3x4xf32>, tensor<4xi32>) -> tensor<1x4x2x3xf32>
  %1 = "tosa.sigmoid"(%0) : (tensor<1x4x2x3xf32>) -> tensor<1x4x2x3xf32>
  return %0, %1 : tensor<1x4x2x3xf32>, tensor<1x4x2x3xf32>
}

// -----

// A non-splat constant operand of an elementwise op is transposed at
// compile time, NCHW [1, 2, 1, 3] -> NHWC [1, 1, 3, 2]: c'[0, 0, w, c] =
// c[0, c, 0, w] = [1, 4, 2, 5, 3, 6]. The sub then reads the input, and the
// one transpose left follows it.

// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%[[X:.*]]: tensor<1x1x3x2xf32>)
// CHECK-NOT:     "tosa.transpose"
// CHECK-DAG:     %[[C:.*]] = "tosa.const"() {value = dense<{{\[\[\[\[}}1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]]]> : tensor<1x1x3x2xf32>}
// CHECK-DAG:     %[[TO_NCHW:.*]] = "tosa.const"() {value = dense<[0, 3, 1, 2]> : tensor<4xi32>}
// CHECK-NOT:     "tosa.transpose"
// CHECK:         %[[SUB:.*]] = "tosa.sub"(%[[C]], %[[X]])
// CHECK-NEXT:    %[[OUT:.*]] = "tosa.transpose"(%[[SUB]], %[[TO_NCHW]])
// CHECK-NEXT:    return %[[OUT]]
func.func @main(%x: tensor<1x1x3x2xf32>) -> tensor<1x2x1x3xf32> {
  %to_nchw = "tosa.const"() {value = dense<[0, 3, 1, 2]> : tensor<4xi32>} : () -> tensor<4xi32>
  %c = "tosa.const"() {value = dense<[[[[1.0, 2.0, 3.0]], [[4.0, 5.0, 6.0]]]]> : tensor<1x2x1x3xf32>} : () -> tensor<1x2x1x3xf32>
  %0 = "tosa.transpose"(%x, %to_nchw) : (tensor<1x1x3x2xf32>, tensor<4xi32>) -> tensor<1x2x1x3xf32>
  %1 = "tosa.sub"(%c, %0) : (tensor<1x2x1x3xf32>, tensor<1x2x1x3xf32>) -> tensor<1x2x1x3xf32>
  return %1 : tensor<1x2x1x3xf32>
}

// -----

// A depthwise convolution (C = 2, multiplier 2: 4 output channels) with a
// per-channel scale and shift after it: both fold into it. Weight
// [0, 0, c, m] is output channel 2c + m, times [1, 2, 3, 4]; bias
// [1, 2, 3, 4] * [1, 2, 3, 4] - 0.5.

// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%[[X:.*]]: tensor<1x3x3x2xf32>)
// CHECK-DAG:     %[[W:.*]] = "tosa.const"() {value = dense<{{\[\[\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]]]> : tensor<1x1x2x2xf32>}
// CHECK-DAG:     %[[B:.*]] = "tosa.const"() {value = dense<[5.000000e-01, 3.500000e+00, 8.500000e+00, 1.550000e+01]> : tensor<4xf32>}
// CHECK-NOT:     "tosa.{{mul|sub}}"
// CHECK:         %[[CONV:.*]] = "tosa.depthwise_conv2d"(%[[X]], %[[W]], %[[B]])
// CHECK-NEXT:    return %[[CONV]]
func.func @main(%x: tensor<1x3x3x2xf32>) -> tensor<1x3x3x4xf32> {
  %w = "tosa.const"() {value = dense<1.0> : tensor<1x1x2x2xf32>} : () -> tensor<1x1x2x2xf32>
  %b = "tosa.const"() {value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %s = "tosa.const"() {value = dense<[[[[1.0, 2.0, 3.0, 4.0]]]]> : tensor<1x1x1x4xf32>} : () -> tensor<1x1x1x4xf32>
  %t = "tosa.const"() {value = dense<0.5> : tensor<1x1x1x1xf32>} : () -> tensor<1x1x1x1xf32>
  %0 = "tosa.depthwise_conv2d"(%x, %w, %b) {dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>}
      : (tensor<1x3x3x2xf32>, tensor<1x1x2x2xf32>, tensor<4xf32>) -> tensor<1x3x3x4xf32>
  %1 = "tosa.mul"(%s, %0) {shift = 0 : i32} : (tensor<1x1x1x4xf32>, tensor<1x3x3x4xf32>) -> tensor<1x3x3x4xf32>
  %2 = "tosa.sub"(%1, %t) : (tensor<1x3x3x4xf32>, tensor<1x1x1x1xf32>) -> tensor<1x3x3x4xf32>
  return %2 : tensor<1x3x3x4xf32>
}

// -----

// A convolution result read twice (the batch norm and a residual add)
// keeps its weights (2.0): folding would change the other reader's value.
// The one multiply and the one add stay.

// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%[[X:.*]]: tensor<1x2x2x1xf32>)
// CHECK:         %[[W:.*]] = "tosa.const"() {value = dense<2.000000e+00> : tensor<1x1x1x1xf32>}
// CHECK:         %[[B:.*]] = "tosa.const"() {value = dense<0.000000e+00> : tensor<1xf32>}
// CHECK:         %[[S:.*]] = "tosa.const"() {value = dense<3.000000e+00> : tensor<1x1x1x1xf32>}
// CHECK-NEXT:    %[[CONV:.*]] = "tosa.conv2d"(%[[X]], %[[W]], %[[B]])
// CHECK-NEXT:    %[[MUL:.*]] = "tosa.mul"(%[[CONV]], %[[S]])
// CHECK-NEXT:    %[[ADD:.*]] = "tosa.add"(%[[MUL]], %[[CONV]])
// CHECK-NEXT:    return %[[ADD]]
func.func @main(%x: tensor<1x2x2x1xf32>) -> tensor<1x2x2x1xf32> {
  %w = "tosa.const"() {value = dense<2.0> : tensor<1x1x1x1xf32>} : () -> tensor<1x1x1x1xf32>
  %b = "tosa.const"() {value = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %s = "tosa.const"() {value = dense<3.0> : tensor<1x1x1x1xf32>} : () -> tensor<1x1x1x1xf32>
  %0 = "tosa.conv2d"(%x, %w, %b) {dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>}
      : (tensor<1x2x2x1xf32>, tensor<1x1x1x1xf32>, tensor<1xf32>) -> tensor<1x2x2x1xf32>
  %1 = "tosa.mul"(%0, %s) {shift = 0 : i32} : (tensor<1x2x2x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x2x2x1xf32>
  %2 = "tosa.add"(%1, %0) : (tensor<1x2x2x1xf32>, tensor<1x2x2x1xf32>) -> tensor<1x2x2x1xf32>
  return %2 : tensor<1x2x2x1xf32>
}
