#!/usr/bin/env node
// int8 UNIDIRECTIONAL_SEQUENCE_LSTM (TFLite's integer 8x8->16 kernel: int8
// input, weights, output and output state, int16 cell state, int32 biases):
// the public TensorFlow Lite Micro models of tests/data/state/tflm_mnist_lstm_int8
// and tests/data/state/tflm_dtln, run by tests/model/StateTest.cpp
// (kiln_state_tests) over all three steps.
//
//   node tests/reference/make_int8_recurrent_cases.mjs [--check]
//
// Each folder holds the unmodified public source.tflite (README.md there:
// its source, sha256 and license), model.tflite derived from it here
// (derivedModel: its operators with tensors, weights, quantization and
// intermediates unchanged, intermediate results exposed as outputs: the
// mnist LSTM's output sequence and FULLY_CONNECTED beside the saturating
// SOFTMAX; DTLN's two LSTMs, without the FULLY_CONNECTED whose optimized
// TFLite 2.9 kernel rounds ties differently, meta.json note), meta.json,
// the first invocation's input_0.npy / output_K.npy at the top level and
// the second and third invocation's in step_1/ and step_2/. The stored
// outputs are TensorFlow Lite 2.9's native library with no delegate, three
// consecutive invokes of one interpreter (tflite_native_reference.mjs,
// steps: 3), so the LSTM state carries. The inputs are int8 values drawn
// uniformly from [-128, 127] (mulberry32 seeds below + step).
//
// Independent evaluation (int8Evaluator): TFLite 2.9's integer arithmetic
// written from its kernels, over the parsed model.tflite with the state
// carried; the stored outputs must equal it except where meta.json
// (independentDifferences) records otherwise (nowhere today). TFLite 2.9's
// integer LSTM differs from TFLite Micro's (90b983c2b3f1 lstm_eval.cc):
// gemmlowp's int16 logistic/tanh against TFLM's LUT-based
// reference_integer_ops Logistic/Tanh, and the hidden zero point subtracted
// (portable_tensor_utils.cc CwiseMul) against added; Kiln and these cases
// follow TFLite 2.9.
//
// --check (no TFLite needed; CTest reference_int8_recurrent_data_check):
// source.tflite's sha256 against README.md and meta.json, model.tflite
// against what derivedModel builds, every step's inputs against what this
// script draws, and the stored outputs against the independent evaluation.
//
// Needs the native library for writing (node fetch_models.mjs --bench).
// Deterministic: two runs give the same files.

import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { encodeNpy, readNpy } from './npy.mjs';
import { mulberry32 } from './prng.mjs';
import { buildTfliteModel } from './tflite_builder.mjs';
import { parseTflite } from './tflite_flatbuffer.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const OUT = path.join(here, '..', 'data', 'state');
const STEPS = 3;

/// int8 values uniform in [-128, 127] from mulberry32(seed).
function int8Uniform(n, seed) {
  const r = mulberry32(seed);
  return Int8Array.from({ length: n }, () => Math.min(127, Math.floor(r() * 256) - 128));
}

const PUBLIC = {
  tflm_mnist_lstm_int8: {
    what: "TensorFlow Lite Micro's mnist_lstm example, int8 (trained_lstm_int8.tflite): integer UNIDIRECTIONAL_SEQUENCE_LSTM (int16 cell state) over 28 rows of 28 pixels, then FULLY_CONNECTED and SOFTMAX",
    sha256: 'a44e4d8a6c051db582414915ee28ee0462bd47e9f150e4a095fb5a126b88d885',
    seed: 4300,
    keepOps: [0, 3],
    outputTensors: [23, 25, 26], // the LSTM's [1, 28, 20] sequence, FULLY_CONNECTED, SOFTMAX
    inputShapes: [[1, 28, 28]],
    outputShapes: [[1, 28, 20], [1, 10], [1, 10]],
  },
  tflm_dtln: {
    what: "TensorFlow Lite Micro's DTLN noise suppression example (dtln_noise_suppression.tflite): two integer UNIDIRECTIONAL_SEQUENCE_LSTMs (int16 cell states) over one frame of 257 int8 features, then FULLY_CONNECTED and LOGISTIC",
    sha256: '91e94316d1a4747dd3bddcf58423927e97213913a9b4210edca3f9402b2ff0fe',
    seed: 4400,
    keepOps: [0, 1],
    outputTensors: [34, 42], // the two LSTMs' outputs
    note: "The source model's FULLY_CONNECTED and LOGISTIC after the LSTMs are left out: on these inputs TFLite 2.9's optimized int8 FULLY_CONNECTED differs from TFLite's reference MultiplyByQuantizedMultiplier (double rounding, half away from zero; TFLite Micro's arithmetic, and Kiln's) on 3 of 257 values at step 1 and 1 at step 2, each 1 LSB where the rounded high product lands on an exact half (-111.4985, -101.5020, -95.5001, -119.5010 before rounding), giving 1 LSB on output 179 at step 2 of the full model; the LSTM outputs agree exactly",
    inputShapes: [[1, 1, 257]],
    outputShapes: [[1, 1, 128], [1, 1, 128]],
  },
};

