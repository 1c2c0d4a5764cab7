//===- TFLiteQuant.h - TFLite affine quantization facts ------------*- C++ -*-===//
//
// What Kiln reads of a quantized TFLite tensor and the fixed-point
// arithmetic TensorFlow Lite's integer kernels use, so the importer can
// reproduce them bit for bit with tosa.rescale:
//
//   real = scale * (q - zero_point)            (TFLite schema v3,
//                                               QuantizationParameters)
//
// uint8 tensors are computed in int8 internally: q8 = q - 128 and
// zero_point8 = zero_point - 128 give the same real values, so every
// integer converter handles one storage type (i8) and the model keeps its
// uint8 inputs and outputs (the importer flips bit 7 at the boundary).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CORE_IMPORT_TFLITEQUANT_H
#define KILN_CORE_IMPORT_TFLITEQUANT_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kiln::tfl {

/// The affine quantization of one int8/uint8/int32 tensor, checked by
/// ModelImporter::checkQuantization (scales positive and finite, zero points
/// in the storage type's range, one scale or one per channel of
/// `dimension`).
struct TensorQuant {
  /// One scale (per tensor) or one per channel, as the file stores them
  /// (float32).
  std::vector<float> scales;
  /// Same count as `scales`; in the i8 storage domain, i.e. a uint8
  /// tensor's zero point minus 128.
  std::vector<int32_t> zeroPoints;
  /// The channel dimension of a per-channel tensor (`quantized_dimension`);
  /// 0 and meaningless for a per-tensor one.
  int dimension = 0;
  /// The file stores the tensor as uint8 (Kiln computes it as int8).
  bool fromUint8 = false;

  bool perChannel() const { return scales.size() > 1; }
  float scale() const { return scales.front(); }
  int32_t zeroPoint() const { return zeroPoints.front(); }
};

/// A real multiplier as TFLite's integer kernels apply it:
/// real ~= multiplier * 2^(shift - 31), multiplier in [2^30, 2^31) (or 0).
/// `shift` follows TFLite's sign convention (positive: left shift).
struct QuantizedMultiplier {
  int32_t multiplier = 0;
  int shift = 0;
};

/// TFLite's QuantizeMultiplier (tensorflow/lite/kernels/internal/
/// quantization_util.cc): frexp, the significand rounded half away from
/// zero to 31 bits, a significand of exactly 2^31 halved with the exponent
/// raised, multipliers below 2^-31 flushed to zero. `real` must be >= 0.
QuantizedMultiplier quantizeMultiplier(double real);

/// The quantized clamp range [lo, hi] of a fused activation on an int8
/// output (TFLite's CalculateActivationRangeQuantized: bounds are
/// zero_point + round(bound / scale), computed in float, intersected with
/// [-128, 127]). `activation`: 0 NONE, 1 RELU, 2 RELU_N1_TO_1, 3 RELU6
/// (schema ActivationFunctionType values); others are rejected by callers.
std::pair<int32_t, int32_t> quantizedActivationRange(int activation,
                                                     const TensorQuant &output);

// TFLite's fixed-point primitives (gemmlowp's fixedpoint.h and TFLite's
// common.h), evaluated at import to fill int8 lookup tables and constants
// exactly as TFLite's integer kernels compute them.

/// gemmlowp's SaturatingRoundingDoublingHighMul: (a * b * 2) >> 32, rounded
/// half up; INT32_MIN * INT32_MIN saturates to INT32_MAX.
int32_t roundingDoublingHighMul(int32_t a, int32_t b);

/// gemmlowp's RoundingDivideByPOT: x / 2^exponent (0 <= exponent <= 31)
/// rounded half away from zero.
int32_t roundingDivideByPOT(int32_t x, int exponent);

/// TFLite's MultiplyByQuantizedMultiplier: x * m.multiplier * 2^(m.shift -
/// 31) with TFLite's rounding; shifts above 30 (absurd scales) saturate.
int32_t multiplyByQuantizedMultiplier(int32_t x, QuantizedMultiplier m);

