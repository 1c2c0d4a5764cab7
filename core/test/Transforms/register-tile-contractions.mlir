// RUN: kiln-opt %s --split-input-file --kiln-vector-lanes=8 --pass-pipeline='builtin.module(func.func(kiln-register-tile-contractions))' | FileCheck %s --implicit-check-not=linalg.
// RUN: kiln-opt %s --split-input-file --kiln-vector-lanes=8 --pass-pipeline='builtin.module(func.func(kiln-register-tile-contractions))' | FileCheck %s --check-prefix=LOADS
// RUN: kiln-opt %s --split-input-file --kiln-vector-lanes=8 --pass-pipeline='builtin.module(func.func(kiln-register-tile-contractions))' | FileCheck %s --check-prefix=STORES
// RUN: kiln-opt %s --split-input-file --kiln-vector-lanes=8 --pass-pipeline='builtin.module(func.func(kiln-register-tile-contractions))' | FileCheck %s --check-prefix=OPS
// RUN: kiln-opt %s --split-input-file --kiln-vector-lanes=8 --pass-pipeline='builtin.module(func.func(kiln-register-tile-contractions))' | FileCheck %s --check-prefix=WIDEN
// RUN: kiln-opt %s --split-input-file --kiln-vector-lanes=8 --pass-pipeline='builtin.module(func.func(kiln-register-tile-contractions))' | FileCheck %s --check-prefix=RESIDUAL
// RUN: kiln-opt %s --split-input-file --kiln-vector-lanes=8 --pass-pipeline='builtin.module(func.func(kiln-register-tile-contractions))' | FileCheck %s --check-prefix=BIASVEC

// The kernels on AVX2 (8 f32 lanes, 16 registers; --kiln-vector-lanes=8).
// The CHECK lines show each kernel's shape; no linalg op is left unless
// they name it (--implicit-check-not). Each of the other prefixes counts
// one thing in one function exactly (COUNT, then NOT up to the return):
// LOADS and STORES all vector loads and stores, OPS the arithmetic named,
// WIDEN the i8 -> i32 extensions, RESIDUAL and BIASVEC the epilogue's loads of
// the residual and the bias. The tile choice, the strategy the
// plan records and the numbers the kernels compute are checked in
// tests/unit/RegisterTileContractionsTest.cpp and the op cases (OpCaseTest).

// C(?x24) += A(?x24) * B(24x24) on AVX2 (8 lanes, 16 registers): 24
// columns are 3 vectors, so (16 - 3 - 1) / 3 = 4 rows, 12 accumulators.
// The full 4-row blocks load their 12 accumulators once, carry them
// through the reduction loop (3 weight vectors per step) and store them
// once; the remainder (0 to 3 rows) runs a 2-row block (6) and a 1-row
// block (3). No masks: 24 = 3 x 8. In all: 21 accumulator loads and
// stores, 9 weight loads.

// CHECK-LABEL: func.func @mm(
// CHECK-SAME:    %{{[^:]*}}: memref<?x24xf32, strided<[24, 1], offset: ?>>, %[[B:[^:]*]]: memref<24x24xf32>, %[[C:[^:]*]]: memref<?x24xf32>)
// CHECK-NOT:     iter_args
// CHECK:         scf.for
// CHECK-COUNT-12:  vector.load %[[C]]{{.*}} vector<8xf32>
// CHECK-NEXT:      scf.for {{.*}} iter_args({{.*}}) -> ({{(vector<8xf32>, ){11}(vector)}}<8xf32>) {
// CHECK-COUNT-3:     vector.load %[[B]]{{.*}} vector<8xf32>
// CHECK:           scf.yield
// CHECK-COUNT-12:  vector.store %{{[^,]*}}, %[[C]]
// CHECK-NOT:     iter_args
// CHECK:         scf.for
// CHECK-COUNT-6:   vector.load %[[C]]
// CHECK-NEXT:      scf.for {{.*}} iter_args({{.*}}) -> ({{(vector<8xf32>, ){5}(vector)}}<8xf32>) {
// CHECK-COUNT-3:     vector.load %[[B]]
// CHECK:           scf.yield
// CHECK-COUNT-6:   vector.store %{{[^,]*}}, %[[C]]
// CHECK-NOT:     iter_args
// CHECK:         scf.for
// CHECK-COUNT-3:   vector.load %[[C]]
// CHECK-NEXT:      scf.for {{.*}} iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// CHECK-COUNT-3:     vector.load %[[B]]
// CHECK:           scf.yield
// CHECK-COUNT-3:   vector.store %{{[^,]*}}, %[[C]]
// CHECK-NOT:     iter_args
// CHECK:         return

