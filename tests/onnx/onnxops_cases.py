#!/usr/bin/python3
"""The ONNX operators of ONNXScatterOps.cpp, ONNXMatrixOps.cpp,
ONNXEinsumOps.cpp and ONNXArithmeticOps.cpp, and Scan and If with a run-time
condition, against an independent NumPy evaluation of the ONNX definitions.

    tests/onnx/onnxops_cases.py [--kiln build/bin/kiln] [--filter REGEX]

The backend node tests of these operators are few and small, and many are
float64 (Einsum, CumSum), which Kiln does not compile. Here every case is
float32, int32 or int64: one node (or a small graph) written with
onnx.helper on seeded random inputs, compiled and run by `kiln run`, and
compared with the reference below (np.einsum, np.cumsum, a stable argsort,
np.triu/np.tril, loops over the scatter and one-hot definitions, np.fmod and
np.mod, ...); no Kiln code or ONNX Runtime is involved in the expected
values. Floats within 1e-5 x (1 + |expected|), integers exactly. Indices
are graph inputs (run-time data) where the operator allows it.

Then the inputs Kiln refuses (REFUSED): exit status 1 and one error line
naming what is not supported.

Prints one line per case and 'N passed, M failed'; exit status 1 if any
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
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_KILN = os.path.normpath(os.path.join(HERE, '../../build/bin/kiln'))
ONNX_TYPES = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int32): TensorProto.INT32,
              np.dtype(np.int64): TensorProto.INT64, np.dtype(np.bool_): TensorProto.BOOL}
rng = np.random.default_rng(2027)


def floats(*shape):
    return rng.uniform(-2, 2, shape).astype(np.float32)


def ints(lo, hi, shape, dtype=np.int64):
    return rng.integers(lo, hi, shape).astype(dtype)


# --- NumPy references ---------------------------------------------------------

def wrap(i, n):
    return np.where(i < 0, i + n, i)


def scatter_elements(data, idx, upd, axis, reduction='none'):
    out = data.copy()
    idx = wrap(idx, data.shape[axis])
    for u in np.ndindex(*idx.shape):
        o = list(u)
        o[axis] = idx[u]
        o = tuple(o)
        if reduction == 'none':
            out[o] = upd[u]
        elif reduction == 'add':
            out[o] += upd[u]
        elif reduction == 'mul':
            out[o] *= upd[u]
        elif reduction == 'max':
            out[o] = max(out[o], upd[u])
        else:
            out[o] = min(out[o], upd[u])
    return out


def scatter_nd(data, idx, upd, reduction='none'):
    out = data.copy()
    k = idx.shape[-1]
    for u in np.ndindex(*idx.shape[:-1]):
        o = tuple(int(wrap(idx[u + (j,)], data.shape[j])) for j in range(k))
        if reduction == 'none':
            out[o] = upd[u]
        elif reduction == 'add':
            out[o] += upd[u]
        elif reduction == 'mul':
            out[o] *= upd[u]
        elif reduction == 'max':
            out[o] = np.maximum(out[o], upd[u])
        else:
            out[o] = np.minimum(out[o], upd[u])
    return out


def one_hot(idx, depth, values, axis):
    idx = np.trunc(idx).astype(np.int64)
    idx = wrap(idx, depth)
    rank = idx.ndim + 1
    axis = axis + rank if axis < 0 else axis
    shape = list(idx.shape)
    shape.insert(axis, depth)
    out = np.full(shape, values[0], values.dtype)
    for p in np.ndindex(*idx.shape):
        if 0 <= idx[p] < depth:
            o = list(p)
            o.insert(axis, idx[p])
            out[tuple(o)] = values[1]
    return out


def top_k(x, k, axis, largest):
    key = -x if largest else x
    order = np.argsort(key, axis=axis, kind='stable')
    index = np.take(order, np.arange(k), axis=axis)
    return np.take_along_axis(x, index, axis=axis), index.astype(np.int64)


def cumsum(x, axis, exclusive, reverse):
    if reverse:
        x = np.flip(x, axis)
    y = np.cumsum(x, axis=axis, dtype=x.dtype)
    if exclusive:
        y = y - x
    return np.flip(y, axis) if reverse else y


def reverse_sequence(x, lens, batch_axis, time_axis):
    out = x.copy()
    for b in range(x.shape[batch_axis]):
        n = lens[b]
        for t in range(n):
            src = [slice(None)] * x.ndim
            dst = [slice(None)] * x.ndim
            src[batch_axis] = dst[batch_axis] = b
            src[time_axis] = n - 1 - t
            dst[time_axis] = t
            out[tuple(dst)] = x[tuple(src)]
    return out


def max_unpool(x, idx, out_shape):
    out = np.zeros(int(np.prod(out_shape)), x.dtype)
    out[idx.reshape(-1)] = x.reshape(-1)
    return out.reshape(out_shape)


def mvn(x, axes):
    mean = x.mean(axis=axes, keepdims=True, dtype=np.float64)
    var = (x.astype(np.float64) ** 2).mean(axis=axes, keepdims=True) - mean ** 2
    return ((x - mean) / (np.sqrt(var) + 1e-9)).astype(np.float32)


def conv_transpose3d(x, w, b, strides, dil, pads, out_pad):
    """Y[n, m, s*i + d*k - pad_begin] += X[n, c, i] * W[c, m, k], group 1."""
    n, c, *ins = x.shape
    m, ks = w.shape[1], w.shape[2:]
    full = [s * (i - 1) + op + (k - 1) * d + 1 for s, i, op, k, d in
            zip(strides, ins, out_pad, ks, dil)]
    y = np.zeros((n, m, *full), np.float64)
    for i in np.ndindex(*ins):
        for k in np.ndindex(*ks):
            o = tuple(s * a + d * kk for s, a, d, kk in zip(strides, i, dil, k))
            y[(slice(None), slice(None)) + o] += np.einsum(
                'nc,cm->nm', x[(slice(None), slice(None)) + i], w[(slice(None), slice(None)) + k])
    out = [f - pads[j] - pads[3 + j] for j, f in enumerate(full)]
    y = y[:, :, pads[0]:pads[0] + out[0], pads[1]:pads[1] + out[1], pads[2]:pads[2] + out[2]]
    return (y + b.reshape(1, -1, 1, 1, 1)).astype(np.float32)


def scan_sum(init, xs, axis, reverse):
    """Scan whose body is state += x, scan output the state (a running sum)."""
    steps = np.moveaxis(xs, axis, 0)
    if reverse:
        steps = steps[::-1]
    state, outs = init.copy(), []
    for s in steps:
        state = state + s
        outs.append(state.copy())
    return state, np.stack(outs, 0)


# --- Cases ----------------------------------------------------------------------

class Case:
    """One model: `nodes` (helper.make_node), inputs fed at run time, constant
    inputs (initializers), expected outputs (name -> array)."""

    def __init__(self, name, nodes, feeds, expected, consts=None, opset=17):
        self.name, self.nodes, self.feeds = name, nodes, feeds
        self.expected, self.consts, self.opset = expected, consts or {}, opset


def node_case(name, op, feeds, expected, consts=None, opset=17, **attrs):
    inputs = list(feeds) + list(consts or {})
    order = attrs.pop('order', None) or inputs
    return Case(name, [helper.make_node(op, order, list(expected), **attrs)], feeds, expected,
                consts, opset)


def build_cases():
    c = []
    # Scatters: run-time indices (negative ones), every reduction, duplicates.
    d, i = floats(3, 5), np.array([[1, -1, 0], [4, 2, -5]], np.int64)
    u = floats(2, 3)
    for red in ('none', 'add', 'mul', 'max', 'min'):
        c.append(node_case(f'ScatterElements axis 1 {red}', 'ScatterElements',
                           {'d': d, 'i': i, 'u': u},
                           {'y': scatter_elements(d, i, u, 1, red)}, axis=1, reduction=red,
                           opset=18))
    d3, i3 = floats(4, 3, 2), ints(-4, 4, (2, 3, 2))
    i3, u3 = i3[:, :2], floats(2, 2, 2)
    c.append(node_case('ScatterElements axis 0 rank 3 (smaller indices)', 'ScatterElements',
                       {'d': d3, 'i': i3, 'u': u3}, {'y': scatter_elements(d3, i3, u3, 0)},
                       axis=0))
    di = ints(-9, 9, (4, 4), np.int32)
    ii, ui = np.array([[0, 3], [2, 2]], np.int32), ints(-9, 9, (2, 2), np.int32)
    c.append(node_case('ScatterElements int32 add duplicates', 'ScatterElements',
                       {'d': di, 'i': ii, 'u': ui},
                       {'y': scatter_elements(di, ii, ui, 1, 'add')}, axis=1, reduction='add'))
    c.append(node_case('Scatter (opset 10)', 'Scatter', {'d': d, 'i': i, 'u': u},
                       {'y': scatter_elements(d, i, u, 1)}, axis=1, opset=10))
    dn, ind = floats(4, 3, 2), np.array([[1], [-1]], np.int64)
    un = floats(2, 3, 2)
    for red in ('none', 'add', 'mul', 'max'):
        c.append(node_case(f'ScatterND slices {red}', 'ScatterND', {'d': dn, 'i': ind, 'u': un},
                           {'y': scatter_nd(dn, ind, un, red)}, reduction=red, opset=18))
    ind2, un2 = np.array([[0, 1], [3, -1], [2, 0]], np.int64), floats(3, 2)
    c.append(node_case('ScatterND element tuples', 'ScatterND', {'d': dn, 'i': ind2, 'u': un2},
                       {'y': scatter_nd(dn, ind2, un2)}))
    # OneHot: int and float indices, negative ones, out of range, every axis.
    idx = np.array([[1, -1, 7], [0, 4, -6]], np.int64)
    vals = np.array([-1.5, 3.0], np.float32)
    for axis in (-1, 0, 1):
        c.append(node_case(f'OneHot axis {axis}', 'OneHot', {'i': idx, 'v': vals},
                           {'y': one_hot(idx, 5, vals, axis)}, consts={'n': np.array(5, np.int64)},
                           order=['i', 'n', 'v'], axis=axis))
    fidx = np.array([1.7, -2.2, 3.0], np.float32)
    ivals = np.array([0, 9], np.int32)
    c.append(node_case('OneHot float indices, int32 values', 'OneHot', {'i': fidx, 'v': ivals},
                       {'y': one_hot(fidx, 4, ivals, -1)},
                       consts={'n': np.array([4], np.float32)}, order=['i', 'n', 'v']))
    # MaxUnpool: the indices of a 2x2/2 max pool, and with output_shape.
    x = floats(1, 2, 4, 4)
    pooled = x.reshape(1, 2, 2, 2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(1, 2, 2, 2, 4)
    arg = pooled.argmax(-1)
    vals4 = pooled.max(-1)
    r, cc = arg // 2, arg % 2
    oy = np.arange(2).reshape(1, 1, 2, 1) * 2 + r
    ox = np.arange(2).reshape(1, 1, 1, 2) * 2 + cc
    flat = (np.arange(2).reshape(1, 2, 1, 1) * 16 + oy * 4 + ox).astype(np.int64)
    c.append(node_case('MaxUnpool 2x2/2', 'MaxUnpool', {'x': vals4, 'i': flat},
                       {'y': max_unpool(vals4, flat, (1, 2, 4, 4))}, kernel_shape=[2, 2],
                       strides=[2, 2]))
    # output_shape 5x7: the 4x4 result padded by (0, 1) rows and (1, 2) columns.
    padded = np.pad(max_unpool(vals4, flat, (1, 2, 4, 4)), ((0, 0), (0, 0), (0, 1), (1, 2)))
    c.append(node_case('MaxUnpool output_shape 5x7', 'MaxUnpool', {'x': vals4, 'i': flat},
                       {'y': padded},
                       consts={'s': np.array([1, 2, 5, 7], np.int64)}, kernel_shape=[2, 2],
                       strides=[2, 2]))
    # TopK: ties (lower index first), smallest, int64, axis 0.
    t = np.array([[3, 1, 3, 2, 3], [0, 0, 0, 0, 0], [5, -1, 4, 4, 9]], np.float32)
    for largest in (1, 0):
        v, ix = top_k(t, 3, 1, largest)
        c.append(node_case(f'TopK ties largest={largest}', 'TopK', {'x': t}, {'v': v, 'ix': ix},
                           consts={'k': np.array([3], np.int64)}, axis=1, largest=largest))
    ti = ints(-3, 3, (6, 2, 3))
    v, ix = top_k(ti, 4, 0, 1)
    c.append(node_case('TopK int64 axis 0', 'TopK', {'x': ti}, {'v': v, 'ix': ix},
                       consts={'k': np.array([4], np.int64)}, axis=0))
    # CumSum: axes, exclusive, reverse, int32, a length that is not a power of 2.
    xc = floats(3, 7, 2)
    for axis, ex, rev in ((1, 0, 0), (1, 1, 0), (1, 0, 1), (1, 1, 1), (-1, 0, 0), (0, 1, 1)):
        c.append(node_case(f'CumSum axis {axis} exclusive={ex} reverse={rev}', 'CumSum',
                           {'x': xc}, {'y': cumsum(xc, axis, ex, rev)},
                           consts={'a': np.array(axis, np.int64)}, exclusive=ex, reverse=rev))
    xi = ints(-50, 50, (2, 9), np.int32)
    c.append(node_case('CumSum int32', 'CumSum', {'x': xi}, {'y': cumsum(xi, 1, 0, 0)},
                       consts={'a': np.array(1, np.int32)}))
    # Trilu: constant and run-time k, batches, wide and tall.
    xt = floats(2, 4, 6)
    for upper, k in ((1, 0), (0, 0), (1, 2), (0, -1), (1, -3), (0, 4)):
        ref = np.triu(xt, k) if upper else np.tril(xt, k)
        c.append(node_case(f'Trilu upper={upper} k={k} constant', 'Trilu', {'x': xt}, {'y': ref},
                           consts={'k': np.array(k, np.int64)}, upper=upper))
        c.append(node_case(f'Trilu upper={upper} k={k} run time', 'Trilu',
                           {'x': xt, 'k': np.array(k, np.int64)}, {'y': ref}, upper=upper))
    ti64 = ints(-9, 9, (5, 3))
    c.append(node_case('Trilu int64 tall', 'Trilu', {'x': ti64}, {'y': np.tril(ti64)}, upper=0))
    # EyeLike.
    c.append(node_case('EyeLike k=-1 int64', 'EyeLike', {'x': floats(3, 5)},
                       {'y': np.eye(3, 5, -1, dtype=np.int64)}, k=-1, dtype=TensorProto.INT64))
    # ReverseSequence: run-time lengths, both layouts, trailing dimensions.
    xr = floats(3, 5, 2)
    lens = np.array([5, 1, 3], np.int64)
    c.append(node_case('ReverseSequence batch 0', 'ReverseSequence', {'x': xr, 'l': lens},
                       {'y': reverse_sequence(xr, lens, 0, 1)}, batch_axis=0, time_axis=1))
    xr2 = floats(5, 3, 2)
    c.append(node_case('ReverseSequence time 0', 'ReverseSequence', {'x': xr2, 'l': lens},
                       {'y': reverse_sequence(xr2, lens, 1, 0)}, batch_axis=1, time_axis=0))
    # Mod: int32 both signs, divisor 0 and -1 (0, numpy's rule), fmod, floats.
    a = np.array([7, -7, 7, -7, 5, -2147483648, 9, 0], np.int32)
    b = np.array([3, 3, -3, -3, 0, -1, 4, 5], np.int32)
    with np.errstate(divide='ignore'):
        c.append(node_case('Mod int32', 'Mod', {'a': a, 'b': b}, {'y': np.mod(a, b)}))
        c.append(node_case('Mod int32 fmod', 'Mod', {'a': a, 'b': b},
                           {'y': np.where(b == 0, 0, np.fmod(a, np.where(b == 0, 1, b)))
                            .astype(np.int32)}, fmod=1))
    af, bf = floats(4, 5) * 4, floats(1, 5) + 2.5
    c.append(node_case('Mod float fmod broadcast', 'Mod', {'a': af, 'b': bf},
                       {'y': np.fmod(af, bf)}, fmod=1))
    ma, mb = np.array([7, -7, 6], np.int64), np.array([-3, 3, 3], np.int64)
    xm64 = ints(0, 3, (3,))
    c.append(Case('Mod int64 constants (folded)',
                  [helper.make_node('Mod', ['a', 'b'], ['r']),
                   helper.make_node('Add', ['r', 'x'], ['y'])],
                  {'x': xm64}, {'y': np.mod(ma, mb) + xm64}, consts={'a': ma, 'b': mb}))
    # Shrink, MeanVarianceNormalization, GlobalLpPool.
    xs = floats(10)
    c.append(node_case('Shrink', 'Shrink', {'x': xs},
                       {'y': np.where(xs < -0.7, xs + 0.2, np.where(xs > 0.7, xs - 0.2, 0))
                        .astype(np.float32)}, lambd=0.7, bias=0.2))
    xm = floats(2, 3, 4, 5)
    c.append(node_case('MeanVarianceNormalization default axes', 'MeanVarianceNormalization',
                       {'x': xm}, {'y': mvn(xm, (0, 2, 3))}))
    c.append(node_case('MeanVarianceNormalization axes [1]', 'MeanVarianceNormalization',
                       {'x': xm}, {'y': mvn(xm, (1,))}, axes=[1]))
    xg = floats(2, 3, 4, 5)
    for p in (1, 2, 3):
        ref = (np.abs(xg.astype(np.float64)) ** p).sum(axis=(2, 3), keepdims=True) ** (1 / p)
        c.append(node_case(f'GlobalLpPool p={p}', 'GlobalLpPool', {'x': xg},
                           {'y': ref.astype(np.float32)}, p=p))
    # Einsum: matmul, batch, transposes, traces, diagonals, sums, ellipses, three
    # operands, implicit outputs, int64.
    for eq, shapes in (('ij,jk->ik', [(3, 4), (4, 5)]), ('bij,bjk->bik', [(2, 3, 4), (2, 4, 5)]),
                       ('ij->ji', [(3, 4)]), ('ii->', [(4, 4)]), ('ii->i', [(4, 4)]),
                       ('...ii->...i', [(2, 3, 3)]), ('ij->i', [(3, 4)]), ('i,i->', [(5,), (5,)]),
                       ('i,j->ij', [(3,), (4,)]), ('bhqd,bhkd->bhqk', [(1, 2, 3, 4), (1, 2, 5, 4)]),
                       ('ij,jk,kl->il', [(2, 3), (3, 4), (4, 2)]), ('ij,jk', [(3, 4), (4, 2)]),
                       ('...ij,...jk->...ik', [(2, 2, 3, 4), (2, 2, 4, 3)]),
                       ('abc,cd->dba', [(2, 3, 4), (4, 5)]), ('ijk,ik->j', [(2, 3, 4), (2, 4)])):
        ops = [floats(*s) for s in shapes]
        names = [f'x{j}' for j in range(len(ops))]
        c.append(Case(f'Einsum {eq}', [helper.make_node('Einsum', names, ['y'], equation=eq)],
                      dict(zip(names, ops)),
                      {'y': np.asarray(np.einsum(eq, *[o.astype(np.float64) for o in ops]),
                                       np.float32)}))
    ai, bi = ints(-5, 5, (2, 3)), ints(-5, 5, (3, 4))
    c.append(Case('Einsum int64 ij,jk->ik', [helper.make_node('Einsum', ['a', 'b'], ['y'],
                                                               equation='ij,jk->ik')],
                  {'a': ai, 'b': bi}, {'y': ai @ bi}))
    # Scan (opsets 9+ and 8): a running sum, axis 1, reversed, two scan outputs.
    init, xs2 = floats(2), floats(2, 4)
    body = helper.make_graph(
        [helper.make_node('Add', ['s', 'e'], ['s2']), helper.make_node('Identity', ['s2'], ['o']),
         helper.make_node('Neg', ['e'], ['o2'])], 'body',
        [helper.make_tensor_value_info('s', TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info('e', TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info('s2', TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info('o', TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info('o2', TensorProto.FLOAT, [2])])
    final, run = scan_sum(init, xs2, 1, True)
    # o2 at step t is -xs[:, T-1-t]; stacked along axis 1 in reverse: -xs.
    c.append(Case('Scan axis 1 reverse, output axis 1 reverse',
                  [helper.make_node('Scan', ['init', 'xs'], ['final', 'run', 'neg'], body=body,
                                    num_scan_inputs=1, scan_input_axes=[1],
                                    scan_input_directions=[1], scan_output_axes=[0, 1],
                                    scan_output_directions=[0, 1])],
                  {'init': init, 'xs': xs2},
                  {'final': final, 'run': run, 'neg': -xs2},
                  opset=16))
    init8, xs8 = floats(3, 2), floats(3, 5, 2)
    finals, runs = zip(*[scan_sum(init8[b], xs8[b], 0, False) for b in range(3)])
    c.append(Case('Scan opset 8 batched',
                  [helper.make_node('Scan', ['', 'init', 'xs'], ['final', 'run', 'neg'],
                                    body=body, num_scan_inputs=1)],
                  {'init': init8, 'xs': xs8},
                  {'final': np.stack(finals), 'run': np.stack(runs), 'neg': -xs8}, opset=8))
    # 3-D ConvTranspose: strides, dilations, pads, output_padding, bias.
    for strides, dil, pads, opad in (([1, 1, 1], [1, 1, 1], [0] * 6, [0, 0, 0]),
                                     ([2, 1, 2], [1, 2, 1], [1, 0, 1, 0, 1, 1], [1, 0, 0])):
        xt3, wt3, bt3 = floats(1, 2, 3, 4, 3), floats(2, 3, 2, 3, 2), floats(3)
        c.append(node_case(f'ConvTranspose 3-D strides {strides} dilations {dil}',
                           'ConvTranspose', {'x': xt3},
                           {'y': conv_transpose3d(xt3, wt3, bt3, strides, dil, pads, opad)},
                           consts={'w': wt3, 'b': bt3}, strides=strides, dilations=dil,
                           pads=pads, output_padding=opad))
    # Det (cofactor expansion) against np.linalg.det.
    for shape in ((3, 3), (2, 4, 4), (5, 5)):
        xd = floats(*shape)
        c.append(node_case(f'Det {list(shape)}', 'Det', {'x': xd},
                           {'y': np.linalg.det(xd.astype(np.float64)).astype(np.float32)}))
    # DFT and STFT against np.fft: real and complex, onesided, inverse, a
    # dft_length that pads.
    xr3 = floats(2, 8, 3, 1)

    def complex_out(z):
        return np.stack([z.real, z.imag], -1).astype(np.float32)
    c.append(node_case('DFT real axis 1 onesided', 'DFT', {'x': xr3},
                       {'y': complex_out(np.fft.rfft(xr3[..., 0].astype(np.float64), axis=1))},
                       axis=1, onesided=1))
    xc3 = floats(2, 3, 6, 2)
    z = xc3[..., 0].astype(np.float64) + 1j * xc3[..., 1]
    c.append(node_case('DFT complex axis 2', 'DFT', {'x': xc3},
                       {'y': complex_out(np.fft.fft(z, axis=2))}, axis=2))
    c.append(node_case('DFT complex inverse', 'DFT', {'x': xc3},
                       {'y': complex_out(np.fft.ifft(z, axis=2))}, axis=2, inverse=1))
    c.append(node_case('DFT dft_length 10 (zero padded)', 'DFT', {'x': xc3},
                       {'y': complex_out(np.fft.fft(z, n=10, axis=2))},
                       consts={'n': np.array(10, np.int64)}, axis=2))
    sig, win = floats(2, 40, 1), floats(8)
    frames = np.stack([sig[:, f * 4:f * 4 + 8, 0] * win for f in range(9)], 1)
    c.append(node_case('STFT step 4 window 8', 'STFT', {'s': sig, 'w': win},
                       {'y': complex_out(np.fft.rfft(frames.astype(np.float64), axis=-1))},
                       consts={'step': np.array(4, np.int64), 'fl': np.array(8, np.int64)},
                       order=['s', 'step', 'w', 'fl'], onesided=1))
    # If with a condition computed at run time: both branches, selected.
    then_g = helper.make_graph([helper.make_node('Neg', ['x'], ['t'])], 'then', [],
                               [helper.make_tensor_value_info('t', TensorProto.FLOAT, [3])])
    else_g = helper.make_graph([helper.make_node('Abs', ['x'], ['e'])], 'else', [],
                               [helper.make_tensor_value_info('e', TensorProto.FLOAT, [3])])
    xv = floats(3)
    for cond in (True, False):
        c.append(Case(f'If run-time condition {cond}',
                      [helper.make_node('If', ['c'], ['y'], then_branch=then_g,
                                        else_branch=else_g)],
                      {'c': np.array(cond), 'x': xv}, {'y': -xv if cond else np.abs(xv)}))
    return c


# Inputs Kiln refuses: (name, op, graph inputs {name: array}, output element
# types, attrs, regex the one error line must match).
F, I64 = TensorProto.FLOAT, TensorProto.INT64
REFUSED = [
    ('TopK k computed at run time', 'TopK', {'x': floats(3, 4), 'k': np.array([2], np.int64)},
     [F, I64], {}, r'k \(input 1 .*not known when the model is compiled'),
    ('Mod int64 at run time', 'Mod', {'a': ints(1, 9, (3,)), 'b': ints(1, 9, (3,))}, [I64], {},
     r'int64 Mod of values computed at run time is not supported'),
    ('Einsum broadcast label', 'Einsum', {'a': floats(3, 1), 'b': floats(3, 4)}, [F],
     {'equation': 'ij,ij->ij'}, r"label 'j' has sizes 1 and 4"),
    ('ScatterElements bool data', 'ScatterElements',
     {'d': np.array([[True, False]]), 'i': np.array([[0]], np.int64), 'u': np.array([[True]])},
     [TensorProto.BOOL], {'axis': 1}, r'float32, int32 and int64 data'),
    ('OneHot depth computed at run time', 'OneHot',
     {'i': np.array([1], np.int64), 'n': np.array(3, np.int64),
      'v': np.array([0, 1], np.float32)}, [F], {}, r"must be a constant"),
]


def tensor_info(name, a):
    return helper.make_tensor_value_info(name, ONNX_TYPES[a.dtype], list(a.shape))


def run_model(kiln, case, tmp):
    """'' when kiln's outputs match, else why not."""
    inputs = [tensor_info(n, a) for n, a in case.feeds.items()]
    outputs = [tensor_info(n, a) for n, a in case.expected.items()]
    inits = [numpy_helper.from_array(a, n) for n, a in case.consts.items()]
    graph = helper.make_graph(case.nodes, 'g', inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', case.opset)])
    model.ir_version = 8
    path = os.path.join(tmp, 'm.onnx')
    onnx.save(model, path)
    args = [kiln, 'run', path]
    for n, a in case.feeds.items():
        np.save(os.path.join(tmp, n + '.npy'), a)
        args.append('--input=@' + os.path.join(tmp, n + '.npy'))
    for n in case.expected:
        args.append('--output=@' + os.path.join(tmp, 'out_' + n + '.npy'))
    r = subprocess.run(args, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        return 'kiln run exited %d: %s' % (r.returncode, (r.stderr or r.stdout).strip()[:400])
    for n, want in case.expected.items():
        got = np.load(os.path.join(tmp, 'out_' + n + '.npy'))
        if got.shape != want.shape:
            return f'{n}: shape {got.shape}, expected {want.shape}'
        if want.dtype.kind == 'f':
            bad = ~(np.abs(got.astype(np.float64) - want) <= 1e-5 * (1 + np.abs(want)))
        else:
            bad = got.astype(np.int64) != want.astype(np.int64)
        if bad.any():
            return f'{n}: {int(bad.sum())} of {bad.size} differ: got {got.tolist()}, expected ' \
                   f'{want.tolist()}'
    return ''


def refused(kiln, case, tmp):
    name, op, inputs, out_types, attrs, pattern = case
    outs = [f'y{k}' for k in range(len(out_types))]
    node = helper.make_node(op, list(inputs), outs, **attrs)
    graph = helper.make_graph([node], 'g', [tensor_info(n, a) for n, a in inputs.items()],
                              [helper.make_tensor_value_info(n, t, None)
                               for n, t in zip(outs, out_types)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 18)])
    model.ir_version = 8
    path = os.path.join(tmp, 'm.onnx')
    onnx.save(model, path)
    r = subprocess.run([kiln, 'compile', path, '-o', os.path.join(tmp, 'm.kiln')],
                       capture_output=True, text=True, timeout=300)
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    if r.returncode != 1 or len(lines) != 1 or not lines[0].startswith('kiln: error:'):
        return f'expected one error line and exit status 1, got {r.returncode}: {r.stderr[:400]}'
    if not re.search(pattern, lines[0]):
        return f'error line does not match {pattern!r}: {lines[0]}'
    return ''


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--kiln', default=DEFAULT_KILN)
    parser.add_argument('--filter', default='')
    args = parser.parse_args()
    passed = failed = 0
    jobs = [(c.name, run_model, c) for c in build_cases()] + \
        [('REFUSED ' + r[0], refused, r) for r in REFUSED]
    for name, fn, case in jobs:
        if not re.search(args.filter, name):
            continue
        with tempfile.TemporaryDirectory() as tmp:
            verdict = fn(args.kiln, case, tmp)
        print(('pass  ' if not verdict else 'FAIL  ') + name + ('' if not verdict else ': ' + verdict),
              flush=True)
        passed += not verdict
        failed += bool(verdict)
    print('%d passed, %d failed' % (passed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
