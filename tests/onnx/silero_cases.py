#!/usr/bin/python3
"""Silero VAD v6, v5, v4 and PyTorch 2.9's IR-10 / opset-18 export (real
ONNX models with If on the sample rate and on shapes, LSTM layers or their
Gemm/Sigmoid/Tanh unrolling, Split's num_outputs, ReduceMean-18) through `kiln compile` and `kiln run`, against ONNX
Runtime 1.30's outputs in tests/data/models/onnx/silero_*/
(tests/reference/make_expected.sh).

    tests/onnx/silero_cases.py [--kiln build/bin/kiln] [--cache DIR]

The scalar input `sr` is fixed to the value ONNX Runtime was fed (meta.json's
"fixed_values": 16000, and 8000 for the opset-18 model's 8 kHz branch) with
`--fix-value`, so every If on it
(and on shapes, once --fix-shape sets them) folds at compile time and the
artifact takes the other inputs only. Outputs must match within
1e-4 x (1 + |reference|). The models come from the real-model
cache (tests/reference/fetch_models.mjs, $KILN_MODEL_CACHE). Prints one
line per model; exit status 1 if one fails.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.normpath(os.path.join(HERE, '../data/models/onnx'))
DEFAULT_KILN = os.path.normpath(os.path.join(HERE, '../../build/bin/kiln'))

# model file, reference folder, --fix-shape flags, --fix-value flags (the
# value ONNX Runtime was fed: the reference folders' meta.json)
MODELS = [
    ('silero_vad_v6.onnx', 'silero_v6', ['input=1x512', 'state=2x1x128'], ['sr=16000']),
    ('silero_vad_v5.onnx', 'silero_v5', ['input=1x512', 'state=2x1x128'], ['sr=16000']),
    ('silero_vad_legacy.onnx', 'silero_legacy', ['input=1x512', 'h=2x1x64', 'c=2x1x64'],
     ['sr=16000']),
    ('silero_vad_op18.onnx', 'silero_op18', ['input=1x512', 'state=2x1x128'], ['sr=16000']),
    ('silero_vad_op18.onnx', 'silero_op18_8k', ['input=1x256', 'state=2x1x128'], ['sr=8000']),
]


def check(kiln, cache, tmp, file, folder, shapes, values):
    artifact = os.path.join(tmp, folder + '.kiln')
    r = subprocess.run([kiln, 'compile', os.path.join(cache, file), '-o', artifact] +
                       ['--fix-shape=' + s for s in shapes] +
                       ['--fix-value=' + v for v in values], capture_output=True, text=True)
    if r.returncode != 0:
        return 'kiln compile: ' + (r.stderr or r.stdout).strip()
    ref = os.path.join(DATA, folder)
    inputs = sorted(f for f in os.listdir(ref) if f.startswith('input_'))
    outputs = sorted(f for f in os.listdir(ref) if f.startswith('output_'))
    cmd = [kiln, 'run', artifact, '--device=local-sync']
    cmd += ['--input=@' + os.path.join(ref, f) for f in inputs]
    cmd += ['--output=@' + os.path.join(tmp, folder + '_' + f) for f in outputs]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return 'kiln run: ' + (r.stderr or r.stdout).strip()
    worst = 0.0
    for f in outputs:
        got = np.load(os.path.join(tmp, folder + '_' + f)).astype(np.float64)
        want = np.load(os.path.join(ref, f)).astype(np.float64)
        if got.shape != want.shape:
            return '%s: shape %s, expected %s' % (f, got.shape, want.shape)
        err = np.abs(got - want) / (1 + np.abs(want))
        worst = max(worst, float(err.max()))
        if not np.all(err <= 1e-4):
            return '%s: max scaled error %.3g' % (f, err.max())
    return 'ok (max scaled error %.2g)' % worst


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--kiln', default=DEFAULT_KILN)
    parser.add_argument('--cache', default=os.environ.get(
        'KILN_MODEL_CACHE', os.path.expanduser('~/.cache/kiln/models')))
    args = parser.parse_args()
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for file, folder, shapes, values in MODELS:
            path = os.path.join(args.cache, file)
            if not os.path.exists(path):
                print('FAIL %s: not in %s (node tests/reference/fetch_models.mjs)' % (file, args.cache))
                failed += 1
                continue
            verdict = check(args.kiln, args.cache, tmp, file, folder, shapes, values)
            ok = verdict.startswith('ok')
            failed += not ok
            print('%s %s (%s): %s' % ('PASS' if ok else 'FAIL', file, ' '.join(values), verdict))
    print('%d passed, %d failed' % (len(MODELS) - failed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
