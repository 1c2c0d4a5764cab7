#!/usr/bin/python3
"""IEEE special values through ONNX float operators: NaN, +-inf, +-0, the
largest and a subnormal float, against NumPy's evaluation of the ONNX
definitions (the ONNX reference implementation is NumPy).

    tests/onnx/special_values.py [--kiln build/bin/kiln] [--filter REGEX]
        [-- extra kiln flags, e.g. --check-bounds]
    tests/onnx/special_values.py --write DIR   # the rows, for ONNX Runtime:
    node tests/reference/ort_special_values.mjs DIR

Each row is one node on a fixed input vector holding every special value;
the expected output is computed here in float64 from the operator's formula
and rounded to float32. A NaN must come out NaN (any payload), an infinity
the same infinity, a zero the same zero up to its sign (signs of zero are
not compared: ONNX does not specify them), anything else within
1e-5 x (1 + |expected|). Binary operators pair the vector with itself
reversed, so NaN meets a number from either side.

Where ONNX Runtime and NumPy disagree NumPy (the ONNX reference) wins:
ORT 1.30's Max/Min return NaN like NumPy; the README records any operator
where Kiln follows another rule.

Prints one line per operator and 'N passed, M failed'; exit status 1 if any
failed.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_KILN = os.path.normpath(os.path.join(HERE, '../../build/bin/kiln'))

F32_MAX = float(np.finfo(np.float32).max)
FLT_MIN = float(np.finfo(np.float32).tiny)
SUBNORMAL = float(np.float32(1e-40))
# Every special value, then ordinary ones (16 elements: a multiple of the
# vector widths, and a remainder is tested by the pools' 1x2x8 view).
VALUES = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -2.5, F32_MAX, -F32_MAX,
                   SUBNORMAL, -SUBNORMAL, 100.0, -100.0, 3.0], np.float32)
OTHER = VALUES[::-1].copy()

def softplus(x):
    return np.where(x > 30, x, np.log1p(np.exp(np.minimum(x, 30))))


def erf(x):
    import math
    return np.vectorize(lambda v: math.erf(v) if not np.isnan(v) else np.nan)(x)


def softmax(x):
    m = np.max(x)
    e = np.exp(x - m)
    return e / np.sum(e)


def log_sum_exp(x, axis):
    """log(sum(exp(x))) in float64, shifted by a finite max (no overflow at
    FLT_MAX); an infinite or NaN max gives the unshifted value."""
    m = np.max(x, axis=axis, keepdims=True)
    shift = np.where(np.isfinite(m), m, 0)
    return shift + np.log(np.sum(np.exp(x - shift), axis=axis, keepdims=True))


# name, op type, inputs (1 or 2), attributes, reference (float64 in, out),
# output shape ('same' or a shape), input shape
UNARY = [
    ('relu', 'Relu', {}, lambda x: np.maximum(x, 0)),
    ('leaky_relu', 'LeakyRelu', {'alpha': 0.1}, lambda x: np.where(x >= 0, x, 0.1 * x)),
    ('sigmoid', 'Sigmoid', {}, lambda x: 1 / (1 + np.exp(-x))),
    ('tanh', 'Tanh', {}, np.tanh),
    ('exp', 'Exp', {}, np.exp),
    ('log', 'Log', {}, np.log),
    ('sqrt', 'Sqrt', {}, np.sqrt),
    ('reciprocal', 'Reciprocal', {}, lambda x: 1 / x),
    ('abs', 'Abs', {}, np.abs),
    ('neg', 'Neg', {}, np.negative),
    ('floor', 'Floor', {}, np.floor),
    ('ceil', 'Ceil', {}, np.ceil),
    ('elu', 'Elu', {'alpha': 1.0}, lambda x: np.where(x > 0, x, np.exp(x) - 1)),
    ('softplus', 'Softplus', {}, softplus),
    ('hard_sigmoid', 'HardSigmoid', {'alpha': 0.2, 'beta': 0.5},
     lambda x: np.maximum(0, np.minimum(1, 0.2 * x + 0.5))),
    ('erf', 'Erf', {}, erf),
    ('clip', 'Clip', {}, lambda x: np.clip(x, -1.0, 6.0)),
    ('sinh', 'Sinh', {}, np.sinh),
    ('cosh', 'Cosh', {}, np.cosh),
    ('atan', 'Atan', {}, np.arctan),
    ('asin', 'Asin', {}, np.arcsin),
    ('acos', 'Acos', {}, np.arccos),
    ('asinh', 'Asinh', {}, np.arcsinh),
    ('acosh', 'Acosh', {}, np.arccosh),
    ('atanh', 'Atanh', {}, np.arctanh),
]
BINARY = [
    ('max', 'Max', np.maximum),
    ('min', 'Min', np.minimum),
    ('add', 'Add', np.add),
    ('mul', 'Mul', np.multiply),
    ('div', 'Div', np.divide),
    ('sub', 'Sub', np.subtract),
    ('pow', 'Pow', np.power),
]
# Reductions over the whole [1, 16] vector and over rows of a [4, 4] view.
REDUCE = [
    ('reduce_max', 'ReduceMax', lambda x, a: np.max(x, axis=a, keepdims=True)),
    ('reduce_min', 'ReduceMin', lambda x, a: np.min(x, axis=a, keepdims=True)),
    ('reduce_sum', 'ReduceSum', lambda x, a: np.sum(x, axis=a, keepdims=True)),
    ('reduce_mean', 'ReduceMean', lambda x, a: np.mean(x, axis=a, keepdims=True)),
    ('softmax', 'Softmax', lambda x, a: np.apply_along_axis(softmax, a, x)),
    ('reduce_log_sum_exp', 'ReduceLogSumExp', log_sum_exp),
]


# Rows whose results below the normal range are checked relatively (see
# compare); elsewhere a result within 1e-5 of 0 counts as right, as float32
# arithmetic (sigmoid(-100) = 1 / (1 + inf) = 0, not 3.8e-44) computes it.
SUBNORMAL_ROWS = {'exp_underflow'}


def compare(got, want, subnormals=False):
    got = np.asarray(got, np.float64).ravel()
    want = np.asarray(want, np.float64).astype(np.float32).astype(np.float64).ravel()
    if got.shape != want.shape:
        return 'shape %s, expected %s' % (got.shape, want.shape)
    for i, (g, w) in enumerate(zip(got, want)):
        if np.isnan(w):
            ok = np.isnan(g)
        elif np.isinf(w):
            ok = g == w
        elif subnormals and abs(w) < FLT_MIN:
            # Below the normal range the absolute rule would take any tiny
            # value (FLT_MIN for exp(-100) = 3.7e-44): within 1e-3 relative
            # or 2 subnormal steps.
            ok = not np.isnan(g) and abs(g - w) <= max(1e-3 * abs(w), 2 * 2.0 ** -149)
        else:
            ok = not np.isnan(g) and abs(g - w) <= 1e-5 * (1 + abs(w))
        if not ok:
            return 'element %d: %r, expected %r' % (i, g, w)
    return ''


def model(path, nodes, inputs, shape, out_shape, extra=()):
    graph = helper.make_graph(
        nodes, 'special',
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape) for n in inputs],
        [helper.make_tensor_value_info('y', TensorProto.FLOAT, out_shape)], list(extra))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 13)])
    m.ir_version = 7
    onnx.save(m, path)


def cases():
    """(name, writer(path), inputs, expected)"""
    x = VALUES.astype(np.float64)
    with np.errstate(all='ignore'):
        for name, op, attrs, ref in UNARY:
            nodes = [helper.make_node(op, ['x'], ['y'], **attrs)]
            extra = ()
            if op == 'Clip':
                lo = helper.make_tensor('lo', TensorProto.FLOAT, [], [-1.0])
                hi = helper.make_tensor('hi', TensorProto.FLOAT, [], [6.0])
                nodes = [helper.make_node(op, ['x', 'lo', 'hi'], ['y'])]
                extra = (lo, hi)
            yield (name, lambda p, n=nodes, e=extra: model(p, n, ['x'], [16], [16], e),
                   [VALUES], ref(x))
        for name, op, ref in BINARY:
            nodes = [helper.make_node(op, ['x', 'x2'], ['y'])]
            yield (name, lambda p, n=nodes: model(p, n, ['x', 'x2'], [16], [16]),
                   [VALUES, OTHER], ref(x, OTHER.astype(np.float64)))
        for name, op, ref in REDUCE:
            for axis, shape in ((1, [1, 16]), (1, [4, 4])):
                out = [shape[0], 1] if op != 'Softmax' else shape
                attrs = {'axes': [axis], 'keepdims': 1} if op != 'Softmax' else {'axis': axis}
                ins, extra = ['x'], ()
                if op == 'ReduceSum':  # opset 13: axes is an input
                    attrs = {'keepdims': 1}
                    ins = ['x', 'axes']
                    extra = (helper.make_tensor('axes', TensorProto.INT64, [1], [axis]),)
                nodes = [helper.make_node(op, ins, ['y'], **attrs)]
                yield ('%s_%dx%d' % (name, shape[0], shape[1]),
                       lambda p, n=nodes, s=shape, o=out, e=extra: model(p, n, ['x'], s, o, e),
                       [VALUES.reshape(shape)], ref(x.reshape(shape), axis))
        # Pools over [1, 1, 2, 8]: 2x2 windows, stride 2 (-inf pads none).
        v4 = x.reshape(1, 1, 2, 8)
        for name, op, ref in (('max_pool', 'MaxPool', np.max), ('avg_pool', 'AveragePool', np.mean)):
            nodes = [helper.make_node(op, ['x'], ['y'], kernel_shape=[2, 2], strides=[2, 2])]
            want = np.array([[[[ref(v4[0, 0, :, 2 * j:2 * j + 2]) for j in range(4)]]]])
            yield (name, lambda p, n=nodes: model(p, n, ['x'], [1, 1, 2, 8], [1, 1, 1, 4]),
                   [VALUES.reshape(1, 1, 2, 8)], want)
        # All -inf: the maximum is -inf (not the lowest finite float, the
        # identity MLIR 16's lowerings start max reductions and pools from).
        ninf = np.full(16, -np.inf, np.float32)
        nodes = [helper.make_node('MaxPool', ['x'], ['y'], kernel_shape=[2, 2], strides=[2, 2])]
        yield ('max_pool_all_neg_inf', lambda p, n=nodes: model(p, n, ['x'], [1, 1, 2, 8], [1, 1, 1, 4]),
               [ninf.reshape(1, 1, 2, 8)], np.full((1, 1, 1, 4), -np.inf))
        nodes = [helper.make_node('ReduceMax', ['x'], ['y'], axes=[1], keepdims=1)]
        yield ('reduce_max_all_neg_inf', lambda p, n=nodes: model(p, n, ['x'], [1, 16], [1, 1]),
               [ninf.reshape(1, 16)], np.full((1, 1), -np.inf))
        # LogSumExp rows whose maximum is infinite: +inf, all -inf, -inf
        # with finite values, +inf with -inf (inf - inf must not appear).
        lse = np.array([[np.inf, 1, 2, 3], [-np.inf] * 4, [-np.inf, 0, 1, 2],
                        [np.inf, -np.inf, 0, 0]], np.float32)
        nodes = [helper.make_node('ReduceLogSumExp', ['x'], ['y'], axes=[1], keepdims=1)]
        yield ('reduce_log_sum_exp_infinite_max',
               lambda p, n=nodes: model(p, n, ['x'], [4, 4], [4, 1]),
               [lse], log_sum_exp(lse.astype(np.float64), 1))
        # All +inf: the minimum is +inf (not FLT_MAX, MLIR 16's identity).
        pinf = np.full(16, np.inf, np.float32)
        nodes = [helper.make_node('ReduceMin', ['x'], ['y'], axes=[1], keepdims=1)]
        yield ('reduce_min_all_pos_inf', lambda p, n=nodes: model(p, n, ['x'], [4, 4], [4, 1]),
               [pinf.reshape(4, 4)], np.full((4, 1), np.inf))
        # exp where the result is subnormal or 0 (the approximation stopped
        # at FLT_MIN), and near the top of the range.
        under = np.array([-80.5, -87, -88, -89, -95, -100, -103, -104, -110, -1000, -F32_MAX,
                          -np.inf, 0, -1, 80, 88], np.float32)
        nodes = [helper.make_node('Exp', ['x'], ['y'])]
        yield ('exp_underflow', lambda p, n=nodes: model(p, n, ['x'], [16], [16]),
               [under], np.exp(under.astype(np.float64)))
        nodes = [helper.make_node('GlobalMaxPool', ['x'], ['y'])]
        yield ('global_max_pool', lambda p, n=nodes: model(p, n, ['x'], [1, 2, 1, 8], [1, 2, 1, 1]),
               [VALUES.reshape(1, 2, 1, 8)], np.max(x.reshape(1, 2, 1, 8), axis=(2, 3), keepdims=True))


def write_rows(root, pattern):
    """Writes every row matching `pattern` under `root`; returns 0."""
    for name, write, inputs, want in cases():
        if not re.search(pattern, name):
            continue
        folder = os.path.join(root, name)
        os.makedirs(folder, exist_ok=True)
        write(os.path.join(folder, 'model.onnx'))
        for k, v in enumerate(inputs):
            np.save(os.path.join(folder, 'input_%d.npy' % k), v)
        np.save(os.path.join(folder, 'expected.npy'), np.asarray(want, np.float64).astype(np.float32))
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--kiln', default=DEFAULT_KILN)
    parser.add_argument('--filter', default='')
    parser.add_argument('--write', metavar='DIR',
                        help='write each row as DIR/NAME/{model.onnx, input_K.npy, expected.npy} '
                             '(for tests/reference/ort_special_values.mjs) and run nothing')
    parser.add_argument('flags', nargs='*', help='extra flags for kiln run')
    args = parser.parse_args()
    if args.write:
        return write_rows(args.write, args.filter)
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, write, inputs, want in cases():
            if not re.search(args.filter, name):
                continue
            path = os.path.join(tmp, name + '.onnx')
            write(path)
            flags = []
            for k, v in enumerate(inputs):
                np.save(os.path.join(tmp, 'in%d.npy' % k), v)
                flags.append('--input=@' + os.path.join(tmp, 'in%d.npy' % k))
            out = os.path.join(tmp, 'y.npy')
            r = subprocess.run([args.kiln, 'run', path, '--output=@' + out] + flags + args.flags,
                               capture_output=True, text=True, timeout=300)
            verdict = ('kiln run exited %d: %s' % (r.returncode, (r.stderr or r.stdout).strip())
                       if r.returncode else compare(np.load(out), want, name in SUBNORMAL_ROWS))
            print(('PASS ' if not verdict else 'FAIL ') + name + ('' if not verdict else ': ' + verdict))
            passed += not verdict
            failed += bool(verdict)
    print('%d passed, %d failed' % (passed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
