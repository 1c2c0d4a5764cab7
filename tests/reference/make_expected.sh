#!/usr/bin/env bash
# Regenerate Kiln's committed real-model reference data:
#   tests/data/models/{alexa,embedding,blazeface}/{input_K.npy,output_K.npy,meta.json}
# (seed 1, TFLite wasm interpreter, 1 thread), and from ONNX Runtime 1.30
# (1 thread) on the ONNX models
#   tests/data/models/embedding_batch2/           embedding.onnx, batch 2, seed 2
#   tests/data/models/onnx/{alexa,embedding,blazeface,ppocr_det,silero_v5,silero_v6,silero_legacy,silero_op18,silero_op18_8k}/
# and the int8 models' references tests/data/models/int8/*/ (make_int8_expected.mjs).
#
#   tests/reference/make_expected.sh [--cache DIR]
#
# Fetches/verifies the models first (fetch_models.mjs; cached, offline once
# cached) and installs the pinned npm packages if node_modules is missing.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cd "$here"

if [ ! -d node_modules/@tensorflow/tfjs-tflite ] || [ ! -d node_modules/onnxruntime-node ]; then
  ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund
fi

cache="$(node fetch_models.mjs --quiet "$@" | tail -n 1)"

for m in alexa embedding blazeface; do
  node tflite_reference.mjs --model "$cache/$m.tflite" --seed 1 --out "$repo/tests/data/models/$m"
done
# The embedding model with its dynamic batch fixed to 2: ONNX Runtime on the
# ONNX twin (the TFLite interpreter here cannot resize inputs).
node ort_reference.mjs --model "$cache/embedding.onnx" --shape 2x76x32x1 --seed 2 \
  --out "$repo/tests/data/models/embedding_batch2"
# The ONNX real models (tests/model/OnnxRealModelTest.cpp), seed 1. PP-OCRv4's
# detector at 1x3x96x96 (any multiple of 32 works; this one keeps the files
# small) on a synthetic text page, since on uniform noise its output is 0.
onnx="$repo/tests/data/models/onnx"
node ort_reference.mjs --model "$cache/alexa.onnx" --seed 1 --out "$onnx/alexa"
node ort_reference.mjs --model "$cache/embedding.onnx" --shape 1x76x32x1 --seed 1 --out "$onnx/embedding"
node ort_reference.mjs --model "$cache/blazeface.onnx" --seed 1 --out "$onnx/blazeface"
node ort_reference.mjs --model "$cache/ppocr_det.onnx" --shape 1x3x96x96 --seed 1 --input text \
  --out "$onnx/ppocr_det"
# Silero VAD at 16 kHz, one 512-sample window: sr is fed as kiln compile
# --fix-value=sr=16000 burns it in (no input file for it).
node ort_reference.mjs --model "$cache/silero_vad_v5.onnx" --shape input=1x512 \
  --shape state=2x1x128 --value sr=16000 --seed 1 --out "$onnx/silero_v5"
node ort_reference.mjs --model "$cache/silero_vad_legacy.onnx" --shape input=1x512 \
  --shape h=2x1x64 --shape c=2x1x64 --value sr=16000 --seed 1 --out "$onnx/silero_legacy"
node ort_reference.mjs --model "$cache/silero_vad_v6.onnx" --shape input=1x512 \
  --shape state=2x1x128 --value sr=16000 --seed 1 --out "$onnx/silero_v6"
node ort_reference.mjs --model "$cache/silero_vad_op18.onnx" --shape input=1x512 \
  --shape state=2x1x128 --value sr=16000 --seed 1 --out "$onnx/silero_op18"
node ort_reference.mjs --model "$cache/silero_vad_op18.onnx" --shape input=1x256 \
  --shape state=2x1x128 --value sr=8000 --seed 2 --out "$onnx/silero_op18_8k"
# The int8 real models of tests/data/models/int8 (committed with the tree):
# TensorFlow Lite 2.9's native C library (fetched with --bench) and the wasm
# interpreter, compared; make_int8_expected.mjs says which output is stored.
node fetch_models.mjs --quiet --bench "$@" > /dev/null
node make_int8_expected.mjs --lib "$cache/libtensorflowlite_c.so"
echo "expected data written to $repo/tests/data/models"
