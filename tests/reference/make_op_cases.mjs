#!/usr/bin/env node
// Per-operator conformance cases for Kiln's TFLite importer.
//
//   node tests/reference/make_op_cases.mjs [--only REGEX] [--list] [--no-bad] [--bad-only] [--verbose]
//
// --only REGEX writes just the matching cases and updates their entries in
// tests/data/ops/index.json, keeping the others.
// For every case below this writes tests/data/ops/<case>/model.tflite (a tiny
// float32 model with one operator, a few with two or more), then runs it on
// the real TensorFlow Lite interpreter (tflite_reference.mjs: wasm, XNNPACK
// delegate, 1 thread) and writes input_K.npy, output_K.npy and meta.json next
// to it, plus tests/data/ops/index.json (one entry per case). It also writes
// the error-case models of tests/data/bad/ (no reference run; --bad-only
// writes just those and leaves tests/data/ops/ alone).
//
// Everything is deterministic: running it twice gives identical files.
//   - Inputs: seed 1, the generator of prng.mjs (input K: mulberry32 seeded
//     with 1 + K, x = float32(-1 + 2u) in [-1, 1)). Some cases map x through
//     a documented transform to stay where the op is defined or to reach its
//     interesting ranges (clip points of RELU6, tails of HARD_SWISH, ...):
//     value = float32(f(x)), f evaluated in double. meta.json lists the
//     transform of each such input ("inputs_source.transforms"); the C++ test
//     only needs to read input_K.npy.
//   - Constants (weights, biases, constant operands): float32 uniform in a
//     per-tensor range from mulberry32 seeded with FNV-1a("<case>/<tensor>"),
//     value = float32(lo + (hi - lo) * u). Shape-like operands are int32.
//   - Operator code versions follow TFLite's op_version.cc for these float
//     signatures (1 unless noted: DEPTHWISE dilation 2, FULLY_CONNECTED
//     keep_num_dims 5 / no-bias-input 6, TRANSPOSE_CONV with bias 3,
//     DEQUANTIZE float16 3, STRIDED_SLICE ellipsis 6, RESIZE_* 3 where
//     half_pixel_centers (or align_corners for NEAREST) is set).
//
// Each case's declared tensor shapes (all of them, intermediates included)
// are checked against the shapes the interpreter computes, and every output
// must be finite. Cases marked `refused` are variants TFLite rejects (built
// and run to confirm the refusal, never written); `quirk` ones are written
// with a note (meta.json case.quirk, index.json).
//
// The reference can be wrong: every case is also evaluated with the
// independent double-precision implementation of op_eval.mjs (from the model
// file just written and the inputs the interpreter was given). Where the two
// disagree by more than 1e-5*(1+|ref|) the case must be listed, with the
// reason, in KNOWN_REFERENCE_BUGS below: its output_K.npy is then the
// independent result, TFLite's is kept as tflite_output_K.npy, and meta.json
// and index.json say "reference": "independent" and record the discrepancy.
// An unlisted disagreement (or a listed case on which TFLite turns out
// right) fails the run. check_op_cases.mjs re-derives every stored output
// from the files on disk.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fnv1a, mulberry32, fillInput } from './prng.mjs';
import { readNpy, writeNpy } from './npy.mjs';
import { AGREEMENT_TOLERANCE, compareValues, evaluateModel } from './op_eval.mjs';
import { buildTfliteModel, toFloat16Bits } from './tflite_builder.mjs';
import { parseTflite } from './tflite_flatbuffer.mjs';
import { prettyJson, runReference } from './tflite_reference.mjs';
import { createRunner, loadTflite, resetTflite, setTfliteLogSink } from './tflite_runtime.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const OPS_DIR = path.join(repo, 'tests/data/ops');
const BAD_DIR = path.join(repo, 'tests/data/bad');
const SEED = 1;

// ---------------------------------------------------------------- helpers

const numel = (s) => s.reduce((a, b) => a * b, 1);

function randFloats(key, n, lo = -1, hi = 1) {
  const u = mulberry32(fnv1a(key));
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = lo + (hi - lo) * u();
  return out;
}

// Input transforms: x is the generated float32 in [-1, 1).
const T = {
  scale: (k) => ({ desc: `${k} * x`, range: `[-${k}, ${k})`, fn: (x) => k * x }),
  affine: (a, b) => ({ desc: `${a} + ${b} * x`, range: `[${a - b}, ${a + b})`, fn: (x) => a + b * x }),
  awayFromZero: {
    desc: 'x + (x < 0 ? -0.5 : 0.5)', range: '(-1.5, -0.5] U [0.5, 1.5)',
    fn: (x) => x + (x < 0 ? -0.5 : 0.5),
  },
  // Multiples of 0.5 (ROUND's ties) and of 0.25 (equal pairs for comparisons).
  halves: { desc: 'round(8 * x) / 2', range: '{-4, -3.5, ..., 4}', fn: (x) => Math.round(8 * x) / 2 },
  quarters: { desc: 'round(4 * x) / 4', range: '{-1, -0.75, ..., 1}', fn: (x) => Math.round(4 * x) / 4 },
  // Integers for int32 inputs.
  ints: (k) => ({ desc: `round(${k} * x)`, range: `{-${k}, ..., ${k}}`, fn: (x) => Math.round(k * x) }),
};
// The same maps for constants: [lo, hi) ranges or value functions.
const awayFromZeroConst = (v) => v + (v < 0 ? -0.5 : 0.5);

function broadcastShape(a, b) {
  const n = Math.max(a.length, b.length);
  const out = [];
  for (let i = 0; i < n; i++) {
    const x = a[a.length - n + i] ?? 1;
    const y = b[b.length - n + i] ?? 1;
    if (x !== y && x !== 1 && y !== 1) throw new Error(`cannot broadcast [${a}] with [${b}]`);
    out.push(x === 1 ? y : x);
  }
  return out;
}

const outDim = (size, k, stride, dil, padding) => {
  const ek = (k - 1) * dil + 1;
  return padding === 'SAME' ? Math.ceil(size / stride) : Math.floor((size - ek) / stride) + 1;
};

function stridedSliceShape(shape, begin, end, strides, o) {
  const bit = (m, i) => ((m ?? 0) >> i) & 1;
  const spec = [];
  for (let i = 0; i < begin.length; i++) {
    if (bit(o.ellipsis_mask, i)) {
      for (let k = 0; k < shape.length - (begin.length - 1); k++) spec.push({ s: 1, bm: 1, em: 1 });
    } else {
      spec.push({ b: begin[i], e: end[i], s: strides[i], bm: bit(o.begin_mask, i), em: bit(o.end_mask, i), sh: bit(o.shrink_axis_mask, i) });
    }
  }
  while (spec.length < shape.length) spec.push({ s: 1, bm: 1, em: 1 });
  const out = [];
  spec.forEach((d, i) => {
    if (d.sh) return;
    const D = shape[i];
    const norm = (v) => (v < 0 ? v + D : v);
    const clamp = (v, lo, hi) => Math.min(Math.max(v, lo), hi);
    let size;
    if (d.s > 0) {
      const b = d.bm ? 0 : clamp(norm(d.b), 0, D);
      const e = d.em ? D : clamp(norm(d.e), 0, D);
      size = Math.max(0, Math.ceil((e - b) / d.s));
    } else {
      const b = d.bm ? D - 1 : clamp(norm(d.b), -1, D - 1);
      const e = d.em ? -1 : clamp(norm(d.e), -1, D - 1);
      size = Math.max(0, Math.ceil((b - e) / -d.s));
    }
    out.push(size);
  });
  return out;
}

// ---------------------------------------------------------------- graph

export class Graph {
  constructor(name) {
    this.name = name;
    this.tensors = [];
    this.operators = [];
    this.inputs = [];
    this.outputs = [];
    this.transforms = {};
  }

  uniq(name) {
    if (!this.tensors.some((t) => t.name === name)) return name;
    for (let i = 1; ; i++) if (!this.tensors.some((t) => t.name === `${name}_${i}`)) return `${name}_${i}`;
  }

  tensor(name, shape, dtype = 'float32', data, extra = {}) {
    this.tensors.push({ name: this.uniq(name), shape: [...shape], dtype, ...(data ? { data } : {}), ...extra });
    return this.tensors.length - 1;
  }

  shape(i) { return this.tensors[i].shape; }

  // dtype: 'float32' (default), 'int32' or 'bool'. A transform maps the
  // generated float32 x (for int32 inputs it must give integers).
  input(shape, { name, transform, dtype = 'float32' } = {}) {
    const i = this.tensor(name ?? (this.inputs.length ? `input_${this.inputs.length}` : 'input'), shape, dtype);
    if (transform) this.transforms[this.inputs.length] = transform;
    this.inputs.push(i);
    return i;
  }

  // float32 constant: uniform [lo, hi), optionally mapped by fn.
  weights(name, shape, { lo = -1, hi = 1, fn, values } = {}) {
    const uname = this.uniq(name);
    let data = values ? Float32Array.from(values) : randFloats(`${this.name}/${uname}`, numel(shape), lo, hi);
    if (fn) data = data.map(fn);
    if (data.length !== numel(shape)) throw new Error(`${uname}: ${data.length} values for shape [${shape}]`);
    return this.tensor(uname, shape, 'float32', data);
  }

  // float16 constant (raw half bits in the buffer) for DEQUANTIZE.
  weightsF16(name, shape, { lo = -1, hi = 1 } = {}) {
    const uname = this.uniq(name);
    return this.tensor(uname, shape, 'float16', toFloat16Bits(randFloats(`${this.name}/${uname}`, numel(shape), lo, hi)));
  }

  i32(name, values, shape = [values.length]) {
    return this.tensor(name, shape, 'int32', Int32Array.from(values));
  }

  // bool constant (one byte per element, 0 or 1).
  bool(name, values, shape = [values.length]) {
    return this.tensor(name, shape, 'bool', Uint8Array.from(values, (v) => (v ? 1 : 0)));
  }

  op(op, inputs, outShape, options, { version = 1, name, dtype = 'float32' } = {}) {
    return this.opN(op, inputs, [outShape], options, { version, name, dtype })[0];
  }

  // An operator with one output per shape in outShapes (UNPACK, SPLIT):
  // returns the output tensor indices.
  opN(op, inputs, outShapes, options, { version = 1, name, dtype = 'float32' } = {}) {
    const outs = outShapes.map((s) => this.tensor(name ?? op.toLowerCase(), s, dtype));
    this.operators.push({ op, inputs, outputs: outs, ...(options ? { options } : {}), ...(version !== 1 ? { version } : {}) });
    return outs;
  }

  output(...idx) { this.outputs.push(...idx); }

  spec() {
    return { tensors: this.tensors, operators: this.operators, inputs: this.inputs, outputs: this.outputs, description: `kiln op case ${this.name}` };
  }
}

// ---------------------------------------------------------------- op helpers
// Each computes the output shape the way TFLite does and records options.

function conv2d(g, x, { cout, kh = 3, kw = kh, stride = 1, strideW, dil = 1, dilW, padding = 'SAME', act = 'NONE', bias = 'random', filterF16 = false }) {
  const [n, h, w, cin] = g.shape(x);
  const sh = stride; const sw = strideW ?? stride; const dh = dil; const dw = dilW ?? dil;
  let f = filterF16 ? g.weightsF16('filter_f16', [cout, kh, kw, cin]) : g.weights('filter', [cout, kh, kw, cin]);
  if (filterF16) f = g.op('DEQUANTIZE', [f], [cout, kh, kw, cin], {}, { version: 3, name: 'filter' });
  const ins = [x, f];
  if (bias === 'random') ins.push(g.weights('bias', [cout]));
  else if (bias === 'zero') ins.push(g.weights('bias', [cout], { values: new Float32Array(cout) }));
  else if (bias === 'f16') ins.push(g.op('DEQUANTIZE', [g.weightsF16('bias_f16', [cout])], [cout], {}, { version: 3, name: 'bias' }));
  else if (bias === 'omitted') ins.push(-1);
  else if (bias !== 'none') throw new Error(bias);
  return g.op('CONV_2D', ins, [n, outDim(h, kh, sh, dh, padding), outDim(w, kw, sw, dw, padding), cout], {
    padding, stride_w: sw, stride_h: sh, fused_activation_function: act, dilation_w_factor: dw, dilation_h_factor: dh,
  });
}

function depthwise(g, x, { mult = 1, kh = 3, kw = kh, stride = 1, dil = 1, padding = 'SAME', act = 'NONE', f16 = false }) {
  const [n, h, w, cin] = g.shape(x);
  const cout = cin * mult;
  let f; let b;
  if (f16) {
    f = g.op('DEQUANTIZE', [g.weightsF16('filter_f16', [1, kh, kw, cout])], [1, kh, kw, cout], {}, { version: 3, name: 'filter' });
    b = g.op('DEQUANTIZE', [g.weightsF16('bias_f16', [cout])], [cout], {}, { version: 3, name: 'bias' });
  } else {
    f = g.weights('filter', [1, kh, kw, cout]);
    b = g.weights('bias', [cout]);
  }
  return g.op('DEPTHWISE_CONV_2D', [x, f, b], [n, outDim(h, kh, stride, dil, padding), outDim(w, kw, stride, dil, padding), cout], {
    padding, stride_w: stride, stride_h: stride, depth_multiplier: mult, fused_activation_function: act,
    dilation_w_factor: dil, dilation_h_factor: dil,
  }, { version: dil !== 1 ? 2 : 1 });
}

function transposeConv(g, x, { cout, k = 3, stride = 1, padding = 'SAME', bias = false, out }) {
  const [n, h, w, cin] = g.shape(x);
  const oh = out ?? (padding === 'SAME' ? h * stride : (h - 1) * stride + k);
  const ow = out ?? (padding === 'SAME' ? w * stride : (w - 1) * stride + k);
  const shape = g.i32('output_shape', [n, oh, ow, cout]);
  const f = g.weights('filter', [cout, k, k, cin]);
  const ins = [shape, f, x];
  if (bias) ins.push(g.weights('bias', [cout]));
  return g.op('TRANSPOSE_CONV', ins, [n, oh, ow, cout], { padding, stride_w: stride, stride_h: stride }, { version: bias ? 3 : 1 });
}

function fc(g, x, { units, bias = 'random', keep = false, act = 'NONE', inSize }) {
  const s = g.shape(x);
  const k = inSize ?? s[s.length - 1];
  const f = g.weights('weights', [units, k]);
  const ins = [x, f];
  if (bias === 'random') ins.push(g.weights('bias', [units]));
  else if (bias === 'omitted') ins.push(-1);
  else if (bias !== 'none') throw new Error(bias);
  const outShape = keep ? [...s.slice(0, -1), units] : [numel(s) / k, units];
  const version = ins.length === 2 ? 6 : keep ? 5 : 1;
  return g.op('FULLY_CONNECTED', ins, outShape, { fused_activation_function: act, keep_num_dims: keep }, { version });
}

function batchMatmul(g, a, b, { adjX = false, adjY = false } = {}) {
  const sa = g.shape(a); const sb = g.shape(b);
  const batch = broadcastShape(sa.slice(0, -2), sb.slice(0, -2));
  const rows = adjX ? sa[sa.length - 1] : sa[sa.length - 2];
  const cols = adjY ? sb[sb.length - 2] : sb[sb.length - 1];
  return g.op('BATCH_MATMUL', [a, b], [...batch, rows, cols], { adj_x: adjX, adj_y: adjY });
}

const BINARY_WITH_ACT = new Set(['ADD', 'SUB', 'MUL', 'DIV']);
export function binary(g, op, a, b, { act } = {}) {
  const outShape = broadcastShape(g.shape(a), g.shape(b));
  const options = BINARY_WITH_ACT.has(op) ? { fused_activation_function: act ?? 'NONE' } : {};
  if (act && !BINARY_WITH_ACT.has(op)) throw new Error(`${op} has no fused activation`);
  return g.op(op, [a, b], outShape, options);
}

const NO_OPTIONS = new Set(['RELU', 'RELU6', 'RELU_N1_TO_1', 'LOGISTIC', 'TANH', 'LOG', 'SQRT', 'RSQRT',
  'FLOOR', 'CEIL', 'ROUND', 'SQUARE', 'SIN', 'COS', 'ELU', 'ZEROS_LIKE']);
export function unary(g, op, x, options) {
  return g.op(op, [x], g.shape(x), NO_OPTIONS.has(op) ? undefined : (options ?? {}));
}

function pool(g, op, x, { fh, fw = fh, stride = 1, strideW, padding, act = 'NONE' }) {
  const [n, h, w, c] = g.shape(x);
  const sw = strideW ?? stride;
  return g.op(op, [x], [n, outDim(h, fh, stride, 1, padding), outDim(w, fw, sw, 1, padding), c], {
    padding, stride_w: sw, stride_h: stride, filter_width: fw, filter_height: fh, fused_activation_function: act,
  });
}

export function reduce(g, op, x, axes, keep, { scalarAxis = false } = {}) {
  const s = g.shape(x);
  const ax = new Set(axes.map((a) => (a < 0 ? a + s.length : a)));
  const outShape = keep ? s.map((d, i) => (ax.has(i) ? 1 : d)) : s.filter((_, i) => !ax.has(i));
  const axisT = scalarAxis ? g.i32('axis', axes, []) : g.i32('axes', axes);
  return g.op(op, [x, axisT], outShape, { keep_dims: keep });
}

export function reshape(g, x, shape, { mode = 'both' } = {}) {
  const s = g.shape(x);
  const known = shape.filter((d) => d !== -1).reduce((a, b) => a * b, 1);
  const outShape = shape.map((d) => (d === -1 ? numel(s) / known : d));
  const ins = [x];
  if (mode !== 'options') ins.push(g.i32('shape', shape));
  return g.op('RESHAPE', ins, outShape, mode === 'input' ? {} : { new_shape: shape });
}

export function concat(g, xs, axis, act = 'NONE') {
  const s0 = g.shape(xs[0]);
  const a = axis < 0 ? axis + s0.length : axis;
  const outShape = [...s0];
  outShape[a] = xs.reduce((acc, x) => acc + g.shape(x)[a], 0);
  return g.op('CONCATENATION', xs, outShape, { axis, fused_activation_function: act });
}

export function pad(g, x, paddings, value) {
  const s = g.shape(x);
  const p = g.i32('paddings', paddings.flat(), [s.length, 2]);
  const outShape = s.map((d, i) => d + paddings[i][0] + paddings[i][1]);
  if (value === undefined) return g.op('PAD', [x, p], outShape, {});
  const v = g.weights('constant_value', [], { values: [value] });
  return g.op('PADV2', [x, p, v], outShape, {});
}

function resize(g, op, x, [oh, ow], { alignCorners = false, halfPixel = false } = {}) {
  const [n, , , c] = g.shape(x);
  const size = g.i32('size', [oh, ow]);
  const version = op === 'RESIZE_BILINEAR' ? (halfPixel ? 3 : 1) : (halfPixel || alignCorners ? 3 : 1);
  return g.op(op, [x, size], [n, oh, ow, c], { align_corners: alignCorners, half_pixel_centers: halfPixel }, { version });
}

