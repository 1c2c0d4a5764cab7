// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-drop-zero-points))' | FileCheck %s

// Each quantized named op whose zero points are both the constant 0
// becomes its plain named op: the same two inputs, the same output and
// result type, and strides [2, 3] and dilations [3, 2] (different per axis,
// so a swap shows: 3x3 windows over 9 x 8 inputs give 2 x 2 outputs)
// carried over. kiln-opt verifies the result (the new ops' operand segment
// sizes are their own). A nonzero or run-time zero point leaves the op
// alone. End to end (compiled and run): tests/unit/DropZeroPointsTest.cpp.

// CHECK-LABEL: func.func @mm(
// CHECK-SAME:    %[[A:.*]]: tensor<4x8xi8>, %[[B:.*]]: tensor<8x16xi8>, %[[ACC:.*]]: tensor<4x16xi32>)
// CHECK-NEXT:    %[[R:.*]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<4x8xi8>, tensor<8x16xi8>) outs(%[[ACC]] : tensor<4x16xi32>) -> tensor<4x16xi32>
// CHECK-NEXT:    return %[[R]]
func.func @mm(%a: tensor<4x8xi8>, %b: tensor<8x16xi8>, %acc: tensor<4x16xi32>) -> tensor<4x16xi32> {
  %z = arith.constant 0 : i32
  %r = linalg.quantized_matmul ins(%a, %b, %z, %z : tensor<4x8xi8>, tensor<8x16xi8>, i32, i32)
         outs(%acc : tensor<4x16xi32>) -> tensor<4x16xi32>
  return %r : tensor<4x16xi32>
}

// -----

// CHECK-LABEL: func.func @bmm(
// CHECK-SAME:    %[[A:.*]]: tensor<2x4x8xi8>, %[[B:.*]]: tensor<2x8x16xi8>, %[[ACC:.*]]: tensor<2x4x16xi32>)
// CHECK-NEXT:    %[[R:.*]] = linalg.batch_matmul ins(%[[A]], %[[B]] : tensor<2x4x8xi8>, tensor<2x8x16xi8>) outs(%[[ACC]] : tensor<2x4x16xi32>) -> tensor<2x4x16xi32>
// CHECK-NEXT:    return %[[R]]
func.func @bmm(%a: tensor<2x4x8xi8>, %b: tensor<2x8x16xi8>, %acc: tensor<2x4x16xi32>) -> tensor<2x4x16xi32> {
  %z = arith.constant 0 : i32
  %r = linalg.quantized_batch_matmul ins(%a, %b, %z, %z : tensor<2x4x8xi8>, tensor<2x8x16xi8>, i32, i32)
         outs(%acc : tensor<2x4x16xi32>) -> tensor<2x4x16xi32>
  return %r : tensor<2x4x16xi32>
}

// -----

// CHECK-LABEL: func.func @conv(
// CHECK-SAME:    %[[X:.*]]: tensor<1x9x8x3xi8>, %[[W:.*]]: tensor<3x3x3x4xi8>, %[[ACC:.*]]: tensor<1x2x2x4xi32>)
// CHECK-NEXT:    %[[R:.*]] = linalg.conv_2d_nhwc_hwcf {dilations = dense<[3, 2]> : tensor<2xi64>, strides = dense<[2, 3]> : tensor<2xi64>} ins(%[[X]], %[[W]] : tensor<1x9x8x3xi8>, tensor<3x3x3x4xi8>) outs(%[[ACC]] : tensor<1x2x2x4xi32>) -> tensor<1x2x2x4xi32>
// CHECK-NEXT:    return %[[R]]
func.func @conv(%x: tensor<1x9x8x3xi8>, %w: tensor<3x3x3x4xi8>, %acc: tensor<1x2x2x4xi32>) -> tensor<1x2x2x4xi32> {
  %z = arith.constant 0 : i32
  %r = linalg.conv_2d_nhwc_hwcf_q {dilations = dense<[3, 2]> : tensor<2xi64>, strides = dense<[2, 3]> : tensor<2xi64>}
         ins(%x, %w, %z, %z : tensor<1x9x8x3xi8>, tensor<3x3x3x4xi8>, i32, i32)
         outs(%acc : tensor<1x2x2x4xi32>) -> tensor<1x2x2x4xi32>
  return %r : tensor<1x2x2x4xi32>
}