// ---------------------------------------------------------------------------
// Independent evaluation: TFLite 2.9's integer arithmetic, written from its
// kernels (lstm_eval.cc LstmStepInteger8x8_16, portable_tensor_utils.cc,
// gemmlowp fixedpoint.h int16 logistic/tanh, fully_connected int8,
// LOGISTIC's float-built int8 table, SOFTMAX in float) over the parsed file.

const f32 = Math.fround;

/// TFLite's QuantizeMultiplier: { m, shift } with real = m 2^(shift - 31).
function quantizeMultiplier(real) {
  if (real === 0) return { m: 0, shift: 0 };
  let shift = Math.floor(Math.log2(real)) + 1;
  let q = real / 2 ** shift;
  if (q >= 1) { q /= 2; shift++; }
  if (q < 0.5) { q *= 2; shift--; }
  let fixed = Math.round(q * 2 ** 31); // q > 0: half away from zero
  if (fixed === 2 ** 31) { fixed /= 2; shift++; }
  if (shift < -31) return { m: 0, shift: 0 };
  return { m: fixed, shift };
}

/// gemmlowp's RoundingDivideByPOT on an integer-valued number.
function divideByPot(x, e) {
  const mask = 2 ** e - 1;
  const floor = Math.floor(x / 2 ** e);
  const remainder = x - floor * 2 ** e;
  const threshold = Math.floor(mask / 2) + (x < 0 ? 1 : 0);
  return floor + (remainder > threshold ? 1 : 0);
}

/// int32 SaturatingRoundingDoublingHighMul.
function highMul32(a, b) {
  if (a === b && a === -(2 ** 31)) return 2 ** 31 - 1;
  const ab = BigInt(a) * BigInt(b);
  const nudge = ab >= 0n ? 1n << 30n : 1n - (1n << 30n);
  return Number((ab + nudge) / (1n << 31n)); // BigInt division truncates
}

/// TFLite's MultiplyByQuantizedMultiplier.
function mbqm(x, { m, shift }) {
  const left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
  const shifted = Math.max(-(2 ** 31), Math.min(2 ** 31 - 1, x * 2 ** left));
  return divideByPot(highMul32(shifted, m), right);
}

const clamp = (v, lo, hi) => Math.min(hi, Math.max(lo, v));
const wrap16 = (v) => ((((v % 65536) + 65536 + 32768) % 65536) - 32768);

