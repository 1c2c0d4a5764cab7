#!/usr/bin/env python3
"""Benchmarks Kiln on the real models; prints markdown tables (medians).

  scripts/bench.py [--runs N] [--kiln build/bin/kiln]

Table 1: compile time (median of 5 `kiln compile`) and `kiln run
--benchmark=N` latency, local-sync (1 thread), for --target-cpu=generic and
x86-64-v3. Table 2: default workgroup tiles vs one tile per dispatch (every
tile size 0), local-sync and local-task with 2 threads.
Reference engines: `node tests/reference/bench_reference.mjs`.
"""
import argparse, json, os, re, statistics, subprocess, sys, tempfile, time

ap = argparse.ArgumentParser()
ap.add_argument('--runs', type=int, default=200)
ap.add_argument('--kiln', default='build/bin/kiln')
args = ap.parse_args()
os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
cache = subprocess.run(['node', 'tests/reference/fetch_models.mjs', '--quiet'],
                       check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
tmp = tempfile.mkdtemp()
FIX = {'embedding': ['--fix-shape=0=1x76x32x1']}

def compile_model(m, extra, out):
    cmd = [args.kiln, 'compile', f'{cache}/{m}.tflite', '-o', out] + FIX.get(m, []) + extra
    t = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    return time.perf_counter() - t

def run(m, artifact, extra):
    ins = [f'--input=@tests/data/models/{m}/input_0.npy']
    out = subprocess.run([args.kiln, 'run', artifact, f'--benchmark={args.runs}'] + ins + extra,
                         check=True, capture_output=True, text=True).stdout
    return float(re.search(r'median: ([0-9.]+) ms', out).group(1))

print('| model | target cpu | compile (median of 5) | artifact bytes | dispatches | `kiln run` median, 1 thread |')
print('|---|---|---:|---:|---:|---:|')
for m in ['alexa', 'embedding', 'blazeface']:
    for cpu in ['generic', 'x86-64-v3']:
        art = f'{tmp}/{m}_{cpu}.kiln'
        times = [compile_model(m, [f'--target-cpu={cpu}'], art) for _ in range(5)]
        plan = json.loads(subprocess.run([args.kiln, 'inspect', art, '--json'], check=True,
                                         capture_output=True, text=True).stdout)
        print(f'| {m} | {cpu} | {statistics.median(times):.2f} s | {os.path.getsize(art)} | '
              f'{len(plan["dispatches"])} | {run(m, art, []):.3f} ms |')

print()
print('| model | tiles | workgroups | local-sync | local-task, 2 threads |')
print('|---|---|---:|---:|---:|')
for m in ['embedding', 'blazeface']:
    art = f'{tmp}/{m}_default.kiln'
    compile_model(m, [], art)
    plan = json.loads(subprocess.run([args.kiln, 'inspect', art, '--json'], check=True,
                                     capture_output=True, text=True).stdout)
    tuning = {'tiles': {str(d['id']): [0] * len(d['tile_sizes'])
                        for d in plan['dispatches'] if d['tile_sizes']}}
    tf = f'{tmp}/{m}_one_tile.json'
    json.dump(tuning, open(tf, 'w'))
    one = f'{tmp}/{m}_one.kiln'
    compile_model(m, [f'--tuning={tf}'], one)
    for label, a in [('default', art), ('one per dispatch', one)]:
        p = json.loads(subprocess.run([args.kiln, 'inspect', a, '--json'], check=True,
                                      capture_output=True, text=True).stdout)
        wgs = sum(d['workgroup_count'][0] * d['workgroup_count'][1] * d['workgroup_count'][2]
                  for d in p['dispatches'])
        print(f'| {m} | {label} | {wgs} | {run(m, a, []):.3f} ms | '
              f'{run(m, a, ["--device=local-task", "--threads=2"]):.3f} ms |')