/// TFLite's GetInvSqrtQuantizedMultiplierExp (tensorflow/lite/kernels/
/// internal/common.h) with reverse_shift -1, as int8 RSQRT calls it:
/// 1 / sqrt(input) as a multiplier and left shift, by five Newton-Raphson
/// steps in gemmlowp's 3-integer-bit fixed point on the input normalized
/// to [2^27, 2^29). `input` >= 0; 0 and 1 give INT32_MAX and shift 0.
QuantizedMultiplier invSqrtMultiplier(int32_t input);

/// The quotient of TFLite's quantized DIV before the output zero point
/// (tensorflow/lite/kernels/internal/reference/div.h DivElementwise, as
/// TFLite Micro's int8 DIV runs it): x / y (both already minus their zero
/// points, y != 0; a negative y flips both signs) as x times GetReciprocal(y)
/// (gemmlowp's one_over_one_plus_x_for_x_in_0_1 on y normalized to [1, 2))
/// after shifting x left by its headroom, then multiplied by `m` (scale_x /
/// (scale_y scale_out)) with the shifts taken back.
int32_t quantizedDivide(int32_t x, int32_t y, QuantizedMultiplier m);

// gemmlowp's 16-bit primitives, as TFLite's int8 HARD_SWISH uses them.
/// (a * b * 2) >> 16 rounded half up, saturating INT16_MIN * INT16_MIN.
int16_t roundingDoublingHighMul16(int16_t a, int16_t b);
/// (a * b * 2) >> 16 truncated toward zero, saturating INT16_MIN * INT16_MIN.
int16_t doublingHighMul16(int16_t a, int16_t b);
/// value * 2^amount saturated to int16.
int16_t saturatingLeftShift16(int16_t value, int amount);
/// TFLite's DownScaleInt32ToInt16Multiplier: rounds a 31-bit multiplier to
/// 15 bits.
int16_t downScaleMultiplier(int32_t m);

/// `value` (a float TFLite converts with static_cast<int32_t>) as int32,
/// saturated to [-2^24, 2^24] first: the values Kiln converts this way only
/// matter within the int8/uint8 range, and C++ leaves the conversion of an
/// out-of-range float undefined (a scale near 0 gives one).
inline int32_t saturatingCast(float value) {
  if (!(value >= -16777216.0f)) // also NaN
    return value != value ? 0 : -16777216;
  return value > 16777216.0f ? 16777216 : static_cast<int32_t>(value);
}

/// `value` as printf's %g writes it ("0.1", "-1e-09", "nan"): how error
/// messages print scales and multipliers.
std::string shortNumber(double value);

/// "scale 0.0039 zero point -128" or "per-channel: 8 scales, min 0.001 max
/// 0.02, dimension 3": kiln::describeQuantization (kiln/Plan.h) of the
/// tensor as the file stores it, so errors and the inspector read alike.
std::string describeQuant(const TensorQuant &quant);

/// Name of the module attribute that carries the model's quantization from
/// the importer to the plan builder (BuildPlan.cpp), which turns it into
/// CompilationPlan::quantization.
inline constexpr const char kQuantizationAttr[] = "kiln.quantization";

/// Sets `kiln.quantization` on `module` when any tensor is quantized (a
/// float model's module gets no attribute): a dictionary holding, for every
/// tensor with a checked quantization (`quant[i]` set), keyed by `nameOf(i)`
/// (the first of equal names wins), {scales: array of f32, zero_points:
/// array of i64 as the file stores them (a uint8 tensor's in [0, 255]),
/// dimension: i64 (the quantized_dimension of a per-channel tensor, -1 per
/// tensor), storage: "i8" or "u8", constant: bool (`isConstant(i)`: weights
/// and biases), readers: array of i64 (`readersOf(i)`: the operator indices
/// that read the tensor as weights, in file order; present only when not
/// empty, so int32 biases and activations have none)}.
void setQuantizationAttribute(mlir::Operation *module,
                              const std::vector<std::optional<TensorQuant>> &quant,
                              llvm::function_ref<std::string(int)> nameOf,
                              llvm::function_ref<bool(int)> isConstant,
                              llvm::function_ref<std::vector<int64_t>(int)> readersOf);

} // namespace kiln::tfl

#endif
