#!/usr/bin/env node
// Sparse TFLite weights (schema v3 SparsityParameters), which Kiln densifies
// at import (core/lib/Import/TFLiteSparsity.cpp): the op cases
// tests/data/ops/sparse_* (float32, kiln_op_tests) and
// tests/data/ops_int8/sparse_* (int8, kiln_op_int8_tests), and the corrupt
// models tests/data/bad/sparse_*.tflite (OpCases.SparseTensorsRefuseCorruptIndices).
//
//   node tests/reference/make_sparse_cases.mjs [--check]
//
// Each case is a FULLY_CONNECTED whose weights are stored sparse (1x4 blocks
// or plain CSR; tests/reference/sparsity.mjs sparsify encodes them as
// TFLite's converter does), directly or through DENSIFY (4x4 blocks,
// column-major CSR, float16 behind DEQUANTIZE). The stored outputs are
// TensorFlow Lite 2.9's native library with no delegate (builtin kernels,
// which run sparse FULLY_CONNECTED weights and DENSIFY); each is also
// computed here from the DENSE weights the sparse ones were made from (no
// sparse decoding involved): float in double precision, rounded once to
// float32, agreeing within 1e-5 x (1 + |value|); int8 with TFLite's integer
// formula (int32 accumulation, MultiplyByQuantizedMultiplier from
// int8_eval.mjs), bit-exact. Either disagreement fails the run.
//
// --check rebuilds every model and input in memory and compares them with
// the committed files, and the stored outputs with the dense evaluation (no
// TFLite needed; CTest reference_sparse_data_check).
//
// Needs the native library for writing (node fetch_models.mjs --bench).
// Deterministic: two runs give the same files.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { buildTfliteModel, toFloat16Bits, fromFloat16Bits } from './tflite_builder.mjs';
import { encodeNpy, readNpy } from './npy.mjs';
import { mulberry32 } from './prng.mjs';
import { sparsify, densify } from './sparsity.mjs';
import { mbqm, quantizeMultiplier } from './int8_eval.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const DATA = path.join(here, '..', 'data');
const fround = Math.fround;

/// float32 values in [lo, hi) from mulberry32(seed).
function uniform(n, seed, lo = -1, hi = 1) {
  const r = mulberry32(seed);
  return Float32Array.from({ length: n }, () => lo + (hi - lo) * r());
}
/// int8 values over [lo, hi] from mulberry32(seed).
function int8s(n, seed, lo = -128, hi = 127) {
  const r = mulberry32(seed);
  return Int8Array.from({ length: n }, () => lo + Math.floor((hi - lo + 1) * r()));
}

/// Zeroes whole blocks (`bh` x `bw`) of the row-major [rows, cols] `w` with
/// probability `p` (seeded), and single elements with probability `pe`: the
/// pruned weights a sparse model stores.
function prune(w, [rows, cols], { bh = 1, bw = 1, p = 0.5, pe = 0 }, seed) {
  const r = mulberry32(seed);
  const out = w.slice();
  for (let i = 0; i < rows; i += bh) for (let j = 0; j < cols; j += bw) {
    if (r() >= p) continue;
    for (let a = 0; a < bh; a++) for (let b = 0; b < bw; b++) out[(i + a) * cols + j + b] = 0;
  }
  if (pe) for (let k = 0; k < out.length; k++) if (r() < pe) out[k] = 0;
  return out;
}

/// y = x W^T + b in double precision, rounded once to float32 (x [batch, K],
/// W [units, K]); fused RELU when `relu`.
function denseFc(x, w, b, [batch, K], units, relu = false) {
  const y = new Float32Array(batch * units);
  for (let n = 0; n < batch; n++) for (let u = 0; u < units; u++) {
    let acc = b ? b[u] : 0;
    for (let k = 0; k < K; k++) acc += x[n * K + k] * w[u * K + k];
    y[n * units + u] = fround(relu ? Math.max(acc, 0) : acc);
  }
  return y;
}