// LOADS:          func.func @mm(
// LOADS-COUNT-30: vector.{{(masked)?}}load
// LOADS-NOT:      vector.{{(masked)?}}load
// LOADS:          return
// STORES:          func.func @mm(
// STORES-COUNT-21: vector.{{(masked)?}}store
// STORES-NOT:      vector.{{(masked)?}}store
// STORES:          return

func.func @mm(%a: memref<?x24xf32, strided<[24, 1], offset: ?>>, %b: memref<24x24xf32>,
              %c: memref<?x24xf32>) {
  linalg.matmul ins(%a, %b : memref<?x24xf32, strided<[24, 1], offset: ?>>, memref<24x24xf32>)
                outs(%c : memref<?x24xf32>)
  return
}

// -----

// 20 columns on AVX2: 2 full vectors and a 4-lane tail, unmasked.

// CHECK-LABEL: func.func @mm_20_columns(
// CHECK:         vector.load {{.*}} : memref<?x20xf32>, vector<4xf32>
// LOADS:         func.func @mm_20_columns(
// LOADS-NOT:     vector.maskedload
// LOADS:         return

func.func @mm_20_columns(%a: memref<?x20xf32, strided<[20, 1], offset: ?>>, %b: memref<24x20xf32>,
              %c: memref<?x20xf32>) {
  linalg.matmul ins(%a, %b : memref<?x20xf32, strided<[20, 1], offset: ?>>, memref<24x20xf32>)
                outs(%c : memref<?x20xf32>)
  return
}

// -----

// 13 columns: 1 full vector and a masked one (5 of 8 lanes); no 4-lane
// vector.

// CHECK-LABEL: func.func @mm_13_columns(
// CHECK:         vector.maskedload {{.*}} : memref<?x13xf32>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// LOADS:         func.func @mm_13_columns(
// LOADS-NOT:     vector.load {{.*}}, vector<4xf32>
// LOADS-NOT:     vector.maskedload {{.*}} into vector<{{([0-79]|[0-9][0-9]+)}}xf32>
// LOADS:         return

func.func @mm_13_columns(%a: memref<?x13xf32, strided<[13, 1], offset: ?>>, %b: memref<24x13xf32>,
              %c: memref<?x13xf32>) {
  linalg.matmul ins(%a, %b : memref<?x13xf32, strided<[13, 1], offset: ?>>, memref<24x13xf32>)
                outs(%c : memref<?x13xf32>)
  return
}

// -----

// A depthwise convolution with channel multiplier 2 is left to the loop
// lowering (kiln::registerTileFor says why: tests/unit).

// CHECK-LABEL: func.func @dw_multiplier_2(
// CHECK-NEXT:    linalg.depthwise_conv_2d_nhwc_hwcm
// CHECK-NEXT:    return

func.func @dw_multiplier_2(%in: memref<1x6x6x3xf32>, %w: memref<3x3x3x2xf32>, %out: memref<1x4x4x3x2xf32>) {
  linalg.depthwise_conv_2d_nhwc_hwcm {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%in, %w : memref<1x6x6x3xf32>, memref<3x3x3x2xf32>) outs(%out : memref<1x4x4x3x2xf32>)
  return
}

// -----

// A 3x3 depthwise convolution, 16 channels = 2 vectors: blocks of 4
// output pixels, then 2- and 1-pixel blocks for the remainder, the 9 taps
// unrolled: (4 + 2 + 1) x 2 = 14 stores, no linalg op left.

// CHECK-LABEL: func.func @dw(
// CHECK:         return
// STORES:          func.func @dw(
// STORES-COUNT-14: vector.store {{.*}}, vector<8xf32>
// STORES-NOT:      vector.{{(masked)?}}store
// STORES:          return

func.func @dw(%in: memref<1x6x10x16xf32>, %w: memref<3x3x16x1xf32>, %out: memref<1x4x8x16x1xf32>) {
  linalg.depthwise_conv_2d_nhwc_hwcm {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%in, %w : memref<1x6x10x16xf32>, memref<3x3x16x1xf32>) outs(%out : memref<1x4x8x16x1xf32>)
  return
}

// -----