// indicesTensor: a computed index tensor instead of the constant `indices`.
function gather(g, params, indices, indicesShape, axis, indicesTensor) {
  const s = g.shape(params);
  const a = axis < 0 ? axis + s.length : axis;
  const idx = indicesTensor ?? g.i32('indices', indices, indicesShape);
  return g.op('GATHER', [params, idx], [...s.slice(0, a), ...indicesShape, ...s.slice(a + 1)], { axis });
}

export function stridedSlice(g, x, begin, end, strides, masks = {}) {
  const outShape = stridedSliceShape(g.shape(x), begin, end, strides, masks);
  const b = g.i32('begin', begin); const e = g.i32('end', end); const st = g.i32('strides', strides);
  const version = masks.ellipsis_mask ? 6 : g.shape(x).length > 4 ? 4 : 1;
  return g.op('STRIDED_SLICE', [x, b, e, st], outShape, {
    begin_mask: masks.begin_mask ?? 0, end_mask: masks.end_mask ?? 0, ellipsis_mask: masks.ellipsis_mask ?? 0,
    new_axis_mask: 0, shrink_axis_mask: masks.shrink_axis_mask ?? 0,
  }, { version });
}

// ---------------------------------------------------------------- cases

export const CASES = [];
// build(g) creates the graph; desc says what the case checks.
// Flags: refused: TFLite rejects the model (built and run to confirm, never
// written); quirk: written, but the reference shows a TFLite behaviour an
// importer may not expect (listed in index.json).
function add(name, desc, build, { refused, quirk } = {}) {
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`bad case name ${name}`);
  if (CASES.some((c) => c.name === name)) throw new Error(`duplicate case ${name}`);
  CASES.push({ name, desc, build, refused, quirk });
}

// Cases on which the TFLite interpreter of tests/reference (wasm, XNNPACK
// delegate) is wrong, checked against op_eval.mjs: case name -> reason. Their
// stored reference is the independent computation. Both were first found by
// public bug reports (../shared/cases: depthwise_3x1_same_s2,
// prelu_shared_alpha_111), whose expected values op_eval.mjs reproduces.
export const KNOWN_REFERENCE_BUGS = {
  prelu_shared_alpha: 'the XNNPACK delegate of this TFLite build reads a single PRELU slope of shape [1,1,1] as 0: every negative '
    + 'input comes out as -0 instead of alpha * x (the [1,1,3], [3] and [4,4,3] slopes are right)',
  depthwise_3x1_same_s2: 'SAME padding whose computed total is negative along W (kernel width 1, stride 2 on 8: (4-1)*2+1-8 = -1, '
    + 'TFLite clamps it to 0): the interpreter returns only the bias for every output element',
  reverse_v2_two_axes: 'this TFLite build\'s REVERSE_V2 kernel handles one axis only: it logs "Current does not support more than 1 axis." '
    + 'and leaves the output unwritten (TensorFlow\'s ReverseV2 and TFLite\'s later reverse.cc, op version 3, reverse every listed axis)',
  ...Object.fromEntries(['shape_broadcast_to', 'shape_int64_broadcast_to', 'broadcast_args_shape'].map((n) => [n,
    'BROADCAST_TO whose shape is computed (a SHAPE output) has a dynamic output tensor, which TFLite allocates during Invoke; '
    + 'the wasm runner (tflite_runtime.mjs) reads every output through the view it took before Infer() and gets all zeros '
    + '(most likely this, not a kernel bug: the same BROADCAST_TO with a constant shape, broadcast_to_*, agrees)'])),
};
// Single-op case: input(s) -> op -> output.
const single = (fn) => (g) => { g.output(fn(g)); };

// CONV_2D ---------------------------------------------------------------
add('conv_2d_same', '3x3 SAME stride 1, 3->4 channels, bias, no activation',
  single((g) => conv2d(g, g.input([1, 6, 6, 3]), { cout: 4, padding: 'SAME' })));
add('conv_2d_valid_relu', '3x3 VALID stride 1, fused RELU',
  single((g) => conv2d(g, g.input([1, 6, 6, 3]), { cout: 4, padding: 'VALID', act: 'RELU' })));
add('conv_2d_same_stride2_relu6', '3x3 SAME stride 2 on 7x7 (uneven padding), fused RELU6; input x4 so outputs cross 6',
  single((g) => conv2d(g, g.input([1, 7, 7, 3], { transform: T.scale(4) }), { cout: 4, stride: 2, padding: 'SAME', act: 'RELU6' })));
add('conv_2d_valid_stride2_relu_n1_to_1', '3x3 VALID stride 2, fused RELU_N1_TO_1',
  single((g) => conv2d(g, g.input([1, 8, 8, 2]), { cout: 4, stride: 2, padding: 'VALID', act: 'RELU_N1_TO_1' })));
const TANH_QUIRK = 'fused_tanh_ignored: TFLite float kernels apply no activation for a fused TANH '
  + '(CalculateActivationRange only clamps the RELU family; XNNPACK declines the node), so the reference equals the op with activation NONE';
add('conv_2d_same_dilation2_tanh', '3x3 SAME dilation 2, fused TANH (ignored by TFLite, see quirk)',
  single((g) => conv2d(g, g.input([1, 8, 8, 2]), { cout: 3, dil: 2, padding: 'SAME', act: 'TANH' })), { quirk: TANH_QUIRK });
add('conv_2d_valid_dilation2', '3x3 VALID dilation 2 (9x9 -> 5x5)',
  single((g) => conv2d(g, g.input([1, 9, 9, 2]), { cout: 3, dil: 2, padding: 'VALID' })));
add('conv_2d_nonsquare_kernel', 'kernel 3x2 (HxW), 4 input channels, stride h1 w2, SAME',
  single((g) => conv2d(g, g.input([1, 6, 7, 4]), { cout: 5, kh: 3, kw: 2, stride: 1, strideW: 2, padding: 'SAME' })));
add('conv_2d_stride2x1_dilation1x2', 'mixed stride (h2, w1) and dilation (h1, w2), VALID, RELU',
  single((g) => conv2d(g, g.input([1, 7, 8, 3]), { cout: 2, stride: 2, strideW: 1, dil: 1, dilW: 2, padding: 'VALID', act: 'RELU' })));
add('conv_2d_1x1', 'pointwise 1x1 conv 8 -> 6 channels',
  single((g) => conv2d(g, g.input([1, 4, 4, 8]), { cout: 6, kh: 1, padding: 'VALID' })));
add('conv_2d_batch2', 'batch 2, SAME, fused RELU',
  single((g) => conv2d(g, g.input([2, 5, 5, 3]), { cout: 4, padding: 'SAME', act: 'RELU' })));
add('conv_2d_zero_bias', 'bias tensor of zeros (how converters express "no bias")',
  single((g) => conv2d(g, g.input([1, 5, 5, 3]), { cout: 4, padding: 'SAME', bias: 'zero' })));
add('conv_2d_no_bias_input', 'only 2 inputs (input, filter): no bias tensor at all',
  single((g) => conv2d(g, g.input([1, 5, 5, 3]), { cout: 4, padding: 'SAME', bias: 'none' })),
  { refused: 'CONV_2D needs a bias tensor in this TFLite (conv.cc: has_bias was not true)' });
add('conv_2d_bias_omitted', '3 inputs with bias index -1 (omitted optional input)',
  single((g) => conv2d(g, g.input([1, 5, 5, 3]), { cout: 4, padding: 'SAME', bias: 'omitted' })),
  { refused: 'CONV_2D bias may not be an omitted (-1) input' });

// DEPTHWISE_CONV_2D -----------------------------------------------------
add('depthwise_conv_2d_same', '3x3 SAME depth_multiplier 1',
  single((g) => depthwise(g, g.input([1, 6, 6, 4]), { padding: 'SAME' })));
add('depthwise_conv_2d_valid_m2', '3x3 VALID depth_multiplier 2 (3 -> 6 channels)',
  single((g) => depthwise(g, g.input([1, 6, 6, 3]), { mult: 2, padding: 'VALID' })));
add('depthwise_conv_2d_same_stride2_relu6', '3x3 SAME stride 2 on 7x7, fused RELU6; input x4',
  single((g) => depthwise(g, g.input([1, 7, 7, 4], { transform: T.scale(4) }), { stride: 2, padding: 'SAME', act: 'RELU6' })));
add('depthwise_conv_2d_valid_stride2_m2', '3x3 VALID stride 2, depth_multiplier 2',
  single((g) => depthwise(g, g.input([1, 8, 8, 2]), { mult: 2, stride: 2, padding: 'VALID' })));
add('depthwise_conv_2d_same_dilation2_relu', '3x3 SAME dilation 2, fused RELU',
  single((g) => depthwise(g, g.input([1, 8, 8, 3]), { dil: 2, padding: 'SAME', act: 'RELU' })));
add('depthwise_conv_2d_valid_dilation2_m2', '3x3 VALID dilation 2, depth_multiplier 2 (9x9 -> 5x5)',
  single((g) => depthwise(g, g.input([1, 9, 9, 2]), { mult: 2, dil: 2, padding: 'VALID' })));
add('depthwise_conv_2d_5x5_same', '5x5 SAME (BlazeFace-style), depth_multiplier 1',
  single((g) => depthwise(g, g.input([1, 8, 8, 4]), { kh: 5, padding: 'SAME' })));
// The name and tensor names match ../shared/cases/depthwise_3x1_same_s2, so
// the constants (seeded by name) and the model are the same.
add('depthwise_3x1_same_s2', 'kernel 3x1 (HxW) SAME stride 2 on [1,8,8,2]: computed total padding along W is negative (-1, clamped to 0) '
  + '(TFLite is wrong here: independent reference)',
  single((g) => depthwise(g, g.input([1, 8, 8, 2]), { kh: 3, kw: 1, stride: 2, padding: 'SAME' })));

// TRANSPOSE_CONV --------------------------------------------------------
add('transpose_conv_same_stride2', '3x3 SAME stride 2, 4x4 -> 8x8, no bias (3 inputs)',
  single((g) => transposeConv(g, g.input([1, 4, 4, 3]), { cout: 2, stride: 2, padding: 'SAME' })));
add('transpose_conv_same_stride2_bias', '3x3 SAME stride 2 with bias (4th input)',
  single((g) => transposeConv(g, g.input([1, 4, 4, 3]), { cout: 2, stride: 2, padding: 'SAME', bias: true })));
add('transpose_conv_valid_stride1', '3x3 VALID stride 1, 4x4 -> 6x6, no bias',
  single((g) => transposeConv(g, g.input([1, 4, 4, 3]), { cout: 2, stride: 1, padding: 'VALID' })));
add('transpose_conv_valid_stride1_bias', '3x3 VALID stride 1 with bias',
  single((g) => transposeConv(g, g.input([1, 4, 4, 3]), { cout: 2, stride: 1, padding: 'VALID', bias: true })));
add('transpose_conv_valid_stride2_2x2', '2x2 VALID stride 2 (3x3 -> 6x6), the usual learned upsampler, bias',
  single((g) => transposeConv(g, g.input([1, 3, 3, 4]), { cout: 3, k: 2, stride: 2, padding: 'VALID', bias: true })));
add('transpose_conv_same_stride2_out5', '3x3 SAME stride 2 with output_shape 5x5 from 3x3 (not in*stride): padding follows output_shape',
  single((g) => transposeConv(g, g.input([1, 3, 3, 2]), { cout: 2, stride: 2, padding: 'SAME', out: 5, bias: true })));

// FULLY_CONNECTED -------------------------------------------------------
add('fully_connected_2d', '[3,10] x W[6,10]^T + b',
  single((g) => fc(g, g.input([3, 10]), { units: 6 })));
add('fully_connected_bias_omitted', 'bias input index -1',
  single((g) => fc(g, g.input([3, 10]), { units: 6, bias: 'omitted' })));
add('fully_connected_no_bias_input', 'only 2 inputs (version 6)',
  single((g) => fc(g, g.input([3, 10]), { units: 6, bias: 'none' })));
add('fully_connected_3d', '[2,3,10] input, keep_num_dims false -> [6,6]',
  single((g) => fc(g, g.input([2, 3, 10]), { units: 6 })));
add('fully_connected_3d_keep_num_dims', '[2,3,10] input, keep_num_dims true -> [2,3,6]',
  single((g) => fc(g, g.input([2, 3, 10]), { units: 6, keep: true })));
add('fully_connected_relu', 'fused RELU',
  single((g) => fc(g, g.input([2, 16]), { units: 8, act: 'RELU' })));
add('fully_connected_4d_flatten', '[1,2,2,8] input with W[5,32]: implicit flatten to [1,32] -> [1,5]',
  single((g) => fc(g, g.input([1, 2, 2, 8]), { units: 5, inSize: 32 })));

// BATCH_MATMUL ----------------------------------------------------------
add('batch_matmul_rank3', '[2,3,4] x [2,4,5], both operands are inputs',
  single((g) => batchMatmul(g, g.input([2, 3, 4]), g.input([2, 4, 5]))));
add('batch_matmul_rank2', '[3,4] x [4,5]',
  single((g) => batchMatmul(g, g.input([3, 4]), g.input([4, 5]))));
add('batch_matmul_adj_x', 'adj_x: [2,4,3]^T x [2,4,5]',
  single((g) => batchMatmul(g, g.input([2, 4, 3]), g.input([2, 4, 5]), { adjX: true })));
add('batch_matmul_adj_y', 'adj_y: [2,3,4] x [2,5,4]^T',
  single((g) => batchMatmul(g, g.input([2, 3, 4]), g.input([2, 5, 4]), { adjY: true })));
add('batch_matmul_adj_x_adj_y', 'adj_x and adj_y',
  single((g) => batchMatmul(g, g.input([2, 4, 3]), g.input([2, 5, 4]), { adjX: true, adjY: true })));
add('batch_matmul_bcast_rank4_rank3', '[2,2,3,4] x [2,4,5] -> [2,2,3,5]',
  single((g) => batchMatmul(g, g.input([2, 2, 3, 4]), g.input([2, 4, 5]))));
add('batch_matmul_bcast_batch1', '[1,3,4] x [3,4,5] -> [3,3,5]',
  single((g) => batchMatmul(g, g.input([1, 3, 4]), g.input([3, 4, 5]))));
add('batch_matmul_const_rhs', '[2,3,4] x constant [2,4,5]',
  single((g) => batchMatmul(g, g.input([2, 3, 4]), g.weights('rhs', [2, 4, 5]))));
add('batch_matmul_const_rhs_rank2', '[2,3,4] x constant [4,5] (rank-2 rhs broadcast over batch)',
  single((g) => batchMatmul(g, g.input([2, 3, 4]), g.weights('rhs', [4, 5]))));

// Register-tiled kernels (kiln-register-tile-contractions) ----------------
// Channel counts and row counts that reach every edge of the register tiles
// on 4-, 8- and 16-lane targets: full column blocks run by a loop, a
// narrower power-of-two tail vector, a masked tail vector, and remainder
// rows (1-row tiles).
add('conv_2d_tile_edges', '3x3 SAME on [1,9,7,5] -> 37 channels (8-lane: 4 full vectors + masked 5; 4-lane: 9 + 1), 7 output columns, RELU',
  single((g) => conv2d(g, g.input([1, 9, 7, 5]), { cout: 37, padding: 'SAME', act: 'RELU' })));
add('conv_2d_tile_edges_stride2_dilation2', '3x3 VALID stride 2 dilation 2 on [1,13,15,6] -> 20 channels (two full 8-lane vectors + a 4-lane tail)',
  single((g) => conv2d(g, g.input([1, 13, 15, 6]), { cout: 20, stride: 2, dil: 2, padding: 'VALID' })));
add('fully_connected_tile_edges', '[13,33] x W[50,33]^T + b: 13 rows (remainder rows), 50 columns (full blocks + 2-lane tail), RELU6',
  single((g) => fc(g, g.input([13, 33]), { units: 50, act: 'RELU6' })));
add('depthwise_conv_2d_tile_edges', '3x3 SAME on [1,9,11,21] (8-lane: 2 full vectors + masked 5), 11 output columns (4-pixel blocks + remainder)',
  single((g) => depthwise(g, g.input([1, 9, 11, 21]), { padding: 'SAME' })));
add('depthwise_conv_2d_tile_edges_5x5_s2', '5x5 SAME stride 2 on [1,10,10,40] (5 full 8-lane vectors)',
  single((g) => depthwise(g, g.input([1, 10, 10, 40]), { kh: 5, stride: 2, padding: 'SAME' })));
add('batch_matmul_tile_edges', '[3,7,12] x constant [3,12,20]: 7 rows, 20 columns',
  single((g) => batchMatmul(g, g.input([3, 7, 12]), g.weights('rhs', [3, 12, 20]))));

// Binary elementwise ----------------------------------------------------
// DIV: divisor mapped away from 0 (|v| in [0.5, 1.5)); POW: base in [0.5, 1.5).
const BINARY = ['ADD', 'SUB', 'MUL', 'DIV', 'MAXIMUM', 'MINIMUM', 'SQUARED_DIFFERENCE', 'POW'];
const lhsT = (op) => (op === 'POW' ? T.affine(1, 0.5) : undefined);
const rhsT = (op) => (op === 'DIV' ? T.awayFromZero : undefined);
const rhsConst = (op) => (op === 'DIV' ? { fn: awayFromZeroConst } : {});
for (const op of BINARY) {
  const n = op.toLowerCase();
  const bin = (a, b) => single((g) => binary(g, op, g.input(a, { transform: lhsT(op) }), g.input(b, { transform: rhsT(op) })));
  add(`${n}_same_shape`, `${op} [1,4,4,3] with [1,4,4,3]`, bin([1, 4, 4, 3], [1, 4, 4, 3]));
  add(`${n}_bcast_c`, `${op} [1,4,4,3] with [3]`, bin([1, 4, 4, 3], [3]));
  add(`${n}_bcast_11c`, `${op} [1,4,4,3] with [1,1,1,3]`, bin([1, 4, 4, 3], [1, 1, 1, 3]));
  add(`${n}_bcast_w1c`, `${op} [1,4,4,3] with [4,1,3]`, bin([1, 4, 4, 3], [4, 1, 3]));
  add(`${n}_const`, `${op} [1,4,4,3] with a constant [1,1,1,3]`,
    single((g) => binary(g, op, g.input([1, 4, 4, 3], { transform: lhsT(op) }), g.weights('constant', [1, 1, 1, 3], rhsConst(op)))));
  if (['SUB', 'DIV', 'POW'].includes(op)) {
    add(`${n}_bcast_lhs`, `${op} [4,1,3] with [1,4,4,3] (the broadcast operand first)`, bin([4, 1, 3], [1, 4, 4, 3]));
  }
}
add('add_relu', 'ADD, fused RELU', single((g) => binary(g, 'ADD', g.input([1, 4, 4, 3]), g.input([1, 4, 4, 3]), { act: 'RELU' })));
add('add_relu6', 'ADD, fused RELU6; inputs x4 so sums cross 6',
  single((g) => binary(g, 'ADD', g.input([1, 4, 4, 3], { transform: T.scale(4) }), g.input([1, 4, 4, 3], { transform: T.scale(4) }), { act: 'RELU6' })));
