#!/usr/bin/env node
// TFLite recurrent operators (UNIDIRECTIONAL_SEQUENCE_LSTM, ..._RNN,
// BIDIRECTIONAL_SEQUENCE_LSTM; float32, state in variable tensors): the
// cases of tests/data/state/, checked by tests/model/RecurrentTest.cpp
// (kiln_recurrent_tests).
//
//   node tests/reference/make_recurrent_cases.mjs [--check]
//
// Each case folder is a state folder: model.tflite (built here with
// tflite_builder.mjs, or the committed public model), meta.json, the first
// invocation's input_K.npy / output_K.npy at the top level and the second
// and third invocation's in step_1/ and step_2/. The stored outputs are
// TensorFlow Lite 2.9's native library with no delegate, three consecutive
// invokes of one interpreter (tflite_native_reference.mjs, steps: 3), so the
// LSTM/RNN state carries from one invocation to the next. Each built case is
// also evaluated here independently in double precision (lstm/rnn below,
// following tensorflow/lite/kernels/lstm_eval.cc's float recurrence, with
// the state carried across the three invocations) and the two must agree
// within 1e-5 x (1 + |value|) on all three steps or the run fails.
//
// refused/*.tflite are models Kiln refuses with one error line (wrong
// ranks, missing weights, state that is no variable tensor, unsupported
// options, the auxiliary-input bidirectional form, a hybrid int8-weight
// LSTM); RecurrentTest.cpp checks the messages.
//
// --check rebuilds every model and input in memory and compares them with
// the committed files, and the stored outputs of every step with the
// independent evaluation (no TFLite needed; CTest
// reference_recurrent_data_check). The public model's folder
// (tflm_mnist_lstm, README.md there) is checked for its sha256 and inputs,
// and its outputs against modelEvaluator: the same float64 recurrence over
// the weights read from the file (tflite_flatbuffer.mjs), then RESHAPE,
// FULLY_CONNECTED and SOFTMAX, the state carried across invocations.
//
// Needs the native library for writing (node fetch_models.mjs --bench).
// Deterministic: two runs give the same files.

import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { buildTfliteModel } from './tflite_builder.mjs';
import { encodeNpy, readNpy } from './npy.mjs';
import { parseTflite } from './tflite_flatbuffer.mjs';
import { mulberry32 } from './prng.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const OUT = path.join(here, '..', 'data', 'state');
const REFUSED_DIR = path.join(OUT, 'refused');
const STEPS = 3;
const TOL = 1e-5;

/// float32 values in [lo, hi) from mulberry32(seed).
function uniform(n, seed, lo = -1, hi = 1) {
  const r = mulberry32(seed);
  return Float32Array.from({ length: n }, () => lo + (hi - lo) * r());
}

// ---------------------------------------------------------------------------
// Independent evaluation (float64)

const sigmoid = (v) => 1 / (1 + Math.exp(-v));
const ACTS = {
  TANH: Math.tanh,
  RELU: (v) => Math.max(0, v),
  RELU6: (v) => Math.min(6, Math.max(0, v)),
  RELU_N1_TO_1: (v) => Math.min(1, Math.max(-1, v)),
  NONE: (v) => v,
};
const clip = (v, c) => (c > 0 ? Math.min(c, Math.max(-c, v)) : v);

/// y[r] = sum_k w[r * cols + k] * x[k] for a [rows, cols] matrix.
function matVec(w, rows, cols, x) {
  const y = new Float64Array(rows);
  for (let r = 0; r < rows; r++) {
    let s = 0;
    for (let k = 0; k < cols; k++) s += w[r * cols + k] * x[k];
    y[r] = s;
  }
  return y;
}

/// (v - mean) / sqrt(var + 1e-8) (MeanStddevNormalization).
function normalize(v) {
  const n = v.length;
  const mean = v.reduce((a, b) => a + b, 0) / n;
  const variance = v.reduce((a, b) => a + (b - mean) ** 2, 0) / n;
  const inv = 1 / Math.sqrt(variance + 1e-8);
  return v.map((x) => (x - mean) * inv);
}

/// One LSTM cell step for one batch row: x [I], state { h [O], c [N] }.
function lstmStep(cell, opts, x, state) {
  const { nCell: n, nInput, nOutput } = cell;
  const gate = (g, cPeep, peep) => {
    let pre = matVec(cell.w[g], n, nInput, x);
    const rec = matVec(cell.r[g], n, nOutput, state.h);
    pre = pre.map((v, k) => v + rec[k] + (peep ? peep[k] * cPeep[k] : 0));
    if (cell.ln) pre = normalize(pre).map((v, k) => v * cell.ln[g][k] + cell.b[g][k]);
    else pre = pre.map((v, k) => v + cell.b[g][k]);
    return pre;
  };
  const act = ACTS[opts.act];
  const f = gate(1, state.c, cell.p?.[1]).map(sigmoid);
  const i = cell.w[0] ? gate(0, state.c, cell.p?.[0]).map(sigmoid) : f.map((v) => 1 - v);
  const g = gate(2, null, null).map(act);
  const c = state.c.map((cv, k) => clip(f[k] * cv + i[k] * g[k], opts.cellClip));
  const o = gate(3, c, cell.p?.[2]).map(sigmoid);
  let m = c.map((cv, k) => o[k] * act(cv));
  if (cell.proj) {
    const pm = matVec(cell.proj, nOutput, n, m);
    m = pm.map((v, k) => clip(v + (cell.projBias ? cell.projBias[k] : 0), opts.projClip));
  }
  return { h: Float64Array.from(m), c: Float64Array.from(c) };
}