// A 1x1 convolution as the dispatch leaves it: the matmul into a zeroed
// stack tile, then bias + residual ADD + RELU6 into the output. The
// accumulators start at the fill value (no load from the tile), and the
// elementwise consumer runs on them: row blocks of 4, 2 and 1 rows of 3
// vectors, 12 + 6 + 3 accumulators, each stored once into the output after
// loading its residual and bias vector, the body on vector<8xf32> (two
// adds, a min and a max per vector). Fill, matmul and generic are gone:
// the tile is never written or read. Loads: 21 residual, 21 bias and 9
// weight vectors (3 per step of each block).

// CHECK-LABEL: func.func @mm_epilogue(
// CHECK-SAME:    %{{[^:]*}}: memref<16x24xf32>, %[[B:[^:]*]]: memref<24x24xf32>, %[[BIAS:[^:]*]]: memref<24xf32>, %[[RES:[^:]*]]: memref<16x24xf32>, %[[OUT:[^:]*]]: memref<16x24xf32>)
// CHECK-NOT:     memref.alloca
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<8xf32>
// CHECK-DAG:     %[[SIX:.*]] = arith.constant dense<6.000000e+00> : vector<8xf32>
// CHECK:         scf.for {{.*}} iter_args(%{{[^ ]*}} = %[[ZERO]], {{.*}}) -> ({{(vector<8xf32>, ){11}(vector)}}<8xf32>) {
// CHECK-COUNT-3:   vector.load %[[B]]
// CHECK:         }
// CHECK:         %[[R:.*]] = vector.load %[[RES]]
// CHECK:         %[[BI:.*]] = vector.load %[[BIAS]]
// CHECK-NEXT:    %[[S:.*]] = arith.addf %{{.*}}, %[[BI]] : vector<8xf32>
// CHECK-NEXT:    %[[T:.*]] = arith.addf %[[R]], %[[S]] : vector<8xf32>
// CHECK-NEXT:    %[[U:.*]] = arith.minf %[[T]], %[[SIX]] : vector<8xf32>
// CHECK-NEXT:    %[[V:.*]] = arith.maxf %[[U]], %[[ZERO]] : vector<8xf32>
// CHECK-NEXT:    vector.store %[[V]], %[[OUT]]
// CHECK-NOT:     memref.alloca
// CHECK:         return

// LOADS:          func.func @mm_epilogue(
// LOADS-COUNT-51: vector.load
// LOADS-NOT:      vector.{{(masked)?}}load
// LOADS:          return
// RESIDUAL:          func.func @mm_epilogue(
// RESIDUAL-SAME:       %[[RES:[^:]*]]: memref<16x24xf32>, %{{[^:]*}}: memref<16x24xf32>)
// RESIDUAL-COUNT-21: vector.load %[[RES]][
// RESIDUAL-NOT:      vector.load %[[RES]][
// RESIDUAL:          return
// BIASVEC:          func.func @mm_epilogue(
// BIASVEC-SAME:       %[[BIAS:[^:]*]]: memref<24xf32>
// BIASVEC-COUNT-21: vector.load %[[BIAS]][
// BIASVEC-NOT:      vector.load %[[BIAS]][
// BIASVEC:          return
// STORES:          func.func @mm_epilogue(
// STORES-SAME:       %[[OUT:[^:]*]]: memref<16x24xf32>)
// STORES-COUNT-21: vector.store %{{[^,]*}}, %[[OUT]][
// STORES-NOT:      vector.{{(masked)?}}store
// STORES:          return
// OPS:          func.func @mm_epilogue(
// OPS-COUNT-21: arith.maxf {{.*}} : vector<8xf32>
// OPS-NOT:      arith.maxf
// OPS:          return

