//===- ReadFile.cpp - Input files read whole, regular files only ----------===//
#include "kiln/ReadFile.h"

#include "llvm/Support/FileSystem.h"

namespace kiln {

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> readRegularFile(const std::string &path,
                                                                    llvm::StringRef what) {
  auto error = [](const std::string &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
  };
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(path, status))
    return error(path + ": cannot read: " + ec.message());
  if (status.type() != llvm::sys::fs::file_type::regular_file)
    return error(path + ": not a regular file (expected " + what.str() + ")");
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return error(path + ": cannot read: " + buffer.getError().message());
  return std::move(*buffer);
}

} // namespace kiln
