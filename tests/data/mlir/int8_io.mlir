// Integer TOSA model for the CLI's int8/uint8 I/O tests (issue 12, item 7):
//   sum = clamp(a + b, -128, 127): an int8 add computed in i32, saturating;
//   c_out = c: a uint8 input passed through to a uint8 output.
func.func @main(%a: tensor<2x3xi8> {kiln.name = "a"}, %b: tensor<2x3xi8> {kiln.name = "b"},
                %c: tensor<4xui8> {kiln.name = "c"})
    -> (tensor<2x3xi8> {kiln.name = "sum"}, tensor<4xui8> {kiln.name = "c_out"}) {
  %0 = "tosa.cast"(%a) : (tensor<2x3xi8>) -> tensor<2x3xi32>
  %1 = "tosa.cast"(%b) : (tensor<2x3xi8>) -> tensor<2x3xi32>
  %2 = "tosa.add"(%0, %1) : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  %3 = "tosa.clamp"(%2) {min_int = -128 : i64, max_int = 127 : i64, min_fp = 0.0 : f32, max_fp = 0.0 : f32} : (tensor<2x3xi32>) -> tensor<2x3xi32>
  %4 = "tosa.cast"(%3) : (tensor<2x3xi32>) -> tensor<2x3xi8>
  %5 = "tosa.identity"(%c) : (tensor<4xui8>) -> tensor<4xui8>
  return %4, %5 : tensor<2x3xi8>, tensor<4xui8>
}
