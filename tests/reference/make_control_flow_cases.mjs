#!/usr/bin/env node
// TFLite control flow (IF, WHILE, CALL_ONCE; several subgraphs): the cases of
// tests/data/control_flow/, checked by tests/model/ControlFlowTest.cpp
// (kiln_control_flow_tests).
//
//   node tests/reference/make_control_flow_cases.mjs [--check]
//
// Each case folder holds model.tflite (built here with tflite_builder.mjs),
// input_K.npy, output_K.npy and meta.json. The stored outputs are TensorFlow
// Lite 2.9's native library with no delegate (tflite_native_reference.mjs,
// TFLite's builtin kernels, which run IF, WHILE and CALL_ONCE by calling the
// subgraphs); each is also computed independently here from the case's
// definition (`expect`, in double precision, rounded once to float32), and
// the two must agree within 1e-6 x (1 + |value|) or the run fails. The
// refused_*.tflite files are models Kiln refuses by design (a WHILE whose
// condition depends on input data, a loop past the unroll limit, branches
// that disagree); TFLite runs them, which this script confirms.
//
// --check rebuilds every model and input in memory and compares them with
// the committed files and the stored outputs with `expect` (no TFLite
// needed; CTest reference_control_flow_data_check).
//
// Needs the native library for writing (node fetch_models.mjs --bench).
// Deterministic: two runs give the same files.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { buildTfliteModel } from './tflite_builder.mjs';
import { encodeNpy, readNpy } from './npy.mjs';
import { mulberry32 } from './prng.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const OUT = path.join(here, '..', 'data', 'control_flow');

const f32 = (name, shape, extra = {}) => ({ name, shape, dtype: 'float32', ...extra });
const i32 = (name, shape, extra = {}) => ({ name, shape, dtype: 'int32', ...extra });
const bool = (name, shape, extra = {}) => ({ name, shape, dtype: 'bool', ...extra });
const constF32 = (name, shape, values) => f32(name, shape, { data: Float32Array.from(values) });
const constI32 = (name, shape, values) => i32(name, shape, { data: Int32Array.from(values) });
const constBool = (name, shape, values) => bool(name, shape, { data: Uint8Array.from(values, (v) => (v ? 1 : 0)) });

/// float32 values in [-2, 2) from mulberry32(seed).
function ramp(n, seed) {
  const r = mulberry32(seed);
  return Float32Array.from({ length: n }, () => -2 + 4 * r());
}
const fround = Math.fround;

/// The branch subgraph y = x * k (+ c): MUL by a constant, then ADD.
function affineGraph(name, shape, k, c) {
  return {
    name,
    tensors: [f32('x', shape), constF32('k', [1], [k]), f32('xk', shape), constF32('c', [1], [c]), f32('y', shape)],
    operators: [
      { op: 'MUL', inputs: [0, 1], outputs: [2], options: {} },
      { op: 'ADD', inputs: [2, 3], outputs: [4], options: {} },
    ],
    inputs: [0], outputs: [4],
  };
}
const affine = (x, k, c) => x.map((v) => fround(fround(v * k) + c));

/// The WHILE condition subgraph: i < limit, over loop variables (i, x).
function lessThanGraph(limit, shape) {
  return {
    name: 'cond',
    tensors: [i32('i', []), f32('x', shape), constI32('limit', [], [limit]), bool('go', [])],
    operators: [{ op: 'LESS', inputs: [0, 2], outputs: [3] }],
    inputs: [0, 1], outputs: [3],
  };
}

/// The WHILE body subgraph: (i + 1, x * k + c).
function stepGraph(shape, k, c) {
  return {
    name: 'body',
    tensors: [i32('i', []), f32('x', shape), constI32('one', [], [1]), i32('i_next', []),
      constF32('k', [1], [k]), f32('xk', shape), constF32('c', [1], [c]), f32('x_next', shape)],
    operators: [
      { op: 'ADD', inputs: [0, 2], outputs: [3], options: {} },
      { op: 'MUL', inputs: [1, 4], outputs: [5], options: {} },
      { op: 'ADD', inputs: [5, 6], outputs: [7], options: {} },
    ],
    inputs: [0, 1], outputs: [3, 7],
  };
}

