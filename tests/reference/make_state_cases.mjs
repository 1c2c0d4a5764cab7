#!/usr/bin/env node
// TFLite resource variables (VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE,
// initialized by CALL_ONCE): the resource_* cases of tests/data/state/,
// checked by tests/model/StateTest.cpp (kiln_state_tests), which runs
// every folder of tests/data/state step by step on one module.
//
//   node tests/reference/make_state_cases.mjs [--check]
//
// A state case folder holds model.tflite (built here with
// tflite_builder.mjs), meta.json ("steps": 3), the first invocation's
// input_K.npy and output_K.npy, and step_1/, step_2/ with the same files
// for the second and third invocations, which start from the state the
// previous one left. The stored outputs are TensorFlow Lite 2.9's native
// library with no delegate (tflite_native_reference.mjs, steps: 3: three
// invokes of one interpreter), and each is also computed independently
// here (`expect`: the variables carried by hand, in double precision
// rounded to float32 after every operator); the two must agree within
// 1e-6 x (1 + |value|) or the run fails. The refused_*.tflite files are
// models Kiln refuses by design (a variable initialized with a computed
// value, a variable read as two types).
//
// --check rebuilds every model and input in memory and compares them with
// the committed files and the stored outputs with `expect` (no TFLite
// needed; CTest reference_state_data_check).
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
const OUT = path.join(here, '..', 'data', 'state');
const STEPS = 3;

const f32 = (name, shape, extra = {}) => ({ name, shape, dtype: 'float32', ...extra });
const i32 = (name, shape, extra = {}) => ({ name, shape, dtype: 'int32', ...extra });
const res = (name) => ({ name, shape: [], dtype: 'resource' });
const constF32 = (name, shape, values) => f32(name, shape, { data: Float32Array.from(values) });
const constI32 = (name, shape, values) => i32(name, shape, { data: Int32Array.from(values) });
const fround = Math.fround;

/// float32 values in [-2, 2) from mulberry32(seed).
function ramp(n, seed) {
  const r = mulberry32(seed);
  return Float32Array.from({ length: n }, () => -2 + 4 * r());
}

/// The CALL_ONCE initializer: each [shared_name, value tensor] assigned.
function initGraph(vars) {
  const tensors = [];
  const operators = [];
  for (const [name, value] of vars) {
    const h = tensors.length;
    tensors.push(res(`${name}_handle`), value);
    operators.push({ op: 'VAR_HANDLE', inputs: [], outputs: [h], options: { shared_name: name } });
    operators.push({ op: 'ASSIGN_VARIABLE', inputs: [h, h + 1], outputs: [] });
  }
  return { name: 'init', tensors, operators, inputs: [], outputs: [] };
}

const X_SHAPE = [1, 4];
const N = 4;

/// One input x [1, 4] per step.
const stepInputs = (seed) => Array.from({ length: STEPS }, (_, s) => [{ data: ramp(N, seed + s), shape: X_SHAPE }]);

