#!/usr/bin/env bash
# Builds Kiln and runs every test through CTest (fetches the real models on
# first use into $KILN_MODEL_CACHE, default ~/.cache/kiln/models).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j "$(nproc)" "$@"
