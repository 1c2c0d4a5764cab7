//===- Message.h - Text from input files inside error messages -*- C++ -*-===//
//
// Errors are one line (the CLI prints `kiln: error: ...`), but they often
// quote the input: a JSON key, a .npy header, a name. Such text goes through
// quoteInput so a newline or control byte in a file cannot break the line.
// Internal to core.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CORE_SUPPORT_MESSAGE_H
#define KILN_CORE_SUPPORT_MESSAGE_H

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <string>

namespace kiln {

/// `text` as it may appear inside a one-line message: backslashes, quotes,
/// control and non-ASCII bytes escaped as \XX (llvm::printEscapedString), cut
/// to `limit` characters with "..." after.
inline std::string quoteInput(llvm::StringRef text, size_t limit = 60) {
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::printEscapedString(text.take_front(limit), os);
  if (text.size() > limit)
    os << "...";
  return os.str();
}

/// A JSON number as int64, or nullopt if it is no whole number in range.
/// llvm::json::Value::getAsInteger converts a double such as 9.2233720368547758e18
/// (2^63 after rounding) to int64, which is undefined behaviour (UBSan,
/// found by the tuning fuzzer): doubles are range-checked here first.
inline std::optional<int64_t> jsonInteger(const llvm::json::Value &v) {
  // Ids and tile sizes this large are refused anyway.
  if (auto d = v.getAsNumber(); d && !(*d > -9.2e18 && *d < 9.2e18))
    return std::nullopt;
  return v.getAsInteger();
}

} // namespace kiln

#endif
