// RUN: kiln-opt %s --split-input-file --kiln-form-dispatch-regions --kiln-outline-dispatches --kiln-tile-and-distribute | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-workgroup-bytes=4096 --pass-pipeline='builtin.module(kiln-form-dispatch-regions,kiln-outline-dispatches,kiln-tile-and-distribute)' | FileCheck %s --check-prefix=MCU
// RUN: kiln-opt %s --split-input-file --kiln-workgroup-bytes=4096 --kiln-vector-lanes=1 --pass-pipeline='builtin.module(kiln-form-dispatch-regions,kiln-outline-dispatches,kiln-tile-and-distribute-with{dividing-tiles=true})' | FileCheck %s --check-prefix=MCU-DIV

// The tiling heuristic: each dispatch's workgroup tile sizes (kiln.tile_sizes,
// 0 = not tiled) and workgroup counts, from the dispatch options' budget.
// The CHECK lines are kiln-opt's defaults (an application core: a 64 KiB
// budget, 16-byte vectors); the MCU lines a Cortex-M's budget of 4 KiB
// (kMicrocontrollerWorkgroupBytes) with tile counts that threads split
// evenly, the MCU-DIV lines the same budget with dividing tiles (one
// thread, as KernelTarget gives thumbv7em) and 4-byte vectors. Explicit
// tile sizes: tile-and-distribute-tile-sizes.mlir.

// relu over a 1x64x64x32 f32 activation: one elementwise dispatch.
// Innermost first, f32 = 4 bytes:
//   d3 (C = 32): 32 * 4      =   128 B <= 64 KiB, keep whole
//   d2 (W = 64): 64 * 128 B  =  8 KiB  <= 64 KiB, keep whole (one row)
//   d1 (H = 64): 64 * 8 KiB  = 512 KiB >  64 KiB -> tile to
//                floor(64 KiB / 8 KiB) = 8 rows (not innermost: no SIMD
//                rounding)
//   d0 (N = 1): unit, left alone.
// One tiled loop, 64 / 8 = 8 tiles -> x = 8 workgroups. The dispatch takes
// (x, out) and the workgroup ids x, y, z; the tile loop became workgroup id
// x (no scf.for left), which the tile's offset along H depends on; one
// generic on an 8-row tile. @main passes the three ids as 0.

// CHECK-LABEL: func.func private @main_dispatch_0(%{{[^:]*}}: tensor<1x64x64x32xf32>
// CHECK-SAME:    {{[^,]*}}, %[[OUT:[^:]*]]: tensor<1x64x64x32xf32> {{[^,]*}}, %[[WX:[^:]*]]: index, %{{[^:]*}}: index, %{{[^:]*}}: index) -> tensor<1x64x64x32xf32>
// CHECK-SAME:    kiln.loop_ranges = [1, 64, 64, 32]
// CHECK-SAME:    kiln.tile_sizes = [0, 8, 0, 0]
// CHECK-SAME:    kiln.workgroup_count = [8, 1, 1]
// CHECK-NOT:     scf.for
// CHECK:         %[[H:.*]] = arith.muli %[[WX]], %{{.*}} : index
// CHECK-NOT:     scf.for
// CHECK:         tensor.extract_slice %[[X:[^ ]*]][0, %[[H]], 0, 0] [1, 8, 64, 32] [1, 1, 1, 1]
// CHECK-NOT:     scf.for
// CHECK:         linalg.generic
// CHECK:         } -> tensor<1x8x64x32xf32>
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     scf.for
// CHECK:         tensor.insert_slice %{{.*}} into %[[OUT]][0, %[[H]], 0, 0] [1, 8, 64, 32]
// CHECK-LABEL: func.func @main(%{{.*}}: tensor<1x64x64x32xf32>)
// CHECK:         %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:    call @main_dispatch_0(%{{[^,]*}}, %{{[^,]*}}, %[[ZERO]], %[[ZERO]], %[[ZERO]])
#nhwc = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @main(%x: tensor<1x64x64x32xf32>) -> tensor<1x64x64x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x64x64x32xf32>
  %r = linalg.generic {indexing_maps = [#nhwc, #nhwc],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x64x64x32xf32>) outs(%e : tensor<1x64x64x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maxf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x64x64x32xf32> loc("RELU#0")
  return %r : tensor<1x64x64x32xf32>
}

// -----

// relu over 4096x24 f32 rows (a 1x1 convolution's output as a GEMM).
// Application cores (64 KiB, at least 8 workgroups of 4 KiB): 393216 / 8 =
// 48 KiB -> 512 rows, 8 workgroups. A Cortex-M's 4 KiB of output per
// workgroup: one row is 24 * 4 = 96 bytes, floor(4096 / 96) = 42 rows;
// without dividing tiles (threads to balance) ceil(4096 / 42) = 98 tiles,
// rounded up to 100 (a multiple of 4), of ceil(4096 / 100) = 41 rows; with
// them, the largest divisor of 4096 <= 42 = 32 rows, 128 workgroups of
// equal, static extent.

// CHECK-LABEL:   func.func private @main_dispatch_0(%{{.*}}: tensor<4096x24xf32>
// CHECK-SAME:      kiln.tile_sizes = [512, 0]
// CHECK-SAME:      kiln.workgroup_count = [8, 1, 1]
// MCU-LABEL:     func.func private @main_dispatch_0(%{{.*}}: tensor<4096x24xf32>
// MCU-SAME:        kiln.tile_sizes = [41, 0]
// MCU-SAME:        kiln.workgroup_count = [100, 1, 1]
// MCU-DIV-LABEL: func.func private @main_dispatch_0(%{{.*}}: tensor<4096x24xf32>
// MCU-DIV-SAME:    kiln.tile_sizes = [32, 0]
// MCU-DIV-SAME:    kiln.workgroup_count = [128, 1, 1]
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%x: tensor<4096x24xf32>) -> tensor<4096x24xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4096x24xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4096x24xf32>) outs(%e : tensor<4096x24xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maxf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4096x24xf32> loc("RELU#0")
  return %r : tensor<4096x24xf32>
}

