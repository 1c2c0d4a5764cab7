// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-collapse-reshapes))' | FileCheck %s

// A 1x1 convolution as matmul (4096 = 1*64*64 pixels, 16 -> 24 channels),
// its result expanded back to NHWC, then a per-channel bias add. The bias
// add moves before the expand_shape and reads the matmul directly: 2-D
// (d0, d1, d2 collapse into one parallel loop), the bias still per channel
// ((d0, d1) -> (d1)), its init an empty tensor of the collapsed shape. The
// only reshape left is the expand_shape after it.

// CHECK-DAG:   #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG:   #[[CHAN:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%{{.*}}: tensor<4096x16xf32>, %{{.*}}: tensor<16x24xf32>, %[[BIAS:.*]]: tensor<24xf32>)
// CHECK-NOT:     tensor.{{expand|collapse}}_shape
// CHECK:         %[[MM:.*]] = linalg.matmul
// CHECK-NEXT:    %[[INIT:.*]] = tensor.empty() : tensor<4096x24xf32>
// CHECK-NEXT:    %[[ADD:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[CHAN]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME:      ins(%[[MM]], %[[BIAS]] : tensor<4096x24xf32>, tensor<24xf32>) outs(%[[INIT]] : tensor<4096x24xf32>)
// CHECK:         } -> tensor<4096x24xf32>
// CHECK-NEXT:    %[[OUT:.*]] = tensor.expand_shape %[[ADD]] {{\[\[}}0, 1, 2], [3]] : tensor<4096x24xf32> into tensor<1x64x64x24xf32>
// CHECK-NEXT:    return %[[OUT]]
#nhwc = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#chan = affine_map<(d0, d1, d2, d3) -> (d3)>
func.func @main(%a: tensor<4096x16xf32>, %w: tensor<16x24xf32>,
                %bias: tensor<24xf32>) -> tensor<1x64x64x24xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4096x24xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4096x24xf32>) -> tensor<4096x24xf32>
  %m = linalg.matmul ins(%a, %w : tensor<4096x16xf32>, tensor<16x24xf32>)
                     outs(%f : tensor<4096x24xf32>) -> tensor<4096x24xf32>
  %x = tensor.expand_shape %m [[0, 1, 2], [3]]
      : tensor<4096x24xf32> into tensor<1x64x64x24xf32>
  %e2 = tensor.empty() : tensor<1x64x64x24xf32>
  %b = linalg.generic {indexing_maps = [#nhwc, #chan, #nhwc],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %bias : tensor<1x64x64x24xf32>, tensor<24xf32>)
      outs(%e2 : tensor<1x64x64x24xf32>) {
  ^bb0(%in: f32, %bi: f32, %out: f32):
    %s = arith.addf %in, %bi : f32
    linalg.yield %s : f32
  } -> tensor<1x64x64x24xf32>
  return %b : tensor<1x64x64x24xf32>
}

// -----

// An accumulator fill of a 4-D empty tensor, collapsed to 2-D, becomes a
// fill (of the same 0.0) of an empty tensor of the collapsed shape
// 1*64*64 x 24: no collapse_shape is left, and one fill.

// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[EMPTY:.*]] = tensor.empty() : tensor<4096x24xf32>
// CHECK-NEXT:    %[[FILL:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[EMPTY]] : tensor<4096x24xf32>)
// CHECK-NEXT:    return %[[FILL]]
func.func @main() -> tensor<4096x24xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x64x64x24xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x64x64x24xf32>) -> tensor<1x64x64x24xf32>
  %c = tensor.collapse_shape %f [[0, 1, 2], [3]]
      : tensor<1x64x64x24xf32> into tensor<4096x24xf32>
  return %c : tensor<4096x24xf32>
}
