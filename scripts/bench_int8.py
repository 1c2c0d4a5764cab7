#!/usr/bin/env python3
"""Kiln on the int8 models against TensorFlow Lite, 1 thread, interleaved; Cortex-M4 flash and RAM.

  scripts/bench_int8.py [--rounds 10] [--runs 200] [--warmup 20]
      [--models person_detect,micro_speech_quantized,hello_world_int8]
      [--part all|latency|cortex-m] [--kiln build/bin/kiln]

Latency (--part latency). Each round runs every engine on every model, the
engines in an order that rotates from round to round (this machine is
shared: interleaving spreads its noise over all of them):
  - Kiln host, Kiln generic: `kiln run X.kiln --benchmark=RUNS` (local-sync,
    1 thread; its first run is the untimed warm-up, then RUNS timed ones) of
    the artifact compiled with --target-cpu=host / --target-cpu=generic;
  - TFLite C: TensorFlow Lite 2.9's native library (libtensorflowlite_c.so
    of npm tfjs-tflite-node@0.0.2, in the model cache) driven by
    tests/reference/tflite_native.c --runs=RUNS --warmup=WARMUP: builtin
    integer kernels, no delegate, 1 thread, each TfLiteInterpreterInvoke
    timed alone (CLOCK_MONOTONIC);
  - TFLite C+XNNPACK: the same with the XNNPACK delegate and its QS8 flag
    (--xnnpack=1: it takes the int8 operators it supports);
  - TFLite wasm: tests/reference/bench_reference.mjs --tflite-files (the
    tfjs-tflite wasm SIMD interpreter, XNNPACK, 1 thread; Infer() timed).
Every engine gets the first sample of the committed seed-1 input
(tests/data/models/int8/<m>/input_0.npy). TFLite runs person_detect from the
copy tests/reference/fix_quantized_dimension.mjs writes (TFLite 2.9 refuses
the original; tests/data/models/int8/README.md). A round gives each (model,
engine) the median and the minimum of its RUNS runs; the table gives the
median of the round medians, the best round median, the fastest single run
and Kiln host's and generic's median over each engine's (below 1: Kiln is
faster). Issue 12's target: Kiln host / TFLite C at most 1 (exit status 1
if missed). Before timing,
every engine's output is compared with the stored TFLite 2.9 reference
(output_0.npy, first sample): exit status 1 if Kiln differs by more than 1
LSB (hello_world_int8's documented FULLY_CONNECTED rounding) or TFLite C by
anything. The XNNPACK engines may differ by a few LSB (the README's table);
they are reported, not checked.

Cortex-M4 (--part cortex-m): `kiln export M --target=thumbv7em-none-eabihf
--profile=stripped --output-format=c-module`, the bundle's manifest.json
(code: the kernels object's loadable bytes; weights: NAME_constants; arena;
I/O; stack: the largest kernel frame from .stack_sizes) and arm-none-eabi-size
of the three objects as a firmware would build them (NAME.c and
NAME_constants.c with arm-none-eabi-gcc -O2 -mcpu=cortex-m4 -mthumb
-mfloat-abi=hard -mfpu=fpv4-sp-d16 -c, as tests/cross does; the kernels
object as exported). Kernels whose stack frame has a run-time size
("dynamic_stack" in the manifest) have no recorded frame: the RAM column
does not count them and the table says how many there are. Beside them,
TensorFlow Lite Micro's person detection example's tensor arena
(kTensorArenaSize = 136 * 1024 in its main_functions.cc); the target:
Kiln's arena at most that (exit status 1 if missed).

Needs node >= 20 (tests/reference, `npm ci` done), a C compiler (cc), the
TFLite library in the model cache (`node tests/reference/fetch_models.mjs
--bench`, run here if missing) and, for the Cortex-M part,
arm-none-eabi-gcc/-size. Standard library only.
"""
import argparse, ast, atexit, datetime, json, os, platform, shutil, statistics, subprocess, sys, tempfile

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
DATA = os.path.join(REPO, 'tests', 'data', 'models', 'int8')
REF = os.path.join(REPO, 'tests', 'reference')
# Kiln compile flags per model (hello_world_int8's input batch is dynamic).
MODELS = {
    'person_detect': [],
    'micro_speech_quantized': [],
    'hello_world_int8': ['--fix-shape=0=1x1'],
}
CPUS = ['host', 'generic']
ENGINES = ['Kiln host', 'Kiln generic', 'TFLite C', 'TFLite C+XNNPACK', 'TFLite wasm']
TFLM_ARENA = {'person_detect': 136 * 1024}  # TFLM examples' kTensorArenaSize, bytes
CORTEX_M4_FLAGS = ['-O2', '-mcpu=cortex-m4', '-mthumb', '-mfloat-abi=hard', '-mfpu=fpv4-sp-d16']


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--rounds', type=int, default=10)
    ap.add_argument('--runs', type=int, default=200)
    ap.add_argument('--warmup', type=int, default=20)
    ap.add_argument('--models', default=','.join(MODELS))
    ap.add_argument('--part', choices=['all', 'latency', 'cortex-m'], default='all')
    ap.add_argument('--kiln', default='build/bin/kiln')
    args = ap.parse_args()
    args.kiln = os.path.abspath(os.path.join(REPO, args.kiln))
    args.models = args.models.split(',')
    unknown = [m for m in args.models if m not in MODELS]
    if unknown:
        ap.error(f'unknown model {", ".join(unknown)} (known: {", ".join(MODELS)})')
    if args.rounds < 1 or args.runs < 1 or args.warmup < 0:
        ap.error('--rounds and --runs must be at least 1, --warmup at least 0')
    return args


