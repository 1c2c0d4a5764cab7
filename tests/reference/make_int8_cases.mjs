#!/usr/bin/env node
// Per-operator conformance cases for Kiln's int8/uint8 TFLite import.
//
//   node tests/reference/make_int8_cases.mjs [--only REGEX] [--list] [--verbose]
//                                            [--lib PATH/libtensorflowlite_c.so]
//   node tests/reference/make_int8_cases.mjs --check   (no TFLite needed; CTest)
//
// For every case below this writes tests/data/ops_int8/<case>/model.tflite (a
// tiny quantized model: one operator, or QUANTIZE -> op -> DEQUANTIZE for the
// mixed case), seeded inputs input_K.npy, the reference output_K.npy and
// meta.json, plus tests/data/ops_int8/index.json. Deterministic: running it
// twice gives identical files.
//
// Three engines run every case on the same input files:
//   - native (the reference): TFLite 2.9's C library (libtensorflowlite_c.so,
//     npm tfjs-tflite-node@0.0.2) through tflite_native_reference.mjs
//     (tflite_native.c), no delegate added: TFLite's builtin integer kernels,
//   - native + XNNPACK: the same library with an XNNPACK delegate, flags
//     QS8 | QU8 (tells whether a difference comes from XNNPACK),
//   - wasm: the TFLite interpreter of tflite_reference.mjs (@tensorflow/
//     tfjs-tflite), which always delegates to XNNPACK with QS8 | QU8.
// output_K.npy is the native builtin result (it matches TFLite's integer
// formulas, see tests/data/ops_int8/README.md); where the wasm output differs
// it is kept as wasm_output_K.npy. meta.json "engines.comparison" records,
// per output, the count of differing elements and the max |diff| (LSB) of
// each other engine. A wasm difference on an operator not listed in
// KNOWN_ENGINE_DIFFERENCES, or larger than its maxLsb, fails the run.
//
// Inputs: int8 input K holds floor(256 u) - 128 (uint8: floor(256 u)) from
// mulberry32 seeded with SEED + K (prng.mjs): the whole integer range. Float
// inputs (QUANTIZE, the mixed case) hold float32(k * (-1 + 2u)), k per case.
// Weights: int8 in [-127, 127] (symmetric, zero point 0), per channel for
// CONV_2D (dimension 0) and DEPTHWISE_CONV_2D (dimension 3), per tensor for
// FULLY_CONNECTED and the uint8 cases (uint8 weights in [0, 255] with a
// nonzero zero point); int32 biases with scale input_scale * weight_scale[c]
// and zero point 0. Constants come from mulberry32 seeded with
// FNV-1a("<case>/<tensor>").

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fnv1a, mulberry32 } from './prng.mjs';
import { readNpy, writeNpy } from './npy.mjs';
import { evaluateInt8 } from './int8_eval.mjs';
import { buildTfliteModel } from './tflite_builder.mjs';
import { buildNative, defaultNativeLib, runNative } from './tflite_native_reference.mjs';
import { prettyJson, runReference } from './tflite_reference.mjs';
import { createRunner, loadTflite, resetTflite, setTfliteLogSink } from './tflite_runtime.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const OUT_DIR = path.join(repo, 'tests/data/ops_int8');
const SEED = 1;

const numel = (s) => s.reduce((a, b) => a * b, 1);

// Integers uniform in [lo, hi] from the stream of `key` (string) or seed.
function randInts(seedOrKey, n, lo, hi, Ctor) {
  const u = mulberry32(typeof seedOrKey === 'string' ? fnv1a(seedOrKey) : seedOrKey);
  const out = new Ctor(n);
  for (let i = 0; i < n; i++) out[i] = lo + Math.floor(u() * (hi - lo + 1));
  return out;
}

const outDim = (size, k, stride, dil, padding) => {
  const ek = (k - 1) * dil + 1;
  return padding === 'SAME' ? Math.ceil(size / stride) : Math.floor((size - ek) / stride) + 1;
};

// Quantization parameters: per tensor q(scale, zp), per channel qc([scales], dim).
const q = (scale, zeroPoint = 0) => ({ scale: [scale], zeroPoint: [zeroPoint], quantizedDimension: 0 });
const qc = (scales, dim) => ({ scale: scales, zeroPoint: scales.map(() => 0), quantizedDimension: dim });
const TYPE_RANGE = { int8: [-128, 127], uint8: [0, 255], bool: [0, 1] };
const TYPE_ID_OF = { float32: 0, int32: 2, uint8: 3, bool: 6, int8: 9 };

// ---------------------------------------------------------------- graph

class QGraph {
  constructor(name) {
    this.name = name;
    this.tensors = [];
    this.operators = [];
    this.inputs = [];
    this.outputs = [];
    this.floatInputRange = {}; // input K -> k of float32(k * x)
    this.intInputRange = {}; // int32 input K -> [lo, hi] of lo + floor((hi - lo + 1) u)
  }

  tensor(name, shape, dtype, quantization, data) {
    this.tensors.push({ name, shape: [...shape], dtype, ...(quantization ? { quantization } : {}), ...(data ? { data } : {}) });
    return this.tensors.length - 1;
  }

  shape(i) { return this.tensors[i].shape; }
  quant(i) { return this.tensors[i].quantization; }
  dtype(i) { return this.tensors[i].dtype; }

  // A quantized graph input (dtype int8 or uint8), float32 with range k, or
  // int32 (no quantization) uniform in intRange.
  input(shape, quantization, { dtype = 'int8', floatRange, intRange } = {}) {
    const name = this.inputs.length ? `input_${this.inputs.length}` : 'input';
    const i = this.tensor(name, shape, dtype, dtype === 'float32' || dtype === 'int32' ? undefined : quantization);
    if (dtype === 'float32') this.floatInputRange[this.inputs.length] = floatRange ?? 1;
    if (dtype === 'int32') this.intInputRange[this.inputs.length] = intRange ?? [0, 3];
    this.inputs.push(i);
    return i;
  }

  // int8 weights in [-127, 127] (uint8: [0, 255]) with the given quantization.
  weights(name, shape, quantization, dtype = 'int8') {
    const [lo, hi] = dtype === 'uint8' ? [0, 255] : [-127, 127];
    const Ctor = dtype === 'uint8' ? Uint8Array : Int8Array;
    return this.tensor(name, shape, dtype, quantization, randInts(`${this.name}/${name}`, numel(shape), lo, hi, Ctor));
  }

  // int32 bias of `n` values in [-range, range], scale inScale * wScale[c].
  bias(n, inScale, wScales, range = 3000) {
    const scales = Array.from({ length: n }, (_, c) => Math.fround(inScale * (wScales.length > 1 ? wScales[c] : wScales[0])));
    const quant = scales.length > 1 && wScales.length > 1 ? qc(scales, 0) : q(scales[0]);
    return this.tensor('bias', [n], 'int32', quant, randInts(`${this.name}/bias`, n, -range, range, Int32Array));
  }

  i32(name, values, shape = [values.length]) {
    return this.tensor(name, shape, 'int32', undefined, Int32Array.from(values));
  }

  // Appends op; its output has outShape and quantization (dtype defaults to
  // the first input's).
  op(op, inputs, outShape, quantization, options, { version = 1, dtype } = {}) {
    const out = this.tensor(op.toLowerCase(), outShape, dtype ?? this.dtype(inputs[0]), quantization);
    this.operators.push({ op, inputs, outputs: [out], ...(options ? { options } : {}), ...(version !== 1 ? { version } : {}) });
    return out;
  }

  // Appends op with several outputs (shapes outShapes, one quantization);
  // returns their indices.
  opN(op, inputs, outShapes, quantization, options, { version = 1, dtype } = {}) {
    const outs = outShapes.map((s, k) => this.tensor(`${op.toLowerCase()}_${k}`, s, dtype ?? this.dtype(inputs[0]), quantization));
    this.operators.push({ op, inputs, outputs: outs, ...(options ? { options } : {}), ...(version !== 1 ? { version } : {}) });
    return outs;
  }

  output(...idx) { this.outputs.push(...idx); }

  spec() {
    return { tensors: this.tensors, operators: this.operators, inputs: this.inputs, outputs: this.outputs, description: `kiln int8 op case ${this.name}` };
  }
}

// ---------------------------------------------------------------- op helpers

// Output scale for a sum of `terms` products of two roughly uniform 8-bit
// offsets (|x - zp| ~ 74 rms, |w| ~ 73 rms), so that `sigmas` standard
// deviations fill the output's 128 steps: inScale * wScale * 5400 *
// sqrt(terms) * sigmas / 128. sigmas < 1 saturates many elements.
const accScale = (inScale, wScale, terms, sigmas = 3) => Math.fround(inScale * wScale * 5400 * Math.sqrt(terms) * sigmas / 128);

const int8Version = (dtype, v8) => (dtype === 'int8' ? v8 : 1);

function conv2d(g, x, { cout, k = 3, stride = 1, dil = 1, padding = 'SAME', act = 'NONE', wScales, out, bias = true }) {
  const [n, h, w, cin] = g.shape(x);
  const dtype = g.dtype(x);
  const wq = dtype === 'uint8' ? q(wScales[0], 131) : qc(wScales, 0);
  const f = g.weights('filter', [cout, k, k, cin], wq, dtype);
  const ins = [x, f];
  if (bias) ins.push(g.bias(cout, g.quant(x).scale[0], wScales));
  return g.op('CONV_2D', ins, [n, outDim(h, k, stride, dil, padding), outDim(w, k, stride, dil, padding), cout], out, {
    padding, stride_w: stride, stride_h: stride, fused_activation_function: act, dilation_w_factor: dil, dilation_h_factor: dil,
  }, { version: int8Version(dtype, 3) });
}

function depthwise(g, x, { mult = 1, k = 3, stride = 1, dil = 1, padding = 'SAME', act = 'NONE', wScales, out }) {
  const [n, h, w, cin] = g.shape(x);
  const cout = cin * mult;
  const f = g.weights('filter', [1, k, k, cout], qc(wScales, 3));
  const b = g.bias(cout, g.quant(x).scale[0], wScales);
  return g.op('DEPTHWISE_CONV_2D', [x, f, b], [n, outDim(h, k, stride, dil, padding), outDim(w, k, stride, dil, padding), cout], out, {
    padding, stride_w: stride, stride_h: stride, depth_multiplier: mult, fused_activation_function: act,
    dilation_w_factor: dil, dilation_h_factor: dil,
  }, { version: 3 });
}

function fc(g, x, { units, bias = true, keep = false, act = 'NONE', wScale, out }) {
  const s = g.shape(x);
  const dtype = g.dtype(x);
  const kk = s[s.length - 1];
  const f = g.weights('weights', [units, kk], dtype === 'uint8' ? q(wScale, 125) : q(wScale, 0), dtype);
  const ins = [x, f, bias ? g.bias(units, g.quant(x).scale[0], [wScale]) : -1];
  const outShape = keep ? [...s.slice(0, -1), units] : [numel(s) / kk, units];
  return g.op('FULLY_CONNECTED', ins, outShape, out, { fused_activation_function: act, keep_num_dims: keep },
    { version: keep ? 5 : int8Version(dtype, 4) });
}

function binary(g, op, a, b, out, act = 'NONE') {
  const sa = g.shape(a); const sb = g.shape(b);
  const n = Math.max(sa.length, sb.length);
  const shape = [];
  for (let i = 0; i < n; i++) {
    const x = sa[sa.length - n + i] ?? 1; const y = sb[sb.length - n + i] ?? 1;
    shape.push(x === 1 ? y : x);
  }
  return g.op(op, [a, b], shape, out, { fused_activation_function: act }, { version: int8Version(g.dtype(a), 2) });
}

function pool(g, op, x, { f, stride, padding, act = 'NONE' }) {
  const [n, h, w, c] = g.shape(x);
  return g.op(op, [x], [n, outDim(h, f, stride, 1, padding), outDim(w, f, stride, 1, padding), c], g.quant(x), {
    padding, stride_w: stride, stride_h: stride, filter_width: f, filter_height: f, fused_activation_function: act,
  }, { version: int8Version(g.dtype(x), 2) });
}

function resize(g, op, x, [oh, ow], { alignCorners = false, halfPixel = false } = {}) {
  const [n, , , c] = g.shape(x);
  const size = g.i32('size', [oh, ow]);
  const version = halfPixel || (op === 'RESIZE_NEAREST_NEIGHBOR' && alignCorners) ? 3 : 2;
  return g.op(op, [x, size], [n, oh, ow, c], g.quant(x), { align_corners: alignCorners, half_pixel_centers: halfPixel }, { version });
}