/// TFLite's int8 FULLY_CONNECTED (fully_connected.cc, reference_integer_ops
/// FullyConnected): acc = bias + sum (x - zx) * w (weights symmetric, zero
/// point 0), out = clamp(zo + MultiplyByQuantizedMultiplier(acc, sx sw / so)).
export function denseFcInt8(x, w, b, [batch, K], units, q) {
  const mult = quantizeMultiplier((fround(q.x.scale) * fround(q.w.scale)) / fround(q.y.scale));
  const y = new Int8Array(batch * units);
  for (let n = 0; n < batch; n++) for (let u = 0; u < units; u++) {
    let acc = b ? b[u] : 0;
    for (let k = 0; k < K; k++) acc += (x[n * K + k] - q.x.zp) * w[u * K + k];
    y[n * units + u] = Math.min(127, Math.max(-128, mbqm(acc, mult) + q.y.zp));
  }
  return y;
}

const f32 = (name, shape, extra = {}) => ({ name, shape, dtype: 'float32', ...extra });
const FC = (inputs, outputs, act = 'NONE') => ({ op: 'FULLY_CONNECTED', version: 8, inputs, outputs, options: { fused_activation_function: act } });

/// A float32 case: FULLY_CONNECTED of x [batch, K] by weights [units, K]
/// pruned by `pruning` and stored with `encoding` (sparsity.mjs sparsify
/// options), bias [units]. `via`: 'fc' (the sparse weights feed
/// FULLY_CONNECTED), 'densify' (DENSIFY first), 'densify_fp16' (float16
/// weights: DENSIFY, DEQUANTIZE, then FULLY_CONNECTED).
function floatCase({ batch, K, units, pruning, encoding, via, act = 'NONE', seed }) {
  const fp16 = via === 'densify_fp16';
  let dense = prune(uniform(units * K, seed + 1), [units, K], pruning, seed + 2);
  if (fp16) dense = fromFloat16Bits(toFloat16Bits(dense)); // the weights as float16 holds them
  const bias = uniform(units, seed + 3, -0.5, 0.5);
  const stored = fp16 ? toFloat16Bits(dense) : dense;
  const { sparsity, values } = sparsify(stored, [units, K], encoding);
  const w = { name: 'weights', shape: [units, K], dtype: fp16 ? 'float16' : 'float32', data: values, sparsity };
  const tensors = [f32('input', [batch, K]), w, f32('bias', [units], { data: bias })];
  const operators = [];
  let weights = 1;
  if (via !== 'fc') {
    tensors.push({ name: 'weights_dense', shape: [units, K], dtype: w.dtype });
    operators.push({ op: 'DENSIFY', inputs: [1], outputs: [3] });
    weights = 3;
  }
  if (fp16) {
    tensors.push(f32('weights_float', [units, K]));
    operators.push({ op: 'DEQUANTIZE', inputs: [3], outputs: [4] });
    weights = 4;
  }
  tensors.push(f32('output', [batch, units]));
  operators.push(FC([0, weights, 2], [tensors.length - 1], act));
  const spec = { tensors, operators, inputs: [0], outputs: [tensors.length - 1] };
  const x = uniform(batch * K, seed);
  return {
    spec, dense, values,
    inputs: [{ data: x, shape: [batch, K] }],
    expect: () => [{ data: denseFc(x, dense, bias, [batch, K], units, act === 'RELU'), shape: [batch, units] }],
  };
}

const Q_INT8 = { x: { scale: 0.05, zp: -7 }, w: { scale: 0.02, zp: 0 }, y: { scale: 0.25, zp: 4 } };