def run(cmd, **kwargs):
    """subprocess.run, text output; on failure prints the command and its stderr and exits 1."""
    p = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if p.returncode != 0:
        sys.stderr.write(f'failed ({p.returncode}): {" ".join(map(str, cmd))}\n{p.stdout}{p.stderr}')
        sys.exit(1)
    return p


def read_npy_bytes(path):
    """(shape, descr, raw bytes) of a C-order .npy file."""
    raw = open(path, 'rb').read()
    if raw[:6] != b'\x93NUMPY':
        raise SystemExit(f'{path}: not a .npy file')
    if raw[6] == 1:
        length, start = int.from_bytes(raw[8:10], 'little'), 10
    else:
        length, start = int.from_bytes(raw[8:12], 'little'), 12
    header = ast.literal_eval(raw[start:start + length].decode('latin1'))
    if header['fortran_order']:
        raise SystemExit(f'{path}: Fortran order')
    return tuple(header['shape']), header['descr'], raw[start + length:]


def write_npy(path, shape, descr, data):
    header = repr({'descr': descr, 'fortran_order': False, 'shape': tuple(shape)}).encode('latin1')
    pad = 64 - (10 + len(header) + 1) % 64
    with open(path, 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + (len(header) + pad + 1).to_bytes(2, 'little'))
        f.write(header + b' ' * pad + b'\n' + data)


def signed8(data, descr):
    return [b - 256 if descr.endswith('i1') and b > 127 else b for b in data]


class Model:
    """One int8 model's files in the run's temporary folder: the first sample
    of its committed input (.npy for Kiln, .bin for TFLite C), its stored
    reference output, and the .tflite TFLite reads."""

    def __init__(self, name, tmp):
        self.name = name
        self.tflite = os.path.join(DATA, f'{name}.tflite')
        folder = os.path.join(DATA, name)
        meta = json.load(open(os.path.join(folder, 'meta.json')))
        if len(meta['inputs']) != 1 or len(meta['outputs']) != 1:
            raise SystemExit(f'{name}: one input and one output expected')
        self.input = self._first_sample(folder, 'input_0.npy', meta['inputs'][0]['shape'], tmp)
        shape, descr, data = read_npy_bytes(os.path.join(folder, 'output_0.npy'))
        count = len(data) // meta.get('stacked_samples', 1)
        self.expected = signed8(data[:count], descr)
        self.out_descr = descr
        self.reference_tflite = os.path.join(tmp, f'{name}_tflite_copy.tflite')
        run(['node', os.path.join(REF, 'fix_quantized_dimension.mjs'), self.tflite,
             self.reference_tflite])

    def _first_sample(self, folder, file, shape, tmp):
        _, descr, data = read_npy_bytes(os.path.join(folder, file))
        count = 1
        for d in shape:
            count *= d
        sample = data[:count * int(descr[-1])]
        npy = os.path.join(tmp, f'{self.name}_input.npy')
        write_npy(npy, shape, descr, sample)
        open(npy[:-4] + '.bin', 'wb').write(sample)
        return npy[:-4]