add('add_relu_n1_to_1', 'ADD, fused RELU_N1_TO_1',
  single((g) => binary(g, 'ADD', g.input([1, 4, 4, 3]), g.input([3]), { act: 'RELU_N1_TO_1' })));
add('add_tanh', 'ADD, fused TANH (ignored by TFLite, see quirk)',
  single((g) => binary(g, 'ADD', g.input([1, 4, 4, 3]), g.input([1, 4, 4, 3]), { act: 'TANH' })), { quirk: TANH_QUIRK });
add('sub_relu6', 'SUB, fused RELU6; inputs x4',
  single((g) => binary(g, 'SUB', g.input([1, 4, 4, 3], { transform: T.scale(4) }), g.input([1, 1, 1, 3], { transform: T.scale(4) }), { act: 'RELU6' })));
add('mul_relu_n1_to_1', 'MUL, fused RELU_N1_TO_1; inputs x2',
  single((g) => binary(g, 'MUL', g.input([1, 4, 4, 3], { transform: T.scale(2) }), g.input([1, 4, 4, 3], { transform: T.scale(2) }), { act: 'RELU_N1_TO_1' })));
add('div_relu', 'DIV, fused RELU; divisor away from 0',
  single((g) => binary(g, 'DIV', g.input([1, 4, 4, 3]), g.input([1, 4, 4, 3], { transform: T.awayFromZero }), { act: 'RELU' })));
add('mul_const_scalar', 'MUL by a rank-0 constant (0.125)',
  single((g) => binary(g, 'MUL', g.input([2, 3, 4]), g.weights('scale', [], { values: [0.125] }))));
add('add_const_scalar', 'ADD a rank-0 constant (0.75)',
  single((g) => binary(g, 'ADD', g.input([2, 3, 4]), g.weights('offset', [], { values: [0.75] }))));

// Unary -----------------------------------------------------------------
add('relu', 'RELU', single((g) => unary(g, 'RELU', g.input([1, 4, 4, 3]))));
add('relu6', 'RELU6; input x8 to hit both clip points', single((g) => unary(g, 'RELU6', g.input([1, 4, 4, 3], { transform: T.scale(8) }))));
add('relu_n1_to_1', 'RELU_N1_TO_1; input x2', single((g) => unary(g, 'RELU_N1_TO_1', g.input([2, 24], { transform: T.scale(2) }))));
add('leaky_relu_alpha_0_2', 'LEAKY_RELU alpha 0.2', single((g) => unary(g, 'LEAKY_RELU', g.input([1, 4, 4, 3]), { alpha: 0.2 })));
add('leaky_relu_alpha_0_01', 'LEAKY_RELU alpha 0.01', single((g) => unary(g, 'LEAKY_RELU', g.input([2, 5, 6]), { alpha: 0.01 })));
add('prelu_per_channel', 'PRELU, constant alpha [1,1,3] (per channel) in [0, 0.5)',
  single((g) => { const x = g.input([1, 4, 4, 3]); return g.op('PRELU', [x, g.weights('alpha', [1, 1, 3], { lo: 0, hi: 0.5 })], g.shape(x)); }));
add('prelu_alpha_rank1', 'PRELU, constant alpha [3] (rank 1, per channel)',
  single((g) => { const x = g.input([1, 4, 4, 3]); return g.op('PRELU', [x, g.weights('alpha', [3], { lo: 0, hi: 0.5 })], g.shape(x)); }));
add('prelu_shared_alpha', 'PRELU, constant alpha [1,1,1] broadcast to all elements (TFLite is wrong here: independent reference)',
  single((g) => { const x = g.input([1, 4, 4, 3]); return g.op('PRELU', [x, g.weights('alpha', [1, 1, 1], { lo: 0, hi: 0.5 })], g.shape(x)); }));
add('prelu_full_alpha', 'PRELU, constant alpha [4,4,3] (one per element, broadcast over batch)',
  single((g) => { const x = g.input([1, 4, 4, 3]); return g.op('PRELU', [x, g.weights('alpha', [4, 4, 3], { lo: -0.5, hi: 0.5 })], g.shape(x)); }));
add('hard_swish', 'HARD_SWISH; input x4 to cover x < -3 and x > 3', single((g) => unary(g, 'HARD_SWISH', g.input([1, 4, 4, 3], { transform: T.scale(4) }))));
add('logistic', 'LOGISTIC; input x4', single((g) => unary(g, 'LOGISTIC', g.input([1, 4, 4, 3], { transform: T.scale(4) }))));
add('tanh', 'TANH; input x3', single((g) => unary(g, 'TANH', g.input([2, 3, 8], { transform: T.scale(3) }))));
add('exp', 'EXP; input x2', single((g) => unary(g, 'EXP', g.input([1, 4, 4, 3], { transform: T.scale(2) }))));
add('log', 'LOG; input 1.5 + 1.45x in [0.05, 2.95)', single((g) => unary(g, 'LOG', g.input([1, 4, 4, 3], { transform: T.affine(1.5, 1.45) }))));
add('neg', 'NEG', single((g) => unary(g, 'NEG', g.input([3, 7]))));
add('abs', 'ABS', single((g) => unary(g, 'ABS', g.input([1, 4, 4, 3]))));
add('sqrt', 'SQRT; input 1 + x in [0, 2)', single((g) => unary(g, 'SQRT', g.input([1, 4, 4, 3], { transform: T.affine(1, 1) }))));
add('rsqrt', 'RSQRT; input 1.1 + x in [0.1, 2.1)', single((g) => unary(g, 'RSQRT', g.input([1, 4, 4, 3], { transform: T.affine(1.1, 1) }))));

// Unary math (ROUND ties, FLOOR / CEIL of both signs) -------------------
add('floor', 'FLOOR; input x4 (both signs)', single((g) => unary(g, 'FLOOR', g.input([2, 3, 8], { transform: T.scale(4) }), undefined)));
add('ceil', 'CEIL; input x4 (both signs)', single((g) => unary(g, 'CEIL', g.input([2, 3, 8], { transform: T.scale(4) }), undefined)));
add('round', 'ROUND; input x4', single((g) => unary(g, 'ROUND', g.input([2, 3, 8], { transform: T.scale(4) }), undefined)));
add('round_ties', 'ROUND on multiples of 0.5 in [-4, 4] (ties go to the even integer: 0.5 -> 0, 1.5 -> 2, -2.5 -> -2)',
  single((g) => unary(g, 'ROUND', g.input([4, 12], { transform: T.halves }), undefined)));
add('square', 'SQUARE; input x3', single((g) => unary(g, 'SQUARE', g.input([1, 4, 4, 3], { transform: T.scale(3) }), undefined)));
add('sin', 'SIN; input x7 in [-7, 7) (range reduction by pi)', single((g) => unary(g, 'SIN', g.input([2, 4, 6], { transform: T.scale(7) }), undefined)));
add('cos', 'COS; input x7 in [-7, 7)', single((g) => unary(g, 'COS', g.input([2, 4, 6], { transform: T.scale(7) }), undefined)));
add('elu', 'ELU (alpha 1); input x3', single((g) => unary(g, 'ELU', g.input([1, 4, 4, 3], { transform: T.scale(3) }), undefined)));
add('zeros_like', 'ZEROS_LIKE of a float32 input', single((g) => unary(g, 'ZEROS_LIKE', g.input([2, 5]), undefined)));
add('zeros_like_int32', 'ZEROS_LIKE of an int32 input (int32 output)',
  single((g) => g.op('ZEROS_LIKE', [g.input([3, 4], { dtype: 'int32' })], [3, 4], undefined, { dtype: 'int32' })));

// Comparisons (bool outputs) ----------------------------------------------
// Inputs are quantized to quarters (T.quarters) so that equal pairs occur.
const compare = (g, op, a, b) => g.op(op, [a, b], broadcastShape(g.shape(a), g.shape(b)), undefined, { dtype: 'bool' });
for (const op of ['EQUAL', 'NOT_EQUAL', 'GREATER', 'GREATER_EQUAL', 'LESS', 'LESS_EQUAL']) {
  const name = op.toLowerCase();
  add(name, `${op} of two float32 [2,3,4] inputs on quarters (ties occur), bool output`,
    single((g) => compare(g, op, g.input([2, 3, 4], { transform: T.quarters }), g.input([2, 3, 4], { transform: T.quarters }))));
  add(`${name}_bcast`, `${op}, [2,3,4] against a [3,1] input (broadcast both ways: rank and size 1)`,
    single((g) => compare(g, op, g.input([2, 3, 4], { transform: T.quarters }), g.input([3, 1], { transform: T.quarters }))));
}
add('less_const_scalar', 'LESS of an input and a constant scalar 0.25',
  single((g) => compare(g, 'LESS', g.input([2, 7], { transform: T.quarters }), g.weights('threshold', [], { values: [0.25] }))));
add('greater_int32', 'GREATER of two int32 inputs in -4..4, [2,6] against [6]',
  single((g) => compare(g, 'GREATER', g.input([2, 6], { dtype: 'int32', transform: T.ints(4) }), g.input([6], { dtype: 'int32', transform: T.ints(4) }))));
add('equal_int32', 'EQUAL of two int32 inputs in -2..2',
  single((g) => compare(g, 'EQUAL', g.input([3, 5], { dtype: 'int32', transform: T.ints(2) }), g.input([3, 5], { dtype: 'int32', transform: T.ints(2) }))));
add('not_equal_bool', 'NOT_EQUAL of two bool inputs, [2,4] against [4]',
  single((g) => compare(g, 'NOT_EQUAL', g.input([2, 4], { dtype: 'bool' }), g.input([4], { dtype: 'bool' }))));

// Logical ------------------------------------------------------------------
add('logical_and', 'LOGICAL_AND of bool [2,3,4] and [4] inputs',
  single((g) => compare(g, 'LOGICAL_AND', g.input([2, 3, 4], { dtype: 'bool' }), g.input([4], { dtype: 'bool' }))));
add('logical_or', 'LOGICAL_OR of bool [2,3,4] and [3,1] inputs',
  single((g) => compare(g, 'LOGICAL_OR', g.input([2, 3, 4], { dtype: 'bool' }), g.input([3, 1], { dtype: 'bool' }))));
add('logical_not', 'LOGICAL_NOT of a bool input',
  single((g) => g.op('LOGICAL_NOT', [g.input([3, 5], { dtype: 'bool' })], [3, 5], undefined, { dtype: 'bool' })));
add('chain_compare_logical', 'GREATER and LESS combined by LOGICAL_AND, negated by LOGICAL_NOT (x outside [-0.5, 0.25])',
  single((g) => {
    const x = g.input([2, 3, 4], { transform: T.quarters });
    const inside = compare(g, 'LOGICAL_AND', compare(g, 'GREATER_EQUAL', x, g.weights('lo', [], { values: [-0.5] })),
      compare(g, 'LESS_EQUAL', x, g.weights('hi', [], { values: [0.25] })));
    return g.op('LOGICAL_NOT', [inside], g.shape(inside), undefined, { dtype: 'bool' });
  }));

// Select -------------------------------------------------------------------
const select2 = (g, c, x, y, dtype = 'float32') => g.op('SELECT_V2', [c, x, y],
  broadcastShape(broadcastShape(g.shape(c), g.shape(x)), g.shape(y)), undefined, { dtype });
add('select_v2', 'SELECT_V2 with a bool input condition, float32 inputs of one shape',
  single((g) => select2(g, g.input([2, 3, 4], { dtype: 'bool' }), g.input([2, 3, 4]), g.input([2, 3, 4]))));
add('select_v2_bcast', 'SELECT_V2 broadcasting all three: condition [3,1], x [2,3,4], y constant [4]',
  single((g) => select2(g, g.input([3, 1], { dtype: 'bool' }), g.input([2, 3, 4]), g.weights('y', [4]))));
add('select_v2_from_greater', 'GREATER(a, b) then SELECT_V2(cond, a, b): max of a and b',
  single((g) => { const a = g.input([2, 6]); const b = g.input([2, 6]); return select2(g, compare(g, 'GREATER', a, b), a, b); }));
add('select_v2_int32', 'SELECT_V2 of int32 values, bool condition [4] broadcast to [2,4]',
  single((g) => select2(g, g.input([4], { dtype: 'bool' }), g.input([2, 4], { dtype: 'int32', transform: T.ints(9) }),
    g.input([2, 4], { dtype: 'int32', transform: T.ints(9) }), 'int32')));
add('select_v2_const_cond', 'SELECT_V2 with a constant bool condition [4]',
  single((g) => select2(g, g.bool('mask', [1, 0, 0, 1]), g.input([3, 4]), g.input([3, 4]))));
add('select_rank1_cond', 'SELECT (v1) with a rank-1 condition [2] choosing rows of [2,3] values',
  single((g) => g.op('SELECT', [g.input([2], { dtype: 'bool' }), g.input([2, 3]), g.input([2, 3])], [2, 3])));

// Cast -------------------------------------------------------------------
const TYPE_CODE = { float32: 0, int32: 2, bool: 6 };
const cast = (g, x, to) => g.op('CAST', [x], g.shape(x), { in_data_type: TYPE_CODE[g.tensors[x].dtype], out_data_type: TYPE_CODE[to] }, { dtype: to });
add('cast_f32_to_i32', 'CAST float32 -> int32 truncates toward zero; input x6 (both signs)',
  single((g) => cast(g, g.input([3, 8], { transform: T.scale(6) }), 'int32')));
add('cast_i32_to_f32', 'CAST int32 -> float32; input in -100..100',
  single((g) => cast(g, g.input([3, 8], { dtype: 'int32', transform: T.ints(100) }), 'float32')));
add('cast_f32_to_bool', 'CAST float32 -> bool (x != 0); input on quarters, zeros included',
  single((g) => cast(g, g.input([3, 8], { transform: T.quarters }), 'bool')));
add('cast_bool_to_f32', 'CAST bool -> float32 (0 or 1)', single((g) => cast(g, g.input([3, 8], { dtype: 'bool' }), 'float32')));
add('cast_bool_to_i32', 'CAST bool -> int32 (0 or 1)', single((g) => cast(g, g.input([3, 8], { dtype: 'bool' }), 'int32')));
add('cast_i32_to_bool', 'CAST int32 -> bool; input in -2..2', single((g) => cast(g, g.input([3, 8], { dtype: 'int32', transform: T.ints(2) }), 'bool')));
add('chain_less_cast_mul', 'LESS -> CAST to float32 -> MUL: x * (x < 0.25), a mask as converters emit it',
  single((g) => {
    const x = g.input([2, 3, 4]);
    const mask = cast(g, compare(g, 'LESS', x, g.weights('threshold', [], { values: [0.25] })), 'float32');
    return binary(g, 'MUL', x, mask);
  }));

// Floor division and remainder (negative operands) --------------------------
add('floor_div', 'FLOOR_DIV float32: input x4 by a constant [4] in +-(0.5..1.5) (negative quotients round down)',
  single((g) => g.op('FLOOR_DIV', [g.input([2, 3, 4], { transform: T.scale(4) }), g.weights('divisor', [4], { fn: awayFromZeroConst })], [2, 3, 4], undefined, { version: 2 })));
add('floor_div_int32', 'FLOOR_DIV int32: input in -20..20 by a constant [5] of -7, -3, 2, 5, 1',
  single((g) => g.op('FLOOR_DIV', [g.input([3, 5], { dtype: 'int32', transform: T.ints(20) }), g.i32('divisor', [-7, -3, 2, 5, 1])], [3, 5], undefined, { dtype: 'int32' })));
add('floor_mod', 'FLOOR_MOD float32 with negative operands: input x4 by a constant [4] in +-(0.5..1.5) (result has the divisor\'s sign)',
  single((g) => g.op('FLOOR_MOD', [g.input([2, 3, 4], { transform: T.scale(4) }), g.weights('divisor', [4], { fn: awayFromZeroConst })], [2, 3, 4])));
add('floor_mod_bcast', 'FLOOR_MOD float32, inputs [2,1,4] (x3) and [3,1] in +-(0.5..1.5), broadcast to [2,3,4]',
  single((g) => g.op('FLOOR_MOD', [g.input([2, 1, 4], { transform: T.scale(3) }), g.input([3, 1], { transform: T.awayFromZero })], [2, 3, 4])));
add('floor_mod_int32', 'FLOOR_MOD int32: input in -20..20 by a constant [5] of -7, -3, 2, 5, 1',
  single((g) => g.op('FLOOR_MOD', [g.input([3, 5], { dtype: 'int32', transform: T.ints(20) }), g.i32('divisor', [-7, -3, 2, 5, 1])], [3, 5], undefined, { dtype: 'int32' })));

// ADD_N -------------------------------------------------------------------
add('add_n', 'ADD_N of three float32 inputs [2,3,4]',
  single((g) => g.op('ADD_N', [g.input([2, 3, 4]), g.input([2, 3, 4]), g.input([2, 3, 4])], [2, 3, 4])));
add('add_n_int32_const', 'ADD_N of two int32 inputs and an int32 constant',
  single((g) => g.op('ADD_N', [g.input([2, 3], { dtype: 'int32', transform: T.ints(50) }), g.input([2, 3], { dtype: 'int32', transform: T.ints(50) }), g.i32('offset', [1, -2, 3, -4, 5, -6], [2, 3])], [2, 3], undefined, { dtype: 'int32' })));

// Pooling ---------------------------------------------------------------
add('max_pool_2d_valid_2x2_s2', 'MAX_POOL 2x2 stride 2 VALID', single((g) => pool(g, 'MAX_POOL_2D', g.input([1, 6, 6, 3]), { fh: 2, stride: 2, padding: 'VALID' })));
add('max_pool_2d_same_3x3_s1', 'MAX_POOL 3x3 stride 1 SAME', single((g) => pool(g, 'MAX_POOL_2D', g.input([1, 5, 5, 3]), { fh: 3, stride: 1, padding: 'SAME' })));
add('max_pool_2d_same_3x3_s2', 'MAX_POOL 3x3 stride 2 SAME on 6x6 (padding 0 before, 1 after)',
  single((g) => pool(g, 'MAX_POOL_2D', g.input([1, 6, 6, 2]), { fh: 3, stride: 2, padding: 'SAME' })));
add('max_pool_2d_valid_3x3_s1_relu6', 'MAX_POOL 3x3 stride 1 VALID, fused RELU6; input x8',
  single((g) => pool(g, 'MAX_POOL_2D', g.input([1, 5, 5, 2], { transform: T.scale(8) }), { fh: 3, stride: 1, padding: 'VALID', act: 'RELU6' })));
add('max_pool_2d_valid_2x3_s1x2', 'MAX_POOL non-square 2x3 (HxW) window, stride h1 w2, VALID',
  single((g) => pool(g, 'MAX_POOL_2D', g.input([1, 5, 7, 2]), { fh: 2, fw: 3, stride: 1, strideW: 2, padding: 'VALID' })));
add('average_pool_2d_valid_2x2_s2', 'AVERAGE_POOL 2x2 stride 2 VALID', single((g) => pool(g, 'AVERAGE_POOL_2D', g.input([1, 6, 6, 3]), { fh: 2, stride: 2, padding: 'VALID' })));
add('average_pool_2d_same_3x3_s1', 'AVERAGE_POOL 3x3 stride 1 SAME: edge windows divide by the valid count',
  single((g) => pool(g, 'AVERAGE_POOL_2D', g.input([1, 5, 5, 3]), { fh: 3, stride: 1, padding: 'SAME' })));
