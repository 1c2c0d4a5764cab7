#!/usr/bin/env node
// SVDF (TFLite builtin 27, a stateful operator): the cases of
// tests/data/state/svdf_*/, checked by tests/model/SvdfTest.cpp
// (kiln_svdf_tests).
//
//   node tests/reference/make_svdf_cases.mjs [--check]
//
// Each case folder holds model.tflite (one SVDF, built here with
// tflite_builder.mjs; its activation_state is a variable tensor), meta.json,
// and three consecutive invocations of one interpreter: step 0's
// input_0.npy / output_0.npy at the top level, steps 1 and 2 in step_1/ and
// step_2/ (same file names). The stored outputs are TensorFlow Lite 2.9's
// native library with no delegate (tflite_native_reference.mjs, steps: 3,
// so the state carries from one invoke to the next); each is also computed
// here, independently, from the SVDF recurrence:
//   state[b, f, :] <- state[b, f, 1:] ++ [sum_i x[b, i] wf[f, i]]
//   y[b, u] = act(bias[u] + sum_{r < rank} sum_m state[b, u*rank+r, m] wt[u*rank+r, m])
// float cases in double precision (agreeing with TFLite within 1e-5 x
// (1 + |v|)), int8 cases in exact integer arithmetic as TensorFlow Lite
// Micro's EvalIntegerSvdfReference (tensorflow/lite/micro/kernels/
// svdf_common.cc) computes them (agreeing with TFLite bit for bit):
//   column = zs + clamp(MBQM(sum_i (x - zx) wf, s1), state type range)
//   y = clamp(zo + MBQM(bias + sum_r sum_m (state - zs) wt, s2), -128, 127)
//   s1 = float(float(sx * swf) / ss), s2 = float(float(ss * swt) / so)
// (QuantizeMultiplier and MultiplyByQuantizedMultiplier from int8_eval.mjs).
// TFLite 2.9's int8 kernel requires fused RELU and then applies none, as
// TFLM ignores it; the int8 cases therefore carry RELU.
// The int8-state case (int8 weights_time and state, a TFLM form TFLite 2.9
// reads as int16) stores this script's evaluation (TFLM's arithmetic);
// meta.json says so and what TFLite 2.9 gives.
//
// The svdf_refused/*.tflite models are ones Kiln refuses (wrong ranks,
// num_filters not a multiple of rank, a state that is not a variable, a
// hybrid float/int8 SVDF, an INT16 input); SvdfTest.cpp checks the
// one-line errors.
//
// --check rebuilds every model and input in memory, compares them with the
// committed files and the stored outputs with the independent evaluation
// (no TFLite needed; CTest reference_svdf_data_check).
//
// Needs the native library for writing (node fetch_models.mjs --bench).
// Deterministic: two runs give the same files.

import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { buildTfliteModel } from './tflite_builder.mjs';
import { Table, parseTflite } from './tflite_flatbuffer.mjs';
import { encodeNpy, readNpy } from './npy.mjs';
import { mulberry32 } from './prng.mjs';
import { mbqm, quantizeMultiplier } from './int8_eval.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const OUT = path.join(here, '..', 'data', 'state');
const STEPS = 3;
const f32 = Math.fround;

/// Integers uniform in [lo, hi] from mulberry32(seed).
function ints(n, lo, hi, seed) {
  const r = mulberry32(seed);
  return Array.from({ length: n }, () => lo + Math.floor(r() * (hi - lo + 1)));
}
/// float32 values uniform in [lo, hi) from mulberry32(seed).
function floats(n, lo, hi, seed) {
  const r = mulberry32(seed);
  return Float32Array.from({ length: n }, () => lo + (hi - lo) * r());
}

/// The model of a case: `chain` SVDFs in a row that share one
/// activation_state (each reads the state the previous one left, as
/// TFLite's kernels update it in place), SVDF k reading input k and
/// writing output k. `tensor(name, shape)` gives the case's tensors.
function svdfChain({ batch, input, filters, memory, units, rank, chain, act, weights, dtypes, quant, description }) {
  const tensors = [
    { name: 'weights_feature', shape: [filters, input], ...weights.wf },
    { name: 'weights_time', shape: [filters, memory], ...weights.wt },
    { name: 'activation_state', shape: [batch, memory * filters], isVariable: true, ...dtypes.state },
  ];
  if (weights.bias) tensors.push({ name: 'bias', shape: [units], ...weights.bias });
  const biasIndex = weights.bias ? 3 : -1;
  const operators = [];
  const inputs = [], outputs = [];
  for (let k = 0; k < chain; k++) {
    const suffix = chain > 1 ? `_${k}` : '';
    inputs.push(tensors.length);
    tensors.push({ name: `input${suffix}`, shape: [batch, input], ...dtypes.input });
    outputs.push(tensors.length);
    tensors.push({ name: `output${suffix}`, shape: [batch, units], ...dtypes.output });
    operators.push({
      op: 'SVDF', inputs: [inputs[k], 0, 1, biasIndex, 2], outputs: [outputs[k]],
      options: { rank, fused_activation_function: act },
    });
  }
  return buildTfliteModel({ tensors, operators, inputs, outputs, description });
}