// ---------------------------------------------------------------- cases

export const CASES = [];
function add(name, desc, build, { refused, evalReference } = {}) {
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`bad case name ${name}`);
  if (CASES.some((c) => c.name === name)) throw new Error(`duplicate case ${name}`);
  CASES.push({ name, desc, build, refused, evalReference });
}
const single = (fn) => (g) => { g.output(fn(g)); };

// Operators on which the engines are known to differ (what this script
// printed; tests/data/ops_int8/README.md has the table): operator ->
// { maxLsb: the largest wasm-vs-native difference accepted while generating,
//   kilnLsb: what tests/model/OpCaseInt8Test.cpp allows Kiln (kOneLsbOperators
//   there), reason }. The stored reference is always the native builtin one,
// which matches TFLite's integer kernel formulas (README).
const XNNPACK_REQUANT = 'XNNPACK (the wasm build and TFLite 2.9 with an XNNPACK QS8/QU8 delegate give identical results) '
  + 'requantizes with its own arithmetic, not TFLite\'s double-rounding fixed-point MultiplyByQuantizedMultiplier: '
  + 'some elements land 1 LSB away from the builtin kernels';
const WASM_ONLY = 'the wasm build differs by 1 LSB while TFLite 2.9 builtin and 2.9 + XNNPACK QS8 agree (most likely the wasm '
  + 'package\'s later XNNPACK delegate takes this int8 node and 2.9\'s does not; not isolated further): the builtin result '
  + 'follows TFLite\'s fixed-point formula exactly';
export const KNOWN_ENGINE_DIFFERENCES = {
  CONV_2D: { maxLsb: 1, kilnLsb: 1, reason: XNNPACK_REQUANT },
  FULLY_CONNECTED: { maxLsb: 1, kilnLsb: 1, reason: XNNPACK_REQUANT },
  ADD: { maxLsb: 1, kilnLsb: 1, reason: XNNPACK_REQUANT },
  SUB: { maxLsb: 1, kilnLsb: 1, reason: XNNPACK_REQUANT },
  TRANSPOSE_CONV: { maxLsb: 1, kilnLsb: 0, reason: `${XNNPACK_REQUANT}; Kiln follows the builtin kernels (and int8_eval.mjs) exactly` },
  RESIZE_BILINEAR: { maxLsb: 1, kilnLsb: 1, reason: 'XNNPACK\'s int8 bilinear resize (identical in the wasm build and 2.9 + XNNPACK) '
    + 'interpolates differently from TFLite\'s ResizeBilinearInteger (10-bit fractions, round half away from zero)' },
  BATCH_MATMUL: { maxLsb: 1, kilnLsb: 1, reason: 'the wasm build differs by 1 LSB while TFLite 2.9 builtin and 2.9 + XNNPACK agree; '
    + 'here the wasm result is the one MultiplyByQuantizedMultiplier gives (see KNOWN_FORMULA_DIFFERENCES)' },
  LEAKY_RELU: { maxLsb: 1, kilnLsb: 1, reason: WASM_ONLY },
  QUANTIZE: { maxLsb: 1, kilnLsb: 1, reason: `int8 -> int8 requantization: ${WASM_ONLY}` },
  CONCATENATION: { maxLsb: 255, kilnLsb: 0, reason: 'wasm bug: uint8 CONCATENATION of inputs with different scales copies the input '
    + 'bytes without requantizing them (up to 55 LSB off); TFLite 2.9 requantizes each input (round half away from zero), Kiln must match it exactly' },
};

// CONV_2D
add('conv_2d_same_per_channel', 'CONV_2D 3x3 SAME, 3 -> 4 channels, per-channel weight scales, nonzero zero points',
  single((g) => {
    const x = g.input([1, 6, 6, 3], q(0.05, -3));
    const ws = [0.011, 0.0237, 0.0049, 0.031];
    return conv2d(g, x, { cout: 4, wScales: ws, out: q(accScale(0.05, 0.015, 27), 5) });
  }));
add('conv_2d_valid_stride2_relu', 'CONV_2D 3x3 VALID stride 2 with fused RELU (clamp at the output zero point)',
  single((g) => {
    const x = g.input([1, 7, 7, 4], q(0.043, 11));
    const ws = [0.02, 0.013, 0.0071, 0.017, 0.009];
    return conv2d(g, x, { cout: 5, padding: 'VALID', stride: 2, act: 'RELU', wScales: ws, out: q(accScale(0.043, 0.013, 36, 2), -20) });
  }));
add('conv_2d_same_dilation2_relu6', 'CONV_2D 3x3 SAME dilation 2 with fused RELU6 (clamps at q(0) and q(6))',
  single((g) => {
    const x = g.input([1, 7, 6, 2], q(0.1, 0));
    const ws = [0.012, 0.02, 0.016];
    return conv2d(g, x, { cout: 3, dil: 2, act: 'RELU6', wScales: ws, out: q(0.03, -128) });
  }));
add('conv_2d_saturating', 'CONV_2D 3x3 SAME with an output scale small enough to saturate many elements',
  single((g) => {
    const x = g.input([1, 5, 5, 3], q(0.02, -7));
    const ws = [0.01, 0.02, 0.015];
    return conv2d(g, x, { cout: 3, wScales: ws, out: q(accScale(0.02, 0.015, 27, 0.6), 3) });
  }));
add('conv_2d_multiplier_gt1', 'CONV_2D 1x1 with effective multipliers input*weight/output above 1 (left shift)',
  single((g) => {
    const x = g.input([1, 4, 4, 2], q(0.5, 1));
    const ws = [0.4, 0.25];
    return conv2d(g, x, { cout: 2, k: 1, wScales: ws, out: q(0.09, 0) });
  }));
add('conv_2d_no_bias', 'CONV_2D 3x3 SAME stride 2 with only 2 inputs (no bias)',
  single((g) => {
    const x = g.input([1, 6, 6, 2], q(0.06, 4));
    const ws = [0.015, 0.021];
    return conv2d(g, x, { cout: 2, stride: 2, bias: false, wScales: ws, out: q(accScale(0.06, 0.018, 18), -2) });
  }), { refused: 'TFLite 2.9 CONV_2D needs its bias input (conv.cc Prepare: "has_bias was not true")' });
add('conv_2d_uint8', 'uint8 CONV_2D 3x3 SAME, per-tensor uint8 weights with zero point 131',
  single((g) => {
    const x = g.input([1, 5, 5, 3], q(0.04, 128), { dtype: 'uint8' });
    return conv2d(g, x, { cout: 3, wScales: [0.013], out: q(accScale(0.04, 0.013, 27), 120) });
  }));

// DEPTHWISE_CONV_2D
add('depthwise_conv_2d_same_m1', 'DEPTHWISE_CONV_2D 3x3 SAME, depth multiplier 1, per-channel scales',
  single((g) => {
    const x = g.input([1, 6, 6, 4], q(0.05, -5));
    const ws = [0.01, 0.03, 0.007, 0.018];
    return depthwise(g, x, { wScales: ws, out: q(accScale(0.05, 0.016, 9), 2) });
  }));
add('depthwise_conv_2d_valid_stride2_m2', 'DEPTHWISE_CONV_2D 3x3 VALID stride 2, depth multiplier 2',
  single((g) => {
    const x = g.input([1, 7, 7, 2], q(0.037, 9));
    const ws = [0.012, 0.025, 0.008, 0.02];
    return depthwise(g, x, { mult: 2, padding: 'VALID', stride: 2, wScales: ws, out: q(accScale(0.037, 0.016, 9, 2), -7) });
  }));
add('depthwise_conv_2d_dilation2_relu6', 'DEPTHWISE_CONV_2D 3x3 SAME dilation 2, fused RELU6',
  single((g) => {
    const x = g.input([1, 6, 7, 3], q(0.08, 0));
    const ws = [0.02, 0.011, 0.03];
    return depthwise(g, x, { dil: 2, act: 'RELU6', wScales: ws, out: q(0.027, -128) });
  }));

// FULLY_CONNECTED
add('fully_connected_bias', 'FULLY_CONNECTED [3,16] x [8,16]^T with int32 bias, per-tensor weights',
  single((g) => fc(g, g.input([3, 16], q(0.06, -9)), { units: 8, wScale: 0.012, out: q(accScale(0.06, 0.012, 16), 3) })));
add('fully_connected_no_bias_relu', 'FULLY_CONNECTED without bias (-1), fused RELU',
  single((g) => fc(g, g.input([2, 20], q(0.045, 6)), { units: 6, bias: false, act: 'RELU', wScale: 0.02, out: q(accScale(0.045, 0.02, 20, 2), -128) })));
add('fully_connected_keep_num_dims', 'FULLY_CONNECTED on [1,3,12] with keep_num_dims',
  single((g) => fc(g, g.input([1, 3, 12], q(0.05, 0)), { units: 5, keep: true, wScale: 0.017, out: q(accScale(0.05, 0.017, 12, 1.5), -4) })));
add('fully_connected_uint8', 'uint8 FULLY_CONNECTED, weights zero point 125',
  single((g) => fc(g, g.input([2, 16], q(0.03, 120), { dtype: 'uint8' }), { units: 4, wScale: 0.01, out: q(accScale(0.03, 0.01, 16), 130) })));

// BATCH_MATMUL
add('batch_matmul_rank3', 'BATCH_MATMUL [2,3,8] x [2,8,5], both inputs int8 graph inputs',
  single((g) => {
    const a = g.input([2, 3, 8], q(0.05, -4));
    const b = g.input([2, 8, 5], q(0.04, 0));
    return g.op('BATCH_MATMUL', [a, b], [2, 3, 5], q(accScale(0.05, 0.04, 8, 2), 3), { adj_x: false, adj_y: false }, { version: 2 });
  }));
add('batch_matmul_adj_y', 'BATCH_MATMUL [1,4,6] x [1,5,6]^T (adj_y)',
  single((g) => {
    const a = g.input([1, 4, 6], q(0.03, 7));
    const b = g.input([1, 5, 6], q(0.06, 0));
    return g.op('BATCH_MATMUL', [a, b], [1, 4, 5], q(accScale(0.03, 0.06, 6, 2), -1), { adj_x: false, adj_y: true }, { version: 2 });
  }));

// ADD / SUB / MUL
add('add_different_scales', 'ADD of two [1,4,4,3] inputs with different scales and zero points; output saturates',
  single((g) => binary(g, 'ADD', g.input([1, 4, 4, 3], q(0.05, -3)), g.input([1, 4, 4, 3], q(0.02, 10)), q(0.06, 2))));
add('add_broadcast_relu6', 'ADD [1,4,4,3] + [3] broadcast, fused RELU6',
  single((g) => binary(g, 'ADD', g.input([1, 4, 4, 3], q(0.04, 0)), g.input([3], q(0.03, -20)), q(0.03, -128), 'RELU6')));
add('add_uint8', 'uint8 ADD with different scales',
  single((g) => binary(g, 'ADD', g.input([2, 10], q(0.02, 128), { dtype: 'uint8' }), g.input([2, 10], q(0.05, 100), { dtype: 'uint8' }), q(0.06, 125))));
add('sub_different_scales', 'SUB of two inputs with different scales',
  single((g) => binary(g, 'SUB', g.input([2, 3, 8], q(0.03, 5)), g.input([2, 3, 8], q(0.05, -12)), q(0.07, -1))));
add('sub_broadcast_lhs_relu', 'SUB [1,1,8] - [2,3,8] (broadcast lhs), fused RELU',
  single((g) => binary(g, 'SUB', g.input([1, 1, 8], q(0.04, 0)), g.input([2, 3, 8], q(0.035, 3)), q(0.03, -128), 'RELU')));
add('mul_different_scales', 'MUL of two inputs with different scales, multiplier < 1',
  single((g) => binary(g, 'MUL', g.input([1, 4, 4, 3], q(0.05, -3)), g.input([1, 4, 4, 3], q(0.02, 10)), q(0.05, 4))));
add('mul_broadcast', 'MUL [1,4,4,3] * [1,1,3] broadcast',
  single((g) => binary(g, 'MUL', g.input([1, 4, 4, 3], q(0.04, 1)), g.input([1, 1, 3], q(0.03, 0)), q(0.02, -6))));
add('mul_multiplier_gt1', 'MUL with input1*input2/output scale 2 (> 1): most elements saturate',
  single((g) => binary(g, 'MUL', g.input([3, 7], q(0.5, 0)), g.input([3, 7], q(0.4, 2)), q(0.1, 0))));

