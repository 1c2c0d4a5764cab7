#!/usr/bin/env bash
# Builds Kiln with AddressSanitizer and UndefinedBehaviorSanitizer (CMake
# option KILN_SANITIZE=ON) into its own folder and runs CTest there; a
# sanitizer finding aborts the process, so it fails its test.
#
#   scripts/test-asan.sh                      # everything, the whole suite
#   scripts/test-asan.sh -R '^Runtime\.'      # arguments go to ctest
#   ASAN_TARGETS="kiln kiln_unit_tests" scripts/test-asan.sh -R ...
#                                             # build only these targets
#
# BUILD_DIR defaults to build-asan. The LLVM/MLIR libraries are not
# instrumented (Debian's builds); everything of Kiln's is.
set -euo pipefail
cd "$(dirname "$0")/.."
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
BUILD_DIR=${BUILD_DIR:-build-asan}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -G Ninja -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo} \
    -DKILN_DEBUG_INFO=${KILN_DEBUG_INFO:-full} -DKILN_SANITIZE=ON
fi
# shellcheck disable=SC2086
ninja -C "$BUILD_DIR" ${ASAN_TARGETS:-}
# use_sigaltstack=0: LLVM's signal handlers (installed for crash reports)
# give a thread an alternate signal stack of their own, which ASan's thread
# teardown would then try to unmap as its own and abort ("unable to unmap",
# Gui.Workbench and Gui.Tuning, whose compiles run in worker threads).
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:detect_stack_use_after_return=1:use_sigaltstack=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/sanitizers/lsan.supp:print_suppressions=0}
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)" "$@"
