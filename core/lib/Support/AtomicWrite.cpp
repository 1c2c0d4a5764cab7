//===- AtomicWrite.cpp - Files written whole or not at all ----------------===//
#include "kiln/AtomicWrite.h"

#include "llvm/Support/FileSystem.h"

namespace kiln {

namespace {

/// Writes files[i..] in nested llvm::writeToOutput calls: file i's
/// temporary is renamed only after files i+1.. are all written and renamed,
/// and only if they succeeded. `failure` gets the first failure's message.
llvm::Error writeFrom(const std::vector<OutputFile> &files, size_t i, std::string &failure) {
  if (i == files.size())
    return llvm::Error::success();
  const OutputFile &file = files[i];
  auto fail = [&](const std::string &reason) {
    if (failure.empty())
      failure = file.path + ": cannot write: " + reason;
    return llvm::createStringError(llvm::inconvertibleErrorCode(), failure);
  };
  // Writes this file's bytes, checks them out (a full disk shows at the
  // flush) and goes on with the next file.
  auto writeThenRest = [&](llvm::raw_ostream &os) -> llvm::Error {
    file.write(os);
    os.flush();
    if (os.get_kind() == llvm::raw_ostream::OStreamKind::OK_FDStream) {
      auto &fd = static_cast<llvm::raw_fd_ostream &>(os);
      if (fd.has_error()) {
        std::error_code ec = fd.error();
        fd.clear_error(); // reported here, not as a fatal error later
        return fail(ec.message());
      }
    }
    return writeFrom(files, i + 1, failure);
  };
  llvm::sys::fs::file_status status;
  const bool special = !llvm::sys::fs::status(file.path, status) &&
                       status.type() != llvm::sys::fs::file_type::regular_file &&
                       status.type() != llvm::sys::fs::file_type::directory_file;
  if (special) {
    std::error_code ec;
    llvm::raw_fd_ostream os(file.path, ec, llvm::sys::fs::OF_None);
    if (ec)
      return fail(ec.message());
    return writeThenRest(os);
  }
  if (llvm::Error err = llvm::writeToOutput(file.path, writeThenRest)) {
    // The system's reason (writeToOutput wraps it in a FileError).
    std::string reason;
    llvm::handleAllErrors(std::move(err), [&](const llvm::ErrorInfoBase &e) {
      std::error_code ec = e.convertToErrorCode();
      if (reason.empty())
        reason = ec != llvm::inconvertibleErrorCode() ? ec.message() : e.message();
    });
    return fail(reason);
  }
  // writeToOutput creates its temporary with mode 0777 less the umask;
  // a plain open gives 0666 less the umask.
  if (file.path != "-")
    if (auto perms = llvm::sys::fs::getPermissions(file.path))
      (void)llvm::sys::fs::setPermissions(file.path, *perms & ~llvm::sys::fs::all_exe);
  return llvm::Error::success();
}

} // namespace

llvm::Error writeFilesAtomically(const std::vector<OutputFile> &files) {
  std::string failure;
  if (llvm::Error err = writeFrom(files, 0, failure)) {
    llvm::consumeError(std::move(err)); // `failure` names the file and the reason
    return llvm::createStringError(llvm::inconvertibleErrorCode(), failure);
  }
  return llvm::Error::success();
}

llvm::Error writeFileAtomically(const std::string &path, llvm::ArrayRef<uint8_t> bytes) {
  return writeFilesAtomically({{path, [&](llvm::raw_ostream &os) {
                                  os.write(reinterpret_cast<const char *>(bytes.data()),
                                           bytes.size());
                                }}});
}

llvm::Error writeFileAtomically(const std::string &path, llvm::StringRef text) {
  return writeFileAtomically(
      path, llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(text.data()), text.size()));
}

} // namespace kiln
