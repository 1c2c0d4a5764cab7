//===- kiln/AtomicWrite.h - Files written whole or not at all --*- C++ -*-===//
//
// Every file Kiln writes (artifacts, C modules, export bundles, projects,
// .npy outputs, traces and dumps) goes through writeFilesAtomically: each
// file is written to a temporary file beside it (llvm::sys::fs::TempFile,
// "NAME.tmp-XXXXXX", removed on failure and on a fatal signal) and renamed
// over it, so a failed write (disk full, a crash) never leaves a truncated
// file, and a group of files is renamed into place only after every one of
// them was written in full. Every stream's error is checked and cleared
// here: none reaches LLVM's fatal "IO failure on output stream", which
// would end a process that uses Kiln as a library.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_ATOMICWRITE_H
#define KILN_ATOMICWRITE_H

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln {

/// One file to write: its path and a function writing its bytes.
struct OutputFile {
  std::string path;
  std::function<void(llvm::raw_ostream &)> write;
};

/// Writes `files` so that none is ever left half written: each goes to a
/// temporary file beside it, and the temporaries are renamed over the
/// files only when all of them were written in full (on any failure every
/// temporary is removed and every file stays as it was). A path naming an
/// existing file that is not a regular file (/dev/stdout, a FIFO) is
/// written directly; "-" is standard output. New files get mode 0666
/// less the umask.
///
/// `reads` are the files the command reads (its model or artifact, input
/// .npy files): none of them is ever written. Before anything is written,
/// a group that names one file twice, or names one of `reads`, is refused;
/// paths are compared after resolving symbolic links, "." and "..", so
/// "x", "./x" and "$PWD/x" are one file whether or not it exists yet.
///
/// Errors (one line): "PATH: named twice among the files to write (OTHER)",
/// "PATH: is an input of this command (READ); ...", or, naming the first
/// file that failed, "PATH: cannot write: REASON".
llvm::Error writeFilesAtomically(const std::vector<OutputFile> &files,
                                 const std::vector<std::string> &reads = {});

/// The check writeFilesAtomically makes first, for a command that wants to
/// refuse its outputs before it computes them: no path in `writes` twice,
/// none of them one of `reads` (same errors).
llvm::Error checkOutputPaths(const std::vector<std::string> &writes,
                             const std::vector<std::string> &reads);

/// writeFilesAtomically of one file holding `bytes`.
llvm::Error writeFileAtomically(const std::string &path, llvm::ArrayRef<uint8_t> bytes,
                                const std::vector<std::string> &reads = {});

/// writeFilesAtomically of one file holding `text`.
llvm::Error writeFileAtomically(const std::string &path, llvm::StringRef text,
                                const std::vector<std::string> &reads = {});

} // namespace kiln

#endif
