// RUN: kiln-opt %s --split-input-file --kiln-fusion=false --kiln-form-dispatch-regions --kiln-outline-dispatches | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-form-dispatch-regions --kiln-outline-dispatches | FileCheck %s --check-prefix=FUSED

// kiln-outline-dispatches after kiln-form-dispatch-regions: each dispatch
// region becomes a private, destination-passing function (the result
// computed in its last argument, the only writable one), and @main keeps
// only constants, empty tensors, views and the calls. The CHECK lines are
// without fusion, the FUSED lines with it.

// A fully connected layer (dense 8x2 weights, zero-filled accumulator)
// then bias (a splat) + relu. Without fusion: dispatch 0 = fill + matmul,
// (x, w, out): the dense weights are an argument, passed from @main's
// constant; the scalar zero and the accumulator are rebuilt inside.
// Dispatch 1 = the generic, (m, out): the splat bias and the scalar zero
// are cloned in. Dispatch 1 reads dispatch 0's result; @main returns
// dispatch 1's; each output operand is a fresh tensor.empty of the
// result's type (a numbered value that is not a call's result: @main holds
// nothing else).

// CHECK-LABEL: func.func private @main_dispatch_0(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<4x8xf32> {bufferization.writable = false}, %[[W:[^:]*]]: tensor<8x2xf32> {bufferization.writable = false}, %[[OUT:[^:]*]]: tensor<4x2xf32> {bufferization.writable = true}) -> tensor<4x2xf32>
// CHECK-SAME:    kiln.dispatch_id = 0 : i64
// CHECK-SAME:    kiln.num_outputs = 1 : i64
// CHECK-SAME:    kiln.sources = ["FULLY_CONNECTED#1"]
// CHECK-NOT:     {{linalg\.|arith.constant .* : tensor}}
// CHECK:         %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[OUT]] : tensor<4x2xf32>)
// CHECK-NEXT:    %[[M:.*]] = linalg.matmul ins(%[[X]], %[[W]] : tensor<4x8xf32>, tensor<8x2xf32>) outs(%[[F]] : tensor<4x2xf32>)
// CHECK-NEXT:    return %[[M]] : tensor<4x2xf32>

// CHECK-LABEL: func.func private @main_dispatch_1(
// CHECK-SAME:    %[[M:[^:]*]]: tensor<4x2xf32> {bufferization.writable = false}, %[[OUT:[^:]*]]: tensor<4x2xf32> {bufferization.writable = true}) -> tensor<4x2xf32>
// CHECK-SAME:    kiln.dispatch_id = 1 : i64
// CHECK-SAME:    kiln.num_outputs = 1 : i64
// CHECK-SAME:    kiln.sources = ["ADD#2", "RELU#3"]
// CHECK-NOT:     {{linalg\.|arith.constant .* : tensor}}
// CHECK:         %[[BIAS:.*]] = arith.constant dense<5.000000e-01> : tensor<4x2xf32>
// CHECK-NOT:     {{linalg\.|arith.constant .* : tensor}}
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} ins(%[[M]], %[[BIAS]] : tensor<4x2xf32>, tensor<4x2xf32>) outs(%[[OUT]] : tensor<4x2xf32>)
// CHECK:         } -> tensor<4x2xf32>
// CHECK-NEXT:    return %[[R]] : tensor<4x2xf32>

// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<4x8xf32>)
// CHECK-NOT:     {{linalg\.|tensor\.(pad|extract_slice|insert_slice)|kiln\.dispatch =}}
// CHECK:         %[[W:.*]] = arith.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00], {{.*}}, [1.500000e+01, 1.600000e+01]]> : tensor<8x2xf32>
// CHECK-NOT:     {{linalg\.|tensor\.(pad|extract_slice|insert_slice)|kiln\.dispatch =}}
// CHECK:         %[[R0:.*]] = call @main_dispatch_0(%[[X]], %[[W]], %[[E0:[0-9]+]]) {kiln.dispatch_id = 0 : i64} : (tensor<4x8xf32>, tensor<8x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
// CHECK-NOT:     {{linalg\.|tensor\.(pad|extract_slice|insert_slice)|kiln\.dispatch =}}
// CHECK:         %[[R1:.*]] = call @main_dispatch_1(%[[R0]], %[[E1:[0-9]+]]) {kiln.dispatch_id = 1 : i64} : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
// CHECK-NOT:     {{linalg\.|tensor\.(pad|extract_slice|insert_slice)|kiln\.dispatch =}}
// CHECK:         return %[[R1]] : tensor<4x2xf32>

// With fusion: one dispatch for the whole layer, (x, w, out); the bias
// splat is cloned in, the matmul's result stays inside, and the fused
// generic writes the output argument; one call.

