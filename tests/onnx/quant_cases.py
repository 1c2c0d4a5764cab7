#!/usr/bin/env python3
"""Quantized ONNX operators through Kiln, against ONNX Runtime 1.30 and NumPy.

  quant_cases.py --write DIR      writes each case's model.onnx and
                                  input_K.npy into DIR/<case>/ (then
                                  `node tests/reference/opset18_reference.mjs
                                  DIR` adds ONNX Runtime's output_K.npy)
  quant_cases.py --kiln KILN [--data DIR] [--filter REGEX]
                                  runs every case with `kiln compile` and
                                  `kiln run` and compares with the committed
                                  ONNX Runtime outputs and with NumPy's
                                  evaluation of ONNX Runtime's arithmetic:
                                  integer outputs exactly (the differing
                                  element count is printed otherwise), float
                                  outputs exactly where they are one
                                  dequantization, else within 1e-6 relative;
                                  then the INTEGER_ONLY models (fused QDQ
                                  groups) must export for the Cortex-M0+ and
                                  compute in integers in their TOSA (products
                                  on i8, f32 only in the requantization
                                  epilogue; the UNFUSED one must not), the
                                  FUSED_FLOAT ones (QDQ AveragePool, which
                                  ORT computes in float) hold no float
                                  avg_pool2d, and the REFUSED ones give one
                                  `kiln: error:` line holding a phrase.

The NumPy references follow ONNX Runtime 1.30's CPU kernels: QuantizeLinear
divides in float32 and rounds half to even (np.rint); DequantizeLinear is
float32((x - zp)) * scale; QLinearConv / QLinearMatMul requantize the int32
accumulator in float32: rint(float32(acc) * float32(float32(xs * ws) / ys)) +
zp, saturated; DynamicQuantizeLinear takes scale = float32(max - min) / 255
(min <= 0 <= max), zp = rint(clip(-min / scale, 0, 255)).
QDQ Add / Mul / LeakyRelu / Sigmoid follow ORT's contrib QLinear kernels
(MLAS qladd_avx2.cpp with GCC's contraction, qlmul.cpp, the lookup tables of
qlinear_lookup_table.cc with MlasLogisticKernelFma3); QDQ AveragePool and
Concat of other parameters follow QLinearAveragePool (float32 window sums in
row-major order, two float32 divisions, nearbyint) and QLinearConcat (per
input the identity lookup table: the float path's DQ and Q) of
qlinear_pool.cc and qlinear_concat.cc. For each such case the count of
elements where the unfused float path (DQ, float op, Q) differs from ONNX
Runtime is printed.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, '..', 'data', 'onnx', 'quant')
F, I8, U8, I32 = TensorProto.FLOAT, TensorProto.INT8, TensorProto.UINT8, TensorProto.INT32
NP = {I8: np.int8, U8: np.uint8, F: np.float32, I32: np.int32}
RANGE = {np.int8: (-128, 127), np.uint8: (0, 255)}


def model(nodes, inputs, outputs, opset=13, inits=(), ir=None):
    """A one-graph model: inputs/outputs are (name, type, shape)."""
    graph = helper.make_graph(
        nodes, 'g', [helper.make_tensor_value_info(*i) for i in inputs],
        [helper.make_tensor_value_info(*o) for o in outputs],
        initializer=[numpy_helper.from_array(np.asarray(v), n) for n, v in inits])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid('', opset)],
                          producer_name='kiln-quant-cases')
    m.ir_version = ir or (7 if opset <= 13 else 9 if opset < 21 else 10)
    return m


def rng(seed):
    return np.random.default_rng(seed)


def f32(shape, seed=0, lo=-2.0, hi=2.0):
    return rng(seed).uniform(lo, hi, shape).astype(np.float32)


def ints(shape, dtype, seed=0):
    lo, hi = RANGE[dtype]
    return rng(seed).integers(lo, hi + 1, shape).astype(dtype)


# --- NumPy references (ONNX Runtime's arithmetic) ---------------------------------

def per_axis(v, rank, axis):
    v = np.asarray(v)
    if v.size == 1:
        return v.reshape(())
    shape = [1] * rank
    shape[axis] = v.size
    return v.reshape(shape)


def quantize(x, scale, zp, dtype, axis=1):
    s = per_axis(np.float32(scale), x.ndim, axis)
    z = per_axis(zp, x.ndim, axis).astype(np.float32)
    with np.errstate(invalid='ignore', divide='ignore'):
        y = np.rint(x.astype(np.float32) / s) + z
    lo, hi = RANGE[dtype]
    y = np.where(np.isnan(y), lo, np.clip(y, lo, hi))
    return y.astype(dtype)


def dequantize(x, scale, zp, axis=1):
    s = per_axis(np.float32(scale), x.ndim, axis)
    z = per_axis(zp, x.ndim, axis).astype(np.int32)
    return (x.astype(np.int32) - z).astype(np.float32) * s


def dynamic_quantize(x):
    lo = np.float32(min(np.float32(x.min()), np.float32(0)))
    hi = np.float32(max(np.float32(x.max()), np.float32(0)))
    scale = np.float32(1) if hi == lo else np.float32(hi - lo) / np.float32(255)
    zp = np.float32(np.rint(np.clip(np.float32(0) - lo / scale, 0, 255)))
    y = np.clip(np.rint(x / scale) + zp, 0, 255).astype(np.uint8)
    return y, np.float32(scale), np.uint8(zp)


def conv_acc(x, w, zx, zw, pads=(0, 0, 0, 0), strides=(1, 1), dilations=(1, 1), group=1):
    """int64 sum of (x - zx)(w - zw) over each window; padding reads zx."""
    x = x.astype(np.int64) - int(zx)
    w = w.astype(np.int64) - np.asarray(zw, np.int64).reshape(-1, 1, 1, 1)
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    x = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh = (x.shape[2] - ((kh - 1) * dilations[0] + 1)) // strides[0] + 1
    ow = (x.shape[3] - ((kw - 1) * dilations[1] + 1)) // strides[1] + 1
    out = np.zeros((n, m, oh, ow), np.int64)
    mg = m // group
    for o in range(m):
        g = o // mg
        for i in range(oh):
            for j in range(ow):
                ys, xs = i * strides[0], j * strides[1]
                patch = x[:, g * cg:(g + 1) * cg, ys:ys + (kh - 1) * dilations[0] + 1:dilations[0],
                          xs:xs + (kw - 1) * dilations[1] + 1:dilations[1]]
                out[:, o, i, j] = (patch * w[o][None]).sum(axis=(1, 2, 3))
    return out


def conv_acc_fast(x, w, zx, zw, pads=(0, 0, 0, 0), strides=(1, 1)):
    """conv_acc for group 1 and dilation 1 as one float64 matmul (exact: the
    sums stay far below 2^53)."""
    xc = np.pad(x.astype(np.float64) - float(zx), ((0, 0), (0, 0), (pads[0], pads[2]),
                                                   (pads[1], pads[3])))
    wc = w.astype(np.float64) - np.asarray(zw, np.float64).reshape(-1, 1, 1, 1)
    n, c, h, wd = xc.shape
    m, _, kh, kw = w.shape
    oh, ow = (h - kh) // strides[0] + 1, (wd - kw) // strides[1] + 1
    cols = np.empty((n, c, kh, kw, oh, ow))
    for i in range(kh):
        for j in range(kw):
            cols[:, :, i, j] = xc[:, :, i:i + strides[0] * (oh - 1) + 1:strides[0],
                                  j:j + strides[1] * (ow - 1) + 1:strides[1]]
    out = np.einsum('mk,nkp->nmp', wc.reshape(m, -1), cols.reshape(n, c * kh * kw, oh * ow))
    return np.rint(out).astype(np.int64).reshape(n, m, oh, ow)


def requantize(acc, xs, ws, ys, zy, dtype, axis):
    scale = (np.float32(xs) * np.asarray(ws, np.float32)) / np.float32(ys)
    s = per_axis(scale.astype(np.float32), acc.ndim, axis)
    y = np.rint(acc.astype(np.float32) * s) + np.float32(zy)
    lo, hi = RANGE[dtype]
    return np.clip(y, lo, hi).astype(dtype)


def matmul_acc(a, b, za, zb):
    return np.matmul(a.astype(np.int64) - int(za), b.astype(np.int64) - np.asarray(zb, np.int64))


# --- Cases --------------------------------------------------------------------------

CASES = {}   # name -> (model, inputs, reference(*inputs) -> outputs)
EXACT_FLOAT = set()  # cases whose float outputs are one dequantization: exact


def case(name, m, inputs, ref, exact_float=True):
    CASES[name] = (m, inputs, ref)
    if exact_float:
        EXACT_FLOAT.add(name)


def ties(shape, scale, seed):
    """Values on and next to half-integer multiples of `scale` (float32)."""
    k = rng(seed).integers(-300, 300, shape).astype(np.float32) + np.float32(0.5)
    x = (k * np.float32(scale)).astype(np.float32)
    nudge = rng(seed + 1).integers(-1, 2, shape)
    return np.nextafter(x, np.where(nudge > 0, np.inf, -np.inf).astype(np.float32)).astype(
        np.float32) * (nudge != 0) + x * (nudge == 0)


def q_case(name, dtype, scale, zp, shape, opset, axis=None, x=None, with_zp=True, **attrs):
    zp_arr = np.asarray(zp, NP[dtype])
    s_arr = np.asarray(scale, np.float32)
    inits = [('s', s_arr)] + ([('z', zp_arr)] if with_zp else [])
    if axis is not None:
        attrs['axis'] = axis
    node = helper.make_node('QuantizeLinear', ['x', 's'] + (['z'] if with_zp else []), ['y'],
                            **attrs)
    x = f32(shape, seed=len(CASES)) if x is None else x
    a = 1 if axis is None else axis % len(shape)
    ref_zp = zp_arr if with_zp else np.zeros_like(zp_arr)
    case(name, model([node], [('x', F, shape)], [('y', dtype, shape)], opset, inits), [x],
         lambda x: [quantize(x, s_arr, ref_zp, NP[dtype], a)])


X_TIES = ties([4, 64], 0.05, 7)
q_case('quantize_u8_ties', U8, 0.05, 128, [4, 64], 13, x=X_TIES)
q_case('quantize_i8_ties_opset10', I8, 0.05, -3, [4, 64], 10, x=X_TIES)
q_case('quantize_i8_odd_scale', I8, 0.0123, 5, [3, 40], 13,
       x=np.concatenate([ties([3, 20], 0.0123, 3), f32([3, 20], 4, -3, 3)], axis=1))
q_case('quantize_u8_saturate', U8, 0.02, 10, [2, 50], 13, x=f32([2, 50], 5, -10, 10))
q_case('quantize_i8_per_axis', I8, [0.1, 0.02, 0.3], [0, 5, -7], [2, 3, 4, 5], 13, axis=1,
       x=f32([2, 3, 4, 5], 6, -20, 20))
q_case('quantize_u8_per_axis_last', U8, [0.05, 0.01, 0.2, 0.07], [128, 0, 255, 17], [3, 4], 13,
       axis=-1, x=f32([3, 4], 8, -5, 5))
q_case('quantize_u8_no_zero_point_opset19', U8, 0.03, 0, [5, 7], 19, with_zp=False,
       x=f32([5, 7], 9, -1, 8))
q_case('quantize_i8_opset21', I8, 0.07, -20, [6, 6], 21, x=ties([6, 6], 0.07, 10))


def dq_case(name, dtype, scale, zp, shape, opset, axis=None, x=None):
    zp_arr = np.asarray(zp, NP[dtype] if dtype != I32 else np.int32)
    s_arr = np.asarray(scale, np.float32)
    attrs = {} if axis is None else {'axis': axis}
    node = helper.make_node('DequantizeLinear', ['x', 's', 'z'], ['y'], **attrs)
    x = ints(shape, NP[dtype], seed=len(CASES)) if x is None else x
    a = 1 if axis is None else axis % len(shape)
    case(name, model([node], [('x', dtype, shape)], [('y', F, shape)], opset,
                     [('s', s_arr), ('z', zp_arr)]), [x],
         lambda x: [dequantize(x, s_arr, zp_arr, a)])


dq_case('dequantize_u8', U8, 0.0173, 131, [3, 17], 13)
dq_case('dequantize_i8_opset10', I8, 0.25, -9, [2, 30], 10)
dq_case('dequantize_i8_per_axis', I8, [0.5, 0.01, 0.003], [1, -2, 100], [2, 3, 5], 13, axis=1)
dq_case('dequantize_u8_per_axis_opset21', U8, [0.1, 0.2], [0, 255], [4, 2], 21, axis=1)
dq_case('dequantize_i32', I32, 0.001, 0, [3, 8], 19,
        x=rng(3).integers(-10**6, 10**6, [3, 8]).astype(np.int32))

# int8 graph input and output, data movement on int8, DequantizeLinear.
_rt_s, _rt_z = np.float32(0.031), np.int8(-4)
case('int8_io_transpose_reshape',
     model([helper.make_node('Transpose', ['x'], ['t'], perm=[1, 0]),
            helper.make_node('Reshape', ['t', 'shape'], ['r']),
            helper.make_node('DequantizeLinear', ['r', 's', 'z'], ['y']),
            helper.make_node('Identity', ['r'], ['q'])],
           [('x', I8, [4, 6])], [('y', F, [2, 12]), ('q', I8, [2, 12])], 13,
           [('shape', np.array([2, 12], np.int64)), ('s', _rt_s), ('z', _rt_z)]),
     [ints([4, 6], np.int8, 11)],
     lambda x: [dequantize(x.T.reshape(2, 12), _rt_s, _rt_z), x.T.reshape(2, 12)])


def dyn_case(name, x):
    node = helper.make_node('DynamicQuantizeLinear', ['x'], ['y', 's', 'z'])
    case(name, model([node], [('x', F, list(x.shape))],
                     [('y', U8, list(x.shape)), ('s', F, []), ('z', U8, [])], 11), [x],
         lambda x: list(dynamic_quantize(x)))


dyn_case('dynamicquantize_random', f32([3, 50], 12, -3, 5))
dyn_case('dynamicquantize_positive', f32([2, 3, 7], 13, 0.5, 9))
dyn_case('dynamicquantize_negative', f32([40], 14, -6, -0.1))
dyn_case('dynamicquantize_ties', np.array([0, 2, -3, -2.5, 1.34, 0.5, -1.5, 1.0, 0.25],
                                          np.float32))
dyn_case('dynamicquantize_zeros', np.zeros([2, 5], np.float32))


def qconv_case(name, xt, wt, yt, xshape, wshape, xs, zx, ws, zw, ys, zy, bias=False,
               w_input=False, **attrs):
    m_out = wshape[0]
    w = ints(wshape, NP[wt], seed=len(CASES) + 100)
    b = rng(len(CASES)).integers(-2000, 2000, [m_out]).astype(np.int32) if bias else None
    ws_arr = np.asarray(ws, np.float32)
    zw_arr = np.asarray(zw, NP[wt])
    inits = [('xs', np.float32(xs)), ('xz', NP[xt](zx)), ('ws', ws_arr), ('wz', zw_arr),
             ('ys', np.float32(ys)), ('yz', NP[yt](zy))]
    inputs = [('x', xt, xshape)]
    feeds = [ints(xshape, NP[xt], seed=len(CASES) + 200)]
    if w_input:
        inputs.append(('w', wt, wshape))
        feeds.append(w)
    else:
        inits.append(('w', w))
    if bias:
        inits.append(('b', b))
    node = helper.make_node('QLinearConv', ['x', 'xs', 'xz', 'w', 'ws', 'wz', 'ys', 'yz'] +
                            (['b'] if bias else []), ['y'], **attrs)
    pads = attrs.get('pads', [0, 0, 0, 0])
    strides = attrs.get('strides', [1, 1])
    dil = attrs.get('dilations', [1, 1])
    group = attrs.get('group', 1)

    def ref(x, *rest):
        acc = conv_acc(x, w, zx, zw_arr, pads, strides, dil, group)
        if bias:
            acc = acc + b.reshape(1, -1, 1, 1)
        return [requantize(acc, xs, ws_arr, ys, zy, NP[yt], 1)]
    oh = (xshape[2] + pads[0] + pads[2] - ((wshape[2] - 1) * dil[0] + 1)) // strides[0] + 1
    ow = (xshape[3] + pads[1] + pads[3] - ((wshape[3] - 1) * dil[1] + 1)) // strides[1] + 1
    case(name, model([node], inputs, [('y', yt, [xshape[0], m_out, oh, ow])], 13, inits), feeds,
         ref)


qconv_case('qlinearconv_u8_pads', U8, U8, U8, [1, 3, 7, 7], [4, 3, 3, 3], 0.02, 120, 0.01, 128,
           0.05, 100, pads=[1, 1, 1, 1])
qconv_case('qlinearconv_u8_asym_weights', U8, U8, U8, [1, 2, 6, 5], [3, 2, 2, 3], 0.013, 7,
           0.021, 101, 0.17, 3, bias=True, strides=[2, 1], pads=[1, 0, 0, 2])
qconv_case('qlinearconv_i8_per_channel_bias', I8, I8, I8, [2, 4, 6, 6], [5, 4, 3, 3], 0.05, -3,
           [0.01, 0.02, 0.005, 0.03, 0.011], 0, 0.4, -10, bias=True, pads=[0, 1, 2, 1],
           strides=[1, 2])
qconv_case('qlinearconv_u8_i8_depthwise', U8, I8, U8, [1, 4, 8, 8], [8, 1, 3, 3], 0.03, 128,
           [0.01] * 4 + [0.02] * 4, 0, 0.08, 128, bias=True, group=4, pads=[1, 1, 1, 1],
           dilations=[2, 2])
qconv_case('qlinearconv_i8_grouped', I8, I8, I8, [1, 4, 5, 5], [6, 2, 1, 3], 0.1, 2, 0.02, 0,
           0.3, 0, group=2, pads=[0, 1, 0, 1])
qconv_case('qlinearconv_u8_weights_input', U8, U8, U8, [1, 2, 5, 5], [3, 2, 3, 3], 0.02, 10,
           0.01, 130, 0.09, 20, w_input=True, pads=[1, 1, 1, 1])


def qmatmul_case(name, at, bt, yt, ashape, bshape, sa, za, sb, zb, sy, zy, b_input=False):
    b = ints(bshape, NP[bt], seed=len(CASES) + 300)
    sb_arr = np.asarray(sb, np.float32)
    inits = [('sa', np.float32(sa)), ('za', NP[at](za)), ('sb', sb_arr), ('zb', NP[bt](zb)),
             ('sy', np.float32(sy)), ('zy', NP[yt](zy))]
    inputs = [('a', at, ashape)]
    feeds = [ints(ashape, NP[at], seed=len(CASES) + 400)]
    if b_input:
        inputs.append(('b', bt, bshape))
        feeds.append(b)
    else:
        inits.append(('b', b))
    node = helper.make_node('QLinearMatMul', ['a', 'sa', 'za', 'b', 'sb', 'zb', 'sy', 'zy'], ['y'])
    out = list(np.matmul(np.zeros(ashape), np.zeros(bshape)).shape)
    case(name, model([node], inputs, [('y', yt, out)], 13, inits), feeds,
         lambda a, *r: [requantize(matmul_acc(a, b, za, zb), sa, sb_arr, sy, zy, NP[yt],
                                   len(out) - 1)])


qmatmul_case('qlinearmatmul_u8_2d', U8, U8, U8, [5, 16], [16, 7], 0.02, 113, 0.01, 114, 0.3, 118)
qmatmul_case('qlinearmatmul_i8_3d_per_column', I8, I8, I8, [2, 3, 20], [20, 4], 0.05, 1,
             [0.01, 0.02, 0.005, 0.04], 0, 0.5, -1)
qmatmul_case('qlinearmatmul_u8_batched_input', U8, U8, U8, [2, 4, 9], [2, 9, 3], 0.03, 5,
             0.02, 200, 0.4, 60, b_input=True)


# ConvInteger / MatMulInteger, with the input zero point a graph input
# (computed at run time, as DynamicQuantizeLinear's is in dynamic models).
def convint_case(name, xt, wt, xshape, wshape, zx, zw, zx_input=False, **attrs):
    w = ints(wshape, NP[wt], seed=len(CASES) + 500)
    inits = [('w', w), ('wz', NP[wt](zw))]
    inputs = [('x', xt, xshape)]
    feeds = [ints(xshape, NP[xt], seed=len(CASES) + 600)]
    if zx_input:
        inputs.append(('xz', xt, []))
        feeds.append(np.asarray(zx, NP[xt]))
    else:
        inits.append(('xz', NP[xt](zx)))
    node = helper.make_node('ConvInteger', ['x', 'w', 'xz', 'wz'], ['y'], **attrs)
    pads = attrs.get('pads', [0, 0, 0, 0])
    strides = attrs.get('strides', [1, 1])
    out = conv_acc(feeds[0], w, zx, zw, pads, strides)
    case(name, model([node], inputs, [('y', I32, list(out.shape))], 10, inits), feeds,
         lambda x, *r: [conv_acc(x, w, zx, zw, pads, strides).astype(np.int32)])


convint_case('convinteger_u8_pads', U8, U8, [1, 3, 6, 6], [2, 3, 3, 3], 90, 128,
             pads=[1, 2, 0, 1])
convint_case('convinteger_u8_runtime_zero_point', U8, I8, [1, 2, 5, 7], [3, 2, 3, 2], 37, 0,
             zx_input=True, pads=[1, 1, 1, 1], strides=[2, 2])


def matint_case(name, at, bt, ashape, bshape, za, zb, za_input=False):
    b = ints(bshape, NP[bt], seed=len(CASES) + 700)
    inits = [('b', b), ('zb', NP[bt](zb))]
    inputs = [('a', at, ashape)]
    feeds = [ints(ashape, NP[at], seed=len(CASES) + 800)]
    if za_input:
        inputs.append(('za', at, []))
        feeds.append(np.asarray(za, NP[at]))
    else:
        inits.append(('za', NP[at](za)))
    node = helper.make_node('MatMulInteger', ['a', 'b', 'za', 'zb'], ['y'])
    out = list(np.matmul(np.zeros(ashape), np.zeros(bshape)).shape)
    case(name, model([node], inputs, [('y', I32, out)], 10, inits), feeds,
         lambda a, *r: [matmul_acc(a, b, za, zb).astype(np.int32)])


matint_case('matmulinteger_u8_i8', U8, I8, [3, 4, 10], [10, 6], 130, 0)
matint_case('matmulinteger_u8_runtime_zero_point', U8, U8, [7, 12], [12, 5], 200, 3,
            za_input=True)


# ONNX Runtime's dynamic quantization of a MatMul and a Conv (what
# onnxruntime.quantization.quantize_dynamic writes): DynamicQuantizeLinear,
# MatMulInteger / ConvInteger, Cast, Mul by x_scale * w_scale.
def dynamic_matmul():
    w = ints([24, 8], np.int8, 900)
    ws = np.float32(0.013)
    nodes = [helper.make_node('DynamicQuantizeLinear', ['x'], ['xq', 'xs', 'xz']),
             helper.make_node('MatMulInteger', ['xq', 'w', 'xz', 'wz'], ['acc']),
             helper.make_node('Cast', ['acc'], ['accf'], to=F),
             helper.make_node('Mul', ['xs', 'ws'], ['s']),
             helper.make_node('Mul', ['accf', 's'], ['y'])]
    m = model(nodes, [('x', F, [4, 24])], [('y', F, [4, 8])], 13,
              [('w', w), ('wz', np.int8(0)), ('ws', ws)])

    def ref(x):
        xq, xs, xz = dynamic_quantize(x)
        acc = matmul_acc(xq, w, xz, 0).astype(np.float32)
        return [acc * (xs * ws)]
    case('dynamic_matmul', m, [f32([4, 24], 15, -4, 3)], ref, exact_float=False)


def dynamic_conv():
    w = ints([4, 3, 3, 3], np.uint8, 901)
    ws = np.float32(0.007)
    nodes = [helper.make_node('DynamicQuantizeLinear', ['x'], ['xq', 'xs', 'xz']),
             helper.make_node('ConvInteger', ['xq', 'w', 'xz', 'wz'], ['acc'], pads=[1, 1, 1, 1]),
             helper.make_node('Cast', ['acc'], ['accf'], to=F),
             helper.make_node('Mul', ['xs', 'ws'], ['s']),
             helper.make_node('Mul', ['accf', 's'], ['y'])]
    m = model(nodes, [('x', F, [1, 3, 6, 6])], [('y', F, [1, 4, 6, 6])], 13,
              [('w', w), ('wz', np.uint8(121)), ('ws', ws)])

    def ref(x):
        xq, xs, xz = dynamic_quantize(x)
        acc = conv_acc(xq, w, xz, 121, (1, 1, 1, 1)).astype(np.float32)
        return [acc * (xs * ws)]
    case('dynamic_conv', m, [f32([1, 3, 6, 6], 16, -1, 2)], ref, exact_float=False)


dynamic_matmul()
dynamic_conv()


# QDQ models (what onnxruntime.quantization.quantize_static writes): the
# groups ONNX Runtime fuses, which Kiln fuses too.
def qdq_conv(relu, name, xt=U8, yt=U8, zy=0):
    w = ints([4, 3, 3, 3], np.int8, 902)
    ws = np.array([0.01, 0.02, 0.015, 0.004], np.float32)
    xs, zx, ys = np.float32(0.02), NP[xt](128 if xt == U8 else 0), np.float32(0.05)
    b = rng(5).integers(-500, 500, [4]).astype(np.int32)
    nodes = [helper.make_node('DequantizeLinear', ['x', 'xs', 'xz'], ['xf']),
             helper.make_node('DequantizeLinear', ['w', 'ws', 'wz'], ['wf'], axis=0),
             helper.make_node('DequantizeLinear', ['b', 'bs', 'bz'], ['bf'], axis=0),
             helper.make_node('Conv', ['xf', 'wf', 'bf'], ['c'], pads=[1, 1, 1, 1])]
    last = 'c'
    if relu:
        nodes.append(helper.make_node('Relu', ['c'], ['r']))
        last = 'r'
    nodes.append(helper.make_node('QuantizeLinear', [last, 'ys', 'yz'], ['y']))
    inits = [('w', w), ('ws', ws), ('wz', np.zeros(4, np.int8)), ('xs', xs), ('xz', zx),
             ('b', b), ('bs', (xs * ws).astype(np.float32)), ('bz', np.zeros(4, np.int32)),
             ('ys', ys), ('yz', NP[yt](zy))]
    m = model(nodes, [('x', xt, [1, 3, 6, 6])], [('y', yt, [1, 4, 6, 6])], 13, inits)

    def ref(x):
        acc = conv_acc(x, w, zx, 0, (1, 1, 1, 1)) + b.reshape(1, -1, 1, 1)
        return [requantize(np.maximum(acc, 0) if relu else acc, xs, ws, ys, zy, NP[yt], 1)]
    case(name, m, [ints([1, 3, 6, 6], NP[xt], 17)], ref)
    return m


def qdq_matmul(name):
    w = ints([16, 6], np.int8, 903)
    sa, za, sb, sy, zy = np.float32(0.04), np.int8(3), np.float32(0.02), np.float32(0.3), np.int8(-5)
    nodes = [helper.make_node('DequantizeLinear', ['a', 'sa', 'za'], ['af']),
             helper.make_node('DequantizeLinear', ['w', 'sb', 'zb'], ['wf']),
             helper.make_node('MatMul', ['af', 'wf'], ['c']),
             helper.make_node('QuantizeLinear', ['c', 'sy', 'zy'], ['q']),
             helper.make_node('Reshape', ['q', 'shape'], ['rq']),
             helper.make_node('DequantizeLinear', ['rq', 'sy', 'zy'], ['rf']),
             helper.make_node('Transpose', ['rf'], ['tf'], perm=[1, 0]),
             helper.make_node('QuantizeLinear', ['tf', 'sy', 'zy'], ['y'])]
    inits = [('w', w), ('sa', sa), ('za', za), ('sb', sb), ('zb', np.int8(0)), ('sy', sy),
             ('zy', zy), ('shape', np.array([6, 5], np.int64))]
    m = model(nodes, [('a', I8, [5, 16])], [('y', I8, [5, 6])], 13, inits)
    case(name, m, [ints([5, 16], np.int8, 18)],
         lambda a: [requantize(matmul_acc(a, w, za, 0), sa, sb, sy, zy, np.int8, 1)
                    .reshape(6, 5).T])
    return m


def qdq_gemm(name):
    w = ints([6, 16], np.int8, 904)  # [N, K], transB = 1
    ws = np.array([0.01, 0.02, 0.005, 0.03, 0.015, 0.008], np.float32)
    sa, za, sy, zy = np.float32(0.05), np.uint8(120), np.float32(0.2), np.uint8(128)
    c = rng(6).integers(-3000, 3000, [6]).astype(np.int32)
    nodes = [helper.make_node('DequantizeLinear', ['a', 'sa', 'za'], ['af']),
             helper.make_node('DequantizeLinear', ['w', 'ws', 'wz'], ['wf'], axis=0),
             helper.make_node('DequantizeLinear', ['c', 'cs', 'cz'], ['cf'], axis=0),
             helper.make_node('Gemm', ['af', 'wf', 'cf'], ['g'], transB=1),
             helper.make_node('QuantizeLinear', ['g', 'sy', 'zy'], ['y'])]
    inits = [('w', w), ('ws', ws), ('wz', np.zeros(6, np.int8)), ('sa', sa), ('za', za),
             ('c', c), ('cs', (sa * ws).astype(np.float32)), ('cz', np.zeros(6, np.int32)),
             ('sy', sy), ('zy', zy)]
    m = model(nodes, [('a', U8, [3, 16])], [('y', U8, [3, 6])], 13, inits)
    case(name, m, [ints([3, 16], np.uint8, 19)],
         lambda a: [requantize(matmul_acc(a, w.T, za, 0) + c, sa, ws, sy, zy, np.uint8, 1)])
    return m


def qdq_concat(name):
    s_, z_ = np.float32(0.04), np.int8(-2)
    nodes = [helper.make_node('DequantizeLinear', ['a', 's', 'z'], ['af']),
             helper.make_node('DequantizeLinear', ['b', 's', 'z'], ['bf']),
             helper.make_node('Concat', ['af', 'bf'], ['c'], axis=1),
             helper.make_node('QuantizeLinear', ['c', 's', 'z'], ['y'])]
    m = model(nodes, [('a', I8, [2, 3, 4]), ('b', I8, [2, 5, 4])], [('y', I8, [2, 8, 4])], 13,
              [('s', s_), ('z', z_)])
    case(name, m, [ints([2, 3, 4], np.int8, 20), ints([2, 5, 4], np.int8, 21)],
         lambda a, b: [np.concatenate([a, b], axis=1)])
    return m


# --- QDQ Add / Mul / LeakyRelu / Sigmoid: ORT's QLinear contrib kernels ----------
#
# ONNX Runtime 1.30 rewrites these groups into com.microsoft QLinearAdd,
# QLinearMul, QLinearLeakyRelu and QLinearSigmoid, whose arithmetic is not
# the float path's (MLAS qladd_avx2.cpp, qlmul.cpp, qlinear_lookup_table.cc);
# the references below follow those kernels. FLOAT_PATH holds the unfused
# float path (DQ, float op, Q) for the count of elements where it differs.
FLOAT_PATH = {}


def fma32(a, b, c):
    """float32 fma: the product and sum exact in float64, one rounding."""
    return (np.float64(a) * np.float64(b) + np.float64(c)).astype(np.float32)


def saturate_round(v, dtype):
    lo, hi = RANGE[dtype]
    v = v.astype(np.float64)
    out = np.clip(np.rint(np.where(np.abs(v) < 2.0**31, v, lo)), lo, hi)
    return out.astype(dtype)


def broadcast_loop(sa, sb):
    """ORT's BroadcastLooper: 0 input 0 scalar per span, 1 input 1, 2 neither."""
    r = max(len(sa), len(sb))
    sa, sb = [1] * (r - len(sa)) + list(sa), [1] * (r - len(sb)) + list(sb)
    for x, y in zip(reversed(sa), reversed(sb)):
        out = max(x, y)
        if out != 1:
            return 2 if x == out and y == out else (1 if x == out else 0)
    return 0


