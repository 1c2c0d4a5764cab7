// Host executable loader: memfd_create + dlopen.
#include "executable_loader.h"

#include "status.h"

#include <dlfcn.h>
#include <stdio.h>
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
  char path[64];
  snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  close(fd);
  if (!handle)
    return makeStatus(KILN_INTERNAL, "executable does not load on this host: %s", dlerror());
  out->handle = handle;
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
  if (library->handle)
    dlclose(library->handle);
  library->handle = nullptr;
}

} // namespace kiln::runtime
