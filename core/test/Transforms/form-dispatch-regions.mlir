// RUN: kiln-opt %s --split-input-file --kiln-form-dispatch-regions | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-fusion=false --kiln-form-dispatch-regions | FileCheck %s --check-prefix=NOFUSE
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(kiln-form-dispatch-regions-with{no-fusion=0})' | FileCheck %s --check-prefix=NOFUSE
// RUN: not kiln-opt %s --split-input-file --pass-pipeline='builtin.module(kiln-form-dispatch-regions-with{no-fusion=1})' 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not kiln-opt %s --split-input-file --pass-pipeline='builtin.module(kiln-form-dispatch-regions-with{no-fusion=-1})' 2>&1 | FileCheck %s --check-prefix=NEGATIVE

// Every op of @main that launches work gets kiln.dispatch = its dispatch
// id; constants, empty tensors, reshapes and the return get none (the
// {{$}} after them: nothing follows their type). The CHECK lines are with
// fusion (the default); the NOFUSE lines with --kiln-fusion=false, or with
// no fusion into dispatch 0 alone (kiln compile --no-fusion 0), which
// splits this model the same way. A --no-fusion naming a dispatch that
// does not exist fails (the MISSING and NEGATIVE runs).

// MISSING:  error: --no-fusion names dispatch 1, which does not exist (1 dispatches, ids 0 to 0
// NEGATIVE: error: --no-fusion names dispatch -1, which does not exist

// pad (SAME padding of a 3x3 window) -> conv with a zero-filled
// accumulator -> bias + relu. With fusion, pad, fill, conv and generic form
// one dispatch, 0.

// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32{{$}}
// CHECK-NEXT:    %[[PAD:.*]] = tensor.pad
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      tensor.yield %[[ZERO]] : f32
// CHECK-NEXT:    } {kiln.dispatch = 0 : i64} : tensor<1x8x8x3xf32> to tensor<1x10x10x3xf32>
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<1x8x8x4xf32>{{$}}
// CHECK-NEXT:    %[[FILL:.*]] = linalg.fill {kiln.dispatch = 0 : i64} ins(%[[ZERO]] : f32) outs(%[[E]] :
// CHECK-NEXT:    %[[CONV:.*]] = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, kiln.dispatch = 0 : i64, strides = dense<1> : tensor<2xi64>} ins(%[[PAD]], %{{.*}}) outs(%[[FILL]] :
// CHECK-NEXT:    %[[E2:.*]] = tensor.empty() : tensor<1x8x8x4xf32>{{$}}
// CHECK-NEXT:    %[[RELU:.*]] = linalg.generic {{.*}} ins(%[[CONV]], %{{.*}}) outs(%[[E2]] : tensor<1x8x8x4xf32>) attrs =  {kiln.dispatch = 0 : i64} {
// CHECK:         } -> tensor<1x8x8x4xf32>{{$}}
// CHECK-NEXT:    return %[[RELU]] : tensor<1x8x8x4xf32>{{$}}

// Without fusion the roots are numbered in program order, conv = 0 and
// generic = 1; the fill always joins its root; the pad is left over and
// numbered after every root: 2.

// NOFUSE-LABEL: func.func @main
// NOFUSE-NEXT:    arith.constant 0.000000e+00 : f32{{$}}
// NOFUSE-NEXT:    tensor.pad
// NOFUSE-NEXT:    ^bb0
// NOFUSE-NEXT:      tensor.yield
// NOFUSE-NEXT:    } {kiln.dispatch = 2 : i64} : tensor<1x8x8x3xf32> to tensor<1x10x10x3xf32>
// NOFUSE-NEXT:    tensor.empty() : tensor<1x8x8x4xf32>{{$}}
// NOFUSE-NEXT:    linalg.fill {kiln.dispatch = 0 : i64}
// NOFUSE-NEXT:    linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, kiln.dispatch = 0 : i64, strides = dense<1> : tensor<2xi64>}
// NOFUSE-NEXT:    tensor.empty() : tensor<1x8x8x4xf32>{{$}}
// NOFUSE-NEXT:    linalg.generic {{.*}} attrs =  {kiln.dispatch = 1 : i64} {
// NOFUSE:         } -> tensor<1x8x8x4xf32>{{$}}
// NOFUSE-NEXT:    return %{{.*}} : tensor<1x8x8x4xf32>{{$}}
#nhwc = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#chan = affine_map<(d0, d1, d2, d3) -> (d3)>
func.func @main(%x: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x4xf32>,
                %bias: tensor<4xf32>) -> tensor<1x8x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<1x8x8x3xf32> to tensor<1x10x10x3xf32>
  %e = tensor.empty() : tensor<1x8x8x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>,
                                 strides = dense<1> : tensor<2xi64>}
      ins(%p, %w : tensor<1x10x10x3xf32>, tensor<3x3x3x4xf32>)
      outs(%f : tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
  %e2 = tensor.empty() : tensor<1x8x8x4xf32>
  %r = linalg.generic {indexing_maps = [#nhwc, #chan, #nhwc],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c, %bias : tensor<1x8x8x4xf32>, tensor<4xf32>)
      outs(%e2 : tensor<1x8x8x4xf32>) {
  ^bb0(%in: f32, %b: f32, %out: f32):
    %s = arith.addf %in, %b : f32
    %m = arith.maxf %s, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x8x8x4xf32>
  return %r : tensor<1x8x8x4xf32>
}

// -----

// A 1x1 convolution written as collapse -> matmul (dense weights) ->
// expand: the fill and the matmul are dispatch 0; the two constants, the
// reshapes and the empty tensor get no dispatch.

// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %[[W:.*]] = arith.constant dense<{{.*}}> : tensor<8x2xf32>{{$}}
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32{{$}}
// CHECK-NEXT:    %[[C:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1, 2], [3]] : tensor<1x4x4x8xf32> into tensor<16x8xf32>{{$}}
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<16x2xf32>{{$}}
// CHECK-NEXT:    %[[F:.*]] = linalg.fill {kiln.dispatch = 0 : i64} ins(%[[ZERO]] : f32) outs(%[[E]] :
// CHECK-NEXT:    %[[M:.*]] = linalg.matmul {kiln.dispatch = 0 : i64} ins(%[[C]], %[[W]] : {{.*}}) outs(%[[F]] :
// CHECK-NEXT:    %[[R:.*]] = tensor.expand_shape %[[M]] {{\[\[}}0, 1, 2], [3]] : tensor<16x2xf32> into tensor<1x4x4x2xf32>{{$}}
// CHECK-NEXT:    return %[[R]] : tensor<1x4x4x2xf32>{{$}}
func.func @main(%x: tensor<1x4x4x8xf32>) -> tensor<1x4x4x2xf32> {
  %w = arith.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0],
                             [9.0, 10.0], [11.0, 12.0], [13.0, 14.0], [15.0, 16.0]]>
      : tensor<8x2xf32>
  %zero = arith.constant 0.0 : f32
  %c = tensor.collapse_shape %x [[0, 1, 2], [3]]
      : tensor<1x4x4x8xf32> into tensor<16x8xf32>
  %e = tensor.empty() : tensor<16x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x2xf32>) -> tensor<16x2xf32>
  %m = linalg.matmul ins(%c, %w : tensor<16x8xf32>, tensor<8x2xf32>)
                     outs(%f : tensor<16x2xf32>) -> tensor<16x2xf32>
  %r = tensor.expand_shape %m [[0, 1, 2], [3]]
      : tensor<16x2xf32> into tensor<1x4x4x2xf32>
  return %r : tensor<1x4x4x2xf32>
}
