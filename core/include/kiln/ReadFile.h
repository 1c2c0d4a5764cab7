//===- kiln/ReadFile.h - Input files read whole, regular files only -*- C++ -*-===//
//
// Every file a command reads (models, artifacts, tuning and project files,
// raw input data) is read through readRegularFile: a path that is not a
// regular file (a folder, /dev/zero, a FIFO) is refused in one line
// instead of being read until memory runs out.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_READFILE_H
#define KILN_READFILE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <string>

namespace kiln {

/// The bytes of the regular file at `path` (no terminating NUL added).
/// Errors (one line): "PATH: cannot read: REASON", or "PATH: not a regular
/// file (expected WHAT)", `what` naming the file the caller wanted
/// ("a .kiln artifact", "a tuning JSON file").
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> readRegularFile(const std::string &path,
                                                                    llvm::StringRef what);

} // namespace kiln

#endif