// -----

// CHECK-LABEL: func.func @dw(
// CHECK-SAME:    %[[X:.*]]: tensor<1x9x8x3xi8>, %[[W:.*]]: tensor<3x3x3x2xi8>, %[[ACC:.*]]: tensor<1x2x2x3x2xi32>)
// CHECK-NEXT:    %[[R:.*]] = linalg.depthwise_conv_2d_nhwc_hwcm {dilations = dense<[3, 2]> : tensor<2xi64>, strides = dense<[2, 3]> : tensor<2xi64>} ins(%[[X]], %[[W]] : tensor<1x9x8x3xi8>, tensor<3x3x3x2xi8>) outs(%[[ACC]] : tensor<1x2x2x3x2xi32>) -> tensor<1x2x2x3x2xi32>
// CHECK-NEXT:    return %[[R]]
func.func @dw(%x: tensor<1x9x8x3xi8>, %w: tensor<3x3x3x2xi8>, %acc: tensor<1x2x2x3x2xi32>) -> tensor<1x2x2x3x2xi32> {
  %z = arith.constant 0 : i32
  %r = linalg.depthwise_conv_2d_nhwc_hwcm_q {dilations = dense<[3, 2]> : tensor<2xi64>, strides = dense<[2, 3]> : tensor<2xi64>}
         ins(%x, %w, %z, %z : tensor<1x9x8x3xi8>, tensor<3x3x3x2xi8>, i32, i32)
         outs(%acc : tensor<1x2x2x3x2xi32>) -> tensor<1x2x2x3x2xi32>
  return %r : tensor<1x2x2x3x2xi32>
}

// -----

// The input's zero point is 3: the quantized matmul stays, with its four
// inputs.

// CHECK-LABEL: func.func @mm_input_zp(
// CHECK-SAME:    %[[A:.*]]: tensor<4x8xi8>, %[[B:.*]]: tensor<8x16xi8>, %[[ACC:.*]]: tensor<4x16xi32>)
// CHECK-DAG:     %[[Z:.*]] = arith.constant 0 : i32
// CHECK-DAG:     %[[THREE:.*]] = arith.constant 3 : i32
// CHECK:         linalg.quantized_matmul ins(%[[A]], %[[B]], %[[THREE]], %[[Z]] : {{.*}}) outs(%[[ACC]] :
// CHECK-NEXT:    return
func.func @mm_input_zp(%a: tensor<4x8xi8>, %b: tensor<8x16xi8>, %acc: tensor<4x16xi32>) -> tensor<4x16xi32> {
  %z = arith.constant 0 : i32
  %three = arith.constant 3 : i32
  %r = linalg.quantized_matmul ins(%a, %b, %three, %z : tensor<4x8xi8>, tensor<8x16xi8>, i32, i32)
         outs(%acc : tensor<4x16xi32>) -> tensor<4x16xi32>
  return %r : tensor<4x16xi32>
}

// -----

// The weights' zero point is -1: the quantized batch matmul stays.