add('average_pool_2d_same_2x2_s2_uneven', 'AVERAGE_POOL 2x2 stride 2 SAME on 5x5: pad 0 before, 1 after, last row/col averages fewer elements',
  single((g) => pool(g, 'AVERAGE_POOL_2D', g.input([1, 5, 5, 3]), { fh: 2, stride: 2, padding: 'SAME' })));
add('average_pool_2d_same_3x3_s2_uneven', 'AVERAGE_POOL 3x3 stride 2 SAME on 6x6: pad 0 before, 1 after',
  single((g) => pool(g, 'AVERAGE_POOL_2D', g.input([1, 6, 6, 2]), { fh: 3, stride: 2, padding: 'SAME' })));
add('average_pool_2d_valid_3x3_s1_relu', 'AVERAGE_POOL 3x3 VALID, fused RELU',
  single((g) => pool(g, 'AVERAGE_POOL_2D', g.input([1, 5, 5, 2]), { fh: 3, stride: 1, padding: 'VALID', act: 'RELU' })));
add('average_pool_2d_global', 'AVERAGE_POOL with the window = whole 4x4 image (global average)',
  single((g) => pool(g, 'AVERAGE_POOL_2D', g.input([1, 4, 4, 8]), { fh: 4, stride: 1, padding: 'VALID' })));

// Reductions ------------------------------------------------------------
for (const op of ['MEAN', 'SUM', 'REDUCE_MAX', 'REDUCE_MIN']) {
  const n = op.toLowerCase();
  add(`${n}_axis_1`, `${op} over axis 1 of [2,3,4], keep_dims false`, single((g) => reduce(g, op, g.input([2, 3, 4]), [1], false)));
  add(`${n}_axes_0_2_keepdims`, `${op} over axes [0,2] of [2,3,4], keep_dims true`, single((g) => reduce(g, op, g.input([2, 3, 4]), [0, 2], true)));
  add(`${n}_neg_axis`, `${op} over axis -1 of [2,3,4], keep_dims false`, single((g) => reduce(g, op, g.input([2, 3, 4]), [-1], false)));
  add(`${n}_hw_keepdims`, `${op} over H,W ([1,2]) of [1,4,5,3], keep_dims true`, single((g) => reduce(g, op, g.input([1, 4, 5, 3]), [1, 2], true)));
}
add('mean_hw', 'MEAN over H,W of [1,4,5,3], keep_dims false -> [1,3] (global average pooling as converters emit it)',
  single((g) => reduce(g, 'MEAN', g.input([1, 4, 5, 3]), [1, 2], false)));
add('mean_neg_axes_keepdims', 'MEAN over axes [-3,-2] of [2,3,4,5], keep_dims true',
  single((g) => reduce(g, 'MEAN', g.input([2, 3, 4, 5]), [-3, -2], true)));
add('sum_all_axes', 'SUM over all axes of [2,3,4] -> rank-0 output', single((g) => reduce(g, 'SUM', g.input([2, 3, 4]), [0, 1, 2], false)));
add('sum_scalar_axis', 'SUM with a rank-0 axis tensor (1)', single((g) => reduce(g, 'SUM', g.input([2, 3, 4]), [1], false, { scalarAxis: true })));

// SOFTMAX ---------------------------------------------------------------
add('softmax_rank2_beta1', 'SOFTMAX beta 1 on [3,10]; input x3', single((g) => g.op('SOFTMAX', [g.input([3, 10], { transform: T.scale(3) })], [3, 10], { beta: 1 })));
add('softmax_rank2_beta0_5', 'SOFTMAX beta 0.5 on [3,10]; input x3', single((g) => g.op('SOFTMAX', [g.input([3, 10], { transform: T.scale(3) })], [3, 10], { beta: 0.5 })));
add('softmax_rank4_beta1', 'SOFTMAX beta 1 on [1,2,3,8] (last axis); input x3', single((g) => g.op('SOFTMAX', [g.input([1, 2, 3, 8], { transform: T.scale(3) })], [1, 2, 3, 8], { beta: 1 })));
add('softmax_rank4_beta0_5', 'SOFTMAX beta 0.5 on [1,2,3,8]; input x3', single((g) => g.op('SOFTMAX', [g.input([1, 2, 3, 8], { transform: T.scale(3) })], [1, 2, 3, 8], { beta: 0.5 })));

// RESHAPE ---------------------------------------------------------------
add('reshape_const_shape', 'shape from the constant 2nd input [4,6] (ReshapeOptions.new_shape also set, as converters write it)',
  single((g) => reshape(g, g.input([2, 3, 4]), [4, 6], { mode: 'both' })));
add('reshape_const_shape_only', 'shape only from the constant 2nd input [6,4] (empty ReshapeOptions)',
  single((g) => reshape(g, g.input([2, 3, 4]), [6, 4], { mode: 'input' })));
add('reshape_const_shape_neg1', 'constant shape input [-1,8] (empty ReshapeOptions)',
  single((g) => reshape(g, g.input([2, 3, 4]), [-1, 8], { mode: 'input' })));
add('reshape_options_only', 'one input, shape from ReshapeOptions.new_shape [3,8]',
  single((g) => reshape(g, g.input([2, 3, 4]), [3, 8], { mode: 'options' })));
add('reshape_options_only_neg1', 'one input, ReshapeOptions.new_shape [2,-1,2]',
  single((g) => reshape(g, g.input([2, 3, 4]), [2, -1, 2], { mode: 'options' })));
add('reshape_flatten', 'flatten [1,2,2,3] to [1,-1] (shape input and new_shape)',
  single((g) => reshape(g, g.input([1, 2, 2, 3]), [1, -1], { mode: 'both' })));

// SQUEEZE / EXPAND_DIMS / TRANSPOSE ------------------------------------
add('squeeze_dims_1_3', 'SQUEEZE dims [1,3] of [2,1,3,1]', single((g) => g.op('SQUEEZE', [g.input([2, 1, 3, 1])], [2, 3], { squeeze_dims: [1, 3] })));
add('squeeze_all', 'SQUEEZE with no dims: all size-1 dims of [1,3,1,4]', single((g) => g.op('SQUEEZE', [g.input([1, 3, 1, 4])], [3, 4], { squeeze_dims: [] })));
add('squeeze_negative_dim', 'SQUEEZE dim -1 of [2,3,1]', single((g) => g.op('SQUEEZE', [g.input([2, 3, 1])], [2, 3], { squeeze_dims: [-1] })));
add('squeeze_partial', 'SQUEEZE dim 0 only of [1,1,5] (dim 1 stays)', single((g) => g.op('SQUEEZE', [g.input([1, 1, 5])], [1, 5], { squeeze_dims: [0] })));
add('expand_dims_axis_0', 'EXPAND_DIMS axis 0 (rank-0 int32 axis) [3,4] -> [1,3,4]',
  single((g) => g.op('EXPAND_DIMS', [g.input([3, 4]), g.i32('axis', [0], [])], [1, 3, 4], {})));
add('expand_dims_axis_2', 'EXPAND_DIMS axis 2 (axis tensor shape [1]) [3,4] -> [3,4,1]',
  single((g) => g.op('EXPAND_DIMS', [g.input([3, 4]), g.i32('axis', [2], [1])], [3, 4, 1], {})));
add('expand_dims_axis_neg1', 'EXPAND_DIMS axis -1 [2,3] -> [2,3,1]',
  single((g) => g.op('EXPAND_DIMS', [g.input([2, 3]), g.i32('axis', [-1], [])], [2, 3, 1], {})));
add('expand_dims_axis_neg2', 'EXPAND_DIMS axis -2 [2,3] -> [2,1,3]',
  single((g) => g.op('EXPAND_DIMS', [g.input([2, 3]), g.i32('axis', [-2], [])], [2, 1, 3], {})));
const transposeCase = (name, shape, perm) => add(name, `TRANSPOSE [${shape}] perm [${perm}]`,
  single((g) => g.op('TRANSPOSE', [g.input(shape), g.i32('perm', perm)], perm.map((p) => shape[p]), {})));
transposeCase('transpose_rank2', [3, 5], [1, 0]);
transposeCase('transpose_rank3_201', [2, 3, 4], [2, 0, 1]);
transposeCase('transpose_rank3_021', [2, 3, 4], [0, 2, 1]);
transposeCase('transpose_rank4_nhwc_to_nchw', [1, 2, 3, 4], [0, 3, 1, 2]);
transposeCase('transpose_rank4_nchw_to_nhwc', [1, 4, 2, 3], [0, 2, 3, 1]);
transposeCase('transpose_rank4_3120', [2, 3, 2, 4], [3, 1, 2, 0]);

// CONCATENATION ---------------------------------------------------------
add('concatenation_2_inputs_axis_1', '[1,3,4] ++ [1,2,4] on axis 1', single((g) => concat(g, [g.input([1, 3, 4]), g.input([1, 2, 4])], 1)));
add('concatenation_3_inputs_last_axis', '[2,3,1] ++ [2,3,2] ++ [2,3,3] on axis 2', single((g) => concat(g, [g.input([2, 3, 1]), g.input([2, 3, 2]), g.input([2, 3, 3])], 2)));
add('concatenation_negative_axis', '[2,2,3] ++ [2,4,3] on axis -2', single((g) => concat(g, [g.input([2, 2, 3]), g.input([2, 4, 3])], -2)));
add('concatenation_axis_0', '[2,3] ++ [1,3] on axis 0', single((g) => concat(g, [g.input([2, 3]), g.input([1, 3])], 0)));
add('concatenation_channels', '[1,3,3,2] ++ [1,3,3,4] on axis 3 (NHWC channel concat)',
  single((g) => concat(g, [g.input([1, 3, 3, 2]), g.input([1, 3, 3, 4])], 3)));
add('concatenation_channels_relu6', '[1,3,3,2] ++ [1,3,3,4] on axis 3, fused RELU6; inputs x8',
  single((g) => concat(g, [g.input([1, 3, 3, 2], { transform: T.scale(8) }), g.input([1, 3, 3, 4], { transform: T.scale(8) })], 3, 'RELU6')),
  { refused: 'float CONCATENATION only accepts fused activation NONE (concatenation.cc)' });
add('concatenation_const_input', 'input [1,4,3] ++ constant [1,2,3] on axis 1', single((g) => concat(g, [g.input([1, 4, 3]), g.weights('constant', [1, 2, 3])], 1)));

// PAD / PADV2 -----------------------------------------------------------
add('pad_4d', 'PAD [1,3,3,2] with [[0,0],[1,2],[2,1],[0,0]]', single((g) => pad(g, g.input([1, 3, 3, 2]), [[0, 0], [1, 2], [2, 1], [0, 0]])));
add('pad_2d', 'PAD [3,4] with [[1,0],[0,2]]', single((g) => pad(g, g.input([3, 4]), [[1, 0], [0, 2]])));
add('pad_channels', 'PAD channels [1,2,2,3] -> [1,2,2,5] (BlazeFace channel padding)', single((g) => pad(g, g.input([1, 2, 2, 3]), [[0, 0], [0, 0], [0, 0], [0, 2]])));
add('padv2_4d', 'PADV2 [1,3,3,2] with [[0,0],[2,0],[1,1],[0,0]], rank-0 constant value 0.5',
  single((g) => pad(g, g.input([1, 3, 3, 2]), [[0, 0], [2, 0], [1, 1], [0, 0]], 0.5)));
add('padv2_3d_negative_value', 'PADV2 [2,3,2] with [[1,1],[0,2],[1,0]], constant value -3',
  single((g) => pad(g, g.input([2, 3, 2]), [[1, 1], [0, 2], [1, 0]], -3)));

// MIRROR_PAD ------------------------------------------------------------
// REFLECT mirrors without the edge element (pad <= dim - 1 per side),
// SYMMETRIC with it (pad <= dim). The *_max cases use the largest legal
// padding on every padded side.
export function mirrorPad(g, x, paddings, mode) {
  const s = g.shape(x);
  const p = g.i32('paddings', paddings.flat(), [s.length, 2]);
  return g.op('MIRROR_PAD', [x, p], s.map((d, i) => d + paddings[i][0] + paddings[i][1]), { mode });
}
const mirrorCase = (name, shape, paddings, mode, note = '') => add(name,
  `MIRROR_PAD ${mode} [${shape}] with [${paddings.map((q) => `[${q}]`).join(',')}]${note}`,
  single((g) => mirrorPad(g, g.input(shape), paddings, mode)));
mirrorCase('mirror_pad_reflect_2d', [4, 5], [[1, 2], [3, 0]], 'REFLECT', ' (asymmetric, one side 0)');
mirrorCase('mirror_pad_symmetric_2d', [4, 5], [[2, 1], [0, 3]], 'SYMMETRIC', ' (asymmetric, one side 0)');
mirrorCase('mirror_pad_reflect_3d', [3, 4, 5], [[2, 0], [0, 0], [1, 3]], 'REFLECT', ' (middle axis unpadded)');
mirrorCase('mirror_pad_symmetric_3d', [3, 4, 2], [[0, 3], [1, 1], [2, 0]], 'SYMMETRIC', ' (every axis padded)');
mirrorCase('mirror_pad_reflect_4d_hw', [1, 4, 4, 2], [[0, 0], [1, 1], [2, 2], [0, 0]], 'REFLECT', ' (H and W, as segmentation and style-transfer models pad)');
mirrorCase('mirror_pad_symmetric_4d_hw', [1, 5, 4, 3], [[0, 0], [2, 1], [1, 3], [0, 0]], 'SYMMETRIC', ' (H and W, asymmetric)');
mirrorCase('mirror_pad_reflect_4d_all_axes', [2, 3, 4, 3], [[1, 0], [1, 2], [0, 3], [2, 1]], 'REFLECT', ' (all four axes)');
mirrorCase('mirror_pad_reflect_max', [2, 3, 4, 2], [[1, 1], [2, 2], [3, 3], [0, 0]], 'REFLECT', ' (maximum legal: dim - 1 on each side)');
mirrorCase('mirror_pad_symmetric_max', [2, 3, 4, 1], [[2, 2], [3, 3], [4, 4], [1, 1]], 'SYMMETRIC', ' (maximum legal: dim on each side, a size-1 axis too)');
add('chain_mirror_pad_conv', 'style-transfer block: MIRROR_PAD REFLECT [[0,0],[1,1],[1,1],[0,0]] -> CONV_2D 3x3 VALID -> RELU', (g) => {
  const x = mirrorPad(g, g.input([1, 6, 6, 3]), [[0, 0], [1, 1], [1, 1], [0, 0]], 'REFLECT');
  g.output(unary(g, 'RELU', conv2d(g, x, { cout: 4, padding: 'VALID' })));
});

// SLICE / STRIDED_SLICE -------------------------------------------------
const sliceCase = (name, shape, begin, size) => add(name, `SLICE [${shape}] begin [${begin}] size [${size}]`,
  single((g) => g.op('SLICE', [g.input(shape), g.i32('begin', begin), g.i32('size', size)], size.map((s, i) => (s === -1 ? shape[i] - begin[i] : s)), {})));
sliceCase('slice_2d', [5, 6], [1, 2], [3, 3]);
sliceCase('slice_4d_size_neg1', [1, 4, 5, 3], [0, 1, 1, 0], [1, 2, -1, 2]);
sliceCase('slice_3d_size_neg1_twice', [3, 4, 5], [1, 0, 2], [-1, -1, 2]);
const ssCase = (name, desc, shape, b, e, s, m = {}) => add(name, `STRIDED_SLICE [${shape}] begin [${b}] end [${e}] strides [${s}] ${desc}`,
  single((g) => stridedSlice(g, g.input(shape), b, e, s, m)));
ssCase('strided_slice_basic', '', [4, 6, 5], [1, 0, 1], [3, 6, 4], [1, 1, 1]);
ssCase('strided_slice_stride2', '', [1, 6, 6, 3], [0, 0, 1, 0], [1, 6, 6, 3], [1, 2, 2, 1]);
ssCase('strided_slice_masks', 'begin_mask 0b101 end_mask 0b010', [4, 6, 5], [1, 2, 3], [3, 5, 4], [1, 1, 1], { begin_mask: 5, end_mask: 2 });
ssCase('strided_slice_shrink_axis_0', 'shrink_axis_mask 0b001', [4, 6, 5], [1, 0, 0], [2, 6, 5], [1, 1, 1], { shrink_axis_mask: 1 });
ssCase('strided_slice_shrink_axis_1', 'shrink_axis_mask 0b010 with begin/end masks on the other axes', [4, 6, 5], [0, 2, 0], [0, 3, 0], [1, 1, 1], { begin_mask: 5, end_mask: 5, shrink_axis_mask: 2 });
ssCase('strided_slice_negative_indices', 'negative begin/end', [4, 6, 5], [-3, 1, -4], [-1, -1, 5], [1, 1, 2]);
ssCase('strided_slice_negative_stride', 'stride -1 and -2', [4, 6, 5], [3, 0, 4], [0, 6, 0], [-1, 1, -2]);
ssCase('strided_slice_reverse', 'full reverse of axis 1 via masks and stride -1', [3, 4, 2], [0, 0, 0], [0, 0, 0], [1, -1, 1], { begin_mask: 7, end_mask: 7 });
ssCase('strided_slice_clamped_end', 'end beyond the dim (clamped)', [4, 6, 5], [1, 2, 0], [100, 100, 3], [2, 1, 1]);
ssCase('strided_slice_ellipsis', 'ellipsis_mask 0b01: [..., 1:3]', [2, 3, 4, 5], [0, 1], [0, 3], [1, 1], { ellipsis_mask: 1 });

// GATHER ----------------------------------------------------------------
add('gather_axis_0_indices_rank1', 'GATHER params [5,4] axis 0 indices [4,0,2]', single((g) => gather(g, g.input([5, 4]), [4, 0, 2], [3], 0)));
add('gather_axis_1_indices_rank1', 'GATHER params [3,5,2] axis 1 indices [0,4,4,1]', single((g) => gather(g, g.input([3, 5, 2]), [0, 4, 4, 1], [4], 1)));
add('gather_axis_0_indices_rank2', 'GATHER params [6,3] axis 0 indices [[0,5],[2,2]]', single((g) => gather(g, g.input([6, 3]), [0, 5, 2, 2], [2, 2], 0)));
add('gather_axis_1_indices_rank2', 'GATHER params [2,5,3] axis 1 indices [[4,0,1],[3,3,2]]', single((g) => gather(g, g.input([2, 5, 3]), [4, 0, 1, 3, 3, 2], [2, 3], 1)));
add('gather_axis_neg1', 'GATHER params [3,6] axis -1 indices [5,0]', single((g) => gather(g, g.input([3, 6]), [5, 0], [2], -1)));