// --- Float cases --------------------------------------------------------------

// Float SVDF's fused activation (ApplyActivationToVector: TANH is tanh).
const ACTIVATIONS = {
  NONE: (v) => v, RELU: (v) => Math.max(v, 0), RELU6: (v) => Math.min(Math.max(v, 0), 6),
  RELU_N1_TO_1: (v) => Math.min(Math.max(v, -1), 1), TANH: Math.tanh,
};

/// One float SVDF case: sizes, rank, bias or not, fused activation.
function floatCase({ batch, input, filters, memory, rank, bias = true, act = 'NONE', chain = 1, seed }) {
  const units = filters / rank;
  const wf = floats(filters * input, -1, 1, seed + 1);
  const wt = floats(filters * memory, -1, 1, seed + 2);
  const b = bias ? floats(units, -0.5, 0.5, seed + 3) : null;
  const float = { dtype: 'float32' };
  const model = () => svdfChain({
    batch, input, filters, memory, units, rank, chain, act,
    weights: { wf: { ...float, data: wf }, wt: { ...float, data: wt }, bias: bias ? { ...float, data: b } : null },
    dtypes: { input: float, output: float, state: float },
    description: 'kiln SVDF float32 case',
  });
  const inputs = () => Array.from({ length: STEPS }, (_, s) => Array.from({ length: chain }, (_, k) => (
    { data: floats(batch * input, -2, 2, seed + 10 + chain * s + k), shape: [batch, input] })));
  // float64 recurrence over the float32 weights and inputs.
  const expect = (steps) => {
    const state = new Float64Array(batch * filters * memory);
    return steps.map((group) => group.map((x) => {
      for (let b0 = 0; b0 < batch; b0++)
        for (let f = 0; f < filters; f++) {
          const row = (b0 * filters + f) * memory;
          for (let m = 0; m + 1 < memory; m++) state[row + m] = state[row + m + 1];
          let dot = 0;
          for (let i = 0; i < input; i++) dot += x.data[b0 * input + i] * wf[f * input + i];
          state[row + memory - 1] = dot;
        }
      const y = new Float32Array(batch * units);
      for (let b0 = 0; b0 < batch; b0++)
        for (let u = 0; u < units; u++) {
          let acc = bias ? b[u] : 0;
          for (let r = 0; r < rank; r++) {
            const f = u * rank + r;
            for (let m = 0; m < memory; m++) acc += state[(b0 * filters + f) * memory + m] * wt[f * memory + m];
          }
          y[b0 * units + u] = ACTIVATIONS[act](acc);
        }
      return { data: y, shape: [batch, units] };
    }));
  };
  return { model, inputs, expect, tolerance: 1e-5, what: `float32 SVDF batch ${batch}, input ${input}, ${filters} filters, memory ${memory}, rank ${rank}, ${bias ? 'bias' : 'no bias'}, ${act}${chainText(chain)}` };
}

// --- Integer cases ------------------------------------------------------------