// Pools
add('average_pool_2d_same_3x3_s2', 'AVERAGE_POOL_2D 3x3 SAME stride 2 on 7x7 (edge windows count only valid cells)',
  single((g) => pool(g, 'AVERAGE_POOL_2D', g.input([1, 7, 7, 3], q(0.05, -7)), { f: 3, stride: 2, padding: 'SAME' })));
add('average_pool_2d_valid_2x2', 'AVERAGE_POOL_2D 2x2 VALID stride 2 (rounding of .5 averages)',
  single((g) => pool(g, 'AVERAGE_POOL_2D', g.input([1, 6, 6, 2], q(0.03, 4)), { f: 2, stride: 2, padding: 'VALID' })));
add('average_pool_2d_relu6_uint8', 'uint8 AVERAGE_POOL_2D 3x3 SAME stride 1, fused RELU6',
  single((g) => pool(g, 'AVERAGE_POOL_2D', g.input([1, 5, 5, 2], q(0.05, 100), { dtype: 'uint8' }), { f: 3, stride: 1, padding: 'SAME', act: 'RELU6' })));
add('max_pool_2d_same_3x3_s2', 'MAX_POOL_2D 3x3 SAME stride 2 on 7x7',
  single((g) => pool(g, 'MAX_POOL_2D', g.input([1, 7, 7, 3], q(0.05, -7)), { f: 3, stride: 2, padding: 'SAME' })));
add('max_pool_2d_valid_2x2_relu', 'MAX_POOL_2D 2x2 VALID stride 2, fused RELU (clamp at the zero point)',
  single((g) => pool(g, 'MAX_POOL_2D', g.input([1, 6, 6, 2], q(0.03, 4)), { f: 2, stride: 2, padding: 'VALID', act: 'RELU' })));

// MEAN
add('mean_hw_keepdims_rescale', 'MEAN over H and W (keep_dims) with an output scale and zero point different from the input',
  single((g) => g.op('MEAN', [g.input([1, 5, 5, 32], q(0.05, -3)), g.i32('axes', [1, 2])], [1, 1, 1, 32], q(0.01, 7), { keep_dims: true }, { version: 2 })));
add('mean_axis1_rescale', 'MEAN over axis 1 of a rank-3 tensor with an output scale and zero point different from the input',
  single((g) => g.op('MEAN', [g.input([3, 7, 10], q(0.05, 4)), g.i32('axes', [1])], [3, 10], q(0.02, -5), { keep_dims: false }, { version: 2 })));
add('mean_axis1_same_scale', 'MEAN over axis 1, output with the input scale and zero point',
  single((g) => g.op('MEAN', [g.input([2, 6, 5], q(0.04, 5)), g.i32('axes', [1])], [2, 5], q(0.04, 5), { keep_dims: false }, { version: 2 })));

// Activations
add('softmax_rank2_beta1', 'SOFTMAX [3,10] beta 1, output scale 1/256 zero point -128',
  single((g) => g.op('SOFTMAX', [g.input([3, 10], q(0.1, 0))], [3, 10], q(1 / 256, -128), { beta: 1 }, { version: 2 })));
add('softmax_rank4_beta0_5', 'SOFTMAX [1,2,3,16] beta 0.5, input zero point 12',
  single((g) => g.op('SOFTMAX', [g.input([1, 2, 3, 16], q(0.07, 12))], [1, 2, 3, 16], q(1 / 256, -128), { beta: 0.5 }, { version: 2 })));
add('softmax_uint8', 'uint8 SOFTMAX, output scale 1/256 zero point 0',
  single((g) => g.op('SOFTMAX', [g.input([2, 12], q(0.05, 128), { dtype: 'uint8' })], [2, 12], q(1 / 256, 0), { beta: 1 })));
add('logistic', 'LOGISTIC, input scale 0.05 zero point 10, output 1/256 zero point -128',
  single((g) => g.op('LOGISTIC', [g.input([4, 64], q(0.05, 10))], [4, 64], q(1 / 256, -128), undefined, { version: 2 })));
add('tanh', 'TANH, input scale 0.03 zero point -6, output 1/128 zero point 0',
  single((g) => g.op('TANH', [g.input([4, 64], q(0.03, -6))], [4, 64], q(1 / 128, 0), undefined, { version: 2 })));
add('hard_swish', 'HARD_SWISH, output scale and zero point different from the input',
  single((g) => g.op('HARD_SWISH', [g.input([4, 64], q(0.04, -5))], [4, 64], q(0.03, -90), {}, { version: 1 })));
add('leaky_relu_alpha_0_2', 'LEAKY_RELU alpha 0.2 with rescaling',
  single((g) => g.op('LEAKY_RELU', [g.input([4, 64], q(0.05, 3))], [4, 64], q(0.04, -40), { alpha: 0.2 }, { version: 2 })));
add('leaky_relu_alpha_0_01_same_scale', 'LEAKY_RELU alpha 0.01, output with the input scale and zero point',
  single((g) => g.op('LEAKY_RELU', [g.input([4, 32], q(0.03, -10))], [4, 32], q(0.03, -10), { alpha: 0.01 }, { version: 2 })));
add('relu', 'RELU with rescaling: output scale 0.02 zero point -128 saturates above 5.1',
  single((g) => g.op('RELU', [g.input([4, 64], q(0.05, 10))], [4, 64], q(0.02, -128), undefined, { version: 2 })));
add('relu6', 'RELU6 with rescaling: clamps at 6 (q 112)',
  single((g) => g.op('RELU6', [g.input([4, 64], q(0.07, 0))], [4, 64], q(0.025, -128), undefined, { version: 2 })));

// Data movement (output keeps the input's scale and zero point)
add('reshape', 'RESHAPE [1,4,4,3] -> [4,12]',
  single((g) => g.op('RESHAPE', [g.input([1, 4, 4, 3], q(0.05, -3)), g.i32('shape', [4, 12])], [4, 12], q(0.05, -3), { new_shape: [4, 12] })));
add('squeeze', 'SQUEEZE dims 0 and 2 of [1,6,1,5]',
  single((g) => g.op('SQUEEZE', [g.input([1, 6, 1, 5], q(0.05, -3))], [6, 5], q(0.05, -3), { squeeze_dims: [0, 2] })));
add('expand_dims', 'EXPAND_DIMS at axis 1 of [4,6]',
  single((g) => g.op('EXPAND_DIMS', [g.input([4, 6], q(0.05, -3)), g.i32('axis', [1], [])], [4, 1, 6], q(0.05, -3), {})));
add('transpose_rank4', 'TRANSPOSE [1,3,4,5] perm [0,3,1,2]',
  single((g) => g.op('TRANSPOSE', [g.input([1, 3, 4, 5], q(0.05, -3)), g.i32('perm', [0, 3, 1, 2])], [1, 5, 3, 4], q(0.05, -3), {}, { version: 2 })));
add('concatenation_same_scale', 'CONCATENATION of two int8 inputs on the channel axis (same scale and zero point)',
  single((g) => g.op('CONCATENATION', [g.input([1, 3, 3, 2], q(0.05, -3)), g.input([1, 3, 3, 4], q(0.05, -3))], [1, 3, 3, 6], q(0.05, -3),
    { axis: 3, fused_activation_function: 'NONE' }, { version: 2 })));
add('concatenation_different_scales', 'int8 CONCATENATION of inputs with different scales',
  single((g) => g.op('CONCATENATION', [g.input([2, 5], q(0.05, -3)), g.input([2, 4], q(0.1, 7))], [2, 9], q(0.08, 1),
    { axis: 1, fused_activation_function: 'NONE' }, { version: 2 })),
  { refused: 'int8 CONCATENATION requires every input to have the output scale and zero point (concatenation.cc Prepare)' });
add('concatenation_uint8_rescale', 'uint8 CONCATENATION of inputs with different scales and zero points (requantized)',
  single((g) => g.op('CONCATENATION', [g.input([2, 5], q(0.05, 128), { dtype: 'uint8' }), g.input([2, 4], q(0.1, 100), { dtype: 'uint8' })],
    [2, 9], q(0.08, 120), { axis: 1, fused_activation_function: 'NONE' })));
add('pad_zero_point', 'PAD [1,3,4,2] by [[0,0],[1,2],[2,1],[0,0]]: padding holds the zero point -17',
  single((g) => g.op('PAD', [g.input([1, 3, 4, 2], q(0.05, -17)), g.i32('paddings', [0, 0, 1, 2, 2, 1, 0, 0], [4, 2])], [1, 6, 7, 2], q(0.05, -17), {}, { version: 2 })));
add('slice', 'SLICE [2,5,6] begin [1,1,2] size [1,3,-1]',
  single((g) => g.op('SLICE', [g.input([2, 5, 6], q(0.05, -3)), g.i32('begin', [1, 1, 2]), g.i32('size', [1, 3, -1])], [1, 3, 4], q(0.05, -3), {}, { version: 2 })));
add('strided_slice', 'STRIDED_SLICE [4,6,3] begin [0,1,0] end [4,6,3] strides [2,2,1]',
  single((g) => g.op('STRIDED_SLICE', [g.input([4, 6, 3], q(0.05, -3)), g.i32('begin', [0, 1, 0]), g.i32('end', [4, 6, 3]), g.i32('strides', [2, 2, 1])],
    [2, 3, 3], q(0.05, -3), { begin_mask: 0, end_mask: 0, ellipsis_mask: 0, new_axis_mask: 0, shrink_axis_mask: 0 }, { version: 2 })));
add('gather_axis1', 'GATHER axis 1 of [3,5,4] with indices [4,0,2,2]',
  single((g) => g.op('GATHER', [g.input([3, 5, 4], q(0.05, -3)), g.i32('indices', [4, 0, 2, 2])], [3, 4, 4], q(0.05, -3), { axis: 1, batch_dims: 0 }, { version: 2 })));
add('resize_bilinear_up2x', 'RESIZE_BILINEAR 4x4 -> 8x8 (integer interpolation)',
  single((g) => resize(g, 'RESIZE_BILINEAR', g.input([1, 4, 4, 3], q(0.05, -3)), [8, 8])));
add('resize_bilinear_half_pixel', 'RESIZE_BILINEAR 5x5 -> 8x7 half_pixel_centers',
  single((g) => resize(g, 'RESIZE_BILINEAR', g.input([1, 5, 5, 2], q(0.05, -3)), [8, 7], { halfPixel: true })));
add('resize_bilinear_align_corners', 'RESIZE_BILINEAR 5x5 -> 3x4 align_corners (downscale)',
  single((g) => resize(g, 'RESIZE_BILINEAR', g.input([1, 5, 5, 2], q(0.05, -3)), [3, 4], { alignCorners: true })));
add('resize_nearest_neighbor_up2x', 'RESIZE_NEAREST_NEIGHBOR 4x4 -> 8x8',
  single((g) => resize(g, 'RESIZE_NEAREST_NEIGHBOR', g.input([1, 4, 4, 3], q(0.05, -3)), [8, 8])));
add('resize_nearest_neighbor_half_pixel', 'RESIZE_NEAREST_NEIGHBOR 5x5 -> 8x7 half_pixel_centers',
  single((g) => resize(g, 'RESIZE_NEAREST_NEIGHBOR', g.input([1, 5, 5, 2], q(0.05, -3)), [8, 7], { halfPixel: true })));

// REDUCE_MAX / REDUCE_MIN (output quantized as the input: the raw values compare alike)
add('reduce_max_axis1', 'REDUCE_MAX over axis 1 of [3,7,4]',
  single((g) => g.op('REDUCE_MAX', [g.input([3, 7, 4], q(0.05, -17)), g.i32('axes', [1])], [3, 4], q(0.05, -17), { keep_dims: false }, { version: 2 })));
add('reduce_min_hw_keepdims_uint8', 'uint8 REDUCE_MIN over H and W of [1,4,5,3] (keep_dims)',
  single((g) => g.op('REDUCE_MIN', [g.input([1, 4, 5, 3], q(0.05, 120), { dtype: 'uint8' }), g.i32('axes', [1, 2])], [1, 1, 1, 3], q(0.05, 120), { keep_dims: true }, { version: 2 })));
add('reduce_max_mismatched_quantization', 'REDUCE_MAX whose output has another scale and zero point than its input',
  single((g) => g.op('REDUCE_MAX', [g.input([3, 7], q(0.05, -17)), g.i32('axes', [1])], [3], q(0.1, 3), { keep_dims: false }, { version: 2 })),
  { refused: 'int8 REDUCE_MAX requires the output to have the input scale and zero point (reduce.cc:721, at Eval)' });

