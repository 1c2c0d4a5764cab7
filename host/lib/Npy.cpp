//===- Npy.cpp - NumPy .npy files -----------------------------------------===//
#include "kiln/Error.h"
#include "kiln/Npy.h"
#include "kiln/AtomicWrite.h"

#include "Support/Message.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace kiln {

int64_t NpyArray::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

int64_t integerElement(const NpyArray &array, int64_t i) {
  const size_t size = npyDtypeSize(array.dtype);
  const uint8_t *at = array.data.data() + i * size;
  uint64_t bits = 0;
  for (size_t b = 0; b < size; ++b) // little endian
    bits |= uint64_t(at[b]) << (8 * b);
  const bool isSigned = array.dtype[1] == 'i';
  if (isSigned && size < 8 && (bits >> (8 * size - 1)) & 1)
    bits |= ~uint64_t(0) << (8 * size); // sign-extend
  return static_cast<int64_t>(bits);
}

ArraySummary summarizeArray(const NpyArray &array, int64_t count) {
  ArraySummary out;
  const int64_t n = array.numElements();
  const bool isFloat = array.dtype == "<f4";
  if (n <= 0 || array.data.size() < uint64_t(n) * npyDtypeSize(array.dtype) ||
      (!isFloat && !isIntegerDtype(array.dtype)))
    return out;
  auto text = [](const char *format, double v) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, format, v);
    return std::string(buffer);
  };
  if (isFloat) {
    const float *f = reinterpret_cast<const float *>(array.data.data());
    double lo = f[0], hi = f[0], sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      lo = std::min<double>(lo, f[i]);
      hi = std::max<double>(hi, f[i]);
      sum += f[i];
    }
    out.min = text("%.6g", lo);
    out.max = text("%.6g", hi);
    out.mean = text("%.6g", sum / double(n));
    for (int64_t i = 0; i < std::min(n, count); ++i)
      out.first.push_back(text("%.6g", f[i]));
  } else {
    int64_t lo = integerElement(array, 0), hi = lo;
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      int64_t x = integerElement(array, i);
      lo = std::min(lo, x);
      hi = std::max(hi, x);
      sum += double(x);
    }
    out.min = std::to_string(lo);
    out.max = std::to_string(hi);
    out.mean = text("%.6g", sum / double(n));
    for (int64_t i = 0; i < std::min(n, count); ++i)
      out.first.push_back(std::to_string(integerElement(array, i)));
  }
  out.more = n > count;
  return out;
}

/// Value of `key` in the header dict, e.g. 'descr': '<f4' -> <f4.
static bool findHeaderValue(llvm::StringRef header, llvm::StringRef key,
                            llvm::StringRef &value) {
  size_t pos = header.find(("'" + key + "'").str());
  if (pos == llvm::StringRef::npos)
    return false;
  llvm::StringRef rest = header.drop_front(pos + key.size() + 2).ltrim();
  if (!rest.consume_front(":"))
    return false;
  rest = rest.ltrim();
  if (rest.starts_with("'")) {
    size_t end = rest.find('\'', 1);
    if (end == llvm::StringRef::npos)
      return false;
    value = rest.slice(1, end);
  } else if (rest.starts_with("(")) {
    size_t end = rest.find(')');
    if (end == llvm::StringRef::npos)
      return false;
    value = rest.slice(1, end);
  } else {
    size_t end = rest.find_first_of(",}");
    value = rest.take_front(end).trim();
  }
  return true;
}

llvm::Error allocateBytes(std::vector<uint8_t> &bytes, uint64_t n, const llvm::Twine &what) {
  auto error = [&] { return makeError("cannot allocate " + llvm::Twine(n) + " bytes for " + what); };
  // Ask malloc first; the catch covers memory that vanishes in between.
  void *probe = n <= bytes.max_size() ? std::malloc(static_cast<size_t>(n)) : nullptr;
  if (!probe && n > 0)
    return error();
  std::free(probe);
  try {
    bytes.resize(static_cast<size_t>(n));
  } catch (const std::exception &) {
    return error();
  }
  return llvm::Error::success();
}

