#!/usr/bin/env python3
"""Per-dispatch profile of the real models: time, GFLOP/s, share of peak.

  scripts/bench_dispatches.py [--models blazeface,embedding] [--rounds 15]
      [--cpu host] [--kiln build/bin/kiln] [--peak-gflops F]

Compiles each model with --target-cpu=CPU, then runs `kiln run --benchmark=20
--trace=F` ROUNDS times (local-sync, 1 thread); each trace holds the last
warm run. A dispatch's time is the median of its traced durations; its
FLOP come from the plan (`kiln inspect --json`). Peak: `--peak-gflops`, or
what build/tests/bench/kiln_gemm_bench reports for this machine (measured
clock x FLOP per cycle of the vector ISA). Prints a markdown table,
slowest dispatch first.
"""
import argparse, json, os, re, statistics, subprocess, tempfile

ap = argparse.ArgumentParser()
ap.add_argument('--models', default='blazeface,embedding')
ap.add_argument('--rounds', type=int, default=15)
ap.add_argument('--cpu', default='host')
ap.add_argument('--kiln', default='build/bin/kiln')
ap.add_argument('--peak-gflops', type=float, default=0)
args = ap.parse_args()
os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
cache = subprocess.run(['node', 'tests/reference/fetch_models.mjs', '--quiet'], check=True,
                       capture_output=True, text=True).stdout.strip().splitlines()[-1]
tmp = tempfile.mkdtemp()
FIX = {'embedding': ['--fix-shape=0=1x76x32x1']}

peak = args.peak_gflops
if peak <= 0 and os.path.exists('build/tests/bench/kiln_gemm_bench'):
    out = subprocess.run(['build/tests/bench/kiln_gemm_bench', '--shapes=8x8x8', '--rounds=1',
                          '--runs=1'], capture_output=True, text=True).stdout
    m = re.search(r'= ([0-9.]+) GFLOP/s', out)
    peak = float(m.group(1)) if m else 0

for model in args.models.split(','):
    art = f'{tmp}/{model}.kiln'
    subprocess.run([args.kiln, 'compile', f'{cache}/{model}.tflite', '-o', art,
                    f'--target-cpu={args.cpu}'] + FIX.get(model, []), check=True,
                   capture_output=True)
    plan = json.loads(subprocess.run([args.kiln, 'inspect', art, '--json'], check=True,
                                     capture_output=True, text=True).stdout)
    dispatch_of_command = {c['index']: c['dispatch'] for c in plan['schedule']['commands']
                           if c['kind'] == 'dispatch'}
    durations = {}
    for _ in range(args.rounds):
        trace = f'{tmp}/{model}.json'
        subprocess.run([args.kiln, 'run', art, '--benchmark=20', f'--trace={trace}',
                        f'--input=@tests/data/models/{model}/input_0.npy'], check=True,
                       capture_output=True)
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
    print(f'\n{model} (--target-cpu={args.cpu}), sum of dispatch medians {total / 1000:.3f} ms'
          + (f', peak {peak:.1f} GFLOP/s' if peak else '') + '\n')
    print('| dispatch | operators | kernel | median us | share | MFLOP | GFLOP/s | % of peak |')
    print('|---|---|---|---:|---:|---:|---:|---:|')
    for us, name, ops, kernel, flops, gflops in sorted(rows, reverse=True):
        pct = f'{100 * gflops / peak:.0f}%' if peak else '-'
        print(f'| {name} | {ops} | {kernel} | {us:.1f} | {100 * us / total:.1f}% | '
              f'{flops / 1e6:.2f} | {gflops:.1f} | {pct} |')
