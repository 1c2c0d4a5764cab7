#!/usr/bin/python3
"""Windows that do not tile their input: ONNX Conv, MaxPool and AveragePool
against an independent NumPy evaluation of the ONNX operator definitions.

    tests/onnx/window_cases.py [--kiln build/bin/kiln] [--filter REGEX]
        [-- extra kiln flags, e.g. --check-bounds]

Each case is one node on a seeded random input, written with onnx.helper
into a temporary folder, compiled and run by `kiln run`, and compared with
`reference()` below: a direct loop over output positions and window taps
(ONNX Operators.md: Conv, MaxPool, AveragePool; output size
floor((in + pads - extent) / stride) + 1, or ceil in ceil_mode with the
last window starting inside the input or its begin padding, as PyTorch and
ONNX Runtime compute it). No Kiln code or ONNX Runtime is involved in the
expected values. Within 1e-5 x (1 + |expected|).

The cases are the classes of window bugs: a leftover the end padding cannot
absorb (a ResNet-style 1x1 stride-2 Conv on 6x6, MaxPool 2x2/2 on 5x7,
AveragePool 3x3/2 on 8x8, the dilated MaxPool of
pytorch-converted/test_MaxPool2d_stride_padding_dilation at 1/10 scale),
ceil_mode with explicit pads and count_include_pad = 0 (the divisor of the
window before the last) and 1, and siblings in 1-D and with channels >= 3
(with 1-2 channels an out-of-bounds read was often harmless), and 3-D
Convs (strided with a depth leftover, padded and dilated, grouped,
depthwise, SAME_UPPER) and 3-D pools (ceil_mode, count_include_pad,
dilation).

Then windows Kiln refuses (REFUSED: pool pads not below the kernel,
auto_pad with pads): exit status 1 and one error line saying why.

Prints one line per case and 'N passed, M failed'; exit status 1 if any
failed.
"""
import argparse
import itertools
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_KILN = os.path.normpath(os.path.join(HERE, '../../build/bin/kiln'))


