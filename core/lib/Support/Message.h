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
#include "llvm/Support/raw_ostream.h"

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

} // namespace kiln

#endif
