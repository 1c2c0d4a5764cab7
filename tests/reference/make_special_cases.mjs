#!/usr/bin/env node
// IEEE special values through TFLite float operators: the cases of
// tests/data/special/ (one folder per row, plus index.json), run on both
// TFLite engines and checked against an independent evaluation.
//
//   node tests/reference/make_special_cases.mjs [--only REGEX] [--list] [--verbose]
//
// Every row is one operator on a fixed vector that holds every special
// value (NaN, +-inf, +-0, +-FLT_MAX, +-a subnormal) and some ordinary
// numbers; binary rows pair it with itself reversed, so NaN meets a number
// from either side. For each row this writes model.tflite, input_K.npy and
// output_0.npy (the stored reference) and a meta.json that records the three
// computations side by side:
//   - "builtin": TensorFlow Lite 2.9's native library with no delegate, i.e.
//     TFLite's builtin kernels (tflite_native_reference.mjs);
//   - "xnnpack": the wasm interpreter of tflite_reference.mjs (XNNPACK
//     delegate where it takes the operator);
//   - "independent": the operator's formula evaluated here in double
//     precision and rounded once to float32 (IEEE 754 rules: a NaN operand
//     gives NaN, maximum/minimum propagate NaN as IEEE 754-2019 maximum()).
// Two values agree when both are NaN, both the same infinity, both zeros
// (signs of zero are not compared), or within 1e-5 x (1 + |reference|).
//
// The stored reference is TFLite's builtin kernels: the model's format
// decides. Where they disagree with the independent evaluation
// the row must be listed in KNOWN_BUILTIN_DIFFERENCES with the reason and
// the rule Kiln follows; such a row stores the independent result (Kiln
// follows IEEE there, the README's "Special values" section says so) and
// keeps TFLite's as builtin_output_0.npy. An unlisted disagreement, or a
// listed row on which the builtin kernels turn out to agree, fails the run.
// The XNNPACK results are recorded, never stored: the delegate is an
// optimization of the same format, and where it differs from the builtin
// kernels meta.json says so.
//
// Needs tests/reference's npm packages (npm ci) and the native library
// (node fetch_models.mjs --bench). Deterministic: two runs give the same
// files. tests/tflite/special_values.py checks Kiln against the folders
// (CTest TfliteSpecialValues), needing neither.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readNpy, writeNpy } from './npy.mjs';
import { Graph, binary, reduce, unary } from './make_op_cases.mjs';
import { buildTfliteModel } from './tflite_builder.mjs';
import { prettyJson, runReference } from './tflite_reference.mjs';
import { buildNative, defaultNativeLib, runNative } from './tflite_native_reference.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const OUT_DIR = path.join(repo, 'tests/data/special');

const F32_MAX = 3.4028234663852886e38;
const SUBNORMAL = Math.fround(1e-40);
/** The special-value vector (16 elements, as tests/onnx/special_values.py). */
export const VALUES = Float32Array.from([NaN, Infinity, -Infinity, 0, -0, 1, -1, 0.5, -2.5, F32_MAX, -F32_MAX,
  SUBNORMAL, -SUBNORMAL, 100, -100, 3]);
const OTHER = Float32Array.from([...VALUES].reverse());
const ALL_NEG_INF = new Float32Array(16).fill(-Infinity);