// SUM (output with its own scale: TFLite's QuantizedMeanOrSum, compute_sum)
add('sum_axis1_rescale', 'SUM over axis 1 of [3,6,4] to scale 0.3 zero point -5 (no saturation: |sum| < 6 * 6.4)',
  single((g) => g.op('SUM', [g.input([3, 6, 4], q(0.05, -17)), g.i32('axes', [1])], [3, 4], q(0.3, -5), { keep_dims: false }, { version: 2 })));
add('sum_hw_keepdims_saturating', 'SUM over H and W of [1,4,5,8] (keep_dims) to scale 0.02 zero point 10: most sums saturate',
  single((g) => g.op('SUM', [g.input([1, 4, 5, 8], q(0.05, 3)), g.i32('axes', [1, 2])], [1, 1, 1, 8], q(0.02, 10), { keep_dims: true }, { version: 2 })));
add('sum_uint8_rescale', 'uint8 SUM over axis 0 of [5,7] to scale 0.2 zero point 100',
  single((g) => g.op('SUM', [g.input([5, 7], q(0.04, 120), { dtype: 'uint8' }), g.i32('axes', [0])], [7], q(0.2, 100), { keep_dims: false }, { version: 2 })));

// Data movement added with issue 31 (TFLite copies bytes; the output keeps
// the input's scale and zero point; SPACE_TO_BATCH_ND pads with it).
const qm = q(0.05, -17);
add('pack_axis1', 'PACK two [2,3] inputs on axis 1 -> [2,2,3]',
  single((g) => g.op('PACK', [g.input([2, 3], qm), g.input([2, 3], qm)], [2, 2, 3], qm, { values_count: 2, axis: 1 }, { version: 2 })));
add('pack_mismatched_quantization', 'PACK of inputs with different scales',
  single((g) => g.op('PACK', [g.input([2, 3], qm), g.input([2, 3], q(0.1, 2))], [2, 2, 3], qm, { values_count: 2, axis: 0 }, { version: 2 })),
  { refused: 'int8 PACK requires every input to have the output scale and zero point (pack.cc Prepare)' });
add('unpack_axis1_uint8', 'uint8 UNPACK [3,4,2] on axis 1 into 4 outputs [3,2]',
  (g) => g.output(...g.opN('UNPACK', [g.input([3, 4, 2], q(0.05, 120), { dtype: 'uint8' })], [[3, 2], [3, 2], [3, 2], [3, 2]], q(0.05, 120), { num: 4, axis: 1 })));
add('split_axis0', 'SPLIT [6,4] on axis 0 into 3 outputs [2,4]',
  (g) => g.output(...g.opN('SPLIT', [g.i32('axis', [0], []), g.input([6, 4], qm)], [[2, 4], [2, 4], [2, 4]], qm, { num_splits: 3 }, { version: 2, dtype: 'int8' })));
add('split_v_axis1', 'SPLIT_V [2,7,3] on axis 1 into sizes [2,-1,1]',
  (g) => g.output(...g.opN('SPLIT_V', [g.input([2, 7, 3], qm), g.i32('size_splits', [2, -1, 1]), g.i32('axis', [1], [])], [[2, 2, 3], [2, 4, 3], [2, 1, 3]], qm,
    { num_splits: 3 }, { version: 2 })));
add('depth_to_space_b2', 'DEPTH_TO_SPACE [1,2,3,8] block 2 -> [1,4,6,2]',
  single((g) => g.op('DEPTH_TO_SPACE', [g.input([1, 2, 3, 8], qm)], [1, 4, 6, 2], qm, { block_size: 2 }, { version: 2 })));
add('space_to_depth_b2', 'SPACE_TO_DEPTH [1,4,6,3] block 2 -> [1,2,3,12]',
  single((g) => g.op('SPACE_TO_DEPTH', [g.input([1, 4, 6, 3], qm)], [1, 2, 3, 12], qm, { block_size: 2 }, { version: 2 })));
add('space_to_batch_nd_pad_zero_point', 'SPACE_TO_BATCH_ND [1,3,5,2] block [2,2] paddings [[1,0],[1,2]]: the padding holds the zero point -17',
  single((g) => g.op('SPACE_TO_BATCH_ND', [g.input([1, 3, 5, 2], qm), g.i32('block_shape', [2, 2]), g.i32('paddings', [1, 0, 1, 2], [2, 2])], [4, 2, 4, 2], qm, {}, { version: 2 })));
add('space_to_batch_nd_other_output_quantization', 'SPACE_TO_BATCH_ND [1,3,4,2] block [2,2] paddings [[0,1],[0,0]] whose output has another scale and zero point: TFLite 2.9 copies the bytes and pads with the output zero point 3',
  single((g) => g.op('SPACE_TO_BATCH_ND', [g.input([1, 3, 4, 2], qm), g.i32('block_shape', [2, 2]), g.i32('paddings', [0, 1, 0, 0], [2, 2])], [4, 2, 2, 2], q(0.1, 3), {}, { version: 2 })));
add('batch_to_space_nd_crops', 'BATCH_TO_SPACE_ND [4,2,3,3] block [2,2] crops [[0,1],[1,0]] -> [1,3,5,3]',
  single((g) => g.op('BATCH_TO_SPACE_ND', [g.input([4, 2, 3, 3], qm), g.i32('block_shape', [2, 2]), g.i32('crops', [0, 1, 1, 0], [2, 2])], [1, 3, 5, 3], qm, {}, { version: 2 })));
add('broadcast_to', 'BROADCAST_TO [3,1] -> [2,3,4]',
  single((g) => g.op('BROADCAST_TO', [g.input([3, 1], qm), g.i32('shape', [2, 3, 4])], [2, 3, 4], qm, undefined, { version: 2 })));
add('gather_nd', 'GATHER_ND of [4,3,2] at 3 index pairs -> [3,2]',
  single((g) => g.op('GATHER_ND', [g.input([4, 3, 2], qm), g.i32('indices', [1, 0, 3, 2, 0, 1], [3, 2])], [3, 2], qm, {})));
add('reverse_v2_axis1', 'REVERSE_V2 [3,4,2] on axis 1',
  single((g) => g.op('REVERSE_V2', [g.input([3, 4, 2], qm), g.i32('axis', [1])], [3, 4, 2], qm, {}, { version: 2 })));
add('mirror_pad_reflect', 'MIRROR_PAD REFLECT [2,3,4] by [[0,0],[1,1],[2,1]]',
  single((g) => g.op('MIRROR_PAD', [g.input([2, 3, 4], qm), g.i32('paddings', [0, 0, 1, 1, 2, 1], [3, 2])], [2, 5, 7], qm, { mode: 'REFLECT' }, { version: 2 })));
add('mirror_pad_symmetric_uint8', 'uint8 MIRROR_PAD SYMMETRIC [3,4] by [[2,1],[0,3]]',
  single((g) => g.op('MIRROR_PAD', [g.input([3, 4], q(0.05, 120), { dtype: 'uint8' }), g.i32('paddings', [2, 1, 0, 3], [2, 2])], [6, 7], q(0.05, 120), { mode: 'SYMMETRIC' }, { version: 2 })));
add('arg_max_int8_axis1', 'ARG_MAX of int8 [3,40] on axis 1 (ties: the first index), int32 output',
  single((g) => g.op('ARG_MAX', [g.input([3, 40], qm), g.i32('axis', [1], [])], [3], undefined, { output_type: 'INT32' }, { version: 2, dtype: 'int32' })));
add('arg_min_int8_axis0', 'ARG_MIN of int8 [50,3] on axis 0 (ties: the first index), int32 output',
  single((g) => g.op('ARG_MIN', [g.input([50, 3], qm), g.i32('axis', [0], [])], [3], undefined, { output_type: 'INT32' }, { version: 2, dtype: 'int32' })));
add('arg_max_uint8', 'ARG_MAX of uint8 [4,30] on axis 1',
  single((g) => g.op('ARG_MAX', [g.input([4, 30], q(0.05, 120), { dtype: 'uint8' }), g.i32('axis', [1], [])], [4], undefined, { output_type: 'INT32' }, { version: 1, dtype: 'int32' })));

// QUANTIZE / DEQUANTIZE
add('quantize_float_to_int8', 'QUANTIZE float32 in [-3, 3) to int8 scale 0.02 zero point 5 (saturates beyond about +-2.5)',
  single((g) => g.op('QUANTIZE', [g.input([4, 64], undefined, { dtype: 'float32', floatRange: 3 })], [4, 64], q(0.02, 5), undefined, { version: 2, dtype: 'int8' })));
add('quantize_int8_requantize_up', 'QUANTIZE int8 -> int8, scale 0.05 -> 0.03 (multiplier 1.67 > 1, saturates)',
  single((g) => g.op('QUANTIZE', [g.input([4, 64], q(0.05, -3))], [4, 64], q(0.03, 12), undefined, { version: 2 })));
add('quantize_int8_requantize_down', 'QUANTIZE int8 -> int8, scale 0.05 -> 0.11 (multiplier 0.45)',
  single((g) => g.op('QUANTIZE', [g.input([4, 64], q(0.05, -3))], [4, 64], q(0.11, -7), undefined, { version: 2 })));
add('quantize_uint8_to_int8', 'QUANTIZE uint8 (scale 0.05, zp 128) -> int8 (scale 0.05, zp 0): the uint8-to-int8 shift',
  single((g) => g.op('QUANTIZE', [g.input([4, 64], q(0.05, 128), { dtype: 'uint8' })], [4, 64], q(0.05, 0), undefined, { version: 2, dtype: 'int8' })));
add('quantize_uint8_to_int8_rescale', 'QUANTIZE uint8 (scale 0.05, zp 120) -> int8 (scale 0.04, zp -3)',
  single((g) => g.op('QUANTIZE', [g.input([4, 64], q(0.05, 120), { dtype: 'uint8' })], [4, 64], q(0.04, -3), undefined, { version: 2, dtype: 'int8' })));
add('dequantize_int8', 'DEQUANTIZE int8 (scale 0.037, zp -9) -> float32',
  single((g) => g.op('DEQUANTIZE', [g.input([4, 64], q(0.037, -9))], [4, 64], undefined, undefined, { version: 2, dtype: 'float32' })));
add('dequantize_uint8', 'DEQUANTIZE uint8 (scale 0.02, zp 130) -> float32',
  single((g) => g.op('DEQUANTIZE', [g.input([4, 64], q(0.02, 130), { dtype: 'uint8' })], [4, 64], undefined, undefined, { dtype: 'float32' })));
add('mixed_quantize_conv_dequantize', 'float32 in -> QUANTIZE -> int8 CONV_2D (per-channel, RELU) -> DEQUANTIZE -> float32 out',
  single((g) => {
    const x = g.input([1, 6, 6, 3], undefined, { dtype: 'float32', floatRange: 2 });
    const xq = g.op('QUANTIZE', [x], [1, 6, 6, 3], q(0.016, -1), undefined, { version: 2, dtype: 'int8' });
    const y = conv2d(g, xq, { cout: 4, act: 'RELU', wScales: [0.01, 0.02, 0.013, 0.007], out: q(accScale(0.016, 0.012, 27), -128) });
    return g.op('DEQUANTIZE', [y], [1, 6, 6, 4], undefined, undefined, { version: 2, dtype: 'float32' });
  }));

// Arithmetic with int8 forms in TFLite (issue 31): ABS, MAXIMUM, MINIMUM,
// SQUARED_DIFFERENCE, the comparisons (int8 operands, bool output).
const bshape = (sa, sb) => {
  const n = Math.max(sa.length, sb.length);
  return Array.from({ length: n }, (_, i) => {
    const x = sa[sa.length - n + i] ?? 1; const y = sb[sb.length - n + i] ?? 1;
    return x === 1 ? y : x;
  });
};
const binaryNoAct = (g, op, a, b, out, options = out ? {} : undefined, version = 2) => g.op(op, [a, b], bshape(g.shape(a), g.shape(b)), out, options,
  { version, dtype: out ? undefined : 'bool' });
add('abs_rescale', 'ABS with an output scale and zero point different from the input (saturates above 127 steps)',
  single((g) => g.op('ABS', [g.input([4, 64], q(0.05, 7))], [4, 64], q(0.03, -100), {}, { version: 2 })));