/// An int8 case: FULLY_CONNECTED (per-tensor symmetric weights) of x
/// [batch, K] by sparse int8 weights [units, K], int32 bias.
export function int8Case({ batch, K, units, pruning, encoding, via = 'fc', seed, q = Q_INT8 }) {
  const dense = prune(int8s(units * K, seed + 1), [units, K], pruning, seed + 2);
  const bias = Int32Array.from(int8s(units, seed + 3), (v) => v * 13);
  const { sparsity, values } = sparsify(dense, [units, K], encoding);
  const quant = (s) => ({ quantization: { scale: [s.scale], zeroPoint: [s.zp] } });
  const tensors = [
    { name: 'input', shape: [batch, K], dtype: 'int8', ...quant(q.x) },
    { name: 'weights', shape: [units, K], dtype: 'int8', data: values, sparsity, ...quant(q.w) },
    { name: 'bias', shape: [units], dtype: 'int32', data: bias, quantization: { scale: [q.x.scale * q.w.scale], zeroPoint: [0] } },
  ];
  const operators = [];
  let weights = 1;
  if (via === 'densify') {
    tensors.push({ name: 'weights_dense', shape: [units, K], dtype: 'int8', ...quant(q.w) });
    operators.push({ op: 'DENSIFY', inputs: [1], outputs: [3] });
    weights = 3;
  }
  tensors.push({ name: 'output', shape: [batch, units], dtype: 'int8', ...quant(q.y) });
  operators.push(FC([0, weights, 2], [tensors.length - 1]));
  const spec = { tensors, operators, inputs: [0], outputs: [tensors.length - 1] };
  const denseSpec = { ...spec, tensors: spec.tensors.map((t, i) => (i === 1 ? { ...quant(q.w), name: 'weights', shape: [units, K], dtype: 'int8', data: dense } : t)) };
  const x = int8s(batch * K, seed);
  return {
    spec, denseSpec, dense, values, q,
    inputs: [{ data: x, shape: [batch, K] }],
    expect: () => [{ data: denseFcInt8(x, dense, bias, [batch, K], units, q), shape: [batch, units] }],
  };
}

const BLOCK_1x4 = { formats: ['DENSE', 'SPARSE_CSR', 'DENSE'], blockMap: [1], blockSizes: [4] };
const BLOCK_4x4 = { formats: ['DENSE', 'SPARSE_CSR', 'DENSE', 'DENSE'], blockMap: [0, 1], blockSizes: [4, 4] };
const CSR = { formats: ['DENSE', 'SPARSE_CSR'] };

// Float cases (tests/data/ops/<name>) and int8 cases (tests/data/ops_int8/<name>).
export const CASES = {
  sparse_fully_connected_1x4: {
    root: 'ops', what: 'FULLY_CONNECTED [3, 32] x W[8, 32]^T + b, W stored 1x4 block-sparse (half the blocks pruned; int32 indices)',
    build: () => floatCase({ batch: 3, K: 32, units: 8, pruning: { bw: 4, p: 0.5 }, encoding: BLOCK_1x4, via: 'fc', seed: 101 }),
  },
  sparse_fully_connected_1x4_relu_uint8_indices: {
    root: 'ops', what: 'FULLY_CONNECTED [2, 16] x W[12, 16]^T + b, fused RELU, W 1x4 block-sparse with Uint8Vector segments and indices',
    build: () => floatCase({ batch: 2, K: 16, units: 12, pruning: { bw: 4, p: 0.6 }, encoding: { ...BLOCK_1x4, indexType: 'uint8' }, via: 'fc', act: 'RELU', seed: 111 }),
  },
  sparse_fully_connected_csr: {
    root: 'ops', what: 'FULLY_CONNECTED [4, 10] x W[6, 10]^T + b, W stored CSR (rows DENSE, columns SPARSE_CSR; 60% of elements pruned)',
    build: () => floatCase({ batch: 4, K: 10, units: 6, pruning: { p: 0, pe: 0.6 }, encoding: CSR, via: 'fc', seed: 121 }),
  },
  sparse_densify_4x4_fully_connected: {
    root: 'ops', what: 'DENSIFY of W[8, 16] stored 4x4 block-sparse (Uint16Vector indices), then FULLY_CONNECTED [2, 16] x W^T + b',
    build: () => floatCase({ batch: 2, K: 16, units: 8, pruning: { bh: 4, bw: 4, p: 0.5 }, encoding: { ...BLOCK_4x4, indexType: 'uint16' }, via: 'densify', seed: 131 }),
  },
  sparse_densify_column_major_csr: {
    root: 'ops', what: 'DENSIFY of W[5, 12] stored column-major CSR (traversal order [1, 0]: columns DENSE, rows SPARSE_CSR), then FULLY_CONNECTED [3, 12] x W^T + b',
    build: () => floatCase({ batch: 3, K: 12, units: 5, pruning: { p: 0, pe: 0.5 }, encoding: { formats: ['DENSE', 'SPARSE_CSR'], traversalOrder: [1, 0] }, via: 'densify', seed: 141 }),
  },
  sparse_densify_fp16_dequantize: {
    root: 'ops', what: 'float16 W[8, 24] stored 1x4 block-sparse: DENSIFY, DEQUANTIZE (float16 -> float32), then FULLY_CONNECTED [2, 24] x W^T + b, as converters write float16 sparse weights',
    build: () => floatCase({ batch: 2, K: 24, units: 8, pruning: { bw: 4, p: 0.5 }, encoding: BLOCK_1x4, via: 'densify_fp16', seed: 151 }),
  },
  sparse_fully_connected_int8_1x4: {
    root: 'ops_int8', denseTwin: true,
    what: 'int8 FULLY_CONNECTED [2, 32] x W[8, 32]^T + b (input scale 0.05 zp -7, weights 0.02 symmetric, output 0.25 zp 4), W stored 1x4 block-sparse',
    build: () => int8Case({ batch: 2, K: 32, units: 8, pruning: { bw: 4, p: 0.5 }, encoding: BLOCK_1x4, seed: 201 }),
  },
  sparse_fully_connected_int8_csr: {
    root: 'ops_int8', denseTwin: true,
    what: 'int8 FULLY_CONNECTED [3, 24] x W[10, 24]^T + b, W stored CSR (rows DENSE, columns SPARSE_CSR, Uint8Vector indices; half the elements pruned)',
    build: () => int8Case({ batch: 3, K: 24, units: 10, pruning: { p: 0, pe: 0.5 }, encoding: { ...CSR, indexType: 'uint8' }, seed: 231 }),
  },
  sparse_densify_int8_1x4_fully_connected: {
    root: 'ops_int8', what: 'int8 DENSIFY of W[8, 32] stored 1x4 block-sparse, then int8 FULLY_CONNECTED [3, 32] x W^T + b (scales as sparse_fully_connected_int8_1x16)',
    build: () => int8Case({ batch: 3, K: 32, units: 8, pruning: { bw: 4, p: 0.5 }, encoding: BLOCK_1x4, via: 'densify', seed: 211 }),
  },
  sparse_densify_int8_csr_fully_connected: {
    root: 'ops_int8', what: 'int8 DENSIFY of W[6, 20] stored CSR (half of the elements pruned), then int8 FULLY_CONNECTED [2, 20] x W^T + b',
    build: () => int8Case({ batch: 2, K: 20, units: 6, pruning: { p: 0, pe: 0.5 }, encoding: CSR, via: 'densify', seed: 221 }),
  },
};