// -----

// An int8 1x1 convolution as a GEMM (person_detect's CONV_2D #2: 2304
// pixels x 8 -> 16 channels): i8 x i8 products accumulated in an i32 tile,
// then requantized to the i8 output by the fused consumer. The tile keeps
// 4-byte accumulators per 1-byte output element, so the Cortex-M's 4 KiB
// budget is 1 KiB of output: one row is 16 bytes, floor(1024 / 16) = 64
// rows (divides 2304: 36 workgroups), whose i32 accumulators are
// 64 * 16 * 4 = 4096 bytes. (Counting the i8 output alone gave 256 rows and
// a 16 KiB accumulator tile on the stack.) Application cores: 64 KiB of
// accumulators is 16 KiB of output, but the parallelism floor (8
// workgroups of at least 4 KiB of output) binds first and stays in output
// bytes: 36864 / 8 = 4608 bytes, 288 rows, 8 workgroups.

// CHECK-LABEL:   func.func private @main_dispatch_0(%{{.*}}: tensor<2304x8xi8>
// CHECK-SAME:      kiln.tile_sizes = [288, 0]
// CHECK-SAME:      kiln.workgroup_count = [8, 1, 1]
// MCU-DIV-LABEL: func.func private @main_dispatch_0(%{{.*}}: tensor<2304x8xi8>
// MCU-DIV-SAME:    kiln.tile_sizes = [64, 0]
// MCU-DIV-SAME:    kiln.workgroup_count = [36, 1, 1]
// MCU-DIV:         linalg.matmul {{.*}} -> tensor<64x16xi32>
// MCU-DIV-NOT:     linalg.matmul
#xk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%x: tensor<2304x8xi8>) -> tensor<2304x16xi8> {
  %w = arith.constant dense<3> : tensor<8x16xi8>
  %zero = arith.constant 0 : i32
  %shift = arith.constant 6 : i32
  %e = tensor.empty() : tensor<2304x16xi32>
  %f = linalg.fill ins(%zero : i32) outs(%e : tensor<2304x16xi32>) -> tensor<2304x16xi32>
  %acc = linalg.matmul ins(%x, %w : tensor<2304x8xi8>, tensor<8x16xi8>)
      outs(%f : tensor<2304x16xi32>) -> tensor<2304x16xi32> loc("CONV_2D#0")
  %o = tensor.empty() : tensor<2304x16xi8>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%acc : tensor<2304x16xi32>) outs(%o : tensor<2304x16xi8>) {
  ^bb0(%in: i32, %out: i8):
    %s = arith.shrsi %in, %shift : i32
    %t = arith.trunci %s : i32 to i8
    linalg.yield %t : i8
  } -> tensor<2304x16xi8> loc("CONV_2D#0")
  return %r : tensor<2304x16xi8>
}