def ort_qlinear_add(a, b, pa, pb, pc, dtype):
    """MlasQLinearAddKernelAvx2Helper as ORT's GCC build contracts it:
    fixed = zC - fma(rA, zA, rB zB), fma(a, rA, fma(b, rB, fixed)) (with B
    a scalar per span too); input 0 scalar swaps the operands."""
    loop = broadcast_loop(a.shape, b.shape)
    (x, (sx, zx)), (y, (sy, zy)) = ((b, pb), (a, pa)) if loop == 0 else ((a, pa), (b, pb))
    sc, zc = np.float32(pc[0]), np.float32(pc[1])
    rx, ry = np.float32(np.float32(sx) / sc), np.float32(np.float32(sy) / sc)
    fixed = np.float32(zc - fma32(rx, np.float32(zx), np.float32(ry * np.float32(zy))))
    x, y = np.broadcast_arrays(x.astype(np.float32), y.astype(np.float32))
    return saturate_round(fma32(x, rx, fma32(y, ry, fixed)), dtype)


def ort_qlinear_mul(a, b, pa, pb, pc, dtype):
    """MlasQLinearMulKernel (SSE2): float((a - zA)(b - zB)) * (sA sB / sC) + zC."""
    prod = (a.astype(np.int32) - int(pa[1])) * (b.astype(np.int32) - int(pb[1]))
    ratio = np.float32(np.float32(np.float32(pa[0]) * np.float32(pb[0])) / np.float32(pc[0]))
    t = (prod.astype(np.float32) * ratio).astype(np.float32)
    return saturate_round((t + np.float32(pc[1])).astype(np.float32), dtype)


