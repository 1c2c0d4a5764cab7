#!/usr/bin/python3
"""Runtime indices through ONNX GatherElements and GatherND against an
independent NumPy evaluation of the ONNX definitions.

    tests/onnx/index_cases.py [--kiln build/bin/kiln]

The backend node tests feed few negative indices and no out-of-range ones.
Here the indices are graph inputs (run-time data): negative ones must count
from the end of their axis; out-of-range ones (Kiln's documented choice,
ONNXIndexOps.cpp) are clamped into the axis after wrapping, so generated
code never reads outside the data. Each case is one node written with
onnx.helper, compiled and run by `kiln run`, compared exactly.

Prints one line per case and 'N passed, M failed'; exit status 1 if any
failed.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper


def clampwrap(i, k):
    """Kiln's index rule: negative + k, then clamped into [0, k)."""
    i = np.where(i < 0, i + k, i)
    return np.clip(i, 0, k - 1)


def gather_elements(data, idx, axis):
    idx = clampwrap(idx, data.shape[axis])
    out = np.empty(idx.shape, data.dtype)
    for o in np.ndindex(*idx.shape):
        src = list(o)
        src[axis] = idx[o]
        out[o] = data[tuple(src)]
    return out


def gather_nd(data, idx, b):
    m = idx.shape[-1]
    out_shape = idx.shape[:-1] + data.shape[b + m:]
    out = np.empty(out_shape, data.dtype)
    for o in np.ndindex(*idx.shape[:-1]):
        t = [int(clampwrap(idx[o + (j,)], data.shape[b + j])) for j in range(m)]
        out[o] = data[tuple(o[:b]) + tuple(t)]
    return out


CASES = [
    ('GatherElements', (3, 4), (3, 5), {'axis': 1}, np.int64, -4, 4),
    ('GatherElements', (4, 2, 3), (2, 2, 3), {'axis': 0}, np.int32, -4, 3),
    ('GatherElements', (3, 4), (2, 4), {'axis': -2}, np.int64, -7, 7),  # out of range
    ('GatherND', (3, 4, 2), (5, 2), {}, np.int64, -3, 3),
    ('GatherND', (2, 3, 4), (2, 3, 1), {'batch_dims': 1}, np.int64, -3, 3),
    ('GatherND', (4, 3), (6, 2), {}, np.int32, -9, 9),  # out of range
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--kiln', default='build/bin/kiln')
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    passed = failed = 0
    for n, (op, dshape, ishape, attrs, itype, lo, hi) in enumerate(CASES):
        data = rng.uniform(-1, 1, dshape).astype(np.float32)
        idx = rng.integers(lo, hi, ishape).astype(itype)
        if op == 'GatherElements':
            want = gather_elements(data, idx, attrs['axis'])
        else:
            want = gather_nd(data, idx, attrs.get('batch_dims', 0))
        ttype = TensorProto.INT64 if itype == np.int64 else TensorProto.INT32
        node = helper.make_node(op, ['x', 'i'], ['y'], **attrs)
        graph = helper.make_graph(
            [node], 'g', [helper.make_tensor_value_info('x', TensorProto.FLOAT, dshape),
                          helper.make_tensor_value_info('i', ttype, ishape)],
            [helper.make_tensor_value_info('y', TensorProto.FLOAT, want.shape)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 13)])
        name = '%s#%d %s %s %s' % (op, n, list(dshape), list(ishape), attrs)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, 'm.onnx')
            onnx.save(model, path)
            np.save(os.path.join(tmp, 'x.npy'), data)
            np.save(os.path.join(tmp, 'i.npy'), idx)
            out = os.path.join(tmp, 'y.npy')
            r = subprocess.run([args.kiln, 'run', path, '--input=@' + os.path.join(tmp, 'x.npy'),
                                '--input=@' + os.path.join(tmp, 'i.npy'), '--output=@' + out],
                               capture_output=True, text=True, timeout=300)
            verdict = ''
            if r.returncode != 0:
                verdict = 'kiln run exited %d: %s' % (r.returncode, (r.stderr or r.stdout).strip())
            else:
                got = np.load(out)
                if got.shape != want.shape or not np.array_equal(got, want):
                    verdict = 'wrong values: got %s, expected %s' % (got.tolist(), want.tolist())
        print(('pass  ' if not verdict else 'FAIL  ') + name + ('' if not verdict else ': ' + verdict))
        passed += not verdict
        failed += bool(verdict)
    print('%d passed, %d failed' % (passed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
