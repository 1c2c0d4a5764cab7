#!/usr/bin/env bash
# Code size of the Kiln runtime (local-sync device) on x86-64 at -Os: a
# minimal program that loads and invokes an artifact, minus an empty program
# with the same libc calls, both linked with --gc-sections; `size` .text.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
gen=${BUILD_DIR:-build}/runtime/generated
flags="-Os -ffunction-sections -fdata-sections -fno-asynchronous-unwind-tables -DNDEBUG"
cxxflags="$flags -fno-exceptions -fno-rtti"
for f in runtime/src/artifact.cc runtime/src/module.cc runtime/src/executable_loader_dlopen.cc runtime/src/device_local_sync.cc runtime/src/crc32.cc; do
  g++ -std=c++17 $cxxflags -DKILN_VERSION_STRING='"0.1.0"' -Iruntime/include -I"$gen" -c "$f" -o "$out/$(basename "$f").o"
done
gcc $flags -Iruntime/include -c tests/bench/minimal_runtime_main.c -o "$out/main.o"
gcc $flags -c tests/bench/empty_main.c -o "$out/empty.o"
g++ -Wl,--gc-sections -o "$out/with_runtime" "$out"/main.o "$out"/artifact.cc.o "$out"/module.cc.o \
  "$out"/executable_loader_dlopen.cc.o "$out"/device_local_sync.cc.o "$out"/crc32.cc.o -ldl
gcc -Wl,--gc-sections -o "$out/empty" "$out/empty.o"
with=$(size -A "$out/with_runtime" | awk '$1==".text"{print $2}')
base=$(size -A "$out/empty" | awk '$1==".text"{print $2}')
echo "runtime .text (local-sync, x86-64, -Os): $((with - base)) bytes (program $with, empty $base)"
