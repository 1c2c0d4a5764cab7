#!/usr/bin/env python3
"""Kiln against the reference engines on the real models, interleaved.

  scripts/bench_engines.py [--rounds 3] [--runs 200] [--kiln build/bin/kiln]

Each round runs, one after the other: Kiln (`kiln run --benchmark=RUNS`,
local-sync, 1 thread, artifacts compiled with --target-cpu=host and with
--target-cpu=generic), then `node tests/reference/bench_reference.mjs`
(ONNX Runtime 1.30 on the ONNX twins and the TFLite wasm interpreter, each
1 thread, RUNS runs). The table takes, per engine and model, the best
round's median, and gives Kiln / ONNX Runtime and its geometric mean. A
last table gives BlazeFace on local-task with 1 and 2 threads (interleaved
too). Needs `cd tests/reference && ONNXRUNTIME_NODE_INSTALL=skip npm ci`.
"""
import argparse, json, math, os, re, subprocess, tempfile

ap = argparse.ArgumentParser()
ap.add_argument('--rounds', type=int, default=3)
ap.add_argument('--runs', type=int, default=200)
ap.add_argument('--kiln', default='build/bin/kiln')
args = ap.parse_args()
os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
cache = subprocess.run(['node', 'tests/reference/fetch_models.mjs', '--quiet'], check=True,
                       capture_output=True, text=True).stdout.strip().splitlines()[-1]
tmp = tempfile.mkdtemp()
MODELS = ['alexa', 'embedding', 'blazeface']
FIX = {'embedding': ['--fix-shape=0=1x76x32x1']}
CPUS = ['host', 'generic']


def compile_model(m, cpu):
    out = f'{tmp}/{m}_{cpu}.kiln'
    subprocess.run([args.kiln, 'compile', f'{cache}/{m}.tflite', '-o', out,
                    f'--target-cpu={cpu}'] + FIX.get(m, []), check=True, capture_output=True)
    return out


def kiln_median(m, artifact, extra=()):
    out = subprocess.run([args.kiln, 'run', artifact, f'--benchmark={args.runs}',
                          f'--input=@tests/data/models/{m}/input_0.npy'] + list(extra),
                         check=True, capture_output=True, text=True).stdout
    return float(re.search(r'median: ([0-9.]+) ms', out).group(1))


def reference_medians():
    path = f'{tmp}/reference.json'
    subprocess.run(['node', 'tests/reference/bench_reference.mjs', '--runs', str(args.runs),
                    '--json', path], check=True, capture_output=True, text=True)
    return json.load(open(path))


artifacts = {(m, cpu): compile_model(m, cpu) for m in MODELS for cpu in CPUS}
best = {}


def keep(key, value):
    best[key] = min(best.get(key, math.inf), value)


for r in range(args.rounds):
    for m in MODELS:
        for cpu in CPUS:
            keep((m, f'kiln {cpu}'), kiln_median(m, artifacts[(m, cpu)]))
    ref = reference_medians()
    for row in ref['rows']:
        model = row['model'].rsplit('.', 1)[0]
        engine = 'ORT' if row['engine'].startswith('ONNX') else 'TFLite wasm'
        keep((model, engine), row['median'])
    art = artifacts[('blazeface', 'host')]
    for threads in (1, 2):
        keep(('blazeface', f'local-task {threads}'),
             kiln_median('blazeface', art, ['--device=local-task', f'--threads={threads}']))

engines = sorted({e for (_, e) in best if not e.startswith(('kiln', 'local-task'))})
print(f'Best of {args.rounds} interleaved rounds, each a median of {args.runs} runs, 1 thread, ms.\n')
print('| model | Kiln host | Kiln generic | ' + ' | '.join(engines) + ' | Kiln host / ORT |')
print('|---|' + '---:|' * (3 + len(engines)))
ratios = []
for m in MODELS:
    ort = best.get((m, 'ORT'))
    cells = [f'{best[(m, "kiln host")]:.3f}', f'{best[(m, "kiln generic")]:.3f}']
    cells += [f'{best[(m, e)]:.3f}' if (m, e) in best else '-' for e in engines]
    ratio = best[(m, 'kiln host')] / ort if ort else None
    if ratio:
        ratios.append(ratio)
    print(f'| {m} | ' + ' | '.join(cells) + (f' | {ratio:.2f}x |' if ratio else ' | - |'))
if ratios:
    geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
    print(f'\nGeometric mean of Kiln host / ONNX Runtime: {geo:.2f}x')
one, two = best[('blazeface', 'local-task 1')], best[('blazeface', 'local-task 2')]
print(f'\nBlazeFace, local-task: 1 thread {one:.3f} ms, 2 threads {two:.3f} ms '
      f'({one / two:.2f}x)')