// FUSED-LABEL: func.func private @main_dispatch_0(
// FUSED-SAME:    %{{[^:]*}}: tensor<4x8xf32> {bufferization.writable = false}, %{{[^:]*}}: tensor<8x2xf32> {bufferization.writable = false}, %[[OUT:[^:]*]]: tensor<4x2xf32> {bufferization.writable = true}) -> tensor<4x2xf32>
// FUSED-SAME:    kiln.num_outputs = 1 : i64
// FUSED-SAME:    kiln.sources = ["FULLY_CONNECTED#1", "ADD#2", "RELU#3"]
// FUSED:         %[[R:.*]] = linalg.generic {{.*}} outs(%[[OUT]] : tensor<4x2xf32>)
// FUSED:         } -> tensor<4x2xf32>
// FUSED-NEXT:    return %[[R]] : tensor<4x2xf32>
// FUSED-NOT:     @main_dispatch_1
// FUSED-LABEL: func.func @main(
// FUSED-NOT:     call
// FUSED:         call @main_dispatch_0(
// FUSED-NOT:     call
// FUSED:         return
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x2xf32> {
  %w = arith.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0],
                             [9.0, 10.0], [11.0, 12.0], [13.0, 14.0], [15.0, 16.0]]>
      : tensor<8x2xf32>
  %bias = arith.constant dense<0.5> : tensor<4x2xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x2xf32>) -> tensor<4x2xf32>
  %m = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x2xf32>)
                     outs(%f : tensor<4x2xf32>) -> tensor<4x2xf32> loc("FULLY_CONNECTED#1")
  %e2 = tensor.empty() : tensor<4x2xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%m, %bias : tensor<4x2xf32>, tensor<4x2xf32>)
      outs(%e2 : tensor<4x2xf32>) {
  ^bb0(%in: f32, %b: f32, %out: f32):
    %s = arith.addf %in, %b : f32
    %v = arith.maxf %s, %zero : f32
    linalg.yield %v : f32
  } -> tensor<4x2xf32> loc(fused["ADD#2", "RELU#3"])
  return %r : tensor<4x2xf32>
}

// -----

// Integer contractions the named-op interfaces miss: linalg.quantized_matmul
// (zero points as operands) and an i8 x i8 -> i32 linalg.generic; then an
// integer elementwise requantization (i32 -> i8 by a shift). Their
// multiply-adds count 2 x M x N x K: 2 x 4 x 2 x 8 = 128 and
// 2 x 3 x 6 x 5 = 180; integer elementwise arithmetic is not counted.

// CHECK-LABEL: func.func private @main_dispatch_0(
// CHECK-SAME:    kiln.flops = 128 : i64
// CHECK-SAME:    kiln.sources = ["FULLY_CONNECTED#0"]
// CHECK-LABEL: func.func private @main_dispatch_1(
// CHECK-SAME:    kiln.flops = 180 : i64
// CHECK-SAME:    kiln.sources = ["BATCH_MATMUL#1"]
// CHECK-LABEL: func.func private @main_dispatch_2(
// CHECK-SAME:    kiln.flops = 0 : i64
// CHECK-SAME:    kiln.sources = ["QUANTIZE#2"]
#xk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
func.func @main(%x: tensor<4x8xi8>, %w: tensor<8x2xi8>, %y: tensor<3x5xi8>,
                %v: tensor<5x6xi8>) -> (tensor<4x2xi32>, tensor<3x6xi32>, tensor<3x6xi8>) {
  %zx = arith.constant -3 : i32
  %zw = arith.constant 5 : i32
  %zero = arith.constant 0 : i32
  %shift = arith.constant 7 : i32
  %e0 = tensor.empty() : tensor<4x2xi32>
  %f0 = linalg.fill ins(%zero : i32) outs(%e0 : tensor<4x2xi32>) -> tensor<4x2xi32>
  %q = linalg.quantized_matmul ins(%x, %w, %zx, %zw : tensor<4x8xi8>, tensor<8x2xi8>, i32, i32)
      outs(%f0 : tensor<4x2xi32>) -> tensor<4x2xi32> loc("FULLY_CONNECTED#0")
  %e1 = tensor.empty() : tensor<3x6xi32>
  %f1 = linalg.fill ins(%zero : i32) outs(%e1 : tensor<3x6xi32>) -> tensor<3x6xi32>
  %g = linalg.generic {indexing_maps = [#xk, #kn, #mn],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%y, %v : tensor<3x5xi8>, tensor<5x6xi8>) outs(%f1 : tensor<3x6xi32>) {
  ^bb0(%a: i8, %b: i8, %acc: i32):
    %ae = arith.extsi %a : i8 to i32
    %be = arith.extsi %b : i8 to i32
    %p = arith.muli %ae, %be : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  } -> tensor<3x6xi32> loc("BATCH_MATMUL#1")
  %e2 = tensor.empty() : tensor<3x6xi8>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<3x6xi32>) outs(%e2 : tensor<3x6xi8>) {
  ^bb0(%in: i32, %out: i8):
    %sh = arith.shrsi %in, %shift : i32
    %t = arith.trunci %sh : i32 to i8
    linalg.yield %t : i8
  } -> tensor<3x6xi8> loc("QUANTIZE#2")
  return %q, %g, %r : tensor<4x2xi32>, tensor<3x6xi32>, tensor<3x6xi8>
}
