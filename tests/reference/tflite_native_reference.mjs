// TensorFlow Lite 2.9's native C library as a second reference beside the
// wasm interpreter: compiles tflite_native.c with the system C compiler and
// runs it once per sample, with raw input bytes in and raw output bytes out.
//
//   import { buildNative, runNative } from './tflite_native_reference.mjs';
//   const exe = buildNative();                      // gcc, cached per source hash
//   const outs = runNative({ exe, lib, model, inputs: [Int8Array, ...] });
//
// CLI: node tflite_native_reference.mjs --model F.tflite --dir DIR [--lib F.so]
//      [--xnnpack FLAGS] [--out DIR2]
// runs the model on DIR/input_K.npy (stacked samples when DIR/meta.json says
// "stacked_samples": N) and compares the outputs with DIR/output_K.npy,
// printing per output the count of differing elements and the max |diff|
// (in LSB for integer outputs); --out also writes them as DIR2/output_K.npy.
// Exit 0 when every element is equal, 1 otherwise.
//
// The library is npm tfjs-tflite-node@0.0.2's cc_deps/linux_amd64/
// libtensorflowlite_c.so (`node fetch_models.mjs --bench` caches it as
// $KILN_MODEL_CACHE/libtensorflowlite_c.so, default ~/.cache/kiln/models).
// Without --xnnpack no delegate is added (this build's TfLiteInterpreterCreate
// applies none: no "Created TensorFlow Lite XNNPACK delegate" line), so
// TFLite's builtin kernels run every operator. --xnnpack FLAGS adds an
// explicit delegate with those flags (3 = QS8 | QU8) for comparison.

import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readNpy, writeNpy } from './npy.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));

export function defaultNativeLib() {
  const cache = process.env.KILN_MODEL_CACHE || path.join(os.homedir(), '.cache', 'kiln', 'models');
  return path.join(cache, 'libtensorflowlite_c.so');
}

// Compiles tflite_native.c (once per source content) and returns the
// executable's path. `cc` defaults to $CC or cc.
export function buildNative({ cc = process.env.CC || 'cc', dir } = {}) {
  const src = path.join(here, 'tflite_native.c');
  const hash = crypto.createHash('sha256').update(fs.readFileSync(src)).digest('hex').slice(0, 16);
  const outDir = dir ?? path.join(os.tmpdir(), `kiln-tflite-native-${process.getuid?.() ?? 0}`);
  const exe = path.join(outDir, `tflite_native-${hash}`);
  if (!fs.existsSync(exe)) {
    fs.mkdirSync(outDir, { recursive: true });
    execFileSync(cc, ['-O1', '-std=c11', '-Wall', '-Wextra', '-o', `${exe}.tmp`, src, '-ldl'], { stdio: 'inherit' });
    fs.renameSync(`${exe}.tmp`, exe);
  }
  return exe;
}