def mlas_logistic(x):
    """MlasLogisticKernelFma3: Horner with fused multiply-adds."""
    x = np.clip(x, np.float32(-18), np.float32(18)).astype(np.float32)
    x2 = (x * x).astype(np.float32)
    p = fma32(x2, np.float32(4.37031012579801e-11), np.float32(1.15627324459942e-07))
    for c in (6.08574864600143e-05, 8.51377133304701e-03, 2.48287947061529e-01):
        p = fma32(x2, p, np.float32(c))
    q = fma32(x2, np.float32(6.10247389755681e-13), np.float32(5.76102136993427e-09))
    for c in (6.29106785017040e-06, 1.70198817374094e-03, 1.16817656904453e-01,
              9.93151921023180e-01):
        q = fma32(x2, q, np.float32(c))
    r = ((x * p).astype(np.float32) / q).astype(np.float32) + np.float32(0.5)
    return np.clip(r, np.float32(0), np.float32(1)).astype(np.float32)


def ort_lookup(x, px, py, dtype, fn):
    """QlinearBuildLookupTable: xs * (x - zp) in float, fn, MlasQuantizeLinear."""
    d = (np.float32(px[0]) * (x.astype(np.int32) - int(px[1])).astype(np.float32)).astype(
        np.float32)
    return quantize(fn(d), py[0], NP_ZP(py[1], dtype), dtype)


