// RUN: kiln-opt %s --split-input-file --kiln-pack-weights | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-pack-weights --kiln-model-inputs=2 | FileCheck %s --check-prefix=INPUTS

// kiln-opt's default target, SSE: 4 f32 lanes, 16 registers. The kernels
// reading packed weights are checked numerically in
// tests/model/PackedWeightsTest.cpp, the panel offsets in
// tests/unit/PackWeightsTest.cpp.

// @main as bufferization leaves it: input %in, constant %w (entry c0, a
// 2 x 20 K x N matrix holding 0..39 row-major), output %out; the dispatch
// reads %w only as the matmul's weights. 20 columns get column blocks of 2
// vectors = 8 columns, so two 8-wide panels and a 4-wide tail panel: panel
// 0 (columns 0-7) row 0, then row 1; panel 1 (8-15) likewise; the tail
// panel (16-19) row 0, then row 1. The constant becomes that 40-element
// vector, the argument of @main and of the dispatch memref<40xf32>, and the
// dispatch reads it through one cast back to 2x20 marked with the panel
// width, 8.

// CHECK:       module attributes {kiln.constants = [{name = "c0", value = dense<[0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00, 2.000000e+01, 2.100000e+01, 2.200000e+01, 2.300000e+01, 2.400000e+01, 2.500000e+01, 2.600000e+01, 2.700000e+01, 8.000000e+00, 9.000000e+00, 1.000000e+01, 1.100000e+01, 1.200000e+01, 1.300000e+01, 1.400000e+01, 1.500000e+01, 2.800000e+01, 2.900000e+01, 3.000000e+01, 3.100000e+01, 3.200000e+01, 3.300000e+01, 3.400000e+01, 3.500000e+01, 1.600000e+01, 1.700000e+01, 1.800000e+01, 1.900000e+01, 3.600000e+01, 3.700000e+01, 3.800000e+01, 3.900000e+01]> : tensor<40xf32>}]}
// CHECK-LABEL: func.func private @main_dispatch_0
// CHECK-SAME:    (%[[A:.*]]: memref<3x2xf32>, %[[W:.*]]: memref<40xf32>, %[[C:.*]]: memref<3x20xf32>,
// CHECK-NEXT:    %[[KN:.*]] = builtin.unrealized_conversion_cast %[[W]] : memref<40xf32> to memref<2x20xf32> {kiln.panel_columns = 8 : i64}
// CHECK-NEXT:    linalg.matmul ins(%[[A]], %[[KN]] : memref<3x2xf32>, memref<2x20xf32>) outs(%[[C]] : memref<3x20xf32>)
// CHECK-NEXT:    return
// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%[[IN:.*]]: memref<3x2xf32>, %[[MW:.*]]: memref<40xf32>, %[[OUT:.*]]: memref<3x20xf32>)
// CHECK-NOT:     unrealized_conversion_cast
// CHECK:         call @main_dispatch_0(%[[IN]], %[[MW]], %[[OUT]], {{.*}}) : (memref<3x2xf32>, memref<40xf32>, memref<3x20xf32>, index, index, index) -> ()

// With 2 model inputs, argument 1 is an input (the constants table entry
// c0 then names another argument): nothing changes.

// INPUTS:       module attributes {kiln.constants = [{name = "c0", value = dense<{{\[\[}}0.000000e+00, 1.000000e+00, {{.*}}, 3.900000e+01]]> : tensor<2x20xf32>}]}
// INPUTS-NEXT:    func.func private @main_dispatch_0(%[[A:.*]]: memref<3x2xf32>, %[[W:.*]]: memref<2x20xf32>, %[[C:.*]]: memref<3x20xf32>,
// INPUTS-NEXT:      linalg.matmul ins(%[[A]], %[[W]] : memref<3x2xf32>, memref<2x20xf32>) outs(%[[C]] : memref<3x20xf32>)
// INPUTS-NEXT:      return
// INPUTS-NEXT:    }
// INPUTS-NEXT:    func.func @main(%[[IN:.*]]: memref<3x2xf32>, %[[MW:.*]]: memref<2x20xf32>, %[[OUT:.*]]: memref<3x20xf32>) {
// INPUTS-NEXT:      %[[C0:.*]] = arith.constant 0 : index
// INPUTS-NEXT:      call @main_dispatch_0(%[[IN]], %[[MW]], %[[OUT]], %[[C0]], %[[C0]], %[[C0]]) : (memref<3x2xf32>, memref<2x20xf32>, memref<3x20xf32>, index, index, index) -> ()
module attributes {kiln.constants = [{name = "c0", value = dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0], [20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0]]> : tensor<2x20xf32>}]} {
  func.func private @main_dispatch_0(%a: memref<3x2xf32>, %w: memref<2x20xf32>, %c: memref<3x20xf32>,
                                     %x: index, %y: index, %z: index) attributes {kiln.dispatch_id = 0 : i64} {
    linalg.matmul ins(%a, %w : memref<3x2xf32>, memref<2x20xf32>) outs(%c : memref<3x20xf32>)
    return
  }
  func.func @main(%in: memref<3x2xf32>, %w: memref<2x20xf32>, %out: memref<3x20xf32>) {
    %c0 = arith.constant 0 : index
    call @main_dispatch_0(%in, %w, %out, %c0, %c0, %c0) : (memref<3x2xf32>, memref<2x20xf32>, memref<3x20xf32>, index, index, index) -> ()
    return
  }
}