add('abs_same_scale', 'ABS, output with the input scale, zero point -128 (no rescale: |x - zi| + zo)',
  single((g) => g.op('ABS', [g.input([4, 32], q(0.04, -5))], [4, 32], q(0.04, -128), {}, { version: 2 })));
add('maximum_broadcast', 'MAXIMUM [2,3,8] and [8] (broadcast), one scale and zero point',
  single((g) => binaryNoAct(g, 'MAXIMUM', g.input([2, 3, 8], q(0.05, -3)), g.input([8], q(0.05, -3)), q(0.05, -3))));
add('maximum_uint8', 'uint8 MAXIMUM of two [3,10] inputs, one scale and zero point 120',
  single((g) => binaryNoAct(g, 'MAXIMUM', g.input([3, 10], q(0.02, 120), { dtype: 'uint8' }), g.input([3, 10], q(0.02, 120), { dtype: 'uint8' }), q(0.02, 120))));
add('minimum_broadcast_lhs', 'MINIMUM [1,1,6] and [2,4,6] (broadcast lhs), one scale and zero point',
  single((g) => binaryNoAct(g, 'MINIMUM', g.input([1, 1, 6], q(0.03, 4)), g.input([2, 4, 6], q(0.03, 4)), q(0.03, 4))));
add('minimum_same_shape', 'MINIMUM of two [4,16] inputs, one scale and zero point',
  single((g) => binaryNoAct(g, 'MINIMUM', g.input([4, 16], q(0.07, -20)), g.input([4, 16], q(0.07, -20)), q(0.07, -20))));
add('squared_difference_different_scales', 'SQUARED_DIFFERENCE of [2,4,8] inputs with different scales; output saturates',
  single((g) => binaryNoAct(g, 'SQUARED_DIFFERENCE', g.input([2, 4, 8], q(0.05, -3)), g.input([2, 4, 8], q(0.02, 10)), q(0.1, -128))));
add('squared_difference_broadcast', 'SQUARED_DIFFERENCE [1,4,4,3] and [3] (broadcast), output multiplier above 1',
  single((g) => binaryNoAct(g, 'SQUARED_DIFFERENCE', g.input([1, 4, 4, 3], q(0.01, 0)), g.input([3], q(0.012, -20)), q(0.004, -128))));
add('squared_difference_uint8', 'uint8 SQUARED_DIFFERENCE with different scales',
  single((g) => binaryNoAct(g, 'SQUARED_DIFFERENCE', g.input([3, 10], q(0.02, 128), { dtype: 'uint8' }), g.input([3, 10], q(0.03, 100), { dtype: 'uint8' }), q(0.5, 3))),
  { refused: 'TFLite 2.9 SQUARED_DIFFERENCE has no uint8 kernel ("SquaredDifference only supports FLOAT32 and INT32 now, got 3"; int8 is supported)' });
for (const [op, lname] of [['EQUAL', 'equal'], ['NOT_EQUAL', 'not_equal'], ['GREATER', 'greater'], ['GREATER_EQUAL', 'greater_equal'], ['LESS', 'less'], ['LESS_EQUAL', 'less_equal']]) {
  add(`${lname}_different_scales`, `${op} of int8 [4,16] inputs with different scales and zero points (both sides rescaled) -> bool`,
    single((g) => binaryNoAct(g, op, g.input([4, 16], q(0.05, -3)), g.input([4, 16], q(0.1, 60)))));
  add(`${lname}_broadcast_same_scale`, `${op} of int8 [2,3,8] and [8] (broadcast), one scale, different zero points -> bool`,
    single((g) => binaryNoAct(g, op, g.input([2, 3, 8], q(0.02, 5)), g.input([8], q(0.02, -1)))));
}
// Scales this small leave (x - zp) * 2^8 * scale a few integer steps, so the
// rescaled operands often tie (TFLite's precision, not the real values').
for (const [op, lname] of [['EQUAL', 'equal'], ['NOT_EQUAL', 'not_equal'], ['GREATER_EQUAL', 'greater_equal']]) {
  add(`${lname}_tiny_scales`, `${op} of int8 [8,16] inputs with scales 0.0002 and 0.0003: the rescaled operands tie often -> bool`,
    single((g) => binaryNoAct(g, op, g.input([8, 16], q(0.0002, 0)), g.input([8, 16], q(0.0003, 10)))));
}
add('rsqrt_rescale', 'RSQRT, input zero point -128 (every input >= 0), output scale 0.03 zero point -100 (saturates for small inputs)',
  single((g) => g.op('RSQRT', [g.input([4, 64], q(0.05, -128))], [4, 64], q(0.03, -100), undefined, { version: 2 })));
add('rsqrt_wide_output', 'RSQRT, input scale 0.02 zero point -128, output scale 0.1 zero point -128',
  single((g) => g.op('RSQRT', [g.input([4, 64], q(0.02, -128))], [4, 64], q(0.1, -128), undefined, { version: 2 })));
add('prelu_alpha_per_channel_values', 'PRELU [1,4,4,3] with a constant int8 alpha [1,1,3] (broadcast), rescaled output',
  single((g) => binaryNoAct(g, 'PRELU', g.input([1, 4, 4, 3], q(0.05, -3)), g.weights('alpha', [1, 1, 3], q(0.004, 0)), q(0.04, 5), null, 1)));
add('prelu_alpha_input', 'PRELU of [2,16] with alpha a second int8 graph input (zero point 20, alpha in about [-1.5, 0.9]); output saturates',
  single((g) => binaryNoAct(g, 'PRELU', g.input([2, 16], q(0.06, 10)), g.input([2, 16], q(0.006, 20)), q(0.03, -20), null, 1)));
add('select_v2_broadcast', 'SELECT_V2 with a bool condition [4,1] (graph input) choosing between int8 [4,8] and [8], one scale and zero point',
  single((g) => {
    const c = g.input([4, 1], undefined, { dtype: 'bool' });
    return g.op('SELECT_V2', [c, g.input([4, 8], q(0.05, -3)), g.input([8], q(0.05, -3))], [4, 8], q(0.05, -3), undefined, { version: 1, dtype: 'int8' });
  }));
add('select_uint8', 'uint8 SELECT (v1) with a bool condition [3,10] of the values\' shape, one scale and zero point 130',
  single((g) => {
    const c = g.input([3, 10], undefined, { dtype: 'bool' });
    return g.op('SELECT', [c, g.input([3, 10], q(0.02, 130), { dtype: 'uint8' }), g.input([3, 10], q(0.02, 130), { dtype: 'uint8' })], [3, 10], q(0.02, 130), undefined, { version: 1, dtype: 'uint8' });
  }));
add('div_uint8', 'uint8 DIV [3,16] / constant [3,16] (values 1..255, zero point 0: never a division by zero), different scales',
  single((g) => {
    const d = g.tensor('divisor', [3, 16], 'uint8', q(0.1, 0), randInts('div_uint8/divisor', 48, 1, 255, Uint8Array));
    return binaryNoAct(g, 'DIV', g.input([3, 16], q(0.05, 128), { dtype: 'uint8' }), d, q(0.01, 128), { fused_activation_function: 'NONE' }, 1);
  }));
add('div_uint8_broadcast_relu', 'uint8 DIV [2,3,8] / [8] (broadcast), fused RELU, output multiplier above 1',
  single((g) => binaryNoAct(g, 'DIV', g.input([2, 3, 8], q(0.1, 100), { dtype: 'uint8' }), g.input([8], q(0.02, 0), { dtype: 'uint8' }), q(0.01, 10), { fused_activation_function: 'RELU' }, 1)));
const TFLM_DIV = 'TFLite Micro\'s int8 DIV (tensorflow/lite/micro/kernels/div.cc, reference_ops::DivElementwise); TFLite 2.9 has DIV for uint8 only';
add('div_int8', 'int8 DIV [4,16] / constant [4,16] (values never the divisor zero point), output multiplier 40',
  single((g) => {
    const d = g.tensor('divisor', [4, 16], 'int8', q(0.05, -3), randInts('div_int8/divisor', 64, -2, 127, Int8Array));
    return binaryNoAct(g, 'DIV', g.input([4, 16], q(0.04, 5)), d, q(0.02, -10), { fused_activation_function: 'NONE' }, 1);
  }), { evalReference: TFLM_DIV });
add('div_int8_broadcast_relu6', 'int8 DIV [2,3,8] / constant [8] (broadcast, negative divisors too), fused RELU6',
  single((g) => {
    const d = g.tensor('divisor', [8], 'int8', q(0.01, 0), Int8Array.from([-100, -37, -5, 3, 17, 60, 99, 127]));
    return binaryNoAct(g, 'DIV', g.input([2, 3, 8], q(0.1, 0)), d, q(0.05, -128), { fused_activation_function: 'RELU6' }, 1);
  }), { evalReference: TFLM_DIV });
add('equal_uint8', 'uint8 EQUAL of [4,16] inputs with different scales and zero points -> bool',
  single((g) => binaryNoAct(g, 'EQUAL', g.input([4, 16], q(0.05, 128), { dtype: 'uint8' }), g.input([4, 16], q(0.1, 190), { dtype: 'uint8' }))));
add('less_uint8', 'uint8 LESS of [4,16] inputs with different scales and zero points -> bool',
  single((g) => binaryNoAct(g, 'LESS', g.input([4, 16], q(0.03, 100), { dtype: 'uint8' }), g.input([4, 16], q(0.04, 140), { dtype: 'uint8' }))));

// TFLite Micro operator gaps (int8c): ADD_N, CAST, FILL, ZEROS_LIKE,
// EMBEDDING_LOOKUP, CUMSUM, ELU, PADV2, DYNAMIC_UPDATE_SLICE. Where TFLite
// 2.9 has no int8 kernel the reference is int8_eval.mjs written from the
// TFLite Micro kernel named in evalReference (as div_int8).
const TFLM_ADD_N = 'TFLite Micro\'s int8 ADD_N (tensorflow/lite/micro/kernels/add_n.cc, reference_ops::AddN int8: the accumulator starts at the rescaled minus input zero point); TFLite 2.9 has ADD_N for float32 and int32 only';
const TFLM_CUMSUM = 'TFLite Micro\'s int8 CUMSUM (tensorflow/lite/micro/kernels/cumsum.cc, reference_ops::CumSum int8: the accumulator starts at the rescaled minus input zero point); TFLite 2.9 has CUMSUM for float32, int32 and int64 only';
const TFLM_ZEROS_LIKE = 'TFLite Micro\'s ZEROS_LIKE (tensorflow/lite/micro/kernels/zeros_like.cc: stored zeros for int8); TFLite 2.9 has ZEROS_LIKE for int64, int32 and float32 only';
add('add_n_int8_three_inputs', 'int8 ADD_N of three [2,3,8] inputs (scale 0.05, zero point -17) to scale 0.12 zero point 3',
  single((g) => g.op('ADD_N', [g.input([2, 3, 8], q(0.05, -17)), g.input([2, 3, 8], q(0.05, -17)), g.input([2, 3, 8], q(0.05, -17))], [2, 3, 8], q(0.12, 3))),
  { evalReference: TFLM_ADD_N });
add('add_n_int8_two_inputs_saturating', 'int8 ADD_N of two [4,16] inputs (scale 0.04, zero point 9) to scale 0.05 zero point -20: sums beyond the range saturate',
  single((g) => g.op('ADD_N', [g.input([4, 16], q(0.04, 9)), g.input([4, 16], q(0.04, 9))], [4, 16], q(0.05, -20))),
  { evalReference: TFLM_ADD_N });
const castTo = (g, x, to, outQuantization) => g.op('CAST', [x], g.shape(x), outQuantization,
  { in_data_type: TYPE_ID_OF[g.dtype(x)], out_data_type: TYPE_ID_OF[to] }, { dtype: to });
add('cast_int8_to_int32', 'CAST int8 [3,16] -> int32: the stored values (quantization not applied)',
  single((g) => castTo(g, g.input([3, 16], q(0.05, -17)), 'int32')));
add('cast_int8_to_float32', 'CAST int8 [3,16] -> float32: the stored values (not dequantized)',
  single((g) => castTo(g, g.input([3, 16], q(0.05, -17)), 'float32')));
add('cast_int32_to_int8', 'CAST int32 [4,16] in [-1000, 1000] -> int8: the low byte (static_cast wraps)',
  single((g) => castTo(g, g.input([4, 16], undefined, { dtype: 'int32', intRange: [-1000, 1000] }), 'int8', q(0.05, 0))));
