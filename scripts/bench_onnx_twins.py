#!/usr/bin/env python3
"""Kiln on a network's ONNX file against the same network's TFLite file.

  scripts/bench_onnx_twins.py [--rounds 12] [--runs 2000] [--warmup 200]
      [--models alexa,embedding] [--target-cpu host] [--kiln build/bin/kiln]

The numeric twins of scripts/bench_models.py (alexa, embedding; hey_mycroft
too if asked) are compiled twice by Kiln, from <m>.tflite and from
<m>.onnx (same --target-cpu, --fix-shape of input 0 where the batch is
symbolic), and each artifact is timed with `kiln run --benchmark=RUNS`
(local-sync, 1 thread, WARMUP untimed runs first via a first `kiln run
--benchmark=WARMUP` whose time is dropped) on the same seed-1 input
(tests/data/models/<m>/input_0.npy, hey_mycroft's written by
tflite_reference.mjs; the twins' inputs have the same shape and layout). Rounds interleave the two and a second timing of the
TFLite artifact (the A/A control: the noise of this machine), rotating
which goes first; the table takes each one's best round median and gives
ONNX / TFLite (the issue's target: within 1.1x) and the control, with the dispatch counts of both plans
(`kiln inspect --json`) and the largest difference between the two
artifacts' outputs, |onnx - tflite| / (1 + |tflite|). Exit status 1 if a
ratio is above --limit (default 1.1) or the outputs differ by more than
1e-4 scaled.

Needs node >= 20 for tests/reference/fetch_models.mjs (models cached in
~/.cache/kiln/models or $KILN_MODEL_CACHE). Standard library only.
"""
import argparse, atexit, json, math, os, shutil, sys, tempfile

sys.dont_write_bytecode = True  # no scripts/__pycache__ from the import below
import bench_models as bm  # noqa: E402

TWINS = [m.name for m in bm.MODELS if m.onnx == 'numeric']


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--rounds', type=int, default=12)
    ap.add_argument('--runs', type=int, default=2000)
    ap.add_argument('--warmup', type=int, default=200)
    ap.add_argument('--models', default='alexa,embedding')
    ap.add_argument('--target-cpu', default='host')
    ap.add_argument('--limit', type=float, default=1.1)
    ap.add_argument('--kiln', default='build/bin/kiln')
    args = ap.parse_args()
    args.kiln = os.path.abspath(args.kiln)
    models = bm.select(args.models)
    bad = [m.name for m in models if m.name not in TWINS]
    if bad:
        ap.error(f'{", ".join(bad)}: no ONNX numeric twin (twins: {", ".join(TWINS)})')
    return args, models


def compile_artifact(args, cache, tmp, m, fmt):
    out = f'{tmp}/{m.name}_{fmt}.kiln'
    bm.run([args.kiln, 'compile', f'{cache}/{m.name}.{fmt}', '-o', out,
            f'--target-cpu={args.target_cpu}'] + m.kiln_flags())
    return out


# Folder with each model's seed-1 input_K.npy (bench_models.reference_dir:
# the committed tests/data/models/<m>, or written by tflite_reference.mjs).
REFDIR = {}


def input_flags(m):
    return [f'--input=@{f}' for f in bm.npy_files(REFDIR[m.name], 'input')]


def median_ms(args, m, artifact):
    if args.warmup:
        bm.run([args.kiln, 'run', artifact, f'--benchmark={args.warmup}'] + input_flags(m))
    out = bm.run([args.kiln, 'run', artifact, f'--benchmark={args.runs}'] + input_flags(m)).stdout
    return float(out.split('median: ')[1].split(' ms')[0])


def dispatch_count(args, artifact):
    plan = json.loads(bm.run([args.kiln, 'inspect', artifact, '--json']).stdout)
    return len(plan['dispatches'])


def outputs(args, tmp, m, fmt, artifact):
    count = len(bm.npy_files(REFDIR[m.name], 'output'))
    files = [f'{tmp}/{m.name}_{fmt}_out{k}.npy' for k in range(count)]
    bm.run([args.kiln, 'run', artifact] + input_flags(m) + [f'--output=@{f}' for f in files])
    return [bm.read_npy(f)[1] for f in files]


def measure(args, models, artifacts):
    """Best round median per (model, slot), rounds interleaved. Slot 'again'
    times the TFLite artifact a second time: the A/A control, how far apart
    one artifact lands from itself on this machine."""
    best = {}
    slots = ['tflite', 'onnx', 'again']
    for r in range(args.rounds):
        for m in models:
            for slot in slots[r % 3:] + slots[:r % 3]:
                t = median_ms(args, m, artifacts[(m.name, 'tflite' if slot == 'again' else slot)])
                best[(m.name, slot)] = min(best.get((m.name, slot), math.inf), t)
    return best


def main():
    args, models = parse_args()
    os.chdir(bm.REPO)
    cache = bm.fetch()
    tmp = tempfile.mkdtemp(prefix='kiln-twins-')
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)
    REFDIR.update({m.name: bm.reference_dir(m, cache, tmp) for m in models})
    artifacts = {(m.name, fmt): compile_artifact(args, cache, tmp, m, fmt)
                 for m in models for fmt in ('tflite', 'onnx')}
    best = measure(args, models, artifacts)

    print(f'Kiln, --target-cpu={args.target_cpu}, local-sync, 1 thread: best of {args.rounds} '
          f'interleaved rounds, each a median of {args.runs} runs after {args.warmup} warm-up '
          f'runs, ms.\n')
    print('| model | from .tflite | from .onnx | ONNX / TFLite | A/A: .tflite again / .tflite '
          '| dispatches (tflite / onnx) | outputs max scaled diff |')
    print('|---|---:|---:|---:|---:|---:|---:|')
    failures = []
    for m in models:
        tfl, onx = artifacts[(m.name, 'tflite')], artifacts[(m.name, 'onnx')]
        ratio = best[(m.name, 'onnx')] / best[(m.name, 'tflite')]
        control = best[(m.name, 'again')] / best[(m.name, 'tflite')]
        diff = max(bm.max_scaled_error(a, b) for a, b in
                   zip(outputs(args, tmp, m, 'onnx', onx), outputs(args, tmp, m, 'tflite', tfl)))
        if ratio > args.limit:
            failures.append(f'{m.name}: ONNX / TFLite {ratio:.2f}x above {args.limit}x')
        if diff > 1e-4:
            failures.append(f'{m.name}: outputs differ by {diff:.3g} scaled')
        print(f'| {m.name} | {best[(m.name, "tflite")]:.4f} | {best[(m.name, "onnx")]:.4f} '
              f'| {ratio:.2f}x | {control:.2f}x | {dispatch_count(args, tfl)} / {dispatch_count(args, onx)} '
              f'| {diff:.2g} |')
    if failures:
        print('\n' + '; '.join(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