/// Index of x[t, b, :] in a [B, S, I] (or time-major [S, B, I]) array.
const seqAt = (timeMajor, S, B, I) => (t, b) => (timeMajor ? (t * B + b) * I : (b * S + t) * I);

/// Runs one LSTM direction over input `x` with `states[b]` (updated in
/// place), writing h into `out` at column offset `col` of width `width`.
function lstmRun(cell, opts, x, dims, states, out, col, width, backward) {
  const { S, B, I, timeMajor } = dims;
  const xi = seqAt(timeMajor, S, B, I);
  const yi = seqAt(timeMajor, S, B, width);
  for (let b = 0; b < B; b++) {
    for (let k = 0; k < S; k++) {
      const t = backward ? S - 1 - k : k;
      const xt = Array.from(x.subarray(xi(t, b), xi(t, b) + I));
      states[b] = lstmStep(cell, opts, xt, states[b]);
      for (let j = 0; j < cell.nOutput; j++) out[yi(t, b) + col + j] = states[b].h[j];
    }
  }
}

function rnnRun(cell, opts, x, dims, states, out) {
  const { S, B, I, timeMajor } = dims;
  const U = cell.units;
  const xi = seqAt(timeMajor, S, B, I);
  const yi = seqAt(timeMajor, S, B, U);
  for (let b = 0; b < B; b++) {
    for (let t = 0; t < S; t++) {
      const xt = Array.from(x.subarray(xi(t, b), xi(t, b) + I));
      const a = matVec(cell.w, U, I, xt);
      const r = matVec(cell.r, U, U, states[b]);
      states[b] = a.map((v, k) => ACTS[opts.act](v + r[k] + cell.b[k]));
      for (let j = 0; j < U; j++) out[yi(t, b) + j] = states[b][j];
    }
  }
}

// ---------------------------------------------------------------------------
// Models

const f32 = (name, shape, extra = {}) => ({ name, shape, dtype: 'float32', ...extra });

/// Random weights of one LSTM direction (`seed`); `spec`: nInput, nCell,
/// nOutput, cifg, peephole, projection, projBias, layerNorm, scale.
function lstmWeights(spec, seed) {
  const { nInput, nCell, cifg, peephole, projection, layerNorm } = spec;
  const nOutput = projection ? spec.nOutput : nCell;
  const s = spec.scale ?? 0.6;
  let k = seed;
  const rnd = (n, lo = -s, hi = s) => uniform(n, k++, lo, hi);
  const cell = { nInput, nCell, nOutput, w: [], r: [], b: [] };
  for (let g = 0; g < 4; g++) {
    const skip = cifg && g === 0;
    cell.w.push(skip ? null : rnd(nCell * nInput));
    cell.r.push(skip ? null : rnd(nCell * nOutput));
    cell.b.push(skip ? null : rnd(nCell, -0.3, 0.3));
  }
  if (peephole) cell.p = [cifg ? null : rnd(nCell), rnd(nCell), rnd(nCell)];
  if (projection) {
    cell.proj = rnd(nOutput * nCell);
    if (spec.projBias) cell.projBias = rnd(nOutput, -0.2, 0.2);
  }
  if (layerNorm) cell.ln = [0, 1, 2, 3].map((g) => (cifg && g === 0 ? null : rnd(nCell, 0.5, 1.5)));
  return cell;
}

/// Appends one direction's weight tensors to `tensors` in TFLite's order
/// (input-to-gate x4, recurrent-to-gate x4, peephole x3, bias x4,
/// projection, projection bias) and returns their indices (-1: absent).
function lstmWeightTensors(cell, tensors, prefix) {
  const idx = [];
  const add = (name, shape, data) => {
    if (!data) { idx.push(-1); return; }
    tensors.push(f32(`${prefix}${name}`, shape, { data: Float32Array.from(data) }));
    idx.push(tensors.length - 1);
  };
  const G = ['input', 'forget', 'cell', 'output'];
  G.forEach((g, k) => add(`${g}_input_weights`, [cell.nCell, cell.nInput], cell.w[k]));
  G.forEach((g, k) => add(`${g}_recurrent_weights`, [cell.nCell, cell.nOutput], cell.r[k]));
  ['input', 'forget', 'output'].forEach((g, k) => add(`${g}_peephole`, [cell.nCell], cell.p?.[k]));
  G.forEach((g, k) => add(`${g}_bias`, [cell.nCell], cell.b[k]));
  add('projection_weights', [cell.nOutput, cell.nCell], cell.proj);
  add('projection_bias', [cell.nOutput], cell.projBias);
  return idx;
}