const CASES = {
  resource_accumulator: {
    what: 'acc (initialized to [0.5, -1, 2, 0] by CALL_ONCE) += x; y = acc: the running sum of the inputs',
    model: () => buildTfliteModel({
      description: 'resource variable accumulator',
      subgraphs: [
        {
          name: 'main',
          tensors: [f32('x', X_SHAPE), res('acc_handle'), f32('acc', X_SHAPE), f32('y', X_SHAPE)],
          operators: [
            { op: 'CALL_ONCE', inputs: [], outputs: [], options: { init_subgraph_index: 1 } },
            { op: 'VAR_HANDLE', inputs: [], outputs: [1], options: { shared_name: 'acc' } },
            { op: 'READ_VARIABLE', inputs: [1], outputs: [2] },
            { op: 'ADD', inputs: [2, 0], outputs: [3], options: {} },
            { op: 'ASSIGN_VARIABLE', inputs: [1, 3], outputs: [] },
          ],
          inputs: [0], outputs: [3],
        },
        initGraph([['acc', constF32('acc0', X_SHAPE, [0.5, -1, 2, 0])]]),
      ],
    }),
    inputs: () => stepInputs(31),
    expect: (steps) => {
      let acc = [0.5, -1, 2, 0];
      return steps.map(([x]) => {
        acc = acc.map((a, i) => fround(a + x.data[i]));
        return [{ data: Float32Array.from(acc), shape: X_SHAPE }];
      });
    },
  },
  resource_counter_and_decay: {
    what: 'two variables: a float32 counter (0 by CALL_ONCE) += 1, and v (1, 2, 3, 4) := v * 0.5 + x read back after the assignment; outputs (counter, v, v_new - v_old)',
    model: () => buildTfliteModel({
      description: 'two resource variables, one read after its assignment',
      subgraphs: [
        {
          name: 'main',
          tensors: [
            f32('x', X_SHAPE), res('count_handle'), f32('count', [1]), constF32('one', [1], [1]), f32('count_next', [1]),
            res('v_handle'), f32('v_old', X_SHAPE), constF32('half', [1], [0.5]), f32('v_half', X_SHAPE),
            f32('v_sum', X_SHAPE), f32('v_new', X_SHAPE), f32('delta', X_SHAPE),
          ],
          operators: [
            { op: 'CALL_ONCE', inputs: [], outputs: [], options: { init_subgraph_index: 1 } },
            { op: 'VAR_HANDLE', inputs: [], outputs: [1], options: { shared_name: 'count' } },
            { op: 'READ_VARIABLE', inputs: [1], outputs: [2] },
            { op: 'ADD', inputs: [2, 3], outputs: [4], options: {} },
            { op: 'ASSIGN_VARIABLE', inputs: [1, 4], outputs: [] },
            { op: 'VAR_HANDLE', inputs: [], outputs: [5], options: { shared_name: 'v' } },
            { op: 'READ_VARIABLE', inputs: [5], outputs: [6] },
            { op: 'MUL', inputs: [6, 7], outputs: [8], options: {} },
            { op: 'ADD', inputs: [8, 0], outputs: [9], options: {} },
            { op: 'ASSIGN_VARIABLE', inputs: [5, 9], outputs: [] },
            { op: 'READ_VARIABLE', inputs: [5], outputs: [10] },
            { op: 'SUB', inputs: [10, 6], outputs: [11], options: {} },
          ],
          inputs: [0], outputs: [4, 10, 11],
        },
        initGraph([['count', constF32('count0', [1], [0])], ['v', constF32('v0', X_SHAPE, [1, 2, 3, 4])]]),
      ],
    }),
    inputs: () => stepInputs(41),
    expect: (steps) => {
      let count = 0;
      let v = [1, 2, 3, 4];
      return steps.map(([x]) => {
        count += 1;
        const old = v;
        v = v.map((a, i) => fround(fround(a * 0.5) + x.data[i]));
        return [
          { data: Float32Array.from([count]), shape: [1] },
          { data: Float32Array.from(v), shape: X_SHAPE },
          { data: Float32Array.from(v.map((a, i) => fround(a - old[i]))), shape: X_SHAPE },
        ];
      });
    },
  },
  resource_read_only: {
    what: 'a variable CALL_ONCE initializes and nothing assigns: y = x + v every step (no state: Kiln folds it to a constant)',
    model: () => buildTfliteModel({
      description: 'read-only resource variable',
      subgraphs: [
        {
          name: 'main',
          tensors: [f32('x', X_SHAPE), res('v_handle'), f32('v', X_SHAPE), f32('y', X_SHAPE)],
          operators: [
            { op: 'CALL_ONCE', inputs: [], outputs: [], options: { init_subgraph_index: 1 } },
            { op: 'VAR_HANDLE', inputs: [], outputs: [1], options: { shared_name: 'v' } },
            { op: 'READ_VARIABLE', inputs: [1], outputs: [2] },
            { op: 'ADD', inputs: [0, 2], outputs: [3], options: {} },
          ],
          inputs: [0], outputs: [3],
        },
        initGraph([['v', constF32('v0', X_SHAPE, [10, 20, 30, 40])]]),
      ],
    }),
    inputs: () => stepInputs(51),
    expect: (steps) => steps.map(([x]) => [{ data: Float32Array.from(x.data, (a, i) => fround(a + [10, 20, 30, 40][i])), shape: X_SHAPE }]),
  },
};

/// An IF branch that updates variable 'v' by `op` (ADD or SUB) with x and
/// gives the new value.
function branchGraph(name, op) {
  return {
    name,
    tensors: [f32('x', X_SHAPE), res('v_handle'), f32('v', X_SHAPE), f32('v_next', X_SHAPE)],
    operators: [
      { op: 'VAR_HANDLE', inputs: [], outputs: [1], options: { shared_name: 'v' } },
      { op: 'READ_VARIABLE', inputs: [1], outputs: [2] },
      { op, inputs: [2, 0], outputs: [3], options: {} },
      { op: 'ASSIGN_VARIABLE', inputs: [1, 3], outputs: [] },
    ],
    inputs: [0], outputs: [3],
  };
}

