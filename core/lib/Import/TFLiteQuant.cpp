//===- TFLiteQuant.cpp - TFLite fixed-point multipliers and ranges --------===//
//
// The integer arithmetic facts TFLite's kernels rely on (see TFLiteQuant.h).
//
//===----------------------------------------------------------------------===//
#include "TFLiteQuant.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

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
    return zeroPoint + static_cast<int32_t>(std::round(f / scale));
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

std::string describeQuant(const TensorQuant &quant) {
  char text[160];
  int32_t shift = quant.fromUint8 ? 128 : 0;
  if (!quant.perChannel()) {
    std::snprintf(text, sizeof(text), "scale %g zero point %d", quant.scale(),
                  quant.zeroPoint() + shift);
    return text;
  }
  auto [lo, hi] = std::minmax_element(quant.scales.begin(), quant.scales.end());
  std::snprintf(text, sizeof(text),
                "per-channel (%zu scales %g..%g, dimension %d)",
                quant.scales.size(), *lo, *hi, quant.dimension);
  return text;
}

} // namespace kiln::tfl