/// main: (x) -> WHILE(i = 0, x; cond, body) -> (i, x).
function whileModel(shape, condGraph, bodyGraph, description) {
  return buildTfliteModel({
    description,
    subgraphs: [
      {
        name: 'main',
        tensors: [f32('x', shape), constI32('i0', [], [0]), i32('i_final', []), f32('y', shape)],
        operators: [{ op: 'WHILE', inputs: [1, 0], outputs: [2, 3], options: { cond_subgraph_index: 1, body_subgraph_index: 2 } }],
        inputs: [0], outputs: [2, 3],
      },
      condGraph, bodyGraph,
    ],
  });
}

/// main: (x [, cond]) -> IF(cond; then, else)(x) -> y. `cond` is a
/// constant (true/false), 'input' (a model input) or 'computed' (SUM(x) < 0).
function ifModel(shape, cond, description) {
  const tensors = [f32('x', shape), f32('y', shape)];
  const operators = [];
  const inputs = [0];
  let c;
  if (cond === 'input') {
    tensors.push(bool('cond', []));
    c = 2;
    inputs.push(c);
  } else if (cond === 'computed') {
    tensors.push(constI32('axes', [shape.length], shape.map((_, k) => k)), f32('total', []), constF32('zero', [], [0]), bool('negative', []));
    operators.push({ op: 'SUM', inputs: [0, 2], outputs: [3], options: { keep_dims: false } });
    operators.push({ op: 'LESS', inputs: [3, 4], outputs: [5] });
    c = 5;
  } else {
    tensors.push(constBool('cond', [], [cond]));
    c = 2;
  }
  operators.push({ op: 'IF', inputs: [c, 0], outputs: [1], options: { then_subgraph_index: 1, else_subgraph_index: 2 } });
  return buildTfliteModel({
    description,
    subgraphs: [
      { name: 'main', tensors, operators, inputs, outputs: [1] },
      affineGraph('then', shape, 2, 0.5),
      affineGraph('else', shape, -1, 3),
    ],
  });
}

/// int8 tensors of one quantization (scale 0.05, zero point -3).
const Q = { scale: [0.05], zeroPoint: [-3] };
const i8 = (name, shape, extra = {}) => ({ name, shape, dtype: 'int8', quantization: Q, ...extra });

/// main: (x int8, cond bool) -> IF(cond; then RELU, else REVERSE_V2 on axis 1)(x).
function int8IfModel(shape) {
  return buildTfliteModel({
    description: 'kiln control flow: IF over int8 branches',
    subgraphs: [
      {
        name: 'main',
        tensors: [i8('x', shape), bool('cond', []), i8('y', shape)],
        operators: [{ op: 'IF', inputs: [1, 0], outputs: [2], options: { then_subgraph_index: 1, else_subgraph_index: 2 } }],
        inputs: [0, 1], outputs: [2],
      },
      { name: 'then', tensors: [i8('x', shape), i8('y', shape)], operators: [{ op: 'RELU', inputs: [0], outputs: [1] }], inputs: [0], outputs: [1] },
      {
        name: 'else',
        tensors: [i8('x', shape), constI32('axis', [1], [1]), i8('y', shape)],
        operators: [{ op: 'REVERSE_V2', inputs: [0, 1], outputs: [2] }],
        inputs: [0], outputs: [2],
      },
    ],
  });
}

/// int8 values over the whole range from mulberry32(seed).
function int8Ramp(n, seed) {
  const r = mulberry32(seed);
  return Int8Array.from({ length: n }, () => Math.floor(256 * r()) - 128);
}
/// RELU on one quantization: max(q, zero point) (the requantization by 1 is exact).
const reluQ = (x) => x.map((q) => Math.max(q, Q.zeroPoint[0]));
/// REVERSE_V2 of [rows, cols] along axis 1.
const reverseCols = (x, [rows, cols]) => Int8Array.from(x, (_, i) => x[Math.floor(i / cols) * cols + (cols - 1 - (i % cols))]);

const SHAPE = [2, 3];
const N = 6;

