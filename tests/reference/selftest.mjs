#!/usr/bin/env node
// Self-test of the reference tooling (no network, no cached models needed):
// npy round trip, PRNG values, and tflite_reference.mjs on tiny generated
// single-operator models: several inputs listed out of tensor order, several
// outputs, a model with no inputs at all, an int32 output, --inputs-from.
//
//   node selftest.mjs            (exit 0 = all good)

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeNpy, encodeNpy, readNpy } from './npy.mjs';
import { mulberry32 } from './prng.mjs';
import { buildTfliteModel, fromFloat16Bits, toFloat16Bits } from './tflite_builder.mjs';
import { parseTflite } from './tflite_flatbuffer.mjs';
import { evaluateModel } from './op_eval.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kiln-ref-selftest-'));
let failures = 0;

async function check(name, fn) {
  try {
    await fn();
    console.log(`ok   ${name}`);
  } catch (e) {
    failures++;
    console.log(`FAIL ${name}\n     ${String(e.stack || e).split('\n').slice(0, 6).join('\n     ')}`);
  }
}

function runRef(model, out, extra = []) {
  execFileSync(process.execPath, [path.join(here, 'tflite_reference.mjs'), '--model', model, '--out', out, '--quiet', ...extra], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  return JSON.parse(fs.readFileSync(path.join(out, 'meta.json'), 'utf8'));
}

function writeModel(name, spec) {
  const file = path.join(tmp, `${name}.tflite`);
  fs.writeFileSync(file, buildTfliteModel(spec));
  return file;
}

await check('npy round trip (f4, i4, scalar, empty)', () => {
  for (const [data, shape] of [
    [new Float32Array([1.5, -2, 3, 4, 5, 6]), [2, 3]],
    [new Int32Array([7, -8]), [2]],
    [new Float32Array([42]), []],
    [new Float32Array(0), [0, 3]],
  ]) {
    const buf = encodeNpy(data, shape);
    assert.equal(buf.length % 64, (data.byteLength) % 64, 'header padded to 64');
    const back = decodeNpy(buf);
    assert.deepEqual(back.shape, shape);
    assert.deepEqual(Array.from(back.data), Array.from(data));
  }
  const hdr = encodeNpy(new Float32Array(6), [2, 3]).toString('latin1', 10, 80);
  assert.match(hdr, /^\{'descr': '<f4', 'fortran_order': False, 'shape': \(2, 3\), \}/);
  assert.match(encodeNpy(new Float32Array(2), [2]).toString('latin1'), /'shape': \(2,\), \}/);
});

await check('mulberry32 reference values', () => {
  const r = mulberry32(1);
  // Values documented in README.md (seed 1, first three draws).
  assert.deepEqual([r(), r(), r()], [0.6270739405881613, 0.002735721180215478, 0.5274470399599522]);
});

await check('three inputs listed out of order, two outputs: (a + b) * c', () => {
  const f = (name) => ({ name, shape: [2, 3], dtype: 'float32' });
  const model = writeModel('three_inputs', {
    tensors: [f('a'), f('b'), f('c'), f('sum'), f('prod')],
    operators: [
      { op: 'ADD', inputs: [0, 1], outputs: [3] },
      { op: 'MUL', inputs: [3, 2], outputs: [4] },
    ],
    inputs: [2, 0, 1],
    outputs: [4, 3],
  });
  assert.deepEqual(parseTflite(fs.readFileSync(model)).subgraphs[0].inputs, [2, 0, 1]);
  const out = path.join(tmp, 'three_inputs');
  const meta = runRef(model, out, ['--seed', '7']);
  assert.deepEqual(meta.inputs.map((t) => t.name), ['c', 'a', 'b']);
  assert.deepEqual(meta.inputs.map((t) => t.tensor_index), [2, 0, 1]);
  assert.deepEqual(meta.outputs.map((t) => t.name), ['prod', 'sum']);
  assert.equal(meta.model_subgraph.interpreter_inputs_match, true);
  assert.equal(meta.model_subgraph.interpreter_outputs_match, true);
  const [c, a, b] = [0, 1, 2].map((k) => readNpy(path.join(out, `input_${k}.npy`)).data);
  const prod = readNpy(path.join(out, 'output_0.npy'));
  const sum = readNpy(path.join(out, 'output_1.npy'));
  assert.deepEqual(prod.shape, [2, 3]);
  for (let i = 0; i < 6; i++) {
    assert.equal(sum.data[i], Math.fround(a[i] + b[i]));
    assert.equal(prod.data[i], Math.fround(sum.data[i] * c[i]));
  }
  // Input K is seeded with seed + K.
  const u = mulberry32(7 + 1);
  assert.equal(a[0], Math.fround(-1 + 2 * u()));
  for (const x of [...a, ...b, ...c]) assert.ok(x >= -1 && x < 1);

  // --inputs-from reproduces the run exactly.
  const out2 = path.join(tmp, 'three_inputs_again');
  runRef(model, out2, ['--inputs-from', out]);
  for (const fname of ['input_0.npy', 'input_1.npy', 'input_2.npy', 'output_0.npy', 'output_1.npy']) {
    assert.ok(fs.readFileSync(path.join(out, fname)).equals(fs.readFileSync(path.join(out2, fname))), fname);
  }
});