llvm::Expected<NpyArray> parseNpy(llvm::ArrayRef<uint8_t> bytes,
                                  const std::string &what) {
  static const char magic[] = "\x93NUMPY";
  if (bytes.size() < 10 || std::memcmp(bytes.data(), magic, 6) != 0)
    return makeError(what + ": not a NumPy .npy file (bad magic)");
  unsigned major = bytes[6];
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen = bytes[8] | (bytes[9] << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return makeError(what + ": truncated .npy header");
    headerLen = bytes[8] | (bytes[9] << 8) | (bytes[10] << 16) |
                (size_t(bytes[11]) << 24);
    headerStart = 12;
  } else {
    return makeError(what + ": unsupported .npy format version " +
                     llvm::Twine(major));
  }
  if (headerStart + headerLen > bytes.size())
    return makeError(what + ": truncated .npy header");
  llvm::StringRef header(reinterpret_cast<const char *>(bytes.data()) +
                             headerStart,
                         headerLen);
  llvm::StringRef descr, fortran, shapeText;
  if (!findHeaderValue(header, "descr", descr) ||
      !findHeaderValue(header, "fortran_order", fortran) ||
      !findHeaderValue(header, "shape", shapeText))
    return makeError(what + ": malformed .npy header '" + quoteInput(header.trim()) + "'");
  NpyArray array;
  array.dtype = descr.str();
  if (array.dtype == "<f4" || array.dtype == "=f4")
    array.dtype = "<f4";
  size_t elementSize = npyDtypeSize(array.dtype);
  if (elementSize == 0)
    return makeError(what + ": unsupported dtype '" + quoteInput(descr) +
                     "' (supported: <f4 <f2 <f8 <i4 <i8 |i1 |u1 |b1, little endian)");
  if (fortran != "False")
    return makeError(what + ": Fortran-order arrays are not supported; save "
                            "with numpy.ascontiguousarray");
  llvm::SmallVector<llvm::StringRef> dims;
  shapeText.split(dims, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef dim : dims) {
    dim = dim.trim();
    if (dim.empty())
      continue;
    int64_t value;
    if (dim.getAsInteger(10, value) || value < 0)
      return makeError(what + ": bad shape '(" + quoteInput(shapeText) + ")'");
    array.shape.push_back(value);
  }
  // The byte size, overflow-checked: every non-zero dimension counts, so a
  // shape is refused (not wrapped around) whatever the order of its zeros.
  uint64_t expected = elementSize, extent = elementSize;
  for (int64_t d : array.shape)
    if (__builtin_mul_overflow(extent, static_cast<uint64_t>(d ? d : 1), &extent))
      return makeError(what + ": shape (" + quoteInput(shapeText) + ") of " + descr +
                       " is too large (its byte size overflows 64 bits)");
  for (int64_t d : array.shape)
    expected *= static_cast<uint64_t>(d);
  size_t dataStart = headerStart + headerLen;
  if (bytes.size() - dataStart != expected)
    return makeError(what + ": holds " + llvm::Twine(bytes.size() - dataStart) +
                     " data bytes, shape (" + quoteInput(shapeText) + ") of " + descr +
                     " needs " + llvm::Twine(expected));
  if (llvm::Error err = allocateBytes(array.data, expected, what + " (its data)"))
    return std::move(err);
  if (expected)
    std::memcpy(array.data.data(), bytes.data() + dataStart, expected);
  return array;
}

llvm::Expected<NpyArray> readNpyFile(const std::string &path) {
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(path, status))
    return makeError((path.empty() ? "''" : path) + ": cannot read: " + ec.message());
  if (status.type() != llvm::sys::fs::file_type::regular_file)
    return makeError(path + ": not a regular file (expected a .npy file)");
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return makeError(path + ": cannot read its " + llvm::Twine(status.getSize()) +
                     " bytes: " + buffer.getError().message());
  // The file is mapped, not copied: only the array's data is allocated.
  const auto *begin =
      reinterpret_cast<const uint8_t *>((*buffer)->getBufferStart());
  return parseNpy(llvm::ArrayRef<uint8_t>(begin, (*buffer)->getBufferSize()), path);
}

/// The .npy 1.0 magic, version and header of `array` (data follows).
static std::vector<uint8_t> npyHeader(const NpyArray &array) {
  std::string header = "{'descr': '" + array.dtype +
                       "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < array.shape.size(); ++i) {
    header += std::to_string(array.shape[i]);
    if (array.shape.size() == 1 || i + 1 < array.shape.size())
      header += ",";
    if (i + 1 < array.shape.size())
      header += " ";
  }
  header += "), }";
  // Pad with spaces so data starts at a multiple of 64, ending in '\n'.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                              static_cast<uint8_t>(header.size() & 0xff),
                              static_cast<uint8_t>(header.size() >> 8)};
  out.insert(out.end(), header.begin(), header.end());
  return out;
}

std::vector<uint8_t> serializeNpy(const NpyArray &array) {
  std::vector<uint8_t> out = npyHeader(array);
  out.insert(out.end(), array.data.begin(), array.data.end());
  return out;
}

llvm::Error writeNpyFile(const std::string &path, const NpyArray &array) {
  // Header, then the data straight from the array (no second copy).
  std::vector<uint8_t> header = npyHeader(array);
  return writeFilesAtomically({{path, [&](llvm::raw_ostream &os) {
                                  os.write(reinterpret_cast<const char *>(header.data()),
                                           header.size());
                                  os.write(reinterpret_cast<const char *>(array.data.data()),
                                           array.data.size());
                                }}});
}

} // namespace kiln