// gemmlowp int16 fixed point (fixedpoint.h), raw values.
function highMul16(a, b) {
  if (a === b && a === -32768) return 32767;
  const ab = a * b;
  const nudge = ab >= 0 ? 1 << 14 : 1 - (1 << 14);
  return wrap16(Math.trunc((ab + nudge) / 32768));
}
function mulPot16(x, e) {
  if (e === 0) return x;
  if (e < 0) return wrap16(divideByPot(x, -e));
  const threshold = (1 << (15 - e)) - 1;
  if (x > threshold) return 32767;
  if (x < -threshold) return -32768;
  return x * 2 ** e;
}
const c16 = (raw32) => wrap16(divideByPot(raw32, 16));
function expQuarter(a) {
  const ct = c16(1895147668), third = c16(715827883);
  const x = wrap16(a + (1 << 12));
  const x2 = highMul16(x, x), x3 = highMul16(x2, x), x4 = highMul16(x2, x2);
  const poly = mulPot16(wrap16(highMul16(wrap16(mulPot16(x4, -2) + x3), third) + x2), -1);
  return clamp(ct + highMul16(ct, wrap16(x + poly)), -32768, 32767);
}
function expNegative(a, intBits) {
  const frac = 15 - intBits;
  const quarter = 1 << (frac - 2);
  const modQuarter = wrap16((a & (quarter - 1)) - quarter);
  let result = expQuarter(mulPot16(modQuarter, intBits));
  const remainder = wrap16(modQuarter - a);
  const mults = [1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242];
  mults.forEach((mult, k) => {
    const e = k - 2;
    if (intBits > e && (remainder & (1 << (frac + e)))) result = highMul16(result, c16(mult));
  });
  if (intBits > 5 && a < c16(-(2 ** (36 - intBits)))) result = 0;
  return a === 0 ? 32767 : result;
}
function reciprocalOnePlus(a, tanhForm) {
  const sum = a + 32767;
  const half = wrap16(Math.trunc((sum + (sum >= 0 ? 1 : -1)) / 2));
  let x = wrap16(c16(1515870810) + highMul16(half, c16(-1010580540)));
  for (let k = 0; k < 3; k++) {
    const oneMinus = wrap16((1 << 13) - highMul16(half, x));
    x = wrap16(x + mulPot16(highMul16(x, oneMinus), 2));
  }
  return tanhForm ? mulPot16(wrap16(x - (1 << 13)), 2) : mulPot16(x, 1);
}
function logistic16(a, intBits) {
  if (a === 0) return c16(1 << 30);
  const abs = a > 0 ? a : wrap16(-a);
  const pos = reciprocalOnePlus(expNegative(wrap16(-abs), intBits), false);
  return a > 0 ? pos : wrap16(32767 - pos);
}
function tanh16(a, intBits) {
  if (a === 0) return 0;
  const n = a < 0 ? a : wrap16(-a);
  const t = reciprocalOnePlus(expNegative(n, intBits + 1), true);
  return a < 0 ? wrap16(-t) : t;
}