// PACK / UNPACK / SPLIT / SPLIT_V ----------------------------------------
const normAxis = (axis, rank) => (axis < 0 ? axis + rank : axis);
const packCase = (name, shape, n, axis) => add(name, `PACK of ${n} inputs [${shape}] axis ${axis}`, single((g) => {
  const xs = Array.from({ length: n }, () => g.input(shape));
  const out = [...shape]; out.splice(normAxis(axis, shape.length + 1), 0, n);
  return g.op('PACK', xs, out, { values_count: n, axis });
}));
packCase('pack_axis0_3_inputs', [2, 3], 3, 0);
packCase('pack_axis_neg1', [2, 3], 2, -1);
packCase('pack_axis1_rank3', [2, 3, 4], 2, 1);
const multi = (fn) => (g) => { g.output(...fn(g)); };
const unpackCase = (name, shape, axis) => add(name, `UNPACK [${shape}] axis ${axis}: every output checked`, multi((g) => {
  const ax = normAxis(axis, shape.length); const out = shape.filter((_, d) => d !== ax);
  return g.opN('UNPACK', [g.input(shape)], new Array(shape[ax]).fill(out), { num: shape[ax], axis });
}));
unpackCase('unpack_axis0', [3, 2, 4], 0);
unpackCase('unpack_axis_neg1', [2, 3, 4], -1);
const splitCase = (name, shape, axis, n) => add(name, `SPLIT [${shape}] axis ${axis} into ${n}: every output checked`, multi((g) => {
  const ax = normAxis(axis, shape.length); const out = [...shape]; out[ax] /= n;
  const axisT = g.i32('axis', [axis], []);
  return g.opN('SPLIT', [axisT, g.input(shape)], new Array(n).fill(out), { num_splits: n });
}));
splitCase('split_axis1_3', [2, 6, 3], 1, 3);
splitCase('split_axis_neg1_2', [2, 3, 4], -1, 2);
splitCase('split_axis0_1', [2, 3], 0, 1);
const splitVCase = (name, shape, sizes, axis) => add(name, `SPLIT_V [${shape}] size_splits [${sizes}] axis ${axis}: every output checked`, multi((g) => {
  const ax = normAxis(axis, shape.length);
  const known = sizes.filter((v) => v !== -1).reduce((x, y) => x + y, 0);
  const outs = sizes.map((v) => { const o = [...shape]; o[ax] = v === -1 ? shape[ax] - known : v; return o; });
  return g.opN('SPLIT_V', [g.input(shape), g.i32('size_splits', sizes), g.i32('axis', [axis], [])], outs, { num_splits: sizes.length });
}));
splitVCase('split_v_sizes', [2, 7], [2, 4, 1], 1);
splitVCase('split_v_minus1', [5, 3], [1, -1, 2], 0);
splitVCase('split_v_neg_axis_minus1', [2, 3, 6], [4, -1], -1);

// SHAPE / BROADCAST_TO / BROADCAST_ARGS / FILL ------------------------------
const broadcastToCase = (name, shape, to) => add(name, `BROADCAST_TO [${shape}] to [${to}]`,
  single((g) => g.op('BROADCAST_TO', [g.input(shape), g.i32('shape', to)], to, undefined, { version: 2 })));
broadcastToCase('broadcast_to_rank_up', [3, 1], [2, 3, 4]);
broadcastToCase('broadcast_to_same_rank', [1, 4, 1], [2, 4, 3]);
broadcastToCase('broadcast_to_rank5', [1, 3, 1, 1, 2], [2, 3, 2, 2, 2]);
add('shape_broadcast_to', 'SHAPE of input 0 [2,3,4] (int32) as the shape of BROADCAST_TO of input 1 [3,1]: SHAPE folds at compile time', single((g) => {
  const a = g.input([2, 3, 4]); const b = g.input([3, 1]);
  const s = g.op('SHAPE', [a], [3], { out_type: 'INT32' }, { dtype: 'int32' });
  return g.op('BROADCAST_TO', [b, s], [2, 3, 4], undefined, { version: 2 });
}));
add('shape_int64_broadcast_to', 'SHAPE out_type INT64 of input 0 [2,1,3] as the shape of BROADCAST_TO of input 1 [1,3]', single((g) => {
  const a = g.input([2, 1, 3]); const b = g.input([1, 3]);
  const s = g.op('SHAPE', [a], [3], { out_type: 'INT64' }, { dtype: 'int64' });
  return g.op('BROADCAST_TO', [b, s], [2, 1, 3], undefined, { version: 2 });
}));
add('broadcast_args_shape', 'BROADCAST_ARGS of SHAPE(input 0 [2,1,4]) and constant [3,1] -> [2,3,4], the shape of BROADCAST_TO of input 1 [3,1]', single((g) => {
  const a = g.input([2, 1, 4]); const b = g.input([3, 1]);
  const s = g.op('SHAPE', [a], [3], { out_type: 'INT32' }, { dtype: 'int32' });
  const args = g.op('BROADCAST_ARGS', [s, g.i32('shape_b', [3, 1])], [3], undefined, { dtype: 'int32' });
  return g.op('BROADCAST_TO', [b, args], [2, 3, 4], undefined, { version: 2 });
}));
add('fill_constant_add', 'FILL dims [2,3] value 0.75 (constants), added to input [2,3]', single((g) => {
  const f = g.op('FILL', [g.i32('dims', [2, 3]), g.weights('value', [], { values: [0.75] })], [2, 3], {});
  return binary(g, 'ADD', g.input([2, 3]), f);
}));
add('fill_computed_value', 'FILL dims [2,3,4] with the computed scalar REDUCE_MAX(input [5])', single((g) => {
  const m = reduce(g, 'REDUCE_MAX', g.input([5]), [0], false);
  return g.op('FILL', [g.i32('dims', [2, 3, 4]), m], [2, 3, 4], {});
}));

// ARG_MAX / ARG_MIN: the index output gathers from a constant table
// (10 + index), so the case's output is float32 and names the index.
const argCase = (name, desc, op, shape, axis, type, transform) => add(name, `${op} [${shape}] axis ${axis} output_type ${type}${desc}, then GATHER of 10 + index`, single((g) => {
  const ax = normAxis(axis, shape.length);
  const idx = g.op(op, [g.input(shape, transform ? { transform } : {}), g.i32('axis', [axis], [])], shape.filter((_, d) => d !== ax), { output_type: type }, { dtype: type.toLowerCase() });
  const table = g.weights('table', [shape[ax]], { values: Array.from({ length: shape[ax] }, (_, k) => 10 + k) });
  return gather(g, table, null, g.shape(idx), 0, idx);
}));
const ROUND2 = { desc: 'round(2 * x)', range: '{-2, -1, 0, 1, 2}', fn: (x) => Math.round(2 * x) };
argCase('arg_max_axis1_int32', '', 'ARG_MAX', [3, 5], 1, 'INT32');
argCase('arg_max_axis_neg1_int64', '', 'ARG_MAX', [2, 3, 6], -1, 'INT64');
argCase('arg_max_ties_axis0', ' on rounded inputs (ties: TFLite returns the first index)', 'ARG_MAX', [6, 4], 0, 'INT32', ROUND2);
argCase('arg_min_axis1_int64', '', 'ARG_MIN', [4, 5], 1, 'INT64');
argCase('arg_min_ties_axis1', ' on rounded inputs (ties: the first index)', 'ARG_MIN', [3, 7], 1, 'INT32', ROUND2);

// DEPTH_TO_SPACE / SPACE_TO_DEPTH / LOG_SOFTMAX ---------------------------
add('depth_to_space_block2', 'DEPTH_TO_SPACE [1,2,3,8] block 2 -> [1,4,6,2]',
  single((g) => g.op('DEPTH_TO_SPACE', [g.input([1, 2, 3, 8])], [1, 4, 6, 2], { block_size: 2 })));
add('depth_to_space_block3_batch2', 'DEPTH_TO_SPACE [2,2,2,18] block 3 -> [2,6,6,2]',
  single((g) => g.op('DEPTH_TO_SPACE', [g.input([2, 2, 2, 18])], [2, 6, 6, 2], { block_size: 3 })));
add('space_to_depth_block2', 'SPACE_TO_DEPTH [1,4,6,3] block 2 -> [1,2,3,12]',
  single((g) => g.op('SPACE_TO_DEPTH', [g.input([1, 4, 6, 3])], [1, 2, 3, 12], { block_size: 2 })));
add('reduce_all_axis_1', 'REDUCE_ALL over axis 1 of bool [4,2,3], keep_dims false',
  single((g) => g.op('REDUCE_ALL', [g.input([4, 2, 3], { dtype: 'bool' }), g.i32('axes', [1])], [4, 3], { keep_dims: false }, { dtype: 'bool' })));
add('reduce_all_axes_0_2_keepdims', 'REDUCE_ALL over axes [0,-1] of bool [2,5,2], keep_dims true',
  single((g) => g.op('REDUCE_ALL', [g.input([2, 5, 2], { dtype: 'bool' }), g.i32('axes', [0, -1])], [1, 5, 1], { keep_dims: true }, { dtype: 'bool' })));
add('reduce_all_from_greater', 'REDUCE_ALL over axis -1 of GREATER(input [3,4], -0.6): rows all above or not',
  single((g) => {
    const cond = compare(g, 'GREATER', g.input([3, 4]), g.weights('threshold', [], { values: [-0.6] }));
    return g.op('REDUCE_ALL', [cond, g.i32('axes', [-1])], [3], { keep_dims: false }, { dtype: 'bool' });
  }));
add('log_softmax_rank2', 'LOG_SOFTMAX on [3,10] (last axis); input x3',
  single((g) => g.op('LOG_SOFTMAX', [g.input([3, 10], { transform: T.scale(3) })], [3, 10], {})));
add('log_softmax_rank4', 'LOG_SOFTMAX on [1,2,3,8]; input x3',
  single((g) => g.op('LOG_SOFTMAX', [g.input([1, 2, 3, 8], { transform: T.scale(3) })], [1, 2, 3, 8], {})));

// CUMSUM (float32 and int32; TFLite 2.9 runs it: the reference) ----------
const cumsumCase = (name, desc, shape, axis, { exclusive = false, reverse = false, dtype = 'float32' } = {}) => add(name,
  `CUMSUM ${dtype} [${shape}] axis ${axis}${exclusive ? ' exclusive' : ''}${reverse ? ' reverse' : ''}${desc}`,
  single((g) => g.op('CUMSUM', [g.input(shape, dtype === 'int32' ? { dtype, transform: T.ints(100) } : {}), g.i32('axis', [axis], [])], shape,
    { exclusive, reverse }, dtype === 'int32' ? { dtype } : {})));
cumsumCase('cumsum_axis1', '', [3, 6], 1);
cumsumCase('cumsum_axis0_long', ' (37 steps: a scan of 6 doublings)', [37, 2], 0);
cumsumCase('cumsum_exclusive_reverse', '', [4, 5, 3], -2, { exclusive: true, reverse: true });
cumsumCase('cumsum_exclusive', '', [2, 7], 1, { exclusive: true });
cumsumCase('cumsum_int32_reverse', ' (inputs in -100..100)', [2, 9], 1, { reverse: true, dtype: 'int32' });
cumsumCase('cumsum_int32_exclusive_axis0', ' (inputs in -100..100)', [5, 4], 0, { exclusive: true, dtype: 'int32' });

// DYNAMIC_UPDATE_SLICE (start clamped to [0, operand - update]) ---------
add('dynamic_update_slice_const_start', 'DYNAMIC_UPDATE_SLICE float32 [4,5,3] <- update [2,2,3] at constant start [1,4,0] (clamped to [1,3,0])',
  single((g) => g.op('DYNAMIC_UPDATE_SLICE', [g.input([4, 5, 3]), g.input([2, 2, 3]), g.i32('start', [1, 4, 0])], [4, 5, 3])));
add('dynamic_update_slice_negative_start', 'DYNAMIC_UPDATE_SLICE float32 [3,6] <- update [3,2] at constant start [-2,2] (clamped to [0,2])',
  single((g) => g.op('DYNAMIC_UPDATE_SLICE', [g.input([3, 6]), g.input([3, 2]), g.i32('start', [-2, 2])], [3, 6])));
add('dynamic_update_slice_computed_start', 'DYNAMIC_UPDATE_SLICE float32 [5,6] <- update [2,3] at a computed start (int32 graph input in -4..4, clamped)',
  single((g) => g.op('DYNAMIC_UPDATE_SLICE', [g.input([5, 6]), g.input([2, 3]), g.input([2], { dtype: 'int32', transform: T.ints(4) })], [5, 6])));
add('dynamic_update_slice_int32_computed_start', 'DYNAMIC_UPDATE_SLICE int32 [2,3,4] <- update [1,3,2] at a computed start (int32 graph input in -4..4, clamped)',
  single((g) => g.op('DYNAMIC_UPDATE_SLICE', [g.input([2, 3, 4], { dtype: 'int32', transform: T.ints(100) }), g.input([1, 3, 2], { dtype: 'int32', transform: T.ints(100) }),
    g.input([3], { dtype: 'int32', transform: T.ints(4) })], [2, 3, 4], undefined, { dtype: 'int32' })));

// L2_NORMALIZATION / REVERSE_V2 / GATHER_ND --------------------------------
add('l2_normalization_rank2', 'L2_NORMALIZATION on [3,10] (last axis)',
  single((g) => g.op('L2_NORMALIZATION', [g.input([3, 10])], [3, 10], { fused_activation_function: 'NONE' })));
add('l2_normalization_rank4', 'L2_NORMALIZATION on [1,2,3,8]',
  single((g) => g.op('L2_NORMALIZATION', [g.input([1, 2, 3, 8])], [1, 2, 3, 8], { fused_activation_function: 'NONE' })));
add('l2_normalization_tiny', 'L2_NORMALIZATION on [2,4] with |x| < 1e-8: the norm is floored at epsilon 1e-6',
  single((g) => g.op('L2_NORMALIZATION', [g.input([2, 4], { transform: T.scale(1e-8) })], [2, 4], { fused_activation_function: 'NONE' })));
const reverseCase = (name, shape, axes) => add(name, `REVERSE_V2 [${shape}] axis [${axes}]`,
  single((g) => g.op('REVERSE_V2', [g.input(shape), g.i32('axis', axes)], shape, {}, { version: axes.length > 1 ? 3 : 1 })));
reverseCase('reverse_v2_axis1', [2, 3, 4], [1]);
reverseCase('reverse_v2_neg_axis', [3, 5], [-1]);
reverseCase('reverse_v2_two_axes', [2, 3, 4], [0, 2]);
const gatherNdCase = (name, params, indices, iShape) => add(name, `GATHER_ND params [${params}] indices ${JSON.stringify(indices)} (shape [${iShape}])`,
  single((g) => {
    const m = iShape[iShape.length - 1];
    return g.op('GATHER_ND', [g.input(params), g.i32('indices', indices, iShape)], [...iShape.slice(0, -1), ...params.slice(m)], {});
  }));
gatherNdCase('gather_nd_elements', [4, 3], [0, 1, 3, 2, 1, 0], [3, 2]);
gatherNdCase('gather_nd_slices', [4, 3, 2], [2, 0], [2, 1]);
gatherNdCase('gather_nd_rank3_indices', [3, 4, 5], [0, 3, 2, 1, 1, 1, 2, 0], [2, 2, 2]);

// EMBEDDING_LOOKUP / L2_POOL_2D / SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND -----
add('embedding_lookup_rows', 'EMBEDDING_LOOKUP ids [3,0,3,1] into value [5,4] (a graph input)', single((g) => {
  const value = g.input([5, 4]);
  return g.op('EMBEDDING_LOOKUP', [g.i32('ids', [3, 0, 3, 1]), value], [4, 4]);
}));
add('embedding_lookup_rank3', 'EMBEDDING_LOOKUP ids [2,2] into value [3,2,3]', single((g) => {
  const value = g.input([3, 2, 3]);
  return g.op('EMBEDDING_LOOKUP', [g.i32('ids', [2, 2]), value], [2, 2, 3]);
}));
add('l2_pool_2d_valid_2x2', 'L2_POOL_2D 2x2 stride 2 VALID on [1,4,6,3]', single((g) => pool(g, 'L2_POOL_2D', g.input([1, 4, 6, 3]), { fh: 2, stride: 2, padding: 'VALID' })));
add('l2_pool_2d_same_3x3_relu', 'L2_POOL_2D 3x3 stride 1 SAME on [1,5,5,2] (edge windows average fewer elements), fused RELU6; input x4',
  single((g) => pool(g, 'L2_POOL_2D', g.input([1, 5, 5, 2], { transform: T.scale(4) }), { fh: 3, stride: 1, padding: 'SAME', act: 'RELU6' })));
const s2bCase = (name, shape, block, pads) => add(name, `SPACE_TO_BATCH_ND [${shape}] block [${block}] paddings ${JSON.stringify(pads)}`, single((g) => {
  const sp = shape.slice(1, -1).map((d, i) => (d + pads[i][0] + pads[i][1]) / block[i]);
  const out = [shape[0] * block.reduce((x, y) => x * y, 1), ...sp, shape[shape.length - 1]];
  return g.op('SPACE_TO_BATCH_ND', [g.input(shape), g.i32('block_shape', block), g.i32('paddings', pads.flat(), [block.length, 2])], out, {});
}));
s2bCase('space_to_batch_nd_2x2', [1, 4, 4, 3], [2, 2], [[0, 0], [0, 0]]);
s2bCase('space_to_batch_nd_padded', [2, 3, 5, 2], [2, 3], [[1, 0], [0, 1]]);
s2bCase('space_to_batch_nd_rank3', [1, 5, 2], [2], [[0, 1]]);
const b2sCase = (name, shape, block, crops) => add(name, `BATCH_TO_SPACE_ND [${shape}] block [${block}] crops ${JSON.stringify(crops)}`, single((g) => {
  const sp = shape.slice(1, -1).map((d, i) => d * block[i] - crops[i][0] - crops[i][1]);
  const out = [shape[0] / block.reduce((x, y) => x * y, 1), ...sp, shape[shape.length - 1]];
  return g.op('BATCH_TO_SPACE_ND', [g.input(shape), g.i32('block_shape', block), g.i32('crops', crops.flat(), [block.length, 2])], out, {});
}));
b2sCase('batch_to_space_nd_2x2', [4, 2, 2, 3], [2, 2], [[0, 0], [0, 0]]);
b2sCase('batch_to_space_nd_cropped', [12, 2, 2, 2], [2, 3], [[1, 0], [0, 2]]);
b2sCase('batch_to_space_nd_rank3', [2, 3, 2], [2], [[0, 1]]);

// RESIZE ----------------------------------------------------------------
const RESIZE_SIZES = [['up2x', [1, 4, 4, 2], [8, 8]], ['5x5_to_8x7', [1, 5, 5, 2], [8, 7]], ['down_8x8_to_3x5', [1, 8, 8, 2], [3, 5]]];
const RESIZE_MODES = [['', {}], ['_align_corners', { alignCorners: true }], ['_half_pixel', { halfPixel: true }]];
for (const op of ['RESIZE_BILINEAR', 'RESIZE_NEAREST_NEIGHBOR']) {
  for (const [sz, inShape, out] of RESIZE_SIZES) {
    for (const [mode, m] of RESIZE_MODES) {
      add(`${op.toLowerCase()}_${sz}${mode}`, `${op} [${inShape}] -> ${out[0]}x${out[1]}, align_corners ${!!m.alignCorners}, half_pixel_centers ${!!m.halfPixel}`,
        single((g) => resize(g, op, g.input(inShape), out, m)));
    }
  }
}
// Both flags true: RESIZE_BILINEAR refuses it; RESIZE_NEAREST_NEIGHBOR accepts
// it (it applies the align_corners scale and the half-pixel offset together).
add('resize_bilinear_up2x_align_corners_half_pixel', 'RESIZE_BILINEAR with align_corners and half_pixel_centers both true',
  single((g) => resize(g, 'RESIZE_BILINEAR', g.input([1, 4, 4, 2]), [8, 8], { alignCorners: true, halfPixel: true })),
  { refused: 'RESIZE_BILINEAR: align_corners and half_pixel_centers both true' });
