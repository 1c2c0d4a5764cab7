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
POS = f32(2, 3, 4, seed=5, lo=0.1, hi=3)
# name -> (model, inputs, NumPy reference of the outputs or None)
CASES = {
    'reducemean_axes_input': (reduce_case('ReduceMean', [1], keepdims=0), [X],
                              lambda x: [x.mean(axis=1)]),
    'reducemax_noop_empty': (reduce_case('ReduceMax', None, noop=1), [X], lambda x: [x]),
    # noop_with_empty_axes keeps the elementwise part (onnx/onnx#6103;
    # ORT 1.30 agrees): |x|, |x|, x^2, log x.
    'reducel1_noop_empty': (reduce_case('ReduceL1', None, noop=1), [X], lambda x: [np.abs(x)]),
    'reducel2_noop_empty': (reduce_case('ReduceL2', None, noop=1), [X], lambda x: [np.abs(x)]),
    'reducesumsquare_noop_empty': (reduce_case('ReduceSumSquare', None, noop=1), [X],
                                   lambda x: [x * x]),
    'reducelogsum_noop_empty': (reduce_case('ReduceLogSum', None, noop=1), [POS],
                                lambda x: [np.log(x)]),
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


# --- CenterCropPad, Col2Im, AffineGrid, DeformConv, AveragePool dilations ---
# Each NumPy reference below is written from the operator's definition in
# onnx docs/Operators.md (loops over the output, not a vectorized copy of
# Kiln's lowering).


def center_crop_pad_ref(x, shape, axes=None):
    """CenterCropPad-18: crop to the centered s elements or zero-pad, the
    odd element after."""
    axes = range(x.ndim) if axes is None else [a % x.ndim for a in axes]
    y = x
    for a, s in zip(axes, shape):
        d = y.shape[a]
        if s < d:
            y = np.take(y, np.arange((d - s) // 2, (d - s) // 2 + s), axis=a)
        elif s > d:
            pad = [(0, 0)] * y.ndim
            pad[a] = ((s - d) // 2, s - d - (s - d) // 2)
            y = np.pad(y, pad)
    return y


def center_crop_pad(xshape, shape, axes=None, dtype=F):
    attrs = {} if axes is None else {'axes': axes}
    return model([helper.make_node('CenterCropPad', ['x', 'shape'], ['y'], **attrs)],
                 [('x', dtype, xshape)], [('y', dtype, None)], 18,
                 inits=[('shape', np.array(shape, np.int64))])


def col2im_ref(x, image, block, dilations=None, pads=None, strides=None):
    """Col2Im-18: column l of block position k (channel c * K + k) adds to
    the padded image at l's block origin * strides + k * dilations."""
    d = len(image)
    dilations, strides = dilations or [1] * d, strides or [1] * d
    pads = pads or [0] * (2 * d)
    n, ck, _ = x.shape
    kk = int(np.prod(block))
    c = ck // kk
    padded = [image[i] + pads[i] + pads[d + i] for i in range(d)]
    counts = [(padded[i] - dilations[i] * (block[i] - 1) - 1) // strides[i] + 1 for i in range(d)]
    y = np.zeros((n, c) + tuple(padded), np.float64)
    for k, kidx in enumerate(np.ndindex(*block)):
        for l, lidx in enumerate(np.ndindex(*counts)):
            pos = tuple(lidx[i] * strides[i] + kidx[i] * dilations[i] for i in range(d))
            y[(slice(None), slice(None)) + pos] += x[:, np.arange(c) * kk + k, l]
    return y[(slice(None), slice(None)) + tuple(slice(pads[i], pads[i] + image[i])
                                                 for i in range(d))]


def col2im_case(n, c, image, block, **attrs):
    d = len(image)
    dil, st = attrs.get('dilations', [1] * d), attrs.get('strides', [1] * d)
    pads = attrs.get('pads', [0] * 2 * d)
    counts = [(image[i] + pads[i] + pads[d + i] - dil[i] * (block[i] - 1) - 1) // st[i] + 1
              for i in range(d)]
    shape = [n, c * int(np.prod(block)), int(np.prod(counts))]
    m = model([helper.make_node('Col2Im', ['x', 'image', 'block'], ['y'], **attrs)],
              [('x', F, shape)], [('y', F, None)], 18,
              inits=[('image', np.array(image, np.int64)), ('block', np.array(block, np.int64))])
    ref = lambda x: [col2im_ref(x.astype(np.float64), image, block, attrs.get('dilations'),
                                attrs.get('pads'), attrs.get('strides'))]
    return m, [f32(*shape, seed=len(image) + c)], ref


def affine_grid_ref(theta, size, align):
    """AffineGrid-20: theta[n] times (x, y[, z], 1) over the base grid."""
    def lin(s):
        return np.linspace(-1, 1, s) if align else (2 * np.arange(s) + 1) / s - 1
    coords = np.meshgrid(*[lin(s) for s in size[2:]], indexing='ij')  # D, H, W
    base = np.stack(coords[::-1] + [np.ones_like(coords[0])], -1)  # x, y, z, 1
    return np.einsum('...j,nij->n...i', base, theta.astype(np.float64))


def affine_grid_case(size, align):
    k = len(size) - 2
    m = model([helper.make_node('AffineGrid', ['theta', 'size'], ['grid'], align_corners=align)],
              [('theta', F, [size[0], k, k + 1])], [('grid', F, None)], 20,
              inits=[('size', np.array(size, np.int64))])
    return m, [f32(size[0], k, k + 1, seed=7)], lambda t: [affine_grid_ref(t, size, align)]


def bilinear_ref(img, y, x):
    """A pixel-coordinate bilinear sample; corners outside the image read 0."""
    h, w = img.shape
    if y <= -1 or y >= h or x <= -1 or x >= w:
        return 0.0
    y0, x0 = math.floor(y), math.floor(x)
    total = 0.0
    for yy, wy in ((y0, 1 - (y - y0)), (y0 + 1, y - y0)):
        for xx, wx in ((x0, 1 - (x - x0)), (x0 + 1, x - x0)):
            if 0 <= yy < h and 0 <= xx < w:
                total += wy * wx * float(img[yy, xx])
    return total


def deform_conv_ref(x, w, offset, b=None, mask=None, strides=(1, 1), pads=(0, 0, 0, 0),
                    dilations=(1, 1), group=1, offset_group=1):
    """DeformConv-19: each tap reads X bilinearly at its offset location,
    times the mask, then a grouped convolution sum."""
    n, c, h, wd = x.shape
    oc, cg, kh, kw = w.shape
    oh, ow = offset.shape[2:]
    off = offset.reshape(n, offset_group, kh, kw, 2, oh, ow)
    m = (np.ones((n, offset_group, kh, kw, oh, ow)) if mask is None
         else mask.reshape(n, offset_group, kh, kw, oh, ow))
    cols = np.zeros((n, c, kh, kw, oh, ow))
    for bi, ch, i, j, y, xx in np.ndindex(n, c, kh, kw, oh, ow):
        g = ch // (c // offset_group)
        py = y * strides[0] - pads[0] + i * dilations[0] + float(off[bi, g, i, j, 0, y, xx])
        px = xx * strides[1] - pads[1] + j * dilations[1] + float(off[bi, g, i, j, 1, y, xx])
        cols[bi, ch, i, j, y, xx] = bilinear_ref(x[bi, ch], py, px) * m[bi, g, i, j, y, xx]
    out = np.zeros((n, oc, oh, ow))
    ocg = oc // group
    for o in range(oc):
        g = o // ocg
        out[:, o] = np.einsum('cij,ncijyx->nyx', w[o].astype(np.float64),
                              cols[:, g * cg:(g + 1) * cg])
    if b is not None:
        out += b.reshape(1, oc, 1, 1)
    return out


def deform_conv_case(xshape, wshape, bias=False, mask=False, seed=0, **attrs):
    n, c, h, wd = xshape
    oc, _, kh, kw = wshape
    st, dil = attrs.get('strides', [1, 1]), attrs.get('dilations', [1, 1])
    pads = attrs.get('pads', [0, 0, 0, 0])
    og = attrs.get('offset_group', 1)
    oh = (h + pads[0] + pads[2] - dil[0] * (kh - 1) - 1) // st[0] + 1
    ow = (wd + pads[1] + pads[3] - dil[1] * (kw - 1) - 1) // st[1] + 1
    names = ['x', 'w', 'offset'] + (['b'] if bias or mask else []) + (['mask'] if mask else [])
    if mask and not bias:
        names[3] = ''
    ins = [('x', F, xshape), ('w', F, wshape), ('offset', F, [n, og * kh * kw * 2, oh, ow])]
    vals = [f32(*xshape, seed=seed), f32(*wshape, seed=seed + 1),
            f32(n, og * kh * kw * 2, oh, ow, seed=seed + 2, lo=-1.8, hi=1.8)]
    if bias:
        ins.append(('b', F, [oc]))
        vals.append(f32(oc, seed=seed + 3))
    if mask:
        ins.append(('mask', F, [n, og * kh * kw, oh, ow]))
        vals.append(f32(n, og * kh * kw, oh, ow, seed=seed + 4, lo=0, hi=1))
    m = model([helper.make_node('DeformConv', names, ['y'], **attrs)], ins, [('y', F, None)], 19)
    keys = {'strides', 'pads', 'dilations', 'group', 'offset_group'}

    def ref(*v):
        b = v[3] if bias else None
        mk = v[-1] if mask else None
        return [deform_conv_ref(v[0].astype(np.float64), v[1], v[2].astype(np.float64), b, mk,
                                **{k: a for k, a in attrs.items() if k in keys})]
    return m, vals, ref


def avg_pool_ref(x, kernel, strides, pads, dilations, ceil=0, include=0):
    """AveragePool-19 with dilations: the mean of each window's dilated
    taps inside the input (count_include_pad 1: inside the pads too; a
    ceil_mode window past the end pad never counts that part)."""
    d = len(kernel)
    ins = x.shape[2:]
    outs = []
    for i in range(d):
        span = ins[i] + pads[i] + pads[d + i] - dilations[i] * (kernel[i] - 1) - 1
        o = (-(-span // strides[i]) if ceil else span // strides[i]) + 1
        if ceil and (o - 1) * strides[i] >= ins[i] + pads[i]:
            o -= 1
        outs.append(o)
    y = np.zeros(x.shape[:2] + tuple(outs))
    for oidx in np.ndindex(*outs):
        total, count = 0.0, 0
        for kidx in np.ndindex(*kernel):
            pos = [oidx[i] * strides[i] - pads[i] + kidx[i] * dilations[i] for i in range(d)]
            inside = all(0 <= pos[i] < ins[i] for i in range(d))
            in_pads = all(-pads[i] <= pos[i] < ins[i] + pads[d + i] for i in range(d))
            if inside:
                total = total + x[(slice(None), slice(None)) + tuple(pos)].astype(np.float64)
            count += inside or (include and in_pads)
        y[(slice(None), slice(None)) + oidx] = total / count
    return y


def avg_pool_case(xshape, kernel, strides, pads, dilations, ceil=0, include=0):
    m = model([helper.make_node('AveragePool', ['x'], ['y'], kernel_shape=kernel, strides=strides,
                                pads=pads, dilations=dilations, ceil_mode=ceil,
                                count_include_pad=include)],
              [('x', F, xshape)], [('y', F, None)], 19)
    return m, [f32(*xshape, seed=11)], lambda x: [avg_pool_ref(x, kernel, strides, pads, dilations,
                                                               ceil, include)]


def ccp(name, xshape, shape, axes=None, dtype=F):
    x = f32(*xshape, seed=5) if dtype == F else i32(*xshape, seed=5)
    CASES[name] = (center_crop_pad(xshape, shape, axes, dtype), [x],
                   lambda v: [center_crop_pad_ref(v, shape, axes)])


ccp('centercroppad_crop', [1, 3, 8, 7], [1, 3, 5, 4])
ccp('centercroppad_pad', [2, 3, 4], [2, 6, 7])
ccp('centercroppad_mixed', [3, 6, 5], [5, 3, 8])
ccp('centercroppad_axes', [1, 3, 6, 7], [4, 10], axes=[-2, -1])
ccp('centercroppad_axes_int32', [2, 5, 4], [8, 3], axes=[2, 0], dtype=I32)
CASES['col2im_2d'] = col2im_case(1, 2, [4, 5], [2, 2])
CASES['col2im_2d_strides_pads_dilations'] = col2im_case(
    2, 3, [6, 7], [2, 3], strides=[2, 1], pads=[1, 0, 1, 2], dilations=[1, 2])
CASES['col2im_2d_strides'] = col2im_case(1, 1, [5, 5], [2, 2], strides=[2, 2])
CASES['col2im_3d'] = col2im_case(1, 2, [3, 4, 4], [2, 2, 2])
CASES['col2im_3d_strides_pads_dilations'] = col2im_case(
    1, 2, [4, 5, 6], [2, 2, 3], strides=[1, 2, 2], pads=[0, 1, 1, 1, 0, 1], dilations=[2, 1, 1])
CASES['col2im_1d'] = col2im_case(2, 2, [9], [3], strides=[2], pads=[1, 1])
CASES['affinegrid_2d_align0'] = affine_grid_case([2, 3, 4, 5], 0)
CASES['affinegrid_2d_align1'] = affine_grid_case([2, 3, 4, 5], 1)
CASES['affinegrid_3d_align0'] = affine_grid_case([1, 2, 3, 4, 5], 0)
CASES['affinegrid_3d_align1'] = affine_grid_case([2, 1, 2, 3, 4], 1)
CASES['affinegrid_2d_size1_align0'] = affine_grid_case([1, 1, 1, 4], 0)
CASES['deformconv_basic'] = deform_conv_case([1, 2, 5, 5], [3, 2, 3, 3])
CASES['deformconv_bias_mask'] = deform_conv_case([2, 2, 5, 6], [2, 2, 3, 3], bias=True, mask=True,
                                                 seed=10, pads=[1, 1, 1, 1])
CASES['deformconv_mask_only'] = deform_conv_case([1, 2, 4, 4], [2, 2, 2, 2], mask=True, seed=20)
CASES['deformconv_group2'] = deform_conv_case([1, 4, 5, 5], [6, 2, 3, 3], bias=True, seed=30,
                                              group=2, pads=[1, 0, 1, 0])
CASES['deformconv_offset_group2'] = deform_conv_case([1, 4, 5, 5], [2, 4, 3, 3], mask=True,
                                                     seed=40, offset_group=2)
CASES['deformconv_strides_dilations'] = deform_conv_case(
    [1, 4, 7, 8], [4, 2, 3, 2], bias=True, mask=True, seed=50, strides=[2, 1],
    dilations=[1, 2], pads=[1, 2, 0, 1], group=2, offset_group=2)
CASES['averagepool_dilations'] = avg_pool_case([1, 2, 7, 7], [2, 2], [1, 1], [0, 0, 0, 0], [2, 2])
CASES['averagepool_dilations_pads'] = avg_pool_case([1, 2, 7, 8], [3, 2], [2, 1], [1, 1, 1, 0],
                                                    [2, 3])
CASES['averagepool_dilations_include_pad'] = avg_pool_case(
    [1, 2, 7, 8], [3, 2], [2, 1], [1, 1, 1, 0], [2, 3], include=1)
CASES['averagepool_dilations_ceil'] = avg_pool_case([1, 1, 8, 9], [2, 3], [2, 2], [0, 1, 0, 1],
                                                    [2, 2], ceil=1)
CASES['averagepool_dilations_ceil_include_pad'] = avg_pool_case(
    [1, 1, 8, 9], [2, 3], [2, 2], [1, 1, 0, 1], [2, 2], ceil=1, include=1)
CASES['averagepool_dilations_same_upper'] = (
    model([helper.make_node('AveragePool', ['x'], ['y'], kernel_shape=[3, 2], strides=[2, 1],
                            dilations=[2, 2], auto_pad='SAME_UPPER')],
          [('x', F, [1, 2, 7, 6])], [('y', F, None)], 19),
    [f32(1, 2, 7, 6, seed=12)],
    # SAME_UPPER: out = ceil(in / stride), the total pad (out - 1) * stride
    # + dilated extent - in, its odd element at the end: H 2 + 2, W 1 + 1.
    lambda x: [avg_pool_ref(x, [3, 2], [2, 1], [2, 1, 2, 1], [2, 2])])
CASES['averagepool_dilations_1d'] = avg_pool_case([1, 2, 10], [3], [2], [1, 2], [2], ceil=1)
CASES['averagepool_dilations_3d'] = avg_pool_case([1, 1, 5, 6, 6], [2, 2, 2], [1, 2, 1],
                                                  [0, 1, 1, 1, 0, 0], [2, 1, 2], include=1)



def lp_pool_ref(x, kernel, strides, pads, p, dilations=None, ceil=0):
    """LpPool: (sum over each window of |x|^p)^(1/p), the pads adding
    nothing; output size floor (or ceil with ceil_mode) of (in + pads -
    extent) / stride + 1, in float64."""
    spatial = x.ndim - 2
    dilations = dilations or [1] * spatial
    xp = np.abs(x.astype(np.float64)) ** p
    out_shape, axes = [], []
    for d in range(spatial):
        extent = (kernel[d] - 1) * dilations[d] + 1
        span = x.shape[2 + d] + pads[d] + pads[spatial + d] - extent
        n = (-(-span // strides[d]) if ceil else span // strides[d]) + 1
        out_shape.append(n)
    y = np.zeros(x.shape[:2] + tuple(out_shape))
    for o in np.ndindex(*out_shape):
        total = np.zeros(x.shape[:2])
        for k in np.ndindex(*kernel):
            pos = [o[d] * strides[d] + k[d] * dilations[d] - pads[d] for d in range(spatial)]
            if all(0 <= pos[d] < x.shape[2 + d] for d in range(spatial)):
                total += xp[(slice(None), slice(None)) + tuple(pos)]
        y[(slice(None), slice(None)) + o] = total ** (1.0 / p)
    return y


def lp_pool_case(xshape, kernel, strides, pads, p, opset, dilations=None, ceil=0):
    attrs = {'kernel_shape': kernel, 'strides': strides, 'pads': pads, 'p': p}
    if dilations:
        attrs['dilations'] = dilations
    if ceil:
        attrs['ceil_mode'] = ceil
    x = f32(*xshape, seed=11)
    want = lp_pool_ref(x, kernel, strides, pads, p, dilations, ceil)
    # libonnx's checker (opsets up to 17) asks graph outputs for a shape.
    return (model([helper.make_node('LpPool', ['x'], ['y'], **attrs)], [('x', F, xshape)],
                  [('y', F, list(want.shape))], opset),
            [x], lambda x: [lp_pool_ref(x, kernel, strides, pads, p, dilations, ceil)])


# LpPool (issue: the backend's LpPool; opset 18 adds dilations and ceil_mode).
CASES['lppool_p2_pads_opset11'] = lp_pool_case([1, 2, 4, 5], [2, 2], [1, 1], [1, 0, 0, 1], 2, 11)
CASES['lppool_p1_1d_opset11'] = lp_pool_case([1, 3, 7], [3], [2], [0, 1], 1, 11)
CASES['lppool_p3_dilated_ceil_opset18'] = lp_pool_case([1, 2, 6, 6], [2, 2], [2, 2], [0, 0, 0, 0], 3,
                                                       18, dilations=[2, 1], ceil=1)

# Cases where ONNX Runtime 1.30's output disagrees with the independent
# NumPy evaluation of the definition: checked against NumPy only (the ORT
# output stays committed beside the model, for the record).
ORT_DISAGREES = {
    # ORT's CPU Col2Im counts the blocks of a 3-D image without the
    # dilations (microsoft/onnxruntime#18156, "ORT bug in Col2Im CPU 3D
    # cases"): with dilations != 1 its columns land at the wrong offsets.
    # col2im_ref is the exact adjoint of im2col written from the definition
    # (<im2col(img), cols> == <img, col2im(cols)> checked to 1e-15); the 2-D
    # dilated case and the 3-D ones without dilations agree with ORT.
    'col2im_3d_strides_pads_dilations':
        'ORT 1.30 Col2Im 3-D with dilations (microsoft/onnxruntime#18156)',
    # auto_pad SAME_UPPER with dilations: the spec's total pad is
    # (out - 1) * stride + ((kernel - 1) * dilation + 1) - in with out =
    # ceil(in / stride); ORT 1.30's pool pads with the undilated kernel
    # instead, so its output is smaller ([1, 2, 3, 5], not [1, 2, 4, 6]);
    # its values are exactly avg_pool_ref's with those pads (1/1, 0/1),
    # checked by hand. Kiln and the NumPy reference follow the spec.
    'averagepool_dilations_same_upper':
        'ORT 1.30 pads SAME_UPPER pools without the dilation',
}
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
    'centercroppad_repeated_axes': (center_crop_pad([2, 3], [2, 2], axes=[1, -1]),
                                    'must be distinct axes'),
    'centercroppad_shape_count': (center_crop_pad([2, 3, 4], [2, 2]),
                                  'shape holds 2 sizes; it needs one per axis (3)'),
    'centercroppad_runtime_shape': (
        model([helper.make_node('CenterCropPad', ['x', 's'], ['y'])],
              [('x', F, [2, 3]), ('s', I64, [2])], [('y', F, None)], 18),
        "input 1 ('s') must be a constant integer tensor"),
    'centercroppad_one_input': (
        model([helper.make_node('CenterCropPad', ['x'], ['y'])], [('x', F, [2, 3])],
              [('y', F, None)], 18),
        'takes 2 inputs; it has 1'),
    'col2im_bad_columns': (
        model([helper.make_node('Col2Im', ['x', 'image', 'block'], ['y'])],
              [('x', F, [1, 8, 10])], [('y', F, None)], 18,
              inits=[('image', np.array([4, 5], np.int64)), ('block', np.array([2, 2], np.int64))]),
        'it must be [N, C * 4, 12]'),
    'col2im_zero_stride': (
        model([helper.make_node('Col2Im', ['x', 'image', 'block'], ['y'], strides=[0, 1])],
              [('x', F, [1, 4, 12])], [('y', F, None)], 18,
              inits=[('image', np.array([4, 5], np.int64)), ('block', np.array([2, 2], np.int64))]),
        "attribute 'strides' must be positive"),
    'col2im_int32_input': (
        model([helper.make_node('Col2Im', ['x', 'image', 'block'], ['y'])],
              [('x', I32, [1, 4, 12])], [('y', I32, None)], 18,
              inits=[('image', np.array([4, 5], np.int64)), ('block', np.array([2, 2], np.int64))]),
        "input has element type int32; Kiln's Col2Im takes float32"),
    'col2im_two_inputs': (
        model([helper.make_node('Col2Im', ['x', 'image'], ['y'])], [('x', F, [1, 4, 12])],
              [('y', F, None)], 18, inits=[('image', np.array([4, 5], np.int64))]),
        'takes 3 inputs; it has 2'),
    'affinegrid_align1_size1': (affine_grid_case([1, 1, 1, 4], 1)[0],
                                'align_corners 1 with a spatial size of 1'),
    'affinegrid_bad_theta': (
        model([helper.make_node('AffineGrid', ['theta', 'size'], ['grid'])],
              [('theta', F, [1, 2, 3])], [('grid', F, None)], 20,
              inits=[('size', np.array([1, 1, 2, 3, 4], np.int64))]),
        'it must be [1,3,4]'),
    'affinegrid_bad_align': (
        model([helper.make_node('AffineGrid', ['theta', 'size'], ['grid'], align_corners=2)],
              [('theta', F, [1, 2, 3])], [('grid', F, None)], 20,
              inits=[('size', np.array([1, 1, 2, 3], np.int64))]),
        'align_corners is 2'),
    'affinegrid_huge': (
        model([helper.make_node('AffineGrid', ['theta', 'size'], ['grid'])],
              [('theta', F, [1, 2, 3])], [('grid', F, None)], 20,
              inits=[('size', np.array([1, 1, 100000, 100000], np.int64))]),
        'more than 2^24 values'),
    'deformconv_int32_input': (
        model([helper.make_node('DeformConv', ['x', 'w', 'offset'], ['y'])],
              [('x', I32, [1, 2, 5, 5]), ('w', F, [3, 2, 3, 3]), ('offset', F, [1, 18, 3, 3])],
              [('y', F, None)], 19),
        "input 0 ('x') has element type int32; DeformConv takes float32"),
    'deformconv_bad_offset': (
        model([helper.make_node('DeformConv', ['x', 'w', 'offset'], ['y'])],
              [('x', F, [1, 2, 5, 5]), ('w', F, [3, 2, 3, 3]), ('offset', F, [1, 9, 3, 3])],
              [('y', F, None)], 19),
        'offset has shape [1,9,3,3]'),
    'deformconv_bad_offset_group': (
        model([helper.make_node('DeformConv', ['x', 'w', 'offset'], ['y'], offset_group=3)],
              [('x', F, [1, 4, 5, 5]), ('w', F, [2, 4, 3, 3]), ('offset', F, [1, 54, 3, 3])],
              [('y', F, None)], 19),
        'offset_group 3 does not divide the 4 channels'),
    'deformconv_3d': (
        model([helper.make_node('DeformConv', ['x', 'w', 'offset'], ['y'])],
              [('x', F, [1, 2, 4, 4, 4]), ('w', F, [2, 2, 2, 2, 2]),
               ('offset', F, [1, 24, 3, 3, 3])], [('y', F, None)], 19),
        'Kiln converts 2-D DeformConv'),
    'deformconv_bad_group': (
        model([helper.make_node('DeformConv', ['x', 'w', 'offset'], ['y'], group=3)],
              [('x', F, [1, 4, 5, 5]), ('w', F, [3, 2, 3, 3]), ('offset', F, [1, 18, 3, 3])],
              [('y', F, None)], 19),
        'it must be [oC, C / group, kH, kW]'),
    'averagepool_dilations_padding_only': (
        model([helper.make_node('AveragePool', ['x'], ['y'], kernel_shape=[2, 2],
                                dilations=[3, 1], pads=[1, 0, 1, 0])],
              [('x', F, [1, 1, 2, 4])], [('y', F, None)], 19),
        'reads padding only'),
    'averagepool_zero_dilation': (
        model([helper.make_node('AveragePool', ['x'], ['y'], kernel_shape=[2, 2],
                                dilations=[0, 1])],
              [('x', F, [1, 1, 4, 4])], [('y', F, None)], 19),
        "attribute 'dilations' must be positive"),
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
        verdict = ''
        if name not in ORT_DISAGREES:
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