// Each case: model bytes, inputs ([{ data, shape, descr }]), expect(inputs)
// -> outputs ([{ data, shape }]), description.
const CASES = {
  if_constant_true: {
    what: 'IF on a constant true condition: the then branch (x * 2 + 0.5) is converted in place',
    model: () => ifModel(SHAPE, true, 'kiln control flow: IF, constant true'),
    inputs: () => [{ data: ramp(N, 11), shape: SHAPE }],
    expect: ([x]) => [{ data: affine(x.data, 2, 0.5), shape: SHAPE }],
  },
  if_constant_false: {
    what: 'IF on a constant false condition: the else branch (x * -1 + 3)',
    model: () => ifModel(SHAPE, false, 'kiln control flow: IF, constant false'),
    inputs: () => [{ data: ramp(N, 12), shape: SHAPE }],
    expect: ([x]) => [{ data: affine(x.data, -1, 3), shape: SHAPE }],
  },
  if_input_condition_true: {
    what: 'IF on a bool model input (true here): both branches run, the output is selected at run time',
    model: () => ifModel(SHAPE, 'input', 'kiln control flow: IF, condition is an input'),
    inputs: () => [{ data: ramp(N, 13), shape: SHAPE }, { data: Uint8Array.from([1]), shape: [], descr: '|b1' }],
    expect: ([x]) => [{ data: affine(x.data, 2, 0.5), shape: SHAPE }],
  },
  if_input_condition_false: {
    what: 'the same model with the condition input false: the else branch\'s values',
    model: () => ifModel(SHAPE, 'input', 'kiln control flow: IF, condition is an input'),
    inputs: () => [{ data: ramp(N, 14), shape: SHAPE }, { data: Uint8Array.from([0]), shape: [], descr: '|b1' }],
    expect: ([x]) => [{ data: affine(x.data, -1, 3), shape: SHAPE }],
  },
  if_computed_condition: {
    what: 'IF on SUM(x) < 0, computed from the input data: both branches, selected (the input sums to a negative number)',
    model: () => ifModel(SHAPE, 'computed', 'kiln control flow: IF, condition computed from x'),
    inputs: () => [{ data: Float32Array.from([-1.5, 0.25, -0.75, 0.5, -2, 1]), shape: SHAPE }],
    expect: ([x]) => [{ data: x.data.reduce((a, b) => a + b, 0) < 0 ? affine(x.data, 2, 0.5) : affine(x.data, -1, 3), shape: SHAPE }],
  },
  while_counter_5: {
    what: 'WHILE i < 5 (i from 0, +1 per iteration) over x -> x * 1.5 - 0.25: unrolled 5 iterations; outputs i and x',
    model: () => whileModel(SHAPE, lessThanGraph(5, SHAPE), stepGraph(SHAPE, 1.5, -0.25), 'kiln control flow: WHILE, 5 iterations'),
    inputs: () => [{ data: ramp(N, 15), shape: SHAPE }],
    expect: ([x]) => {
      let v = x.data;
      for (let i = 0; i < 5; i++) v = affine(v, 1.5, -0.25);
      return [{ data: Int32Array.from([5]), shape: [] }, { data: v, shape: SHAPE }];
    },
  },
  while_zero_iterations: {
    what: 'WHILE i < 0: the condition is false at once, the outputs are the inputs (i = 0, x)',
    model: () => whileModel(SHAPE, lessThanGraph(0, SHAPE), stepGraph(SHAPE, 1.5, -0.25), 'kiln control flow: WHILE, no iteration'),
    inputs: () => [{ data: ramp(N, 16), shape: SHAPE }],
    expect: ([x]) => [{ data: Int32Array.from([0]), shape: [] }, { data: x.data, shape: SHAPE }],
  },
  while_body_with_if: {
    what: 'WHILE i < 4 whose body holds an IF on i == 2 (then x * 2 + 0.5, else x * -1 + 3): nested calls, the IF folded at each iteration',
    model: () => buildTfliteModel({
      description: 'kiln control flow: WHILE with an IF in its body',
      subgraphs: [
        {
          name: 'main',
          tensors: [f32('x', SHAPE), constI32('i0', [], [0]), i32('i_final', []), f32('y', SHAPE)],
          operators: [{ op: 'WHILE', inputs: [1, 0], outputs: [2, 3], options: { cond_subgraph_index: 1, body_subgraph_index: 2 } }],
          inputs: [0], outputs: [2, 3],
        },
        lessThanGraph(4, SHAPE),
        {
          name: 'body',
          tensors: [i32('i', []), f32('x', SHAPE), constI32('one', [], [1]), i32('i_next', []), constI32('two', [], [2]),
            bool('is_two', []), f32('x_next', SHAPE)],
          operators: [
            { op: 'ADD', inputs: [0, 2], outputs: [3], options: {} },
            { op: 'EQUAL', inputs: [0, 4], outputs: [5] },
            { op: 'IF', inputs: [5, 1], outputs: [6], options: { then_subgraph_index: 3, else_subgraph_index: 4 } },
          ],
          inputs: [0, 1], outputs: [3, 6],
        },
        affineGraph('then', SHAPE, 2, 0.5),
        affineGraph('else', SHAPE, -1, 3),
      ],
    }),
    inputs: () => [{ data: ramp(N, 17), shape: SHAPE }],
    expect: ([x]) => {
      let v = x.data;
      for (let i = 0; i < 4; i++) v = i === 2 ? affine(v, 2, 0.5) : affine(v, -1, 3);
      return [{ data: Int32Array.from([4]), shape: [] }, { data: v, shape: SHAPE }];
    },
  },
  while_constant_false_condition: {
    what: 'WHILE whose condition subgraph returns a constant false tensor (no operator computes it): no iteration',
    model: () => whileModel(SHAPE, {
      name: 'cond',
      tensors: [i32('i', []), f32('x', SHAPE), constBool('never', [], [false])],
      operators: [],
      inputs: [0, 1], outputs: [2],
    }, stepGraph(SHAPE, 1.5, -0.25), 'kiln control flow: WHILE, constant false condition'),
    inputs: () => [{ data: ramp(N, 23), shape: SHAPE }],
    expect: ([x]) => [{ data: Int32Array.from([0]), shape: [] }, { data: x.data, shape: SHAPE }],
  },
  if_int8_branches_true: {
    what: 'IF on a bool input over int8 tensors (scale 0.05, zero point -3): then RELU (max(q, -3)), else REVERSE_V2 along axis 1; true here',
    model: () => int8IfModel(SHAPE),
    inputs: () => [{ data: int8Ramp(N, 25), shape: SHAPE }, { data: Uint8Array.from([1]), shape: [], descr: '|b1' }],
    expect: ([x]) => [{ data: reluQ(x.data), shape: SHAPE }],
  },
  if_int8_branches_false: {
    what: 'the same int8 model with the condition false: the reversed rows',
    model: () => int8IfModel(SHAPE),
    inputs: () => [{ data: int8Ramp(N, 26), shape: SHAPE }, { data: Uint8Array.from([0]), shape: [], descr: '|b1' }],
    expect: ([x]) => [{ data: reverseCols(x.data, SHAPE), shape: SHAPE }],
  },
  call_once_then_relu: {
    what: 'CALL_ONCE of an initialization subgraph (computes a constant sum it returns to no one), then RELU: the model is the RELU',
    model: () => buildTfliteModel({
      description: 'kiln control flow: CALL_ONCE',
      subgraphs: [
        {
          name: 'main',
          tensors: [f32('x', SHAPE), f32('y', SHAPE)],
          operators: [
            { op: 'CALL_ONCE', inputs: [], outputs: [], options: { init_subgraph_index: 1 } },
            { op: 'RELU', inputs: [0], outputs: [1] },
          ],
          inputs: [0], outputs: [1],
        },
        { name: 'init', tensors: [], operators: [], inputs: [], outputs: [] },
      ],
    }),
    inputs: () => [{ data: ramp(N, 18), shape: SHAPE }],
    expect: ([x]) => [{ data: x.data.map((v) => Math.max(v, 0)), shape: SHAPE }],
  },
};

