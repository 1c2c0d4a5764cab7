// Host executable loader: memfd_create + dlopen.
#include "executable_loader.h"

#include "status.h"

#include <dlfcn.h>
#include <stdio.h>
#ifdef __GLIBC__
#include <gnu/lib-names.h> // LIBM_SO
#endif
#include <sys/mman.h>
#include <unistd.h>

namespace kiln::runtime {

kiln_status_t loadLibrary(const void *code, size_t size, LoadedLibrary *out) {
  int fd = memfd_create("kiln-executable", MFD_CLOEXEC);
  if (fd < 0)
    return makeStatus(KILN_INTERNAL, "memfd_create failed for a %zu-byte executable", size);
  const char *p = static_cast<const char *>(code);
  size_t left = size;
  while (left > 0) {
    ssize_t n = write(fd, p, left);
    if (n <= 0) {
      close(fd);
      return makeStatus(KILN_INTERNAL, "cannot stage a %zu-byte executable", size);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  // Kernels import libm functions (expf, tanhf, floorf, ...) that the
  // dynamic loader resolves from the global scope. A program that embeds
  // the runtime may not have libm loaded (the linker drops -lm when the
  // program itself calls no libm function, as with --as-needed), so it is
  // opened here, into the global scope, for as long as the kernels live.
  void *libm = nullptr;
#ifdef LIBM_SO
  libm = dlopen(LIBM_SO, RTLD_NOW | RTLD_GLOBAL);
#endif
  char path[64];
  snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
  // glibc matches an already loaded object by this path before it looks
  // at the file: the memory file stays open (LoadedLibrary::fd) so no
  // other module loaded meanwhile gets the same path and this library.
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    kiln_status_t status =
        makeStatus(KILN_INTERNAL, "executable does not load on this host: %s", dlerror());
    close(fd);
    if (libm)
      dlclose(libm);
    return status;
  }
  out->handle = handle;
  out->libm = libm;
  out->fd = fd;
  // Present only in --check-bounds builds (core/lib/Codegen/BoundsChecks.cpp).
  out->bounds = static_cast<BoundsReport *>(dlsym(handle, "__kiln_bounds_report"));
  return kiln_status_ok();
}

kiln_status_t lookupEntryPoint(const LoadedLibrary &library, const char *name,
                               DispatchFn *out) {
  void *symbol = dlsym(library.handle, name);
  if (!symbol)
    return makeStatus(KILN_INTERNAL, "entry point '%s' not found in executable", name);
  *out = reinterpret_cast<DispatchFn>(symbol);
  return kiln_status_ok();
}

void unloadLibrary(LoadedLibrary *library) {
  if (library->handle) {
    dlclose(library->handle);
    close(library->fd);
  }
  if (library->libm)
    dlclose(library->libm);
  library->handle = nullptr;
  library->libm = nullptr;
  library->fd = -1;
}

} // namespace kiln::runtime