/// Runs a parsed model (UNIDIRECTIONAL_SEQUENCE_LSTM int8, RESHAPE,
/// FULLY_CONNECTED int8, LOGISTIC int8, SOFTMAX int8) over consecutive
/// invocations; variables carry. Returns run(inputs: Int8Array[]) -> Int8Array[].
function int8Evaluator(parsed) {
  const sg = parsed.subgraphs[0];
  const T = sg.tensors;
  const q = (i) => ({ s: T[i].quantization.scale[0], z: T[i].quantization.zeroPoint[0] });
  const vars = new Map();
  const sigmoidTable = new Int16Array(65536), tanh3 = new Int16Array(65536);
  for (let v = -32768; v < 32768; v++) { sigmoidTable[v + 32768] = logistic16(v, 3); tanh3[v + 32768] = tanh16(v, 3); }
  const lstm = (op, values) => {
    const inp = op.inputs;
    const x = values.get(inp[0]);
    const tm = !!op.options.time_major;
    const [d0, d1, I] = T[inp[0]].shape;
    const [B, S] = tm ? [d1, d0] : [d0, d1];
    const at = (bb, t) => (tm ? t * B + bb : bb * S + t); // row of x and of the output
    const N = T[inp[2]].shape[0];
    const cifg = inp[1] < 0;
    const sx = q(inp[0]), sh = q(inp[18]);
    const cellScale = T[inp[19]].quantization.scale[0];
    const cellPower = Math.round(Math.log2(cellScale));
    const hidden = q(op.intermediates[4]);
    const hiddenM = quantizeMultiplier(f32(2 ** -15 / f32(hidden.s) * 2 ** -15));
    const clip = op.options.cell_clip > 0 ? Math.trunc(clamp(f32(op.options.cell_clip / cellScale), -32768, 32767)) : 0;
    const tanhCell = (v) => tanh16(v, 15 + cellPower);
    const gates = [0, 1, 2, 3].map((g) => {
      if (cifg && g === 0) return null;
      const w = T[inp[1 + g]].data, r = T[inp[5 + g]].data, b = T[inp[12 + g]].data;
      return {
        w, r, b,
        mx: quantizeMultiplier(f32(f32(T[inp[1 + g]].quantization.scale[0] * sx.s) / f32(2 ** -12))),
        mh: quantizeMultiplier(f32(f32(T[inp[5 + g]].quantization.scale[0] * sh.s) / f32(2 ** -12))),
      };
    });
    let h = vars.get(inp[18]) ?? new Int8Array(B * N).fill(sh.z);
    let c = vars.get(inp[19]) ?? new Int16Array(B * N);
    const out = new Int8Array(B * S * N);
    for (let t = 0; t < S; t++) {
      const act = [];
      for (let g = cifg ? 1 : 0; g < 4; g++) {
        const G = gates[g];
        const a = new Int16Array(B * N);
        for (let bb = 0; bb < B; bb++) for (let n = 0; n < N; n++) {
          let acc = G.b[n];
          for (let k = 0; k < I; k++) acc += (x[at(bb, t) * I + k] - sx.z) * G.w[n * I + k];
          let v = clamp(mbqm(acc, G.mx), -32768, 32767);
          let acc2 = 0;
          for (let k = 0; k < N; k++) acc2 += (h[bb * N + k] - sh.z) * G.r[n * N + k];
          v = clamp(mbqm(acc2, G.mh) + v, -32768, 32767);
          a[bb * N + n] = g === 2 ? tanh3[v + 32768] : sigmoidTable[v + 32768];
        }
        act[g] = a;
      }
      if (cifg) act[0] = act[1].map((f) => 32767 - f);
      const nh = new Int8Array(B * N), nc = new Int16Array(B * N);
      for (let e = 0; e < B * N; e++) {
        let v = divideByPot(act[1][e] * c[e], 15) + divideByPot(act[0][e] * act[2][e], 30 + cellPower);
        v = clamp(v, -32768, 32767);
        if (clip) v = clamp(v, -clip, clip);
        nc[e] = v;
        nh[e] = clamp(mbqm(act[3][e] * tanhCell(v), hiddenM) - hidden.z, -128, 127);
      }
      h = nh; c = nc;
      for (let bb = 0; bb < B; bb++) for (let n = 0; n < N; n++) out[at(bb, t) * N + n] = h[bb * N + n];
    }
    vars.set(inp[18], h); vars.set(inp[19], c);
    return out;
  };
  const fc = (op, values) => {
    const [xi, wi, bi] = op.inputs;
    const x = values.get(xi), w = T[wi].data, b = bi >= 0 ? T[bi].data : null;
    const [O, K] = T[wi].shape;
    const rows = x.length / K;
    const sx = q(xi), sw = q(wi), so = q(op.outputs[0]);
    const m = quantizeMultiplier(f32(sx.s * sw.s) / so.s);
    const y = new Int8Array(rows * O);
    for (let r = 0; r < rows; r++) for (let o = 0; o < O; o++) {
      let acc = b ? b[o] : 0;
      for (let k = 0; k < K; k++) acc += (x[r * K + k] - sx.z) * w[o * K + k];
      y[r * O + o] = clamp(mbqm(acc, m) + so.z, -128, 127);
    }
    return y;
  };
  const logistic = (op, values) => {
    const si = q(op.inputs[0]), so = q(op.outputs[0]);
    const inv = f32(1 / so.s);
    return values.get(op.inputs[0]).map((v) => {
      const d = f32(si.s * (v - si.z));
      const tr = f32(1 / (1 + Math.exp(-d)));
      const rescaled = Math.round(f32(tr * inv));
      return clamp(rescaled + so.z, -128, 127);
    });
  };
  const softmax = (op, values) => {
    const si = q(op.inputs[0]), so = q(op.outputs[0]);
    const x = values.get(op.inputs[0]);
    const n = T[op.inputs[0]].shape.at(-1);
    const y = new Int8Array(x.length);
    for (let r = 0; r < x.length / n; r++) {
      const row = Array.from(x.subarray(r * n, r * n + n), (v) => si.s * (v - si.z) * op.options.beta);
      const mx = Math.max(...row);
      const e = row.map((v) => Math.exp(v - mx));
      const sum = e.reduce((a, b) => a + b, 0);
      e.forEach((v, k) => { y[r * n + k] = clamp(Math.round(v / sum / so.s) + so.z, -128, 127); });
    }
    return y;
  };
  const ops = { UNIDIRECTIONAL_SEQUENCE_LSTM: lstm, FULLY_CONNECTED: fc, LOGISTIC: logistic, SOFTMAX: softmax, RESHAPE: (op, values) => values.get(op.inputs[0]) };
  return (inputs) => {
    const values = new Map();
    sg.inputs.forEach((t, k) => values.set(t, inputs[k]));
    for (const op of sg.operators) {
      if (!ops[op.op]) throw new Error(`${op.op} is not evaluated`);
      values.set(op.outputs[0], ops[op.op](op, values));
    }
    return sg.outputs.map((t) => values.get(t));
  };
}