add('cast_float32_to_int8', 'CAST float32 [4,16] in [-100, 100) -> int8: truncated toward zero',
  single((g) => castTo(g, g.input([4, 16], undefined, { dtype: 'float32', floatRange: 100 }), 'int8', q(0.05, 0))));
add('cast_bool_to_int8', 'CAST bool [3,10] -> int8: 0 or 1',
  single((g) => castTo(g, g.input([3, 10], undefined, { dtype: 'bool' }), 'int8', q(0.05, 0))));
add('fill_int8', 'FILL constant dims [2,3,4] with an int8 scalar graph input (stored value copied)',
  single((g) => g.op('FILL', [g.i32('dims', [2, 3, 4]), g.input([], q(0.05, -17))], [2, 3, 4], q(0.05, -17), {}, { version: 3, dtype: 'int8' })));
add('zeros_like_int8', 'ZEROS_LIKE of int8 [3,7] (zero point -17): stored zeros',
  single((g) => g.op('ZEROS_LIKE', [g.input([3, 7], q(0.05, -17))], [3, 7], q(0.05, -17))),
  { evalReference: TFLM_ZEROS_LIKE });
add('embedding_lookup_int8', 'EMBEDDING_LOOKUP ids [4,0,2,4,1] into an int8 value [5,3,4] (graph input): rows copied',
  single((g) => g.op('EMBEDDING_LOOKUP', [g.i32('ids', [4, 0, 2, 4, 1]), g.input([5, 3, 4], qm)], [5, 3, 4], qm, undefined, { version: 3, dtype: 'int8' })));
add('embedding_lookup_int8_computed_ids', 'EMBEDDING_LOOKUP with int32 ids [6] (a graph input in [0, 4]) into an int8 value [5,6]',
  single((g) => g.op('EMBEDDING_LOOKUP', [g.input([6], undefined, { dtype: 'int32', intRange: [0, 4] }), g.input([5, 6], qm)], [6, 6], qm, undefined, { version: 3, dtype: 'int8' })));
add('embedding_lookup_int8_hybrid', 'EMBEDDING_LOOKUP ids [3,1,3] into a constant int8 value [4,6] (scale 0.02, zero point 0) with a float32 output: rows dequantized',
  single((g) => g.op('EMBEDDING_LOOKUP', [g.i32('ids', [3, 1, 3]), g.weights('value', [4, 6], q(0.02, 0))], [3, 6], undefined, undefined, { version: 3, dtype: 'float32' })));
add('cumsum_int8_axis1', 'int8 CUMSUM along axis 1 of [3,9,2] (scale 0.05, zero point -17) to scale 0.2 zero point 4',
  single((g) => g.op('CUMSUM', [g.input([3, 9, 2], q(0.05, -17)), g.i32('axis', [1], [])], [3, 9, 2], q(0.2, 4), { exclusive: false, reverse: false })),
  { evalReference: TFLM_CUMSUM });
add('cumsum_int8_exclusive_reverse', 'int8 CUMSUM exclusive reverse along axis -1 of [4,11] (zero point 6) to scale 0.3 zero point -10',
  single((g) => g.op('CUMSUM', [g.input([4, 11], q(0.05, 6)), g.i32('axis', [-1], [])], [4, 11], q(0.3, -10), { exclusive: true, reverse: true })),
  { evalReference: TFLM_CUMSUM });
add('elu_int8', 'int8 ELU, input scale 0.04 zero point 10, output scale 0.03 zero point -60 (saturates above 5.6)',
  single((g) => g.op('ELU', [g.input([4, 64], q(0.04, 10))], [4, 64], q(0.03, -60))));
add('padv2_int8', 'PADV2 int8 [1,3,4,2] by [[0,0],[1,2],[2,1],[0,0]] with the constant int8 value 25 (input quantization)',
  single((g) => g.op('PADV2', [g.input([1, 3, 4, 2], qm), g.i32('paddings', [0, 0, 1, 2, 2, 1, 0, 0], [4, 2]), g.tensor('constant_values', [], 'int8', qm, Int8Array.from([25]))],
    [1, 6, 7, 2], qm, {}, { version: 2 })));
add('dynamic_update_slice_int8', 'DYNAMIC_UPDATE_SLICE int8 operand [4,6,3] with update [2,3,3] at the constant start [1,4,0] (clamped to [1,3,0])',
  single((g) => g.op('DYNAMIC_UPDATE_SLICE', [g.input([4, 6, 3], qm), g.input([2, 3, 3], qm), g.i32('start', [1, 4, 0])], [4, 6, 3], qm)));
add('dynamic_update_slice_int8_computed_start', 'DYNAMIC_UPDATE_SLICE int8 operand [5,7] with update [2,3] at a computed start (int32 graph input in [-2, 7], clamped)',
  single((g) => g.op('DYNAMIC_UPDATE_SLICE', [g.input([5, 7], qm), g.input([2, 3], qm), g.input([2], undefined, { dtype: 'int32', intRange: [-2, 7] })], [5, 7], qm)));

// TRANSPOSE_CONV int8 (per-channel weights along dimension 0, zero point 0).
function transposeConv(g, x, { cout, k, stride, padding, wScales, out, bias = true, outHW }) {
  const [n, , , cin] = g.shape(x);
  const ins = [g.i32('output_shape', [n, outHW[0], outHW[1], cout]), g.weights('filter', [cout, k, k, cin], wScales.length > 1 ? qc(wScales, 0) : q(wScales[0], 0)), x];
  if (bias) ins.push(g.bias(cout, g.quant(x).scale[0], wScales));
  return g.op('TRANSPOSE_CONV', ins, [n, outHW[0], outHW[1], cout], out, { padding, stride_w: stride, stride_h: stride }, { version: bias ? 3 : 2, dtype: 'int8' });
}
add('transpose_conv_int8_same_stride2_per_channel', 'int8 TRANSPOSE_CONV 3x3 SAME stride 2, [1,4,4,3] -> [1,8,8,4], per-channel weight scales, int32 bias',
  single((g) => transposeConv(g, g.input([1, 4, 4, 3], q(0.05, -7)), { cout: 4, k: 3, stride: 2, padding: 'SAME', wScales: [0.011, 0.02, 0.007, 0.015], out: q(accScale(0.05, 0.013, 8), 3), outHW: [8, 8] })));
add('transpose_conv_int8_valid_stride1_no_bias', 'int8 TRANSPOSE_CONV 2x2 VALID stride 1 without bias, [1,3,3,2] -> [1,4,4,3], per-tensor weights',
  single((g) => transposeConv(g, g.input([1, 3, 3, 2], q(0.04, 12)), { cout: 3, k: 2, stride: 1, padding: 'VALID', wScales: [0.02], out: q(accScale(0.04, 0.02, 6), -5), bias: false, outHW: [4, 4] })));

// Models Kiln refuses (tests/data/ops_int8_refused/<name>.tflite, written by
// every run, checked byte for byte by --check; not run on TFLite): `error` is
// the part of Kiln's one-line message tests/model/OpCaseInt8Test.cpp
// (OpCasesInt8.RefusesBadOperands) expects after "operator #0 (OP): ".
const REFUSED_DIR = path.join(repo, 'tests/data/ops_int8_refused');
export const REFUSALS = [
  { name: 'maximum_input_scale_differs', error: 'input 1 has scale 0.04 zero point -3, the output scale 0.05 zero point -3; int8 MAXIMUM / MINIMUM compare stored values',
    build: (g) => g.output(binaryNoAct(g, 'MAXIMUM', g.input([2, 8], q(0.05, -3)), g.input([2, 8], q(0.04, -3)), q(0.05, -3))) },
  { name: 'minimum_output_zero_point_differs', error: 'input 0 has scale 0.05 zero point -3, the output scale 0.05 zero point 0; int8 MAXIMUM / MINIMUM compare stored values',
    build: (g) => g.output(binaryNoAct(g, 'MINIMUM', g.input([2, 8], q(0.05, -3)), g.input([2, 8], q(0.05, -3)), q(0.05, 0))) },
  { name: 'maximum_shapes_do_not_broadcast', error: 'broadcast',
    build: (g) => g.output(g.op('MAXIMUM', [g.input([2, 3], q(0.05, -3)), g.input([4], q(0.05, -3))], [2, 4], q(0.05, -3), {}, { version: 2 })) },
  { name: 'greater_input_scale_above_1', error: "input 1 has scale 1.5; TFLite's int8 comparisons take input scales below 1",
    build: (g) => g.output(binaryNoAct(g, 'GREATER', g.input([2, 8], q(0.05, -3)), g.input([2, 8], q(1.5, 0)))) },
  { name: 'select_v2_value_scale_differs', error: 'input 2 has scale 0.04 zero point -3, the output scale 0.05 zero point -3; int8 SELECT copies stored values',
    build: (g) => g.output(g.op('SELECT_V2', [g.input([2, 8], undefined, { dtype: 'bool' }), g.input([2, 8], q(0.05, -3)), g.input([2, 8], q(0.04, -3))], [2, 8], q(0.05, -3), undefined, { version: 1, dtype: 'int8' })) },
  { name: 'div_fused_tanh', error: 'fused activation TANH is not supported on int8 (supported: NONE, RELU, RELU_N1_TO_1, RELU6)',
    build: (g) => g.output(binaryNoAct(g, 'DIV', g.input([2, 8], q(0.05, 128), { dtype: 'uint8' }), g.input([2, 8], q(0.05, 0), { dtype: 'uint8' }), q(0.01, 128), { fused_activation_function: 'TANH' }, 1)) },
  { name: 'abs_float_output', error: 'the output has no int8 quantization (scale and zero point); mixed float/int8 operators are not supported',
    build: (g) => g.output(g.op('ABS', [g.input([2, 8], q(0.05, -3))], [2, 8], undefined, {}, { version: 2, dtype: 'float32' })) },
  { name: 'squared_difference_float_input', error: 'input 1 has no int8 quantization (scale and zero point); mixed float/int8 operators are not supported',
    build: (g) => g.output(binaryNoAct(g, 'SQUARED_DIFFERENCE', g.input([2, 8], q(0.05, -3)), g.input([2, 8], undefined, { dtype: 'float32' }), q(0.1, -128))) },
  { name: 'prelu_alpha_per_channel', error: 'alpha is quantized per channel',
    build: (g) => g.output(binaryNoAct(g, 'PRELU', g.input([1, 2, 2, 3], q(0.05, -3)), g.weights('alpha', [1, 1, 3], qc([0.004, 0.005, 0.006], 2)), q(0.04, 5), null, 1)) },
  { name: 'add_n_input_scale_differs', error: 'input 1 has scale 0.04 zero point -17, input 0 scale 0.05 zero point -17; int8 ADD_N adds inputs of one scale and zero point (TFLite Micro)',
    build: (g) => g.output(g.op('ADD_N', [g.input([2, 8], q(0.05, -17)), g.input([2, 8], q(0.04, -17))], [2, 8], q(0.1, 0))) },
  { name: 'cast_int8_to_bool', error: 'casts INT8 to BOOL; int8 casts supported (TFLite Micro cast.cc): INT8 to INT8, INT32, FLOAT32 and INT32, FLOAT32, BOOL to INT8',
    build: (g) => g.output(castTo(g, g.input([2, 8], q(0.05, -17)), 'bool')) },
  { name: 'zeros_like_uint8', error: 'takes UINT8 to UINT8; int8 ZEROS_LIKE supported (TFLite Micro zeros_like.cc): INT8 to INT8',
    build: (g) => g.output(g.op('ZEROS_LIKE', [g.input([2, 8], q(0.05, 128), { dtype: 'uint8' })], [2, 8], q(0.05, 128))) },
  { name: 'fill_float_value_int8_output', error: 'fills INT8 with a FLOAT32 value; int8 FILL takes an INT8 value for an INT8 output (TFLite Micro fill.cc)',
    build: (g) => g.output(g.op('FILL', [g.i32('dims', [2, 3]), g.input([], undefined, { dtype: 'float32' })], [2, 3], q(0.05, 0), {}, { dtype: 'int8' })) },
  { name: 'embedding_lookup_hybrid_zero_point', error: 'value (input 1) has scale 0.02 zero point 3; the hybrid (FLOAT32 output) EMBEDDING_LOOKUP takes one scale and zero point 0',
    build: (g) => g.output(g.op('EMBEDDING_LOOKUP', [g.i32('ids', [1, 0]), g.weights('value', [3, 4], q(0.02, 3))], [2, 4], undefined, undefined, { version: 3, dtype: 'float32' })) },
  { name: 'cumsum_int8_computed_axis', error: 'the axis (input 1) must be a constant; a computed axis is not supported',
    build: (g) => g.output(g.op('CUMSUM', [g.input([3, 4], q(0.05, -17)), g.input([], undefined, { dtype: 'int32' })], [3, 4], q(0.2, 0), { exclusive: false, reverse: false }, { dtype: 'int8' })) },
  { name: 'elu_uint8', error: "takes an INT8 input and output here (TFLite Micro's ELU: FLOAT32 or INT8)",
    build: (g) => g.output(g.op('ELU', [g.input([2, 8], q(0.05, 128), { dtype: 'uint8' })], [2, 8], q(0.05, 128))) },
  { name: 'transpose_conv_weight_zero_point', error: "the weights have a nonzero zero point; TFLite's int8 TRANSPOSE_CONV takes symmetric weights (zero point 0)",
    build: (g) => g.output(g.op('TRANSPOSE_CONV', [g.i32('output_shape', [1, 4, 4, 2]), g.weights('filter', [2, 2, 2, 3], q(0.02, 5)), g.input([1, 2, 2, 3], q(0.05, 0))],
      [1, 4, 4, 2], q(0.1, 0), { padding: 'SAME', stride_w: 2, stride_h: 2 }, { version: 2, dtype: 'int8' })) },
  { name: 'dynamic_update_slice_update_too_large', error: 'update (input 1) [3,2] must have the rank of operand [2,4] and fit in it',
    build: (g) => g.output(g.op('DYNAMIC_UPDATE_SLICE', [g.input([2, 4], qm), g.input([3, 2], qm), g.i32('start', [0, 0])], [2, 4], qm)) },
];

