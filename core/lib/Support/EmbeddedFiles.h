//===- Support/EmbeddedFiles.h - Files compiled into Kiln as data -*- C++ -*-===//
//
// The firmware kits' sources (resources/kits) and the runtime's header,
// compiled into kiln_core by cmake/EmbedFiles.cmake so `kiln export --kit`
// needs no installed data folder. core/lib/Kit.cpp reads them.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_SUPPORT_EMBEDDEDFILES_H
#define KILN_SUPPORT_EMBEDDEDFILES_H

#include <cstddef>

namespace kiln::detail {

/// One embedded file: its name ("cortexm/startup.c", relative to
/// resources/kits; "runtime.h" for runtime/include/kiln/runtime.h) and its
/// bytes (NUL-terminated; `size` excludes the NUL).
struct EmbeddedFile {
  const char *name;
  const char *bytes;
  size_t size;
};

extern const EmbeddedFile kEmbeddedFiles[];
extern const size_t kNumEmbeddedFiles;

} // namespace kiln::detail

#endif
