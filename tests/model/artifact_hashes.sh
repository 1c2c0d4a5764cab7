#!/usr/bin/env bash
# ArtifactHashes: the bytes Kiln writes for the real models, compared with
# the SHA-256 sums recorded in tests/data/artifact_hashes.txt.
#
#   tests/model/artifact_hashes.sh KILN MODEL_CACHE CASE           # one case (CTest)
#   tests/model/artifact_hashes.sh KILN MODEL_CACHE --list         # the case names
#   tests/model/artifact_hashes.sh KILN MODEL_CACHE --update       # record every case anew
#
# A refactor of the compiler must not change what it writes: every artifact
# (.kiln) and every file of a static C module must stay byte-identical. A
# change that is meant to change the output (a new optimization, a format
# version) re-records the sums with --update, and its commit message says
# why the bytes changed.
#
# Each line of the table: NAME MODEL ARGS..., with MODEL in MODEL_CACHE (the
# fetched real models) or under tests/data/models. Every case names its
# target and CPU, so the bytes do not depend on the machine that runs the
# test, and compiles from inside the model's folder, so no absolute path
# reaches the output.
set -euo pipefail
shopt -s inherit_errexit
if [ $# -ne 3 ]; then
  echo "usage: $0 KILN MODEL_CACHE CASE|--list|--update (e.g. $0 build/bin/kiln ~/.cache/kiln/models --list)" >&2
  exit 2
fi
KILN=$1 CACHE=$2 WHAT=$3
[[ $KILN == - || $KILN == /* ]] || KILN=$PWD/$KILN
[[ $CACHE == - || $CACHE == /* ]] || CACHE=$PWD/$CACHE
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RECORD=$ROOT/tests/data/artifact_hashes.txt

cases() {
  cat <<'TABLE'
alexa_x86_64 alexa.tflite --target=x86_64-linux-gnu --target-cpu=x86-64-v2
alexa_riscv64 alexa.tflite --target=riscv64-linux-gnu
embedding_x86_64_v3 embedding.tflite --fix-shape=serving_default_input_1:0=2x76x32x1 --target=x86_64-linux-gnu --target-cpu=x86-64-v3
embedding_onnx_aarch64 embedding.onnx --fix-shape=0=1x76x32x1 --target=aarch64-linux-gnu
blazeface_x86_64_v3 blazeface.tflite --target=x86_64-linux-gnu --target-cpu=x86-64-v3
blazeface_stripped blazeface.tflite --target=x86_64-linux-gnu --target-cpu=x86-64-v2 --profile=stripped
blazeface_onnx_x86_64 blazeface.onnx --target=x86_64-linux-gnu --target-cpu=x86-64-v2
person_detect_x86_64_v3 int8/person_detect.tflite --target=x86_64-linux-gnu --target-cpu=x86-64-v3
person_detect_m4_cmodule int8/person_detect.tflite --target=thumbv7em-none-eabihf --output-format=c-module
micro_speech_m0_cmodule int8/micro_speech_quantized.tflite --target=thumbv6m-none-eabi --output-format=c-module
TABLE
}

# "FILE SHA256" for each file case NAME writes (one for an artifact, four
# for a C module), sorted by file name.
hash_case() {
  local name=$1 model=$2
  shift 2
  local dir file
  if [ -f "$CACHE/$model" ]; then dir=$CACHE; else dir=$ROOT/tests/data/models; fi
  [ -f "$dir/$model" ] || { echo "$name: model $model not found in $CACHE or tests/data/models" >&2; return 1; }
  local out
  out=$(mktemp -d "${TMPDIR:-/tmp}/kiln-hash-XXXXXX")
  # shellcheck disable=SC2064
  trap "rm -rf '$out'" RETURN
  if [[ " $* " == *" --output-format=c-module "* ]]; then
    (cd "$(dirname "$dir/$model")" && "$KILN" compile "$(basename "$model")" "$@" -o "$out/m" >/dev/null)
  else
    mkdir "$out/m"
    (cd "$(dirname "$dir/$model")" && "$KILN" compile "$(basename "$model")" "$@" -o "$out/m/a.kiln" >/dev/null)
  fi
  (cd "$out/m" && for file in $(ls | sort); do echo "$name/$file $(sha256sum "$file" | cut -d' ' -f1) $(stat -c %s "$file")"; done)
}

case $WHAT in
  --list)
    cases | cut -d' ' -f1 ;;
  --update)
    {
      echo "# SHA-256 and size (bytes) of every file tests/model/artifact_hashes.sh compiles"
      echo "# (CTest ArtifactHashes.*); re-record with: tests/model/artifact_hashes.sh build/bin/kiln ~/.cache/kiln/models --update"
      cases | while read -r name model args; do
        # shellcheck disable=SC2086
        hash_case "$name" "$model" $args
      done
    } >"$RECORD.new" || { rm -f "$RECORD.new"; exit 1; }
    mv "$RECORD.new" "$RECORD"
    echo "recorded $(grep -vc '^#' "$RECORD") files in $RECORD" ;;
  *)
    line=$(cases | awk -v n="$WHAT" '$1 == n')
    [ -n "$line" ] || { echo "no case '$WHAT' (see --list)" >&2; exit 2; }
    read -r name model args <<<"$line"
    # shellcheck disable=SC2086
    actual=$(hash_case "$name" "$model" $args)
    expected=$(grep "^$name/" "$RECORD" || true)
    [ -n "$expected" ] || { echo "$name: nothing recorded in $RECORD (run with --update)" >&2; exit 1; }
    if [ "$actual" != "$expected" ]; then
      echo "$name: the compiled bytes changed"
      diff <(echo "$expected") <(echo "$actual") | sed 's/^</recorded:/; s/^>/now:     /' | grep -v '^---' || true
      echo "(a refactor must not change them; a deliberate change re-records: $0 KILN CACHE --update)"
      exit 1
    fi
    echo "$name: $(echo "$actual" | wc -l) file(s) byte-identical" ;;
esac
