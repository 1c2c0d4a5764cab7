//===- NpyFuzzer.cpp - Fuzz target: the .npy reader -----------------------===//
//
// Bytes -> kiln::parseNpy (host/lib/Npy.cpp), what `kiln run
// --input=@x.npy` and the workbench's Run panel read. Invariants: an error
// is one line; a parsed array holds exactly shape x dtype bytes and survives
// serializeNpy -> parseNpy unchanged.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "kiln/Npy.h"

#include <vector>

using kiln::fuzz::fuzzCheck;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);
  std::vector<uint8_t> bytes(data, data + size);
  auto array = kiln::parseNpy(bytes, "input.npy");
  if (!array) {
    kiln::fuzz::expectOneLineError(array.takeError(), "parseNpy", input);
    return 0;
  }
  size_t elementSize = kiln::npyDtypeSize(array->dtype);
  fuzzCheck(elementSize > 0, "parsed an array of unsupported dtype " + array->dtype);
  uint64_t elements = 1;
  for (int64_t d : array->shape) {
    fuzzCheck(d >= 0, "parsed a negative dimension");
    fuzzCheck(!__builtin_mul_overflow(elements, static_cast<uint64_t>(d), &elements),
              "parsed a shape whose element count overflows 64 bits");
  }
  uint64_t expected = 0;
  fuzzCheck(!__builtin_mul_overflow(elements, elementSize, &expected) &&
                expected == array->data.size(),
            "data bytes do not match shape x dtype");
  auto again = kiln::parseNpy(kiln::serializeNpy(*array), "again.npy");
  fuzzCheck(static_cast<bool>(again), "serializeNpy output does not parse back");
  fuzzCheck(again->dtype == array->dtype && again->shape == array->shape &&
                again->data == array->data,
            "serializeNpy -> parseNpy changed the array");
  return 0;
}