/// One integer SVDF case: int8 input/weights_feature/output, int32 bias,
/// weights_time and state of `stateType` ('int16', or 'int8' for TFLM's
/// int8-state form). Scales: sx input, swf weights_feature, ss state, swt
/// weights_time, so output; zx, zs, zo zero points.
function intCase({ batch, input, filters, memory, rank, bias = true, stateType = 'int16', q, wtRange, biasRange = 0, chain = 1, seed }) {
  const units = filters / rank;
  const wf = Int8Array.from(ints(filters * input, -127, 127, seed + 1));
  const [tlo, thi] = stateType === 'int16' ? [-32768, 32767] : [-128, 127];
  const wt = (stateType === 'int16' ? Int16Array : Int8Array).from(ints(filters * memory, -wtRange, wtRange, seed + 2));
  const b = bias ? Int32Array.from(ints(units, -biasRange, biasRange, seed + 3)) : null;
  const quant = (scale, zp) => ({ scale: [scale], zeroPoint: [zp] });
  const model = () => svdfChain({
    batch, input, filters, memory, units, rank, chain, act: 'RELU',
    weights: {
      wf: { dtype: 'int8', data: wf, quantization: quant(q.swf, 0) },
      wt: { dtype: stateType, data: wt, quantization: quant(q.swt, 0) },
      bias: bias ? { dtype: 'int32', data: b, quantization: quant(f32(f32(q.ss) * f32(q.swt)), 0) } : null,
    },
    dtypes: {
      input: { dtype: 'int8', quantization: quant(q.sx, q.zx) },
      output: { dtype: 'int8', quantization: quant(q.so, q.zo) },
      state: { dtype: stateType, quantization: quant(q.ss, q.zs ?? 0) },
    },
    description: `kiln SVDF int8 case (${stateType} state)`,
  });
  const inputs = () => Array.from({ length: STEPS }, (_, s) => Array.from({ length: chain }, (_, k) => (
    { data: Int8Array.from(ints(batch * input, -128, 127, seed + 10 + chain * s + k)), shape: [batch, input] })));
  // TFLM EvalIntegerSvdfReference, exactly (float32 scale arithmetic as
  // its Prepare computes it).
  const s1 = quantizeMultiplier(f32(f32(f32(q.sx) * f32(q.swf)) / f32(q.ss)));
  const s2 = quantizeMultiplier(f32(f32(f32(q.ss) * f32(q.swt)) / f32(q.so)));
  const zs = q.zs ?? 0;
  const wrap = (v) => (stateType === 'int16' ? ((v + 32768) & 0xffff) - 32768 : ((v + 128) & 0xff) - 128);
  const expect = (steps) => {
    const state = new Array(batch * filters * memory).fill(zs);
    return steps.map((group) => group.map((x) => {
      for (let b0 = 0; b0 < batch; b0++)
        for (let f = 0; f < filters; f++) {
          const row = (b0 * filters + f) * memory;
          for (let m = 0; m + 1 < memory; m++) state[row + m] = state[row + m + 1];
          let dot = 0;
          for (let i = 0; i < input; i++) dot += wf[f * input + i] * (x.data[b0 * input + i] - q.zx);
          state[row + memory - 1] = wrap(zs + Math.min(thi, Math.max(tlo, mbqm(dot, s1))));
        }
      const y = new Int8Array(batch * units);
      for (let b0 = 0; b0 < batch; b0++)
        for (let u = 0; u < units; u++) {
          let acc = bias ? b[u] : 0;
          for (let r = 0; r < rank; r++) {
            const f = u * rank + r;
            for (let m = 0; m < memory; m++) acc += (state[(b0 * filters + f) * memory + m] - zs) * wt[f * memory + m];
          }
          if (!Number.isSafeInteger(acc) || Math.abs(acc) >= 2 ** 31) throw new Error('int32 accumulator overflow: pick smaller weights');
          y[b0 * units + u] = Math.min(127, Math.max(-128, q.zo + mbqm(acc, s2)));
        }
      return { data: y, shape: [batch, units] };
    }));
  };
  return {
    model, inputs, expect, tolerance: 0, stateType,
    what: `int8 SVDF (${stateType} weights_time and state) batch ${batch}, input ${input}, ${filters} filters, memory ${memory}, rank ${rank}, ${bias ? 'bias' : 'no bias'}; scales input ${q.sx} weights_feature ${q.swf} state ${q.ss} weights_time ${q.swt} output ${q.so}${chainText(chain)}`,
  };
}

const chainText = (chain) => (chain > 1 ? `; ${chain} SVDFs in a row sharing the state (SVDF k reads the state SVDF k-1 left within one invocation)` : '');