/// The CSR case's model with one corruption applied to its weights'
/// sparsity (a deep copy is changed).
function corrupt(change) {
  const c = floatCase({ batch: 4, K: 10, units: 6, pruning: { p: 0, pe: 0.6 }, encoding: CSR, via: 'fc', seed: 121 });
  const spec = structuredClone(c.spec);
  change(spec.tensors[1]);
  return spec;
}

// Corrupt sparse models (tests/data/bad): Kiln refuses each in one line
// naming the tensor and the bad field (OpCaseTest.cpp checks the text).
const BAD = {
  sparse_index_out_of_range: {
    what: 'sparse_fully_connected_csr with array_indices[3] of level 1 set to 10: the columns are 0..9',
    spec: () => corrupt((w) => { w.sparsity.dimMetadata[1].indices[3] = 10; }),
  },
  sparse_segments_not_monotonic: {
    what: 'sparse_fully_connected_csr with array_segments[2] of level 1 set below array_segments[1]',
    spec: () => corrupt((w) => { const s = w.sparsity.dimMetadata[1].segments; s[2] = s[1] - 1; }),
  },
  sparse_indices_not_increasing: {
    what: 'sparse_fully_connected_csr with the second index of the first row of two or more columns repeating the first: two values for one place',
    spec: () => corrupt((w) => {
      const { segments, indices } = w.sparsity.dimMetadata[1];
      const p = segments.findIndex((s, i) => segments[i + 1] - s >= 2);
      indices[segments[p] + 1] = indices[segments[p]];
    }),
  },
  sparse_traversal_order_length: {
    what: 'sparse_fully_connected_csr with traversal_order [0] for its rank-2 weights (2 levels)',
    spec: () => corrupt((w) => { w.sparsity.traversalOrder = [0]; }),
  },
  sparse_too_few_values: {
    what: 'sparse_fully_connected_csr whose weights buffer holds one value less than its sparsity describes',
    spec: () => corrupt((w) => { w.data = w.data.subarray(0, w.data.length - 1); }),
  },
};
const BAD_HEADING = '# Corrupt sparse tensors';

