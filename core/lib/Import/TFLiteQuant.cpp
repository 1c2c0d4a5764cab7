//===- TFLiteQuant.cpp - TFLite fixed-point multipliers and ranges --------===//
//
// The integer arithmetic facts TFLite's kernels rely on (see TFLiteQuant.h).
//
//===----------------------------------------------------------------------===//
#include "TFLiteQuant.h"

#include "kiln/Plan.h"

#include "mlir/IR/Builders.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace kiln::tfl {

QuantizedMultiplier quantizeMultiplier(double real) {
  QuantizedMultiplier result;
  if (real == 0.0)
    return result;
  int exponent = 0;
  double significand = std::frexp(real, &exponent); // [0.5, 1)
  auto fixed = static_cast<int64_t>(std::round(significand * (1LL << 31)));
  if (fixed == (1LL << 31)) {
    fixed /= 2;
    ++exponent;
  }
  if (exponent < -31) {
    exponent = 0;
    fixed = 0;
  }
  result.multiplier = static_cast<int32_t>(fixed);
  result.shift = exponent;
  return result;
}

std::pair<int32_t, int32_t> quantizedActivationRange(int activation,
                                                     const TensorQuant &output) {
  const float scale = output.scale();
  const int32_t zeroPoint = output.zeroPoint();
  auto quantize = [&](float f) {
    return zeroPoint + saturatingCast(std::round(f / scale));
  };
  int32_t lo = -128, hi = 127;
  switch (activation) {
  case 1: // RELU
    lo = std::max(lo, quantize(0.0f));
    break;
  case 2: // RELU_N1_TO_1
    lo = std::max(lo, quantize(-1.0f));
    hi = std::min(hi, quantize(1.0f));
    break;
  case 3: // RELU6
    lo = std::max(lo, quantize(0.0f));
    hi = std::min(hi, quantize(6.0f));
    break;
  default:
    break;
  }
  return {lo, hi};
}