await check('no inputs (constants only)', () => {
  const model = writeModel('no_inputs', {
    tensors: [
      { name: 'k0', shape: [4], data: new Float32Array([1, 2, 3, 4]) },
      { name: 'k1', shape: [4], data: new Float32Array([10, 20, 30, 40]) },
      { name: 'y', shape: [4] },
    ],
    operators: [{ op: 'ADD', inputs: [0, 1], outputs: [2] }],
    inputs: [],
    outputs: [2],
  });
  const out = path.join(tmp, 'no_inputs');
  const meta = runRef(model, out, ['--seed', '1']);
  assert.equal(meta.inputs.length, 0);
  assert.deepEqual(Array.from(readNpy(path.join(out, 'output_0.npy')).data), [11, 22, 33, 44]);
});

await check('int32 output (CAST)', () => {
  const model = writeModel('cast', {
    tensors: [{ name: 'x', shape: [5] }, { name: 'y', shape: [5], dtype: 'int32' }],
    operators: [{ op: 'CAST', inputs: [0], outputs: [1] }],
    inputs: [0],
    outputs: [1],
  });
  const out = path.join(tmp, 'cast');
  const meta = runRef(model, out, ['--seed', '3']);
  assert.equal(meta.outputs[0].npy_dtype, '<i4');
  const x = readNpy(path.join(out, 'input_0.npy'));
  const y = readNpy(path.join(out, 'output_0.npy'));
  assert.equal(y.dtype, '<i4');
  assert.deepEqual(Array.from(y.data), Array.from(x.data, (v) => v | 0));
});

await check('rank-0 (scalar) input and output', () => {
  const model = writeModel('scalar', {
    tensors: [{ name: 'x', shape: [] }, { name: 'y', shape: [] }],
    operators: [{ op: 'LOGISTIC', inputs: [0], outputs: [1] }],
    inputs: [0],
    outputs: [1],
  });
  const out = path.join(tmp, 'scalar');
  const meta = runRef(model, out, ['--seed', '2']);
  assert.deepEqual(meta.inputs[0].shape, []);
  const x = readNpy(path.join(out, 'input_0.npy'));
  const y = readNpy(path.join(out, 'output_0.npy'));
  assert.deepEqual(y.shape, []);
  assert.ok(Math.abs(y.data[0] - 1 / (1 + Math.exp(-x.data[0]))) < 1e-6);
});

await check('constant tensor listed as a subgraph input is not overwritten', () => {
  const model = writeModel('const_input', {
    tensors: [
      { name: 'x', shape: [3] },
      { name: 'k', shape: [3], data: new Float32Array([1, 2, 3]) },
      { name: 'y', shape: [3] },
    ],
    operators: [{ op: 'ADD', inputs: [0, 1], outputs: [2] }],
    inputs: [0, 1],
    outputs: [2],
  });
  const out = path.join(tmp, 'const_input');
  const meta = runRef(model, out, ['--seed', '1']);
  assert.equal(meta.inputs[1].constant, true);
  assert.deepEqual(Array.from(readNpy(path.join(out, 'input_1.npy')).data), [1, 2, 3]);
  const x = readNpy(path.join(out, 'input_0.npy')).data;
  const y = readNpy(path.join(out, 'output_0.npy')).data;
  for (let i = 0; i < 3; i++) assert.equal(y[i], Math.fround(x[i] + (i + 1)));
});

