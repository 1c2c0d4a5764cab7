#!/usr/bin/env node
// Reference outputs from ONNX Runtime 1.30 (onnxruntime-node, 1 thread) for
// shapes the TFLite interpreter cannot run, e.g. a dynamic batch fixed to 2.
//
//   node ort_reference.mjs --model FILE.onnx --shape 2x76x32x1 --seed N --out DIR
//
// Writes DIR/input_0.npy (seeded uniform [-1, 1), prng.mjs, same generator
// as tflite_reference.mjs) and DIR/output_K.npy for each model output in
// session order. One float32 input only.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { writeNpy } from './npy.mjs';
import { fillInput } from './prng.mjs';

const require = createRequire(import.meta.url);

function parseArgs(argv) {
  const o = { seed: 1 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--model') o.model = argv[++i];
    else if (a === '--shape') o.shape = argv[++i].split('x').map(Number);
    else if (a === '--seed') o.seed = Number(argv[++i]);
    else if (a === '--out') o.out = argv[++i];
    else throw new Error(`unknown argument ${a}`);
  }
  if (!o.model || !o.shape || !o.out) throw new Error('need --model, --shape and --out');
  return o;
}

const o = parseArgs(process.argv.slice(2));
const ort = require('onnxruntime-node');
const session = await ort.InferenceSession.create(o.model, {
  intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential',
});
const count = o.shape.reduce((a, b) => a * b, 1);
const data = new Float32Array(count);
fillInput(data, o.seed, 0);
fs.mkdirSync(o.out, { recursive: true });
writeNpy(path.join(o.out, 'input_0.npy'), data, o.shape);
const feeds = { [session.inputNames[0]]: new ort.Tensor('float32', data, o.shape) };
const results = await session.run(feeds);
session.outputNames.forEach((name, k) => {
  const t = results[name];
  writeNpy(path.join(o.out, `output_${k}.npy`), t.data, t.dims.map(Number));
});
console.log(`wrote ${o.out}: input ${o.shape.join('x')}, ${session.outputNames.length} output(s)`);
