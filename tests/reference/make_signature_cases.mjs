#!/usr/bin/env node
// TFLite models with several signatures (schema v3 SignatureDefs): the cases
// of tests/data/signatures/, checked by tests/model/SignatureTest.cpp
// (kiln_signature_tests) and tests/python/test_signatures.py.
//
//   node tests/reference/make_signature_cases.mjs [--check]
//
// One model, three signatures on three subgraphs:
//   'add' (subgraph 0): x + y -> 'sum'; inputs listed in the subgraph's order
//   'mul' (subgraph 1): x * y -> 'product'; inputs listed y, x (the
//                       subgraph's order is x, y)
//   'sub' (subgraph 2): x - y -> 'difference' and 2x -> 'scaled'; inputs
//                       listed y, x and outputs scaled, difference, both the
//                       reverse of the subgraph's order
// The tensors carry converter-style names ('serving_default_x:0',
// 'PartitionedCall:0'); the signatures name them 'x', 'y', 'sum', ... as
// TFLite's SignatureRunner exposes them (tensorflow/lite/signature_runner.h).
//
// Each case folder (one per signature: add, mul, sub) holds model.tflite,
// input_K.npy and output_K.npy in the SIGNATURE's order and meta.json (the
// signature, its input and output names, the subgraph).
//
// Reference: TFLite 2.9's C API (libtensorflowlite_c.so, as cached) has no
// signature runner (no TfLiteInterpreterGetSignatureRunner: that C API came
// after 2.9), and its interpreter invokes subgraph 0 only. So the stored
// outputs are TFLite 2.9's native builtin kernels run on a one-subgraph
// twin of the signature's subgraph (the same tensors and operators, written
// as subgraph 0), its inputs fed and outputs read through the signature's
// TensorMaps (tensor index -> position), the mapping SignatureRunner makes.
// The full three-signature model is also run natively once, so TFLite 2.9
// is shown to read the file with its SignatureDefs. Each output is also
// computed independently here (`expect`, float32 rounding once per
// operation); both must agree within 1e-6 x (1 + |value|) or the run fails.
//
// --check rebuilds the models and inputs in memory, compares them with the
// committed files and the stored outputs with `expect` (no TFLite needed;
// CTest reference_signature_data_check).
//
// Deterministic: two runs give the same files.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { buildTfliteModel } from './tflite_builder.mjs';
import { encodeNpy, readNpy } from './npy.mjs';
import { mulberry32 } from './prng.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const OUT = path.join(here, '..', 'data', 'signatures');

const SHAPE = [2, 3];
const N = 6;
const f32 = (name, extra = {}) => ({ name, shape: SHAPE, dtype: 'float32', ...extra });
const fround = Math.fround;

/// float32 values in [-2, 2) from mulberry32(seed).
function ramp(seed) {
  const r = mulberry32(seed);
  return Float32Array.from({ length: N }, () => -2 + 4 * r());
}

// The three subgraphs (inputs x = tensor 0, y = tensor 1 in each).
const GRAPHS = [
  {
    name: 'add',
    tensors: [f32('serving_default_x:0'), f32('serving_default_y:0'), f32('PartitionedCall:0')],
    operators: [{ op: 'ADD', inputs: [0, 1], outputs: [2], options: {} }],
    inputs: [0, 1], outputs: [2],
  },
  {
    name: 'mul',
    tensors: [f32('mul_x:0'), f32('mul_y:0'), f32('PartitionedCall_1:0')],
    operators: [{ op: 'MUL', inputs: [0, 1], outputs: [2], options: {} }],
    inputs: [0, 1], outputs: [2],
  },
  {
    name: 'sub',
    tensors: [f32('sub_x:0'), f32('sub_y:0'), f32('PartitionedCall_2:0'),
      { name: 'two', shape: [1], dtype: 'float32', data: Float32Array.from([2]) }, f32('PartitionedCall_2:1')],
    operators: [
      { op: 'SUB', inputs: [0, 1], outputs: [2], options: {} },
      { op: 'MUL', inputs: [0, 3], outputs: [4], options: {} },
    ],
    inputs: [0, 1], outputs: [2, 4],
  },
];

// The SignatureDefs, each with its independent evaluation over named inputs.
const SIGNATURES = [
  {
    key: 'add', subgraph: 0,
    inputs: [{ name: 'x', tensor: 0 }, { name: 'y', tensor: 1 }],
    outputs: [{ name: 'sum', tensor: 2 }],
    expect: ({ x, y }) => ({ sum: x.map((v, i) => fround(v + y[i])) }),
  },
  {
    key: 'mul', subgraph: 1,
    inputs: [{ name: 'y', tensor: 1 }, { name: 'x', tensor: 0 }],
    outputs: [{ name: 'product', tensor: 2 }],
    expect: ({ x, y }) => ({ product: x.map((v, i) => fround(v * y[i])) }),
  },
  {
    key: 'sub', subgraph: 2,
    inputs: [{ name: 'y', tensor: 1 }, { name: 'x', tensor: 0 }],
    outputs: [{ name: 'scaled', tensor: 4 }, { name: 'difference', tensor: 2 }],
    expect: ({ x, y }) => ({
      difference: x.map((v, i) => fround(v - y[i])),
      scaled: x.map((v) => fround(2 * v)),
    }),
  },
];