function refusalModel(r) {
  const g = new QGraph(`refused/${r.name}`);
  r.build(g);
  return buildTfliteModel(g.spec());
}

function writeRefusals() {
  fs.mkdirSync(REFUSED_DIR, { recursive: true });
  for (const r of REFUSALS) fs.writeFileSync(path.join(REFUSED_DIR, `${r.name}.tflite`), refusalModel(r));
}

function checkRefusals() {
  return REFUSALS.filter((r) => {
    const f = path.join(REFUSED_DIR, `${r.name}.tflite`);
    return !fs.existsSync(f) || !refusalModel(r).equals(fs.readFileSync(f));
  }).map((r) => `ops_int8_refused/${r.name}.tflite is not what the script builds`);
}

// Cases on which the native 2.9 result differs from int8_eval.mjs's formulas:
// operator -> { maxLsb, reason }. Anything else must agree exactly.
export const KNOWN_FORMULA_DIFFERENCES = {
  BATCH_MATMUL: { maxLsb: 1, reason: 'TFLite 2.9\'s optimized int8 BatchMatMul rounds one near-tie element of batch_matmul_rank3 '
    + '(exact -21.5002 before the zero point) to -21 where MultiplyByQuantizedMultiplier gives -22; the wasm build agrees with the formula' },
};

// Evaluates case graph g with int8_eval.mjs on `inputs` and compares with
// `outputs` (typed arrays): { differing, max_abs_diff } per output, or null
// when int8_eval.mjs does not model an operator of the case.
function independentCheck(g, inputs, outputs) {
  const mine = evaluateInt8(g, inputs);
  return mine && mine.map((m, k) => compareArrays(m, outputs[k]));
}

// Problems of an independent check result: differences on operators not in
// KNOWN_FORMULA_DIFFERENCES or above their maxLsb.
function formulaProblems(operators, check) {
  if (!check) return [];
  const limits = operators.map((op) => KNOWN_FORMULA_DIFFERENCES[op]?.maxLsb).filter((x) => x !== undefined);
  return check.flatMap((d, k) => (d.differing && (!limits.length || d.max_abs_diff > Math.max(...limits))
    ? [`output ${k}: int8_eval.mjs differs from the stored reference in ${d.differing} element(s), max ${d.max_abs_diff}`] : []));
}

// ---------------------------------------------------------------- engines

const ARRAY_OF = { float32: Float32Array, int32: Int32Array, uint8: Uint8Array, int8: Int8Array, bool: Uint8Array };
const NPY_OF = { float32: '<f4', int32: '<i4', uint8: '|u1', int8: '|i1', bool: '|b1' };

function parseArgs(argv) {
  const o = { only: null, list: false, verbose: false, lib: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--only') o.only = new RegExp(argv[++i]);
    else if (a === '--list') o.list = true;
    else if (a === '--lib') o.lib = argv[++i];
    else if (a === '--check') o.check = true;
    else if (a === '--verbose' || a === '-v') o.verbose = true;
    else if (a === '-h' || a === '--help') o.help = true;
    else throw new Error(`unknown argument ${a}`);
  }
  return o;
}

function nativeLibrary(explicit) {
  const lib = explicit ?? defaultNativeLib();
  if (!fs.existsSync(lib)) {
    throw new Error(`${lib} is missing: run node tests/reference/fetch_models.mjs --bench (TFLite 2.9's C library, npm tfjs-tflite-node@0.0.2)`);
  }
  return path.resolve(lib);
}

// Returns a function running one case folder's model on its stored inputs
// on the native library (tflite_native_reference.mjs): mode 'builtin' (no
// delegate: TFLite's builtin kernels) or 'xnnpack' (delegate flags QS8|QU8).
// Outputs come back as typed arrays of the model outputs' types.
function nativeRunner(lib) {
  const exe = buildNative();
  return (dir, mode, outputs) => {
    const inputs = fs.readdirSync(dir).filter((f) => /^input_\d+\.npy$/.test(f)).sort((a, b) => parseInt(a.slice(6), 10) - parseInt(b.slice(6), 10))
      .map((f) => readNpy(path.join(dir, f)).data);
    const { outputs: bufs } = runNative({
      exe, lib, model: path.join(dir, 'model.tflite'), inputs, outputCount: outputs.length, xnnpackFlags: mode === 'xnnpack' ? 3 : null,
    });
    return bufs.map((b, k) => {
      const copy = Uint8Array.from(b);
      return { dtype: outputs[k].dtype, shape: outputs[k].shape, data: new ARRAY_OF[outputs[k].dtype](copy.buffer) };
    });
  };
}

// Element-wise comparison: count of differing elements and max |a - b|
// (integers: in LSB; float32: absolute).
function compareArrays(a, b) {
  if (a.length !== b.length) throw new Error(`length ${a.length} vs ${b.length}`);
  let count = 0; let max = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i] - b[i]);
    if (d !== 0) { count++; max = Math.max(max, d); }
  }
  return { differing: count, max_abs_diff: Number(max.toPrecision(6)) };
}

// Values of every case input: int8/uint8 over the whole range, float32 as
// float32(k * (-1 + 2u)); input K uses mulberry32(SEED + K).
function inputDataFor(g) {
  return g.inputs.map((ti, k) => {
    const t = g.tensors[ti];
    const n = numel(t.shape);
    if (t.dtype === 'float32') {
      const u = mulberry32((SEED + k) >>> 0);
      const range = g.floatInputRange[k];
      return Float32Array.from({ length: n }, () => range * (-1 + 2 * u()));
    }
    const [lo, hi] = t.dtype === 'int32' ? g.intInputRange[k] : TYPE_RANGE[t.dtype];
    return randInts((SEED + k) >>> 0, n, lo, hi, ARRAY_OF[t.dtype]);
  });
}

function inputsSource(g) {
  return {
    generator: 'mulberry32', seed: SEED, seed_of_input_k: 'seed + k',
    int8: 'floor(256*u) - 128', uint8: 'floor(256*u)', ...(g.inputs.some((t) => g.tensors[t].dtype === 'bool') ? { bool: 'floor(2*u)' } : {}),
    float32: Object.fromEntries(Object.entries(g.floatInputRange).map(([k, r]) => [k, `float32(${r} * (-1 + 2*u))`])),
    ...(Object.keys(g.intInputRange).length
      ? { int32: Object.fromEntries(Object.entries(g.intInputRange).map(([k, [lo, hi]]) => [k, `${lo} + floor(${hi - lo + 1}*u)`])) } : {}),
  };
}

// Loads the model with every operator output as a model output and checks
// the declared shapes against the interpreter's.
async function checkShapes(g) {
  const produced = g.operators.flatMap((o) => o.outputs);
  const m = createRunner(await loadTflite({ quiet: true }), buildTfliteModel({ ...g.spec(), outputs: produced }), { numThreads: 1 });
  m.outputs.forEach((t, i) => {
    const want = g.tensors[produced[i]].shape;
    if (t.shape.join(',') !== want.join(',')) throw new Error(`tensor ${g.tensors[produced[i]].name}: declared [${want}], TFLite computes [${t.shape}]`);
  });
}

const quantText = (qp) => (qp ? { scale: qp.scale.length > 1 ? qp.scale.map((s) => Number(Math.fround(s).toPrecision(7))) : Number(Math.fround(qp.scale[0]).toPrecision(7)), zero_point: qp.zeroPoint.length > 1 ? qp.zeroPoint : qp.zeroPoint[0], ...(qp.scale.length > 1 ? { quantized_dimension: qp.quantizedDimension } : {}) } : undefined);

// The graph of case c (tensors with quantization and constant data).
export function buildCase(c) {
  const g = new QGraph(c.name);
  c.build(g);
  return g;
}

// Builds case c into OUT_DIR/<name>/, runs the three engines and stores the
// native builtin-kernel outputs as output_K.npy. Returns the index entry.
async function runCase(c, native) {
  const g = buildCase(c);
  await checkShapes(g);
  const dir = path.join(OUT_DIR, c.name);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const modelFile = path.join(dir, 'model.tflite');
  fs.writeFileSync(modelFile, buildTfliteModel(g.spec()));
  const operators = g.operators.map((o) => o.op);
  // A float32 output made by DEQUANTIZE (or a hybrid EMBEDDING_LOOKUP) gets
  // "lsb": the scale of its int8 input; one made by CAST (stored integers) 1.
  const lsbOf = (ti) => {
    const producer = g.operators.find((o) => o.outputs.includes(ti));
    const scaleOfInput = (k) => Number(Math.fround(g.quant(producer.inputs[k]).scale[0]).toPrecision(9));
    if (producer?.op === 'DEQUANTIZE') return scaleOfInput(0);
    if (producer?.op === 'EMBEDDING_LOOKUP') return scaleOfInput(1);
    return producer?.op === 'CAST' ? 1 : undefined;
  };
  const describe = (ti) => ({
    name: g.tensors[ti].name, shape: g.tensors[ti].shape, dtype: g.tensors[ti].dtype,
    quantization: quantText(g.tensors[ti].quantization), lsb: g.tensors[ti].dtype === 'float32' ? lsbOf(ti) : undefined,
  });
  const meta = await runReference({
    model: modelFile, seed: SEED, out: dir, quiet: true, inputData: inputDataFor(g), inputsSource: inputsSource(g),
    extraMeta: { case: { name: c.name, description: c.desc, operators, inputs: g.inputs.map(describe), outputs: g.outputs.map(describe) } },
  });
  const wasm = meta.outputs.map((t) => readNpy(path.join(dir, t.file)));
  const builtin = native(dir, 'builtin', meta.outputs);
  // The native XNNPACK run only tells where differences come from; TFLite
  // 2.9's delegate fails to prepare some uint8 nodes (then it has no result).
  let xnn = null; let xnnError;
  try {
    xnn = native(dir, 'xnnpack', meta.outputs);
  } catch (e) {
    xnnError = String(e.message).split('\n').find((l) => /ERROR/.test(l))?.replace(/^ERROR:\s*/, '').trim() ?? String(e.message);
  }
  const engines = meta.outputs.map((t, k) => {
    return {
      output: k,
      wasm_vs_native: compareArrays(wasm[k].data, builtin[k].data),
      native_xnnpack_vs_native: xnn ? compareArrays(xnn[k].data, builtin[k].data) : { error: xnnError },
      wasm_vs_native_xnnpack: xnn ? compareArrays(wasm[k].data, xnn[k].data) : { error: xnnError },
    };
  });
  // The stored reference: the native builtin kernels. The wasm output is kept
  // as wasm_output_K.npy where it differs (no test reads it).
  meta.outputs.forEach((t, k) => {
    if (engines[k].wasm_vs_native.differing) fs.renameSync(path.join(dir, t.file), path.join(dir, `wasm_${t.file}`));
    writeNpy(path.join(dir, t.file), builtin[k].data, t.shape, NPY_OF[t.dtype]);
  });
  const check = independentCheck(g, inputDataFor(g), builtin.map((b) => b.data));
  const full = {
    ...meta,
    independent_check: check
      ? { engine: 'tests/reference/int8_eval.mjs (TFLite integer formulas)', comparison: check }
      : 'not modelled by tests/reference/int8_eval.mjs (data movement or HARD_SWISH)',
    engine: {
      name: 'TensorFlow Lite 2.9 native C library, builtin kernels (no delegate)', package: 'tfjs-tflite-node@0.0.2',
      library: 'libtensorflowlite_c.so', num_threads: 1,
    },
    reference: 'native_builtin',
    reference_engine: 'TFLite 2.9 C library (libtensorflowlite_c.so, npm tfjs-tflite-node@0.0.2), builtin kernels, no delegate, 1 thread (tests/reference/tflite_native.c)',
    engines: {
      wasm: `${meta.engine.name} ${meta.engine.package} (XNNPACK QS8/QU8)`,
      native: 'TFLite 2.9 C library, builtin kernels',
      native_xnnpack: 'TFLite 2.9 C library + XNNPACK delegate, flags QS8|QU8',
      comparison: engines,
      known_differences: Object.fromEntries(operators.filter((op) => KNOWN_ENGINE_DIFFERENCES[op]).map((op) => [op, KNOWN_ENGINE_DIFFERENCES[op]])),
    },
  };
  fs.writeFileSync(path.join(dir, 'meta.json'), `${prettyJson(full)}\n`);
  return {
    name: c.name, description: c.desc, operators,
    inputs: g.inputs.map(describe), outputs: g.outputs.map(describe),
    independent_check: check ?? 'not modelled',
    wasm_vs_native: engines.map((e) => e.wasm_vs_native),
    native_xnnpack_vs_native: engines.map((e) => e.native_xnnpack_vs_native),
    bytes: fs.readdirSync(dir).reduce((s, f) => s + fs.statSync(path.join(dir, f)).size, 0),
  };
}