def max_lsb(got, want):
    if len(got) != len(want):
        return float('inf')
    return max((abs(a - b) for a, b in zip(got, want)), default=0)


# --- The engines: each returns (median ms, min ms) of one batch of runs.

def kiln_time(args, artifact, model):
    out = run([args.kiln, 'run', artifact, f'--input=@{model.input}.npy',
               f'--benchmark={args.runs}']).stdout
    tail = out.split('median: ')[1]
    return float(tail.split(' ms')[0]), float(tail.split('(min ')[1].split(' ms')[0])


def tflite_c(args, exe, lib, model, xnnpack, runs=None, out=None):
    cmd = [exe, lib, model.reference_tflite] + (['--xnnpack=1'] if xnnpack else [])
    if runs:
        cmd += [f'--runs={runs}', f'--warmup={args.warmup}']
    cmd += [f'{model.input}.bin', '--', out or os.devnull]
    return json.loads(run(cmd).stdout)


def tflite_c_time(args, exe, lib, model, xnnpack):
    times = tflite_c(args, exe, lib, model, xnnpack, runs=args.runs)['times_ns']
    return statistics.median(times) / 1e6, min(times) / 1e6


def wasm_times(args, models, tmp):
    path = os.path.join(tmp, 'wasm.json')
    run(['node', os.path.join(REF, 'bench_reference.mjs'), '--tflite-files',
         ','.join(m.reference_tflite for m in models), '--runs', str(args.runs),
         '--warmup', str(args.warmup), '--json', path])
    rows = json.load(open(path))['rows']
    return {m.name: (r['median'], r['min']) for m, r in zip(models, rows)}


def check_outputs(args, models, artifacts, exe, lib, tmp):
    """{(model, engine): max |difference| in LSB from the stored reference}."""
    diffs = {}
    for m in models:
        for cpu in CPUS:
            out = os.path.join(tmp, f'{m.name}_{cpu}_out.npy')
            run([args.kiln, 'run', artifacts[(m.name, cpu)], f'--input=@{m.input}.npy',
                 f'--output=@{out}'])
            _, descr, data = read_npy_bytes(out)
            diffs[(m.name, f'Kiln {cpu}')] = max_lsb(signed8(data, descr), m.expected)
        for engine, xnnpack in (('TFLite C', False), ('TFLite C+XNNPACK', True)):
            out = os.path.join(tmp, f'{m.name}_{xnnpack}_out.bin')
            tflite_c(args, exe, lib, m, xnnpack, out=out)
            diffs[(m.name, engine)] = max_lsb(signed8(open(out, 'rb').read(), m.out_descr), m.expected)
    return diffs


def measure(args, models, artifacts, exe, lib, tmp):
    """{(model, engine): [(median, min) per round]}, engines rotated per round."""
    results = {}
    for r in range(args.rounds):
        order = ENGINES[r % len(ENGINES):] + ENGINES[:r % len(ENGINES)]
        for engine in order:
            if engine == 'TFLite wasm':
                got = wasm_times(args, models, tmp)
            elif engine.startswith('Kiln'):
                cpu = engine.split()[1]
                got = {m.name: kiln_time(args, artifacts[(m.name, cpu)], m) for m in models}
            else:
                got = {m.name: tflite_c_time(args, exe, lib, m, engine.endswith('XNNPACK'))
                       for m in models}
            for name, t in got.items():
                results.setdefault((name, engine), []).append(t)
        print(f'round {r + 1}/{args.rounds} done', file=sys.stderr)
    return results


def commit():
    p = subprocess.run(['git', '-C', REPO, 'rev-parse', '--short', 'HEAD'], capture_output=True, text=True)
    dirty = subprocess.run(['git', '-C', REPO, 'status', '--porcelain', '--untracked-files=no'],
                           capture_output=True, text=True).stdout.strip()
    return p.stdout.strip() + (' + uncommitted changes' if dirty else '')


def cpu_name():
    for line in open('/proc/cpuinfo'):
        if line.startswith('model name'):
            return line.split(':', 1)[1].strip()
    return platform.processor() or 'unknown CPU'