// -----

// The same, but the dispatch also copies the weights somewhere: that read
// needs K x N, so nothing changes.

// CHECK:       module attributes {kiln.constants = [{name = "c0", value = dense<{{\[\[}}0.000000e+00, 1.000000e+00, {{.*}}, 3.900000e+01]]> : tensor<2x20xf32>}]}
// CHECK-NEXT:    func.func private @main_dispatch_0(%[[A:.*]]: memref<3x2xf32>, %[[W:.*]]: memref<2x20xf32>, %[[C:.*]]: memref<3x20xf32>,
// CHECK-NEXT:      linalg.matmul ins(%[[A]], %[[W]] : memref<3x2xf32>, memref<2x20xf32>) outs(%[[C]] : memref<3x20xf32>)
// CHECK-NEXT:      %[[V:.*]] = memref.alloca() : memref<2x20xf32>
// CHECK-NEXT:      memref.copy %[[W]], %[[V]] : memref<2x20xf32> to memref<2x20xf32>
// CHECK-NEXT:      return
// CHECK-NEXT:    }
// CHECK-NEXT:    func.func @main(%[[IN:.*]]: memref<3x2xf32>, %[[MW:.*]]: memref<2x20xf32>, %[[OUT:.*]]: memref<3x20xf32>) {
// CHECK-NEXT:      %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:      call @main_dispatch_0(%[[IN]], %[[MW]], %[[OUT]], %[[C0]], %[[C0]], %[[C0]]) : (memref<3x2xf32>, memref<2x20xf32>, memref<3x20xf32>, index, index, index) -> ()
module attributes {kiln.constants = [{name = "c0", value = dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0], [20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0]]> : tensor<2x20xf32>}]} {
  func.func private @main_dispatch_0(%a: memref<3x2xf32>, %w: memref<2x20xf32>, %c: memref<3x20xf32>,
                                     %x: index, %y: index, %z: index) attributes {kiln.dispatch_id = 0 : i64} {
    linalg.matmul ins(%a, %w : memref<3x2xf32>, memref<2x20xf32>) outs(%c : memref<3x20xf32>)
    %v = memref.alloca() : memref<2x20xf32>
    memref.copy %w, %v : memref<2x20xf32> to memref<2x20xf32>
    return
  }
  func.func @main(%in: memref<3x2xf32>, %w: memref<2x20xf32>, %out: memref<3x20xf32>) {
    %c0 = arith.constant 0 : index
    call @main_dispatch_0(%in, %w, %out, %c0, %c0, %c0) : (memref<3x2xf32>, memref<2x20xf32>, memref<3x20xf32>, index, index, index) -> ()
    return
  }
}

// -----

// 12 columns: one SSE block of 3 x 4 lanes, already the panel layout:
// nothing changes.

// CHECK:       module attributes {kiln.constants = [{name = "c0", value = dense<{{\[\[}}0.000000e+00, 1.000000e+00, {{.*}}, 3.100000e+01]]> : tensor<2x12xf32>}]}
// CHECK-NEXT:    func.func private @main_dispatch_0(%[[A:.*]]: memref<3x2xf32>, %[[W:.*]]: memref<2x12xf32>, %[[C:.*]]: memref<3x12xf32>,
// CHECK-NEXT:      linalg.matmul ins(%[[A]], %[[W]] : memref<3x2xf32>, memref<2x12xf32>) outs(%[[C]] : memref<3x12xf32>)
// CHECK-NEXT:      return
// CHECK-NEXT:    }
// CHECK-NEXT:    func.func @main(%[[IN:.*]]: memref<3x2xf32>, %[[MW:.*]]: memref<2x12xf32>, %[[OUT:.*]]: memref<3x12xf32>) {
// CHECK-NEXT:      %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:      call @main_dispatch_0(%[[IN]], %[[MW]], %[[OUT]], %[[C0]], %[[C0]], %[[C0]]) : (memref<3x2xf32>, memref<2x12xf32>, memref<3x12xf32>, index, index, index) -> ()
module attributes {kiln.constants = [{name = "c0", value = dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0], [20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0]]> : tensor<2x12xf32>}]} {
  func.func private @main_dispatch_0(%a: memref<3x2xf32>, %w: memref<2x12xf32>, %c: memref<3x12xf32>,
                                     %x: index, %y: index, %z: index) attributes {kiln.dispatch_id = 0 : i64} {
    linalg.matmul ins(%a, %w : memref<3x2xf32>, memref<2x12xf32>) outs(%c : memref<3x12xf32>)
    return
  }
  func.func @main(%in: memref<3x2xf32>, %w: memref<2x12xf32>, %out: memref<3x12xf32>) {
    %c0 = arith.constant 0 : index
    call @main_dispatch_0(%in, %w, %out, %c0, %c0, %c0) : (memref<3x2xf32>, memref<2x12xf32>, memref<3x12xf32>, index, index, index) -> ()
    return
  }
}
