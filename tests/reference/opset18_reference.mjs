#!/usr/bin/env node
// ONNX Runtime 1.30 (onnxruntime-node, 1 thread) outputs for the opset 18-21
// cases of tests/onnx/opset18_cases.py:
//
//   node opset18_reference.mjs DIR
//
// For every DIR/<case>/model.onnx with its input_K.npy (feeds in the
// session's input order), writes DIR/<case>/output_K.npy in the session's
// output order, and those outputs' names as DIR/<case>/output_names.json.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { readNpy, writeNpy } from './npy.mjs';

const require = createRequire(import.meta.url);
const ORT_TYPES = { '<f4': 'float32', '<i4': 'int32', '<i8': 'int64', '|i1': 'int8', '|u1': 'uint8' };

async function runCase(ort, dir) {
  const session = await ort.InferenceSession.create(path.join(dir, 'model.onnx'), {
    intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential', logSeverityLevel: 3,
  });
  const feeds = {};
  session.inputNames.forEach((name, k) => {
    const { dtype, shape, data } = readNpy(path.join(dir, `input_${k}.npy`));
    feeds[name] = new ort.Tensor(ORT_TYPES[dtype], data, shape);
  });
  const results = await session.run(feeds);
  session.outputNames.forEach((name, k) => {
    const t = results[name];
    writeNpy(path.join(dir, `output_${k}.npy`), t.data, t.dims);
  });
  fs.writeFileSync(path.join(dir, 'output_names.json'), JSON.stringify(session.outputNames));
}

const root = process.argv[2];
if (!root) throw new Error('usage: node opset18_reference.mjs DIR');
const ort = require('onnxruntime-node');
for (const name of fs.readdirSync(root).sort()) {
  const dir = path.join(root, name);
  if (!fs.existsSync(path.join(dir, 'model.onnx'))) continue;
  await runCase(ort, dir);
  console.log(`wrote ${name}`);
}