await check('builder: builtin options, op versions, float16 constants', () => {
  // float16 bits: exact values, rounding to nearest even, subnormals, overflow.
  assert.deepEqual(Array.from(toFloat16Bits([1, -2.5, 65504, 0.1, 2 ** -24, 1e-8, 70000, 1 + 2 ** -11])),
    [0x3c00, 0xc100, 0x7bff, 0x2e66, 0x0001, 0x0000, 0x7c00, 0x3c00]);
  assert.deepEqual(Array.from(fromFloat16Bits(Uint16Array.from([0x3c00, 0xc100, 0x0001]))), [1, -2.5, 2 ** -24]);
  // LEAKY_RELU(alpha 0.25) of DEQUANTIZE(float16 constant) + x: checks the
  // options table, a version-3 DEQUANTIZE and a FLOAT16 buffer end to end.
  const k = [0.5, -1.5, 2, -4];
  const model = writeModel('options', {
    tensors: [
      { name: 'x', shape: [4] },
      { name: 'k16', shape: [4], dtype: 'float16', data: toFloat16Bits(k) },
      { name: 'k', shape: [4] },
      { name: 'sum', shape: [4] },
      { name: 'y', shape: [4] },
    ],
    operators: [
      { op: 'DEQUANTIZE', version: 3, inputs: [1], outputs: [2], options: {} },
      { op: 'ADD', inputs: [0, 2], outputs: [3], options: { fused_activation_function: 'NONE' } },
      { op: 'LEAKY_RELU', inputs: [3], outputs: [4], options: { alpha: 0.25 } },
    ],
    inputs: [0],
    outputs: [4],
  });
  const out = path.join(tmp, 'options');
  runRef(model, out, ['--seed', '4']);
  const x = readNpy(path.join(out, 'input_0.npy')).data;
  const y = readNpy(path.join(out, 'output_0.npy')).data;
  for (let i = 0; i < 4; i++) {
    const sum = Math.fround(x[i] + k[i]);
    assert.ok(Math.abs(y[i] - (sum >= 0 ? sum : 0.25 * sum)) < 1e-6, `y[${i}]`);
  }
});

await check('parser reads back operators, options and constants; op_eval.mjs evaluates the file', () => {
  const bytes = buildTfliteModel({
    tensors: [
      { name: 'x', shape: [2, 3] },
      { name: 'p', shape: [2, 2], dtype: 'int32', data: Int32Array.from([1, 0, 0, 2]) },
      { name: 'm', shape: [3, 5] },
      { name: 'y', shape: [3, 5] },
    ],
    operators: [
      { op: 'MIRROR_PAD', inputs: [0, 1], outputs: [2], options: { mode: 'SYMMETRIC' } },
      { op: 'LEAKY_RELU', inputs: [2], outputs: [3], options: { alpha: 0.5 } },
    ],
    inputs: [0],
    outputs: [3],
  });
  const sg = parseTflite(bytes).subgraphs[0];
  assert.deepEqual(sg.operators.map((o) => [o.op, o.inputs, o.outputs, o.options]),
    [['MIRROR_PAD', [0, 1], [2], { mode: 'SYMMETRIC' }], ['LEAKY_RELU', [2], [3], { alpha: 0.5 }]]);
  assert.deepEqual(Array.from(sg.tensors[1].data), [1, 0, 0, 2]);
  // SYMMETRIC: row 0 repeated above, columns 2 and 1 mirrored after (hand-computed).
  const [y] = evaluateModel(sg, [{ shape: [2, 3], data: [1, -2, 3, -4, 5, -6] }]);
  assert.deepEqual(y.shape, [3, 5]);
  assert.deepEqual(Array.from(y.data), [1, -1, 3, 3, -1, 1, -1, 3, 3, -1, -2, 5, -3, -3, 5]);
});

fs.rmSync(tmp, { recursive: true, force: true });
console.log(failures ? `${failures} check(s) failed` : 'all checks passed');
process.exitCode = failures ? 1 : 0;