const CASES = {
  svdf_float_rank1: floatCase({ batch: 1, input: 6, filters: 4, memory: 3, rank: 1, seed: 100 }),
  svdf_float_rank2_relu: floatCase({ batch: 1, input: 5, filters: 6, memory: 4, rank: 2, act: 'RELU', seed: 200 }),
  svdf_float_no_bias: floatCase({ batch: 1, input: 4, filters: 3, memory: 2, rank: 1, bias: false, seed: 300 }),
  svdf_float_batch2_rank2: floatCase({ batch: 2, input: 5, filters: 4, memory: 3, rank: 2, seed: 400 }),
  svdf_float_tanh: floatCase({ batch: 1, input: 5, filters: 4, memory: 3, rank: 1, act: 'TANH', seed: 650 }),
  svdf_float_relu6_rank2: floatCase({ batch: 1, input: 6, filters: 4, memory: 2, rank: 2, act: 'RELU6', seed: 660 }),
  svdf_float_memory1: floatCase({ batch: 1, input: 4, filters: 4, memory: 1, rank: 1, act: 'RELU', seed: 500 }),
  svdf_float_batch2_no_bias_relu: floatCase({ batch: 2, input: 7, filters: 6, memory: 5, rank: 3, bias: false, act: 'RELU', seed: 600 }),
  // int16 state (TFLite 2.9 and TFLM). s1 ~ 0.5 keeps most columns inside
  // int16; the second case's s1 ~ 4 saturates some.
  svdf_int8_rank1: intCase({
    batch: 1, input: 8, filters: 4, memory: 4, rank: 1, wtRange: 2000, biasRange: 200000, seed: 700,
    q: { sx: 0.05, zx: -3, swf: 0.01, ss: 0.001, swt: 0.002, so: 0.6, zo: 5 },
  }),
  svdf_int8_rank2_batch2_saturating: intCase({
    batch: 2, input: 6, filters: 6, memory: 3, rank: 2, wtRange: 3000, biasRange: 500000, seed: 800,
    q: { sx: 0.1, zx: 10, swf: 0.02, ss: 0.0005, swt: 0.001, so: 0.35, zo: -20 },
  }),
  svdf_int8_no_bias: intCase({
    batch: 1, input: 5, filters: 3, memory: 2, rank: 1, bias: false, wtRange: 20000, seed: 900,
    q: { sx: 0.03, zx: 0, swf: 0.007, ss: 0.0004, swt: 0.00005, so: 0.1, zo: 0 },
  }),
  svdf_int8_memory1: intCase({
    batch: 1, input: 4, filters: 4, memory: 1, rank: 1, wtRange: 30000, biasRange: 1000000, seed: 1000,
    q: { sx: 0.2, zx: -128, swf: 0.004, ss: 0.002, swt: 0.0001, so: 0.6, zo: -10 },
  }),
  // Three SVDFs on one state in one invocation: step 0 alone already
  // checks the shift (outputs 1 and 2 read the columns outputs 0 and 1
  // wrote).
  svdf_float_chained3: floatCase({ batch: 2, input: 4, filters: 6, memory: 4, rank: 2, chain: 3, seed: 1200 }),
  svdf_int8_chained3: intCase({
    batch: 1, input: 6, filters: 4, memory: 3, rank: 1, wtRange: 2000, biasRange: 200000, chain: 3, seed: 1300,
    q: { sx: 0.05, zx: 4, swf: 0.01, ss: 0.001, swt: 0.002, so: 0.5, zo: -2 },
  }),
  // int8 weights_time and state with a non-zero state zero point: TFLM's
  // form; TFLite 2.9 reads both as int16.
  svdf_int8_state8_tflm: intCase({
    batch: 1, input: 6, filters: 4, memory: 3, rank: 2, stateType: 'int8', wtRange: 127, biasRange: 2000, chain: 2, seed: 1100,
    q: { sx: 0.05, zx: -7, swf: 0.01, ss: 0.4, zs: 20, swt: 0.01, so: 0.3, zo: 3 },
  }),
};

// --- Refused models -----------------------------------------------------------

function svdfModel({ x = [1, 4], wf = [4, 4], wt = [4, 3], st = [1, 12], out = [1, 4], rank = 1, variable = true, types = {} }) {
  const t = (k, d) => types[k] ?? d;
  const n = (s) => s.reduce((a, b) => a * b, 1);
  const data = (dtype, count) => (dtype === 'int8' ? new Int8Array(count).fill(3) : Float32Array.from({ length: count }, (_, i) => 0.1 * (i % 7)));
  const q8 = { scale: [0.05], zeroPoint: [0] };
  const tensor = (name, shape, dtype, extra = {}) => ({ name, shape, dtype, ...(dtype === 'int8' || dtype === 'int16' ? { quantization: q8 } : {}), ...extra });
  return buildTfliteModel({
    tensors: [
      tensor('input', x, t('x', 'float32')),
      tensor('weights_feature', wf, t('wf', 'float32'), { data: data(t('wf', 'float32'), n(wf)) }),
      tensor('weights_time', wt, t('wt', 'float32'), { data: data(t('wt', 'float32'), n(wt)) }),
      tensor('activation_state', st, t('st', 'float32'), variable ? { isVariable: true } : {}),
      tensor('output', out, t('out', 'float32')),
    ],
    operators: [{ op: 'SVDF', inputs: [0, 1, 2, -1, 3], outputs: [4], options: { rank } }],
    inputs: [0], outputs: [4],
    description: 'kiln SVDF refused model',
  });
}

