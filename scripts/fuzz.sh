#!/usr/bin/env bash
# Builds (if needed) and runs Kiln's libFuzzer targets (tests/fuzz,
# docs/fuzzing.md) with their seed corpora.
#
#   scripts/fuzz.sh TARGET SECONDS [libFuzzer flags...]
#   scripts/fuzz.sh all SECONDS     # every target, SECONDS each
#   scripts/fuzz.sh list            # the target names
#
# Build: $FUZZ_BUILD_DIR (default build-fuzz), clang-16 with
# -fsanitize=fuzzer,address,undefined (CMake option KILN_FUZZ=ON).
# Corpus: $FUZZ_BUILD_DIR/fuzz/corpus/TARGET (kept between runs; seeds are
# gathered into $FUZZ_BUILD_DIR/fuzz/seeds/TARGET from tests/data, the real
# models in $KILN_MODEL_CACHE if fetched, and artifacts compiled by this
# build's kiln). Findings: $FUZZ_BUILD_DIR/fuzz/findings/TARGET/crash-*;
# logs: $FUZZ_BUILD_DIR/fuzz/logs/TARGET.log. Exit status 1 when any target
# found something, after running the others. FUZZ_SKIP_BUILD=1: no build.
# FUZZ_FRESH_CORPUS=1: empty each target's corpus first (start from the
# seeds alone, as CI's run on a new clone does; figures reported for long
# runs come from such runs too, not only from a grown corpus).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$ROOT}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
BUILD_DIR=${FUZZ_BUILD_DIR:-build-fuzz}
case $BUILD_DIR in /*) ;; *) BUILD_DIR=$ROOT/$BUILD_DIR ;; esac
MODEL_CACHE=${KILN_MODEL_CACHE:-$HOME/.cache/kiln/models}
TARGETS=(tflite_import onnx_import tflite_compile artifact_load artifact_mutate npy project tuning)

usage() {
  echo "usage: scripts/fuzz.sh TARGET|all SECONDS [libFuzzer flags...]  (targets: ${TARGETS[*]})" >&2
  exit 2
}

[ "${1:-}" = list ] && { printf '%s\n' "${TARGETS[@]}"; exit 0; }
[ $# -ge 2 ] || usage
WHICH=$1 SECONDS_EACH=$2
shift 2
[[ "$SECONDS_EACH" =~ ^[0-9]+$ ]] || usage
if [ "$WHICH" = all ]; then
  selected=("${TARGETS[@]}")
else
  [[ " ${TARGETS[*]} " == *" $WHICH "* ]] || usage
  selected=("$WHICH")
fi

if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -G Ninja -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-16 -DCMAKE_CXX_COMPILER=clang++-16 -DKILN_FUZZ=ON
fi
build_targets=()
for t in "${selected[@]}"; do build_targets+=("kiln_fuzz_$t"); done
[[ " ${selected[*]} " == *" artifact_"* ]] && build_targets+=(kiln)
# FUZZ_SKIP_BUILD=1 runs the binaries as they are (e.g. while the tree is
# mid-edit).
[ "${FUZZ_SKIP_BUILD:-0}" = 1 ] || ninja -C "$BUILD_DIR" "${build_targets[@]}"

FUZZ=$BUILD_DIR/fuzz
# Artifacts compiled by this build's kiln (once per run of this script):
# small operator models, the output-binding and zero-size cases (copies,
# fills, constants), every fourth with --profile=stripped (no reflection).
compile_artifact_seeds() {
  [ -n "${ARTIFACT_SEEDS_DONE:-}" ] && return 0
  ARTIFACT_SEEDS_DONE=1
  local out=$FUZZ/artifact-seeds n=0 profile
  rm -rf "$out" && mkdir -p "$out"
  for m in tests/data/ops/{conv_2d_same,multi_io_two_inputs_two_outputs,chain_classifier_head} \
           tests/data/ops/{concatenation_const_input,add_const,transpose_rank4_nchw_to_nhwc} \
           tests/data/outputs/* tests/data/zero/*; do
    [ -f "$m/model.tflite" ] || continue
    n=$((n + 1))
    [ $((n % 4)) -eq 0 ] && profile=stripped || profile=default
    "$BUILD_DIR/bin/kiln" compile "$m/model.tflite" --profile=$profile \
      -o "$out/$(basename "$(dirname "$m")")_$(basename "$m").kiln" >/dev/null 2>&1 || true
  done
}

# Seeds: links to the files in the repository (so fresh copies of
# tests/data always show), artifacts compiled into the seed folder.
gather_seeds() {
  local t=$1 dir=$FUZZ/seeds/$1
  rm -rf "$dir" && mkdir -p "$dir"
  link() { for f in "$@"; do [ -f "$f" ] && ln -sf "$ROOT/$f" "$dir/$(echo "$f" | tr / _)"; done; return 0; }
  case $t in
    tflite_import)
      link tests/data/*/*.tflite tests/data/*/*/*.tflite
      for f in "$MODEL_CACHE"/*.tflite; do [ -f "$f" ] && ln -sf "$f" "$dir/"; done ;;
    onnx_import)
      # Kiln's bad ONNX cases, the real models if fetched, and every ninth
      # ONNX backend node test model (about 100 operators and attributes).
      link tests/data/*/*.onnx tests/data/*/*/*.onnx
      for f in "$MODEL_CACHE"/*.onnx; do [ -f "$f" ] && ln -sf "$f" "$dir/"; done
      local n=0
      for f in "${ONNX_NODE_TESTS:-/usr/share/libonnx-testdata/data/node}"/*/model.onnx; do
        [ -f "$f" ] || continue
        n=$((n + 1))
        if [ $((n % 9)) -eq 0 ]; then ln -sf "$f" "$dir/$(basename "$(dirname "$f")").onnx"; fi
      done ;;
    tflite_compile)
      link tests/data/*/*.tflite tests/data/*/*/*.tflite ;;
    artifact_load | artifact_mutate)
      link tests/data/bad/*.kiln
      compile_artifact_seeds
      for f in "$FUZZ"/artifact-seeds/*.kiln; do [ -f "$f" ] && ln -sf "$f" "$dir/"; done ;;
    npy)
      link tests/data/*/*.npy tests/data/*/*/*.npy ;;
    project | tuning)
      link tests/fuzz/seeds/$t/* ;;
  esac
}

flags_for() {
  case $1 in
    tflite_compile) echo "-timeout=120 -rss_limit_mb=4096" ;;
    tflite_import | onnx_import) echo "-timeout=60 -rss_limit_mb=4096" ;;
    npy) echo "-dict=$ROOT/tests/fuzz/dicts/npy.dict -timeout=10" ;;
    project | tuning) echo "-dict=$ROOT/tests/fuzz/dicts/json.dict -timeout=10 -max_len=4096" ;;
    *) echo "-timeout=30" ;;
  esac
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
mkdir -p "$FUZZ/logs"
failed=()
for t in "${selected[@]}"; do
  gather_seeds "$t"
  if [ "${FUZZ_FRESH_CORPUS:-0}" = 1 ]; then
    rm -rf "$FUZZ/corpus/$t"
  fi
  mkdir -p "$FUZZ/corpus/$t" "$FUZZ/findings/$t"
  log=$FUZZ/logs/$t.log
  echo "== $t: ${SECONDS_EACH}s, corpus $FUZZ/corpus/$t, log $log"
  # shellcheck disable=SC2046
  if "$BUILD_DIR/fuzz/kiln_fuzz_$t" "$FUZZ/corpus/$t" "$FUZZ/seeds/$t" \
       -max_total_time="$SECONDS_EACH" -print_final_stats=1 \
       -artifact_prefix="$FUZZ/findings/$t/" $(flags_for "$t") "$@" >"$log" 2>&1; then
    status=ok
  else
    status="FINDING (exit $?; see $log and $FUZZ/findings/$t/)"
    failed+=("$t")
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  corpus=$(find "$FUZZ/corpus/$t" -type f | wc -l)
  echo "   $t: ${runs:-?} runs, ${rate:-?} exec/s, corpus $corpus files: $status"
  [ "$status" = ok ] || tail -n 30 "$log" | sed 's/^/   | /'
done
if ((${#failed[@]})); then
  echo "fuzz.sh: findings in: ${failed[*]}" >&2
  exit 1
fi