for (const [sz, inShape, out] of RESIZE_SIZES) {
  add(`resize_nearest_neighbor_${sz}_align_corners_half_pixel`, `RESIZE_NEAREST_NEIGHBOR [${inShape}] -> ${out[0]}x${out[1]} with align_corners and half_pixel_centers both true (TFLite accepts it for NEAREST)`,
    single((g) => resize(g, 'RESIZE_NEAREST_NEIGHBOR', g.input(inShape), out, { alignCorners: true, halfPixel: true })));
}

// DEQUANTIZE (float16 constants) ----------------------------------------
add('dequantize_conv_2d', 'float16 filter and bias -> DEQUANTIZE -> CONV_2D filter/bias (BlazeFace layout)',
  single((g) => conv2d(g, g.input([1, 6, 6, 3]), { cout: 4, padding: 'SAME', act: 'RELU', filterF16: true, bias: 'f16' })));
add('dequantize_depthwise_conv_2d', 'float16 filter and bias -> DEQUANTIZE -> DEPTHWISE_CONV_2D',
  single((g) => depthwise(g, g.input([1, 6, 6, 4]), { kh: 5, padding: 'SAME', f16: true })));
add('dequantize_add', 'float16 constant [1,1,1,3] -> DEQUANTIZE -> ADD with the input',
  single((g) => {
    const x = g.input([1, 4, 4, 3]);
    const k = g.op('DEQUANTIZE', [g.weightsF16('constant_f16', [1, 1, 1, 3])], [1, 1, 1, 3], {}, { version: 3, name: 'constant' });
    return binary(g, 'ADD', x, k);
  }));

// Multi-op chains -------------------------------------------------------
add('chain_conv_pad_maxpool_reshape_fc_softmax', 'CONV_2D(RELU) -> PAD -> MAX_POOL_2D -> RESHAPE -> FULLY_CONNECTED -> SOFTMAX', (g) => {
  let x = g.input([1, 8, 8, 3]);
  x = conv2d(g, x, { cout: 4, padding: 'SAME', act: 'RELU' });
  x = pad(g, x, [[0, 0], [1, 1], [1, 1], [0, 0]]);
  x = pool(g, 'MAX_POOL_2D', x, { fh: 2, stride: 2, padding: 'VALID' });
  x = reshape(g, x, [1, -1]);
  x = fc(g, x, { units: 10 });
  g.output(g.op('SOFTMAX', [x], g.shape(x), { beta: 1 }));
});
add('chain_blaze_block', 'BlazeFace block: DEPTHWISE 5x5 -> CONV 1x1 -> ADD(skip) -> RELU', (g) => {
  const x = g.input([1, 8, 8, 4]);
  let y = depthwise(g, x, { kh: 5, padding: 'SAME' });
  y = conv2d(g, y, { cout: 4, kh: 1, padding: 'VALID' });
  y = binary(g, 'ADD', y, x);
  g.output(unary(g, 'RELU', y));
});
add('chain_blaze_block_stride2', 'BlazeFace stride-2 block: DEPTHWISE 3x3 s2 -> CONV 1x1 (4->6) + MAX_POOL 2x2 s2 -> PAD channels 4->6 on the skip -> ADD -> RELU', (g) => {
  const x = g.input([1, 8, 8, 4]);
  let y = depthwise(g, x, { kh: 3, stride: 2, padding: 'SAME' });
  y = conv2d(g, y, { cout: 6, kh: 1, padding: 'VALID' });
  let s = pool(g, 'MAX_POOL_2D', x, { fh: 2, stride: 2, padding: 'VALID' });
  s = pad(g, s, [[0, 0], [0, 0], [0, 0], [0, 2]]);
  g.output(unary(g, 'RELU', binary(g, 'ADD', y, s)));
});
add('chain_attention', 'self-attention: FC(keep_num_dims) q/k/v -> BATCH_MATMUL(adj_y) -> MUL 1/sqrt(8) -> SOFTMAX -> BATCH_MATMUL -> ADD residual', (g) => {
  const x = g.input([1, 4, 8]);
  const q = fc(g, x, { units: 8, keep: true });
  const k = fc(g, x, { units: 8, keep: true });
  const v = fc(g, x, { units: 8, keep: true });
  let a = batchMatmul(g, q, k, { adjY: true });
  a = binary(g, 'MUL', a, g.weights('scale', [], { values: [1 / Math.sqrt(8)] }));
  a = g.op('SOFTMAX', [a], g.shape(a), { beta: 1 });
  g.output(binary(g, 'ADD', batchMatmul(g, a, v), x));
});
add('chain_classifier_head', 'CONV_2D s2 RELU6 -> MEAN(H,W) -> FULLY_CONNECTED -> LOGISTIC', (g) => {
  let x = conv2d(g, g.input([1, 6, 6, 3]), { cout: 8, stride: 2, padding: 'SAME', act: 'RELU6' });
  x = reduce(g, 'MEAN', x, [1, 2], false);
  x = fc(g, x, { units: 3 });
  g.output(unary(g, 'LOGISTIC', x));
});
add('chain_transpose_reshape_concat', 'TRANSPOSE NHWC->NCHW -> RESHAPE -> CONCATENATION with a STRIDED_SLICE of it -> TANH', (g) => {
  let x = g.op('TRANSPOSE', [g.input([1, 2, 3, 4]), g.i32('perm', [0, 3, 1, 2])], [1, 4, 2, 3], {});
  x = reshape(g, x, [4, 6]);
  const s = stridedSlice(g, x, [0, 0], [4, 6], [1, 2]);
  g.output(unary(g, 'TANH', concat(g, [x, s], 1)));
});
add('multi_io_two_inputs_two_outputs', 'inputs a, b [1,4,4,3]; outputs [MEAN_hw(MUL(a,b)), RELU(ADD(a,b))]: outputs listed in descending tensor order like BlazeFace', (g) => {
  const a = g.input([1, 4, 4, 3], { name: 'a' });
  const b = g.input([1, 4, 4, 3], { name: 'b' });
  const r = unary(g, 'RELU', binary(g, 'ADD', a, b));
  const m = reduce(g, 'MEAN', binary(g, 'MUL', a, b), [1, 2], false);
  g.output(m, r);
});

// ---------------------------------------------------------------- running

function parseArgs(argv) {
  const o = { only: null, list: false, bad: true, badOnly: false, verbose: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--only') o.only = new RegExp(argv[++i]);
    else if (a === '--list') o.list = true;
    else if (a === '--no-bad') o.bad = false;
    else if (a === '--bad-only') o.badOnly = true;
    else if (a === '--verbose' || a === '-v') o.verbose = true;
    else if (a === '-h' || a === '--help') o.help = true;
    else throw new Error(`unknown argument ${a}`);
  }
  return o;
}

export function buildCase(c) {
  const g = new Graph(c.name);
  c.build(g);
  return g;
}

// Loads the model with every operator output as a model output and checks
// that the shapes the interpreter computes match the declared ones.
async function checkShapes(g, { verbose }) {
  const produced = g.operators.flatMap((o) => o.outputs);
  const spec = { ...g.spec(), outputs: produced };
  const tfl = await loadTflite({ quiet: !verbose });
  const m = createRunner(tfl, buildTfliteModel(spec), { numThreads: 1 });
  m.outputs.forEach((t, i) => {
    const want = g.tensors[produced[i]].shape;
    if (t.shape.join(',') !== want.join(',')) {
      throw new Error(`tensor ${g.tensors[produced[i]].name}: declared [${want}], TFLite computes [${t.shape}]`);
    }
  });
}

function inputDataFor(g) {
  const data = [];
  const transforms = {};
  g.inputs.forEach((ti, k) => {
    const tr = g.transforms[k];
    if (!tr) return;
    const base = fillInput(new Float32Array(numel(g.tensors[ti].shape)), SEED, k, 'float32');
    const mapped = base.map((x) => tr.fn(x));
    if (g.tensors[ti].dtype === 'int32') {
      if (!mapped.every(Number.isInteger)) throw new Error(`${g.name}: transform of int32 input ${k} gives non-integers`);
      data[k] = Int32Array.from(mapped);
    } else {
      data[k] = mapped;
    }
    transforms[k] = { value: `float32(${tr.desc})`, range: tr.range };
  });
  return { data, transforms };
}

function describeGraph(g) {
  return {
    name: g.name,
    operators: g.operators.map((o) => o.op),
    inputs: g.inputs.map((ti, k) => ({
      index: k, name: g.tensors[ti].name, shape: g.tensors[ti].shape,
      ...(g.transforms[k] ? { transform: `float32(${g.transforms[k].desc})` } : {}),
    })),
    outputs: g.outputs.map((ti, k) => ({ index: k, name: g.tensors[ti].name, shape: g.tensors[ti].shape })),
  };
}

// Builds case c, runs it on TFLite into ROOT/<name>/ and reconciles the
// result with the independent evaluation (knownBugs: a KNOWN_REFERENCE_BUGS
// style table). c.meta (optional) is merged into meta.json's "case".
// Returns the case's index.json entry (plus its byte count).
export async function runCase(c, { verbose = false, root = OPS_DIR, knownBugs = KNOWN_REFERENCE_BUGS } = {}) {
  const g = buildCase(c);
  const dir = path.join(root, c.name);
  const bytes = buildTfliteModel(g.spec());
  await checkShapes(g, { verbose });
  fs.rmSync(dir, { recursive: true, force: true }); // no stale files (tflite_output_K.npy) from an earlier run
  fs.mkdirSync(dir, { recursive: true });
  const modelFile = path.join(dir, 'model.tflite');
  fs.writeFileSync(modelFile, bytes);
  const { data, transforms } = inputDataFor(g);
  const inputsSource = {
    generator: 'mulberry32', seed: SEED, seed_of_input_k: 'seed + k', value: 'x = float32(-1 + 2*u), u in [0,1)',
    ...(Object.keys(transforms).length ? { transforms, transforms_note: 'listed inputs hold float32(f(x)) with f evaluated in double' } : {}),
  };
  const meta = await runReference({
    model: modelFile, seed: SEED, out: dir, quiet: !verbose, inputData: data, inputsSource, allowInferFailure: !!knownBugs[c.name],
    extraMeta: { case: { name: c.name, description: c.desc, operators: g.operators.map((o) => o.op), ...(c.quirk ? { quirk: c.quirk } : {}), ...(c.meta ?? {}) } },
  });
  meta.outputs.forEach((t, k) => {
    const want = g.tensors[g.outputs[k]].shape;
    if (t.shape.join(',') !== want.join(',')) throw new Error(`output ${k}: declared [${want}], interpreter [${t.shape}]`);
  });
  const ref = reconcileReference(dir, meta, {
    knownBug: knownBugs[c.name], fusedTanhIgnored: !!c.quirk?.startsWith('fused_tanh_ignored'),
  });
  return {
    ...describeGraph(g), description: c.desc, ...(c.quirk ? { quirk: c.quirk } : {}), ...ref,
    bytes: fs.readdirSync(dir).reduce((s, f) => s + fs.statSync(path.join(dir, f)).size, 0),
  };
}

const sig3 = (x) => Number(x.toPrecision(3));
const INDEPENDENT_ENGINE = 'tests/reference/op_eval.mjs (double precision, float32 between operators)';

// Compares the TFLite outputs runReference just wrote to case folder `dir`
// (meta: its return value) with op_eval.mjs's independent evaluation of the
// same model file on the same inputs, and settles which one is the stored
// reference (see the header): knownBug is the KNOWN_REFERENCE_BUGS reason
// for this case, if any. Rewrites meta.json with "reference" ("tflite" or
// "independent") and the comparison; throws on an unlisted disagreement, on
// a listed case TFLite gets right and on non-finite outputs. A listed case
// whose Infer() failed (meta.tflite_error) stores the independent result.
// Returns the fields index.json records ({ reference, tflite_discrepancy? }).
export function reconcileReference(dir, meta, { knownBug, fusedTanhIgnored = false } = {}) {
  if (!meta.model_subgraph.interpreter_inputs_match || !meta.model_subgraph.interpreter_outputs_match) {
    throw new Error('interpreter I/O order differs from the subgraph order');
  }
  const sg = parseTflite(fs.readFileSync(path.join(dir, meta.model))).subgraphs[0];
  const inputs = meta.inputs.map((t) => readNpy(path.join(dir, t.file)));
  const mine = evaluateModel(sg, inputs, { fusedTanhIgnored });
  if (meta.tflite_error) {
    if (!knownBug) throw new Error(`TFLite failed to run it: ${meta.tflite_error}`);
    const { tflite_error: error, ...rest } = meta;
    meta.outputs.forEach((t, k) => writeNpy(path.join(dir, t.file), Float32Array.from(mine[k].data), mine[k].shape, '<f4'));
    const extra = {
      reference: 'independent',
      tflite_discrepancy: { reason: knownBug, tflite_error: error, reference_engine: INDEPENDENT_ENGINE },
    };
    fs.writeFileSync(path.join(dir, 'meta.json'), `${prettyJson({ ...rest, ...extra })}\n`);
    return { reference: 'independent', tflite_discrepancy: knownBug };
  }
  const tflite = meta.outputs.map((t) => readNpy(path.join(dir, t.file)));
  let scaled = 0; let abs = 0; const wrong = [];
  tflite.forEach((r, k) => {
    if (r.data.some((v) => !Number.isFinite(v))) throw new Error(`${meta.outputs[k].file} has non-finite values`);
    if (r.shape.join() !== mine[k].shape.join()) throw new Error(`output ${k}: TFLite shape [${r.shape}], independent [${mine[k].shape}]`);
    const e = compareValues(r.data, mine[k].data);
    scaled = Math.max(scaled, e.scaled); abs = Math.max(abs, e.abs);
    if (e.scaled > AGREEMENT_TOLERANCE) wrong.push(k);
  });
  const what = `TFLite vs independent: worst scaled error ${scaled.toExponential(2)} (abs ${abs.toExponential(2)}) on output(s) [${wrong}]`;
  let extra;
  if (!wrong.length) {
    if (knownBug) throw new Error(`listed in KNOWN_REFERENCE_BUGS but TFLite agrees with the independent result (${scaled.toExponential(2)}): remove it from the list`);
    extra = { reference: 'tflite', independent_check: { max_scaled_error: sig3(scaled), tolerance: AGREEMENT_TOLERANCE } };
  } else {
    if (!knownBug) throw new Error(`UNLISTED REFERENCE DISAGREEMENT: ${what}. Find out which one is wrong; if it is TFLite, list the case with the reason in KNOWN_REFERENCE_BUGS`);
    meta.outputs.forEach((t, k) => {
      fs.renameSync(path.join(dir, t.file), path.join(dir, `tflite_${t.file}`));
      writeNpy(path.join(dir, t.file), Float32Array.from(mine[k].data), mine[k].shape, '<f4');
    });
    extra = {
      reference: 'independent',
      tflite_discrepancy: {
        reason: knownBug, max_scaled_error: sig3(scaled), max_abs_error: sig3(abs), outputs: wrong,
        tflite_outputs: meta.outputs.map((t) => `tflite_${t.file}`),
        reference_engine: INDEPENDENT_ENGINE,
      },
    };
  }
  fs.writeFileSync(path.join(dir, 'meta.json'), `${prettyJson({ ...meta, ...extra })}\n`);
  return extra.reference === 'tflite' ? { reference: 'tflite' } : { reference: 'independent', tflite_discrepancy: knownBug };
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  if (o.help) {
    console.log('usage: node tests/reference/make_op_cases.mjs [--only REGEX] [--list] [--no-bad] [--bad-only] [--verbose]');
    return 0;
  }
  if (o.badOnly) {
    await writeBadModels();
    return 0;
  }
  const selected = CASES.filter((c) => !o.only || o.only.test(c.name));
  if (o.list) {
    for (const c of selected) {
      const flag = c.refused ? '  [refused by TFLite, not written]' : KNOWN_REFERENCE_BUGS[c.name] ? '  [TFLite wrong: independent reference]' : c.quirk ? '  [quirk]' : '';
      console.log(`${c.name}${flag}  ${c.desc}`);
    }
    return 0;
  }
  // A full run starts from an empty folder so that removed cases disappear
  // (the sparse_* cases are make_sparse_cases.mjs's: kept).
  if (!o.only && fs.existsSync(OPS_DIR)) {
    for (const e of fs.readdirSync(OPS_DIR)) if (!e.startsWith('sparse_')) fs.rmSync(path.join(OPS_DIR, e), { recursive: true, force: true });
  }
  fs.mkdirSync(OPS_DIR, { recursive: true });

  const index = [];
  const refused = [];
  const failures = [];
  const stale = Object.keys(KNOWN_REFERENCE_BUGS).filter((n) => !CASES.some((c) => c.name === n));
  if (stale.length) failures.push(`KNOWN_REFERENCE_BUGS lists unknown case(s) ${stale.join(', ')}`);
  for (const c of selected) {
    const log = [];
    setTfliteLogSink((line) => {
      if (!/XNNPACK delegate for CPU/.test(line)) log.push(line);
      if (o.verbose) process.stderr.write(`[tflite] ${line}\n`);
    });
    try {
      const entry = await runCase(c, o);
      if (c.refused) {
        failures.push(`${c.name}: expected TFLite to refuse it (${c.refused}) but it ran`);
        fs.rmSync(path.join(OPS_DIR, c.name), { recursive: true, force: true });
        continue;
      }
      index.push(entry);
      if (o.verbose) console.error(`ok   ${c.name}`);
    } catch (e) {
      fs.rmSync(path.join(OPS_DIR, c.name), { recursive: true, force: true });
      resetTflite(); // a rejected model may have trapped inside the wasm module
      const why = log.filter((l) => /ERROR/.test(l)).map((l) => l.replace(/^ERROR:\s*/, '').trim());
      const msg = [String(e.message || e).split('\n')[0], ...why].join(' | ');
      if (c.refused) refused.push({ name: c.name, reason: c.refused, error: msg });
      else failures.push(`${c.name}: ${msg}`);
    }
  }

  setTfliteLogSink(null);
  // --only rewrites the selected cases' entries and keeps every other one
  // (cases in CASES order; a selected case that failed loses its entry, as
  // it lost its folder).
  let indexCases = index;
  let indexRefused = refused;
  const indexFile = path.join(OPS_DIR, 'index.json');
  if (o.only && fs.existsSync(indexFile)) {
    const old = JSON.parse(fs.readFileSync(indexFile, 'utf8'));
    const chosen = new Set(selected.map((c) => c.name));
    const order = new Map(CASES.map((c, k) => [c.name, k]));
    const rank = (e) => order.get(e.name) ?? CASES.length;
    indexCases = [...old.cases.filter((e) => !chosen.has(e.name)), ...index].sort((a, b) => rank(a) - rank(b));
    indexRefused = [...(old.refused_by_tflite ?? []).filter((e) => !chosen.has(e.name)), ...refused].sort((a, b) => rank(a) - rank(b));
  }
  if (!o.only || fs.existsSync(indexFile)) {
    const doc = {
      generator: 'tests/reference/make_op_cases.mjs',
      engine: 'TensorFlow Lite interpreter (wasm, XNNPACK delegate, 1 thread) via tflite_reference.mjs',
      seed: SEED,
      tolerance_hint: '|out - ref| <= 1e-4 * (1 + |ref|)',
      reference_note: 'reference "tflite": output_K.npy from the interpreter, checked against tests/reference/op_eval.mjs within '
        + `${AGREEMENT_TOLERANCE.toExponential()}*(1+|ref|); "independent": the interpreter is wrong (tflite_discrepancy says why), output_K.npy is op_eval.mjs's result`,
      cases: indexCases.map(({ bytes, ...e }) => e),
      refused_by_tflite: indexRefused.map(({ name, reason, error }) => ({ name, reason, error })),
    };
    // One line per case keeps the file small and diffs readable.
    const lines = Object.entries(doc).map(([k, v]) => (Array.isArray(v)
      ? `  ${JSON.stringify(k)}: [${v.length ? `\n${v.map((e) => `    ${JSON.stringify(e)}`).join(',\n')}\n  ` : ''}]`
      : `  ${JSON.stringify(k)}: ${JSON.stringify(v)}`));
    fs.writeFileSync(path.join(OPS_DIR, 'index.json'), `{\n${lines.join(',\n')}\n}\n`);
  }

  if (o.bad && !o.only) await writeBadModels();

  const total = index.reduce((s, e) => s + e.bytes, 0);
  console.log(`${index.length} case(s) written to ${path.relative(process.cwd(), OPS_DIR) || OPS_DIR} (${(total / 1024).toFixed(1)} KiB)`);
  for (const r of refused) console.log(`refused by TFLite (as expected): ${r.name}: ${r.error}`);
  for (const e of index.filter((x) => x.reference === 'independent')) console.log(`TFLite wrong, independent reference: ${e.name}: ${e.tflite_discrepancy}`);
  for (const f of failures) console.log(`FAIL ${f}`);
  return failures.length ? 1 : 0;
}