def latency(args, tmp):
    models = [Model(n, tmp) for n in args.models]
    cache = run(['node', os.path.join(REF, 'fetch_models.mjs'), '--bench', '--quiet'],
                cwd=REPO).stdout.strip().splitlines()[-1]
    lib = os.path.join(cache, 'libtensorflowlite_c.so')
    exe = os.path.join(tmp, 'tflite_native')
    run([os.environ.get('CC', 'cc'), '-O2', '-std=c11', '-o', exe,
         os.path.join(REF, 'tflite_native.c'), '-ldl'])
    artifacts = {}
    for m in models:
        for cpu in CPUS:
            artifacts[(m.name, cpu)] = os.path.join(tmp, f'{m.name}_{cpu}.kiln')
            run([args.kiln, 'compile', m.tflite, '-o', artifacts[(m.name, cpu)],
                 f'--target-cpu={cpu}'] + MODELS[m.name])
    diffs = check_outputs(args, models, artifacts, exe, lib, tmp)
    results = measure(args, models, artifacts, exe, lib, tmp)
    version = tflite_c(args, exe, lib, models[0], False)['version']
    missed = print_latency(args, models, results, diffs, version)
    bad = [f'{m} {e}: {d} LSB' for (m, e), d in diffs.items()
           if (e.startswith('Kiln') and d > 1) or (e == 'TFLite C' and d > 0)]
    if bad:
        print('\nOutputs differ from the stored TFLite reference: ' + '; '.join(bad), file=sys.stderr)
    return not bad and not missed


def print_latency(args, models, results, diffs, version):
    print(f'Latency, 1 thread, ms: {args.rounds} interleaved rounds of {args.runs} timed runs '
          f'(TFLite: after {args.warmup} warm-up runs; Kiln: after its one untimed run). '
          f'TFLite C: TensorFlow Lite {version} libtensorflowlite_c.so. Measured '
          f'{datetime.date.today().isoformat()} at commit {commit()}, {cpu_name()}, '
          f'{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at the end.\n')
    print('| model | engine | median | best round | min | Kiln host / engine | '
          'Kiln generic / engine | output vs TFLite 2.9 (LSB) |')
    print('|---|---|---:|---:|---:|---:|---:|---:|')
    verdicts, missed = [], []
    for m in models:
        med = {e: statistics.median(t[0] for t in results[(m.name, e)]) for e in ENGINES}
        for e in ENGINES:
            rounds = results[(m.name, e)]
            best = min(t[0] for t in rounds)
            fastest = min(t[1] for t in rounds)
            diff = diffs.get((m.name, e))
            ratio = lambda k: '' if e == k else f'{med[k] / med[e]:.2f}x'  # noqa: E731
            print(f'| {m.name} | {e} | {med[e]:.4g} | {best:.4g} | {fastest:.4g} | '
                  f'{ratio("Kiln host")} | {ratio("Kiln generic")} | '
                  f'{"n/c" if diff is None else diff} |')
        r = med['Kiln host'] / med['TFLite C']
        verdicts.append(f'{m.name}: Kiln host / TFLite C {r:.2f}x ({"met" if r <= 1 else "NOT met"})')
        if r > 1:
            missed.append(m.name)
    print('\nn/c: not checked (the wasm interpreter; its outputs are in the '
          'reference folders\' wasm_output_0.npy).')
    print('Target (host latency at most TFLite native\'s): ' + '; '.join(verdicts) + '.')
    return missed


def measured_stack(out, name):
    """Peak stack of NAME_run on QEMU's mps2-an386 (tests/bench/cortexm_stack_main.c:
    stack painting), and the linked program's text + data; (None, None) without QEMU."""
    if not shutil.which('qemu-system-arm'):
        return None, None
    cm = os.path.join(REPO, 'tests', 'cross', 'cortexm')
    elf = os.path.join(out, 'stack.elf')
    run(['arm-none-eabi-gcc'] + CORTEX_M4_FLAGS + [
        '-std=c11', '-nostartfiles', '-T', os.path.join(cm, 'mps2_an386.ld'),
        '-Wl,--no-warn-execstack', f'-DKILN_MODULE={name}', f'-I{out}', f'-I{cm}',
        os.path.join(cm, 'startup.c'), os.path.join(REPO, 'tests', 'bench', 'cortexm_stack_main.c'),
        os.path.join(out, f'{name}.c'), os.path.join(out, f'{name}_constants.c'),
        os.path.join(out, f'{name}_kernels.o'), '-lm', '-lc', '-lgcc', '-o', elf])
    text, data = (int(x) for x in run(['arm-none-eabi-size', elf]).stdout.splitlines()[1].split()[:2])
    p = run(['timeout', '300', 'qemu-system-arm', '-M', 'mps2-an386', '-nographic', '-monitor',
             'none', '-serial', 'none', '-semihosting-config', 'enable=on,target=native',
             '-kernel', elf], cwd=out)
    return int((p.stdout + p.stderr).split('stack_bytes ')[1].split()[0]), text + data