/// UNIDIRECTIONAL_SEQUENCE_LSTM model: x -> y, states variable tensors.
/// `over`: changes to the inputs list for refused models.
function lstmModel(c, cell, over = {}) {
  const { S, B, I, timeMajor } = c.dims;
  const tensors = [f32('x', timeMajor ? [S, B, I] : [B, S, I])];
  const inputs = [0, ...lstmWeightTensors(cell, tensors, 'lstm/')];
  tensors.push(f32('lstm/output_state', [B, cell.nOutput], { isVariable: over.stateNotVariable ? false : true,
    ...(over.stateNotVariable ? { data: new Float32Array(B * cell.nOutput) } : {}) }));
  inputs.push(tensors.length - 1);
  tensors.push(f32('lstm/cell_state', [B, cell.nCell], { isVariable: true }));
  inputs.push(tensors.length - 1);
  const G = ['input', 'forget', 'cell', 'output'];
  G.forEach((g, k) => {
    if (!cell.ln?.[k]) { inputs.push(-1); return; }
    tensors.push(f32(`lstm/${g}_layer_norm`, [cell.nCell], { data: Float32Array.from(cell.ln[k]) }));
    inputs.push(tensors.length - 1);
  });
  tensors.push(f32('y', timeMajor ? [S, B, cell.nOutput] : [B, S, cell.nOutput]));
  const y = tensors.length - 1;
  if (over.inputs) over.inputs(inputs, tensors);
  return buildTfliteModel({
    description: `kiln recurrent case: ${c.what}`,
    tensors,
    operators: [{ op: 'UNIDIRECTIONAL_SEQUENCE_LSTM', inputs, outputs: [y],
      options: { fused_activation_function: c.opts.act, cell_clip: c.opts.cellClip, proj_clip: c.opts.projClip,
        time_major: timeMajor, ...(over.options ?? {}) } }],
    inputs: [0], outputs: [y],
  });
}

/// BIDIRECTIONAL_SEQUENCE_LSTM model (48 inputs, no auxiliary input).
function biLstmModel(c, fw, bw, over = {}) {
  const { S, B, I, timeMajor } = c.dims;
  const tensors = [f32('x', timeMajor ? [S, B, I] : [B, S, I])];
  const inputs = [0, ...lstmWeightTensors(fw, tensors, 'fw/'), ...lstmWeightTensors(bw, tensors, 'bw/')];
  for (const [name, shape] of [['fw/output_state', [B, fw.nOutput]], ['fw/cell_state', [B, fw.nCell]],
    ['bw/output_state', [B, bw.nOutput]], ['bw/cell_state', [B, bw.nCell]]]) {
    tensors.push(f32(name, shape, { isVariable: true }));
    inputs.push(tensors.length - 1);
  }
  for (let k = 39; k < 48; k++) inputs.push(-1);
  const outShape = (n) => (timeMajor ? [S, B, n] : [B, S, n]);
  const outputs = [];
  if (c.merge) {
    tensors.push(f32('y', outShape(fw.nOutput + bw.nOutput)));
    outputs.push(tensors.length - 1);
  } else {
    tensors.push(f32('y_fw', outShape(fw.nOutput)), f32('y_bw', outShape(bw.nOutput)));
    outputs.push(tensors.length - 2, tensors.length - 1);
  }
  if (over.inputs) over.inputs(inputs, tensors);
  return buildTfliteModel({
    description: `kiln recurrent case: ${c.what}`,
    tensors,
    operators: [{ op: 'BIDIRECTIONAL_SEQUENCE_LSTM', inputs, outputs,
      options: { fused_activation_function: c.opts.act, cell_clip: c.opts.cellClip, proj_clip: c.opts.projClip,
        merge_outputs: !!c.merge, time_major: timeMajor } }],
    inputs: [0], outputs,
  });
}

function rnnWeights(spec, seed) {
  const { nInput, units } = spec;
  return { nInput, units, w: uniform(units * nInput, seed, -0.7, 0.7), r: uniform(units * units, seed + 1, -0.5, 0.5),
    b: uniform(units, seed + 2, -0.3, 0.3) };
}

function rnnModel(c, cell, over = {}) {
  const { S, B, I, timeMajor } = c.dims;
  const tensors = [f32('x', timeMajor ? [S, B, I] : [B, S, I]),
    f32('rnn/weights', [cell.units, I], { data: Float32Array.from(cell.w) }),
    f32('rnn/recurrent_weights', [cell.units, cell.units], { data: Float32Array.from(cell.r) }),
    f32('rnn/bias', [cell.units], { data: Float32Array.from(cell.b) }),
    f32('rnn/hidden_state', [B, cell.units], { isVariable: true }),
    f32('y', timeMajor ? [S, B, cell.units] : [B, S, cell.units])];
  const inputs = [0, 1, 2, 3, 4];
  if (over.inputs) over.inputs(inputs, tensors);
  return buildTfliteModel({
    description: `kiln recurrent case: ${c.what}`,
    tensors,
    operators: [{ op: 'UNIDIRECTIONAL_SEQUENCE_RNN', inputs, outputs: [5],
      options: { time_major: timeMajor, fused_activation_function: c.opts.act } }],
    inputs: [0], outputs: [5],
  });
}

// ---------------------------------------------------------------------------
// Cases

const DEF = { act: 'TANH', cellClip: 0, projClip: 0 };
const DIMS = { S: 4, B: 1, I: 3, timeMajor: false };
const LSTM = { nInput: 3, nCell: 5 };

