//===- FakeExecutableLoader.cpp - Executable loader of the artifact fuzzers -===//
//
// The artifact fuzz targets replace the runtime's host loader
// (runtime/src/executable_loader_dlopen.cc) with this one at link time: this
// object file defines the loader functions, so the linker never pulls the
// dlopen loader out of the kiln_runtime archive. Native code is the one part
// of an artifact the runtime trusts once the artifact gate accepts it (it
// runs it), and handing mutated ELF images to the system's dynamic loader
// would fuzz glibc, not Kiln; every entry point resolves to a dispatch that
// does nothing, so copies, fills and binding resolution still run for real.
//
//===----------------------------------------------------------------------===//
#include "executable_loader.h"

namespace kiln::runtime {

namespace {
void emptyDispatch(void **, const uint32_t *) {}
} // namespace

kiln_status_t loadLibrary(const void *code, size_t, LoadedLibrary *out) {
  out->handle = const_cast<void *>(code);
  return kiln_status_ok();
}

kiln_status_t lookupEntryPoint(const LoadedLibrary &, const char *, DispatchFn *out) {
  *out = emptyDispatch;
  return kiln_status_ok();
}

void unloadLibrary(LoadedLibrary *library) { library->handle = nullptr; }

} // namespace kiln::runtime