const REFUSED = {
  input_3d: { what: 'a 3-D input [1, 2, 4]', model: () => svdfModel({ x: [1, 2, 4], out: [1, 4] }) },
  rank_not_divisor: { what: '6 filters with rank 4', model: () => svdfModel({ wf: [6, 4], wt: [6, 3], st: [1, 18], out: [1, 1], rank: 4 }) },
  state_not_variable: { what: 'an activation_state that is not a variable tensor', model: () => svdfModel({ variable: false }) },
  hybrid: { what: 'float32 input and state with int8 weights (hybrid SVDF)', model: () => svdfModel({ types: { wf: 'int8', wt: 'int8' } }) },
  int16_input: {
    what: 'an INT16 input (16-bit activations stay refused outside SVDF weights_time/state)',
    model: () => svdfModel({ types: { x: 'int16', wf: 'int8', wt: 'int16', st: 'int16', out: 'int8' } }),
  },
};

// --- TFLite Micro's keyword benchmark models ----------------------------------
//
// tensorflow/lite/micro/models/keyword_scrambled{,_8bit}.tflite (TFLM
// commit 90b983c2b3f1, Apache-2.0), stored in tests/data/state/
// tflm_keyword_scrambled*/source.tflite: an INT16 input [1, 96] QUANTIZEd
// to int8 (operator 0), 7 SVDFs (rank 1, RELU) and 5 FULLY_CONNECTEDs
// (operators 1-12), then SOFTMAX to
// INT16 and QUANTIZE to INT32. Kiln has no INT16 model inputs (the artifact
// format has no 16-bit element type), nor int8 -> int16 SOFTMAX and int16 ->
// int32 QUANTIZE, so model.tflite is the model's SVDF / FULLY_CONNECTED
// stack alone: operators 1 to 12 with their tensors, weights and
// quantization unchanged, the int8 tensor 0 as input and the last
// FULLY_CONNECTED's int8 output (tensor 50) as the last output. keyword_scrambled
// keeps int16 weights_time and state (TFLite 2.9 and TFLM compute it);
// keyword_scrambled_8bit has int8 weights_time and int8 states of non-zero
// zero points (TFLM only). Every operator's output is a model output, so
// each layer is compared (the final [1, 2] alone saturates on most
// inputs). Inputs are int8 in [-128, -48] (real 0 to 4.7 at scale 0.059,
// zero point -128).

/// Quantization (scales, zero points) of every tensor of subgraph 0 of the
/// flatbuffer `bytes`: tensor field 4, QuantizationParameters scale (2)
/// and zero_point (3).
function tensorQuantization(bytes) {
  const buf = Buffer.from(bytes);
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const model = new Table(view, view.getUint32(0, true));
  return model.tableVec(2)[0].tableVec(0).map((t) => {
    const q = t.table(4);
    if (!q || !q.vecLen(2)) return null;
    const vec = (field, read, size) => {
      const p = q.indirect(field);
      return Array.from({ length: q.vecLen(field) }, (_, i) => read(p + 4 + size * i));
    };
    return {
      scale: vec(2, (at) => view.getFloat32(at, true), 4),
      zeroPoint: vec(3, (at) => Number(view.getBigInt64(at, true)), 8),
    };
  });
}

const KEEP_OPS = [1, 12]; // SVDF #1 .. FULLY_CONNECTED #12
const KEYWORD_INPUT = 0, KEYWORD_OUTPUT = 50;

