#!/usr/bin/env node
// Reference outputs from ONNX Runtime 1.30 (onnxruntime-node, 1 thread) for
// Kiln's ONNX real-model tests, and for shapes the TFLite interpreter cannot
// run (e.g. a dynamic batch fixed to 2).
//
//   node ort_reference.mjs --model FILE.onnx [--shape 2x76x32x1] --seed N
//                          [--input uniform|text] --out DIR
//
// Writes DIR/input_0.npy (--input uniform, the default: seeded uniform
// [-1, 1), prng.mjs, same generator as tflite_reference.mjs; --input text:
// a seeded synthetic page of text, textImage below), DIR/output_K.npy for each model output in
// session order (= the graph's output order) and DIR/meta.json (model
// sha256, engine, input generator, input/output names and shapes). One
// float32 input only. --shape fixes the input's shape; without it the
// model's own shape is used, which must then be static.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { writeNpy } from './npy.mjs';
import { fillInput, mulberry32 } from './prng.mjs';
import { prettyJson } from './tflite_reference.mjs';

const require = createRequire(import.meta.url);

function parseArgs(argv) {
  const o = { seed: 1, input: 'uniform' };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--model') o.model = argv[++i];
    else if (a === '--shape') o.shape = argv[++i].split('x').map(Number);
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

// The input shape: --shape, else the model's declared shape if it is static.
function inputShape(session, given) {
  const meta = session.inputMetadata[0];
  if (session.inputNames.length !== 1 || meta.type !== 'float32')
    throw new Error('ort_reference handles models with one float32 input only');
  if (given) return given;
  if (!meta.shape.every((d) => typeof d === 'number'))
    throw new Error(`input ${meta.name} has symbolic dims [${meta.shape}]: give --shape`);
  return meta.shape;
}

// Runs the model once on the generated input; writes input, outputs, meta.json.
async function run(o) {
  const ort = require('onnxruntime-node');
  const session = await ort.InferenceSession.create(o.model, {
    intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential', logSeverityLevel: 3,
  });
  const shape = inputShape(session, o.shape);
  const count = shape.reduce((a, b) => a * b, 1);
  const data = new Float32Array(count);
  INPUTS[o.input].fill(data, shape, o.seed);
  fs.mkdirSync(o.out, { recursive: true });
  writeNpy(path.join(o.out, 'input_0.npy'), data, shape);
  const feeds = { [session.inputNames[0]]: new ort.Tensor('float32', data, shape) };
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
    inputs: [{
      index: 0, name: session.inputNames[0], shape, dtype: 'float32', file: 'input_0.npy',
      model_shape: session.inputMetadata[0].shape,
    }],
    outputs,
  };
  fs.writeFileSync(path.join(o.out, 'meta.json'), prettyJson(meta) + '\n');
  return `wrote ${o.out}: input ${shape.join('x')}, ${outputs.length} output(s)`;
}

try {
  console.log(await run(parseArgs(process.argv.slice(2))));
} catch (e) {
  console.error(`ort_reference: ERROR: ${e.message}`);
  process.exitCode = 1;
}