def out_size(n, k, s, d, pb, pe, ceil):
    extent = (k - 1) * d + 1
    span = n + pb + pe - extent
    steps = -(-span // s) if ceil else span // s
    if ceil and steps * s >= n + pb:  # the last window starts in the end padding
        steps -= 1
    return steps + 1


def window_pads(shape, attrs, k):
    """Begin pads then end pads: `pads`, or what auto_pad SAME_UPPER /
    SAME_LOWER gives (out = ceil(in / stride), the odd element at the end /
    the beginning)."""
    spatial = len(shape) - 2
    pads = list(attrs.get('pads', [0] * 2 * spatial))
    if attrs.get('auto_pad', 'NOTSET').startswith('SAME'):
        s = attrs.get('strides', [1] * spatial)
        d = attrs.get('dilations', [1] * spatial)
        for i in range(spatial):
            n = shape[2 + i]
            total = max((-(-n // s[i]) - 1) * s[i] + (k[i] - 1) * d[i] + 1 - n, 0)
            pads[i] = total // 2 if attrs['auto_pad'] == 'SAME_UPPER' else total - total // 2
            pads[spatial + i] = total - pads[i]
    return pads


def reference(op, x, attrs, w=None, b=None):
    """The ONNX definition, one output element at a time (float64)."""
    spatial = x.ndim - 2
    k = attrs.get('kernel_shape') or list(w.shape[2:])
    s = attrs.get('strides', [1] * spatial)
    d = attrs.get('dilations', [1] * spatial)
    pads = window_pads(x.shape, attrs, k)
    ceil = attrs.get('ceil_mode', 0) == 1
    include = attrs.get('count_include_pad', 0) == 1
    outs = [out_size(x.shape[2 + i], k[i], s[i], d[i], pads[i], pads[spatial + i], ceil)
            for i in range(spatial)]
    channels = w.shape[0] if op == 'Conv' else x.shape[1]
    group = attrs.get('group', 1)
    y = np.zeros([x.shape[0], channels] + outs)
    for n, c in itertools.product(range(x.shape[0]), range(channels)):
        for o in itertools.product(*[range(v) for v in outs]):
            taps, total, count_in, count_pad = [], 0.0, 0, 0
            for t in itertools.product(*[range(v) for v in k]):
                pos = [o[i] * s[i] + t[i] * d[i] - pads[i] for i in range(spatial)]
                inside = all(0 <= pos[i] < x.shape[2 + i] for i in range(spatial))
                # Padding proper (not the ceil-mode overhang past the end pad).
                padded = all(-pads[i] <= pos[i] < x.shape[2 + i] + pads[spatial + i]
                             for i in range(spatial))
                if op == 'Conv':
                    if inside:  # output channel c reads the input channels of its group
                        cg = x.shape[1] // group
                        g = c // (channels // group)
                        total += float(np.dot(x[(n, slice(g * cg, (g + 1) * cg)) + tuple(pos)],
                                              w[(c, slice(None)) + t]))
                elif inside:
                    taps.append(float(x[(n, c) + tuple(pos)]))
                    count_in += 1
                elif padded:
                    count_pad += 1
            if op == 'Conv':
                y[(n, c) + o] = total + (b[c] if b is not None else 0.0)
            elif op == 'MaxPool':
                y[(n, c) + o] = max(taps)
            else:
                y[(n, c) + o] = sum(taps) / (count_in + (count_pad if include else 0))
    return y


# name, op, input shape, attributes, weight shape (Conv)
CASES = [
    ('conv_1x1_s2_on_6x6', 'Conv', [1, 3, 6, 6], dict(strides=[2, 2]), [4, 3, 1, 1]),
    ('conv_3x3_s2_on_8x8_pad_begin', 'Conv', [1, 3, 8, 8],
     dict(strides=[2, 2], pads=[1, 1, 0, 0]), [2, 3, 3, 3]),
    ('conv_1d_k2_s3_on_10', 'Conv', [1, 4, 10], dict(strides=[3]), [2, 4, 2]),
    ('conv_3x3_s2_dilation2_on_9x10', 'Conv', [1, 3, 9, 10],
     dict(strides=[2, 2], dilations=[2, 2]), [3, 3, 3, 3]),
    ('maxpool_2x2_s2_on_5x7', 'MaxPool', [1, 3, 5, 7],
     dict(kernel_shape=[2, 2], strides=[2, 2]), None),
    ('maxpool_3x3_s3_on_8x8_pads', 'MaxPool', [1, 3, 8, 8],
     dict(kernel_shape=[3, 3], strides=[3, 3], pads=[1, 1, 0, 0]), None),
    ('maxpool_dilation_stride_padding', 'MaxPool', [1, 3, 100, 100],
     dict(kernel_shape=[6, 8], strides=[3, 3], pads=[1, 2, 1, 2], dilations=[2, 2]), None),
    ('avgpool_3x3_s2_on_8x8', 'AveragePool', [1, 3, 8, 8],
     dict(kernel_shape=[3, 3], strides=[2, 2]), None),
    ('avgpool_3x3_s2_on_8x8_include_pad', 'AveragePool', [1, 3, 8, 8],
     dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 0, 0], count_include_pad=1), None),
    ('avgpool_1d_ceil_pads_exclude', 'AveragePool', [1, 3, 8],
     dict(kernel_shape=[3], strides=[2], pads=[1, 1], ceil_mode=1), None),
    ('avgpool_2d_ceil_pads_exclude', 'AveragePool', [1, 3, 9, 8],
     dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1), None),
    ('avgpool_5x5_s2_pads2_exclude', 'AveragePool', [1, 3, 9, 9],
     dict(kernel_shape=[5, 5], strides=[2, 2], pads=[2, 2, 2, 2]), None),
    ('avgpool_ceil_pads_include', 'AveragePool', [1, 3, 8, 8],
     dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1,
          count_include_pad=1), None),
    ('maxpool_ceil_s3_on_7', 'MaxPool', [1, 3, 7],
     dict(kernel_shape=[2], strides=[3], ceil_mode=1), None),
    # ceil_mode where a last window would start past the input (and its
    # begin padding): dropped, as ONNX Runtime does (libonnx 1.12's shape
    # inference keeps it, so Kiln once refused these as an importer error).
    ('maxpool_ceil_k3_s3_pads1_on_8x8', 'MaxPool', [1, 3, 8, 8],
     dict(kernel_shape=[3, 3], strides=[3, 3], pads=[1, 1, 1, 1], ceil_mode=1), None),
    ('avgpool_ceil_k1_s3_on_8x8', 'AveragePool', [1, 3, 8, 8],
     dict(kernel_shape=[1, 1], strides=[3, 3], ceil_mode=1), None),
    ('maxpool_ceil_k3_s3_pads1_then_relu', 'MaxPool', [1, 3, 8, 8],
     dict(kernel_shape=[3, 3], strides=[3, 3], pads=[1, 1, 1, 1], ceil_mode=1, then_relu=True),
     None),
    # Depthwise 1x1 stride 1 (group = channels): MLIR 16's decomposition of
    # it did not lower ("failed to legalize tosa.mul").
    ('conv_depthwise_1x1_s1', 'Conv', [1, 3, 7, 7], dict(group=3), [3, 1, 1, 1]),
    ('conv_depthwise_1x1_1d_pads', 'Conv', [1, 4, 9], dict(group=4, pads=[1, 2]), [4, 1, 1]),
    ('conv_grouped_3x3', 'Conv', [1, 4, 6, 6], dict(group=2, pads=[1, 1, 1, 1]), [6, 2, 3, 3]),
    # 3-D convolutions (rank-5 input; Kiln sums one 2-D convolution per
    # depth tap): a stride-2 depth leftover, depth padding and dilation,
    # groups, depthwise, SAME_UPPER padding with an odd total.
    ('conv3d_k3_s2_on_7x6x5', 'Conv', [1, 3, 7, 6, 5], dict(strides=[2, 1, 2]), [4, 3, 3, 2, 2]),
    ('conv3d_pads_dilation', 'Conv', [2, 2, 6, 5, 5],
     dict(pads=[1, 0, 1, 2, 1, 0], dilations=[2, 1, 2]), [3, 2, 2, 3, 2]),
    ('conv3d_grouped', 'Conv', [1, 4, 4, 4, 4], dict(group=2, pads=[1, 1, 1, 1, 1, 1]),
     [6, 2, 3, 3, 3]),
    ('conv3d_depthwise', 'Conv', [1, 3, 5, 4, 4], dict(group=3), [3, 1, 2, 2, 2]),
    # 3-D pools (rank-5 input; Kiln pools one axis at a time): ceil_mode
    # with pads, count_include_pad 0 and 1, a dilated MaxPool.
    ('maxpool3d_k2_s2_on_5x6x7', 'MaxPool', [1, 3, 5, 6, 7],
     dict(kernel_shape=[2, 2, 2], strides=[2, 2, 2]), None),
    ('maxpool3d_dilation_pads', 'MaxPool', [1, 2, 7, 7, 6],
     dict(kernel_shape=[2, 3, 2], dilations=[2, 1, 2], pads=[1, 1, 0, 1, 0, 1]), None),
    ('avgpool3d_ceil_pads_exclude', 'AveragePool', [1, 3, 6, 7, 8],
     dict(kernel_shape=[3, 3, 2], strides=[2, 2, 3], pads=[1, 1, 0, 1, 0, 1], ceil_mode=1), None),
    ('avgpool3d_include_pad', 'AveragePool', [2, 2, 5, 5, 5],
     dict(kernel_shape=[3, 2, 3], strides=[2, 1, 2], pads=[1, 1, 1, 1, 0, 1],
          count_include_pad=1), None),
    ('conv3d_same_upper_s2', 'Conv', [1, 2, 5, 6, 7], dict(auto_pad='SAME_UPPER', strides=[2, 2, 2]),
     [2, 2, 2, 3, 3]),
]