// ------------------------------------------------------------ formulas (double)
const nanIn = (...v) => v.some(Number.isNaN);
const ieeeMax = (a, b) => (nanIn(a, b) ? NaN : Math.max(a, b));
const ieeeMin = (a, b) => (nanIn(a, b) ? NaN : Math.min(a, b));
const clamp = (x, lo, hi) => (Number.isNaN(x) ? NaN : Math.min(Math.max(x, lo), hi));
const UNARY_FORMULAS = {
  RELU: (x) => clamp(x, 0, Infinity),
  RELU6: (x) => clamp(x, 0, 6),
  RELU_N1_TO_1: (x) => clamp(x, -1, 1),
  LEAKY_RELU: (x) => (x >= 0 ? x : Number.isNaN(x) ? NaN : 0.2 * x),
  LOGISTIC: (x) => 1 / (1 + Math.exp(-x)),
  TANH: Math.tanh,
  HARD_SWISH: (x) => x * clamp(x + 3, 0, 6) / 6,
  EXP: Math.exp,
  LOG: Math.log,
  SQRT: Math.sqrt,
  RSQRT: (x) => 1 / Math.sqrt(x),
  ABS: Math.abs,
  NEG: (x) => -x,
};
const BINARY_FORMULAS = {
  ADD: (a, b) => a + b,
  SUB: (a, b) => a - b,
  MUL: (a, b) => a * b,
  DIV: (a, b) => a / b,
  MAXIMUM: ieeeMax,
  MINIMUM: ieeeMin,
  POW: (a, b) => a ** b,
  SQUARED_DIFFERENCE: (a, b) => (a - b) ** 2,
};
const REDUCE_FORMULAS = {
  SUM: (row) => row.reduce((s, v) => s + v, 0),
  MEAN: (row) => row.reduce((s, v) => s + v, 0) / row.length,
  REDUCE_MAX: (row) => row.reduce(ieeeMax, -Infinity),
  REDUCE_MIN: (row) => row.reduce(ieeeMin, Infinity),
};
function softmaxRow(row) {
  const m = row.reduce(ieeeMax, -Infinity);
  const e = row.map((v) => Math.exp(v - m));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / s);
}
// Rows of a [rows, cols] array in C order.
const rowsOf = (x, cols) => Array.from({ length: x.length / cols }, (_, r) => [...x.subarray(r * cols, (r + 1) * cols)]);
// 2x2 stride-2 VALID windows of a [1, 2, 8, 1] NHWC tensor: 4 outputs.
const windows2x2 = (x) => [0, 1, 2, 3].map((j) => [x[2 * j], x[2 * j + 1], x[8 + 2 * j], x[8 + 2 * j + 1]]);

// ------------------------------------------------------------ rows
// Each row: name, desc, build(g) (inputs and output declared), inputs
// (Float32Arrays), want (doubles, rounded to float32 when compared).
export const ROWS = [];
function row(name, desc, build, inputs, want) {
  if (ROWS.some((r) => r.name === name)) throw new Error(`duplicate row ${name}`);
  ROWS.push({ name, desc, build, inputs, want: Float64Array.from(want) });
}

for (const [op, f] of Object.entries(UNARY_FORMULAS)) {
  const options = op === 'LEAKY_RELU' ? { alpha: 0.2 } : undefined;
  row(op.toLowerCase(), `${op} on the special-value vector`,
    (g) => g.output(unary(g, op, g.input([16]), options)), [VALUES], [...VALUES].map(f));
}
for (const [op, f] of Object.entries(BINARY_FORMULAS)) {
  row(op.toLowerCase(), `${op} of the vector and its reverse`,
    (g) => g.output(binary(g, op, g.input([16]), g.input([16]))), [VALUES, OTHER],
    [...VALUES].map((a, i) => f(a, OTHER[i])));
}
for (const [op, f] of Object.entries(REDUCE_FORMULAS)) {
  for (const cols of [16, 4]) {
    const shape = [16 / cols, cols];
    row(`${op.toLowerCase()}_${shape.join('x')}`, `${op} over the last axis of [${shape}], keep_dims`,
      (g) => g.output(reduce(g, op, g.input(shape), [1], true)), [VALUES], rowsOf(VALUES, cols).map(f));
  }
}
for (const cols of [16, 4]) {
  const shape = [16 / cols, cols];
  row(`softmax_${shape.join('x')}`, `SOFTMAX beta 1 over the last axis of [${shape}]`,
    (g) => g.output(g.op('SOFTMAX', [g.input(shape)], shape, { beta: 1 })), [VALUES], rowsOf(VALUES, cols).flatMap(softmaxRow));
}
const poolOptions = { padding: 'VALID', stride_w: 2, stride_h: 2, filter_width: 2, filter_height: 2, fused_activation_function: 'NONE' };
row('max_pool_2d', 'MAX_POOL_2D 2x2 stride 2 VALID on [1,2,8,1]',
  (g) => g.output(g.op('MAX_POOL_2D', [g.input([1, 2, 8, 1])], [1, 1, 4, 1], poolOptions)), [VALUES],
  windows2x2(VALUES).map((w) => w.reduce(ieeeMax, -Infinity)));
row('average_pool_2d', 'AVERAGE_POOL_2D 2x2 stride 2 VALID on [1,2,8,1]',
  (g) => g.output(g.op('AVERAGE_POOL_2D', [g.input([1, 2, 8, 1])], [1, 1, 4, 1], poolOptions)), [VALUES],
  windows2x2(VALUES).map((w) => w.reduce((s, v) => s + v, 0) / 4));
