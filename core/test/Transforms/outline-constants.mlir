// RUN: kiln-opt %s --kiln-outline-constants | FileCheck %s

// Two uses of one dense constant, a second dense constant and a splat. The
// two distinct dense constants ([1, 2] uniqued, [3, 4]) become arguments 1
// and 2 of @main and the module's kiln.constants table, c0 and c1, in
// argument order; every argument is read-only; the splat stays inline, the
// one constant left.

// CHECK:       module attributes {kiln.constants = [{name = "c0", value = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>}, {name = "c1", value = dense<[3.000000e+00, 4.000000e+00]> : tensor<2xf32>}]}
// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%[[X:.*]]: tensor<2xf32> {bufferization.writable = false}, %[[C0:.*]]: tensor<2xf32> {bufferization.writable = false}, %[[C1:.*]]: tensor<2xf32> {bufferization.writable = false}) -> tensor<2xf32>
// CHECK-NEXT:    %[[SPLAT:.*]] = arith.constant dense<7.000000e+00> : tensor<2xf32>
// CHECK-NEXT:    %[[A:.*]] = arith.addf %[[X]], %[[C0]]
// CHECK-NEXT:    %[[B:.*]] = arith.addf %[[A]], %[[C0]]
// CHECK-NEXT:    %[[M:.*]] = arith.mulf %[[B]], %[[C1]]
// CHECK-NEXT:    %[[S:.*]] = arith.subf %[[M]], %[[SPLAT]]
// CHECK-NEXT:    return %[[S]]
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %a = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %c = arith.constant dense<[3.0, 4.0]> : tensor<2xf32>
  %s = arith.constant dense<7.0> : tensor<2xf32>
  %0 = arith.addf %x, %a : tensor<2xf32>
  %1 = arith.addf %0, %b : tensor<2xf32>
  %2 = arith.mulf %1, %c : tensor<2xf32>
  %3 = arith.subf %2, %s : tensor<2xf32>
  return %3 : tensor<2xf32>
}