#rows = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>
func.func @mm_epilogue(%a: memref<16x24xf32>, %b: memref<24x24xf32>, %bias: memref<24xf32>,
              %res: memref<16x24xf32>, %out: memref<16x24xf32>) {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %tile = memref.alloca() {alignment = 64 : i64} : memref<16x24xf32>
  linalg.fill ins(%zero : f32) outs(%tile : memref<16x24xf32>)
  linalg.matmul ins(%a, %b : memref<16x24xf32>, memref<24x24xf32>)
                outs(%tile : memref<16x24xf32>)
  linalg.generic {indexing_maps = [#rows, #bias, #rows, #rows],
                  iterator_types = ["parallel", "parallel"]}
      ins(%res, %bias, %tile : memref<16x24xf32>, memref<24xf32>, memref<16x24xf32>)
      outs(%out : memref<16x24xf32>) {
  ^bb0(%r: f32, %bi: f32, %t: f32, %o: f32):
    %0 = arith.addf %t, %bi : f32
    %1 = arith.addf %r, %0 : f32
    %2 = arith.minf %1, %six : f32
    %3 = arith.maxf %2, %zero : f32
    linalg.yield %3 : f32
  }
  return
}

// -----

// The same generic reading the tile transposed (24x24 now) is not an
// epilogue: the tile is kept (stored into) and the generic left to the
// loop lowering.

// CHECK-LABEL: func.func @mm_transposed_consumer(
// CHECK:         %[[TILE:.*]] = memref.alloca() {alignment = 64 : i64} : memref<24x24xf32>
// CHECK-NEXT:    linalg.fill ins(%{{.*}} : f32) outs(%[[TILE]] : memref<24x24xf32>)
// CHECK:         vector.store %{{[^,]*}}, %[[TILE]]
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%{{.*}}, %{{.*}}, %[[TILE]] :
// CHECK:         linalg.yield
// CHECK:         return

#rows = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>
#cols = affine_map<(d0, d1) -> (d1, d0)>
func.func @mm_transposed_consumer(%a: memref<24x24xf32>, %b: memref<24x24xf32>, %bias: memref<24xf32>,
              %res: memref<24x24xf32>, %out: memref<24x24xf32>) {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %tile = memref.alloca() {alignment = 64 : i64} : memref<24x24xf32>
  linalg.fill ins(%zero : f32) outs(%tile : memref<24x24xf32>)
  linalg.matmul ins(%a, %b : memref<24x24xf32>, memref<24x24xf32>)
                outs(%tile : memref<24x24xf32>)
  linalg.generic {indexing_maps = [#rows, #bias, #cols, #rows],
                  iterator_types = ["parallel", "parallel"]}
      ins(%res, %bias, %tile : memref<24x24xf32>, memref<24xf32>, memref<24x24xf32>)
      outs(%out : memref<24x24xf32>) {
  ^bb0(%r: f32, %bi: f32, %t: f32, %o: f32):
    %0 = arith.addf %t, %bi : f32
    %1 = arith.addf %r, %0 : f32
    %2 = arith.minf %1, %six : f32
    %3 = arith.maxf %2, %zero : f32
    linalg.yield %3 : f32
  }
  return
}

// -----

// SAME padding as the tiled dispatch leaves it: the 4x8 input copied into
// a zeroed 6x10 stack buffer at (1, 1), the convolution reading the
// buffer. The kernel reads the input itself (positions clamped, the fill
// value selected at the edges); fill, copy and buffer are gone. Every
// input vector comes from the input, none from the buffer, each chosen
// against the fill value: 9 taps x 2 vectors x (4 + 2 + 1) pixels = 126.

// CHECK-LABEL: func.func @dw_padded(
// CHECK-SAME:    %[[IN:[^:]*]]: memref<1x4x8x16xf32>
// CHECK-NOT:     memref.alloca
// CHECK:         %[[X:.*]] = vector.load %[[IN]]
// CHECK-NEXT:    %[[INSIDE:.*]] = arith.andi %{{.*}}, %{{.*}} : i1
// CHECK-NEXT:    arith.select %[[INSIDE]], %[[X]], %{{.*}} : vector<8xf32>
// CHECK-NOT:     memref.alloca
// CHECK:         return

// LOADS:           func.func @dw_padded(
// LOADS-SAME:        %[[IN:[^:]*]]: memref<1x4x8x16xf32>
// LOADS-COUNT-126: vector.load %[[IN]][
// LOADS-NOT:       vector.load %[[IN]][
// LOADS:           return
// OPS:           func.func @dw_padded(
// OPS-COUNT-126: arith.select {{.*}} : vector<8xf32>
// OPS-NOT:       arith.select {{.*}} : vector
// OPS:           return

func.func @dw_padded(%in: memref<1x4x8x16xf32>, %w: memref<3x3x16x1xf32>, %out: memref<1x4x8x16x1xf32>) {
  %zero = arith.constant 0.0 : f32
  %pad = memref.alloca() {alignment = 64 : i64} : memref<1x6x10x16xf32>
  linalg.fill ins(%zero : f32) outs(%pad : memref<1x6x10x16xf32>)
  %inner = memref.subview %pad[0, 1, 1, 0] [1, 4, 8, 16] [1, 1, 1, 1]
      : memref<1x6x10x16xf32> to memref<1x4x8x16xf32, strided<[960, 160, 16, 1], offset: 176>>
  linalg.copy ins(%in : memref<1x4x8x16xf32>)
              outs(%inner : memref<1x4x8x16xf32, strided<[960, 160, 16, 1], offset: 176>>)
  linalg.depthwise_conv_2d_nhwc_hwcm {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%pad, %w : memref<1x6x10x16xf32>, memref<3x3x16x1xf32>) outs(%out : memref<1x4x8x16x1xf32>)
  return
}

// -----

// The matmul with i8 operands and an i32 accumulator: the f32 tile for 24
// columns, 4 rows of 3 x 8 i32 lanes. Accumulators: 12 + 6 + 3
// vector<8xi32> carried by the reduction loops, loaded and stored once;
// weights loaded as i8 vectors (3 per step and block). One multiply-add
// per accumulator and step: muli of two sign-extended i8 vectors, then
// addi (21 of each, 42 extensions); no float arithmetic.

// CHECK-LABEL: func.func @mm_i8(
// CHECK-SAME:    %[[A:[^:]*]]: memref<?x24xi8, strided<[24, 1], offset: ?>>, %[[B:[^:]*]]: memref<24x24xi8>, %[[C:[^:]*]]: memref<?x24xi32>)
// CHECK-NOT:     iter_args
// CHECK:         scf.for
// CHECK-COUNT-12:  vector.load %[[C]]{{.*}} vector<8xi32>
// CHECK-NEXT:      scf.for {{.*}} iter_args({{.*}}) -> ({{(vector<8xi32>, ){11}(vector)}}<8xi32>) {
// CHECK-COUNT-3:     vector.load %[[B]]{{.*}} vector<8xi8>
// CHECK:           scf.yield
// CHECK-COUNT-12:  vector.store %{{[^,]*}}, %[[C]]{{.*}} vector<8xi32>
// CHECK-NOT:     iter_args
// CHECK:         scf.for
// CHECK-COUNT-6:   vector.load %[[C]]{{.*}} vector<8xi32>
// CHECK-NEXT:      scf.for {{.*}} iter_args({{.*}}) -> ({{(vector<8xi32>, ){5}(vector)}}<8xi32>) {
// CHECK-COUNT-3:     vector.load %[[B]]{{.*}} vector<8xi8>
// CHECK:           scf.yield
// CHECK-COUNT-6:   vector.store %{{[^,]*}}, %[[C]]{{.*}} vector<8xi32>
// CHECK-NOT:     iter_args
// CHECK:         scf.for
// CHECK-COUNT-3:   vector.load %[[C]]{{.*}} vector<8xi32>
// CHECK-NEXT:      scf.for {{.*}} iter_args(%[[ACC0:[^ ]*]] = {{.*}}, %[[ACC1:[^ ]*]] = {{.*}}, %[[ACC2:[^ ]*]] = {{.*}}) -> (vector<8xi32>, vector<8xi32>, vector<8xi32>) {
// CHECK-NEXT:        %[[W0:.*]] = vector.load %[[B]]{{.*}} vector<8xi8>
// CHECK-NEXT:        %[[W1:.*]] = vector.load %[[B]]{{.*}} vector<8xi8>
// CHECK-NEXT:        %[[W2:.*]] = vector.load %[[B]]{{.*}} vector<8xi8>
// CHECK-NEXT:        %[[X:.*]] = memref.load %[[A]]
// CHECK-NEXT:        %[[XV0:.*]] = vector.broadcast %[[X]] : i8 to vector<8xi8>
// CHECK-NEXT:        %[[WW0:.*]] = arith.extsi %[[W0]] : vector<8xi8> to vector<8xi32>
// CHECK-NEXT:        %[[XW0:.*]] = arith.extsi %[[XV0]] : vector<8xi8> to vector<8xi32>
// CHECK-NEXT:        %[[P0:.*]] = arith.muli %[[XW0]], %[[WW0]] : vector<8xi32>
// CHECK-NEXT:        %[[S0:.*]] = arith.addi %[[P0]], %[[ACC0]] : vector<8xi32>
// CHECK-NEXT:        %[[XV1:.*]] = vector.broadcast %[[X]] : i8 to vector<8xi8>
// CHECK-NEXT:        %[[WW1:.*]] = arith.extsi %[[W1]] : vector<8xi8> to vector<8xi32>
// CHECK-NEXT:        %[[XW1:.*]] = arith.extsi %[[XV1]] : vector<8xi8> to vector<8xi32>
// CHECK-NEXT:        %[[P1:.*]] = arith.muli %[[XW1]], %[[WW1]] : vector<8xi32>
// CHECK-NEXT:        %[[S1:.*]] = arith.addi %[[P1]], %[[ACC1]] : vector<8xi32>
// CHECK-NEXT:        %[[XV2:.*]] = vector.broadcast %[[X]] : i8 to vector<8xi8>
// CHECK-NEXT:        %[[WW2:.*]] = arith.extsi %[[W2]] : vector<8xi8> to vector<8xi32>
// CHECK-NEXT:        %[[XW2:.*]] = arith.extsi %[[XV2]] : vector<8xi8> to vector<8xi32>
// CHECK-NEXT:        %[[P2:.*]] = arith.muli %[[XW2]], %[[WW2]] : vector<8xi32>
// CHECK-NEXT:        %[[S2:.*]] = arith.addi %[[P2]], %[[ACC2]] : vector<8xi32>
// CHECK-NEXT:        scf.yield %[[S0]], %[[S1]], %[[S2]]
// CHECK-COUNT-3:   vector.store %{{[^,]*}}, %[[C]]{{.*}} vector<8xi32>
// CHECK-NOT:     iter_args
// CHECK:         return

// LOADS:          func.func @mm_i8(
// LOADS-COUNT-30: vector.{{(masked)?}}load
// LOADS-NOT:      vector.{{(masked)?}}load
// LOADS:          return
// STORES:          func.func @mm_i8(
// STORES-COUNT-21: vector.{{(masked)?}}store
// STORES-NOT:      vector.{{(masked)?}}store
// STORES:          return
// OPS:          func.func @mm_i8(
// OPS-NOT:      arith.{{mulf|addf}}
// OPS-COUNT-42: arith.{{muli|addi}} {{.*}} : vector<8xi32>
// OPS-NOT:      arith.{{muli|addi|mulf|addf}} {{.*}} : vector
// OPS:          return
// WIDEN:          func.func @mm_i8(
// WIDEN-COUNT-42: arith.extsi %{{.*}} : vector<8xi8> to vector<8xi32>
// WIDEN-NOT:      arith.extsi
// WIDEN:          return

func.func @mm_i8(%a: memref<?x24xi8, strided<[24, 1], offset: ?>>, %b: memref<24x24xi8>,
              %c: memref<?x24xi32>) {
  linalg.matmul ins(%a, %b : memref<?x24xi8, strided<[24, 1], offset: ?>>, memref<24x24xi8>)
                outs(%c : memref<?x24xi32>)
  return
}

// -----

// An int8 depthwise convolution, as the f32 kernel: (4 + 2 + 1) pixels x 2
// channel vectors, 9 taps unrolled; each product one of two sign-extended
// i8 vectors (126 products, 252 extensions), the 14 stores vector<8xi32>.

// CHECK-LABEL: func.func @dw_i8(
// CHECK-SAME:    %[[IN:[^:]*]]: memref<1x6x10x16xi8>
// CHECK:         %[[W:.*]] = vector.load {{.*}} vector<8xi8>
// CHECK-NEXT:    %[[X:.*]] = vector.load %[[IN]]{{.*}} vector<8xi8>
// CHECK-NEXT:    %[[WW:.*]] = arith.extsi %[[W]] : vector<8xi8> to vector<8xi32>
// CHECK-NEXT:    %[[XW:.*]] = arith.extsi %[[X]] : vector<8xi8> to vector<8xi32>
// CHECK-NEXT:    arith.muli %[[XW]], %[[WW]] : vector<8xi32>
// CHECK:         return

// STORES:          func.func @dw_i8(
// STORES-COUNT-14: vector.store {{.*}}, vector<8xi32>
// STORES-NOT:      vector.{{(masked)?}}store
// STORES:          return
// OPS:           func.func @dw_i8(
// OPS-COUNT-126: arith.muli {{.*}} : vector<8xi32>
// OPS-NOT:       arith.muli {{.*}} : vector
// OPS:           return
// WIDEN:           func.func @dw_i8(
// WIDEN-COUNT-252: arith.extsi %{{.*}} : vector<8xi8> to vector<8xi32>
// WIDEN-NOT:       arith.extsi
// WIDEN:           return

func.func @dw_i8(%in: memref<1x6x10x16xi8>, %w: memref<3x3x16x1xi8>, %out: memref<1x4x8x16x1xi32>) {
  linalg.depthwise_conv_2d_nhwc_hwcm {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%in, %w : memref<1x6x10x16xi8>, memref<3x3x16x1xi8>) outs(%out : memref<1x4x8x16x1xi32>)
  return
}