row('max_pool_2d_all_neg_inf', 'MAX_POOL_2D 2x2 stride 2 on all -inf: -inf, not the lowest finite float',
  (g) => g.output(g.op('MAX_POOL_2D', [g.input([1, 2, 8, 1])], [1, 1, 4, 1], poolOptions)), [ALL_NEG_INF],
  [-Infinity, -Infinity, -Infinity, -Infinity]);
row('reduce_max_all_neg_inf', 'REDUCE_MAX of all -inf: -inf',
  (g) => g.output(reduce(g, 'REDUCE_MAX', g.input([1, 16]), [1], true)), [ALL_NEG_INF], [-Infinity]);

// Rows on which TFLite 2.9's builtin kernels do not follow IEEE 754, with
// the reason; the stored reference there is the independent result, which
// Kiln follows (README, "Special values").
const NONE_CLAMP = 'a fused activation of NONE still clamps the builtin output to [-FLT_MAX, FLT_MAX] '
  + '(CalculateActivationRange gives the lowest and largest finite float), so an infinite result becomes +-FLT_MAX; '
  + 'XNNPACK and IEEE keep the infinity';
const FLUSHED = 'the builtin kernels read a subnormal operand as zero (denormals flushed)';
const DROPS_NAN = 'both TFLite engines fold the row with comparisons (a > b ? a : b) that drop a NaN unless it comes last, '
  + 'so the NaN at the start of the row is lost; IEEE 754-2019 maximum/minimum and ONNX propagate it';
const LOWEST = 'the builtin kernel starts the maximum from the lowest finite float, so a window of -inf gives -FLT_MAX; '
  + 'XNNPACK and IEEE give -inf';
export const KNOWN_BUILTIN_DIFFERENCES = {
  relu6: 'both TFLite engines give RELU6(NaN) = 0 (a clamp written as comparisons); IEEE clamping, ONNX Clip and '
    + 'TFLite\'s own RELU and RELU_N1_TO_1 builtin kernels give NaN',
  hard_swish: 'at x = FLT_MAX the builtin kernel computes x * relu6(x + 3) in float32, which overflows to inf before '
    + 'the division by 6; the exact value rounds to FLT_MAX, which XNNPACK gives',
  log: 'the builtin LOG of the subnormal 1e-40 is -103.97 (the exact value -92.10, which XNNPACK gives)',
  sqrt: `${FLUSHED}: SQRT(-1e-40) gives -0 instead of NaN; XNNPACK and IEEE give NaN`,
  rsqrt: `${FLUSHED}: RSQRT(1e-40) gives inf instead of 1e20 and RSQRT(-1e-40) -inf instead of NaN; XNNPACK agrees with IEEE`,
  add: NONE_CLAMP,
  sub: NONE_CLAMP,
  mul: NONE_CLAMP,
  div: `${NONE_CLAMP}; also ${FLUSHED}, so 0 / -1e-40 gives NaN and 1e-40 / 0 does not give inf`,
  maximum: 'the builtin kernel computes a > b ? a : b, so a NaN first operand gives the second; XNNPACK does the opposite '
    + '(a NaN second operand gives the first); IEEE 754-2019 maximum propagates NaN from either side',
  minimum: 'the builtin kernel computes a < b ? a : b, so a NaN first operand gives the second; XNNPACK does the opposite; '
    + 'IEEE 754-2019 minimum propagates NaN from either side',
  reduce_max_1x16: DROPS_NAN,
  reduce_max_4x4: DROPS_NAN,
  reduce_min_1x16: DROPS_NAN,
  reduce_min_4x4: DROPS_NAN,
  max_pool_2d: 'the builtin kernel drops the NaN of the first window (it gives the window\'s other maximum, FLT_MAX) and reads '
    + 'the subnormal of the second as 0; XNNPACK gives -inf for the window holding NaN; IEEE gives NaN',
  average_pool_2d: `${NONE_CLAMP}; XNNPACK gives -inf for the window holding NaN, IEEE NaN`,
  max_pool_2d_all_neg_inf: LOWEST,
  reduce_max_all_neg_inf: LOWEST,
};

// ------------------------------------------------------------ comparison
/** Indices where `got` and `want` (float32 values) disagree (rule above). */
export function disagreements(got, want) {
  const bad = [];
  for (let i = 0; i < want.length; i++) {
    const g = got[i], w = Math.fround(want[i]);
    const ok = Number.isNaN(w) ? Number.isNaN(g)
      : !Number.isFinite(w) ? g === w
        : !Number.isNaN(g) && Math.abs(g - w) <= 1e-5 * (1 + Math.abs(w));
    if (!ok) bad.push(i);
  }
  return bad;
}
const show = (a) => [...a].map((v) => (Object.is(v, -0) ? '-0' : String(v)));