/// The SVDF / FULLY_CONNECTED stack of a keyword model (see above).
function keywordStack(source) {
  const g = parseTflite(source).subgraphs[0];
  const quant = tensorQuantization(source);
  const ops = g.operators.slice(KEEP_OPS[0], KEEP_OPS[1] + 1);
  const used = [...new Set(ops.flatMap((o) => [...o.inputs, ...o.outputs]).filter((i) => i >= 0))].sort((a, b) => a - b);
  const renumber = new Map(used.map((t, k) => [t, k]));
  if (!renumber.has(KEYWORD_INPUT) || !renumber.has(KEYWORD_OUTPUT)) throw new Error('unexpected keyword model layout');
  const tensors = used.map((i) => {
    const t = g.tensors[i];
    return {
      name: `tensor${i}`, shape: t.shape, dtype: t.dtype,
      ...(t.data ? { data: t.data } : {}),
      ...(quant[i] ? { quantization: quant[i] } : {}),
      ...(t.isVariable ? { isVariable: true } : {}),
    };
  });
  return {
    parsed: { tensors, operators: ops.map((o) => ({ ...o, inputs: o.inputs.map((i) => (i < 0 ? -1 : renumber.get(i))), outputs: o.outputs.map((i) => renumber.get(i)) })) },
    model: () => buildTfliteModel({
      tensors,
      operators: ops.map((o) => ({
        op: o.op, version: o.version, ...(o.options && Object.keys(o.options).length ? { options: o.options } : {}),
        inputs: o.inputs.map((i) => (i < 0 ? -1 : renumber.get(i))), outputs: o.outputs.map((i) => renumber.get(i)),
      })),
      inputs: [renumber.get(KEYWORD_INPUT)], outputs: ops.map((o) => renumber.get(o.outputs[0])),
      description: 'SVDF / FULLY_CONNECTED stack of TFLite Micro keyword_scrambled (operators 1-12)',
    }),
  };
}

/// Evaluates the stack on each step's int8 input, the variable tensors
/// carried from step to step: SVDF as TFLM's EvalIntegerSvdfReference,
/// FULLY_CONNECTED as TFLite's integer kernel (int8_fc_eval.mjs's formula:
/// multiplier double(float(sx * sw)) / double(so), no fused activation).
function evalKeywordStack({ tensors, operators }, steps) {
  const values = new Map();
  const states = new Map();
  tensors.forEach((t, i) => { if (t.isVariable) states.set(i, new Array(t.shape[0] * t.shape[1]).fill(t.quantization.zeroPoint[0])); });
  const sc = (i) => f32(tensors[i].quantization.scale[0]);
  const zp = (i) => tensors[i].quantization.zeroPoint[0];
  return steps.map((x) => {
    values.set(operators[0].inputs[0], x);
    for (const o of operators) {
      const [xi] = o.inputs;
      const xin = values.get(xi);
      if (o.op === 'FULLY_CONNECTED') {
        const [, wi, bi] = o.inputs;
        const [units, depth] = tensors[wi].shape;
        const w = tensors[wi].data, b = bi >= 0 ? tensors[bi].data : null;
        const m = quantizeMultiplier(f32(sc(xi) * sc(wi)) / sc(o.outputs[0]));
        if (o.options?.fused_activation_function && o.options.fused_activation_function !== 'NONE') throw new Error('FULLY_CONNECTED activation not modelled');
        const y = new Int8Array(units);
        for (let u = 0; u < units; u++) {
          let acc = b ? b[u] : 0;
          for (let d = 0; d < depth; d++) acc += w[u * depth + d] * (xin[d] - zp(xi));
          y[u] = Math.min(127, Math.max(-128, zp(o.outputs[0]) + mbqm(acc, m)));
        }
        values.set(o.outputs[0], y);
        continue;
      }
      if (o.op !== 'SVDF') throw new Error(`${o.op} not modelled`);
      const [, wfi, wti, bi, si] = o.inputs;
      const [filters, input] = tensors[wfi].shape;
      const memory = tensors[wti].shape[1];
      const rank = o.options.rank, units = filters / rank;
      const int16 = tensors[si].dtype === 'int16';
      const [tlo, thi] = int16 ? [-32768, 32767] : [-128, 127];
      const wrap = (v) => (int16 ? ((v + 32768) & 0xffff) - 32768 : ((v + 128) & 0xff) - 128);
      const wf = tensors[wfi].data, wt = tensors[wti].data, b = bi >= 0 ? tensors[bi].data : null;
      const state = states.get(si), zs = zp(si);
      const s1 = quantizeMultiplier(f32(f32(sc(xi) * sc(wfi)) / sc(si)));
      const s2 = quantizeMultiplier(f32(f32(sc(si) * sc(wti)) / sc(o.outputs[0])));
      for (let f = 0; f < filters; f++) {
        for (let m = 0; m + 1 < memory; m++) state[f * memory + m] = state[f * memory + m + 1];
        let dot = 0;
        for (let i = 0; i < input; i++) dot += wf[f * input + i] * (xin[i] - zp(xi));
        state[f * memory + memory - 1] = wrap(zs + Math.min(thi, Math.max(tlo, mbqm(dot, s1))));
      }
      const y = new Int8Array(units);
      for (let u = 0; u < units; u++) {
        let acc = b ? b[u] : 0;
        for (let r = 0; r < rank; r++) {
          const f = u * rank + r;
          for (let m = 0; m < memory; m++) acc += (state[f * memory + m] - zs) * wt[f * memory + m];
        }
        // The kernels accumulate in int32, which these scrambled weights
        // overflow (int16 x int16 products over 8 steps): the sum wraps
        // modulo 2^32 (in TFLite's, TFLM's and Kiln's int32 alike).
        acc |= 0;
        y[u] = Math.min(127, Math.max(-128, zp(o.outputs[0]) + mbqm(acc, s2)));
      }
      values.set(o.outputs[0], y);
    }
    return operators.map((o) => values.get(o.outputs[0]));
  });
}