/// A case: kind 'lstm' | 'bilstm' | 'rnn', dims, opts, weight specs.
const CASES = {
  lstm_plain: { what: 'LSTM, 5 cells, batch-major [1,4,3], TANH', kind: 'lstm', spec: LSTM },
  lstm_cifg: { what: 'LSTM with coupled input and forget gate (no input gate weights)', kind: 'lstm', spec: { ...LSTM, cifg: true } },
  lstm_peephole: { what: 'LSTM with peephole weights', kind: 'lstm', spec: { ...LSTM, peephole: true } },
  lstm_cifg_peephole: { what: 'CIFG LSTM with forget and output peepholes', kind: 'lstm', spec: { ...LSTM, cifg: true, peephole: true } },
  lstm_projection_clip: { what: 'LSTM, projection 5 -> 3 with bias, proj_clip 0.25', kind: 'lstm',
    spec: { ...LSTM, projection: true, nOutput: 3, projBias: true }, opts: { ...DEF, projClip: 0.25 } },
  lstm_projection_no_bias: { what: 'LSTM, projection 5 -> 2 without bias', kind: 'lstm', spec: { ...LSTM, projection: true, nOutput: 2 } },
  lstm_layer_norm: { what: 'layer-norm LSTM (24 inputs, coefficients 20-23)', kind: 'lstm', spec: { ...LSTM, layerNorm: true } },
  lstm_layer_norm_cifg_peephole_projection: { what: 'layer-norm CIFG LSTM with peepholes and projection 5 -> 4', kind: 'lstm',
    spec: { ...LSTM, layerNorm: true, cifg: true, peephole: true, projection: true, nOutput: 4, projBias: true } },
  lstm_time_major: { what: 'LSTM, time_major true [4,2,3]', kind: 'lstm', spec: LSTM, dims: { ...DIMS, B: 2, timeMajor: true } },
  lstm_cell_clip: { what: 'LSTM, cell_clip 0.4 (large weights)', kind: 'lstm', spec: { ...LSTM, scale: 1.5 }, opts: { ...DEF, cellClip: 0.4 } },
  lstm_relu: { what: 'LSTM, fused activation RELU', kind: 'lstm', spec: LSTM, opts: { ...DEF, act: 'RELU' } },
  lstm_relu6: { what: 'LSTM, fused activation RELU6 (large weights)', kind: 'lstm', spec: { ...LSTM, scale: 2 }, opts: { ...DEF, act: 'RELU6' } },
  lstm_batch2: { what: 'LSTM, batch 2, batch-major [2,5,3], 6 cells', kind: 'lstm', spec: { nInput: 3, nCell: 6 }, dims: { ...DIMS, S: 5, B: 2 } },
  rnn_tanh: { what: 'RNN, 4 units, TANH, batch-major [2,4,3]', kind: 'rnn', spec: { nInput: 3, units: 4 }, dims: { ...DIMS, B: 2 } },
  rnn_relu: { what: 'RNN, 4 units, RELU, batch-major [1,4,3]', kind: 'rnn', spec: { nInput: 3, units: 4 }, opts: { ...DEF, act: 'RELU' } },
  rnn_none: { what: 'RNN, 4 units, no activation (NONE: the identity, applied in place)', kind: 'rnn', spec: { nInput: 3, units: 4 },
    opts: { ...DEF, act: 'NONE' } },
  rnn_relu_time_major: { what: 'RNN, 3 units, RELU, time_major [5,2,3]', kind: 'rnn', spec: { nInput: 3, units: 3 },
    opts: { ...DEF, act: 'RELU' }, dims: { S: 5, B: 2, I: 3, timeMajor: true } },
  bilstm_merged: { what: 'bidirectional LSTM, merge_outputs, time_major [4,1,3], 4 cells', kind: 'bilstm', merge: true,
    spec: { nInput: 3, nCell: 4 }, bwSpec: { nInput: 3, nCell: 4 }, dims: { ...DIMS, timeMajor: true } },
  bilstm_separate: { what: 'bidirectional LSTM, two outputs, batch-major [2,4,3], peepholes and projection', kind: 'bilstm', merge: false,
    spec: { nInput: 3, nCell: 4, peephole: true, projection: true, nOutput: 3 }, bwSpec: { nInput: 3, nCell: 4, projection: true, nOutput: 3, projBias: true },
    dims: { ...DIMS, B: 2 } },
};

function setup(name, c) {
  const seed = [...name].reduce((a, ch) => (a * 31 + ch.charCodeAt(0)) >>> 0, 7);
  const dims = c.dims ?? DIMS;
  const opts = c.opts ?? DEF;
  const full = { ...c, dims, opts };
  if (c.kind === 'rnn') {
    const cell = rnnWeights(c.spec, seed);
    return { full, seed, cells: [cell], model: () => rnnModel(full, cell), outWidths: [cell.units] };
  }
  const fw = lstmWeights(c.spec, seed);
  if (c.kind === 'lstm') return { full, seed, cells: [fw], model: () => lstmModel(full, fw), outWidths: [fw.nOutput] };
  const bw = lstmWeights(c.bwSpec, seed + 1000);
  return { full, seed, cells: [fw, bw], model: () => biLstmModel(full, fw, bw),
    outWidths: c.merge ? [fw.nOutput + bw.nOutput] : [fw.nOutput, bw.nOutput] };
}