const npyOf = ({ data, shape }) => encodeNpy(data, shape);

function close(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = Number(a[i]), y = Number(b[i]);
    if (!(Math.abs(x - y) <= 1e-5 * (1 + Math.abs(y)))) return false;
  }
  return true;
}
const exact = (a, b) => a.length === b.length && a.every((v, i) => v === b[i]);
const maxAbs = (a, b) => a.reduce((m, v, i) => Math.max(m, Math.abs(Number(v) - Number(b[i]))), 0);

/// The case's sparse weights decode to the dense ones they were made from.
function selfCheck(name, c, problem) {
  const w = c.spec.tensors[1];
  const back = densify(w.data, w.shape, w.sparsity);
  const want = w.dtype === 'float16' ? toFloat16Bits(c.dense) : c.dense;
  if (!exact(Array.from(back), Array.from(want))) problem(`${name}: densify(sparsify(W)) is not W`);
}

function meta(name, c, kase, outputs, agreement) {
  const int8 = kase.root === 'ops_int8';
  const w = c.spec.tensors[1];
  return {
    model: 'model.tflite',
    engine: { name: 'TensorFlow Lite 2.9 native C library, builtin kernels (no delegate)', library: 'libtensorflowlite_c.so', num_threads: 1 },
    case: {
      name, description: kase.what,
      operators: [...new Set(c.spec.operators.map((o) => o.op))],
      weights: { dtype: w.dtype, shape: w.shape, stored_values: w.data.length, dense_values: w.shape[0] * w.shape[1], sparsity: w.sparsity },
      ...(int8 ? { outputs: outputs.map((o) => ({ name: 'output', shape: o.shape, dtype: 'int8' })) } : {}),
    },
    reference: kase.denseTwin ? 'tflite_dense_twin' : 'tflite',
    ...(kase.denseTwin ? { reference_note: 'TFLite 2.9 native on the same model with the weights stored dense: its builtin int8 FULLY_CONNECTED reads sparse weights as if dense (wrong outputs), so the sparse model is not its own reference' } : {}),
    independent_check: { by: 'tests/reference/make_sparse_cases.mjs dense evaluation (the unpruned-format dense weights)', ...agreement },
  };
}

