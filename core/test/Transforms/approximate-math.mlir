// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-approximate-math))' | FileCheck %s --implicit-check-not=math.exp --implicit-check-not=math.tanh --implicit-check-not=math.fma --implicit-check-not=math.log
// RUN: kiln-opt %s --split-input-file --kiln-fma=false --pass-pipeline='builtin.module(func.func(kiln-approximate-math))' | FileCheck %s --check-prefix=NOFMA

// kiln-opt's default target: 4 lanes, with FMA. No math.exp, math.tanh,
// math.fma or math.log is left unless a CHECK line names it
// (--implicit-check-not); the NOFMA lines are a target without FMA.

// The math a softmax, a LOGISTIC, a TANH and a LOG leave in a kernel,
// scalar (the loop path) and on vectors (a register-tiled epilogue). exp
// and tanh become polynomials as multiplies and adds (LLVM contracts them
// to FMA where the CPU has it), never math.fma, which becomes a libm fmaf
// call without FMA hardware; exp scales by 2^k through the exponent bits
// (a bitcast). log's approximation misreads denormal inputs: left to libm.
// The vector forms stay vectors.

// CHECK-LABEL: func.func @math(
// CHECK-SAME:    %[[X:[^:]*]]: f32, %[[V:[^:]*]]: vector<8xf32>)
// CHECK:         arith.mulf %{{.*}} : f32
// CHECK:         arith.bitcast %{{.*}} : i32 to f32
// CHECK:         %[[LOG:.*]] = math.log %[[X]] : f32
// CHECK:         arith.mulf %{{.*}} : vector<8xf32>
// CHECK:         arith.bitcast %{{.*}} : vector<8xi32> to vector<8xf32>
// CHECK:         return %{{[^,]*}}, %{{[^,]*}}, %[[LOG]], %{{[^,]*}}, %{{[^,]*}} : f32, f32, f32, vector<8xf32>, vector<8xf32>
func.func @math(%x: f32, %v: vector<8xf32>) -> (f32, f32, f32, vector<8xf32>, vector<8xf32>) {
  %e = math.exp %x : f32
  %t = math.tanh %x : f32
  %l = math.log %x : f32
  %ev = math.exp %v : vector<8xf32>
  %tv = math.tanh %v : vector<8xf32>
  return %e, %t, %l, %ev, %tv : f32, f32, f32, vector<8xf32>, vector<8xf32>
}

// -----

// exp(x - max) of a softmax over 2 and over 24 channels: loops (r, c), c
// innermost. With FMA both are approximated. Without, 2 channels stay a
// scalar loop, where the approximation is slower than expf: the one exp
// stays; 24 channels vectorize: approximated.

// CHECK-LABEL: func.func @two(
// CHECK:         return
// CHECK-LABEL: func.func @wide(
// CHECK:         return

// NOFMA-LABEL:   func.func @two(
// NOFMA-COUNT-1:   math.exp
// NOFMA-NOT:       math.exp
// NOFMA-LABEL:   func.func @wide(
// NOFMA-NOT:       math.exp
// NOFMA:           return
#x = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @two(%x: memref<896x2xf32>, %m: memref<896xf32>, %y: memref<896x2xf32>) {
  linalg.generic {indexing_maps = [#x, #row, #x], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : memref<896x2xf32>, memref<896xf32>) outs(%y : memref<896x2xf32>) {
  ^bb0(%in: f32, %max: f32, %out: f32):
    %d = arith.subf %in, %max : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  }
  return
}
func.func @wide(%x: memref<64x24xf32>, %m: memref<64xf32>, %y: memref<64x24xf32>) {
  linalg.generic {indexing_maps = [#x, #row, #x], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : memref<64x24xf32>, memref<64xf32>) outs(%y : memref<64x24xf32>) {
  ^bb0(%in: f32, %max: f32, %out: f32):
    %d = arith.subf %in, %max : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  }
  return
}
