// RUN: not kiln-opt %s --pass-pipeline='builtin.module(kiln-form-dispatch-regions,kiln-outline-dispatches,kiln-tile-and-distribute-with{tile-dispatch=0 tile-sizes=1})' 2>&1 | FileCheck %s --check-prefix=TILE
// RUN: not kiln-opt %s --pass-pipeline='builtin.module(kiln-form-dispatch-regions-with{no-fusion=0})' 2>&1 | FileCheck %s --check-prefix=FUSION

// A model with no computation (its output is its input) has no dispatches:
// tile sizes or --no-fusion for dispatch 0 name it in the error instead of
// a range "ids 0 to -1" (which printed as 18446744073709551615).

// TILE:   error: tile sizes are given for dispatch 0, which does not exist (the model has no dispatches with these fusion settings; see kiln inspect)
// FUSION: error: --no-fusion names dispatch 0, which does not exist (the model has no dispatches; see kiln inspect)

func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