// ---------------------------------------------------------------- bad models

// int8 FULLY_CONNECTED (version 4) of input [1,8] (scale 0.05, zero point -2)
// by weights [4,8] (scale 0.02; Math.round(127 * randFloats('bad/int8_weights')))
// plus an int32 bias (scale 0.001), output [1,4] (scale 0.1, zero point 3):
// int8_quantized.tflite, which Kiln compiles (Cli.Int8QuantizedModelRunsAsTfliteComputes),
// and, with `changes` (tensor index -> fields replacing the tensor's), the
// quantization error cases below.
function int8FcTensors() {
  return [
    { name: 'input', shape: [1, 8], dtype: 'int8', quantization: { scale: [0.05], zeroPoint: [-2] } },
    { name: 'weights', shape: [4, 8], dtype: 'int8', quantization: { scale: [0.02], zeroPoint: [0] },
      data: Int8Array.from(randFloats('bad/int8_weights', 32), (v) => Math.round(v * 127)) },
    { name: 'bias', shape: [4], dtype: 'int32', quantization: { scale: [0.001], zeroPoint: [0] }, data: Int32Array.from([100, -50, 0, 25]) },
    { name: 'output', shape: [1, 4], dtype: 'int8', quantization: { scale: [0.1], zeroPoint: [3] } },
  ];
}

function int8Fc(description, changes = {}, version = 4) {
  return buildTfliteModel({
    tensors: int8FcTensors().map((t, i) => ({ ...t, ...changes[i] })),
    operators: [{ op: 'FULLY_CONNECTED', version, inputs: [0, 1, 2], outputs: [3], options: { fused_activation_function: 'NONE' } }],
    inputs: [0], outputs: [3], description,
  });
}

// Quantized models Kiln refuses: 16-bit activations, a hybrid
// operator, scales of zero or below, zero points outside the storage type,
// a per-channel scale count that is not the channel count, an int8 tensor
// without quantization, a sparse tensor. Each is one mistake in an
// otherwise valid model; QUANTIZATION_ERROR_WHAT describes them.
function quantizationErrorModels() {
  const q = (scale, zeroPoint, extra = {}) => ({ quantization: { scale, zeroPoint, ...extra } });
  const weights = int8FcTensors()[1].data;
  // Per-channel CONV_2D 1x1: input [1,3,3,2], weights [4,1,1,2] with only 3
  // scales on quantized_dimension 0 (4 output channels).
  const conv = {
    tensors: [
      { name: 'input', shape: [1, 3, 3, 2], dtype: 'int8', ...q([0.05], [-2]) },
      { name: 'conv_weights', shape: [4, 1, 1, 2], dtype: 'int8', data: weights.subarray(0, 8),
        ...q([0.02, 0.03, 0.04], [0, 0, 0], { quantizedDimension: 0 }) },
      { name: 'conv_bias', shape: [4], dtype: 'int32', data: Int32Array.from([100, -50, 0, 25]),
        ...q([0.001, 0.0015, 0.002, 0.002], [0, 0, 0, 0]) },
      { name: 'output', shape: [1, 3, 3, 4], dtype: 'int8', ...q([0.1], [3]) },
    ],
    operators: [{ op: 'CONV_2D', version: 3, inputs: [0, 1, 2], outputs: [3],
      options: { padding: 'VALID', stride_w: 1, stride_h: 1, fused_activation_function: 'NONE' } }],
    inputs: [0], outputs: [3], description: 'kiln bad model: 3 per-channel scales on 4 channels',
  };
  // Float FULLY_CONNECTED whose weights [4,8] are sparse: rows dense, columns
  // CSR (traversal order [0,1]), 2 stored values per row.
  const sparseIndices = [0, 5, 1, 6, 2, 7, 3, 4];
  const sparse = {
    tensors: [
      { name: 'input', shape: [1, 8], dtype: 'float32' },
      { name: 'sparse_weights', shape: [4, 8], dtype: 'float32', data: randFloats('bad/sparse_weights', 8),
        sparsity: { traversalOrder: [0, 1], dimMetadata: [{ format: 'DENSE', denseSize: 4 },
          { format: 'SPARSE_CSR', segments: [0, 2, 4, 6, 8], indices: sparseIndices }] } },
      { name: 'output', shape: [1, 4], dtype: 'float32' },
    ],
    operators: [{ op: 'FULLY_CONNECTED', version: 8, inputs: [0, 1, -1], outputs: [2], options: { fused_activation_function: 'NONE' } }],
    inputs: [0], outputs: [2], description: 'kiln bad model: sparse FULLY_CONNECTED weights',
  };
  // int8 ADD (version 2) of an INT8 and a UINT8 [1,8] input to an INT8 output.
  const mixedAdd = {
    tensors: [
      { name: 'a', shape: [1, 8], dtype: 'int8', ...q([0.05], [-2]) },
      { name: 'b', shape: [1, 8], dtype: 'uint8', ...q([0.05], [128]) },
      { name: 'sum', shape: [1, 8], dtype: 'int8', ...q([0.1], [0]) },
    ],
    operators: [{ op: 'ADD', version: 2, inputs: [0, 1], outputs: [2], options: { fused_activation_function: 'NONE' } }],
    inputs: [0, 1], outputs: [2], description: 'kiln bad model: ADD of an INT8 and a UINT8 tensor',
  };
  return {
    // 16x8: int16 activations (scale 1/4096, zero point 0), int8 weights, int64 bias.
    'int16_activations.tflite': int8Fc('kiln bad model: 16x8 FULLY_CONNECTED (int16 activations)', {
      0: { dtype: 'int16', ...q([1 / 4096], [0]) },
      2: { dtype: 'int64', data: BigInt64Array.from([100n, -50n, 0n, 25n]), ...q([0.02 / 4096], [0]) },
      3: { dtype: 'int16', ...q([1 / 2048], [0]) },
    }, 7),
    // Hybrid: float32 input, bias and output, int8 weights (scale 0.02).
    'hybrid_fully_connected.tflite': int8Fc('kiln bad model: hybrid FULLY_CONNECTED (float32 with int8 weights)', {
      0: { dtype: 'float32', quantization: undefined },
      2: { dtype: 'float32', data: Float32Array.from([0.1, -0.05, 0, 0.025]), quantization: undefined },
      3: { dtype: 'float32', quantization: undefined },
    }, 3),
    'zero_scale.tflite': int8Fc('kiln bad model: int8 input with scale 0', { 0: q([0], [-2]) }),
    'negative_scale.tflite': int8Fc('kiln bad model: int8 output with scale -0.1', { 3: q([-0.1], [3]) }),
    'int8_zero_point_out_of_range.tflite': int8Fc('kiln bad model: int8 input with zero point 200', { 0: q([0.05], [200]) }),
    // uint8 FULLY_CONNECTED (version 1): the int8 model shifted by 128, input zero point -1.
    'uint8_zero_point_out_of_range.tflite': int8Fc('kiln bad model: uint8 input with zero point -1', {
      0: { dtype: 'uint8', ...q([0.05], [-1]) },
      1: { dtype: 'uint8', data: Uint8Array.from(weights, (v) => v + 128), ...q([0.02], [128]) },
      3: { dtype: 'uint8', ...q([0.1], [131]) },
    }, 1),
    'per_channel_scale_count.tflite': buildTfliteModel(conv),
    'int8_without_quantization.tflite': int8Fc('kiln bad model: int8 input without quantization', { 0: { quantization: undefined } }),
    'sparse_weights.tflite': buildTfliteModel(sparse),
    // Input [2,8] (output [2,4]) with one scale and zero point per row.
    'per_channel_activation.tflite': int8Fc('kiln bad model: int8 input with 2 per-channel scales', {
      0: { shape: [2, 8], ...q([0.05, 0.06], [-2, 1], { quantizedDimension: 0 }) },
      3: { shape: [2, 4] },
    }),
    'mixed_int8_uint8.tflite': buildTfliteModel(mixedAdd),
    // int8 REDUCE_MAX whose output has another scale and zero point than its input.
    'int8_reduce_max_mismatched_quantization.tflite': buildTfliteModel({
      tensors: [
        { name: 'x', shape: [3, 7], dtype: 'int8', ...q([0.05], [-17]) },
        { name: 'axes', shape: [1], dtype: 'int32', data: Int32Array.from([1]) },
        { name: 'max', shape: [3], dtype: 'int8', ...q([0.1], [3]) },
      ],
      operators: [{ op: 'REDUCE_MAX', version: 2, inputs: [0, 1], outputs: [2], options: { keep_dims: false } }],
      inputs: [0], outputs: [2], description: 'kiln bad model: int8 REDUCE_MAX with another output quantization',
    }),
    // int8 SUM whose output keeps the input's scale and zero point.
    'int8_sum_same_quantization.tflite': buildTfliteModel({
      tensors: [
        { name: 'x', shape: [3, 7], dtype: 'int8', ...q([0.05], [-17]) },
        { name: 'axes', shape: [1], dtype: 'int32', data: Int32Array.from([1]) },
        { name: 'sum', shape: [3], dtype: 'int8', ...q([0.05], [-17]) },
      ],
      operators: [{ op: 'SUM', version: 2, inputs: [0, 1], outputs: [2], options: { keep_dims: false } }],
      inputs: [0], outputs: [2], description: 'kiln bad model: int8 SUM with the input quantization on its output',
    }),
    // int8 PACK whose second input has another scale and zero point than the output.
    'int8_pack_mismatched_quantization.tflite': buildTfliteModel({
      tensors: [
        { name: 'a', shape: [2, 3], dtype: 'int8', ...q([0.05], [-17]) },
        { name: 'b', shape: [2, 3], dtype: 'int8', ...q([0.1], [2]) },
        { name: 'packed', shape: [2, 2, 3], dtype: 'int8', ...q([0.05], [-17]) },
      ],
      operators: [{ op: 'PACK', version: 2, inputs: [0, 1], outputs: [2], options: { values_count: 2, axis: 0 } }],
      inputs: [0, 1], outputs: [2], description: 'kiln bad model: int8 PACK of inputs with different quantization',
    }),
    // The per-channel CONV_2D above in uint8, with 4 weight scales for 4 channels.
    'uint8_per_channel_weights.tflite': buildTfliteModel({
      ...conv,
      tensors: [
        { ...conv.tensors[0], dtype: 'uint8', ...q([0.05], [126]) },
        { ...conv.tensors[1], dtype: 'uint8', data: Uint8Array.from(weights.subarray(0, 8), (v) => v + 128),
          ...q([0.02, 0.03, 0.04, 0.05], [128, 128, 128, 128], { quantizedDimension: 0 }) },
        conv.tensors[2],
        { ...conv.tensors[3], dtype: 'uint8', ...q([0.1], [131]) },
      ],
      operators: [{ ...conv.operators[0], version: 1 }],
      description: 'kiln bad model: uint8 CONV_2D with per-channel weight scales',
    }),
    'int8_without_zero_point.tflite': int8Fc('kiln bad model: int8 input with a scale but no zero points', {
      0: { quantization: { scale: [0.05] } },
    }),
  };
}

const QUANTIZATION_ERROR_WHAT = {
  'int16_activations.tflite': 'the int8_quantized.tflite FULLY_CONNECTED as a 16x8 model (version 7): int16 input [1,8] (scale 1/4096, zero point 0) and output [1,4] (scale 1/2048), int8 weights, int64 bias (scale 0.02/4096).',
  'hybrid_fully_connected.tflite': 'hybrid FULLY_CONNECTED (version 3): float32 input [1,8], bias [4] and output [1,4]; int8 constant weights [4,8] with scale 0.02.',
  'zero_scale.tflite': 'int8_quantized.tflite with scale 0 on the int8 input \'input\'.',
  'negative_scale.tflite': 'int8_quantized.tflite with scale -0.1 on the int8 output \'output\'.',
  'int8_zero_point_out_of_range.tflite': 'int8_quantized.tflite with zero point 200 on the int8 input \'input\' (int8 zero points lie in [-128, 127]).',
  'uint8_zero_point_out_of_range.tflite': 'uint8 FULLY_CONNECTED (version 1; the int8 weights + 128, zero point 128; output zero point 131) whose uint8 input \'input\' has zero point -1 (uint8 zero points lie in [0, 255]).',
  'per_channel_scale_count.tflite': 'int8 1x1 CONV_2D (version 3) of [1,3,3,2] to 4 channels whose weights \'conv_weights\' [4,1,1,2] carry 3 per-channel scales on quantized_dimension 0.',
  'int8_without_quantization.tflite': 'int8_quantized.tflite whose int8 input \'input\' has no quantization parameters.',
  'sparse_weights.tflite': 'float32 FULLY_CONNECTED (version 8, no bias) whose weights \'sparse_weights\' [4,8] are sparse (rows DENSE, columns SPARSE_CSR, 8 stored values). No longer an error: Kiln densifies the weights at import with one warning (Cli.SparseWeightsCompileWithOneWarning); the sparse cases are make_sparse_cases.mjs\'s.',
  'per_channel_activation.tflite': 'int8_quantized.tflite on a [2,8] input (output [2,4]) whose int8 input \'input\' carries 2 scales (0.05, 0.06) and 2 zero points (-2, 1) on quantized_dimension 0: activations are quantized per tensor.',
  'int8_reduce_max_mismatched_quantization.tflite': 'int8 REDUCE_MAX (version 2) of \'x\' [3,7] (scale 0.05, zero point -17) over axis 1 to [3] (scale 0.1, zero point 3): TFLite\'s reduce.cc requires the output quantized as the input.',
  'int8_sum_same_quantization.tflite': 'int8 SUM (version 2) of \'x\' [3,7] (scale 0.05, zero point -17) over axis 1 to [3] with the same scale and zero point: TFLite 2.9 then adds the raw int8 values with wraparound; Kiln refuses it.',
  'int8_pack_mismatched_quantization.tflite': 'int8 PACK (version 2, axis 0) of \'a\' [2,3] (scale 0.05, zero point -17) and \'b\' [2,3] (scale 0.1, zero point 2) to [2,2,3] (scale 0.05, zero point -17): TFLite\'s pack.cc Prepare requires every input quantized as the output.',
  'mixed_int8_uint8.tflite': 'ADD (version 2) of int8 \'a\' [1,8] (scale 0.05, zero point -2) and uint8 \'b\' [1,8] (scale 0.05, zero point 128) to int8 \'sum\' (scale 0.1): one operator mixing INT8 and UINT8.',
  'uint8_per_channel_weights.tflite': 'per_channel_scale_count.tflite in uint8 (CONV_2D version 1; input zero point 126, output zero point 131) whose uint8 weights \'conv_weights\' [4,1,1,2] carry 4 per-channel scales (zero points 128) on quantized_dimension 0: per-channel scales are for int8 weights only.',
  'int8_without_zero_point.tflite': 'int8_quantized.tflite whose int8 input \'input\' has scale 0.05 but no zero_point vector (1 scale, 0 zero points).',
};

