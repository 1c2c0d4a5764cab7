#!/usr/bin/python3
"""Runs ONNX backend node test cases through `kiln compile` and `kiln run`.

    tests/onnx/run_node_tests.py [--kiln build/bin/kiln] [--filter REGEX] [-v]

Each case (/usr/share/libonnx-testdata/data/node/<case>/) is model.onnx with
test_data_set_0/input_K.pb and output_K.pb (serialized TensorProtos). Result
per case: pass, fail (wrong values or shapes) or refused (kiln compile exits
with an error line).
"""
import argparse, os, re, subprocess, sys, tempfile
import numpy as np
import onnx
from onnx import numpy_helper

NODE_DIR = '/usr/share/libonnx-testdata/data/node'


def run_case(kiln, case_dir, work):
    model = os.path.join(case_dir, 'model.onnx')
    data = os.path.join(case_dir, 'test_data_set_0')
    art = os.path.join(work, 'model.kiln')
    p = subprocess.run([kiln, 'compile', model, '-o', art], capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        return 'refused', (p.stderr.strip().splitlines() or ['(no message)'])[-1], p.returncode
    inputs = sorted(f for f in os.listdir(data) if f.startswith('input_'))
    outputs = sorted((f for f in os.listdir(data) if f.startswith('output_')),
                     key=lambda f: int(re.findall(r'\d+', f)[0]))
    args = [kiln, 'run', art]
    for f in sorted(inputs, key=lambda f: int(re.findall(r'\d+', f)[0])):
        t = onnx.TensorProto()
        t.ParseFromString(open(os.path.join(data, f), 'rb').read())
        a = numpy_helper.to_array(t)
        path = os.path.join(work, f.replace('.pb', '.npy'))
        np.save(path, a)
        args += ['--input=@' + path]
    for k in range(len(outputs)):
        args += [f'--output=@{work}/output_{k}.npy']
    p = subprocess.run(args, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        return 'fail', 'kiln run: ' + (p.stderr.strip().splitlines() or ['?'])[-1], p.returncode
    for k, f in enumerate(outputs):
        t = onnx.TensorProto()
        t.ParseFromString(open(os.path.join(data, f), 'rb').read())
        want = numpy_helper.to_array(t)
        got_path = os.path.join(work, f'output_{k}.npy')
        if not os.path.exists(got_path):
            return 'fail', f'no output {k}', 0
        got = np.load(got_path)
        if got.shape != want.shape:
            return 'fail', f'output {k} shape {got.shape}, expected {want.shape}', 0
        if want.dtype.kind == 'f':
            ok = np.all((np.abs(got.astype(np.float64) - want) <= 1e-4 * (1 + np.abs(want))) |
                        (np.isnan(got) & np.isnan(want)) | (got == want))
        else:
            ok = np.array_equal(got.astype(want.dtype), want)
        if not ok:
            err = np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))
            return 'fail', f'output {k} differs (max |diff| {err:.3g})', 0
    return 'pass', '', 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--kiln', default=os.path.join(os.path.dirname(__file__), '../../build/bin/kiln'))
    ap.add_argument('--filter', default='')
    ap.add_argument('-v', action='store_true')
    a = ap.parse_args()
    cases = sorted(c for c in os.listdir(NODE_DIR) if re.search(a.filter, c))
    counts = {}
    for c in cases:
        with tempfile.TemporaryDirectory() as work:
            status, why, rc = run_case(a.kiln, os.path.join(NODE_DIR, c), work)
        counts[status] = counts.get(status, 0) + 1
        if a.v or status == 'fail':
            print(f'{status:8} {c}  {why}')
    print(counts)


if __name__ == '__main__':
    main()
