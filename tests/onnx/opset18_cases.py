#!/usr/bin/env python3
"""Operators of ONNX opsets 18 to 21 (IR versions 9 and 10) through Kiln.

  opset18_cases.py --write DIR      writes each case's model.onnx and
                                    input_K.npy into DIR/<case>/ (once; then
                                    tests/reference/opset18_reference.mjs adds
                                    ONNX Runtime's output_K.npy)
  opset18_cases.py --kiln KILN [--data DIR]
                                    runs every case with `kiln compile` and
                                    `kiln run` and compares with the committed
                                    ONNX Runtime outputs (1e-5 relative, 1e-6
                                    absolute for float) and with NumPy's
                                    evaluation of the ONNX definition where one
                                    is given; then the REFUSED models, built
                                    here, must give one `kiln: error:` line
                                    holding a phrase.

The models are written with onnx.helper (onnx 1.12) for opsets its checker does
not know, so onnx.checker is not called on them.
"""
import argparse
import math
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, '..', 'data', 'onnx', 'opset18')
F, I32, I64 = TensorProto.FLOAT, TensorProto.INT32, TensorProto.INT64


def model(nodes, inputs, outputs, opset, ir=9, inits=()):
    """A one-graph model: inputs/outputs are (name, type, shape)."""
    graph = helper.make_graph(
        nodes, 'g', [helper.make_tensor_value_info(*i) for i in inputs],
        [helper.make_tensor_value_info(*o) for o in outputs],
        initializer=[numpy_helper.from_array(np.asarray(v), n) for n, v in inits])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid('', opset)],
                          producer_name='kiln-opset18-cases')
    m.ir_version = ir
    return m


def gelu(x, tanh=False):
    if tanh:
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    erf = np.vectorize(math.erf)
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


def mish(x):
    return x * np.tanh(np.log1p(np.exp(x)))


def reduce_case(op, axes, keepdims=1, noop=None, opset=18):
    attrs = {'keepdims': keepdims}
    if noop is not None:
        attrs['noop_with_empty_axes'] = noop
    ins, inits = ['x'], []
    if axes is not None:
        ins.append('axes')
        inits = [('axes', np.array(axes, np.int64))]
    return model([helper.make_node(op, ins, ['y'], **attrs)], [('x', F, [2, 3, 4])],
                 [('y', F, None)], opset, inits=inits)


def f32(*shape, seed=0, lo=-2, hi=2):
    return np.random.default_rng(seed).uniform(lo, hi, shape).astype(np.float32)


def i32(*shape, seed=0):
    return np.random.default_rng(seed).integers(-1000, 1000, shape).astype(np.int32)


def unary(op, opset, ir=9, dtype=F, **attrs):
    return model([helper.make_node(op, ['x'], ['y'], **attrs)], [('x', dtype, [3, 5])],
                 [('y', dtype, [3, 5])], opset, ir)


def binary(op, opset=18, dtype=I32):
    return model([helper.make_node(op, ['a', 'b'], ['y'])],
                 [('a', dtype, [3, 4]), ('b', dtype, [4])], [('y', dtype, [3, 4])], opset)