CASES.resource_if_branches = {
  what: 'IF on a bool input (true, false, true): the then branch does v += x, the else branch v -= x (v starts at 1, 1, 1, 1); y = the branch output',
  model: () => buildTfliteModel({
    description: 'resource variable assigned in IF branches chosen at run time',
    subgraphs: [
      {
        name: 'main',
        tensors: [f32('x', X_SHAPE), { name: 'cond', shape: [], dtype: 'bool' }, f32('y', X_SHAPE)],
        operators: [
          { op: 'CALL_ONCE', inputs: [], outputs: [], options: { init_subgraph_index: 1 } },
          { op: 'IF', inputs: [1, 0], outputs: [2], options: { then_subgraph_index: 2, else_subgraph_index: 3 } },
        ],
        inputs: [0, 1], outputs: [2],
      },
      initGraph([['v', constF32('v0', X_SHAPE, [1, 1, 1, 1])]]),
      branchGraph('then', 'ADD'),
      branchGraph('else', 'SUB'),
    ],
  }),
  inputs: () => [true, false, true].map((c, s) => [
    { data: ramp(N, 61 + s), shape: X_SHAPE },
    { data: Uint8Array.from([c ? 1 : 0]), shape: [], descr: '|b1' },
  ]),
  expect: (steps) => {
    let v = [1, 1, 1, 1];
    return steps.map(([x, c]) => {
      v = v.map((a, i) => fround(c.data[0] ? a + x.data[i] : a - x.data[i]));
      return [{ data: Float32Array.from(v), shape: X_SHAPE }];
    });
  },
};

const REFUSED = {
  refused_computed_initial_value: {
    what: 'CALL_ONCE assigns the variable ADD(c, c), a computed value; Kiln takes constant initial values',
    model: () => buildTfliteModel({
      description: 'computed initial value',
      subgraphs: [
        {
          name: 'main',
          tensors: [f32('x', X_SHAPE), res('v_handle'), f32('v', X_SHAPE), f32('y', X_SHAPE)],
          operators: [
            { op: 'CALL_ONCE', inputs: [], outputs: [], options: { init_subgraph_index: 1 } },
            { op: 'VAR_HANDLE', inputs: [], outputs: [1], options: { shared_name: 'v' } },
            { op: 'READ_VARIABLE', inputs: [1], outputs: [2] },
            { op: 'ADD', inputs: [0, 2], outputs: [3], options: {} },
            { op: 'ASSIGN_VARIABLE', inputs: [1, 3], outputs: [] },
          ],
          inputs: [0], outputs: [3],
        },
        {
          name: 'init',
          tensors: [res('v_handle'), constF32('c', X_SHAPE, [1, 2, 3, 4]), f32('twice', X_SHAPE)],
          operators: [
            { op: 'VAR_HANDLE', inputs: [], outputs: [0], options: { shared_name: 'v' } },
            { op: 'ADD', inputs: [1, 1], outputs: [2], options: {} },
            { op: 'ASSIGN_VARIABLE', inputs: [0, 2], outputs: [] },
          ],
          inputs: [], outputs: [],
        },
      ],
    }),
  },
  refused_type_mismatch: {
    what: 'the variable is initialized as 1x4 float32 and read as 1x2',
    model: () => buildTfliteModel({
      description: 'variable read as another shape',
      subgraphs: [
        {
          name: 'main',
          tensors: [f32('x', [1, 2]), res('v_handle'), f32('v', [1, 2]), f32('y', [1, 2])],
          operators: [
            { op: 'CALL_ONCE', inputs: [], outputs: [], options: { init_subgraph_index: 1 } },
            { op: 'VAR_HANDLE', inputs: [], outputs: [1], options: { shared_name: 'v' } },
            { op: 'READ_VARIABLE', inputs: [1], outputs: [2] },
            { op: 'ADD', inputs: [0, 2], outputs: [3], options: {} },
          ],
          inputs: [0], outputs: [3],
        },
        initGraph([['v', constF32('v0', X_SHAPE, [1, 2, 3, 4])]]),
      ],
    }),
  },
};