# Windows Kiln refuses, each with one error line: name, op, input shape,
# attributes, a phrase of the expected message.
REFUSED = [
    ('maxpool_pads_not_below_kernel', 'MaxPool', [1, 1, 6, 6],
     dict(kernel_shape=[2, 2], pads=[3, 3, 3, 3]), 'is not smaller than the kernel size 2'),
    ('avgpool_1d_pad_equals_kernel', 'AveragePool', [1, 1, 6],
     dict(kernel_shape=[2], pads=[0, 2]), 'is not smaller than the kernel size 2'),
    ('maxpool_auto_pad_with_pads', 'MaxPool', [1, 1, 6, 6],
     dict(kernel_shape=[2, 2], auto_pad='SAME_UPPER', pads=[1, 1, 1, 1]),
     'pads is given with auto_pad SAME_UPPER'),
]


def write_case(path, op, xshape, attrs, wshape, yshape, rng, relu=False):
    """The node (then a Relu whose output's spatial sizes are symbolic when
    `relu`: shapes libonnx infers past the node are then its own)."""
    inits, inputs = [], ['x']
    w = b = None
    if op == 'Conv':
        w = rng.uniform(-1, 1, wshape).astype(np.float32)
        b = rng.uniform(-1, 1, [wshape[0]]).astype(np.float32)
        inits = [numpy_helper.from_array(w, 'w'), numpy_helper.from_array(b, 'b')]
        inputs = ['x', 'w', 'b']
    nodes = [helper.make_node(op, inputs, ['p' if relu else 'y'], name=op.lower(), **attrs)]
    if relu:
        nodes.append(helper.make_node('Relu', ['p'], ['y']))
        yshape = yshape[:2] + ['d%d' % i for i in range(len(yshape) - 2)]
    graph = helper.make_graph(
        nodes, 'window', [helper.make_tensor_value_info('x', TensorProto.FLOAT, xshape)],
        [helper.make_tensor_value_info('y', TensorProto.FLOAT, yshape)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 13)])
    model.ir_version = 7
    onnx.save(model, path)
    return w, b


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--kiln', default=DEFAULT_KILN)
    parser.add_argument('--filter', default='')
    parser.add_argument('flags', nargs='*', help='extra flags for kiln run')
    args = parser.parse_args()
    rng = np.random.default_rng(32)
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, op, xshape, attrs, wshape in CASES:
            if not re.search(args.filter, name):
                continue
            model = os.path.join(tmp, name + '.onnx')
            spatial = len(xshape) - 2
            k = attrs.get('kernel_shape') or wshape[2:]
            pads = window_pads(xshape, attrs, k)
            yshape = [xshape[0], wshape[0] if op == 'Conv' else xshape[1]] + [
                out_size(xshape[2 + i], k[i], attrs.get('strides', [1] * spatial)[i],
                         attrs.get('dilations', [1] * spatial)[i], pads[i], pads[spatial + i],
                         attrs.get('ceil_mode', 0) == 1) for i in range(spatial)]
            attrs = dict(attrs)
            relu = attrs.pop('then_relu', False)
            w, b = write_case(model, op, xshape, attrs, wshape, yshape, rng, relu)
            x = rng.uniform(-1, 1, xshape).astype(np.float32)
            np.save(os.path.join(tmp, 'x.npy'), x)
            out = os.path.join(tmp, 'y.npy')
            r = subprocess.run([args.kiln, 'run', model, '--input=@' + os.path.join(tmp, 'x.npy'),
                                '--output=@' + out] + args.flags,
                               capture_output=True, text=True, timeout=300)
            want = reference(op, x.astype(np.float64), attrs, w, b)
            if relu:
                want = np.maximum(want, 0)
            verdict = ''
            if r.returncode != 0:
                verdict = 'kiln run exited %d: %s' % (r.returncode, (r.stderr or r.stdout).strip())
            else:
                got = np.load(out)
                if got.shape != want.shape:
                    verdict = 'shape %s, expected %s' % (list(got.shape), list(want.shape))
                else:
                    err = np.abs(got - want) / (1 + np.abs(want))
                    if err.max() > 1e-5:
                        at = np.unravel_index(err.argmax(), err.shape)
                        verdict = 'error %.3g at %s: %r, expected %r' % (
                            err.max(), list(at), float(got[at]), float(want[at]))
            print(('PASS ' if not verdict else 'FAIL ') + name + ('' if not verdict else ': ' + verdict))
            passed += not verdict
            failed += bool(verdict)
        for name, op, xshape, attrs, phrase in REFUSED:
            if not re.search(args.filter, name):
                continue
            model = os.path.join(tmp, name + '.onnx')
            write_case(model, op, xshape, attrs, None, ['d%d' % i for i in range(len(xshape))], rng)
            r = subprocess.run([args.kiln, 'compile', model, '-o', os.path.join(tmp, 'r.kiln')],
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
