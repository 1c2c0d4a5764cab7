#!/usr/bin/env node
// Cross-check of the stored reference data: re-evaluates every case folder
// with the independent double-precision implementation of op_eval.mjs (no
// TFLite involved), reading only what is on disk (model.tflite, input_K.npy),
// and compares with the stored output_K.npy (or expected_K.npy).
//
//   node tests/reference/check_op_cases.mjs [--dir CASE_DIR ...]
//
// Without --dir it checks every folder of tests/data/ops, tests/data/outputs
// and tests/data/zero; with --dir only the given folders (for example the
// bug-report cases of ../shared/cases, whose expected_K.npy it reads).
// Exit 0 when every output is within 1e-5*(1+|ref|) and has the stored
// shape. Cases whose meta.json says "reference": "independent" hold this very
// computation (the TFLite interpreter is wrong on them, see
// make_op_cases.mjs KNOWN_REFERENCE_BUGS), so they must match exactly.
// A case with quirk "fused_tanh_ignored" is evaluated as TFLite computes it.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readNpy } from './npy.mjs';
import { AGREEMENT_TOLERANCE, compareValues, evaluateModel } from './op_eval.mjs';
import { parseTflite } from './tflite_flatbuffer.mjs';

const DATA = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../data');
export const CASE_ROOTS = ['ops', 'outputs', 'zero'];

// Files DIR/<prefix>_0.npy, _1, ... up to the first missing one.
export function numbered(dir, prefix) {
  const files = [];
  for (let k = 0; fs.existsSync(path.join(dir, `${prefix}_${k}.npy`)); k++) files.push(path.join(dir, `${prefix}_${k}.npy`));
  return files;
}

// Evaluates the model of case folder `dir` on its stored inputs; returns
// { outputs: [{ shape, data }], meta } (meta.json parsed, or null).
export function evaluateCaseDir(dir) {
  const metaFile = path.join(dir, 'meta.json');
  const meta = fs.existsSync(metaFile) ? JSON.parse(fs.readFileSync(metaFile, 'utf8')) : null;
  const sg = parseTflite(fs.readFileSync(path.join(dir, 'model.tflite'))).subgraphs[0];
  const inputs = numbered(dir, 'input').map((f) => readNpy(f));
  const fusedTanhIgnored = !!meta?.case?.quirk?.startsWith('fused_tanh_ignored');
  return { outputs: evaluateModel(sg, inputs, { fusedTanhIgnored }), meta };
}

function checkDir(dir) {
  const { outputs, meta } = evaluateCaseDir(dir);
  let refs = numbered(dir, 'output');
  if (!refs.length) refs = numbered(dir, 'expected');
  if (refs.length !== outputs.length) return { worst: Infinity, note: `${refs.length} stored outputs, model has ${outputs.length}` };
  let worst = 0; let worstAbs = 0; const notes = [];
  refs.forEach((f, k) => {
    const ref = readNpy(f);
    if (ref.shape.join() !== outputs[k].shape.join()) { worst = Infinity; notes.push(`output ${k} shape [${ref.shape}] vs [${outputs[k].shape}]`); return; }
    const e = compareValues(ref.data, outputs[k].data);
    worst = Math.max(worst, e.scaled); worstAbs = Math.max(worstAbs, e.abs);
  });
  const independent = meta?.reference === 'independent';
  if (independent && worst !== 0) notes.push('stored reference is the independent computation but differs from it');
  return { worst: independent && worst !== 0 ? Infinity : worst, worstAbs, note: notes.join('; '), independent };
}

function main() {
  const args = process.argv.slice(2);
  const dirs = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--dir') dirs.push(path.resolve(args[++i]));
    else { console.error('usage: node check_op_cases.mjs [--dir CASE_DIR ...]'); return 2; }
  }
  if (!dirs.length) {
    for (const root of CASE_ROOTS) {
      const r = path.join(DATA, root);
      if (!fs.existsSync(r)) continue;
      for (const d of fs.readdirSync(r).sort()) if (fs.existsSync(path.join(r, d, 'model.tflite'))) dirs.push(path.join(r, d));
    }
  }
  let bad = 0; let worstAll = 0; let independent = 0;
  const rows = [];
  for (const dir of dirs) {
    const name = path.relative(DATA, dir).startsWith('..') ? dir : path.relative(DATA, dir);
    let r;
    try { r = checkDir(dir); } catch (e) { r = { worst: Infinity, note: e.message }; }
    if (r.independent) independent++;
    rows.push([name, r.worst]);
    worstAll = Math.max(worstAll, r.worst);
    if (!(r.worst <= AGREEMENT_TOLERANCE)) {
      bad++;
      console.log(`MISMATCH ${name}: worst scaled err ${r.worst.toExponential(2)}${r.worstAbs !== undefined ? ` (abs ${r.worstAbs.toExponential(2)})` : ''}${r.note ? ` ${r.note}` : ''}`);
    } else if (args.length) {
      console.log(`ok ${name}: worst scaled err ${r.worst.toExponential(2)} (abs ${r.worstAbs.toExponential(2)})`);
    }
  }
  rows.sort((a, b) => b[1] - a[1]);
  console.log('largest differences:\n ', rows.slice(0, 5).map(([n, e]) => `${n} ${e.toExponential(2)}`).join('\n  '));
  console.log(`${rows.length} cases checked (${independent} with an independent reference), ${bad} above ${AGREEMENT_TOLERANCE.toExponential()}, worst ${worstAll.toExponential(2)}`);
  return bad ? 1 : 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main();
}
