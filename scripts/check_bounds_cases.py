#!/usr/bin/python3
"""Part of scripts/check-bounds.sh: the TFLite operator cases
(tests/data/ops, tests/data/ops_int8) and the real models, compiled with and
without --check-bounds and run on the same inputs: the checked build must
give the unchecked one's bytes and never KILN_OUT_OF_RANGE.

    scripts/check_bounds_cases.py [--kiln build/bin/kiln] [--filter REGEX]
    scripts/check_bounds_cases.py --overhead [--rounds 5] [--runs 50]

--overhead instead times the three named real models (wake-word head,
speech embedding, BlazeFace), checked and unchecked artifacts interleaved
round by round (`kiln run --benchmark`), and prints each model's median of
round medians and the ratio checked / unchecked.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
DATA = os.path.join(REPO, 'tests', 'data')
CACHE = os.environ.get('KILN_MODEL_CACHE') or os.path.expanduser('~/.cache/kiln/models')
REAL = [  # name, path, fix-shape flags
    ('alexa.tflite', os.path.join(CACHE, 'alexa.tflite'), []),
    ('embedding.tflite', os.path.join(CACHE, 'embedding.tflite'), ['--fix-shape=0=1x76x32x1']),
    ('blazeface.tflite', os.path.join(CACHE, 'blazeface.tflite'), []),
    ('alexa.onnx', os.path.join(CACHE, 'alexa.onnx'), []),
    ('embedding.onnx', os.path.join(CACHE, 'embedding.onnx'), ['--fix-shape=0=1x76x32x1']),
    ('blazeface.onnx', os.path.join(CACHE, 'blazeface.onnx'), []),
    ('ppocr_det.onnx', os.path.join(CACHE, 'ppocr_det.onnx'), ['--fix-shape=0=1x3x96x96']),
    ('person_detect', os.path.join(DATA, 'models/int8/person_detect.tflite'), []),
    ('micro_speech', os.path.join(DATA, 'models/int8/micro_speech_quantized.tflite'), []),
    ('hello_world', os.path.join(DATA, 'models/int8/hello_world_int8.tflite'), ['--fix-shape=0=1x1']),
]
# kiln inspect --json's element_type names.
DTYPES = {'f32': np.float32, 'i8': np.int8, 'u8': np.uint8, 'i16': np.int16, 'i32': np.int32,
          'i64': np.int64, 'i1': np.bool_}


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def random_inputs(kiln, model, flags, tmp):
    """Seeded inputs for `model` from its signature (kiln inspect --json)."""
    done = run([kiln, 'inspect', model, '--json'] + flags)
    if done.returncode:
        raise RuntimeError(done.stderr.strip())
    rng = np.random.default_rng(1)
    paths = []
    for k, io in enumerate(json.loads(done.stdout)['signature']['inputs']):
        dtype = DTYPES.get(io['element_type'])
        if dtype is None:
            raise RuntimeError('%s: input %d has element type %s, which this script cannot fill'
                               % (model, k, io['element_type']))
        if dtype == np.float32:
            value = rng.uniform(-1, 1, io['shape']).astype(np.float32)
        elif dtype == np.bool_:
            value = rng.integers(0, 2, io['shape']).astype(np.bool_)
        else:
            info = np.iinfo(dtype)
            value = rng.integers(max(info.min, -128), min(info.max, 127) + 1, io['shape']).astype(dtype)
        paths.append(os.path.join(tmp, 'input_%d.npy' % k))
        np.save(paths[-1], value)
    return paths


def compare(kiln, name, model, flags, inputs, tmp):
    """'' if the checked build runs and equals the unchecked one, else why."""
    outs = {}
    for checked in (False, True):
        artifact = os.path.join(tmp, 'm%d.kiln' % checked)
        done = run([kiln, 'compile', model, '-o', artifact] + flags +
                   (['--check-bounds'] if checked else []))
        if done.returncode:
            return 'compile%s: %s' % (' --check-bounds' if checked else '', done.stderr.strip())
        described = run([kiln, 'inspect', artifact, '--json'])
        count = len(json.loads(described.stdout)['artifact']['outputs']) \
            if described.returncode == 0 else 1
        paths = [os.path.join(tmp, 'out%d_%d.npy' % (checked, k)) for k in range(count)]
        done = run([kiln, 'run', artifact] + ['--output=@' + p for p in paths] +
                   ['--input=@' + i for i in inputs])
        if done.returncode:
            return 'run%s: %s' % (' (checked)' if checked else '', done.stderr.strip())
        outs[checked] = b''.join(np.load(p).tobytes() for p in paths)
    if outs[False] != outs[True]:
        return 'the checked build computes other bytes'
    return ''


def cases(filter_re):
    for folder in ('ops', 'ops_int8'):
        root = os.path.join(DATA, folder)
        for case in sorted(os.listdir(root)):
            model = os.path.join(root, case, 'model.tflite')
            if os.path.exists(model) and re.search(filter_re, case):
                inputs = sorted(os.path.join(root, case, f) for f in os.listdir(os.path.join(root, case))
                                if re.fullmatch(r'input_\d+\.npy', f))
                yield folder + '/' + case, model, [], inputs
    for name, model, flags in REAL:
        if os.path.exists(model) and re.search(filter_re, name):
            yield 'real/' + name, model, flags, None


def median_ms(kiln, artifact, inputs, runs):
    done = run([kiln, 'run', artifact, '--benchmark=%d' % runs] + ['--input=@' + i for i in inputs])
    match = re.search(r'median: ([0-9.]+) ms', done.stdout)
    if not match:
        raise RuntimeError(done.stdout + done.stderr)
    return float(match.group(1))


def overhead(kiln, rounds, runs):
    with tempfile.TemporaryDirectory() as tmp:
        for name, model, flags in REAL[:3]:
            inputs = random_inputs(kiln, model, flags, tmp)
            arts = {}
            for checked in (False, True):
                arts[checked] = os.path.join(tmp, '%s%d.kiln' % (name, checked))
                run([kiln, 'compile', model, '-o', arts[checked]] + flags +
                    (['--check-bounds'] if checked else []))
            # A model that runs in microseconds gets more runs per round, so
            # that each round lasts about 50 ms and a median is not timer noise.
            probe = median_ms(kiln, arts[False], inputs, runs)
            model_runs = max(runs, min(20000, int(50 / max(probe, 1e-4))))
            times = {False: [], True: []}
            for _ in range(rounds):
                for checked in (False, True):
                    times[checked].append(median_ms(kiln, arts[checked], inputs, model_runs))
            plain, checked = np.median(times[False]), np.median(times[True])
            print('%-18s unchecked %.4f ms, checked %.4f ms: %.2fx (%d rounds of %d runs)'
                  % (name, plain, checked, checked / plain, rounds, model_runs))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--kiln', default=os.path.join(REPO, 'build/bin/kiln'))
    ap.add_argument('--filter', default='')
    ap.add_argument('--overhead', action='store_true')
    ap.add_argument('--rounds', type=int, default=5)
    ap.add_argument('--runs', type=int, default=50)
    a = ap.parse_args()
    if a.overhead:
        return overhead(a.kiln, a.rounds, a.runs)
    counts = {'ops': 0, 'ops_int8': 0, 'real': 0}
    bad = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, model, flags, inputs in cases(a.filter):
            if inputs is None:
                inputs = random_inputs(a.kiln, model, flags, tmp)
            why = compare(a.kiln, name, model, flags, inputs, tmp)
            counts[name.split('/')[0]] += 1
            if why:
                bad.append(name)
                print('FAIL %s: %s' % (name, why))
    violations = sum(1 for b in bad)
    print('%d TFLite float cases, %d int8 cases, %d real models under --check-bounds: '
          '%d passed, %d failed' % (counts['ops'], counts['ops_int8'], counts['real'],
                                    sum(counts.values()) - violations, violations))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