X = f32(2, 3, 4)
# name -> (model, inputs, NumPy reference of the outputs or None)
CASES = {
    'reducemean_axes_input': (reduce_case('ReduceMean', [1], keepdims=0), [X],
                              lambda x: [x.mean(axis=1)]),
    'reducemax_noop_empty': (reduce_case('ReduceMax', None, noop=1), [X], lambda x: [x]),
    'reducel2_all': (reduce_case('ReduceL2', None), [X],
                     lambda x: [np.sqrt((x.astype(np.float64) ** 2).sum(keepdims=True))]),
    'reducesumsquare_neg_axes': (reduce_case('ReduceSumSquare', [-1, 0]), [X],
                                 lambda x: [(x ** 2).sum(axis=(0, 2), keepdims=True)]),
    'reducelogsumexp_axes': (reduce_case('ReduceLogSumExp', [2], keepdims=0), [X],
                             lambda x: [np.log(np.exp(x).sum(axis=2))]),
    'reducemin_opset20': (reduce_case('ReduceMin', [0, 2], opset=20), [X],
                          lambda x: [x.min(axis=(0, 2), keepdims=True)]),
    'split_num_outputs': (
        model([helper.make_node('Split', ['x'], ['a', 'b', 'c'], axis=0, num_outputs=3)],
              [('x', F, [7, 2])], [('a', F, None), ('b', F, None), ('c', F, None)], 18),
        [f32(7, 2)], lambda x: [x[0:3], x[3:6], x[6:7]]),
    'pad_axes': (
        model([helper.make_node('Pad', ['x', 'pads', 'v', 'axes'], ['y'], mode='constant')],
              [('x', F, [2, 3, 4])], [('y', F, None)], 18,
              inits=[('pads', np.array([1, 2, 0, 1], np.int64)), ('v', np.array(0.5, np.float32)),
                     ('axes', np.array([1, -1], np.int64))]),
        [X], lambda x: [np.pad(x, [(0, 0), (1, 0), (2, 1)], constant_values=0.5)]),
    'pad_edge_opset19': (
        model([helper.make_node('Pad', ['x', 'pads'], ['y'], mode='edge')],
              [('x', F, [2, 3, 4])], [('y', F, None)], 19,
              inits=[('pads', np.array([0, 1, 1, 0, 1, 2], np.int64))]),
        [X], lambda x: [np.pad(x, [(0, 0), (1, 1), (1, 2)], mode='edge')]),
    'mish': (unary('Mish', 18), [f32(3, 5, lo=-6, hi=6)], lambda x: [mish(x.astype(np.float64))]),
    'gelu_none': (unary('Gelu', 20), [f32(3, 5, lo=-4, hi=4)],
                  lambda x: [gelu(x.astype(np.float64))]),
    'gelu_tanh': (unary('Gelu', 20, approximate='tanh'), [f32(3, 5, lo=-4, hi=4)],
                  lambda x: [gelu(x.astype(np.float64), tanh=True)]),
    'bitwise_and': (binary('BitwiseAnd'), [i32(3, 4), i32(4, seed=1)], lambda a, b: [a & b]),
    'bitwise_or': (binary('BitwiseOr'), [i32(3, 4), i32(4, seed=1)], lambda a, b: [a | b]),
    'bitwise_xor': (binary('BitwiseXor'), [i32(3, 4), i32(4, seed=1)], lambda a, b: [a ^ b]),
    'bitwise_not': (unary('BitwiseNot', 18, dtype=I32), [i32(3, 5)], lambda x: [~x]),
    'relu_opset21_ir10': (unary('Relu', 21, ir=10), [f32(3, 5)], lambda x: [np.maximum(x, 0)]),
    'reshape_shape_cast_opset21': (
        model([helper.make_node('Shape', ['x'], ['s']),
               helper.make_node('Cast', ['x'], ['c'], to=F),
               helper.make_node('Flatten', ['c'], ['f'], axis=1),
               helper.make_node('Reshape', ['f', 'shape'], ['y']),
               helper.make_node('Transpose', ['y'], ['t'], perm=[1, 0]),
               helper.make_node('Unsqueeze', ['t', 'ax'], ['u']),
               helper.make_node('Squeeze', ['u', 'ax'], ['z'])],
              [('x', F, [2, 3, 4])], [('z', F, None), ('s', I64, None)], 21, ir=10,
              inits=[('shape', np.array([4, 6], np.int64)), ('ax', np.array([0], np.int64))]),
        [X], lambda x: [x.reshape(4, 6).T, np.array([2, 3, 4], np.int64)]),
    'averagepool_opset19': (
        model([helper.make_node('AveragePool', ['x'], ['y'], kernel_shape=[2, 2],
                                strides=[1, 1], dilations=[1, 1])],
              [('x', F, [1, 2, 4, 4])], [('y', F, None)], 19),
        [f32(1, 2, 4, 4)], None),
    'resize_linear_opset19': (
        model([helper.make_node('Resize', ['x', '', 'scales'], ['y'], mode='linear',
                                antialias=0, keep_aspect_ratio_policy='stretch')],
              [('x', F, [1, 1, 3, 4])], [('y', F, None)], 19,
              inits=[('scales', np.array([1, 1, 2, 1.5], np.float32))]),
        [f32(1, 1, 3, 4)], None),
}

