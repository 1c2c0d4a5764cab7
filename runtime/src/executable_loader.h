// Loads an executable's native code and resolves its entry points.
// Internal to the runtime.
#ifndef KILN_RUNTIME_EXECUTABLE_LOADER_H
#define KILN_RUNTIME_EXECUTABLE_LOADER_H

#include "bounds_report.h"
#include "kiln/runtime.h"

#include <stddef.h>

namespace kiln::runtime {

/// ABI of every dispatch entry point: bindings[i] is the base address of
/// binding i (buffer base + binding offset).
using DispatchFn = kiln_dispatch_fn_t;

/// A loaded ELF shared object.
struct LoadedLibrary {
  void *handle = nullptr;
  /// The C math library, opened with RTLD_GLOBAL before the kernels (see
  /// loadLibrary); NULL where libm is part of libc.
  void *libm = nullptr;
  /// The memory file the library was loaded from, open for as long as the
  /// library is: the dynamic loader knows a library by the path it was
  /// opened with (/proc/self/fd/N), and returns an already loaded library
  /// for a path it has seen, so N must not be reused by another module's
  /// load while this one is loaded. Valid only while `handle` is set (the
  /// module's tables are zero-filled).
  int fd = -1;
  /// The executable's `__kiln_bounds_report` when it was built with
  /// --check-bounds (bounds_report.h), else NULL.
  BoundsReport *bounds = nullptr;
};

/// Loads the position-independent ELF shared object `code[0, size)`.
/// This host loader hands the image to the system dynamic loader through an
/// anonymous memory file (memfd_create + dlopen); libm imports resolve
/// against the C math library, opened into the global scope first.
kiln_status_t loadLibrary(const void *code, size_t size, LoadedLibrary *out);

/// Resolves `name` in `library`; KILN_INTERNAL naming the entry if missing.
kiln_status_t lookupEntryPoint(const LoadedLibrary &library, const char *name,
                               DispatchFn *out);

/// Unloads `library` (no-op when never loaded).
void unloadLibrary(LoadedLibrary *library);

} // namespace kiln::runtime

#endif