def NP_ZP(z, dtype):
    return np.asarray(z, dtype)


def qdq_binary(name, op, dtype, ashape, bshape, pa, pb, pc, a_type=None):
    """DQ(a), DQ(b) -> Add/Mul -> Q; a_type other than dtype: not fused."""
    at = a_type or dtype
    nodes = [helper.make_node('DequantizeLinear', ['a', 'sa', 'za'], ['af']),
             helper.make_node('DequantizeLinear', ['b', 'sb', 'zb'], ['bf']),
             helper.make_node(op, ['af', 'bf'], ['c']),
             helper.make_node('QuantizeLinear', ['c', 'sc', 'zc'], ['y'])]
    inits = [('sa', np.float32(pa[0])), ('za', NP[at](pa[1])), ('sb', np.float32(pb[0])),
             ('zb', NP[dtype](pb[1])), ('sc', np.float32(pc[0])), ('zc', NP[dtype](pc[1]))]
    oshape = list(np.broadcast_shapes(tuple(ashape), tuple(bshape)))
    m = model(nodes, [('a', at, ashape), ('b', dtype, bshape)], [('y', dtype, oshape)], 13,
              inits)
    seed = 700 + len(CASES)
    xs = [ints(ashape, NP[at], seed), ints(bshape, NP[dtype], seed + 1)]

    def float_path(a, b):
        af, bf = dequantize(a, pa[0], NP[at](pa[1])), dequantize(b, pb[0], NP[dtype](pb[1]))
        c = (af + bf) if op == 'Add' else (af * bf)
        return quantize(c.astype(np.float32), pc[0], NP[dtype](pc[1]), NP[dtype])
    if a_type:
        ref = lambda a, b: [float_path(a, b)]
    else:
        kernel = ort_qlinear_add if op == 'Add' else ort_qlinear_mul
        ref = lambda a, b: [kernel(a, b, pa, pb, pc, NP[dtype])]
        FLOAT_PATH[name] = float_path
    case(name, m, xs, ref)
    return m


