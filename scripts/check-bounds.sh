#!/usr/bin/env bash
# The --check-bounds sweep (README, "Bounds-checked kernels"): every
# operator case of both front ends, the ONNX backend test data (node,
# pytorch-converted, pytorch-operator), the window and special-value cases
# of both front ends
# and the real models, all compiled with bounds-checked kernels; then the
# overhead on the three named real models. Prints the counts, every
# KILN_OUT_OF_RANGE and the latency ratios; exit status 1 on any violation.
#   scripts/check-bounds.sh [build dir, default build]
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
KILN=$BUILD/bin/kiln
PY=/usr/bin/python3
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
status=0

echo "== TFLite operator cases (tests/data/ops, tests/data/ops_int8) and real models"
$PY scripts/check_bounds_cases.py --kiln "$KILN" || status=1

echo "== TFLite special-value rows (tests/data/special)"
$PY tests/tflite/special_values.py --kiln "$KILN" -- --check-bounds | tail -1 || status=1

echo "== ONNX window and special-value cases"
$PY tests/onnx/window_cases.py --kiln "$KILN" -- --check-bounds | tail -1 || status=1
$PY tests/onnx/special_values.py --kiln "$KILN" -- --check-bounds | tail -1 || status=1

for suite in node pytorch-converted pytorch-operator; do
  echo "== ONNX backend test data: $suite"
  $PY tests/onnx/run_node_tests.py --kiln "$KILN" --compile-flag=--check-bounds \
    --data-dir /usr/share/libonnx-testdata/data/$suite --out-dir "$OUT/$suite" --timeout 300 \
    > "$OUT/$suite.log" 2>&1
  grep -E '^[0-9]+ cases' "$OUT/$suite.log"
  if grep -q KILN_OUT_OF_RANGE "$OUT/$suite.log"; then
    grep KILN_OUT_OF_RANGE "$OUT/$suite.log"
    status=1
  fi
done

echo "== overhead (median latency, checked / unchecked, interleaved rounds)"
$PY scripts/check_bounds_cases.py --kiln "$KILN" --overhead || status=1
exit $status
