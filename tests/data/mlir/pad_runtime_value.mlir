// tosa.pad whose pad value is computed (a reshaped model input), not a
// tosa.const: refused with one error (Cli.TosaPadWithComputedValueIsOneError).
func.func @main(%x: tensor<1x4xf32>, %v: tensor<1xf32>) -> tensor<1x6xf32> {
  %p = "tosa.const"() {value = dense<[[0, 0], [1, 1]]> : tensor<2x2xi32>} : () -> tensor<2x2xi32>
  %vs = "tosa.reshape"(%v) {new_shape = array<i64>} : (tensor<1xf32>) -> tensor<f32>
  %0 = "tosa.pad"(%x, %p, %vs) : (tensor<1x4xf32>, tensor<2x2xi32>, tensor<f32>) -> tensor<1x6xf32>
  return %0 : tensor<1x6xf32>
}