def qdq_unary(name, op, dtype, px, py, **attrs):
    """DQ(x) -> LeakyRelu/Sigmoid -> Q over all 256 input values."""
    nodes = [helper.make_node('DequantizeLinear', ['x', 'sx', 'zx'], ['xf']),
             helper.make_node(op, ['xf'], ['c'], **attrs),
             helper.make_node('QuantizeLinear', ['c', 'sy', 'zy'], ['y'])]
    inits = [('sx', np.float32(px[0])), ('zx', NP[dtype](px[1])), ('sy', np.float32(py[0])),
             ('zy', NP[dtype](py[1]))]
    m = model(nodes, [('x', dtype, [2, 128])], [('y', dtype, [2, 128])], 13, inits)
    lo, hi = RANGE[NP[dtype]]
    x = rng(len(CASES)).permutation(np.arange(lo, hi + 1)).astype(NP[dtype]).reshape(2, 128)
    alpha = np.float32(attrs.get('alpha', 0.01))
    if op == 'Sigmoid':
        fn = mlas_logistic
        flt = lambda d: (1 / (1 + np.exp(-d.astype(np.float64)))).astype(np.float32)
    else:
        fn = flt = lambda d: np.where(d >= 0, d, (alpha * d).astype(np.float32))
    case(name, m, [x], lambda x: [ort_lookup(x, px, py, NP[dtype], fn)])
    FLOAT_PATH[name] = lambda x: ort_lookup(x, px, py, NP[dtype], flt)
    return m


FUSED_ELEMENTWISE = {
    'qdq_add_u8': qdq_binary('qdq_add_u8', 'Add', U8, [2, 4, 16, 16], [2, 4, 16, 16],
                             (0.05, 128), (0.031, 100), (0.07, 120)),
    'qdq_add_i8_broadcast_channel': qdq_binary(
        'qdq_add_i8_broadcast_channel', 'Add', I8, [2, 3, 4, 5], [1, 3, 1, 1],
        (0.043, -3), (0.02, 7), (0.05, 2)),
    'qdq_add_u8_scalar_a': qdq_binary('qdq_add_u8_scalar_a', 'Add', U8, [1], [3, 20],
                                      (0.11, 30), (0.017, 140), (0.023, 131)),
    'qdq_add_i8_row': qdq_binary('qdq_add_i8_row', 'Add', I8, [6, 9], [9],
                                 (0.0123, 0), (0.0456, -20), (0.033, -5)),
    'qdq_mul_u8': qdq_binary('qdq_mul_u8', 'Mul', U8, [8, 128], [8, 128],
                             (0.02, 128), (0.03, 110), (0.15, 60)),
    'qdq_mul_i8_broadcast_channel': qdq_binary(
        'qdq_mul_i8_broadcast_channel', 'Mul', I8, [2, 3, 4, 4], [1, 3, 1, 1],
        (0.025, 4), (0.01, -9), (0.008, -1)),
    'qdq_leakyrelu_i8': qdq_unary('qdq_leakyrelu_i8', 'LeakyRelu', I8, (0.05, -10),
                                  (0.031, 20), alpha=0.13),
    'qdq_leakyrelu_u8': qdq_unary('qdq_leakyrelu_u8', 'LeakyRelu', U8, (0.02, 140),
                                  (0.015, 100)),
    'qdq_sigmoid_i8': qdq_unary('qdq_sigmoid_i8', 'Sigmoid', I8, (0.07, 3), (1 / 256, -128)),
    'qdq_sigmoid_u8': qdq_unary('qdq_sigmoid_u8', 'Sigmoid', U8, (0.03, 128), (0.0039, 0)),
}
def maxpool2d(x, k, s, pads):
    """MaxPool of an NCHW array: pads (top, left, bottom, right) never win."""
    lo = np.iinfo(np.int64).min if np.issubdtype(x.dtype, np.integer) else -np.inf
    big = x.astype(np.int64 if np.issubdtype(x.dtype, np.integer) else np.float64)
    big = np.pad(big, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])),
                 constant_values=lo)
    oh = (big.shape[2] - k) // s + 1
    ow = (big.shape[3] - k) // s + 1
    out = np.full(x.shape[:2] + (oh, ow), lo, big.dtype)
    for i in range(k):
        for j in range(k):
            out = np.maximum(out, big[:, :, i:i + s * oh:s, j:j + s * ow:s])
    return out.astype(x.dtype)


def qdq_maxpool(name, dtype, px, py):
    """DQ -> MaxPool (3x3, stride 2, pads 1) -> Q: the pair dropped when the
    parameters agree (ORT's DropQDQNodes), else float MaxPool and Q."""
    nodes = [helper.make_node('DequantizeLinear', ['x', 'sx', 'zx'], ['xf']),
             helper.make_node('MaxPool', ['xf'], ['p'], kernel_shape=[3, 3], strides=[2, 2],
                              pads=[1, 1, 1, 1]),
             helper.make_node('QuantizeLinear', ['p', 'sy', 'zy'], ['y'])]
    inits = [('sx', np.float32(px[0])), ('zx', NP[dtype](px[1])), ('sy', np.float32(py[0])),
             ('zy', NP[dtype](py[1]))]
    m = model(nodes, [('x', dtype, [1, 3, 9, 9])], [('y', dtype, [1, 3, 5, 5])], 13, inits)
    x = ints([1, 3, 9, 9], NP[dtype], 800 + len(CASES))
    case(name, m, [x], lambda x: [quantize(
        maxpool2d(dequantize(x, px[0], NP[dtype](px[1])), 3, 2, (1, 1, 1, 1)), py[0],
        NP[dtype](py[1]), NP[dtype])])
    return m


FUSED_ELEMENTWISE['qdq_maxpool_u8'] = qdq_maxpool('qdq_maxpool_u8', U8, (0.02, 128), (0.02, 128))
FUSED_ELEMENTWISE['qdq_maxpool_i8'] = qdq_maxpool('qdq_maxpool_i8', I8, (0.05, -3), (0.05, -3))
# Other output parameters: ORT keeps DQ, MaxPool, Q; so does Kiln (float).
MAXPOOL_RESCALED = qdq_maxpool('qdq_maxpool_i8_rescaled_unfused', I8, (0.05, -3), (0.08, 4))


def qdq_global_average_pool(name, dtype, shape, px, py):
    """DQ -> GlobalAveragePool -> Q => QLinearGlobalAveragePool: the int32
    sum of x - zX, times sX / (sY * float(image)) in float, rounded to even
    (MlasQLinearGlobalAveragePoolNchw, MlasRequantizeOutput)."""
    nodes = [helper.make_node('DequantizeLinear', ['x', 'sx', 'zx'], ['xf']),
             helper.make_node('GlobalAveragePool', ['xf'], ['p']),
             helper.make_node('QuantizeLinear', ['p', 'sy', 'zy'], ['y'])]
    inits = [('sx', np.float32(px[0])), ('zx', NP[dtype](px[1])), ('sy', np.float32(py[0])),
             ('zy', NP[dtype](py[1]))]
    oshape = shape[:2] + [1] * (len(shape) - 2)
    m = model(nodes, [('x', dtype, shape)], [('y', dtype, oshape)], 13, inits)
    image = int(np.prod(shape[2:]))
    axes = tuple(range(2, len(shape)))

    def ref(x):
        acc = (x.astype(np.int64) - int(px[1])).sum(axis=axes, keepdims=True)
        scale = np.float32(np.float32(px[0]) / np.float32(np.float32(py[0]) * np.float32(image)))
        v = (acc.astype(np.float32) * scale).astype(np.float32)
        lo, hi = RANGE[NP[dtype]]
        return [np.clip(np.rint(v) + int(py[1]), lo, hi).astype(NP[dtype])]

    def float_path(x):
        mean = dequantize(x, px[0], NP[dtype](px[1])).mean(axis=axes, keepdims=True,
                                                            dtype=np.float32)
        return quantize(mean, py[0], NP[dtype](py[1]), NP[dtype])
    case(name, m, [ints(shape, NP[dtype], 850 + len(CASES))], ref)
    FLOAT_PATH[name] = float_path
    return m


FUSED_ELEMENTWISE['qdq_globalaveragepool_u8'] = qdq_global_average_pool(
    'qdq_globalaveragepool_u8', U8, [4, 64, 7, 7], (0.02, 128), (0.004, 120))
FUSED_ELEMENTWISE['qdq_globalaveragepool_i8'] = qdq_global_average_pool(
    'qdq_globalaveragepool_i8', I8, [1, 24, 6, 6], (0.05, -3), (0.0031, 5))


def ort_qlinear_softmax(x, px, py, dtype, axis):
    """QlinearSoftmaxCPU (opset 13, `axis`): v = E[x - max + 255] of the
    float table, the row's float sum first to last, nearbyint(float(v *
    floor(1 / sY)) / sum) + zY, at most 255, int8 the low byte."""
    d = x.shape[axis]
    shift = np.log(np.float64(np.float32(np.finfo(np.float32).max) / np.float32(d)))
    shift = max(0.0, shift - 5.0) / np.float64(np.float32(px[0]))
    table = np.exp((np.arange(256, dtype=np.float64) - 255 + shift) *
                   np.float64(np.float32(px[0]))).astype(np.float32)
    xt = np.moveaxis(x.astype(np.int32), axis, -1)
    v = table[xt - xt.max(axis=-1, keepdims=True) + 255]
    s = v[..., :1].copy()
    for j in range(1, d):
        s = (s + v[..., j:j + 1]).astype(np.float32)
    c = np.float32(np.floor(np.float32(1) / np.float32(py[0])))
    q = np.rint(((v * c).astype(np.float32) / s).astype(np.float32)).astype(np.int64)
    vq = np.minimum(q + int(py[1]), 255)
    y = (vq & 0xFF).astype(np.uint8)
    return np.moveaxis(y.view(np.int8) if dtype == np.int8 else y, -1, axis)


