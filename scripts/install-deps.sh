#!/usr/bin/env bash
# Installs the Debian 12 packages Kiln builds and tests with (needs root).
# Skips apt entirely when everything is already installed.
set -euo pipefail

packages=(
  cmake ninja-build ccache g++ make pkg-config dpkg-dev file
  # scripts/check-format.sh: clang-format 14 and git-clang-format.
  clang-format
  llvm-16-dev llvm-16-tools libmlir-16-dev mlir-16-tools lld-16 liblld-16-dev
  zlib1g-dev libzstd-dev
  libflatbuffers-dev flatbuffers-compiler
  libgtest-dev
  graphviz libgraphviz-dev
  # Workbench (kiln-workbench) and its offscreen/Xvfb tests.
  qt6-base-dev qt6-svg-dev libqcustomplot-dev libgl-dev xvfb xauth
  # Cross targets: aarch64 and riscv64 Linux under qemu-user, Cortex-M under
  # qemu-system-arm (tests/cross).
  qemu-user gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross
  g++-riscv64-linux-gnu libc6-dev-riscv64-cross
  gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm
  # Fuzzing (tests/fuzz, scripts/fuzz.sh): clang 16 and its compiler-rt,
  # which holds libFuzzer (libclang_rt.fuzzer) and the sanitizer runtimes.
  clang-16 libclang-rt-16-dev
  # Benchmarks (tests/bench): Google Benchmark, OpenBLAS for the GEMM bench.
  libbenchmark-dev libopenblas-dev
  # The Python package (python/) and its tests (tests/python).
  python3-dev pybind11-dev python3-numpy python3-pytest
  # ONNX import (core/lib/Import/ONNXModel.cpp) and the ONNX backend node
  # tests (tests/onnx, /usr/share/libonnx-testdata/data/node; python3-onnx
  # reads their TensorProtos and writes tests/data/onnx).
  libonnx-dev libprotobuf-dev libonnx-testdata python3-onnx
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# Node.js runs the model fetcher (npm pack); the reference engines under
# tests/reference need `npm ci` only to regenerate expected outputs.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q nodejs npm
fi