def group_norm(opset, groups=2, per=None):
    per = per or (groups if opset < 21 else 4)
    return model([helper.make_node('GroupNormalization', ['x', 's', 'b'], ['y'],
                                   num_groups=groups, epsilon=1e-3)],
                 [('x', F, [2, 4, 3, 3])], [('y', F, None)], opset,
                 inits=[('s', f32(per, seed=3)), ('b', f32(per, seed=4))])


def group_norm_ref(x, opset, groups=2):
    n, c = x.shape[:2]
    g = x.astype(np.float64).reshape(n, groups, -1)
    y = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-3))
    s, b = f32(groups if opset < 21 else c, seed=3), f32(groups if opset < 21 else c, seed=4)
    if opset < 21:
        return (y * s[None, :, None] + b[None, :, None]).reshape(x.shape)
    return y.reshape(x.shape) * s[None, :, None, None] + b[None, :, None, None]


CASES['groupnorm_opset18'] = (group_norm(18), [f32(2, 4, 3, 3)], lambda x: [group_norm_ref(x, 18)])
CASES['groupnorm_opset21'] = (group_norm(21), [f32(2, 4, 3, 3)], lambda x: [group_norm_ref(x, 21)])

# name -> (model, phrase the one error line must hold)
REFUSED = {
    'split_num_outputs_mismatch': (
        model([helper.make_node('Split', ['x'], ['a', 'b', 'c'], num_outputs=2)],
              [('x', F, [6, 2])], [('a', F, None), ('b', F, None), ('c', F, None)], 18),
        'num_outputs is 2'),
    'resize_antialias': (
        model([helper.make_node('Resize', ['x', '', 'scales'], ['y'], mode='linear', antialias=1)],
              [('x', F, [1, 1, 4, 4])], [('y', F, None)], 18,
              inits=[('scales', np.array([1, 1, 0.5, 0.5], np.float32))]),
        'antialias'),
    'gelu_bad_approximate': (unary('Gelu', 20, approximate='erf'), "approximate is 'erf'"),
    'reducemean_axis_out_of_range': (reduce_case('ReduceMean', [3]), 'axis 3 is out of range'),
    'pad_axes_repeated': (
        model([helper.make_node('Pad', ['x', 'pads', '', 'axes'], ['y'])],
              [('x', F, [2, 3])], [('y', F, None)], 18,
              inits=[('pads', np.array([1, 1, 1, 1], np.int64)),
                     ('axes', np.array([1, -1], np.int64))]),
        'must be distinct axes'),
    'groupnorm_bad_groups': (group_norm(21, groups=3, per=4), 'num_groups is 3'),
    'bitwise_and_one_input': (
        model([helper.make_node('BitwiseAnd', ['a'], ['y'])], [('a', I32, [3])],
              [('y', I32, None)], 18),
        'takes 2 inputs; it has 1'),
    'mish_two_inputs': (
        model([helper.make_node('Mish', ['x', 'x'], ['y'])], [('x', F, [3])], [('y', F, None)], 18),
        'takes 1 inputs; it has 2'),
    'opset22': (unary('Relu', 22, ir=10), 'opset 22 of the default domain'),
    'ir11': (unary('Relu', 21, ir=11), 'IR version 11'),
}