/// The three invocations' inputs and the independent outputs ([step][k]).
function evaluate(s) {
  const { dims, opts, kind } = s.full;
  const { S, B, I, timeMajor } = dims;
  const xs = Array.from({ length: STEPS }, (_, k) => uniform(S * B * I, s.seed + 100 + k));
  const zero = (n) => new Float64Array(n);
  const states = s.cells.map((cell) => Array.from({ length: B }, () => (kind === 'rnn' ? zero(cell.units)
    : { h: zero(cell.nOutput), c: zero(cell.nCell) })));
  const outShape = (n) => (timeMajor ? [S, B, n] : [B, S, n]);
  const outputs = xs.map((x) => {
    if (kind === 'rnn') {
      const y = new Float64Array(S * B * s.cells[0].units);
      rnnRun(s.cells[0], opts, x, dims, states[0], y);
      return [{ data: y, shape: outShape(s.cells[0].units) }];
    }
    if (kind === 'lstm') {
      const y = new Float64Array(S * B * s.cells[0].nOutput);
      lstmRun(s.cells[0], opts, x, dims, states[0], y, 0, s.cells[0].nOutput, false);
      return [{ data: y, shape: outShape(s.cells[0].nOutput) }];
    }
    const [fw, bw] = s.cells;
    if (s.full.merge) {
      const w = fw.nOutput + bw.nOutput;
      const y = new Float64Array(S * B * w);
      lstmRun(fw, opts, x, dims, states[0], y, 0, w, false);
      lstmRun(bw, opts, x, dims, states[1], y, fw.nOutput, w, true);
      return [{ data: y, shape: outShape(w) }];
    }
    const yf = new Float64Array(S * B * fw.nOutput), yb = new Float64Array(S * B * bw.nOutput);
    lstmRun(fw, opts, x, dims, states[0], yf, 0, fw.nOutput, false);
    lstmRun(bw, opts, x, dims, states[1], yb, 0, bw.nOutput, true);
    return [{ data: yf, shape: outShape(fw.nOutput) }, { data: yb, shape: outShape(bw.nOutput) }];
  });
  return { inputs: xs.map((x) => [{ data: x, shape: timeMajor ? [S, B, I] : [B, S, I] }]), outputs };
}

// ---------------------------------------------------------------------------
// Refused models

/// Base LSTM / RNN / bidirectional cases the refused models modify.
function refusedLstm(what, over, spec = LSTM, opts = DEF, dims = DIMS) {
  const c = { what, opts, dims };
  return () => lstmModel(c, lstmWeights(spec, 5), over);
}

const REFUSED = {
  lstm_rank2_input: { what: 'LSTM whose input is [4,3] (rank 2)',
    model: refusedLstm('rank-2 input', { inputs: (inputs, tensors) => { tensors[0] = f32('x', [4, 3]); } }) },
  lstm_missing_forget_weights: { what: 'LSTM without input-to-forget weights (input 2 is -1)',
    model: refusedLstm('missing forget weights', { inputs: (inputs) => { inputs[2] = -1; } }) },
  lstm_missing_cell_bias: { what: 'LSTM without cell gate bias (input 14 is -1)',
    model: refusedLstm('missing cell bias', { inputs: (inputs) => { inputs[14] = -1; } }) },
  lstm_state_not_variable: { what: 'LSTM whose output state (input 18) is a constant, not a variable tensor',
    model: refusedLstm('state not variable', { stateNotVariable: true }) },
  lstm_sign_bit_activation: { what: 'LSTM with fused activation SIGN_BIT',
    model: refusedLstm('SIGN_BIT', { options: { fused_activation_function: 'SIGN_BIT' } }) },
  // TFLite 2.9 runs it, but its float kernel writes no cell output for NONE
  // (lstm_eval.cc CalculateLstmOutputFloat: ApplyActivationToVector leaves
  // the scratch as it was): measured once on lstm_plain's weights, its
  // outputs differ from an LSTM without activation by up to 0.4.
  lstm_none_activation: { what: 'LSTM with fused activation NONE',
    model: refusedLstm('NONE', { options: { fused_activation_function: 'NONE' } }) },
  lstm_negative_cell_clip: { what: 'LSTM with cell_clip -1',
    model: refusedLstm('negative cell_clip', { options: { cell_clip: -1 } }) },
  lstm_wrong_recurrent_shape: { what: 'LSTM whose recurrent-to-cell weights are [5,4] (n_output is 5)',
    model: refusedLstm('wrong recurrent shape', { inputs: (inputs, tensors) => {
      tensors.push(f32('lstm/bad_recurrent', [5, 4], { data: uniform(20, 9) }));
      inputs[7] = tensors.length - 1;
    } }) },
  lstm_hybrid_int8_weights: { what: 'hybrid LSTM: float32 input, int8 input-to-cell weights',
    model: refusedLstm('hybrid', { inputs: (inputs, tensors) => {
      tensors.push({ name: 'lstm/cell_input_weights_int8', shape: [5, 3], dtype: 'int8', data: Int8Array.from({ length: 15 }, (_, k) => k - 7),
        quantization: { scale: [0.05], zeroPoint: [0] } });
      inputs[3] = tensors.length - 1;
    } }) },
  rnn_state_not_variable: { what: 'RNN whose hidden state is a model input, not a variable tensor',
    model: () => {
      const c = { what: 'RNN state not variable', opts: DEF, dims: DIMS };
      const cell = rnnWeights({ nInput: 3, units: 4 }, 3);
      const tensors = [f32('x', [1, 4, 3]), f32('rnn/weights', [4, 3], { data: Float32Array.from(cell.w) }),
        f32('rnn/recurrent_weights', [4, 4], { data: Float32Array.from(cell.r) }), f32('rnn/bias', [4], { data: Float32Array.from(cell.b) }),
        f32('h', [1, 4]), f32('y', [1, 4, 4])];
      return buildTfliteModel({ description: `kiln recurrent case: ${c.what}`, tensors,
        operators: [{ op: 'UNIDIRECTIONAL_SEQUENCE_RNN', inputs: [0, 1, 2, 3, 4], outputs: [5], options: { time_major: false, fused_activation_function: 'TANH' } }],
        inputs: [0, 4], outputs: [5] });
    } },
  rnn_missing_bias: { what: 'RNN without bias (input 3 is -1)',
    model: () => rnnModel({ what: 'RNN missing bias', opts: DEF, dims: DIMS }, rnnWeights({ nInput: 3, units: 4 }, 4),
      { inputs: (inputs) => { inputs[3] = -1; } }) },
  bilstm_aux_input: { what: 'bidirectional LSTM with an auxiliary input (input 39)',
    model: () => {
      const c = { what: 'bidirectional LSTM, aux input', opts: DEF, dims: { ...DIMS, timeMajor: true }, merge: true };
      const fw = lstmWeights({ nInput: 3, nCell: 4 }, 1), bw = lstmWeights({ nInput: 3, nCell: 4 }, 2);
      return biLstmModel(c, fw, bw, { inputs: (inputs, tensors) => {
        tensors.push(f32('aux', [4, 1, 3], { data: uniform(12, 3) }));
        inputs[39] = tensors.length - 1;
      } });
    } },
};