// Models Kiln refuses (ControlFlowTest names the expected error); TFLite
// runs each (confirmed when writing).
const REFUSED = {
  refused_while_data_dependent: {
    what: 'WHILE SUM(x) < 10 with body x * 2 + 1: the condition depends on the input data',
    model: () => whileModel(SHAPE, {
      name: 'cond',
      tensors: [i32('i', []), f32('x', SHAPE), constI32('axes', [2], [0, 1]), f32('total', []), constF32('ten', [], [10]), bool('go', [])],
      operators: [
        { op: 'SUM', inputs: [1, 2], outputs: [3], options: { keep_dims: false } },
        { op: 'LESS', inputs: [3, 4], outputs: [5] },
      ],
      inputs: [0, 1], outputs: [5],
    }, stepGraph(SHAPE, 2, 1), 'kiln control flow: WHILE on data'),
    inputs: () => [{ data: ramp(N, 19), shape: SHAPE }],
  },
  refused_while_int32_condition: {
    what: 'WHILE whose condition gives int32 3 - i instead of a bool',
    model: () => whileModel(SHAPE, {
      name: 'cond',
      tensors: [i32('i', []), f32('x', SHAPE), constI32('three', [], [3]), i32('left', [])],
      operators: [{ op: 'SUB', inputs: [2, 0], outputs: [3], options: {} }],
      inputs: [0, 1], outputs: [3],
    }, stepGraph(SHAPE, 2, 1), 'kiln control flow: WHILE, int32 condition'),
    inputs: () => [{ data: ramp(N, 24), shape: SHAPE }],
  },
  refused_while_too_many_iterations: {
    what: 'WHILE i < 5000: past the 1024 iterations Kiln unrolls a WHILE to',
    model: () => whileModel(SHAPE, lessThanGraph(5000, SHAPE), stepGraph(SHAPE, 1, 0.001), 'kiln control flow: WHILE, 5000 iterations'),
    inputs: () => [{ data: ramp(N, 20), shape: SHAPE }],
  },
  refused_if_branches_disagree: {
    what: 'IF on a bool input whose branches give [2,3] and [2,1]: cannot be selected at run time',
    model: () => buildTfliteModel({
      description: 'kiln control flow: IF branches of different shapes',
      subgraphs: [
        {
          name: 'main',
          tensors: [f32('x', SHAPE), bool('cond', []), f32('y', SHAPE, { shapeSignature: [2, -1] })],
          operators: [{ op: 'IF', inputs: [1, 0], outputs: [2], options: { then_subgraph_index: 1, else_subgraph_index: 2 } }],
          inputs: [0, 1], outputs: [2],
        },
        affineGraph('then', SHAPE, 2, 0.5),
        {
          name: 'else',
          tensors: [f32('x', SHAPE), constI32('axes', [1], [1]), f32('y', [2, 1])],
          operators: [{ op: 'SUM', inputs: [0, 1], outputs: [2], options: { keep_dims: true } }],
          inputs: [0], outputs: [2],
        },
      ],
    }),
    inputs: () => [{ data: ramp(N, 21), shape: SHAPE }, { data: Uint8Array.from([1]), shape: [], descr: '|b1' }],
  },
  refused_if_missing_subgraph: {
    what: 'IF whose else branch is subgraph 7 in a model of 2 subgraphs',
    model: () => buildTfliteModel({
      description: 'kiln control flow: IF naming a missing subgraph',
      subgraphs: [
        {
          name: 'main',
          tensors: [f32('x', SHAPE), bool('cond', []), f32('y', SHAPE)],
          operators: [{ op: 'IF', inputs: [1, 0], outputs: [2], options: { then_subgraph_index: 1, else_subgraph_index: 7 } }],
          inputs: [0, 1], outputs: [2],
        },
        affineGraph('then', SHAPE, 2, 0.5),
      ],
    }),
    inputs: () => [{ data: ramp(N, 22), shape: SHAPE }, { data: Uint8Array.from([1]), shape: [], descr: '|b1' }],
  },
  refused_call_once_self: {
    what: 'CALL_ONCE whose initialization subgraph is 0, the model itself',
    model: () => buildTfliteModel({
      description: 'kiln control flow: CALL_ONCE of subgraph 0',
      subgraphs: [
        {
          name: 'main',
          tensors: [f32('x', SHAPE), f32('y', SHAPE)],
          operators: [
            { op: 'CALL_ONCE', inputs: [], outputs: [], options: { init_subgraph_index: 0 } },
            { op: 'RELU', inputs: [0], outputs: [1] },
          ],
          inputs: [0], outputs: [1],
        },
      ],
    }),
    inputs: () => [{ data: ramp(N, 23), shape: SHAPE }],
  },
};