// Runs `model` once on `inputs` (typed arrays, interpreter input order) and
// returns { outputs: [Buffer], info } (info: the program's JSON: version,
// I/O names, TFLite type codes, dims). Throws with the library's messages
// when it refuses the model.
// `steps` > 1: `inputs` holds steps groups of the model's inputs, run as
// consecutive invokes of one interpreter (state carried), and `outputs`
// comes back as steps groups of outputCount.
export function runNative({ exe, lib = defaultNativeLib(), model, inputs, outputCount, xnnpackFlags = null, steps = 1 }) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kiln-native-run-'));
  try {
    const inFiles = inputs.map((a, k) => {
      const f = path.join(tmp, `in_${k}.bin`);
      fs.writeFileSync(f, new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
      return f;
    });
    const outFiles = Array.from({ length: outputCount * steps }, (_, k) => path.join(tmp, `out_${k}.bin`));
    const args = [lib, model, ...(xnnpackFlags === null ? [] : [`--xnnpack=${xnnpackFlags}`]),
      ...(steps > 1 ? [`--steps=${steps}`] : []), ...inFiles, '--', ...outFiles];
    let stdout;
    try {
      stdout = execFileSync(exe, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (e) {
      throw new Error(`TFLite native library on ${path.basename(model)}: ${String(e.stderr || e.message).trim()}`);
    }
    return { outputs: outFiles.map((f) => fs.readFileSync(f)), info: JSON.parse(stdout) };
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

// Element-wise comparison of two typed arrays of one type: { differing,
// maxAbsDiff, elements } (|a - b| as a number: LSB for integer types).
export function compareArrays(a, b) {
  if (a.length !== b.length) throw new Error(`length ${a.length} vs ${b.length}`);
  let differing = 0;
  let maxAbsDiff = 0;
  for (let i = 0; i < a.length; i++) {
    if (Object.is(a[i], b[i]) || a[i] === b[i]) continue;
    differing++;
    maxAbsDiff = Math.max(maxAbsDiff, Math.abs(Number(a[i]) - Number(b[i])));
  }
  return { elements: a.length, differing, maxAbsDiff };
}

// Runs the native library on the stored inputs of a reference folder
// (written by tflite_reference.mjs) and returns its outputs as typed arrays
// of the stored outputs' types and stacked shapes.
export function nativeOutputsFor({ exe, lib, model, dir, xnnpackFlags = null }) {
  const meta = JSON.parse(fs.readFileSync(path.join(dir, 'meta.json'), 'utf8'));
  const runs = meta.stacked_samples ?? 1;
  const inputs = meta.inputs.map((t) => readNpy(path.join(dir, t.file)));
  const wanted = meta.outputs.map((t) => readNpy(path.join(dir, t.file)));
  const got = wanted.map((w) => ({ ...w, data: new w.data.constructor(w.data.length) }));
  for (let s = 0; s < runs; s++) {
    const sample = inputs.map((a) => {
      const n = a.data.length / runs;
      return a.data.subarray(s * n, (s + 1) * n);
    });
    const { outputs } = runNative({ exe, lib, model, inputs: sample, outputCount: wanted.length, xnnpackFlags });
    outputs.forEach((bytes, k) => {
      const n = got[k].data.length / runs;
      const ctor = got[k].data.constructor;
      const copy = Uint8Array.from(bytes);
      got[k].data.set(new ctor(copy.buffer, 0, n), s * n);
    });
  }
  return { meta, wanted, got };
}

function parseArgs(argv) {
  const o = { lib: defaultNativeLib(), xnnpack: null };
  for (let i = 0; i < argv.length; i++) {
    const v = () => argv[++i];
    switch (argv[i]) {
      case '--model': o.model = v(); break;
      case '--dir': o.dir = v(); break;
      case '--lib': o.lib = v(); break;
      case '--out': o.out = v(); break;
      case '--xnnpack': o.xnnpack = Number(v()); break;
      default: throw new Error(`unknown argument ${argv[i]}`);
    }
  }
  if (!o.model || !o.dir) throw new Error('--model and --dir are required');
  return o;
}

function main() {
  const o = parseArgs(process.argv.slice(2));
  const exe = buildNative();
  const { meta, wanted, got } = nativeOutputsFor({ exe, lib: o.lib, model: o.model, dir: o.dir, xnnpackFlags: o.xnnpack });
  let same = true;
  got.forEach((g, k) => {
    const c = compareArrays(g.data, wanted[k].data);
    same &&= c.differing === 0;
    console.log(`output ${k} (${meta.outputs[k].name}): ${c.differing} of ${c.elements} elements differ, max |diff| ${c.maxAbsDiff}`);
    if (o.out) {
      fs.mkdirSync(o.out, { recursive: true });
      writeNpy(path.join(o.out, meta.outputs[k].file), g.data, g.shape, g.dtype);
    }
  });
  return same ? 0 : 1;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    process.exitCode = main();
  } catch (e) {
    console.error(`tflite_native_reference: ${e.message}`);
    process.exitCode = 2;
  }
}