function close(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = Number(a[i]), y = Number(b[i]);
    if (!(Math.abs(x - y) <= 1e-6 * (1 + Math.abs(y)))) return false;
  }
  return true;
}

/// The folder of step `s` (step 0 at the top, so single-invocation tools
/// read it as an ordinary case).
const stepDir = (dir, s) => (s === 0 ? dir : path.join(dir, `step_${s}`));

async function main() {
  const check = process.argv.includes('--check');
  let failures = 0;
  const problem = (m) => { console.error(`make_state_cases: ${m}`); failures++; };
  let native = null;
  if (!check) {
    const { buildNative, runNative } = await import('./tflite_native_reference.mjs');
    native = { exe: buildNative(), runNative };
  }
  for (const [name, c] of Object.entries(CASES)) {
    const dir = path.join(OUT, name);
    const model = c.model();
    const steps = c.inputs();
    const expected = c.expect(steps);
    const files = { 'model.tflite': Buffer.from(model) };
    steps.forEach((inputs, s) => inputs.forEach((t, k) => {
      files[path.relative(dir, path.join(stepDir(dir, s), `input_${k}.npy`))] = encodeNpy(t.data, t.shape, t.descr);
    }));
    if (check) {
      for (const [f, bytes] of Object.entries(files))
        if (!fs.existsSync(path.join(dir, f)) || !Buffer.from(fs.readFileSync(path.join(dir, f))).equals(Buffer.from(bytes)))
          problem(`${name}/${f} is not what this script builds`);
      expected.forEach((outs, s) => outs.forEach((e, k) => {
        const stored = readNpy(path.join(stepDir(dir, s), `output_${k}.npy`));
        if (!close(stored.data, e.data)) problem(`${name} step ${s} output_${k}.npy differs from the independent computation`);
      }));
      continue;
    }
    for (let s = 0; s < STEPS; s++) fs.mkdirSync(stepDir(dir, s), { recursive: true });
    for (const [f, bytes] of Object.entries(files)) fs.writeFileSync(path.join(dir, f), bytes);
    const modelPath = path.join(dir, 'model.tflite');
    const outputCount = expected[0].length;
    const { outputs } = native.runNative({
      exe: native.exe, model: modelPath, inputs: steps.flat().map((t) => t.data), outputCount, steps: STEPS,
    });
    expected.forEach((outs, s) => outs.forEach((e, k) => {
      const o = outputs[s * outputCount + k];
      const got = new e.data.constructor(o.buffer, o.byteOffset, o.byteLength / e.data.BYTES_PER_ELEMENT);
      if (!close(got, e.data)) problem(`${name} step ${s}: TFLite's output ${k} [${Array.from(got)}] differs from the independent [${Array.from(e.data)}]`);
      fs.writeFileSync(path.join(stepDir(dir, s), `output_${k}.npy`), encodeNpy(got, e.shape));
    }));
    fs.writeFileSync(path.join(dir, 'meta.json'), `${JSON.stringify({
      case: name, what: c.what, steps: STEPS,
      reference: 'TFLite 2.9 native library, builtin kernels (no delegate), 3 invokes of one interpreter',
      independent: 'tests/reference/make_state_cases.mjs expect(), agrees within 1e-6 x (1 + |value|)',
    }, null, 2)}\n`);
  }
  for (const [name, c] of Object.entries(REFUSED)) {
    const file = path.join(OUT, 'refused', `${name}.tflite`);
    const model = c.model();
    if (check) {
      if (!fs.existsSync(file) || !Buffer.from(fs.readFileSync(file)).equals(Buffer.from(model))) problem(`refused/${name}.tflite is not what this script builds`);
      continue;
    }
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, model);
    let tflite;
    try {
      native.runNative({ exe: native.exe, model: file, inputs: [new Float32Array(name.includes('mismatch') ? 2 : 4)], outputCount: 1 });
      tflite = 'runs it';
    } catch (e) {
      tflite = `refuses it (${String(e.message).split('\n')[0].slice(0, 160)})`;
    }
    console.log(`refused/${name}.tflite: TFLite ${tflite}`);
  }
  if (failures) process.exit(1);
  console.log(check ? 'state cases: all match' : `wrote ${Object.keys(CASES).length} cases and ${Object.keys(REFUSED).length} refused models to ${OUT}`);
}

main().catch((e) => { console.error(e); process.exit(1); });
