//===- AtomicWrite.cpp - Files written whole or not at all ----------------===//
#include "kiln/AtomicWrite.h"
#include "kiln/Error.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

namespace kiln {

namespace {

/// The system's reason inside an error from llvm::sys::fs (a FileError or
/// an error code), for "PATH: cannot write: REASON".
std::string reasonOf(llvm::Error err) {
  std::string reason;
  llvm::handleAllErrors(std::move(err), [&](const llvm::ErrorInfoBase &e) {
    std::error_code ec = e.convertToErrorCode();
    if (reason.empty())
      reason = ec != llvm::inconvertibleErrorCode() ? ec.message() : e.message();
  });
  return reason;
}

/// Writes `file` into `os` and flushes it; the stream's error (a full
/// disk shows at a write or the flush) is taken out of the stream, so it
/// is reported here and never as LLVM's fatal "IO failure on output
/// stream" when the stream is destroyed. "" when all bytes were written.
std::string writeChecked(const OutputFile &file, llvm::raw_fd_ostream &os) {
  file.write(os);
  os.flush();
  if (!os.has_error())
    return "";
  std::error_code ec = os.error();
  os.clear_error();
  return ec.message();
}

/// A file that is not renamed into place: standard output ("-") or an
/// existing path that is not a regular file (/dev/stdout, /dev/full, a
/// FIFO).
bool writtenDirectly(const std::string &path) {
  if (path == "-")
    return true;
  llvm::sys::fs::file_status status;
  return !llvm::sys::fs::status(path, status) &&
         status.type() != llvm::sys::fs::file_type::regular_file &&
         status.type() != llvm::sys::fs::file_type::directory_file;
}

llvm::Error writeDirectly(const OutputFile &file) {
  if (file.path == "-") {
    std::string why = writeChecked(file, llvm::outs());
    return why.empty() ? llvm::Error::success()
                       : makeError("standard output: cannot write: " + why);
  }
  std::error_code ec;
  llvm::raw_fd_ostream os(file.path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return makeError(file.path + ": cannot write: " + ec.message());
  std::string why = writeChecked(file, os);
  if (why.empty()) {
    os.close();
    if (os.has_error()) {
      why = os.error().message();
      os.clear_error();
    }
  }
  return why.empty() ? llvm::Error::success() : makeError(file.path + ": cannot write: " + why);
}

} // namespace

namespace {

/// `path` with its symbolic links and "." / ".." resolved, made absolute;
/// for a file that does not exist yet, its folder resolved plus its name.
std::string canonicalPath(const std::string &path) {
  llvm::SmallString<256> real;
  if (!llvm::sys::fs::real_path(path, real))
    return std::string(real);
  // Not there yet: its folder resolved, then its name.
  llvm::SmallString<256> absolute(path);
  llvm::sys::fs::make_absolute(absolute);
  llvm::SmallString<256> folder(llvm::sys::path::parent_path(absolute));
  if (llvm::sys::fs::real_path(folder, real))
    real = folder;
  llvm::sys::path::append(real, llvm::sys::path::filename(absolute));
  return std::string(real);
}

/// Whether two paths name one file (standard output, "-", is no file).
bool samePath(const std::string &a, const std::string &b) {
  if (a == "-" || b == "-")
    return false;
  return a == b || llvm::sys::fs::equivalent(a, b) || canonicalPath(a) == canonicalPath(b);
}

} // namespace

llvm::Error checkOutputPaths(const std::vector<std::string> &writes,
                             const std::vector<std::string> &reads) {
  for (size_t i = 0; i < writes.size(); ++i) {
    // One path twice in a group (an artifact and a dump of the same name)
    // would keep one of them and lose the other.
    for (size_t j = i + 1; j < writes.size(); ++j)
      if (samePath(writes[i], writes[j]))
        return makeError(writes[j] + ": named twice among the files to write (" + writes[i] +
                         "); give each output its own path");
    for (const std::string &read : reads)
      if (samePath(writes[i], read))
        return makeError(writes[i] + ": is an input of this command (" + read +
                         "); give the output another path");
  }
  return llvm::Error::success();
}

llvm::Error writeFilesAtomically(const std::vector<OutputFile> &files,
                                 const std::vector<std::string> &reads) {
  std::vector<std::string> writes;
  for (const OutputFile &file : files)
    writes.push_back(file.path);
  if (llvm::Error err = checkOutputPaths(writes, reads))
    return err;
  // Phase 1: every regular file into its temporary beside it
  // ("NAME.tmp-XXXXXX", mode 0666 less the umask), checked.
  std::vector<llvm::sys::fs::TempFile> temps;
  std::vector<const OutputFile *> renamed;
  std::string failure;
  for (const OutputFile &file : files) {
    if (writtenDirectly(file.path))
      continue;
    auto temp = llvm::sys::fs::TempFile::create(
        file.path + ".tmp-%%%%%%", llvm::sys::fs::all_read | llvm::sys::fs::all_write);
    if (!temp) {
      failure = file.path + ": cannot write: " + reasonOf(temp.takeError());
      break;
    }
    temps.push_back(std::move(*temp));
    renamed.push_back(&file);
    llvm::raw_fd_ostream os(temps.back().FD, /*shouldClose=*/false);
    if (std::string why = writeChecked(file, os); !why.empty()) {
      failure = file.path + ": cannot write: " + why;
      break;
    }
  }
  // Phase 2: the special files, then the renames, only if all succeeded.
  for (size_t i = 0; failure.empty() && i < files.size(); ++i)
    if (writtenDirectly(files[i].path))
      if (llvm::Error err = writeDirectly(files[i]))
        failure = llvm::toString(std::move(err));
  if (!failure.empty()) {
    for (llvm::sys::fs::TempFile &t : temps)
      llvm::consumeError(t.discard());
    return makeError(failure);
  }
  for (size_t i = 0; i < temps.size(); ++i)
    if (llvm::Error err = temps[i].keep(renamed[i]->path)) {
      if (failure.empty())
        failure = renamed[i]->path + ": cannot write: " + reasonOf(std::move(err));
      for (size_t j = i + 1; j < temps.size(); ++j)
        llvm::consumeError(temps[j].discard());
      break;
    }
  return failure.empty() ? llvm::Error::success() : makeError(failure);
}

llvm::Error writeFileAtomically(const std::string &path, llvm::ArrayRef<uint8_t> bytes,
                                const std::vector<std::string> &reads) {
  return writeFilesAtomically({{path,
                                [&](llvm::raw_ostream &os) {
                                  os.write(reinterpret_cast<const char *>(bytes.data()),
                                           bytes.size());
                                }}},
                              reads);
}

llvm::Error writeFileAtomically(const std::string &path, llvm::StringRef text,
                                const std::vector<std::string> &reads) {
  return writeFileAtomically(
      path, llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(text.data()), text.size()),
      reads);
}

} // namespace kiln
