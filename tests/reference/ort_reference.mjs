#!/usr/bin/env node
// Reference outputs from ONNX Runtime 1.30 (onnxruntime-node, 1 thread) for
// Kiln's ONNX real-model tests, and for shapes the TFLite interpreter cannot
// run (e.g. a dynamic batch fixed to 2).
//
//   node ort_reference.mjs --model FILE.onnx [--shape [NAME=]2x76x32x1]...
//                          [--value NAME=V[,V...]]... --seed N
//                          [--input uniform|text] --out DIR
//
// Writes DIR/input_K.npy for each float32 graph input K not given a
// --value (--input uniform, the default: seeded uniform [-1, 1) with seed
// seed + K, prng.mjs, same generator as tflite_reference.mjs; --input text:
// a seeded synthetic page of text, textImage below, for a single input),
// DIR/output_K.npy for each model output in session order (= the graph's
// output order) and DIR/meta.json (model sha256, engine, input generator,
// input/output names and shapes, fixed values). --shape fixes an input's
// shape (without NAME: the first input); without it the model's own shape
// is used, which must then be static. --value NAME=V feeds input NAME the
// value V (int64 or float32 as the input's type; a scalar for a rank-0
// input, else comma-separated values in C order): what `kiln compile
// --fix-value=NAME=V` burns into a build, so it writes no input_K.npy.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { writeNpy } from './npy.mjs';
import { fillInput, mulberry32 } from './prng.mjs';
import { prettyJson } from './tflite_reference.mjs';

const require = createRequire(import.meta.url);

function parseArgs(argv) {
  const o = { seed: 1, input: 'uniform', shapes: {}, values: {} };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--model') o.model = argv[++i];
    else if (a === '--shape') {
      const [name, dims] = splitNamed(argv[++i]);
      o.shapes[name] = dims.split('x').map(Number);
    } else if (a === '--value') {
      const [name, values] = splitNamed(argv[++i]);
      if (name === '') throw new Error('--value needs NAME=V');
      o.values[name] = values.split(',').map(Number);
    }
    else if (a === '--seed') o.seed = Number(argv[++i]);
    else if (a === '--out') o.out = argv[++i];
    else if (a === '--input') o.input = argv[++i];
    else throw new Error(`unknown argument ${a}`);
  }
  if (!o.model || !o.out) throw new Error('need --model and --out');
  if (!INPUTS[o.input]) throw new Error(`--input must be one of ${Object.keys(INPUTS).join(', ')}`);
  return o;
}

// A text detector's output is a sigmoid map that is 0 (below 2e-7) all over
// uniform noise, which would hide any error before the sigmoid. `text` is a
// page a detector responds to: an NCHW [N, 3, H, W] image of white
// background (1.0) with rows of dark "glyphs" (0.0), one text line per 16
// pixel rows (ink on rows 5..10 of each), glyph cells 5 pixels wide from
// x = 4 to W - 4, ink on the first 3 columns of a cell with probability 0.7
// (u < 0.7, one u per cell and line, the same for every channel); then each
// value gets noise 0.1 * (2u - 1) (one u per element, C order after the
// cells), is clamped to [0, 1] and normalized like PaddleOCR's
// NormalizeImage: (v - mean[c]) / std[c], mean [0.485, 0.456, 0.406],
// std [0.229, 0.224, 0.225]. u: mulberry32 seeded with --seed.
function textImage(data, shape, seed) {
  const [n, ch, h, w] = shape;
  if (shape.length !== 4 || ch !== 3) throw new Error('--input text needs an NCHW shape with 3 channels');
  const u = mulberry32(seed >>> 0);
  const cells = Math.max(0, Math.floor((w - 8) / 5));
  const lines = Math.floor(h / 16);
  const ink = Array.from({ length: lines * cells }, () => u() < 0.7);
  const mean = [0.485, 0.456, 0.406], std = [0.229, 0.224, 0.225];
  let i = 0;
  for (let b = 0; b < n; b++)
    for (let c = 0; c < 3; c++)
      for (let y = 0; y < h; y++)
        for (let x = 0; x < w; x++, i++) {
          const line = Math.floor(y / 16), cell = Math.floor((x - 4) / 5);
          const inked = line < lines && y % 16 >= 5 && y % 16 <= 10 && x >= 4 && cell < cells &&
            (x - 4) % 5 < 3 && ink[line * cells + cell];
          const v = Math.min(1, Math.max(0, (inked ? 0 : 1) + 0.1 * (2 * u() - 1)));
          data[i] = (v - mean[c]) / std[c];
        }
}