// ---------------------------------------------------------------------------

/// model.tflite: operators keepOps[0]..keepOps[1] of the public
/// source.tflite with their tensors, weights, quantization and
/// intermediates unchanged (renumbered), the source's input and
/// `outputTensors` as outputs.
function derivedModel(source, { keepOps, outputTensors }) {
  const g = parseTflite(source).subgraphs[0];
  const ops = g.operators.slice(keepOps[0], keepOps[1] + 1);
  const used = [...new Set(ops.flatMap((o) => [...o.inputs, ...o.outputs, ...(o.intermediates ?? [])]).filter((i) => i >= 0))].sort((a, b) => a - b);
  const renumber = new Map(used.map((t, k) => [t, k]));
  const map = (i) => (i < 0 ? -1 : renumber.get(i));
  const tensors = used.map((i) => {
    const t = g.tensors[i];
    return {
      name: t.name, shape: t.shape, dtype: t.dtype,
      ...(t.data ? { data: t.data } : {}),
      ...(t.quantization ? { quantization: t.quantization } : {}),
      ...(t.isVariable ? { isVariable: true } : {}),
    };
  });
  return buildTfliteModel({
    tensors,
    operators: ops.map((o) => ({
      op: o.op, version: o.version, ...(o.options && Object.keys(o.options).length ? { options: o.options } : {}),
      inputs: o.inputs.map(map), outputs: o.outputs.map(map), ...(o.intermediates ? { intermediates: o.intermediates.map(map) } : {}),
    })),
    inputs: g.inputs.map(map), outputs: outputTensors.map(map),
    description: `operators ${keepOps[0]}-${keepOps[1]} of a TensorFlow Lite Micro example model, intermediate outputs exposed`,
  });
}

// ---------------------------------------------------------------------------
// Built int8 LSTMs (tflite_builder.mjs), with the quantization TFLite's
// converter gives an integer LSTM: symmetric per-tensor int8 weights, int32
// biases of scale s_x s_W, an int16 cell state of a power-of-two scale, the
// output state and output of one scale and zero point, and five
// intermediates (four float32 gate scratch tensors, unused without layer
// norm, and the int8 hidden state of the output's quantization).

const BUILT = {
  int8_lstm_cifg_batch2: {
    what: 'int8 LSTM, CIFG (no input gate), batch 2, 4 steps, input 5, 6 cells, cell state scale 2^-11, output zero point 3 (TFLite 2.9 subtracts it at the hidden state)',
    B: 2, S: 4, I: 5, N: 6, cifg: true, cellPower: -11, hiddenZp: 3, cellClip: 0, seed: 7100,
  },
  int8_lstm_time_major_clip: {
    what: 'int8 LSTM, time_major [5, 1, 3], 4 cells, cell state scale 2^-12, cell_clip 1.5 (quantized to 6144), output zero point -5',
    B: 1, S: 5, I: 3, N: 4, timeMajor: true, cellPower: -12, hiddenZp: -5, cellClip: 1.5, seed: 7200,
  },
  int8_lstm_cell_scale_2e10: {
    what: 'int8 LSTM, 6 steps, input 8, 8 cells, cell state scale 2^-10 (tanh of the cell in Q5.10), output zero point 0',
    B: 1, S: 6, I: 8, N: 8, cellPower: -10, hiddenZp: 0, cellClip: 0, seed: 7300,
  },
};

// Int8 LSTMs Kiln refuses (tests/data/state/refused/int8_lstm_*.tflite;
// RecurrentTest.cpp checks each one-line error): forms the integer
// converter does not handle yet and malformed quantization.
const BASE = { B: 1, S: 3, I: 4, N: 4, cellPower: -11, hiddenZp: 0, cellClip: 0, seed: 7500 };
const REFUSED = {
  int8_lstm_peephole: { what: 'int8 LSTM with peephole weights (int16 cell-to-gate weights)', variant: 'peephole' },
  int8_lstm_projection: { what: 'int8 LSTM with projection weights', variant: 'projection' },
  int8_lstm_layer_norm: { what: 'int8 LSTM with layer-norm coefficients', variant: 'layerNorm' },
  int8_lstm_relu: { what: 'int8 LSTM with fused activation RELU (the integer kernel computes TANH)', variant: 'relu' },
  int8_lstm_cell_scale_not_pot: { what: 'int8 LSTM whose int16 cell state scale 0.0003 is no power of two', variant: 'cellScale' },
  int8_lstm_no_intermediates: { what: 'int8 LSTM without the five intermediates (the hidden state quantization)', variant: 'noIntermediates' },
};