def write(root):
    for name, (m, inputs, _) in CASES.items():
        d = os.path.join(root, name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, 'model.onnx'), 'wb') as f:
            f.write(m.SerializeToString())
        for k, x in enumerate(inputs):
            np.save(os.path.join(d, 'input_%d.npy' % k), x)


def compare(got, want, exact):
    if got.shape != want.shape:
        return 'shape %s, expected %s' % (list(got.shape), list(want.shape))
    if exact:
        return '' if np.array_equal(got, want) else 'values differ'
    err = np.abs(got.astype(np.float64) - want) - (1e-6 + 1e-5 * np.abs(want))
    if err.max() > 0:
        at = np.unravel_index(err.argmax(), err.shape)
        return 'at %s: %r, expected %r' % (list(at), float(got[at]), float(want[at]))
    return ''


def run_case(kiln, name, data, tmp, reference):
    d = os.path.join(data, name)
    inputs = sorted(f for f in os.listdir(d) if f.startswith('input_'))
    outputs = sorted(f for f in os.listdir(d) if f.startswith('output_') and f.endswith('.npy'))
    if not outputs:
        return 'no ONNX Runtime outputs in ' + d
    art = os.path.join(tmp, name + '.kiln')
    r = subprocess.run([kiln, 'compile', os.path.join(d, 'model.onnx'), '-o', art],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        return 'kiln compile exited %d: %s' % (r.returncode, r.stderr.strip())
    outs = [os.path.join(tmp, '%s_out%d.npy' % (name, k)) for k in range(len(outputs))]
    r = subprocess.run([kiln, 'run', art] + ['--input=@' + os.path.join(d, f) for f in inputs] +
                       ['--output=@' + o for o in outs], capture_output=True, text=True,
                       timeout=300)
    if r.returncode != 0:
        return 'kiln run exited %d: %s' % (r.returncode, r.stderr.strip())
    numpy_want = reference(*[np.load(os.path.join(d, f)) for f in inputs]) if reference else None
    for k, (o, f) in enumerate(zip(outs, outputs)):
        got, want = np.load(o), np.load(os.path.join(d, f))
        exact = not np.issubdtype(want.dtype, np.floating)
        verdict = compare(got, want.astype(np.float64) if not exact else want, exact)
        if not verdict and numpy_want is not None:
            w = np.asarray(numpy_want[k])
            verdict = compare(got, w.astype(np.float64) if not exact else w, exact)
            verdict = verdict and 'NumPy: ' + verdict
        if verdict:
            return 'output %d %s' % (k, verdict)
    return ''


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--kiln')
    ap.add_argument('--data', default=DATA)
    ap.add_argument('--write', metavar='DIR')
    ap.add_argument('--filter', default='')
    args = ap.parse_args()
    if args.write:
        write(args.write)
        return 0
    if not args.kiln:
        ap.error('need --kiln or --write')
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, (_, _, reference) in CASES.items():
            if not re.search(args.filter, name):
                continue
            verdict = run_case(args.kiln, name, args.data, tmp, reference)
            print(('PASS ' if not verdict else 'FAIL ') + name + (': ' + verdict if verdict else ''))
            passed += not verdict
            failed += bool(verdict)
        for name, (m, phrase) in REFUSED.items():
            if not re.search(args.filter, name):
                continue
            path = os.path.join(tmp, name + '.onnx')
            with open(path, 'wb') as f:
                f.write(m.SerializeToString())
            r = subprocess.run([args.kiln, 'compile', path, '-o', os.path.join(tmp, 'r.kiln')],
                               capture_output=True, text=True, timeout=300)
            lines = [l for l in r.stderr.splitlines() if l.strip()]
            ok = (r.returncode == 1 and len(lines) == 1 and lines[0].startswith('kiln: error:')
                  and phrase in lines[0] and 'internal error' not in lines[0])
            print(('PASS ' if ok else 'FAIL ') + name +
                  ('' if ok else ': exit %d: %s' % (r.returncode, r.stderr.strip())))
            passed += ok
            failed += not ok
    print('%d passed, %d failed' % (passed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