function npyOf({ data, shape, descr }) {
  return encodeNpy(data, shape, descr);
}

function close(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = Number(a[i]), y = Number(b[i]);
    if (!(Math.abs(x - y) <= 1e-6 * (1 + Math.abs(y)))) return false;
  }
  return true;
}

async function main() {
  const check = process.argv.includes('--check');
  let failures = 0;
  const problem = (m) => { console.error(`make_control_flow_cases: ${m}`); failures++; };
  let native = null;
  if (!check) {
    const { buildNative, runNative } = await import('./tflite_native_reference.mjs');
    native = { exe: buildNative(), runNative };
  }
  const index = [];
  for (const [name, c] of Object.entries(CASES)) {
    const dir = path.join(OUT, name);
    const model = c.model();
    const inputs = c.inputs();
    const expected = c.expect(inputs);
    const files = { 'model.tflite': Buffer.from(model) };
    inputs.forEach((t, k) => { files[`input_${k}.npy`] = npyOf(t); });
    if (check) {
      for (const [f, bytes] of Object.entries(files))
        if (!fs.existsSync(path.join(dir, f)) || !Buffer.from(fs.readFileSync(path.join(dir, f))).equals(Buffer.from(bytes)))
          problem(`${name}/${f} is not what this script builds`);
      expected.forEach((e, k) => {
        const stored = readNpy(path.join(dir, `output_${k}.npy`));
        if (!close(stored.data, e.data)) problem(`${name}/output_${k}.npy differs from the independent computation`);
      });
      continue;
    }
    fs.mkdirSync(dir, { recursive: true });
    const modelPath = path.join(dir, 'model.tflite');
    fs.writeFileSync(modelPath, model);
    for (const [f, bytes] of Object.entries(files)) fs.writeFileSync(path.join(dir, f), bytes);
    const { outputs } = native.runNative({ exe: native.exe, model: modelPath, inputs: inputs.map((t) => t.data), outputCount: expected.length });
    expected.forEach((e, k) => {
      const got = new e.data.constructor(outputs[k].buffer, outputs[k].byteOffset, outputs[k].byteLength / e.data.BYTES_PER_ELEMENT);
      if (!close(got, e.data)) problem(`${name}: TFLite's output ${k} [${Array.from(got)}] differs from the independent [${Array.from(e.data)}]`);
      fs.writeFileSync(path.join(dir, `output_${k}.npy`), encodeNpy(got, e.shape));
    });
    fs.writeFileSync(path.join(dir, 'meta.json'), `${JSON.stringify({
      case: name, what: c.what, reference: 'TFLite 2.9 native library, builtin kernels (no delegate)',
      independent: 'tests/reference/make_control_flow_cases.mjs expect(), agrees within 1e-6 x (1 + |value|)',
    }, null, 2)}\n`);
    index.push({ name, what: c.what });
  }
  for (const [name, c] of Object.entries(REFUSED)) {
    const file = path.join(OUT, `${name}.tflite`);
    const model = c.model();
    if (check) {
      if (!fs.existsSync(file) || !Buffer.from(fs.readFileSync(file)).equals(Buffer.from(model))) problem(`${name}.tflite is not what this script builds`);
      continue;
    }
    fs.writeFileSync(file, model);
    let tflite;
    try {
      native.runNative({ exe: native.exe, model: file, inputs: c.inputs().map((t) => t.data), outputCount: name.includes('while') ? 2 : 1 });
      tflite = 'runs it';
    } catch (e) {
      tflite = `refuses it (${String(e.message).split('\n')[0].slice(0, 160)})`;
    }
    console.log(`${name}.tflite: TFLite ${tflite}`);
    index.push({ name: `${name}.tflite`, what: c.what, tflite });
  }
  if (!check) fs.writeFileSync(path.join(OUT, 'index.json'), `${JSON.stringify(index, null, 2)}\n`);
  if (failures) process.exit(1);
  console.log(check ? 'control_flow cases: all match' : `wrote ${Object.keys(CASES).length} cases and ${Object.keys(REFUSED).length} refused models to ${OUT}`);
}

main().catch((e) => { console.error(e); process.exit(1); });