function builtModel(c, variant = null) {
  const r = mulberry32(c.seed);
  const ints = (n, lo, hi) => Int32Array.from({ length: n }, () => lo + Math.floor(r() * (hi - lo + 1)));
  const sx = 0.05, zx = -7, sh = 0.0078125;
  const tensors = [];
  const add = (t) => { tensors.push(t); return tensors.length - 1; };
  const xShape = c.timeMajor ? [c.S, c.B, c.I] : [c.B, c.S, c.I];
  const x = add({ name: 'x', shape: xShape, dtype: 'int8', quantization: { scale: [sx], zeroPoint: [zx] } });
  const weights = (name, rows, cols, scale) => add({ name, shape: [rows, cols], dtype: 'int8', data: Int8Array.from(ints(rows * cols, -127, 127)), quantization: { scale: [scale], zeroPoint: [0] } });
  const gates = ['input', 'forget', 'cell', 'output'];
  const ws = gates.map((g, k) => (c.cifg && k === 0 ? null : { w: 0.002 + 0.001 * k, r: 0.004 + 0.001 * k }));
  const wi = gates.map((g, k) => (ws[k] ? weights(`w_${g}`, c.N, c.I, ws[k].w) : -1));
  const ri = gates.map((g, k) => (ws[k] ? weights(`r_${g}`, c.N, c.N, ws[k].r) : -1));
  const bi = gates.map((g, k) => (ws[k] ? add({ name: `b_${g}`, shape: [c.N], dtype: 'int32', data: ints(c.N, -3000, 3000), quantization: { scale: [Math.fround(sx * ws[k].w)], zeroPoint: [0] } }) : -1));
  const h = add({ name: 'output_state', shape: [c.B, c.N], dtype: 'int8', isVariable: true, quantization: { scale: [sh], zeroPoint: [c.hiddenZp] } });
  const cs = add({ name: 'cell_state', shape: [c.B, c.N], dtype: 'int16', isVariable: true, quantization: { scale: [variant === 'cellScale' ? 0.0003 : 2 ** c.cellPower], zeroPoint: [0] } });
  const int16Vector = (name) => add({ name, shape: [c.N], dtype: 'int16', data: Int16Array.from(ints(c.N, -1000, 1000)), quantization: { scale: [0.001], zeroPoint: [0] } });
  const peep = variant === 'peephole' ? ['cell_to_input', 'cell_to_forget', 'cell_to_output'].map(int16Vector) : [-1, -1, -1];
  const proj = variant === 'projection' ? [weights('projection', c.N, c.N, 0.01), -1] : [-1, -1];
  const norm = variant === 'layerNorm' ? gates.map((g) => int16Vector(`layer_norm_${g}`)) : [-1, -1, -1, -1];
  const y = add({ name: 'y', shape: c.timeMajor ? [c.S, c.B, c.N] : [c.B, c.S, c.N], dtype: 'int8', quantization: { scale: [sh], zeroPoint: [c.hiddenZp] } });
  const inter = variant === 'noIntermediates' ? [] : gates.map((g) => add({ name: `${g}_intermediate`, shape: [0], dtype: 'float32' }));
  if (variant !== 'noIntermediates') inter.push(add({ name: 'hidden_intermediate', shape: [0], dtype: 'int8', quantization: { scale: [sh], zeroPoint: [c.hiddenZp] } }));
  return buildTfliteModel({
    tensors,
    operators: [{
      op: 'UNIDIRECTIONAL_SEQUENCE_LSTM',
      inputs: [x, ...wi, ...ri, ...peep, ...bi, ...proj, h, cs, ...norm],
      outputs: [y], ...(variant === 'noIntermediates' ? {} : { intermediates: inter }),
      options: { fused_activation_function: variant === 'relu' ? 'RELU' : 'TANH', cell_clip: c.cellClip, proj_clip: 0, time_major: !!c.timeMajor },
    }],
    inputs: [x], outputs: [y], description: 'kiln int8 LSTM test model',
  });
}

