#!/usr/bin/env bash
# Configures (once) and builds Kiln into ./build with Ninja and ccache.
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache keys on paths relative to the checkout, so every clone and build
# folder shares one cache.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
BUILD_DIR=${BUILD_DIR:-build}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -G Ninja -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo} \
    -DKILN_DEBUG_INFO=${KILN_DEBUG_INFO:-full}
fi
ninja -C "$BUILD_DIR" "$@"