async function runRow(r, { exe, lib, verbose }) {
  const g = new Graph(r.name);
  r.build(g);
  const dir = path.join(OUT_DIR, r.name);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const model = path.join(dir, 'model.tflite');
  fs.writeFileSync(model, buildTfliteModel(g.spec()));
  const meta = await runReference({
    model, out: dir, quiet: !verbose, inputData: r.inputs,
    inputsSource: { value: 'the special-value vector of tests/reference/make_special_cases.mjs (binary rows: input 1 is input 0 reversed)' },
    extraMeta: { case: { name: r.name, description: r.desc } },
  });
  const xnnpack = readNpy(path.join(dir, 'output_0.npy'));
  const { outputs } = runNative({ exe, lib, model, inputs: r.inputs, outputCount: 1 });
  const builtin = new Float32Array(Uint8Array.from(outputs[0]).buffer);
  const builtinVsIeee = disagreements(builtin, r.want);
  const xnnpackVsBuiltin = disagreements(xnnpack.data, builtin);
  const known = KNOWN_BUILTIN_DIFFERENCES[r.name];
  if (builtinVsIeee.length && !known) {
    throw new Error(`${r.name}: UNLISTED difference of TFLite's builtin kernels from IEEE at [${builtinVsIeee}]: `
      + `builtin ${show(builtin)}, xnnpack ${show(xnnpack.data)} (differs from IEEE at [${disagreements(xnnpack.data, r.want)}]), `
      + `independent ${show(Float32Array.from(r.want))}; list it in KNOWN_BUILTIN_DIFFERENCES with the reason`);
  }
  if (!builtinVsIeee.length && known) throw new Error(`${r.name}: listed in KNOWN_BUILTIN_DIFFERENCES but the builtin kernels agree`);
  const stored = known ? Float32Array.from(r.want) : builtin;
  writeNpy(path.join(dir, 'output_0.npy'), stored, xnnpack.shape, '<f4');
  if (known) writeNpy(path.join(dir, 'builtin_output_0.npy'), builtin, xnnpack.shape, '<f4');
  const engines = {
    reference: known ? 'independent' : 'builtin',
    ...(known ? { builtin_difference: known } : {}),
    builtin: show(builtin),
    xnnpack: show(xnnpack.data),
    independent: show(Float32Array.from(r.want)),
    builtin_vs_independent: builtinVsIeee,
    xnnpack_vs_builtin: xnnpackVsBuiltin,
  };
  fs.writeFileSync(path.join(dir, 'meta.json'), `${prettyJson({ ...meta, engines })}\n`);
  return { name: r.name, description: r.desc, reference: engines.reference, xnnpack_vs_builtin: xnnpackVsBuiltin.length };
}

async function main() {
  const args = process.argv.slice(2);
  const only = args.includes('--only') ? new RegExp(args[args.indexOf('--only') + 1]) : null;
  const verbose = args.includes('--verbose');
  const rows = ROWS.filter((r) => !only || only.test(r.name));
  if (args.includes('--list')) {
    rows.forEach((r) => console.log(`${r.name}  ${r.desc}`));
    return 0;
  }
  const lib = defaultNativeLib();
  if (!fs.existsSync(lib)) throw new Error(`${lib} is missing: run node tests/reference/fetch_models.mjs --bench`);
  const exe = buildNative();
  if (!only) fs.rmSync(OUT_DIR, { recursive: true, force: true });
  fs.mkdirSync(OUT_DIR, { recursive: true });
  const index = [];
  const failures = [];
  for (const r of rows) {
    try {
      index.push(await runRow(r, { exe, lib, verbose }));
    } catch (e) {
      fs.rmSync(path.join(OUT_DIR, r.name), { recursive: true, force: true });
      failures.push(e.message);
    }
  }
  if (!only) fs.writeFileSync(path.join(OUT_DIR, 'index.json'), `${prettyJson(index)}\n`);
  for (const e of index) {
    console.log(`${e.name.padEnd(24)} reference ${e.reference.padEnd(11)} xnnpack differs at ${e.xnnpack_vs_builtin} element(s)`);
  }
  failures.forEach((f) => console.error(`FAIL ${f}`));
  console.log(`${index.length} rows written, ${failures.length} failed`);
  return failures.length ? 1 : 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main();
}
