#!/usr/bin/env bash
# Benchmarks Kiln on the real models and prints a markdown table:
# compile time (median of 5 `kiln compile` runs, wall clock) and
# `kiln run --benchmark=N` latency (median of N warm runs, 1 thread).
# Reference engines: `node tests/reference/bench_reference.mjs` (needs
# `cd tests/reference && ONNXRUNTIME_NODE_INSTALL=skip npm ci`).
#
#   scripts/bench.sh [--runs N] [--target-cpu CPU]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=200
cpu=generic
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --target-cpu) cpu=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
kiln=${KILN:-build/bin/kiln}
cache=$(node tests/reference/fetch_models.mjs --quiet | tail -n 1)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

echo "| model | compile time (median of 5) | artifact bytes | kiln run median | min | max |"
echo "|---|---:|---:|---:|---:|---:|"
for m in alexa embedding blazeface; do
  flags="--target-cpu=$cpu"
  [ "$m" = embedding ] && flags="$flags --fix-shape=0=1x76x32x1"
  for i in 1 2 3 4 5; do
    s=$(date +%s.%N)
    $kiln compile "$cache/$m.tflite" -o "$tmp/$m.kiln" $flags >/dev/null
    e=$(date +%s.%N)
    echo "$e - $s" | bc -l
  done | median > "$tmp/ct"
  ins=""
  for f in tests/data/models/$m/input_*.npy; do ins="$ins --input=@$f"; done
  line=$($kiln run "$tmp/$m.kiln" $ins --benchmark="$runs" | grep '^median:')
  med=$(echo "$line" | sed -E 's/median: ([0-9.]+) ms.*/\1/')
  min=$(echo "$line" | sed -E 's/.*min ([0-9.]+) ms.*/\1/')
  max=$(echo "$line" | sed -E 's/.*max ([0-9.]+) ms.*/\1/')
  printf "| %s | %.2f s | %d | %s ms | %s ms | %s ms |\n" "$m" "$(cat "$tmp/ct")" \
    "$(stat -c %s "$tmp/$m.kiln")" "$med" "$min" "$max"
done