const INPUTS = {
  uniform: {
    fill: (data, shape, seed) => fillInput(data, seed, 0),
    source: (seed) => ({
      generator: 'mulberry32', seed, seed_of_input_k: 'seed + k', value: 'float32(-1 + 2*u), u in [0,1)',
    }),
  },
  text: {
    fill: textImage,
    source: (seed) => ({
      generator: 'mulberry32', seed,
      value: 'synthetic text page (ort_reference.mjs textImage): white background, 16-pixel text lines ' +
        'of 5-pixel glyph cells inked with p 0.7, noise 0.1*(2u-1), clamp [0,1], ' +
        '(v - [0.485,0.456,0.406][c]) / [0.229,0.224,0.225][c]',
    }),
  },
};

// "NAME=REST" -> [NAME, REST]; "REST" (no name) -> ['', REST].
function splitNamed(arg) {
  const eq = arg.indexOf('=');
  return eq < 0 ? ['', arg] : [arg.slice(0, eq), arg.slice(eq + 1)];
}

// Input k's shape: --shape NAME=, --shape without a name for input 0, else
// the model's declared shape if it is static.
function inputShape(session, o, k) {
  const meta = session.inputMetadata[k];
  const given = o.shapes[meta.name] ?? (k === 0 ? o.shapes[''] : undefined);
  if (given) return given;
  if (!meta.shape.every((d) => typeof d === 'number'))
    throw new Error(`input ${meta.name} has symbolic dims [${meta.shape}]: give --shape ${meta.name}=...`);
  return meta.shape;
}

const TYPED = { float32: Float32Array, int64: BigInt64Array, int32: Int32Array };

// The feed of a --value input: its values as the input's element type.
function fixedValue(ort, meta, shape, values) {
  const count = shape.reduce((a, b) => a * b, 1);
  if (values.length !== count)
    throw new Error(`--value ${meta.name}: ${values.length} values for shape [${shape}] (${count})`);
  const Typed = TYPED[meta.type];
  if (!Typed) throw new Error(`--value ${meta.name}: inputs of type ${meta.type} are not handled`);
  const data = Typed.from(values, (v) => (meta.type === 'int64' ? BigInt(v) : v));
  return new ort.Tensor(meta.type, data, shape);
}

// Runs the model once on the generated inputs; writes inputs, outputs, meta.json.
async function run(o) {
  const ort = require('onnxruntime-node');
  const session = await ort.InferenceSession.create(o.model, {
    intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential', logSeverityLevel: 3,
  });
  for (const name of Object.keys(o.values))
    if (!session.inputNames.includes(name)) throw new Error(`--value ${name}: no such input`);
  fs.mkdirSync(o.out, { recursive: true });
  const feeds = {}, inputs = [], fixed = [];
  session.inputNames.forEach((name, k) => {
    const meta = session.inputMetadata[k];
    if (o.values[name]) {
      const shape = o.shapes[name] ?? meta.shape.map((d) => (typeof d === 'number' ? d : 1));
      feeds[name] = fixedValue(ort, meta, shape, o.values[name]);
      fixed.push({ name, shape, dtype: meta.type, values: o.values[name] });
      return;
    }
    if (meta.type !== 'float32') throw new Error(`input ${name} is ${meta.type}: give --value ${name}=...`);
    const shape = inputShape(session, o, k);
    const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
    const index = inputs.length;
    if (o.input === 'uniform') fillInput(data, o.seed, index);
    else if (index === 0) INPUTS[o.input].fill(data, shape, o.seed);
    else throw new Error(`--input ${o.input} handles one input`);
    const file = `input_${index}.npy`;
    writeNpy(path.join(o.out, file), data, shape);
    feeds[name] = new ort.Tensor('float32', data, shape);
    inputs.push({ index, name, shape, dtype: 'float32', file, model_shape: meta.shape });
  });
  const results = await session.run(feeds);
  const outputs = session.outputNames.map((name, k) => {
    const t = results[name];
    if (t.type !== 'float32') throw new Error(`output ${name} is ${t.type}, not float32`);
    writeNpy(path.join(o.out, `output_${k}.npy`), t.data, t.dims.map(Number));
    return { index: k, name, shape: t.dims.map(Number), dtype: 'float32', file: `output_${k}.npy` };
  });
  const meta = {
    model: path.basename(o.model),
    model_sha256: crypto.createHash('sha256').update(fs.readFileSync(o.model)).digest('hex'),
    engine: {
      name: 'ONNX Runtime (CPU execution provider)',
      package: `onnxruntime-node@${require('onnxruntime-node/package.json').version}`,
      num_threads: 1,
    },
    inputs_source: INPUTS[o.input].source(o.seed),
    inputs,
    ...(fixed.length ? { fixed_values: fixed } : {}),
    outputs,
  };
  fs.writeFileSync(path.join(o.out, 'meta.json'), prettyJson(meta) + '\n');
  const shapes = inputs.map((i) => i.shape.join('x')).join(', ');
  return `wrote ${o.out}: input(s) ${shapes}, ${outputs.length} output(s)`;
}

try {
  console.log(await run(parseArgs(process.argv.slice(2))));
} catch (e) {
  console.error(`ort_reference: ERROR: ${e.message}`);
  process.exitCode = 1;
}
