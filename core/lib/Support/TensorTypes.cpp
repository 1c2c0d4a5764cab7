//===- TensorTypes.cpp - Element types and I/O signatures -----------------===//
#include "kiln/TensorTypes.h"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace kiln {

size_t npyDtypeSize(const std::string &dtype) {
  if (dtype == "<f4" || dtype == "<i4" || dtype == "<u4")
    return 4;
  if (dtype == "<f2" || dtype == "<i2" || dtype == "<u2")
    return 2;
  if (dtype == "<i8" || dtype == "<f8" || dtype == "<u8")
    return 8;
  if (dtype == "|i1" || dtype == "|u1" || dtype == "|b1")
    return 1;
  return 0;
}

bool isIntegerDtype(const std::string &dtype) {
  return npyDtypeSize(dtype) != 0 && (dtype[1] == 'i' || dtype[1] == 'u' || dtype[1] == 'b');
}

namespace {
/// (dtype descriptor, element type name) pairs.
const std::pair<const char *, const char *> kElementTypes[] = {
    {"<f4", "f32"}, {"<f2", "f16"}, {"<i4", "i32"}, {"<i8", "i64"},
    {"|i1", "i8"},  {"|u1", "u8"},  {"|b1", "i1"},  {"<f8", "f64"}};
} // namespace

std::string elementTypeName(const std::string &dtype) {
  for (const auto &[descr, name] : kElementTypes)
    if (dtype == descr)
      return name;
  return dtype;
}

std::string dtypeOfElementType(llvm::StringRef name) {
  for (const auto &[descr, typeName] : kElementTypes)
    if (name == typeName)
      return descr;
  return "";
}

std::string tensorTypeText(const std::vector<int64_t> &shape, const std::string &dtype) {
  std::string s;
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + elementTypeName(dtype);
}

std::string quantizationText(const IOQuantization &q) {
  if (!q.quantized())
    return "none";
  char text[160];
  if (q.dimension < 0) {
    std::snprintf(text, sizeof(text), "scale %g zero point %d", q.scales.front(),
                  q.zeroPoints.empty() ? 0 : q.zeroPoints.front());
    return text;
  }
  auto [lo, hi] = std::minmax_element(q.scales.begin(), q.scales.end());
  std::snprintf(text, sizeof(text), "per-channel: %zu scales, min %g max %g, dimension %d",
                q.scales.size(), *lo, *hi, q.dimension);
  return text;
}

} // namespace kiln
