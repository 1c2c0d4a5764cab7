//===- kiln/Error.h - Kiln's one-line errors ---------------------*- C++ -*-===//
//
// Kiln reports every failure a user can cause as one llvm::Error whose
// message is a single line naming the file, operator or tensor and what is
// supported. Errors carry no error code: callers
// print them, and data that a caller needs travels in a struct or an
// ErrorInfo subclass (UnfixedInputError), never parsed back out of text.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_ERROR_H
#define KILN_ERROR_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

namespace kiln {

/// An llvm::StringError holding `message` (one line, no trailing newline)
/// with llvm::inconvertibleErrorCode().
inline llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message.str());
}

} // namespace kiln

#endif
