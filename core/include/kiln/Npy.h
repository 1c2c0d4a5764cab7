//===- kiln/Npy.h - NumPy .npy files ---------------------------*- C++ -*-===//
//
// Reads and writes NumPy `.npy` arrays (format versions 1.0-3.0, little
// endian, C order; dtypes <f4 <f2 <i4 <i8 |i1 |u1 |b1), the format
// `iree-run-module --input=@x.npy` takes. Spec: numpy.lib.format
// ("NEP 1 - A Simple File Format for NumPy Arrays").
//
//===----------------------------------------------------------------------===//
#ifndef KILN_NPY_H
#define KILN_NPY_H

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

/// Bytes per element of a dtype descriptor, 0 if unsupported.
size_t npyDtypeSize(const std::string &dtype);

/// True for the integer dtype descriptors npyDtypeSize knows: |i1 |u1 |b1
/// <i2 <u2 <i4 <u4 <i8 <u8.
bool isIntegerDtype(const std::string &dtype);

/// Element `i` (row-major, 0 <= i < numElements()) of an array whose dtype
/// isIntegerDtype, widened to int64 (sign-extended for signed types; a <u8
/// value above INT64_MAX wraps, which no Kiln tensor holds).
int64_t integerElement(const NpyArray &array, int64_t i);

/// The element type name Kiln's command line and MLIR use for a dtype
/// descriptor: <f4 -> f32, <f2 -> f16, <i4 -> i32, <i8 -> i64, |i1 -> i8,
/// |u1 -> u8, |b1 -> i1, <f8 -> f64 (a NumPy default no model takes); the
/// descriptor itself when it has no name.
std::string elementTypeName(const std::string &dtype);

/// The dtype descriptor of an element type name (elementTypeName's
/// inverse); "" when `name` is none of f32 f16 i32 i64 i8 u8 i1 f64.
std::string dtypeOfElementType(llvm::StringRef name);

/// Shape and element type as the command line writes them: "1x16x96xf32"
/// ("f32" for a 0-d array).
std::string tensorTypeText(const std::vector<int64_t> &shape, const std::string &dtype);

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

/// Serializes to .npy format 1.0 bytes.
std::vector<uint8_t> serializeNpy(const NpyArray &array);

/// Writes a .npy file atomically (writeFilesAtomically); errors name the
/// path.
llvm::Error writeNpyFile(const std::string &path, const NpyArray &array);

} // namespace kiln

#endif