const signatureDefs = SIGNATURES.map(({ key, subgraph, inputs, outputs }) => ({ key, subgraph, inputs, outputs }));
const model = () => buildTfliteModel({ subgraphs: GRAPHS, signatureDefs, description: 'kiln signatures test model' });

/// The named inputs of signature `s` (x and y differ per signature).
function inputsOf(s, k) {
  return { x: ramp(100 + 10 * k), y: ramp(101 + 10 * k) };
}

function close(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++)
    if (!(Math.abs(a[i] - b[i]) <= 1e-6 * (1 + Math.abs(b[i])))) return false;
  return true;
}

/// TFLite 2.9 native on subgraph `s.subgraph` written alone (its twin), fed
/// and read through the signature's TensorMaps: outputs in signature order.
function nativeOutputs(native, s, named, dir) {
  const graph = GRAPHS[s.subgraph];
  const twin = path.join(dir, 'twin.tflite');
  fs.writeFileSync(twin, buildTfliteModel({ subgraphs: [graph] }));
  try {
    const byTensor = new Map(s.inputs.map((m) => [m.tensor, named[m.name]]));
    const { outputs } = native.runNative({
      exe: native.exe, model: twin, inputs: graph.inputs.map((t) => byTensor.get(t)), outputCount: graph.outputs.length,
    });
    return s.outputs.map((m) => {
      const b = outputs[graph.outputs.indexOf(m.tensor)];
      return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
    });
  } finally {
    fs.rmSync(twin, { force: true });
  }
}

async function main() {
  const check = process.argv.includes('--check');
  let failures = 0;
  const problem = (m) => { console.error(`make_signature_cases: ${m}`); failures++; };
  let native = null;
  if (!check) {
    const { buildNative, runNative } = await import('./tflite_native_reference.mjs');
    native = { exe: buildNative(), runNative };
  }
  const bytes = Buffer.from(model());
  let maxDiff = 0;
  SIGNATURES.forEach((s, k) => {
    const dir = path.join(OUT, s.key);
    const named = inputsOf(s, k);
    const expected = s.expect(named);
    const files = { 'model.tflite': bytes };
    s.inputs.forEach((m, p) => { files[`input_${p}.npy`] = encodeNpy(named[m.name], SHAPE); });
    const meta = `${JSON.stringify({
      case: s.key, signature: s.key, subgraph: s.subgraph,
      inputs: s.inputs.map((m) => m.name), outputs: s.outputs.map((m) => m.name),
      what: `signature '${s.key}' of a model with signatures ${SIGNATURES.map((t) => `'${t.key}'`).join(', ')}; ` +
        'input_K/output_K in the signature\'s order',
      reference: 'TFLite 2.9 native library, builtin kernels, on the signature\'s subgraph written alone, ' +
        'fed and read through the SignatureDef\'s TensorMaps (the 2.9 C API has no signature runner)',
      independent: 'tests/reference/make_signature_cases.mjs expect(), agrees within 1e-6 x (1 + |value|)',
    }, null, 2)}\n`;
    files['meta.json'] = Buffer.from(meta);
    if (check) {
      for (const [f, b] of Object.entries(files))
        if (!fs.existsSync(path.join(dir, f)) || !Buffer.from(fs.readFileSync(path.join(dir, f))).equals(Buffer.from(b)))
          problem(`${s.key}/${f} is not what this script builds`);
      s.outputs.forEach((m, p) => {
        const stored = readNpy(path.join(dir, `output_${p}.npy`));
        if (!close(stored.data, expected[m.name])) problem(`${s.key}/output_${p}.npy differs from the independent computation`);
      });
      return;
    }
    fs.mkdirSync(dir, { recursive: true });
    for (const [f, b] of Object.entries(files)) fs.writeFileSync(path.join(dir, f), b);
    const got = nativeOutputs(native, s, named, dir);
    s.outputs.forEach((m, p) => {
      for (let i = 0; i < N; i++) maxDiff = Math.max(maxDiff, Math.abs(got[p][i] - expected[m.name][i]));
      if (!close(got[p], expected[m.name]))
        problem(`${s.key}: TFLite's '${m.name}' [${Array.from(got[p])}] differs from the independent [${Array.from(expected[m.name])}]`);
      fs.writeFileSync(path.join(dir, `output_${p}.npy`), encodeNpy(got[p], SHAPE));
    });
  });
  if (!check) {
    // TFLite 2.9 reads the file with its SignatureDefs and runs subgraph 0
    // ('add', whose inputs are listed in the subgraph's order).
    const file = path.join(OUT, 'add', 'model.tflite');
    const named = inputsOf(SIGNATURES[0], 0);
    const { outputs } = native.runNative({ exe: native.exe, model: file, inputs: [named.x, named.y], outputCount: 1 });
    const sum = new Float32Array(outputs[0].buffer, outputs[0].byteOffset, N);
    if (!close(sum, SIGNATURES[0].expect(named).sum)) problem('the full model\'s subgraph 0 differs from signature \'add\'');
  }
  if (failures) process.exit(1);
  console.log(check ? 'signature cases: all match'
    : `wrote ${SIGNATURES.length} signature cases to ${OUT} (TFLite vs independent: max |diff| ${maxDiff})`);
}

main().catch((e) => { console.error(e); process.exit(1); });