std::string shortNumber(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

std::string describeQuant(const TensorQuant &quant) {
  TensorQuantization q;
  q.scales = quant.scales;
  for (int32_t zp : quant.zeroPoints)
    q.zeroPoints.push_back(quant.fromUint8 ? zp + 128 : zp);
  q.dimension = quant.perChannel() ? quant.dimension : -1;
  q.storage = quant.fromUint8 ? "u8" : "i8";
  return describeQuantization(q);
}

void setQuantizationAttribute(mlir::Operation *module,
                              const std::vector<std::optional<TensorQuant>> &quant,
                              llvm::function_ref<std::string(int)> nameOf,
                              llvm::function_ref<bool(int)> isConstant,
                              llvm::function_ref<std::vector<int64_t>(int)> readersOf) {
  mlir::MLIRContext *context = module->getContext();
  mlir::Builder b(context);
  mlir::NamedAttrList entries;
  for (size_t i = 0; i < quant.size(); ++i) {
    if (!quant[i])
      continue;
    const TensorQuant &q = *quant[i];
    std::string name = nameOf(static_cast<int>(i));
    if (entries.get(name))
      continue;
    llvm::SmallVector<int64_t> zeroPoints;
    for (int32_t zp : q.zeroPoints)
      zeroPoints.push_back(q.fromUint8 ? zp + 128 : zp);
    mlir::NamedAttrList fields;
    fields.append("scales", b.getF32ArrayAttr(q.scales));
    fields.append("zero_points", b.getI64ArrayAttr(zeroPoints));
    fields.append("dimension", b.getI64IntegerAttr(q.perChannel() ? q.dimension : -1));
    fields.append("storage", b.getStringAttr(q.fromUint8 ? "u8" : "i8"));
    fields.append("constant", b.getBoolAttr(isConstant(static_cast<int>(i))));
    if (std::vector<int64_t> readers = readersOf(static_cast<int>(i)); !readers.empty())
      fields.append("readers", b.getI64ArrayAttr(readers));
    entries.append(name, fields.getDictionary(context));
  }
  if (!entries.empty())
    module->setAttr(kQuantizationAttr, entries.getDictionary(context));
}

/// gemmlowp's SaturatingRoundingDoublingHighMul: (a * b * 2) >> 32, rounded
/// half up (a nudge of 2^30 before an arithmetic division by 2^31).
int32_t roundingDoublingHighMul(int32_t a, int32_t b) {
  if (a == b && a == std::numeric_limits<int32_t>::min())
    return std::numeric_limits<int32_t>::max();
  int64_t ab = static_cast<int64_t>(a) * b;
  int64_t nudge = ab >= 0 ? (1 << 30) : (1 - (1 << 30));
  return static_cast<int32_t>((ab + nudge) / (1LL << 31));
}

/// gemmlowp's RoundingDivideByPOT: x / 2^exponent rounded half away from
/// zero.
int32_t roundingDivideByPOT(int32_t x, int exponent) {
  int32_t mask = static_cast<int32_t>((1LL << exponent) - 1);
  int32_t remainder = x & mask;
  int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

/// TFLite's MultiplyByQuantizedMultiplier (quantization_util / common.h).
int32_t multiplyByQuantizedMultiplier(int32_t x, QuantizedMultiplier m) {
  // A multiplier of 2^31 or more (absurd scales) saturates instead of
  // shifting past the word (undefined in C++ and in TFLite alike).
  if (m.shift > 30)
    return x > 0 ? std::numeric_limits<int32_t>::max()
                 : (x < 0 ? std::numeric_limits<int32_t>::min() : 0);
  int left = m.shift > 0 ? m.shift : 0, right = m.shift > 0 ? 0 : -m.shift;
  return roundingDivideByPOT(
      roundingDoublingHighMul(static_cast<int32_t>(static_cast<uint32_t>(x) << left), m.multiplier),
      right);
}

/// gemmlowp's SaturatingRoundingMultiplyByPOT for an exponent >= 0: x *
/// 2^exponent saturated to int32.
static int32_t saturatingLeftShift(int32_t x, int exponent) {
  int64_t r = static_cast<int64_t>(x) * (int64_t{1} << exponent);
  return static_cast<int32_t>(std::clamp<int64_t>(r, std::numeric_limits<int32_t>::min(),
                                                  std::numeric_limits<int32_t>::max()));
}

QuantizedMultiplier invSqrtMultiplier(int32_t input) {
  if (input <= 1)
    return {std::numeric_limits<int32_t>::max(), 0};
  int shift = 11; // TFLite's right shift of the result
  while (input >= (1 << 29)) {
    input /= 4;
    ++shift;
  }
  // Normalize by whole bit pairs into [2^27, 2^29).
  int leadingZeros = 0;
  for (uint32_t v = static_cast<uint32_t>(input); !(v & 0x80000000u); v <<= 1)
    ++leadingZeros;
  int pairs = (leadingZeros - 1) / 2 - 1;
  shift -= pairs;
  input <<= 2 * pairs;
  // Fixed point with 3 integer bits: raw r means r / 2^28. A product of
  // values with i and j integer bits has i + j (roundingDoublingHighMul);
  // back to 3 bits is a saturating left shift by i + j - 3.
  const int32_t x0 = input >> 1;
  const int32_t halfInput = roundingDivideByPOT(x0, 1);
  const int32_t halfThree = (1 << 28) + (1 << 27); // 1.5
  int32_t x = 1 << 28;                             // 1.0
  for (int i = 0; i < 5; ++i) {
    int32_t cube =
        saturatingLeftShift(roundingDoublingHighMul(roundingDoublingHighMul(x, x), x), 6);
    int32_t next = roundingDoublingHighMul(halfThree, x) - roundingDoublingHighMul(halfInput, cube);
    x = saturatingLeftShift(next, 3);
  }
  const int32_t halfSqrt2 = 1518500250; // sqrt(2) / 2 with 0 integer bits
  int32_t multiplier = roundingDoublingHighMul(x, halfSqrt2);
  if (shift < 0) {
    multiplier = static_cast<int32_t>(static_cast<uint32_t>(multiplier) << -shift);
    shift = 0;
  }
  return {multiplier, -shift};
}

static int leadingZeros(uint32_t v) {
  int n = 0;
  for (; n < 32 && !(v & 0x80000000u); v <<= 1)
    ++n;
  return n;
}

/// gemmlowp's one_over_one_plus_x_for_x_in_0_1 on `a` (raw, 0 integer
/// bits): three Newton-Raphson steps in 2-integer-bit fixed point from
/// 48/17 - 32/17 d, d = (1 + a) / 2; returns 1 / (1 + a) in 0 integer bits.
static int32_t oneOverOnePlusX(int32_t a) {
  int64_t sum = static_cast<int64_t>(a) + std::numeric_limits<int32_t>::max();
  const int32_t halfDenominator = static_cast<int32_t>((sum + (sum >= 0 ? 1 : -1)) / 2);
  const int32_t c48over17 = 1515870810, cNeg32over17 = -1010580540, one = 1 << 29;
  int32_t x = c48over17 + roundingDoublingHighMul(halfDenominator, cNeg32over17);
  for (int i = 0; i < 3; ++i) {
    int32_t product = roundingDoublingHighMul(halfDenominator, x);
    x = x + saturatingLeftShift(roundingDoublingHighMul(x, one - product), 2);
  }
  return saturatingLeftShift(x, 1);
}

int32_t quantizedDivide(int32_t x, int32_t y, QuantizedMultiplier m) {
  if (y < 0) {
    x = -x;
    y = -y;
  }
  // GetReciprocal(y, 31): y normalized to [1, 2) as 1 + f, 1 / (1 + f) and
  // the count of bits above the unit.
  int headroomPlusOne = leadingZeros(static_cast<uint32_t>(y));
  int recipShift = 31 - headroomPlusOne;
  int32_t f = static_cast<int32_t>((static_cast<uint32_t>(y) << headroomPlusOne) - (1u << 31));
  int32_t inverse = oneOverOnePlusX(f);
  // CountLeadingSignBits(x), then MultiplyByQuantizedMultiplierGreaterThanOne.
  int headroom = x >= 0 ? leadingZeros(static_cast<uint32_t>(x)) - 1
                        : leadingZeros(~static_cast<uint32_t>(x)) - 1;
  int32_t unscaled =
      roundingDoublingHighMul(static_cast<int32_t>(static_cast<uint32_t>(x) << headroom), inverse);
  int exponent = recipShift + headroom - m.shift; // >= 0 for int8 operands
  if (exponent > 31)
    return 0;
  return roundingDivideByPOT(roundingDoublingHighMul(unscaled, m.multiplier),
                             std::max(exponent, 0));
}

// gemmlowp's 16-bit primitives, as TFLite's int8 HARD_SWISH uses them.
int16_t roundingDoublingHighMul16(int16_t a, int16_t b) {
  if (a == b && a == std::numeric_limits<int16_t>::min())
    return std::numeric_limits<int16_t>::max();
  int32_t ab = static_cast<int32_t>(a) * b;
  int32_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
  return static_cast<int16_t>((ab + nudge) / (1 << 15));
}
int16_t doublingHighMul16(int16_t a, int16_t b) {
  if (a == b && a == std::numeric_limits<int16_t>::min())
    return std::numeric_limits<int16_t>::max();
  return static_cast<int16_t>((static_cast<int32_t>(a) * b) / (1 << 15));
}
int16_t saturatingLeftShift16(int16_t value, int amount) {
  int64_t r = static_cast<int64_t>(value) * (1LL << amount);
  return static_cast<int16_t>(std::clamp<int64_t>(r, -32768, 32767));
}
/// TFLite's DownScaleInt32ToInt16Multiplier: rounds a 31-bit multiplier to
/// 15 bits.
int16_t downScaleMultiplier(int32_t m) {
  if (m >= std::numeric_limits<int32_t>::max() - (1 << 15))
    return std::numeric_limits<int16_t>::max();
  return static_cast<int16_t>((m + (1 << 15)) >> 16);
}

} // namespace kiln::tfl
