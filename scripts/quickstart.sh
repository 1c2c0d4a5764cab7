#!/usr/bin/env bash
# One command from a clean checkout: install dependencies, build, fetch the
# real models, compile BlazeFace to a .kiln artifact and run it on the seeded
# input, then export it as a Cortex-M4F C module.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh kiln
cache=$(node tests/reference/fetch_models.mjs --quiet | tail -n 1)
kiln=build/bin/kiln
$kiln --version
$kiln compile "$cache/blazeface.tflite" -o build/blazeface.kiln
$kiln run build/blazeface.kiln \
  --input=@tests/data/models/blazeface/input_0.npy \
  --output=@build/regressors.npy --output=@build/classificators.npy \
  --benchmark=20
echo "outputs written to build/regressors.npy and build/classificators.npy"
# The same model as a static C module for a Cortex-M4F, with its manifest and
# flash/RAM report.
$kiln export "$cache/blazeface.tflite" --target=thumbv7em-none-eabihf --profile=stripped \
  --output-format=c-module -o build/blazeface-cortex-m4
