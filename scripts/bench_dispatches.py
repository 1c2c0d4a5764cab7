#!/usr/bin/env python3
"""Per-dispatch profile of the real models, with ONNX Runtime's per-node profile beside it.

  scripts/bench_dispatches.py [--models blazeface,embedding] [--rounds 15]
      [--cpu host] [--kiln build/bin/kiln] [--peak-gflops F]
      [--ort-runs 100] [--top N]

Kiln: compiles each model with --target-cpu=CPU, then runs `kiln run
--benchmark=20 --trace=F` ROUNDS times (local-sync, 1 thread); each trace
holds the last warm run. A dispatch's time is the median of its traced
durations; its FLOP come from the plan (`kiln inspect --json`). Peak:
`--peak-gflops`, or what build/tests/bench/kiln_gemm_bench reports for this
machine (measured clock x FLOP per cycle of the vector ISA). Prints a
markdown table, slowest dispatch first.

ONNX Runtime (models with an ONNX twin, scripts/bench_models.py): `node
tests/reference/ort_profile.mjs` runs the twin with ORT's profiler on
(onnxruntime-node 1.30, 1 thread, the seed-1 input, 20 warm-up runs, then
ORT_RUNS runs) and reads the node events of its profile; the second table
gives per node (after ORT's graph fusions): name, op type, median and mean
us over the profiled runs, share of the sum of node medians. The profiler
adds its own cost around each node, so the sum of node medians, not the
profiled run time, is the figure to hold against Kiln's sum of dispatches.
BlazeFace's ONNX file is a similar network, not the same one.

--top N prints only the N slowest rows of each table (default: all).
Needs node >= 20 and `cd tests/reference && ONNXRUNTIME_NODE_INSTALL=skip npm ci`.
"""
import argparse, atexit, json, os, re, shutil, statistics, subprocess, sys, tempfile

sys.dont_write_bytecode = True  # no scripts/__pycache__ from the import below
import bench_models as bm  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
ap.add_argument('--models', default='blazeface,embedding')
ap.add_argument('--rounds', type=int, default=15)
ap.add_argument('--cpu', default='host')
ap.add_argument('--kiln', default='build/bin/kiln')
ap.add_argument('--peak-gflops', type=float, default=0)
ap.add_argument('--ort-runs', type=int, default=100)
ap.add_argument('--top', type=int, default=0)
args = ap.parse_args()
os.chdir(bm.REPO)
cache = bm.fetch()
tmp = tempfile.mkdtemp(prefix='kiln-dispatches-')
atexit.register(shutil.rmtree, tmp, ignore_errors=True)
top = args.top or None

peak = args.peak_gflops
if peak <= 0 and os.path.exists('build/tests/bench/kiln_gemm_bench'):
    out = subprocess.run(['build/tests/bench/kiln_gemm_bench', '--shapes=8x8x8', '--rounds=1',
                          '--runs=1'], capture_output=True, text=True).stdout
    m = re.search(r'= ([0-9.]+) GFLOP/s', out)
    peak = float(m.group(1)) if m else 0


def kiln_table(model):
    art = f'{tmp}/{model.name}.kiln'
    bm.run([args.kiln, 'compile', f'{cache}/{model.name}.tflite', '-o', art,
            f'--target-cpu={args.cpu}'] + model.kiln_flags())
    plan = json.loads(bm.run([args.kiln, 'inspect', art, '--json']).stdout)
    dispatch_of_command = {c['index']: c['dispatch'] for c in plan['schedule']['commands']
                           if c['kind'] == 'dispatch'}
    inputs = [f'--input=@{f}' for f in bm.npy_files(bm.reference_dir(model, cache, tmp), 'input')]
    durations = {}
    for _ in range(args.rounds):
        trace = f'{tmp}/{model.name}.json'
        bm.run([args.kiln, 'run', art, '--benchmark=20', f'--trace={trace}'] + inputs)
        for e in json.load(open(trace))['traceEvents']:
            if e.get('cat') == 'dispatch':
                d = dispatch_of_command[e['args']['command']]
                durations.setdefault(d, []).append(e['dur'])
    rows = []
    for d in plan['dispatches']:
        if d['id'] not in durations:
            continue
        us = statistics.median(durations[d['id']])
        gflops = d['flops'] / us / 1e3 if us > 0 else 0
        ops = ' '.join(o['name'] for o in d['ops'])
        k = d.get('kernel', {})
        tile = 'x'.join(str(x) for x in k.get('register_tile', [])) if k.get('strategy', 'loops') != 'loops' else ''
        rows.append((us, d['name'], ops, f"{k.get('strategy', 'loops')} {tile}".strip(), d['flops'], gflops))
    total = sum(r[0] for r in rows)
    print(f'\n{model.name} (--target-cpu={args.cpu}), Kiln, sum of dispatch medians {total / 1000:.3f} ms'
          + (f', peak {peak:.1f} GFLOP/s' if peak else '') + '\n')
    print('| dispatch | operators | kernel | median us | share | MFLOP | GFLOP/s | % of peak |')
    print('|---|---|---|---:|---:|---:|---:|---:|')
    for us, name, ops, kernel, flops, gflops in sorted(rows, reverse=True)[:top]:
        pct = f'{100 * gflops / peak:.0f}%' if peak else '-'
        print(f'| {name} | {ops} | {kernel} | {us:.1f} | {100 * us / total:.1f}% | '
              f'{flops / 1e6:.2f} | {gflops:.1f} | {pct} |')


def ort_table(model):
    path = f'{tmp}/{model.name}_ort.json'
    shape = ['--shape', 'x'.join(map(str, model.fix))] if model.fix else []
    bm.run(['node', 'tests/reference/ort_profile.mjs', '--model', f'{cache}/{model.name}.onnx',
            '--runs', str(args.ort_runs), '--json', path] + shape)
    prof = json.load(open(path))
    nodes = prof['nodes']
    total = sum(n['median_us'] for n in nodes)
    twin = 'similar network' if model.onnx == 'latency' else 'same network'
    print(f'\n{model.name}.onnx ({twin}), ONNX Runtime, {len(nodes)} nodes, sum of node medians '
          f'{total / 1000:.3f} ms (profiled run median {prof["run_median_us"] / 1000:.3f} ms)\n')
    print('| node | op | median us | mean us | share |')
    print('|---|---|---:|---:|---:|')
    for n in nodes[:top]:
        print(f'| {n["name"]} | {n["op"]} | {n["median_us"]:.1f} | {n["mean_us"]:.1f} | '
              f'{100 * n["median_us"] / total:.1f}% |')


for model in bm.select(args.models):
    kiln_table(model)
    if model.onnx:
        ort_table(model)
