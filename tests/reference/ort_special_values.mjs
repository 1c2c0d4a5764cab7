#!/usr/bin/env node
// ONNX Runtime 1.30 on the special-value rows of tests/onnx/special_values.py,
// side by side with NumPy's evaluation of the ONNX definitions (which Kiln's
// CTest OnnxSpecialValues checks it against).
//
//   /usr/bin/python3 tests/onnx/special_values.py --write DIR
//   node tests/reference/ort_special_values.mjs DIR
//
// Prints one line per row: "agrees" or the elements where ORT and NumPy
// differ (NaN matches NaN, an infinity the same infinity, zeros match
// whatever their sign, others within 1e-5 x (1 + |NumPy|)), then the count.
// Exit status 0: the table is informative, NumPy is the reference.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { readNpy } from './npy.mjs';
import { disagreements } from './make_special_cases.mjs';

const require = createRequire(import.meta.url);
const ort = require('onnxruntime-node');
const root = process.argv[2];
if (!root) throw new Error('usage: node ort_special_values.mjs DIR (written by special_values.py --write)');
let differing = 0;
const rows = fs.readdirSync(root).filter((n) => fs.existsSync(path.join(root, n, 'model.onnx'))).sort();
for (const name of rows) {
  const dir = path.join(root, name);
  const session = await ort.InferenceSession.create(path.join(dir, 'model.onnx'), {
    intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential', logSeverityLevel: 3,
  });
  const feeds = {};
  session.inputNames.forEach((input, k) => {
    const a = readNpy(path.join(dir, `input_${k}.npy`));
    feeds[input] = new ort.Tensor('float32', a.data, a.shape);
  });
  const got = (await session.run(feeds))[session.outputNames[0]].data;
  const want = readNpy(path.join(dir, 'expected.npy')).data;
  const bad = disagreements(got, want);
  if (bad.length) differing++;
  const show = (i) => `[${i}] ORT ${got[i]}, NumPy ${want[i]}`;
  console.log(`${name.padEnd(28)} ${bad.length ? bad.map(show).join('; ') : 'agrees'}`);
}
console.log(`${rows.length} rows, ORT differs from NumPy on ${differing}`);