// ---------------------------------------------------------------------------

const stepDir = (dir, step) => (step === 0 ? dir : path.join(dir, `step_${step}`));
const count = (shape) => shape.reduce((a, b) => a * b, 1);

function sameFile(file, bytes) {
  return fs.existsSync(file) && Buffer.from(fs.readFileSync(file)).equals(Buffer.from(bytes));
}

async function main() {
  const check = process.argv.includes('--check');
  let failures = 0;
  const problem = (m) => { console.error(`make_int8_recurrent_cases: ${m}`); failures++; };
  let native = null;
  if (!check) {
    const { buildNative, runNative } = await import('./tflite_native_reference.mjs');
    native = { exe: buildNative(), runNative };
  }
  const built = Object.fromEntries(Object.entries(BUILT).map(([name, c]) => [name, {
    what: c.what, seed: c.seed + 50, built: c,
    inputShapes: [c.timeMajor ? [c.S, c.B, c.I] : [c.B, c.S, c.I]],
    outputShapes: [c.timeMajor ? [c.S, c.B, c.N] : [c.B, c.S, c.N]],
  }]));
  for (const [name, p] of Object.entries({ ...PUBLIC, ...built })) {
    const dir = path.join(OUT, name);
    const modelPath = path.join(dir, 'model.tflite');
    let model, sha = null;
    if (p.built) {
      model = builtModel(p.built);
      if (!check) fs.mkdirSync(dir, { recursive: true });
    } else {
      const sourcePath = path.join(dir, 'source.tflite');
      if (!fs.existsSync(sourcePath)) { problem(`${name}/source.tflite is missing (README.md there says where it comes from)`); continue; }
      const source = fs.readFileSync(sourcePath);
      sha = crypto.createHash('sha256').update(source).digest('hex');
      if (sha !== p.sha256) problem(`${name}/source.tflite has sha256 ${sha}, not the public file's ${p.sha256}`);
      const readme = fs.readFileSync(path.join(dir, 'README.md'), 'utf8');
      if (!readme.includes(sha)) problem(`${name}/source.tflite has sha256 ${sha}, which its README.md does not give`);
      model = derivedModel(source, p);
    }
    if (check) {
      if (!sameFile(modelPath, model)) problem(`${name}/model.tflite is not what this script ${p.built ? 'builds' : 'derives from source.tflite'}`);
    } else {
      fs.writeFileSync(modelPath, model);
    }
    const inputs = Array.from({ length: STEPS }, (_, step) =>
      p.inputShapes.map((shape, k) => ({ data: int8Uniform(count(shape), p.seed + 10 * k + step), shape })));
    const evaluate = int8Evaluator(parseTflite(model));
    const expected = inputs.map((group) => evaluate(group.map((t) => t.data)));
    // Element-wise differences of `stored` (per step, per output) from the
    // independent evaluation: { differing, max, where: [step, output, index, stored, evaluated] }.
    const compare = (stored) => {
      const r = { differing: 0, max: 0, where: [] };
      stored.forEach((outs, step) => outs.forEach((got, k) => got.forEach((v, i) => {
        const e = expected[step][k][i];
        if (v === e) return;
        r.differing++;
        r.max = Math.max(r.max, Math.abs(v - e));
        r.where.push([step, k, i, v, e]);
      })));
      return r;
    };
    if (check) {
      const meta = JSON.parse(fs.readFileSync(path.join(dir, 'meta.json'), 'utf8'));
      const stored = Array.from({ length: STEPS }, (_, step) => p.outputShapes.map((_, k) => readNpy(path.join(stepDir(dir, step), `output_${k}.npy`)).data));
      const d = compare(stored);
      if (JSON.stringify(d.where) !== JSON.stringify(meta.independentDifferences)) problem(`${name}: the stored outputs differ from the independent evaluation at ${JSON.stringify(d.where)}, meta.json records ${JSON.stringify(meta.independentDifferences)}`);
      for (let step = 0; step < STEPS; step++) {
        inputs[step].forEach((t, k) => {
          if (!sameFile(path.join(stepDir(dir, step), `input_${k}.npy`), encodeNpy(t.data, t.shape))) problem(`${name} step ${step} input_${k}.npy is not what this script draws`);
        });
        p.outputShapes.forEach((shape, k) => {
          const stored = readNpy(path.join(stepDir(dir, step), `output_${k}.npy`));
          if (!(stored.data instanceof Int8Array) || JSON.stringify(stored.shape) !== JSON.stringify(shape)) problem(`${name} step ${step} output_${k}.npy is not int8 of shape ${JSON.stringify(shape)}`);
        });
      }
      if (!p.built && meta.sha256 !== sha) problem(`${name}/meta.json gives sha256 ${meta.sha256}`);
      continue;
    }
    const outputCount = p.outputShapes.length;
    const run = native.runNative({ exe: native.exe, model: modelPath, inputs: inputs.flat().map((t) => t.data), outputCount, steps: STEPS });
    const stored = [];
    for (let step = 0; step < STEPS; step++) {
      const d = stepDir(dir, step);
      stored.push([]);
      fs.mkdirSync(d, { recursive: true });
      inputs[step].forEach((t, k) => fs.writeFileSync(path.join(d, `input_${k}.npy`), encodeNpy(t.data, t.shape)));
      p.outputShapes.forEach((shape, k) => {
        const b = run.outputs[step * outputCount + k];
        const got = Int8Array.from(new Int8Array(b.buffer, b.byteOffset, b.byteLength));
        if (got.length !== count(shape)) throw new Error(`${name}: output ${k} has ${got.length} values, expected ${count(shape)}`);
        fs.writeFileSync(path.join(d, `output_${k}.npy`), encodeNpy(got, shape));
        stored[step].push(got);
      });
    }
    const diff = compare(stored);
    const total = STEPS * p.outputShapes.reduce((a, sh) => a + count(sh), 0);
    fs.writeFileSync(path.join(dir, 'meta.json'), `${JSON.stringify({
      case: name, what: p.what, steps: STEPS,
      ...(p.built ? { model: 'built by make_int8_recurrent_cases.mjs builtModel' } : {
        sha256: sha,
        model: `source.tflite is the public file (sha256 above), unchanged; model.tflite is its operators ${p.keepOps[0]}-${p.keepOps[1]} with tensors ${JSON.stringify(p.outputTensors)} as outputs (make_int8_recurrent_cases.mjs derivedModel)`,
      }),
      ...(p.note ? { note: p.note } : {}),
      reference: 'TFLite 2.9 native library, builtin kernels (no delegate), 3 consecutive invokes of one interpreter (state carried); its integer LSTM (kernels/lstm_eval.cc LstmStepInteger8x8_16) uses gemmlowp int16 logistic/tanh, where TFLite Micro 90b983c2b3f1 uses its LUT-based reference_integer_ops Logistic/Tanh: Kiln follows TFLite 2.9',
      inputs: `int8 uniform in [-128, 127], mulberry32 seeds ${p.seed} + step`,
      independent: `tests/reference/make_int8_recurrent_cases.mjs int8Evaluator (TFLite 2.9's integer arithmetic: LstmStepInteger8x8_16 with gemmlowp int16 logistic/tanh and its hidden-state zero point subtracted, int8 FULLY_CONNECTED, float-built LOGISTIC table, SOFTMAX in float64 rounded), state carried: equal on ${total - diff.differing} of ${total} values, max |diff| ${diff.max} LSB`,
      independentDifferences: diff.where,
      layout: 'step 0 at the top level, steps 1 and 2 in step_1/ and step_2/',
    }, null, 2)}\n`);
    console.log(`${name}: wrote ${STEPS} steps; independent evaluation differs on ${diff.differing} of ${total} values (max ${diff.max} LSB)`);
  }
  for (const [name, r] of Object.entries(REFUSED)) {
    const file = path.join(OUT, 'refused', `${name}.tflite`);
    const model = builtModel(BASE, r.variant);
    if (check) {
      if (!sameFile(file, model)) problem(`refused/${name}.tflite is not what this script builds`);
    } else {
      fs.writeFileSync(file, model);
    }
  }
  if (failures) process.exit(1);
  console.log(check ? 'int8 recurrent state cases: all match' : `wrote ${Object.keys(PUBLIC).length + Object.keys(BUILT).length} cases to ${OUT}`);
}

main().catch((e) => { console.error(e); process.exit(1); });