// CHECK-LABEL: func.func @bmm_weight_zp(
// CHECK-SAME:    %[[A:.*]]: tensor<2x4x8xi8>, %[[B:.*]]: tensor<2x8x16xi8>, %[[ACC:.*]]: tensor<2x4x16xi32>)
// CHECK-DAG:     %[[Z:.*]] = arith.constant 0 : i32
// CHECK-DAG:     %[[M1:.*]] = arith.constant -1 : i32
// CHECK:         linalg.quantized_batch_matmul ins(%[[A]], %[[B]], %[[Z]], %[[M1]] : {{.*}}) outs(%[[ACC]] :
// CHECK-NEXT:    return
func.func @bmm_weight_zp(%a: tensor<2x4x8xi8>, %b: tensor<2x8x16xi8>, %acc: tensor<2x4x16xi32>) -> tensor<2x4x16xi32> {
  %z = arith.constant 0 : i32
  %m1 = arith.constant -1 : i32
  %r = linalg.quantized_batch_matmul ins(%a, %b, %z, %m1 : tensor<2x4x8xi8>, tensor<2x8x16xi8>, i32, i32)
         outs(%acc : tensor<2x4x16xi32>) -> tensor<2x4x16xi32>
  return %r : tensor<2x4x16xi32>
}

// -----

// The input's zero point is a run-time value: the quantized convolution
// stays.

// CHECK-LABEL: func.func @conv_runtime_zp(
// CHECK-SAME:    %[[X:.*]]: tensor<1x9x8x3xi8>, %[[W:.*]]: tensor<3x3x3x4xi8>, %[[ACC:.*]]: tensor<1x2x2x4xi32>, %[[ZP:.*]]: i32)
// CHECK:         %[[Z:.*]] = arith.constant 0 : i32
// CHECK:         linalg.conv_2d_nhwc_hwcf_q {{.*}} ins(%[[X]], %[[W]], %[[ZP]], %[[Z]] : {{.*}}) outs(%[[ACC]] :
// CHECK-NEXT:    return
func.func @conv_runtime_zp(%x: tensor<1x9x8x3xi8>, %w: tensor<3x3x3x4xi8>, %acc: tensor<1x2x2x4xi32>,
                           %zp: i32) -> tensor<1x2x2x4xi32> {
  %z = arith.constant 0 : i32
  %r = linalg.conv_2d_nhwc_hwcf_q {dilations = dense<[3, 2]> : tensor<2xi64>, strides = dense<[2, 3]> : tensor<2xi64>}
         ins(%x, %w, %zp, %z : tensor<1x9x8x3xi8>, tensor<3x3x3x4xi8>, i32, i32)
         outs(%acc : tensor<1x2x2x4xi32>) -> tensor<1x2x2x4xi32>
  return %r : tensor<1x2x2x4xi32>
}

// -----

// The weights' zero point is 5: the quantized depthwise convolution stays.

// CHECK-LABEL: func.func @dw_weight_zp(
// CHECK-SAME:    %[[X:.*]]: tensor<1x9x8x3xi8>, %[[W:.*]]: tensor<3x3x3x2xi8>, %[[ACC:.*]]: tensor<1x2x2x3x2xi32>)
// CHECK-DAG:     %[[Z:.*]] = arith.constant 0 : i32
// CHECK-DAG:     %[[FIVE:.*]] = arith.constant 5 : i32
// CHECK:         linalg.depthwise_conv_2d_nhwc_hwcm_q {{.*}} ins(%[[X]], %[[W]], %[[Z]], %[[FIVE]] : {{.*}}) outs(%[[ACC]] :
// CHECK-NEXT:    return
func.func @dw_weight_zp(%x: tensor<1x9x8x3xi8>, %w: tensor<3x3x3x2xi8>, %acc: tensor<1x2x2x3x2xi32>) -> tensor<1x2x2x3x2xi32> {
  %z = arith.constant 0 : i32
  %five = arith.constant 5 : i32
  %r = linalg.depthwise_conv_2d_nhwc_hwcm_q {dilations = dense<[3, 2]> : tensor<2xi64>, strides = dense<[2, 3]> : tensor<2xi64>}
         ins(%x, %w, %z, %five : tensor<1x9x8x3xi8>, tensor<3x3x3x2xi8>, i32, i32)
         outs(%acc : tensor<1x2x2x3x2xi32>) -> tensor<1x2x2x3x2xi32>
  return %r : tensor<1x2x2x3x2xi32>
}