async function main() {
  const check = process.argv.includes('--check');
  let failures = 0;
  const problem = (m) => { console.error(`make_sparse_cases: ${m}`); failures++; };
  let native = null;
  if (!check) {
    const { buildNative, runNative } = await import('./tflite_native_reference.mjs');
    native = { exe: buildNative(), runNative };
  }
  const summary = [];
  for (const [name, kase] of Object.entries(CASES)) {
    const dir = path.join(DATA, kase.root, name);
    const c = kase.build();
    selfCheck(name, c, problem);
    const model = buildTfliteModel({ ...c.spec, description: `kiln sparse case: ${name}` });
    const expected = c.expect();
    const files = { 'model.tflite': Buffer.from(model) };
    c.inputs.forEach((t, k) => { files[`input_${k}.npy`] = npyOf(t); });
    const agrees = kase.root === 'ops_int8' ? exact : close;
    if (check) {
      for (const [f, bytes] of Object.entries(files))
        if (!fs.existsSync(path.join(dir, f)) || !Buffer.from(fs.readFileSync(path.join(dir, f))).equals(Buffer.from(bytes)))
          problem(`${kase.root}/${name}/${f} is not what this script builds`);
      expected.forEach((e, k) => {
        const stored = readNpy(path.join(dir, `output_${k}.npy`));
        if (!agrees(Array.from(stored.data), Array.from(e.data))) problem(`${kase.root}/${name}/output_${k}.npy differs from the dense evaluation`);
      });
      continue;
    }
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    for (const [f, bytes] of Object.entries(files)) fs.writeFileSync(path.join(dir, f), bytes);
    // TFLite 2.9's builtin int8 FULLY_CONNECTED reads sparse weights as if
    // they were dense (its outputs on these models are those of the stored
    // values laid out row-major); the reference of those cases is TFLite on
    // the dense twin (same model, the weights stored dense).
    let refModel = path.join(dir, 'model.tflite');
    if (kase.denseTwin) {
      refModel = path.join(dir, 'dense_twin.tmp.tflite');
      fs.writeFileSync(refModel, buildTfliteModel({ ...c.denseSpec, description: `kiln sparse case: ${name}, dense twin` }));
    }
    const { outputs } = native.runNative({ exe: native.exe, model: refModel, inputs: c.inputs.map((t) => t.data), outputCount: expected.length });
    if (kase.denseTwin) fs.rmSync(refModel);
    let worst = 0;
    const got = expected.map((e, k) => {
      const g = new e.data.constructor(outputs[k].buffer, outputs[k].byteOffset, outputs[k].byteLength / e.data.BYTES_PER_ELEMENT);
      if (!agrees(Array.from(g), Array.from(e.data))) problem(`${name}: TFLite's output ${k} [${Array.from(g)}] differs from the dense evaluation [${Array.from(e.data)}]`);
      worst = Math.max(worst, maxAbs(g, e.data));
      fs.writeFileSync(path.join(dir, `output_${k}.npy`), encodeNpy(g, e.shape));
      return { shape: e.shape };
    });
    const agreement = kase.root === 'ops_int8' ? { bit_exact: worst === 0 } : { max_abs_diff: worst, tolerance: '1e-5 x (1 + |value|)' };
    fs.writeFileSync(path.join(dir, 'meta.json'), `${JSON.stringify(meta(name, c, kase, got, agreement), null, 2)}\n`);
    summary.push(`${kase.root}/${name}: ${c.values.length} of ${c.dense.length} values stored, TFLite vs dense evaluation max |diff| ${worst}`);
  }
  const rows = [];
  for (const [name, bad] of Object.entries(BAD)) {
    const file = path.join(DATA, 'bad', `${name}.tflite`);
    const model = buildTfliteModel({ ...bad.spec(), description: `kiln bad model: ${name}` });
    if (check) {
      if (!fs.existsSync(file) || !Buffer.from(fs.readFileSync(file)).equals(Buffer.from(model))) problem(`bad/${name}.tflite is not what this script builds`);
      continue;
    }
    fs.writeFileSync(file, model);
    let tflite;
    try {
      native.runNative({ exe: native.exe, model: file, inputs: [uniform(40, 1)], outputCount: 1 });
      tflite = 'loads and runs';
    } catch (e) {
      tflite = `refuses or fails: ${String(e.message).split('\n').map((l) => l.trim()).filter(Boolean).slice(1, 2).join(' ').slice(0, 120) || 'error'}`;
    }
    rows.push(`| \`${name}.tflite\` | ${bad.what}. | ${tflite} |`);
  }
  if (!check) {
    // Our section of tests/data/bad/README.md (the others are kept).
    const readmeFile = path.join(DATA, 'bad', 'README.md');
    const sections = fs.readFileSync(readmeFile, 'utf8').split(/^(?=# )/m).filter((s) => !s.startsWith(BAD_HEADING));
    const ours = [BAD_HEADING, '', 'Written by `node tests/reference/make_sparse_cases.mjs`: the weights of',
      '`tests/data/ops/sparse_fully_connected_csr` with one corruption each. Kiln refuses each',
      'in one line naming the tensor, the level and the bad value (OpCases.SparseTensorsRefuseCorruptIndices).',
      '"TFLite" says what TFLite 2.9\'s native library does with it.', '',
      '| file | what it is | TFLite |', '|---|---|---|', ...rows, ''].join('\n');
    fs.writeFileSync(readmeFile, `${sections.join('').trimEnd()}\n\n${ours}`);
  }
  if (failures) process.exit(1);
  for (const line of summary) console.log(line);
  console.log(check ? 'sparse cases: all match' : `wrote ${Object.keys(CASES).length} cases and ${Object.keys(BAD).length} corrupt models`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e) => { console.error(e); process.exit(1); });
}