def qdq_softmax(name, dtype, shape, axis, px, py):
    """DQ -> Softmax -> Q => QLinearSoftmax (opset 13)."""
    nodes = [helper.make_node('DequantizeLinear', ['x', 'sx', 'zx'], ['xf']),
             helper.make_node('Softmax', ['xf'], ['p'], axis=axis),
             helper.make_node('QuantizeLinear', ['p', 'sy', 'zy'], ['y'])]
    inits = [('sx', np.float32(px[0])), ('zx', NP[dtype](px[1])), ('sy', np.float32(py[0])),
             ('zy', NP[dtype](py[1]))]
    m = model(nodes, [('x', dtype, shape)], [('y', dtype, shape)], 13, inits)

    def float_path(x):
        f = dequantize(x, px[0], NP[dtype](px[1])).astype(np.float64)
        e = np.exp(f - f.max(axis=axis, keepdims=True))
        return quantize((e / e.sum(axis=axis, keepdims=True)).astype(np.float32), py[0],
                        NP[dtype](py[1]), NP[dtype])
    case(name, m, [ints(shape, NP[dtype], 870 + len(CASES))],
         lambda x: [ort_qlinear_softmax(x, px, py, NP[dtype], axis % len(shape))])
    FLOAT_PATH[name] = float_path
    return m


# ORT's QLinearSoftmax computes in float itself (a float exp table, float
# sums): bit-exact cases, not among the integer-only ones.
qdq_softmax('qdq_softmax_u8', U8, [8, 16], -1, (0.05, 128), (0.0039, 0))
qdq_softmax('qdq_softmax_i8_axis1', I8, [2, 10, 3], 1, (0.08, 2), (0.0041, -128))


def qdq_resize_nearest(name, dtype, zp):
    """DQ -> Resize (nearest, x2) -> Q with one scale and zero point: ORT
    drops the pair and resizes the 8-bit values; Kiln keeps DQ, float
    Resize, Q, which gives the same values (each element one dequantization
    and its exact requantization)."""
    nodes = [helper.make_node('DequantizeLinear', ['x', 's', 'z'], ['xf']),
             helper.make_node('Resize', ['xf', '', 'sc'], ['r'], mode='nearest'),
             helper.make_node('QuantizeLinear', ['r', 's', 'z'], ['y'])]
    inits = [('s', np.float32(0.03)), ('z', NP[dtype](zp)),
             ('sc', np.array([1, 1, 2, 2], np.float32))]
    m = model(nodes, [('x', dtype, [1, 2, 5, 5])], [('y', dtype, [1, 2, 10, 10])], 13, inits)
    case(name, m, [ints([1, 2, 5, 5], NP[dtype], 880 + len(CASES))],
         lambda x: [np.repeat(np.repeat(x, 2, axis=2), 2, axis=3)])


qdq_resize_nearest('qdq_resize_nearest_u8', U8, 128)
qdq_resize_nearest('qdq_resize_nearest_i8', I8, -3)


# A and B of different types: ORT's BinarySelector refuses the group, both
# compute DQ, float Add, Q (one float rounding: exact).
MIXED_ADD = qdq_binary('qdq_add_mixed_types_unfused', 'Add', I8, [4, 8], [4, 8],
                       (0.05, 3), (0.04, -2), (0.06, 0), a_type=U8)