// ---------------------------------------------------------------------------
// The public model (tests/data/state/tflm_mnist_lstm, README.md there)

const PUBLIC = {
  tflm_mnist_lstm: {
    what: "TensorFlow Lite Micro's mnist_lstm example (trained_lstm.tflite): UNIDIRECTIONAL_SEQUENCE_LSTM over 28 rows of 28 pixels, then FULLY_CONNECTED and SOFTMAX",
    sha256: '',
    inputs: (step) => [{ data: uniform(28 * 28, 4200 + step, 0, 1), shape: [1, 28, 28] }],
    outputShapes: [[1, 10]],
  },
};

/// Independent float64 evaluation of a parsed model file (tflite_flatbuffer.mjs)
/// made of UNIDIRECTIONAL_SEQUENCE_LSTM, RESHAPE, FULLY_CONNECTED and SOFTMAX
/// (the public model's operators), over consecutive invocations: the LSTM's
/// variable tensors carry from one to the next. Returns run(inputs) -> outputs.
function modelEvaluator(parsed) {
  const sg = parsed.subgraphs[0];
  const variables = new Map(); // tensor index -> Float64Array
  const dataOf = (i) => (i < 0 ? null : sg.tensors[i].data);
  const lstmCell = (o) => {
    const t = (k) => dataOf(o.inputs[k]);
    const w = [1, 2, 3, 4].map(t), r = [5, 6, 7, 8].map(t), b = [12, 13, 14, 15].map(t);
    const [nCell, nInput] = sg.tensors[o.inputs[2]].shape;
    const nOutput = sg.tensors[o.inputs[6]].shape[1];
    const cell = { nInput, nCell, nOutput, w, r, b };
    if (t(10)) cell.p = [t(9), t(10), t(11)];
    if (t(16)) { cell.proj = t(16); cell.projBias = t(17); }
    if (o.inputs.length > 20 && t(21)) cell.ln = [20, 21, 22, 23].map(t);
    return cell;
  };
  return (inputs) => {
    const values = new Map();
    sg.inputs.forEach((index, k) => values.set(index, Float64Array.from(inputs[k].data)));
    const valueOf = (i) => values.get(i) ?? variables.get(i) ?? (sg.tensors[i].isVariable ? new Float64Array(sg.tensors[i].shape.reduce((a, d) => a * d, 1)) : Float64Array.from(sg.tensors[i].data));
    for (const o of sg.operators) {
      const opts = o.options ?? {};
      if (o.op === 'UNIDIRECTIONAL_SEQUENCE_LSTM') {
        const cell = lstmCell(o);
        const [d0, d1, I] = sg.tensors[o.inputs[0]].shape;
        const timeMajor = !!opts.time_major;
        const dims = { S: timeMajor ? d0 : d1, B: timeMajor ? d1 : d0, I, timeMajor };
        const h = valueOf(o.inputs[18]), c = valueOf(o.inputs[19]);
        const states = Array.from({ length: dims.B }, (_, b) => ({ h: h.slice(b * cell.nOutput, (b + 1) * cell.nOutput), c: c.slice(b * cell.nCell, (b + 1) * cell.nCell) }));
        const y = new Float64Array(dims.S * dims.B * cell.nOutput);
        const act = opts.fused_activation_function ?? 'NONE';
        lstmRun(cell, { act, cellClip: opts.cell_clip ?? 0, projClip: opts.proj_clip ?? 0 }, valueOf(o.inputs[0]), dims, states, y, 0, cell.nOutput, false);
        variables.set(o.inputs[18], Float64Array.from(states.flatMap((st) => Array.from(st.h))));
        variables.set(o.inputs[19], Float64Array.from(states.flatMap((st) => Array.from(st.c))));
        values.set(o.outputs[0], y);
      } else if (o.op === 'RESHAPE') {
        values.set(o.outputs[0], valueOf(o.inputs[0]));
      } else if (o.op === 'FULLY_CONNECTED') {
        const x = valueOf(o.inputs[0]);
        const [n, k] = sg.tensors[o.inputs[1]].shape;
        const w = valueOf(o.inputs[1]);
        const bias = o.inputs[2] >= 0 ? valueOf(o.inputs[2]) : null;
        const rows = x.length / k;
        const y = new Float64Array(rows * n);
        for (let m = 0; m < rows; m++) {
          const v = matVec(w, n, k, x.subarray(m * k, (m + 1) * k));
          for (let j = 0; j < n; j++) y[m * n + j] = ACTS[opts.fused_activation_function ?? 'NONE'](v[j] + (bias ? bias[j] : 0));
        }
        values.set(o.outputs[0], y);
      } else if (o.op === 'SOFTMAX') {
        const x = valueOf(o.inputs[0]);
        const shape = sg.tensors[o.inputs[0]].shape;
        const n = shape[shape.length - 1];
        const y = new Float64Array(x.length);
        for (let r = 0; r < x.length / n; r++) {
          const row = x.subarray(r * n, (r + 1) * n);
          const mx = Math.max(...row);
          const e = Array.from(row, (v) => Math.exp((v - mx) * (opts.beta ?? 1)));
          const sum = e.reduce((a, b) => a + b, 0);
          e.forEach((v, j) => { y[r * n + j] = v / sum; });
        }
        values.set(o.outputs[0], y);
      } else {
        throw new Error(`modelEvaluator: operator ${o.op} is not evaluated here`);
      }
    }
    return sg.outputs.map((i) => valueOf(i));
  };
}

