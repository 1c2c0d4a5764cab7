// Load the TensorFlow Lite interpreter (TFLite 2.x + XNNPACK, compiled to wasm)
// shipped by @tensorflow/tfjs-tflite in plain Node, without its browser-only
// JS loader.
//
//   const tfl = await loadTflite();                 // wasm module (SIMD build)
//   const m = createRunner(tfl, fs.readFileSync('x.tflite'), { numThreads: 1 });
//   m.inputs[0].data().set(...); m.infer(); m.outputs[0].data();
//
// Notes / gotchas (see README.md):
// - The package's wasm/tflite_web_api_cc_simd.js is an Emscripten factory
//   (CommonJS `module.exports`), so it is loaded with createRequire and called
//   with { wasmBinary } to skip its fetch()/locateFile logic.
// - TFLiteWebModelRunner does not copy the model: the _malloc'd model buffer
//   must stay alive as long as the runner (we never free it).
// - GetInputs()/GetOutputs() return embind vectors (size()/get(i)), not arrays.
// - tensor.shape is a string "1,16,96" ("" for a scalar).
// - tensor.data() is a typed-array view on the wasm heap; take it again after
//   anything that may grow memory (e.g. Infer()), never cache it.
// - The runner always applies the XNNPACK delegate and logs "INFO: Created
//   TensorFlow Lite XNNPACK delegate for CPU." through printErr; we route the
//   module's print/printErr to stderr so stdout stays clean.

import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);

export const TFLITE_PACKAGE = '@tensorflow/tfjs-tflite';

export function tfliteWasmDir() {
  const pkgJson = require.resolve(`${TFLITE_PACKAGE}/package.json`);
  return path.join(path.dirname(pkgJson), 'wasm');
}

export function tflitePackageVersion() {
  return require(`${TFLITE_PACKAGE}/package.json`).version;
}

let cached = null;
let logSink = null;

// Route the interpreter's log lines (e.g. why a model was refused) to fn
// instead of stderr; null restores the default. Applies to loaded modules too.
export function setTfliteLogSink(fn) {
  logSink = fn;
}

// variant: 'cc_simd' (default, what the brief asks for) or 'cc' (no SIMD).
export async function loadTflite({ variant = 'cc_simd', quiet = false } = {}) {
  if (cached && cached.variant === variant) return cached.module;
  const dir = tfliteWasmDir();
  const base = path.join(dir, `tflite_web_api_${variant}`);
  const factory = require(`${base}.js`);
  const log = (s) => {
    if (logSink) logSink(s);
    else if (!quiet) process.stderr.write(`[tflite] ${s}\n`);
  };
  const module = await factory({
    wasmBinary: fs.readFileSync(`${base}.wasm`),
    print: log,
    printErr: log,
  });
  cached = { variant, module };
  return module;
}

// Drop the cached module so the next loadTflite() instantiates a fresh one
// (after a wasm trap, e.g. a kernel crashing on a malformed model).
export function resetTflite() {
  cached = null;
}

function parseShape(s) {
  const t = String(s).trim();
  if (t === '') return [];
  return t.split(',').map((x) => Number(x));
}

function wrapTensors(vec) {
  const out = [];
  for (let i = 0; i < vec.size(); i++) {
    const info = vec.get(i);
    out.push({
      index: i,
      id: info.id, // tensor index in the subgraph
      name: info.name,
      shape: parseShape(info.shape),
      dtype: info.dataType, // 'float32' | 'int32' | 'int8' | 'uint8' | 'int16' | 'uint32' | 'bool' | 'float64'
      data: () => info.data(),
    });
  }
  return out;
}

export function createRunner(module, modelBytes, { numThreads = 1, enableProfiling = false } = {}) {
  const bytes = modelBytes instanceof Uint8Array ? modelBytes : new Uint8Array(modelBytes);
  const ptr = module._malloc(bytes.length);
  module.HEAPU8.set(bytes, ptr);
  const status = module.TFLiteWebModelRunner.CreateFromBufferAndOptions(ptr, bytes.length, {
    numThreads,
    enableProfiling,
    maxProfilingBufferEntries: 1024,
  });
  if (!status.ok()) {
    throw new Error(`TFLiteWebModelRunner: ${status.errorMessage()}`);
  }
  const runner = status.value();
  const inputs = wrapTensors(runner.GetInputs());
  const outputs = wrapTensors(runner.GetOutputs());
  return {
    runner,
    inputs,
    outputs,
    infer() {
      if (!runner.Infer()) throw new Error('TFLite Infer() failed');
    },
    profilingSummary: () => runner.GetProfilingSummary(),
  };
}

// npy descr for a TFLite data type string.
export function npyDescr(dtype) {
  const map = {
    float32: '<f4', float64: '<f8', int32: '<i4', int16: '<i2', uint32: '<u4',
    int8: '|i1', uint8: '|u1', bool: '|b1',
  };
  const d = map[dtype];
  if (!d) throw new Error(`no npy dtype for TFLite type ${dtype}`);
  return d;
}