async function writeBadModels() {
  fs.mkdirSync(BAD_DIR, { recursive: true });
  const f32 = (name, shape, extra = {}) => ({ name, shape, dtype: 'float32', ...extra });
  const write = (name, bytes) => fs.writeFileSync(path.join(BAD_DIR, name), bytes);

  // A valid reference model for truncated/garbled: a CONV_2D case.
  const good = new Graph('bad_reference_conv');
  good.output(conv2d(good, good.input([1, 6, 6, 3]), { cout: 4, padding: 'SAME', act: 'RELU' }));
  const goodBytes = Buffer.from(buildTfliteModel(good.spec()));

  const mirrorPadModel = (shape, paddings, mode) => buildTfliteModel({
    tensors: [f32('input', shape), { name: 'paddings', shape: [shape.length, 2], dtype: 'int32', data: Int32Array.from(paddings.flat()) },
      f32('mirror_pad', shape.map((d, i) => d + paddings[i][0] + paddings[i][1]))],
    operators: [{ op: 'MIRROR_PAD', inputs: [0, 1], outputs: [2], options: { mode } }],
    inputs: [0], outputs: [2], description: `kiln bad model: MIRROR_PAD ${mode} with paddings beyond the mode's limit`,
  });
  const models = {
    'custom_op.tflite': buildTfliteModel({
      tensors: [f32('input', [1, 8]), f32('relu', [1, 8]), f32('custom', [1, 8])],
      operators: [
        { op: 'RELU', inputs: [0], outputs: [1] },
        { op: 'CUSTOM', customCode: 'MyCustomOp', inputs: [1], outputs: [2] },
      ],
      inputs: [0], outputs: [2], description: 'kiln bad model: custom operator',
    }),
    'unsupported_op.tflite': buildTfliteModel({
      tensors: [f32('input', [2, 5]), f32('relu', [2, 5]), { name: 'shape', shape: [2], dtype: 'int32', data: Int32Array.from([2, 5]) },
        f32('random', [2, 5]), f32('sum', [2, 5])],
      operators: [
        { op: 'RELU', inputs: [0], outputs: [1] },
        { op: 'RANDOM_UNIFORM', inputs: [2], outputs: [3] },
        { op: 'ADD', inputs: [1, 3], outputs: [4], options: { fused_activation_function: 'NONE' } },
      ],
      inputs: [0], outputs: [4], description: 'kiln bad model: RANDOM_UNIFORM (builtin 148), not supported by Kiln',
    }),
    'int8_quantized.tflite': int8Fc('kiln bad model: int8-quantized FULLY_CONNECTED'),
    ...quantizationErrorModels(),
    'two_subgraphs.tflite': buildTfliteModel({
      subgraphs: [
        { name: 'main', tensors: [f32('input', [1, 8]), f32('output', [1, 8])], operators: [{ op: 'RELU', inputs: [0], outputs: [1] }], inputs: [0], outputs: [1] },
        { name: 'second', tensors: [f32('x', [1, 8]), f32('y', [1, 8])], operators: [{ op: 'TANH', inputs: [0], outputs: [1] }], inputs: [0], outputs: [1] },
      ],
      description: 'kiln bad model: two subgraphs',
    }),
    'dynamic_batch.tflite': buildTfliteModel({
      tensors: [f32('input', [-1, 8], { shapeSignature: [-1, 8] }), f32('output', [-1, 8], { shapeSignature: [-1, 8] })],
      operators: [{ op: 'RELU', inputs: [0], outputs: [1] }],
      inputs: [0], outputs: [1], description: 'kiln bad model: dynamic batch with no recorded size (shape [-1,8])',
    }),
    'recorded_batch.tflite': buildTfliteModel({
      tensors: [f32('input', [1, 8], { shapeSignature: [-1, 8] }), f32('output', [1, 8], { shapeSignature: [-1, 8] })],
      operators: [{ op: 'RELU', inputs: [0], outputs: [1] }],
      inputs: [0], outputs: [1], description: 'kiln bad model: dynamic batch recorded as 1 (shape [1,8], shape_signature [-1,8])',
    }),
    'invalid_dimension.tflite': buildTfliteModel({
      tensors: [f32('input', [1, 8], { shapeSignature: [-2, 8] }), f32('output', [1, 8], { shapeSignature: [-2, 8] })],
      operators: [{ op: 'RELU', inputs: [0], outputs: [1] }],
      inputs: [0], outputs: [1], description: 'kiln bad model: shape_signature [-2,8] (-2 is no dimension)',
    }),
    'element_count_overflow.tflite': buildTfliteModel({
      tensors: [f32('input', [2147483647, 2147483647, 2147483647]), f32('output', [2147483647, 2147483647, 2147483647])],
      operators: [{ op: 'RELU', inputs: [0], outputs: [1] }],
      inputs: [0], outputs: [1], description: 'kiln bad model: RELU on [2^31-1]^3 (element count overflows 64 bits)',
    }),
    'huge_intermediate.tflite': buildTfliteModel({
      tensors: [f32('input', [1, 1, 1, 8]), { name: 'size', shape: [2], dtype: 'int32', data: Int32Array.from([100000, 100000]) },
        f32('resize', [1, 100000, 100000, 8]), f32('output', [1, 100000, 100000, 8])],
      operators: [
        { op: 'RESIZE_NEAREST_NEIGHBOR', inputs: [0, 1], outputs: [2], options: { align_corners: false, half_pixel_centers: false } },
        { op: 'RELU', inputs: [2], outputs: [3] },
      ],
      inputs: [0], outputs: [3], description: 'kiln bad model: a 320 GB intermediate (RESIZE to 100000x100000)',
    }),
    'above_2gib.tflite': buildTfliteModel({
      tensors: [f32('input', [1, 1, 1, 2]), { name: 'size', shape: [2], dtype: 'int32', data: Int32Array.from([16384, 16384]) },
        f32('resize', [1, 16384, 16384, 2]), f32('output', [1, 1, 1, 2])],
      operators: [
        { op: 'RESIZE_NEAREST_NEIGHBOR', inputs: [0, 1], outputs: [2], options: { align_corners: false, half_pixel_centers: false } },
        { op: 'MAX_POOL_2D', inputs: [2], outputs: [3], options: { padding: 'VALID', stride_w: 16384, stride_h: 16384, filter_width: 16384, filter_height: 16384, fused_activation_function: 'NONE' } },
      ],
      inputs: [0], outputs: [3], description: 'kiln bad model on 32-bit targets: a 2^31-byte intermediate',
    }),
    'zero_size_constant.tflite': buildTfliteModel({
      tensors: [f32('x', [2, 1, 3]), f32('empty_k', [2, 0, 3], { data: new Float32Array(0) }), f32('concatenation', [2, 1, 3])],
      operators: [{ op: 'CONCATENATION', inputs: [0, 1], outputs: [2], options: { axis: 1, fused_activation_function: 'NONE' } }],
      inputs: [0], outputs: [2], description: 'kiln bad model: CONCATENATION with an empty [2,0,3] float constant',
    }),
    'cast_through_int64.tflite': buildTfliteModel({
      tensors: [f32('input', [2, 3]), { name: 'as_int64', shape: [2, 3], dtype: 'int64' }, f32('back', [2, 3])],
      operators: [
        { op: 'CAST', inputs: [0], outputs: [1], options: { in_data_type: 0, out_data_type: 4 } },
        { op: 'CAST', inputs: [1], outputs: [2], options: { in_data_type: 4, out_data_type: 0 } },
      ],
      inputs: [0], outputs: [2], description: 'kiln bad model: CAST float32 -> int64 -> float32',
    }),
    'mirror_pad_reflect_too_large.tflite': mirrorPadModel([1, 3, 3, 1], [[0, 0], [3, 0], [1, 1], [0, 0]], 'REFLECT'),
    'mirror_pad_symmetric_too_large.tflite': mirrorPadModel([2, 4], [[0, 0], [5, 0]], 'SYMMETRIC'),
    'mirror_pad_computed_paddings.tflite': buildTfliteModel({
      tensors: [f32('input', [2, 4]), { name: 'paddings', shape: [2, 2], dtype: 'int32' }, f32('mirror_pad', [4, 6])],
      operators: [{ op: 'MIRROR_PAD', inputs: [0, 1], outputs: [2], options: { mode: 'REFLECT' } }],
      inputs: [0, 1], outputs: [2], description: 'kiln bad model: MIRROR_PAD whose paddings are a graph input',
    }),
    // Data movement operators whose shape-like operand is a graph input.
    'split_v_computed_sizes.tflite': buildTfliteModel({
      tensors: [f32('input', [2, 6]), { name: 'size_splits', shape: [2], dtype: 'int32' },
        { name: 'axis', shape: [], dtype: 'int32', data: Int32Array.from([1]) }, f32('split_v', [2, 2]), f32('split_v_1', [2, 4])],
      operators: [{ op: 'SPLIT_V', inputs: [0, 1, 2], outputs: [3, 4], options: { num_splits: 2 } }],
      inputs: [0, 1], outputs: [3, 4], description: 'kiln bad model: SPLIT_V whose size_splits are a graph input',
    }),
    'arg_max_computed_axis.tflite': buildTfliteModel({
      tensors: [f32('input', [3, 5]), { name: 'axis', shape: [], dtype: 'int32' }, { name: 'arg_max', shape: [3], dtype: 'int32' },
        f32('table', [5], { data: Float32Array.from([10, 11, 12, 13, 14]) }), f32('gather', [3])],
      operators: [{ op: 'ARG_MAX', inputs: [0, 1], outputs: [2], options: { output_type: 'INT32' } },
        { op: 'GATHER', inputs: [3, 2], outputs: [4], options: { axis: 0 } }],
      inputs: [0, 1], outputs: [4], description: 'kiln bad model: ARG_MAX whose axis is a graph input',
    }),
    'cumsum_computed_axis.tflite': buildTfliteModel({
      tensors: [f32('input', [2, 5]), { name: 'axis', shape: [], dtype: 'int32' }, f32('cumsum', [2, 5])],
      operators: [{ op: 'CUMSUM', inputs: [0, 1], outputs: [2], options: { exclusive: false, reverse: false } }],
      inputs: [0, 1], outputs: [2], description: 'kiln bad model: CUMSUM whose axis is a graph input',
    }),
    'cumsum_bool.tflite': buildTfliteModel({
      tensors: [{ name: 'input', shape: [2, 5], dtype: 'bool' }, { name: 'axis', shape: [], dtype: 'int32', data: Int32Array.from([1]) },
        { name: 'cumsum', shape: [2, 5], dtype: 'bool' }],
      operators: [{ op: 'CUMSUM', inputs: [0, 1], outputs: [2], options: { exclusive: false, reverse: false } }],
      inputs: [0], outputs: [2], description: 'kiln bad model: CUMSUM of a bool tensor',
    }),
    'reduce_all_float.tflite': buildTfliteModel({
      tensors: [f32('input', [2, 5]), { name: 'axes', shape: [1], dtype: 'int32', data: Int32Array.from([1]) }, { name: 'reduce_all', shape: [2], dtype: 'bool' }],
      operators: [{ op: 'REDUCE_ALL', inputs: [0, 1], outputs: [2], options: { keep_dims: false } }],
      inputs: [0], outputs: [2], description: 'kiln bad model: REDUCE_ALL of a float32 tensor',
    }),
    'dynamic_update_slice_bool.tflite': buildTfliteModel({
      tensors: [{ name: 'operand', shape: [3, 4], dtype: 'bool' }, { name: 'update', shape: [1, 2], dtype: 'bool' },
        { name: 'start', shape: [2], dtype: 'int32', data: Int32Array.from([1, 1]) }, { name: 'dynamic_update_slice', shape: [3, 4], dtype: 'bool' }],
      operators: [{ op: 'DYNAMIC_UPDATE_SLICE', inputs: [0, 1, 2], outputs: [3] }],
      inputs: [0, 1], outputs: [3], description: 'kiln bad model: DYNAMIC_UPDATE_SLICE of bool tensors',
    }),
    'dynamic_update_slice_start_rank.tflite': buildTfliteModel({
      tensors: [f32('operand', [3, 4]), f32('update', [1, 2]), { name: 'start', shape: [3], dtype: 'int32', data: Int32Array.from([1, 1, 0]) },
        f32('dynamic_update_slice', [3, 4])],
      operators: [{ op: 'DYNAMIC_UPDATE_SLICE', inputs: [0, 1, 2], outputs: [3] }],
      inputs: [0, 1], outputs: [3], description: 'kiln bad model: DYNAMIC_UPDATE_SLICE with 3 start indices for a rank-2 operand',
    }),
    'broadcast_to_computed_shape.tflite': buildTfliteModel({
      tensors: [f32('input', [3, 1]), { name: 'shape', shape: [2], dtype: 'int32' }, f32('broadcast_to', [3, 4])],
      operators: [{ op: 'BROADCAST_TO', version: 2, inputs: [0, 1], outputs: [2] }],
      inputs: [0, 1], outputs: [2], description: 'kiln bad model: BROADCAST_TO whose shape is a graph input',
    }),
  };
  for (const [name, bytes] of Object.entries(models)) write(name, bytes);
  write('truncated.tflite', goodBytes.subarray(0, 100));
  const garbled = Buffer.from(goodBytes);
  const u = mulberry32(fnv1a('bad/garbled'));
  for (let i = 8; i < garbled.length; i++) garbled[i] = Math.floor(u() * 256);
  write('garbled.tflite', garbled);
  write('not_tflite.tflite', 'This is a plain text file, not a TensorFlow Lite model.\n');

  // Which of them the TFLite interpreter itself loads (for the README).
  const loads = {};
  for (const name of [...Object.keys(models), 'truncated.tflite', 'garbled.tflite', 'not_tflite.tflite']) {
    const log = [];
    setTfliteLogSink((line) => { if (/ERROR/.test(line)) log.push(line.replace(/^ERROR:\s*/, '').trim()); });
    try {
      const tfl = await loadTflite({ quiet: true });
      const m = createRunner(tfl, fs.readFileSync(path.join(BAD_DIR, name)), { numThreads: 1 });
      m.infer();
      loads[name] = 'loads and runs';
    } catch (e) {
      resetTflite();
      loads[name] = `refuses it: ${[String(e.message || e).split('\n')[0], ...log].join(' | ')}`;
    }
  }
  setTfliteLogSink(null);
  for (const [k, v] of Object.entries(loads)) console.log(`bad/${k}: TFLite ${v}`);

  const what = {
    'custom_op.tflite': 'RELU then a CUSTOM operator (custom_code "MyCustomOp") as operator #1; float32 [1,8].',
    'unsupported_op.tflite': 'RELU, then RANDOM_UNIFORM (builtin code 148, deprecated_builtin_code 127) of the constant shape [2,5], then ADD of the two: a valid builtin Kiln does not support (a random operator; CUMSUM, the example before, is supported now); float32 [2,5].',
    'int8_quantized.tflite': 'int8 FULLY_CONNECTED (version 4): int8 input [1,8] (scale 0.05, zero_point -2), int8 weights [4,8] (scale 0.02), int32 bias (scale 0.001), int8 output [1,4] (scale 0.1, zero_point 3). No longer an error: Kiln compiles it (Cli.Int8QuantizedModelRunsAsTfliteComputes); the quantization cases below are variants of it.',
    ...QUANTIZATION_ERROR_WHAT,
    'two_subgraphs.tflite': 'two subgraphs: "main" (RELU [1,8]) and an unreferenced "second" (TANH [1,8]). No longer an error: Kiln compiles subgraph 0, as TFLite runs it (ControlFlow.UnreferencedSubgraphIsIgnored).',
    'dynamic_batch.tflite': 'RELU whose input and output have shape [-1,8] and shape_signature [-1,8]: a dynamic batch that records no size, as old converters wrote it (Kiln asks for --fix-shape).',
    'recorded_batch.tflite': 'RELU whose input and output have shape [1,8] and shape_signature [-1,8]: a dynamic batch recorded as 1, as every Keras-converted model has it (Kiln compiles it at [1,8] with a warning; not an error).',
    'invalid_dimension.tflite': 'RELU whose input and output have shape [1,8] and shape_signature [-2,8]: -2 is neither a size nor the dynamic marker -1.',
    'element_count_overflow.tflite': 'RELU on float32 [2147483647,2147483647,2147483647]: the element count (about 9.9e27) overflows 64 bits.',
    'huge_intermediate.tflite': 'RESIZE_NEAREST_NEIGHBOR of [1,1,1,8] to 100000x100000 then RELU: a 320000000000-byte tensor, above the 4 GiB default buffer limit of 64-bit targets (the bug-report case user_huge_intermediate, with a consumer).',
    'above_2gib.tflite': 'RESIZE_NEAREST_NEIGHBOR of [1,1,1,2] to 16384x16384 (2^31 bytes), then a 16384x16384 MAX_POOL_2D back to [1,1,1,2]: compiles for 64-bit targets, refused on 32-bit ones (Cortex-M) where one object holds at most 2^31 - 1 bytes.',
    'zero_size_constant.tflite': 'CONCATENATION on axis 1 of input x [2,1,3] and an empty float32 constant [2,0,3] (no data): refused as a zero-size tensor, not as a tensor "used before any operator computes it".',
    'cast_through_int64.tflite': 'CAST of float32 [2,3] to INT64, then back to FLOAT32: Kiln casts between FLOAT32, INT32 and BOOL only.',
    'mirror_pad_reflect_too_large.tflite': 'MIRROR_PAD REFLECT of [1,3,3,1] with paddings [[0,0],[3,0],[1,1],[0,0]]: 3 before H exceeds REFLECT\'s limit dim - 1 = 2.',
    'mirror_pad_symmetric_too_large.tflite': 'MIRROR_PAD SYMMETRIC of [2,4] with paddings [[0,0],[5,0]]: 5 exceeds SYMMETRIC\'s limit dim = 4.',
    'mirror_pad_computed_paddings.tflite': 'MIRROR_PAD REFLECT of [2,4] whose paddings [2,2] int32 are a second graph input, not a constant.',
    'split_v_computed_sizes.tflite': 'SPLIT_V of [2,6] along constant axis 1 into 2 outputs ([2,2], [2,4]) whose size_splits [2] int32 are a second graph input, not a constant.',
    'arg_max_computed_axis.tflite': 'ARG_MAX (output_type INT32) of [3,5] whose axis (int32 scalar) is a second graph input, not a constant, then GATHER of the constant [10..14] at the indices (a float32 output).',
    'cumsum_computed_axis.tflite': 'CUMSUM of float32 [2,5] whose axis (int32 scalar) is a second graph input, not a constant.',
    'cumsum_bool.tflite': 'CUMSUM of a bool [2,5] input along constant axis 1: Kiln sums float32 and int32 (TFLite: float32, int32, int64).',
    'reduce_all_float.tflite': 'REDUCE_ALL of a float32 [2,5] input over constant axis 1: REDUCE_ALL takes bool.',
    'dynamic_update_slice_bool.tflite': 'DYNAMIC_UPDATE_SLICE of a bool [3,4] operand with a bool [1,2] update at constant start [1,1]: Kiln updates float32, int32 and int8.',
    'dynamic_update_slice_start_rank.tflite': 'DYNAMIC_UPDATE_SLICE of float32 [3,4] by [1,2] with 3 start indices (one per operand dimension needed).',
    'broadcast_to_computed_shape.tflite': 'BROADCAST_TO (version 2) of [3,1] to [3,4] whose shape [2] int32 is a second graph input, not a constant.',
    'truncated.tflite': `the first 100 bytes of a valid ${goodBytes.length}-byte CONV_2D model.`,
    'garbled.tflite': `the first 8 bytes (root offset + "TFL3") of that valid CONV_2D model, then ${goodBytes.length - 8} seeded random bytes (same length, ${goodBytes.length} bytes).`,
    'not_tflite.tflite': 'a one-line text file.',
  };
  const readme = [
    '# Malformed and unsupported models',
    '',
    'Error cases for the importer, written by `node tests/reference/make_op_cases.mjs`',
    '(deterministic; no reference outputs). "TFLite" says what the TFLite interpreter',
    '(wasm build of tests/reference) does with the file.',
    '',
    '| file | what it is | TFLite |',
    '|---|---|---|',
    ...Object.keys(what).map((k) => `| \`${k}\` | ${what[k]} | ${loads[k].startsWith('loads') ? 'loads and runs' : loads[k].includes('unresolved custom op') ? 'refuses: unresolved custom op MyCustomOp' : 'refuses: cannot initialize model'} |`),
    '',
  ].join('\n');
  // The README's later sections (from its second "# " heading on, e.g. the
  // broken artifacts of tests/unit/BadArtifactsTest.cpp) belong to others: kept.
  const readmeFile = path.join(BAD_DIR, 'README.md');
  const later = fs.existsSync(readmeFile) ? fs.readFileSync(readmeFile, 'utf8').split(/^(?=# )/m).slice(1).join('') : '';
  fs.writeFileSync(readmeFile, later ? `${readme}\n${later}` : readme);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main();
}