// ---------------------------------------------------------------------------

function close(got, want) {
  let max = 0;
  let ok = got.length === want.length;
  for (let i = 0; i < Math.min(got.length, want.length); i++) {
    const d = Math.abs(Number(got[i]) - Number(want[i]));
    max = Math.max(max, d);
    if (!(d <= TOL * (1 + Math.abs(Number(want[i]))))) ok = false;
  }
  return { ok, max };
}

const stepDir = (dir, step) => (step === 0 ? dir : path.join(dir, `step_${step}`));

function sameFile(file, bytes) {
  return fs.existsSync(file) && Buffer.from(fs.readFileSync(file)).equals(Buffer.from(bytes));
}

async function main() {
  const check = process.argv.includes('--check');
  let failures = 0;
  const problem = (m) => { console.error(`make_recurrent_cases: ${m}`); failures++; };
  let native = null;
  if (!check) {
    const { buildNative, runNative } = await import('./tflite_native_reference.mjs');
    native = { exe: buildNative(), runNative };
  }
  const index = [];
  for (const [name, c] of Object.entries(CASES)) {
    const dir = path.join(OUT, name);
    const s = setup(name, c);
    const model = s.model();
    const { inputs, outputs } = evaluate(s);
    if (check) {
      if (!sameFile(path.join(dir, 'model.tflite'), model)) problem(`${name}/model.tflite is not what this script builds`);
      for (let step = 0; step < STEPS; step++) {
        inputs[step].forEach((t, k) => {
          if (!sameFile(path.join(stepDir(dir, step), `input_${k}.npy`), encodeNpy(t.data, t.shape))) problem(`${name} step ${step} input_${k}.npy is not what this script builds`);
        });
        outputs[step].forEach((e, k) => {
          const stored = readNpy(path.join(stepDir(dir, step), `output_${k}.npy`));
          if (!close(stored.data, e.data).ok) problem(`${name} step ${step} output_${k}.npy differs from the independent evaluation`);
        });
      }
      continue;
    }
    fs.mkdirSync(dir, { recursive: true });
    const modelPath = path.join(dir, 'model.tflite');
    fs.writeFileSync(modelPath, model);
    const outputCount = outputs[0].length;
    const run = native.runNative({ exe: native.exe, model: modelPath, inputs: inputs.flat().map((t) => t.data), outputCount, steps: STEPS });
    let maxDiff = 0;
    for (let step = 0; step < STEPS; step++) {
      const d = stepDir(dir, step);
      fs.mkdirSync(d, { recursive: true });
      inputs[step].forEach((t, k) => fs.writeFileSync(path.join(d, `input_${k}.npy`), encodeNpy(t.data, t.shape)));
      outputs[step].forEach((e, k) => {
        const b = run.outputs[step * outputCount + k];
        const got = new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
        const { ok, max } = close(got, e.data);
        maxDiff = Math.max(maxDiff, max);
        if (!ok) problem(`${name} step ${step}: TFLite's output ${k} differs from the independent evaluation by up to ${max}`);
        fs.writeFileSync(path.join(d, `output_${k}.npy`), encodeNpy(Float32Array.from(got), e.shape));
      });
    }
    fs.writeFileSync(path.join(dir, 'meta.json'), `${JSON.stringify({
      case: name, what: c.what, steps: STEPS,
      reference: 'TFLite 2.9 native library, builtin kernels (no delegate), 3 consecutive invokes of one interpreter (state carried)',
      independent: `tests/reference/make_recurrent_cases.mjs (float64, state carried), agrees within ${TOL} x (1 + |value|); max |diff| ${maxDiff.toExponential(2)}`,
      layout: 'step 0 at the top level, steps 1 and 2 in step_1/ and step_2/',
    }, null, 2)}\n`);
    console.log(`${name}: TFLite vs independent max |diff| ${maxDiff.toExponential(2)}`);
    index.push({ name, what: c.what, tfliteVsIndependent: maxDiff });
  }
  for (const [name, p] of Object.entries(PUBLIC)) {
    const dir = path.join(OUT, name);
    const modelPath = path.join(dir, 'model.tflite');
    if (!fs.existsSync(modelPath)) { problem(`${name}/model.tflite is missing (README.md there says where it comes from)`); continue; }
    const sha = crypto.createHash('sha256').update(fs.readFileSync(modelPath)).digest('hex');
    const readme = fs.readFileSync(path.join(dir, 'README.md'), 'utf8');
    if (!readme.includes(sha)) problem(`${name}/model.tflite has sha256 ${sha}, which its README.md does not give`);
    const inputs = Array.from({ length: STEPS }, (_, step) => p.inputs(step));
    const run = modelEvaluator(parseTflite(fs.readFileSync(modelPath)));
    const expected = inputs.map((group) => run(group));
    if (check) {
      for (let step = 0; step < STEPS; step++) {
        inputs[step].forEach((t, k) => {
          if (!sameFile(path.join(stepDir(dir, step), `input_${k}.npy`), encodeNpy(t.data, t.shape))) problem(`${name} step ${step} input_${k}.npy is not what this script builds`);
        });
        expected[step].forEach((e, k) => {
          const stored = readNpy(path.join(stepDir(dir, step), `output_${k}.npy`));
          if (!close(stored.data, e).ok) problem(`${name} step ${step} output_${k}.npy differs from the independent evaluation`);
        });
      }
      continue;
    }
    const outputCount = p.outputShapes.length;
    const tflite = native.runNative({ exe: native.exe, model: modelPath, inputs: inputs.flat().map((t) => t.data), outputCount, steps: STEPS });
    let maxDiff = 0;
    for (let step = 0; step < STEPS; step++) {
      const d = stepDir(dir, step);
      fs.mkdirSync(d, { recursive: true });
      inputs[step].forEach((t, k) => fs.writeFileSync(path.join(d, `input_${k}.npy`), encodeNpy(t.data, t.shape)));
      p.outputShapes.forEach((shape, k) => {
        const b = tflite.outputs[step * outputCount + k];
        const got = new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
        const { ok, max } = close(got, expected[step][k]);
        maxDiff = Math.max(maxDiff, max);
        if (!ok) problem(`${name} step ${step}: TFLite's output ${k} differs from the independent evaluation by up to ${max}`);
        fs.writeFileSync(path.join(d, `output_${k}.npy`), encodeNpy(got, shape));
      });
    }
    console.log(`${name}: TFLite vs independent max |diff| ${maxDiff.toExponential(2)}`);
    fs.writeFileSync(path.join(dir, 'meta.json'), `${JSON.stringify({
      case: name, what: p.what, steps: STEPS, sha256: sha,
      reference: 'TFLite 2.9 native library, builtin kernels (no delegate), 3 consecutive invokes of one interpreter (state carried)',
      inputs: 'uniform [0, 1) like pixel data, mulberry32 seeds 4200 + step',
      independent: `tests/reference/make_recurrent_cases.mjs modelEvaluator (float64, state carried), agrees within ${TOL} x (1 + |value|); max |diff| ${maxDiff.toExponential(2)}`,
      layout: 'step 0 at the top level, steps 1 and 2 in step_1/ and step_2/',
    }, null, 2)}\n`);
    index.push({ name, what: p.what, tfliteVsIndependent: maxDiff });
  }
  if (!check) fs.mkdirSync(REFUSED_DIR, { recursive: true });
  for (const [name, r] of Object.entries(REFUSED)) {
    const file = path.join(REFUSED_DIR, `${name}.tflite`);
    const model = r.model();
    if (check) {
      if (!sameFile(file, model)) problem(`refused/${name}.tflite is not what this script builds`);
      continue;
    }
    fs.writeFileSync(file, model);
    let tflite;
    try {
      const inputCount = name === 'rnn_state_not_variable' ? 2 : 1;
      const shapes = name === 'rnn_state_not_variable' ? [12, 4] : [12];
      native.runNative({ exe: native.exe, model: file, inputs: shapes.slice(0, inputCount).map((n, k) => uniform(n, k)), outputCount: 1 });
      tflite = 'runs it';
    } catch (e) {
      tflite = `refuses it (${String(e.message).split('\n')[0].slice(0, 160)})`;
    }
    console.log(`refused/${name}.tflite: TFLite ${tflite}`);
    index.push({ name: `refused/${name}.tflite`, what: r.what, tflite });
  }
  if (!check) fs.writeFileSync(path.join(OUT, 'index.json'), `${JSON.stringify(index, null, 2)}\n`);
  if (failures) process.exit(1);
  console.log(check ? 'recurrent state cases: all match' : `wrote ${Object.keys(CASES).length + Object.keys(PUBLIC).length} cases and ${Object.keys(REFUSED).length} refused models to ${OUT}`);
}

main().catch((e) => { console.error(e); process.exit(1); });
