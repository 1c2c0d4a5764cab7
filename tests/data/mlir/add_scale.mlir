// Two-input TOSA model used by the CLI tests: sum = (a + b) * 0.5.
func.func @main(%a: tensor<2x3xf32> {kiln.name = "a"}, %b: tensor<2x3xf32> {kiln.name = "b"})
    -> (tensor<2x3xf32> {kiln.name = "sum"}) {
  %half = "tosa.const"() {value = dense<0.5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %0 = "tosa.add"(%a, %b) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "tosa.mul"(%0, %half) {shift = 0 : i32} : (tensor<2x3xf32>, tensor<1x1xf32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}