const TFLM_MODELS = {
  tflm_keyword_scrambled: { seed: 2000, tflm: false, sha256: '2335faf0a066193cfbd499ebabcce06629c223ec24afbd1f27aaaf0a4273b1a1' },
  tflm_keyword_scrambled_8bit: { seed: 2100, tflm: true, sha256: '1d5e0e5c9a7369ca34543fefb46e3047cd6db281adcd8bb8a96aba0a48e88757' },
};

/// A keyword stack as a case of the driver below.
function keywordCase(name, { seed, tflm, sha256 }) {
  const source = fs.readFileSync(path.join(OUT, name, 'source.tflite'));
  const digest = crypto.createHash('sha256').update(source).digest('hex');
  if (digest !== sha256) throw new Error(`${name}/source.tflite has sha256 ${digest}, not TFLM's ${sha256}`);
  const stack = keywordStack(source);
  return {
    model: stack.model,
    inputs: () => Array.from({ length: STEPS }, (_, s) => [{ data: Int8Array.from(ints(96, -128, -48, seed + s)), shape: [1, 96] }]),
    expect: (steps) => evalKeywordStack(stack.parsed, steps.map(([x]) => x.data)).map((ys) => ys.map((y) => ({ data: y, shape: [1, y.length] }))),
    tolerance: 0, stateType: tflm ? 'int8' : 'int16',
    what: `TFLite Micro ${name.slice(5)}.tflite's SVDF / FULLY_CONNECTED stack (operators 1-12: 7 SVDFs with ${tflm ? 'int8' : 'int16'} state, 5 FULLY_CONNECTEDs; int8 [1, 96] in; outputs: every operator's int8 output, the last FULLY_CONNECTED's [1, 2] last)`,
  };
}
for (const [name, m] of Object.entries(TFLM_MODELS))
  if (fs.existsSync(path.join(OUT, name, 'source.tflite'))) CASES[name] = keywordCase(name, m);

// --- Driver -------------------------------------------------------------------

function close(a, b, tolerance) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = Number(a[i]), y = Number(b[i]);
    if (!(Math.abs(x - y) <= tolerance * (1 + Math.abs(y)))) return false;
  }
  return true;
}

const stepDir = (dir, s) => (s === 0 ? dir : path.join(dir, `step_${s}`));

/// The files of one case as this script builds them: { relative path: bytes }.
function caseFiles(c) {
  const files = { 'model.tflite': Buffer.from(c.model()) };
  c.inputs().forEach((group, s) => group.forEach((t, k) => {
    files[path.join(path.relative(stepDir('', 0), stepDir('', s)), `input_${k}.npy`)] = encodeNpy(t.data, t.shape);
  }));
  return files;
}