// A case whose operator TFLite 2.9 has no kernel for (c.evalReference says
// which TFLite Micro kernel int8_eval.mjs follows): output_K.npy is
// int8_eval.mjs's result; TFLite 2.9 is run only to record its refusal (a
// run that succeeds fails the script: use the native reference then).
function runEvalCase(c, native) {
  const g = buildCase(c);
  const dir = path.join(OUT_DIR, c.name);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'model.tflite'), buildTfliteModel(g.spec()));
  const inputs = inputDataFor(g);
  inputs.forEach((d, k) => { const t = g.tensors[g.inputs[k]]; writeNpy(path.join(dir, `input_${k}.npy`), d, t.shape, NPY_OF[t.dtype]); });
  const outputs = evaluateInt8(g, inputs);
  const outs = g.outputs.map((ti) => ({ dtype: g.tensors[ti].dtype, shape: g.tensors[ti].shape }));
  outputs.forEach((d, k) => writeNpy(path.join(dir, `output_${k}.npy`), d, outs[k].shape, NPY_OF[outs[k].dtype]));
  let tflite;
  try {
    native(dir, 'builtin', outs);
  } catch (e) {
    tflite = String(e.message).split('\n').filter((l) => /ERROR|failed/i.test(l) && !/tflite_native:/.test(l))
      .map((l) => l.replace(/^.*?ERROR:\s*/, '').trim()).join(' | ') || 'fails';
  }
  if (!tflite) throw new Error(`TFLite 2.9 runs ${c.name}: give it the native reference`);
  const describe = (ti) => ({ name: g.tensors[ti].name, shape: g.tensors[ti].shape, dtype: g.tensors[ti].dtype, quantization: quantText(g.tensors[ti].quantization) });
  const operators = g.operators.map((o) => o.op);
  const check = independentCheck(g, inputs, outputs);
  const meta = {
    case: { name: c.name, description: c.desc, operators, inputs: g.inputs.map(describe), outputs: g.outputs.map(describe) },
    inputs_source: inputsSource(g),
    reference: 'int8_eval',
    reference_engine: `tests/reference/int8_eval.mjs, written from ${c.evalReference}`,
    tflite_2_9: `refuses: ${tflite}`,
    independent_check: { engine: 'tests/reference/int8_eval.mjs (the reference itself)', comparison: check },
  };
  fs.writeFileSync(path.join(dir, 'meta.json'), `${prettyJson(meta)}\n`);
  return {
    name: c.name, description: c.desc, operators, inputs: meta.case.inputs, outputs: meta.case.outputs, reference: 'int8_eval', tflite_2_9: meta.tflite_2_9,
    independent_check: check, wasm_vs_native: [], native_xnnpack_vs_native: [],
    bytes: fs.readdirSync(dir).reduce((n, f) => n + fs.statSync(path.join(dir, f)).size, 0),
  };
}

// Differences above 1 LSB, or on an operator not in KNOWN_ENGINE_DIFFERENCES.
function engineProblems(entry) {
  const out = [];
  entry.wasm_vs_native.forEach((d, k) => {
    const isFloat = entry.outputs[k].dtype === 'float32';
    if (!d.differing) return;
    const limits = entry.operators.map((op) => KNOWN_ENGINE_DIFFERENCES[op]?.maxLsb).filter((x) => x !== undefined);
    const lsb = isFloat ? entry.outputs[k].lsb : 1;
    if (!limits.length || d.max_abs_diff > Math.max(...limits) * lsb) out.push(`output ${k}: wasm differs from native in ${d.differing} element(s), max ${d.max_abs_diff}${isFloat ? '' : ' LSB'}`);
  });
  return out;
}

// The sparse_* folders are make_sparse_cases.mjs's (sparse weights): neither
// checked nor removed here.
const writtenElsewhere = (name) => name.startsWith('sparse_');

// --check: re-derives the stored data without TFLite (no npm packages, no
// native library): every case folder's model.tflite and inputs must be what
// this script builds, and every output of a case int8_eval.mjs models must
// equal its evaluation (up to KNOWN_FORMULA_DIFFERENCES). Returns failures.
function checkStored() {
  const failures = [];
  const folders = fs.readdirSync(OUT_DIR, { withFileTypes: true }).filter((e) => e.isDirectory() && !writtenElsewhere(e.name)).map((e) => e.name);
  const expected = CASES.filter((c) => !c.refused).map((c) => c.name);
  for (const name of expected.filter((n) => !folders.includes(n))) failures.push(`${name}: folder missing`);
  for (const name of folders.filter((n) => !expected.includes(n))) failures.push(`${name}: no such case`);
  let evaluated = 0;
  for (const c of CASES.filter((k) => !k.refused && folders.includes(k.name))) {
    const dir = path.join(OUT_DIR, c.name);
    const g = buildCase(c);
    if (!buildTfliteModel(g.spec()).equals(fs.readFileSync(path.join(dir, 'model.tflite')))) failures.push(`${c.name}: model.tflite is not what the script builds`);
    const inputs = g.inputs.map((_, k) => readNpy(path.join(dir, `input_${k}.npy`)).data);
    inputDataFor(g).forEach((want, k) => { if (compareArrays(want, inputs[k]).differing) failures.push(`${c.name}: input_${k}.npy differs from the generator`); });
    const outputs = g.outputs.map((_, k) => readNpy(path.join(dir, `output_${k}.npy`)).data);
    const check = independentCheck(g, inputs, outputs);
    if (check) evaluated++;
    for (const p of formulaProblems(g.operators.map((o) => o.op), check)) failures.push(`${c.name}: ${p}`);
  }
  console.log(`${folders.length} stored case(s) checked, ${evaluated} re-derived by int8_eval.mjs`);
  return failures;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  if (o.help) {
    console.log('usage: node tests/reference/make_int8_cases.mjs [--only REGEX] [--list] [--verbose] [--lib libtensorflowlite_c.so] | --check');
    return 0;
  }
  const selected = CASES.filter((c) => !o.only || o.only.test(c.name));
  if (o.list) {
    for (const c of selected) console.log(`${c.name}${c.refused ? '  [refused by TFLite, not written]' : ''}  ${c.desc}`);
    return 0;
  }
  if (o.check) {
    const problems = [...checkStored(), ...checkRefusals()];
    for (const p of problems) console.log(`FAIL ${p}`);
    return problems.length ? 1 : 0;
  }
  writeRefusals();
  const native = nativeRunner(nativeLibrary(o.lib));
  // A full run starts from no case folders (README.md stays) so that removed
  // cases disappear.
  if (!o.only && fs.existsSync(OUT_DIR)) {
    for (const e of fs.readdirSync(OUT_DIR, { withFileTypes: true })) if (e.isDirectory() && !writtenElsewhere(e.name)) fs.rmSync(path.join(OUT_DIR, e.name), { recursive: true });
  }
  fs.mkdirSync(OUT_DIR, { recursive: true });
  const index = []; const refused = []; const failures = [];
  for (const c of selected) {
    const log = [];
    setTfliteLogSink((line) => { if (!/XNNPACK delegate for CPU/.test(line)) log.push(line); });
    try {
      const entry = c.evalReference ? runEvalCase(c, native) : await runCase(c, native);
      if (c.refused) {
        failures.push(`${c.name}: expected TFLite to refuse it (${c.refused}) but it ran`);
        fs.rmSync(path.join(OUT_DIR, c.name), { recursive: true, force: true });
        continue;
      }
      index.push(entry);
      for (const p of engineProblems(entry)) failures.push(`${c.name}: ${p}`);
      for (const p of formulaProblems(entry.operators, entry.independent_check === 'not modelled' ? null : entry.independent_check)) failures.push(`${c.name}: ${p}`);
      if (o.verbose) console.error(`ok   ${c.name} wasm/native ${JSON.stringify(entry.wasm_vs_native)} xnnpack/native ${JSON.stringify(entry.native_xnnpack_vs_native)}`);
    } catch (e) {
      fs.rmSync(path.join(OUT_DIR, c.name), { recursive: true, force: true });
      resetTflite();
      const why = log.filter((l) => /ERROR/.test(l)).map((l) => l.replace(/^ERROR:\s*/, '').trim());
      const msg = [String(e.message || e).trim().split("\n").filter((l) => !/XNNPACK delegate for CPU/.test(l)).join(" "), ...why].join(" | ");
      if (c.refused) refused.push({ name: c.name, reason: c.refused, error: msg });
      else failures.push(`${c.name}: ${msg}`);
    }
  }
  setTfliteLogSink(null);
  if (!o.only) {
    const doc = {
      generator: 'tests/reference/make_int8_cases.mjs',
      reference: 'output_K.npy: TFLite 2.9 native C library, builtin integer kernels (no delegate), 1 thread',
      seed: SEED,
      comparison: 'integers compared exactly; wasm_vs_native / native_xnnpack_vs_native: differing element count and max |diff| (LSB)',
      known_engine_differences: KNOWN_ENGINE_DIFFERENCES,
      cases: index.map(({ bytes, ...e }) => e),
      refused_by_tflite: refused,
    };
    const lines = Object.entries(doc).map(([k, v]) => (Array.isArray(v)
      ? `  ${JSON.stringify(k)}: [${v.length ? `\n${v.map((e) => `    ${JSON.stringify(e)}`).join(',\n')}\n  ` : ''}]`
      : `  ${JSON.stringify(k)}: ${JSON.stringify(v)}`));
    fs.writeFileSync(path.join(OUT_DIR, 'index.json'), `{\n${lines.join(',\n')}\n}\n`);
  }
  const total = index.reduce((s, e) => s + e.bytes, 0);
  console.log(`${index.length} case(s) written to ${path.relative(process.cwd(), OUT_DIR) || OUT_DIR} (${(total / 1024).toFixed(1)} KiB)`);
  for (const e of index) {
    const diffs = e.wasm_vs_native.map((d, k) => (d.differing ? `out${k}: ${d.differing} differ, max ${d.max_abs_diff}` : null)).filter(Boolean);
    const xd = e.native_xnnpack_vs_native.map((d, k) => (d.error ? `out${k}: ${d.error}` : d.differing ? `out${k}: ${d.differing} differ, max ${d.max_abs_diff}` : null)).filter(Boolean);
    if (diffs.length || xd.length) console.log(`engines differ: ${e.name}: wasm vs native [${diffs.join('; ')}], native+xnnpack vs native [${xd.join('; ')}]`);
  }
  for (const r of refused) console.log(`refused by TFLite (as expected): ${r.name}: ${r.error}`);
  for (const f of failures) console.log(`FAIL ${f}`);
  return failures.length ? 1 : 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main();
}
