// RUN: kiln-opt %s --pass-pipeline='builtin.module(kiln-form-dispatch-regions,kiln-outline-dispatches,kiln-tile-and-distribute-with{tile-dispatch=0 tile-sizes=0,5,0,0})' | FileCheck %s --check-prefix=RELU5
// RUN: kiln-opt %s --pass-pipeline='builtin.module(kiln-form-dispatch-regions,kiln-outline-dispatches,kiln-tile-and-distribute-with{tile-dispatch=1 tile-sizes=2,0,0})' | FileCheck %s --check-prefix=MATMUL2
// RUN: not kiln-opt %s --pass-pipeline='builtin.module(kiln-form-dispatch-regions,kiln-outline-dispatches,kiln-tile-and-distribute-with{tile-dispatch=1 tile-sizes=0,0,4})' 2>&1 | FileCheck %s --check-prefix=REDUCTION
// RUN: not kiln-opt %s --pass-pipeline='builtin.module(kiln-form-dispatch-regions,kiln-outline-dispatches,kiln-tile-and-distribute-with{tile-dispatch=1 tile-sizes=5,0,0})' 2>&1 | FileCheck %s --check-prefix=TOO-LARGE
// RUN: not kiln-opt %s --pass-pipeline='builtin.module(kiln-form-dispatch-regions,kiln-outline-dispatches,kiln-tile-and-distribute-with{tile-dispatch=2 tile-sizes=0,8,0,0})' 2>&1 | FileCheck %s --check-prefix=MISSING

// Explicit workgroup tile sizes (kiln compile --tile-sizes) for one of the
// two dispatches of this model: 0, a relu over a 1x64x64x32 activation
// (loops N, H, W, C), and 1, a fully connected layer (loops m = 4, n = 2,
// k = 8, k a reduction). The heuristic's own tiles:
// tile-and-distribute.mlir.

// Tiles of 5 rows along H, which does not divide 64, are recorded as given:
// ceil(64 / 5) = 13 workgroups (12 full tiles of 5 rows and one of 4), and
// the tile loop still becomes the workgroup id (no scf.for).

// RELU5-LABEL: func.func private @main_dispatch_0(
// RELU5-SAME:    %{{[^:]*}}: tensor<1x64x64x32xf32> {{[^,]*}}, %{{[^:]*}}: tensor<1x64x64x32xf32> {{[^,]*}}, %{{[^:]*}}: index, %{{[^:]*}}: index, %{{[^:]*}}: index) -> tensor<1x64x64x32xf32>
// RELU5-SAME:    kiln.tile_sizes = [0, 5, 0, 0]
// RELU5-SAME:    kiln.workgroup_count = [13, 1, 1]
// RELU5-NOT:     scf.for
// RELU5-LABEL: func.func private @main_dispatch_1(

// The matmul tiled on m alone (its parallel loops may be split): 2 rows, 2
// workgroups.

// MATMUL2-LABEL: func.func private @main_dispatch_1(
// MATMUL2-SAME:    kiln.tile_sizes = [2, 0, 0]
// MATMUL2-SAME:    kiln.workgroup_count = [2, 1, 1]

// Splitting the reduction loop k fails, as does a tile of 5 on m = 4 (never
// silently clamped), and tile sizes for a dispatch 2 that does not exist.

// REDUCTION: error: {{.*}}dispatch 1: loop 2 is a reduction and cannot be split across workgroups
// TOO-LARGE: error: {{.*}}dispatch 1: tile size 5 for loop 0 exceeds the loop's range 4
// MISSING:   error: tile sizes are given for dispatch 2, which does not exist (2 dispatches, ids 0 to 1

#nhwc = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @main(%x: tensor<1x64x64x32xf32>, %a: tensor<4x8xf32>, %w: tensor<8x2xf32>)
    -> (tensor<1x64x64x32xf32>, tensor<4x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x64x64x32xf32>
  %r = linalg.generic {indexing_maps = [#nhwc, #nhwc],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x64x64x32xf32>) outs(%e : tensor<1x64x64x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maxf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x64x64x32xf32> loc("RELU#0")
  %e2 = tensor.empty() : tensor<4x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %mm = linalg.matmul ins(%a, %w : tensor<4x8xf32>, tensor<8x2xf32>)
                      outs(%f : tensor<4x2xf32>) -> tensor<4x2xf32> loc("FULLY_CONNECTED#1")
  return %r, %mm : tensor<1x64x64x32xf32>, tensor<4x2xf32>
}