async function main() {
  const check = process.argv.includes('--check');
  let failures = 0;
  const problem = (m) => { console.error(`make_svdf_cases: ${m}`); failures++; };
  let native = null;
  if (!check) {
    const { buildNative, runNative } = await import('./tflite_native_reference.mjs');
    native = { exe: buildNative(), runNative };
  }
  for (const [name, c] of Object.entries(CASES)) {
    const dir = path.join(OUT, name);
    const files = caseFiles(c);
    const steps = c.inputs();
    const expected = c.expect(steps);
    if (check) {
      for (const [f, bytes] of Object.entries(files))
        if (!fs.existsSync(path.join(dir, f)) || !Buffer.from(fs.readFileSync(path.join(dir, f))).equals(Buffer.from(bytes)))
          problem(`${name}/${f} is not what this script builds`);
      expected.forEach((group, s) => group.forEach((e, k) => {
        const file = path.join(stepDir(dir, s), `output_${k}.npy`);
        const stored = readNpy(file);
        if (!close(stored.data, e.data, c.tolerance)) problem(`${path.relative(OUT, file)} differs from the independent evaluation`);
      }));
      continue;
    }
    const source = path.join(dir, 'source.tflite');
    const kept = fs.existsSync(source) ? fs.readFileSync(source) : null;
    fs.rmSync(dir, { recursive: true, force: true });
    if (kept) { fs.mkdirSync(dir, { recursive: true }); fs.writeFileSync(source, kept); }
    for (let s = 1; s < STEPS; s++) fs.mkdirSync(stepDir(dir, s), { recursive: true });
    for (const [f, bytes] of Object.entries(files)) fs.writeFileSync(path.join(dir, f), bytes);
    const modelPath = path.join(dir, 'model.tflite');
    let tflite = null, tfliteNote;
    try {
      tflite = native.runNative({ exe: native.exe, model: modelPath, inputs: steps.flat().map((t) => t.data), outputCount: expected[0].length, steps: STEPS }).outputs;
    } catch (e) {
      tfliteNote = `TFLite 2.9 fails on it: ${String(e.message).split('\n')[0].slice(0, 200)}`;
    }
    const tfliteMatches = tflite !== null && expected.every((group, s) => group.every((e, k) => {
      const bytes = tflite[s * group.length + k];
      const got = new e.data.constructor(Uint8Array.from(bytes).buffer);
      const same = close(got, e.data, c.tolerance);
      if (!same && c.stateType !== 'int8') console.error(`${name} step ${s} output ${k}: TFLite [${Array.from(got)}] vs [${Array.from(e.data)}]`);
      return same;
    }));
    const tflm = c.stateType === 'int8';
    if (!tflm && !tfliteMatches) problem(`${name}: TFLite 2.9 and the independent evaluation differ${tfliteNote ? ` (${tfliteNote})` : ''}`);
    if (tflm && tflite !== null)
      tfliteNote = tfliteMatches ? 'TFLite 2.9 gives the same outputs' : `TFLite 2.9 (which reads int8 weights_time and state as int16) gives other outputs, e.g. step 0 [${Array.from(new Int8Array(Uint8Array.from(tflite[0]).buffer))}]`;
    expected.forEach((group, s) => group.forEach((e, k) => {
      // The stored reference: TFLite's bytes where it computes this form,
      // the TFLM-arithmetic evaluation otherwise.
      const data = tflm ? e.data : new e.data.constructor(Uint8Array.from(tflite[s * group.length + k]).buffer);
      fs.writeFileSync(path.join(stepDir(dir, s), `output_${k}.npy`), encodeNpy(data, e.shape));
    }));
    fs.writeFileSync(path.join(dir, 'meta.json'), `${JSON.stringify({
      case: name, what: c.what, steps: STEPS,
      layout: 'step 0 at the top level, step s in step_s/ (consecutive invocations, state carried)',
      reference: tflm
        ? "this script's evaluation of TFLM's EvalIntegerSvdfReference (tensorflow/lite/micro/kernels/svdf_common.cc); TFLite 2.9 does not compute this int8-state form"
        : 'TFLite 2.9 native library, builtin kernels (no delegate), steps: 3 on one interpreter',
      independent: c.tolerance
        ? 'tests/reference/make_svdf_cases.mjs float64 recurrence, agrees within 1e-5 x (1 + |value|)'
        : "tests/reference/make_svdf_cases.mjs exact integer recurrence (TFLM's arithmetic), bit for bit",
      ...(tfliteNote ? { tflite: tfliteNote } : {}),
    }, null, 2)}\n`);
  }
  const refusedDir = path.join(OUT, 'svdf_refused');
  if (!check) fs.mkdirSync(refusedDir, { recursive: true });
  for (const [name, c] of Object.entries(REFUSED)) {
    const file = path.join(refusedDir, `${name}.tflite`);
    const model = c.model();
    if (check) {
      if (!fs.existsSync(file) || !Buffer.from(fs.readFileSync(file)).equals(Buffer.from(model))) problem(`svdf_refused/${name}.tflite is not what this script builds`);
      continue;
    }
    fs.writeFileSync(file, model);
  }
  if (failures) process.exit(1);
  console.log(check ? 'svdf cases: all match' : `wrote ${Object.keys(CASES).length} cases and ${Object.keys(REFUSED).length} refused models to ${OUT}`);
}

main().catch((e) => { console.error(e); process.exit(1); });
