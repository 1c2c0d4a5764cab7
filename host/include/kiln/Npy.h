//===- kiln/Npy.h - NumPy .npy files ---------------------------*- C++ -*-===//
//
// Reads and writes NumPy `.npy` arrays (format versions 1.0-3.0, little
// endian, C order; dtypes <f4 <f2 <i4 <i8 |i1 |u1 |b1), the format
// `iree-run-module --input=@x.npy` takes. Spec: numpy.lib.format
// ("NEP 1 - A Simple File Format for NumPy Arrays"). Part of kiln_host
// (host/); the dtype names themselves are core's (kiln/TensorTypes.h).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_NPY_H
#define KILN_NPY_H

#include "kiln/TensorTypes.h"

#include <cstdint>
#include <string>
#include <vector>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

namespace kiln {

/// An n-dimensional array: dtype descriptor ("<f4", "<i4", ...), shape in
/// elements (row-major) and raw little-endian bytes.
struct NpyArray {
  std::string dtype = "<f4";
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;

  /// Number of elements (1 for a 0-d array).
  int64_t numElements() const;
};

/// Element `i` (row-major, 0 <= i < numElements()) of an array whose dtype
/// isIntegerDtype (kiln/TensorTypes.h), widened to int64 (sign-extended for signed types; a <u8
/// value above INT64_MAX wraps, which no Kiln tensor holds).
int64_t integerElement(const NpyArray &array, int64_t i);

/// Parses .npy bytes. Errors say what is wrong (bad magic, big-endian or
/// Fortran-order data, unsupported dtype, size mismatch). `what` names the
/// file in messages.
llvm::Expected<NpyArray> parseNpy(llvm::ArrayRef<uint8_t> bytes,
                                  const std::string &what);

/// Reads a .npy file; errors name the path.
llvm::Expected<NpyArray> readNpyFile(const std::string &path);

/// Resizes `bytes` to `n` zero bytes without throwing: an error "cannot
/// allocate N bytes for WHAT" when memory runs out (std::vector would throw
/// std::bad_alloc, and under AddressSanitizer a failed operator new stops
/// the process).
llvm::Error allocateBytes(std::vector<uint8_t> &bytes, uint64_t n, const llvm::Twine &what);

/// What `kiln run` and the workbench's Run panel show of an output: its
/// minimum, maximum and mean and its first elements (row-major), as text.
/// float32: "%.6g"; integer and bool dtypes (isIntegerDtype): the exact
/// stored integers (int8 outputs are shown as stored, not dequantized),
/// the mean as "%.6g". Every string is empty for an empty array or a dtype
/// with no numbers to show (float16, float64).
struct ArraySummary {
  std::string min, max, mean;
  /// The first `count` elements given to summarizeArray (fewer if the
  /// array is smaller).
  std::vector<std::string> first;
  /// True when the array holds more elements than `first`.
  bool more = false;
};

/// Summarizes `array` (see ArraySummary), listing up to `count` elements.
ArraySummary summarizeArray(const NpyArray &array, int64_t count = 6);

/// Serializes to .npy format 1.0 bytes.
std::vector<uint8_t> serializeNpy(const NpyArray &array);

/// Writes a .npy file atomically (writeFilesAtomically); errors name the
/// path.
llvm::Error writeNpyFile(const std::string &path, const NpyArray &array);

} // namespace kiln

#endif
