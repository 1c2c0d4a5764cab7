"""The real models the benchmark scripts run, their inputs, and a .npy reader.

Imported by scripts/bench_engines.py and scripts/bench_dispatches.py; not a
script. The models come from tests/reference/fetch_models.mjs (`--bench`
adds the benchmark-only ones and TFLite's C library); needs node and
`cd tests/reference && ONNXRUNTIME_NODE_INSTALL=skip npm ci`.
"""
import array, ast, os, struct, subprocess, sys

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))


class Model:
    def __init__(self, name, onnx, fix=None, data=None, note=''):
        self.name = name
        self.onnx = onnx   # 'numeric' (same network), 'latency' (similar network), None (no twin)
        self.fix = fix     # Kiln --fix-shape / TFLite resize of input 0, e.g. (1, 76, 32, 1)
        self.data = data   # folder with committed input_K.npy / output_K.npy, or None
        self.note = note

    def kiln_flags(self):
        return [f'--fix-shape=0={"x".join(map(str, self.fix))}'] if self.fix else []


# Every model is float32 (weights fp16 behind DEQUANTIZE for the MediaPipe ones).
MODELS = [
    Model('alexa', 'numeric', data='tests/data/models/alexa', note='openWakeWord "alexa" head'),
    Model('embedding', 'numeric', fix=(1, 76, 32, 1), data='tests/data/models/embedding',
          note='openWakeWord speech embedding'),
    Model('blazeface', 'latency', data='tests/data/models/blazeface',
          note='MediaPipe BlazeFace short range; ONNX: the 128x128 "front" model (tf2onnx)'),
    Model('hey_mycroft', 'numeric', note='openWakeWord "hey mycroft" head (layer norms)'),
    Model('hand_landmark_lite', None, note='MediaPipe hand landmarks (lite), 224x224'),
    Model('blazeface_full', None, note='MediaPipe BlazeFace full range, 192x192'),
]
BY_NAME = {m.name: m for m in MODELS}


def select(names):
    """The Model objects for a comma-separated list of names."""
    unknown = [n for n in names.split(',') if n not in BY_NAME]
    if unknown:
        raise SystemExit(f'unknown model {", ".join(unknown)} (known: {", ".join(BY_NAME)})')
    return [BY_NAME[n] for n in names.split(',')]


def run(cmd, **kwargs):
    """subprocess.run(cmd, capture_output=True, text=True); on failure prints
    the command and its stderr, then exits with status 1."""
    p = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if p.returncode != 0:
        sys.stderr.write(f'failed ({p.returncode}): {" ".join(map(str, cmd))}\n{p.stderr}')
        sys.exit(1)
    return p


def fetch():
    """Fetches (or finds cached) every model and TFLite's C library; returns the cache dir."""
    out = run(['node', 'tests/reference/fetch_models.mjs', '--bench', '--quiet'], cwd=REPO).stdout
    return out.strip().splitlines()[-1]


def reference_dir(model, cache, tmp):
    """Folder with the model's seed-1 input_K.npy and TFLite (wasm) output_K.npy.

    The committed tests/data/models/<m> where there is one; otherwise
    tests/reference/tflite_reference.mjs --seed 1 writes them into tmp (same
    generator, so the same values as the committed inputs would hold).
    """
    if model.data:
        return os.path.join(REPO, model.data)
    out = os.path.join(tmp, 'reference', model.name)
    if not os.path.exists(os.path.join(out, 'meta.json')):
        run(['node', 'tests/reference/tflite_reference.mjs', '--model', f'{cache}/{model.name}.tflite',
             '--seed', '1', '--out', out, '--quiet'], cwd=REPO)
    return out


def npy_files(folder, kind):
    """[folder/kind_0.npy, folder/kind_1.npy, ...] as far as they exist."""
    files = []
    while os.path.exists(os.path.join(folder, f'{kind}_{len(files)}.npy')):
        files.append(os.path.join(folder, f'{kind}_{len(files)}.npy'))
    return files


def read_npy(path):
    """(shape, array('f')) of a little-endian float32 C-order .npy file."""
    raw = open(path, 'rb').read()
    if raw[:6] != b'\x93NUMPY':
        raise ValueError(f'{path}: not a .npy file')
    if raw[6] == 1:
        (length,), start = struct.unpack('<H', raw[8:10]), 10
    else:
        (length,), start = struct.unpack('<I', raw[8:12]), 12
    header = ast.literal_eval(raw[start:start + length].decode('latin1'))
    if header['descr'] not in ('<f4', 'f4') or header['fortran_order']:
        raise ValueError(f'{path}: {header["descr"]}, only C-order float32 is read')
    data = array.array('f')
    data.frombytes(raw[start + length:])
    return tuple(header['shape']), data


def max_scaled_error(got, ref):
    """max |got - ref| / (1 + |ref|) over the elements (inf if the sizes differ)."""
    if len(got) != len(ref):
        return float('inf')
    worst = 0.0
    for a, b in zip(got, ref):
        e = abs(a - b) / (1 + abs(b))
        if not e <= worst:  # larger, or NaN
            worst = e if e == e else float('inf')
    return worst