def cortex_m(args, tmp):
    print('\nCortex-M4 C modules (thumbv7em-none-eabihf, --profile=stripped), bytes. From '
          'manifest.json: code (kernels), weights, flash = code + weights, arena, I/O, the largest '
          'kernel frame recorded in .stack_sizes. Objects: arm-none-eabi-size text + data of '
          'NAME_kernels.o and of NAME.c, NAME_constants.c built with arm-none-eabi-gcc '
          + ' '.join(CORTEX_M4_FLAGS) + '. Program: the same linked with the cross tests\' '
          'startup code, newlib and tests/bench/cortexm_stack_main.c (text + data). Measured stack: '
          'peak stack of one NAME_run on QEMU mps2-an386 (stack painting: glue, kernels, their '
          'run-time allocations, memcpy). RAM = arena + I/O + measured stack. Kernels with '
          'run-time stack: dispatches whose frame .stack_sizes does not record (the measured '
          'stack includes them).\n')
    print('| model | code | weights | **flash** | objects | program | arena | I/O | largest '
          'recorded frame | measured stack | **RAM** | kernels with run-time stack | '
          'TFLite Micro arena | arena <= TFLite Micro |')
    print('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|')
    ok = True
    for name in args.models:
        out = os.path.join(tmp, f'cm_{name}')
        run([args.kiln, 'export', os.path.join(DATA, f'{name}.tflite'), '--target=thumbv7em-none-eabihf',
             '--profile=stripped', '--output-format=c-module', '-o', out] + MODELS[name], cwd=REPO)
        manifest = json.load(open(os.path.join(out, 'manifest.json')))
        mem = manifest['memory']
        objects = [os.path.join(out, f'{name}_kernels.o')]
        for src in (f'{name}.c', f'{name}_constants.c'):
            obj = os.path.join(out, src[:-2] + '.o')
            run(['arm-none-eabi-gcc'] + CORTEX_M4_FLAGS + ['-c', os.path.join(out, src), '-o', obj])
            objects.append(obj)
        rows = run(['arm-none-eabi-size'] + objects).stdout.splitlines()[1:]
        objects_bytes = sum(int(r.split()[0]) + int(r.split()[1]) for r in rows)
        stack, program = measured_stack(out, name)
        ram = mem['arena_bytes'] + mem['io_bytes'] + (stack if stack is not None else mem['stack_bytes'])
        dynamic = sum(1 for d in manifest['dispatches'] if d.get('dynamic_stack'))
        tflm = TFLM_ARENA.get(name)
        verdict = '' if tflm is None else ('met' if mem['arena_bytes'] <= tflm else 'NOT met')
        ok = ok and verdict != 'NOT met'
        na = 'n/a (no qemu-system-arm)'
        print(f'| {name} | {mem["code_bytes"]} | {mem["constants_bytes"]} | {mem["flash_bytes"]} | '
              f'{objects_bytes} | {na if program is None else program} | {mem["arena_bytes"]} | '
              f'{mem["io_bytes"]} | {mem["stack_bytes"]} | {na if stack is None else stack} | '
              f'{ram} | {dynamic} of {len(manifest["dispatches"])} | {tflm or ""} | {verdict} |')
    return ok


def main():
    args = parse_args()
    tmp = tempfile.mkdtemp(prefix='kiln-bench-int8-')
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)
    ok = True
    if args.part in ('all', 'latency'):
        ok = latency(args, tmp) and ok
    if args.part in ('all', 'cortex-m'):
        ok = cortex_m(args, tmp) and ok
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