def pool_axis(size, k, s, pb, pe, ceil):
    """Output size of one pooled axis as ORT 1.30 sizes it: floor or ceil of
    (size + pads - k) / s, plus 1, less one where a ceil_mode window would
    start past the input and its begin padding."""
    span = size + pb + pe - k
    out = (-(-span // s) if ceil else span // s) + 1
    return out - 1 if ceil and (out - 1) * s >= size + pb else out


def pool_windows(shape, kernel, strides, pads, ceil):
    """Every output index of an N-D pool with its window clipped to the
    input (per axis start, end) and its kernel's unclipped (start, end)."""
    d = len(kernel)
    outs = [pool_axis(shape[2 + a], kernel[a], strides[a], pads[a], pads[a + d], ceil)
            for a in range(d)]
    for idx in np.ndindex(*outs):
        starts = [idx[a] * strides[a] - pads[a] for a in range(d)]
        clipped = [(max(st, 0), min(st + kernel[a], shape[2 + a])) for a, st in enumerate(starts)]
        yield outs, idx, clipped, [(st, st + kernel[a]) for a, st in enumerate(starts)]


def ort_qlinear_average_pool(x, px, py, dtype, kernel, strides, pads, cip, ceil):
    """QLinearAveragePool (qlinear_pool.cc) of NC... `x` (1 to 3 spatial
    axes): with a kernel of the whole image and no pads,
    QLinearGlobalAveragePool's integer path; else each window's dequantized
    values (float32(x - zX) * sX) summed in float32 in row-major order over
    the window clipped to the input, divided by float32(count) (the kernel
    size with count_include_pad, also over the ceil_mode overhang; else the
    elements inside the input), then nearbyint(mean / sY + zY) in float32,
    saturated."""
    lo, hi = RANGE[dtype]
    axes = tuple(range(2, x.ndim))
    if list(x.shape[2:]) == list(kernel) and not any(pads):
        acc = (x.astype(np.int64) - int(px[1])).sum(axis=axes, keepdims=True)
        image = int(np.prod(kernel))
        scale = np.float32(np.float32(px[0]) / np.float32(np.float32(py[0]) * np.float32(image)))
        return np.clip(np.rint((acc.astype(np.float32) * scale).astype(np.float32)) + int(py[1]),
                       lo, hi).astype(dtype)
    d = (x.astype(np.int32) - int(px[1])).astype(np.float32) * np.float32(px[0])
    y = None
    for outs, idx, clipped, _ in pool_windows(x.shape, kernel, strides, pads, ceil):
        if y is None:
            y = np.zeros(x.shape[:2] + tuple(outs), dtype)
        acc = np.zeros(x.shape[:2], np.float32)
        for tap in np.ndindex(*[e - s for s, e in clipped]):
            at = tuple(s + t for (s, _), t in zip(clipped, tap))
            acc = (acc + d[(slice(None), slice(None)) + at]).astype(np.float32)
        count = int(np.prod(kernel)) if cip else int(np.prod([e - s for s, e in clipped]))
        mean = (acc / np.float32(count)).astype(np.float32)
        v = ((mean / np.float32(py[0])).astype(np.float32) + np.float32(py[1])).astype(np.float32)
        y[(slice(None), slice(None)) + idx] = np.clip(np.rint(v), lo, hi).astype(dtype)
    return y


def float_average_pool(x, px, py, dtype, kernel, strides, pads, cip, ceil):
    """The unfused float path: DQ, AveragePool (float64 means), Q."""
    f = dequantize(x, px[0], dtype(px[1])).astype(np.float64)
    nd = len(kernel)
    m = None
    for outs, idx, clipped, full in pool_windows(x.shape, kernel, strides, pads, ceil):
        if m is None:
            m = np.zeros(x.shape[:2] + tuple(outs), np.float32)
        win = f[(slice(None), slice(None)) + tuple(slice(s, e) for s, e in clipped)]
        # ONNX: count_include_pad counts the pads, not the ceil_mode overhang.
        count = (int(np.prod([min(e, x.shape[2 + a] + pads[a + nd]) - s
                              for a, (s, e) in enumerate(full)])) if cip
                 else int(np.prod([e - s for s, e in clipped])))
        m[(slice(None), slice(None)) + idx] = win.sum(axis=tuple(range(2, x.ndim))) / count
    return quantize(m, py[0], dtype(py[1]), dtype)


def qdq_average_pool(name, dtype, shape, px, py, kernel, strides=None, pads=None, cip=0, ceil=0,
                     auto_pad=None):
    """DQ -> AveragePool -> Q => QLinearAveragePool (ORT fuses every 1-D, 2-D
    and 3-D one of one type without dilations). With `auto_pad`, `pads` are
    the ones it means (the reference's) and the model states auto_pad."""
    rank = len(kernel)
    strides = strides or [1] * rank
    pads = pads or [0] * (2 * rank)
    attrs = dict(kernel_shape=kernel, strides=strides, count_include_pad=cip, ceil_mode=ceil)
    attrs.update(dict(auto_pad=auto_pad) if auto_pad else dict(pads=pads))
    nodes = [helper.make_node('DequantizeLinear', ['x', 'sx', 'zx'], ['xf']),
             helper.make_node('AveragePool', ['xf'], ['p'], **attrs),
             helper.make_node('QuantizeLinear', ['p', 'sy', 'zy'], ['y'])]
    inits = [('sx', np.float32(px[0])), ('zx', NP[dtype](px[1])), ('sy', np.float32(py[0])),
             ('zy', NP[dtype](py[1]))]
    args = (px, py, NP[dtype], kernel, strides, pads, cip, ceil)
    x = ints(shape, NP[dtype], 890 + len(CASES))
    oshape = list(ort_qlinear_average_pool(x, *args).shape)
    m = model(nodes, [('x', dtype, shape)], [('y', dtype, oshape)], 13, inits)
    case(name, m, [x], lambda x: [ort_qlinear_average_pool(x, *args)])
    FLOAT_PATH[name] = lambda x: float_average_pool(x, *args)
    return m


# ORT's QLinearAveragePool computes in float itself (float sums, two float
# divisions): bit-exact cases; their TOSA must hold no float avg_pool2d
# (FUSED_FLOAT), except the whole-image one, which is integer (INTEGER_ONLY).
FUSED_FLOAT = {
    'qdq_averagepool_i8_k3': qdq_average_pool(
        'qdq_averagepool_i8_k3', I8, [1, 3, 7, 7], (0.05, -3), (0.05, -3), [3, 3]),
    'qdq_averagepool_u8_s2_pads': qdq_average_pool(
        'qdq_averagepool_u8_s2_pads', U8, [2, 3, 9, 9], (0.02, 128), (0.013, 120), [3, 3],
        [2, 2], [1, 1, 1, 1]),
    'qdq_averagepool_u8_s2_pads_cip1': qdq_average_pool(
        'qdq_averagepool_u8_s2_pads_cip1', U8, [2, 3, 9, 9], (0.02, 128), (0.02, 128), [3, 3],
        [2, 2], [1, 1, 1, 1], cip=1),
    'qdq_averagepool_i8_ceil': qdq_average_pool(
        'qdq_averagepool_i8_ceil', I8, [1, 2, 8, 8], (0.04, 0), (0.04, 0), [3, 3], [2, 2],
        ceil=1),
    'qdq_averagepool_i8_ceil_pads_cip1': qdq_average_pool(
        'qdq_averagepool_i8_ceil_pads_cip1', I8, [1, 2, 8, 8], (0.05, -3), (0.031, 7), [3, 3],
        [3, 3], [1, 1, 1, 1], cip=1, ceil=1),
    'qdq_averagepool_u8_ceil_overhang_cip1': qdq_average_pool(
        'qdq_averagepool_u8_ceil_overhang_cip1', U8, [1, 3, 8, 8], (0.02, 128), (0.015, 131),
        [3, 3], [2, 2], [1, 1, 1, 1], cip=1, ceil=1),
    'qdq_averagepool_u8_k2x3': qdq_average_pool(
        'qdq_averagepool_u8_k2x3', U8, [1, 4, 6, 7], (0.03, 100), (0.03, 100), [2, 3], [2, 1],
        [0, 1, 1, 0]),
    'qdq_averagepool_i8_1d': qdq_average_pool(
        'qdq_averagepool_i8_1d', I8, [2, 3, 11], (0.06, 5), (0.045, -2), [3], [2], [1, 1]),
}
FUSED_ELEMENTWISE['qdq_averagepool_u8_whole'] = qdq_average_pool(
    'qdq_averagepool_u8_whole', U8, [1, 8, 5, 5], (0.02, 128), (0.004, 120), [5, 5])


def qdq_concat_rescaled(name, dtype, shapes, params, py, axis, types=None):
    """DQ(x_k) -> Concat -> Q with other parameters per input =>
    QLinearConcat: each input through ORT's identity lookup table
    (QlinearBuildLookupTable: the dequantized float, MlasQuantizeLinear),
    copied where its parameters are Q's; the table is the float path's DQ
    and Q of that element, so both agree exactly. Inputs of other `types`
    than Q's: not fused (ORT's VariadicSelector refuses them), the float
    path, with the same values."""
    types = types or [dtype] * len(shapes)
    nodes, inits, inputs = [], [], []
    for k, (s, p, t) in enumerate(zip(shapes, params, types)):
        nodes.append(helper.make_node('DequantizeLinear', ['x%d' % k, 's%d' % k, 'z%d' % k],
                                      ['f%d' % k]))
        inits += [('s%d' % k, np.float32(p[0])), ('z%d' % k, NP[t](p[1]))]
        inputs.append(('x%d' % k, t, s))
    nodes += [helper.make_node('Concat', ['f%d' % k for k in range(len(shapes))], ['c'],
                               axis=axis),
              helper.make_node('QuantizeLinear', ['c', 'sy', 'zy'], ['y'])]
    inits += [('sy', np.float32(py[0])), ('zy', NP[dtype](py[1]))]
    xs = [ints(s, NP[t], 910 + len(CASES) + k) for k, (s, t) in enumerate(zip(shapes, types))]
    oshape = list(np.concatenate(xs, axis=axis).shape)
    m = model(nodes, inputs, [('y', dtype, oshape)], 13, inits)

    def ref(*xs):
        return [np.concatenate([quantize(dequantize(x, p[0], NP[t](p[1])), py[0],
                                         NP[dtype](py[1]), NP[dtype])
                                for x, p, t in zip(xs, params, types)], axis=axis)]
    case(name, m, xs, ref)
    return m


FUSED_ELEMENTWISE['qdq_concat_rescaled_i8'] = qdq_concat_rescaled(
    'qdq_concat_rescaled_i8', I8, [[2, 3, 4], [2, 5, 4]], [(0.05, -3), (0.013, 7)], (0.031, 1),
    1)
FUSED_ELEMENTWISE['qdq_concat_rescaled_u8'] = qdq_concat_rescaled(
    'qdq_concat_rescaled_u8', U8, [[2, 3, 4], [2, 3, 2], [2, 3, 5]],
    [(0.04, 120), (0.02, 128), (0.09, 30)], (0.04, 120), -1)


INTEGER_ONLY = {
    'qdq_concat': qdq_concat('qdq_concat'),
    'qdq_gemm': qdq_gemm('qdq_gemm'),
    'qdq_conv_relu': qdq_conv(True, 'qdq_conv_relu'),
    'qdq_conv': qdq_conv(False, 'qdq_conv', xt=I8, yt=I8, zy=-7),
    'qdq_matmul_reshape_transpose': qdq_matmul('qdq_matmul_reshape_transpose'),
    **FUSED_ELEMENTWISE,
}
# A Relu before a Q whose zero point is not the minimum stays float (ORT
# does not fuse it either): DQ, float Conv, Relu, Q, whose float sums ORT and
# Kiln add in different orders, so an output can differ by 1 LSB where the
# sum lands next to a rounding boundary (the count is printed).
UNFUSED = {'qdq_conv_relu_unfused': qdq_conv(True, 'qdq_conv_relu_unfused', zy=20),
           'qdq_maxpool_i8_rescaled_unfused': MAXPOOL_RESCALED}
# Groups ORT does not fuse whose float path has only epilogue-like ops:
# their TOSA must hold no fused kernel's table lookup (tosa.gather / table).
UNFUSED_NO_LOOKUP = {
    'qdq_add_mixed_types_unfused': MIXED_ADD,
    'qdq_concat_mixed_types_unfused': qdq_concat_rescaled(
        'qdq_concat_mixed_types_unfused', I8, [[2, 3, 4], [2, 2, 4]], [(0.05, 130), (0.02, 3)],
        (0.04, -1), 1, types=[U8, I8]),
}
# auto_pad (ORT's SAME padding: the odd pad at the end for SAME_UPPER).
FUSED_FLOAT['qdq_averagepool_u8_same_lower'] = qdq_average_pool(
    'qdq_averagepool_u8_same_lower', U8, [1, 2, 8, 8], (0.025, 118), (0.02, 125), [3, 3], [2, 2],
    [1, 1, 0, 0], auto_pad='SAME_LOWER')
FUSED_FLOAT['qdq_averagepool_i8_same_upper_cip1'] = qdq_average_pool(
    'qdq_averagepool_i8_same_upper_cip1', I8, [1, 2, 7, 8], (0.05, -4), (0.035, 3), [3, 3],
    [2, 2], [1, 0, 1, 1], cip=1, auto_pad='SAME_UPPER')
# 3-D windows (strides, pads; count_include_pad 0, and 1 with ceil_mode).
FUSED_FLOAT['qdq_averagepool_u8_3d'] = qdq_average_pool(
    'qdq_averagepool_u8_3d', U8, [1, 2, 5, 6, 7], (0.03, 125), (0.021, 130), [2, 3, 3], [1, 2, 2],
    [1, 0, 1, 0, 1, 1])
FUSED_FLOAT['qdq_averagepool_i8_3d_ceil_cip1'] = qdq_average_pool(
    'qdq_averagepool_i8_3d_ceil_cip1', I8, [1, 2, 4, 6, 5], (0.04, 2), (0.03, -1), [2, 2, 3],
    [2, 2, 2], [0, 1, 1, 1, 1, 0], cip=1, ceil=1)
LSB_TOLERANCE = {'qdq_conv_relu_unfused': 1}

# name -> (model, phrase the one error line must hold)
REFUSED = {
    'quantize_int16': (model([helper.make_node('QuantizeLinear', ['x', 's', 'z'], ['y'])],
                             [('x', F, [4])], [('y', TensorProto.INT16, [4])], 21,
                             [('s', np.float32(0.1)), ('z', np.int16(0))]),
                       'int16; Kiln supports int8 and uint8'),
    'quantize_block': (model([helper.make_node('QuantizeLinear', ['x', 's', 'z'], ['y'],
                                               axis=1, block_size=2)],
                             [('x', F, [2, 4])], [('y', I8, [2, 4])], 21,
                             [('s', np.full([2, 2], 0.1, np.float32)),
                              ('z', np.zeros([2, 2], np.int8))]),
                       'block quantization'),
    'dequantize_runtime_scale_per_axis': (
        model([helper.make_node('DequantizeLinear', ['x', 's', 'z'], ['y'])],
              [('x', I8, [2, 3]), ('s', F, [3])], [('y', F, [2, 3])], 13,
              [('z', np.zeros(3, np.int8))]),
        'a scale computed at run time must be one value'),
    'qlinearconv_3d': (
        model([helper.make_node('QLinearConv', ['x', 'xs', 'xz', 'w', 'ws', 'wz', 'ys', 'yz'],
                                ['y'])],
              [('x', U8, [1, 1, 3, 3, 3])], [('y', U8, [1, 1, 3, 3, 3])], 13,
              [('xs', np.float32(0.1)), ('xz', np.uint8(0)), ('w', np.ones([1, 1, 1, 1, 1], np.uint8)),
               ('ws', np.float32(0.1)), ('wz', np.uint8(0)), ('ys', np.float32(0.1)),
               ('yz', np.uint8(0))]),
        '3-D QLinearConv'),
    # ORT's int32 conversion of mean / y_scale could overflow (x_scale /
    # y_scale 1e7): its result there is not reproduced.
    'qdq_averagepool_overflowing_scales': (
        model([helper.make_node('DequantizeLinear', ['x', 'sx', 'zx'], ['xf']),
               helper.make_node('AveragePool', ['xf'], ['p'], kernel_shape=[2, 2]),
               helper.make_node('QuantizeLinear', ['p', 'sy', 'zy'], ['y'])],
              [('x', I8, [1, 1, 4, 4])], [('y', I8, [1, 1, 3, 3])], 13,
              [('sx', np.float32(1.0)), ('zx', np.int8(0)), ('sy', np.float32(1e-7)),
               ('zy', np.int8(0))]),
        'can overflow int32'),
    'add_uint8': (model([helper.make_node('Add', ['a', 'a'], ['y'])],
                        [('a', U8, [3])], [('y', U8, [3])], 13),
                  'uint8'),
}


def write(root):
    for name, (m, inputs, _) in CASES.items():
        d = os.path.join(root, name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, 'model.onnx'), 'wb') as f:
            f.write(m.SerializeToString())
        for k, x in enumerate(inputs):
            np.save(os.path.join(d, 'input_%d.npy' % k), x)


def compare(got, want, exact, lsb=0):
    """'' when equal (exactly, or float within 1e-6 relative; integers within
    `lsb`), else why not."""
    want = np.asarray(want)
    if got.shape != want.shape:
        return 'shape %s, expected %s' % (list(got.shape), list(want.shape))
    if np.issubdtype(want.dtype, np.integer):
        diff = np.abs(got.astype(np.int64) - want.astype(np.int64))
        if diff.max(initial=0) <= lsb:
            if diff.max(initial=0):
                print('  %s: %d of %d elements differ by 1 LSB' % (
                    CURRENT[0], np.count_nonzero(diff), diff.size))
            return ''
        return '%d of %d elements differ (at most %d LSB)' % (np.count_nonzero(diff), diff.size,
                                                              diff.max())
    g, w = got.astype(np.float64), want.astype(np.float64)
    bad = (g != w) if exact else (np.abs(g - w) > 1e-6 * np.abs(w) + 1e-30)
    if not bad.any():
        return ''
    at = np.unravel_index(np.argmax(bad), bad.shape)
    return '%d of %d values differ, e.g. at %s: %r, expected %r' % (
        np.count_nonzero(bad), bad.size, list(at), float(got[at]), float(want[at]))


# The ops a requantization epilogue (and Q/DQ arithmetic) is made of.
EPILOGUE_OPS = {'cast', 'mul', 'floor', 'sub', 'add', 'greater', 'greater_equal', 'equal',
                'select', 'clamp', 'logical_and', 'logical_or', 'abs', 'const', 'reciprocal'}


def float_outside_requantization(tosa):
    """'' when the TOSA IR computes in integers: every product (conv2d,
    depthwise_conv2d, matmul, fully_connected) on i8 operands and every
    f32 result one of a requantization's elementwise ops; else the first
    offending line."""
    for line in tosa.splitlines():
        m = re.search(r'"?tosa\.([a-z_0-9]+)"?', line)
        if not m:
            continue
        op = m.group(1)
        sig = line.split(':')[-1]
        if op in ('conv2d', 'depthwise_conv2d', 'matmul', 'fully_connected') and 'f32' in sig:
            return 'a float %s: %s' % (op, line.strip()[:160])
        result = sig.split('->')[-1]
        if 'f32' in result and op not in EPILOGUE_OPS:
            return 'a float %s: %s' % (op, line.strip()[:160])
    return ''


CURRENT = ['']


def emit_tosa(kiln, tmp, name, m):
    """`m` compiled to TOSA IR: (the IR, '') or ('', why not)."""
    path = os.path.join(tmp, name + '_ir.onnx')
    with open(path, 'wb') as f:
        f.write(m.SerializeToString())
    mlir = os.path.join(tmp, name + '.mlir')
    r = run([kiln, 'compile', path, '--emit=tosa', '-o', mlir])
    if r.returncode != 0:
        return '', 'exit %d: %s' % (r.returncode, r.stderr.strip())
    with open(mlir) as f:
        return f.read(), ''


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def run_case(kiln, name, data, tmp, reference, extra):
    d = os.path.join(data, name)
    inputs = sorted(f for f in os.listdir(d) if f.startswith('input_'))
    outputs = sorted(f for f in os.listdir(d) if f.startswith('output_') and f.endswith('.npy'))
    if not outputs:
        return 'no ONNX Runtime outputs in ' + d
    art = os.path.join(tmp, name + '.kiln')
    r = run([kiln, 'compile', os.path.join(d, 'model.onnx'), '-o', art] + extra)
    if r.returncode != 0:
        return 'kiln compile exited %d: %s' % (r.returncode, r.stderr.strip())
    outs = [os.path.join(tmp, '%s_out%d.npy' % (name, k)) for k in range(len(outputs))]
    r = run([kiln, 'run', art] + ['--input=@' + os.path.join(d, f) for f in inputs] +
            ['--output=@' + o for o in outs])
    if r.returncode != 0:
        return 'kiln run exited %d: %s' % (r.returncode, r.stderr.strip())
    numpy_want = reference(*[np.load(os.path.join(d, f)) for f in inputs])
    exact = name in EXACT_FLOAT
    lsb = LSB_TOLERANCE.get(name, 0)
    for k, (o, f) in enumerate(zip(outs, outputs)):
        got = np.load(o)
        CURRENT[0] = '%s output %d vs ONNX Runtime' % (name, k)
        verdict = compare(got, np.load(os.path.join(d, f)), exact, lsb)
        if verdict:
            return 'output %d vs ONNX Runtime: %s' % (k, verdict)
        CURRENT[0] = '%s output %d vs NumPy' % (name, k)
        verdict = compare(got, numpy_want[k], exact, lsb)
        if verdict:
            return 'output %d vs NumPy: %s' % (k, verdict)
    if name in FLOAT_PATH:
        flt = FLOAT_PATH[name](*[np.load(os.path.join(d, f)) for f in inputs])
        ort = np.load(os.path.join(d, outputs[0]))
        print('  %s: bit-exact with ONNX Runtime; the unfused float path differs on %d of %d'
              % (name, np.count_nonzero(flt != ort), ort.size))
    return ''


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--kiln')
    ap.add_argument('--data', default=DATA)
    ap.add_argument('--write', metavar='DIR')
    ap.add_argument('--filter', default='')
    ap.add_argument('extra', nargs='*', help='more kiln compile flags (after --)')
    args = ap.parse_args()
    if args.write:
        write(args.write)
        return 0
    if not args.kiln:
        ap.error('need --kiln or --write')
    passed = failed = 0

    def verdict(name, problem):
        nonlocal passed, failed
        print(('PASS ' if not problem else 'FAIL ') + name + (': ' + problem if problem else ''))
        passed += not problem
        failed += bool(problem)

    with tempfile.TemporaryDirectory() as tmp:
        for name, (_, _, reference) in CASES.items():
            if re.search(args.filter, name):
                verdict(name, run_case(args.kiln, name, args.data, tmp, reference, args.extra))
        for name, m in INTEGER_ONLY.items():
            if not re.search(args.filter, name):
                continue
            path = os.path.join(tmp, name + '_m0.onnx')
            with open(path, 'wb') as f:
                f.write(m.SerializeToString())
            r = run([args.kiln, 'export', path, '--target=thumbv6m-none-eabi',
                     '--output-format=c-module', '-o', os.path.join(tmp, name + '_m0')])
            verdict(name + '_cortex_m0plus',
                    '' if r.returncode == 0 else 'exit %d: %s' % (r.returncode, r.stderr.strip()))
        for name, m in list(INTEGER_ONLY.items()) + list(UNFUSED.items()):
            if not re.search(args.filter, name):
                continue
            ir, problem = emit_tosa(args.kiln, tmp, name, m)
            if problem:
                verdict(name + '_integer_ir', problem)
            elif name in UNFUSED:
                verdict(name + '_float_ir', '' if float_outside_requantization(ir)
                        else 'expected a float operator')
            else:
                verdict(name + '_integer_ir', float_outside_requantization(ir))
        for name, m in list(UNFUSED_NO_LOOKUP.items()) + list(FUSED_FLOAT.items()):
            if not re.search(args.filter, name):
                continue
            ir, problem = emit_tosa(args.kiln, tmp, name, m)
            if not problem and name in FUSED_FLOAT:
                problem = 'a float avg_pool2d' if 'tosa.avg_pool2d' in ir else ''
                verdict(name + '_fused_ir', problem)
            else:
                verdict(name + '_float_ir', problem or (
                    'a fused lookup' if re.search(r'tosa\.(gather|table)', ir) else ''))
        for name, (m, phrase) in REFUSED.items():
            if not re.search(args.filter, name):
                continue
            path = os.path.join(tmp, name + '.onnx')
            with open(path, 'wb') as f:
                f.write(m.SerializeToString())
            r = run([args.kiln, 'compile', path, '-o', os.path.join(tmp, 'r.kiln')])
            lines = [l for l in r.stderr.splitlines() if l.strip()]
            ok = (r.returncode == 1 and len(lines) == 1 and lines[0].startswith('kiln: error:')
                  and phrase in lines[0] and 'internal error' not in lines[0])
            verdict(name, '' if ok else 'exit %d: %s' % (r.returncode, r.stderr.strip()))
    print('%d passed, %d failed' % (passed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
