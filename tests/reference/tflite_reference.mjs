#!/usr/bin/env node
// Run a .tflite model through the real TFLite interpreter (wasm, XNNPACK,
// 1 thread) and dump inputs/outputs as .npy for Kiln's tests.
//
//   node tflite_reference.mjs --model FILE.tflite --seed N --out DIR
//                             [--inputs-from DIR] [--variant cc_simd|cc] [--quiet]
//
// Inputs: for every interpreter input K (interpreter order), fill it with the
// deterministic generator of prng.mjs (mulberry32 seeded with N + K, values
// float32(-1 + 2u) in [-1, 1)), or, with --inputs-from, with DIR/input_K.npy
// (dtype and shape must match). Inputs whose tensor is a constant in the model
// (has buffer data) are left untouched and only dumped.
//
// Writes DIR/input_K.npy, DIR/output_K.npy (NumPy 1.0, little-endian, C order,
// exact shape; float32 '<f4', int32 '<i4', ...) and DIR/meta.json describing
// every input/output (name, shape, dtype, tensor index) in interpreter order,
// plus the model's own subgraph input/output order and whether they agree.
// Models with zero inputs are fine (only outputs are written).

import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readNpy, writeNpy } from './npy.mjs';
import { fillInput } from './prng.mjs';
import { parseTflite } from './tflite_flatbuffer.mjs';
import { createRunner, loadTflite, npyDescr, tflitePackageVersion } from './tflite_runtime.mjs';

function usage() {
  return 'usage: node tflite_reference.mjs --model FILE.tflite --seed N --out DIR [--samples N] [--inputs-from DIR] [--variant cc_simd|cc] [--quiet]';
}

function parseArgs(argv) {
  const o = { seed: null, variant: 'cc_simd', quiet: false, samples: 0 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const [k, inline] = a.startsWith('--') && a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    const val = () => (inline !== undefined ? inline : argv[++i]);
    switch (k) {
      case '--model': o.model = val(); break;
      case '--seed': o.seed = val(); break;
      case '--out': o.out = val(); break;
      case '--inputs-from': o.inputsFrom = val(); break;
      case '--samples': o.samples = Number(val()); break;
      case '--variant': o.variant = val(); break;
      case '--quiet': case '-q': o.quiet = true; break;
      case '-h': case '--help': o.help = true; break;
      default: throw new Error(`unknown argument ${a}\n${usage()}`);
    }
  }
  return o;
}

// JSON with arrays of numbers kept on one line ("shape": [1, 16, 96]).
export function prettyJson(v) {
  return JSON.stringify(v, null, 2).replace(/\[\s*(-?\d[-\d.,\s]*?)\s*\]/g, (_, body) =>
    `[${body.split(',').map((x) => x.trim()).join(', ')}]`);
}

// How prng.mjs fillInput fills the model's input types (meta.json).
function generatedValue(inputs) {
  const text = {
    float32: 'float32(-1 + 2*u), u in [0,1)',
    int8: 'floor(256*u) - 128, u in [0,1)',
    uint8: 'floor(256*u), u in [0,1)',
  };
  const types = [...new Set(inputs.map((t) => t.dtype))];
  if (types.length === 0) return text.float32;
  if (types.length === 1 && text[types[0]]) return text[types[0]];
  return Object.fromEntries(types.map((d) => [d, text[d] ?? (d === 'bool' ? 'u >= 0.5' : 'floor(4*u)')]));
}

const sameShape = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

// Programmatic use (make_op_cases.mjs): besides the CLI options,
//   inputData:    array indexed by interpreter input K; an entry (typed array
//                 of the input's dtype and element count) replaces the
//                 generated values of that input,
//   inputsSource: replaces meta.json's "inputs_source" description,
//   extraMeta:    object merged into meta.json (e.g. a case description),
//   allowInferFailure: when Infer() fails (a model TFLite loads but cannot
//                 run), record the error as meta.tflite_error and write no
//                 output_K.npy instead of throwing (make_op_cases.mjs then
//                 stores an independent reference).
//   samples:      N > 0 runs the model N times and writes every input_K.npy /
//                 output_K.npy with N samples stacked on a new leading axis
//                 (shape [N, ...tensor shape]; meta.json "stacked_samples": N,
//                 the layout `kiln validate`'s stacked samples read). The
//                 generated values of input K fill the whole stacked tensor
//                 in C order (sample s is elements s*n .. s*n+n-1), and an
//                 inputData / --inputs-from entry must hold all N samples.
//                 0 (default): one run, tensor shapes as the model has them.
export async function runReference({
  model, seed = 1, out, inputsFrom, variant = 'cc_simd', quiet = false, inputData, inputsSource, extraMeta,
  allowInferFailure = false, samples = 0,
}) {
  if (!Number.isInteger(samples) || samples < 0) throw new Error(`samples must be a non-negative integer, not ${samples}`);
  const log = quiet ? () => {} : (s) => process.stderr.write(`${s}\n`);
  const bytes = fs.readFileSync(model);
  const fb = parseTflite(bytes);
  const sg = fb.subgraphs[0];

  const tfl = await loadTflite({ variant, quiet });
  const m = createRunner(tfl, bytes, { numThreads: 1 });

  // The interpreter's order is what the runner reports; compare with the model.
  const inIds = m.inputs.map((t) => t.id);
  const outIds = m.outputs.map((t) => t.id);
  const inputsMatch = sameShape(inIds, sg.inputs);
  const outputsMatch = sameShape(outIds, sg.outputs);
  if (!inputsMatch || !outputsMatch) {
    log(`WARNING: interpreter I/O order differs from the model's subgraph order: ` +
      `inputs ${JSON.stringify(inIds)} vs ${JSON.stringify(sg.inputs)}, ` +
      `outputs ${JSON.stringify(outIds)} vs ${JSON.stringify(sg.outputs)}`);
  }

  fs.mkdirSync(out, { recursive: true });
  // Remove stale files from an earlier run with a different model.
  for (const f of fs.readdirSync(out)) {
    if (/^(input|output)_\d+\.npy$/.test(f)) fs.rmSync(path.join(out, f));
  }

  const describe = (t, kind) => {
    const fbT = sg.tensors[t.id];
    return {
      index: t.index,
      name: t.name,
      shape: t.shape,
      dtype: t.dtype,
      npy_dtype: npyDescr(t.dtype),
      tensor_index: t.id,
      file: `${kind}_${t.index}.npy`,
      ...(fbT && fbT.shapeSignature ? { shape_signature: fbT.shapeSignature } : {}),
      ...(kind === 'input' && fbT && fbT.constant ? { constant: true } : {}),
    };
  };

  const runs = Math.max(samples, 1);
  const fileShape = (shape) => (samples ? [samples, ...shape] : shape);
  const inputsMeta = [];
  const stackedInputs = [];
  for (const t of m.inputs) {
    const meta = describe(t, 'input');
    const data = t.data();
    const n = data.length;
    if (meta.constant) {
      log(`input ${t.index} (${t.name}) is a constant tensor in the model: not overwritten`);
      stackedInputs.push(null);
    } else if (inputData && inputData[t.index]) {
      const src = inputData[t.index];
      if (src.length !== n * runs) throw new Error(`inputData[${t.index}]: ${src.length} values, model input has ${n} x ${runs} sample(s)`);
      stackedInputs.push(src);
    } else if (inputsFrom) {
      const file = path.join(inputsFrom, `input_${t.index}.npy`);
      const arr = readNpy(file);
      if (arr.dtype !== meta.npy_dtype) throw new Error(`${file}: dtype ${arr.dtype}, model input wants ${meta.npy_dtype}`);
      if (!sameShape(arr.shape, fileShape(t.shape))) throw new Error(`${file}: shape [${arr.shape}], expected [${fileShape(t.shape)}]`);
      stackedInputs.push(arr.data);
    } else {
      stackedInputs.push(fillInput(new data.constructor(n * runs), Number(seed), t.index, t.dtype));
    }
    inputsMeta.push(meta);
  }

  let inferError = null;
  const inputValues = m.inputs.map((t) => new (t.data().constructor)(t.data().length * runs));
  const outputValues = m.outputs.map((t) => new (t.data().constructor)(t.data().length * runs));
  for (let s = 0; s < runs && !inferError; s++) {
    m.inputs.forEach((t, k) => {
      const n = t.data().length;
      if (stackedInputs[k]) t.data().set(stackedInputs[k].subarray(s * n, (s + 1) * n));
      // Dump what the interpreter actually holds (re-read the view).
      inputValues[k].set(t.data(), s * n);
    });
    try {
      m.infer();
    } catch (e) {
      if (!allowInferFailure) throw e;
      inferError = String(e.message || e);
    }
    if (!inferError) m.outputs.forEach((t, k) => outputValues[k].set(t.data(), s * t.data().length));
  }
  m.inputs.forEach((t, k) => writeNpy(path.join(out, inputsMeta[k].file), inputValues[k], fileShape(t.shape), inputsMeta[k].npy_dtype));

  const outputsMeta = [];
  m.outputs.forEach((t, k) => {
    const meta = describe(t, 'output');
    if (!inferError) writeNpy(path.join(out, meta.file), outputValues[k], fileShape(t.shape), meta.npy_dtype);
    outputsMeta.push(meta);
  });

  const meta = {
    model: path.basename(model),
    model_sha256: crypto.createHash('sha256').update(bytes).digest('hex'),
    engine: {
      name: 'TensorFlow Lite interpreter (wasm, XNNPACK delegate)',
      package: `@tensorflow/tfjs-tflite@${tflitePackageVersion()}`,
      wasm: `tflite_web_api_${variant}.wasm`,
      num_threads: 1,
    },
    ...(extraMeta ?? {}),
    inputs_source: inputsSource ?? (inputsFrom
      ? 'inputs-from'
      : { generator: 'mulberry32', seed: Number(seed), seed_of_input_k: 'seed + k', value: generatedValue(m.inputs) }),
    ...(samples ? { stacked_samples: samples } : {}),
    inputs: inputsMeta,
    outputs: outputsMeta,
    model_subgraph: {
      inputs: sg.inputs,
      outputs: sg.outputs,
      interpreter_inputs_match: inputsMatch,
      interpreter_outputs_match: outputsMatch,
    },
    ...(inferError ? { tflite_error: inferError } : {}),
  };
  fs.writeFileSync(path.join(out, 'meta.json'), `${prettyJson(meta)}\n`);
  log(`${path.basename(model)}: ${inputsMeta.length} input(s) ${inputsMeta.map((t) => `[${t.shape}]`).join(' ')} -> ` +
    `${outputsMeta.length} output(s) ${outputsMeta.map((t) => `[${t.shape}]`).join(' ')} in ${out}`);
  return meta;
}

async function main() {
  let o;
  try {
    o = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`tflite_reference: ${e.message}`);
    return 2;
  }
  if (o.help) { console.log(usage()); return 0; }
  if (!o.model || !o.out || (o.seed === null && !o.inputsFrom)) {
    console.error(`tflite_reference: --model, --out and --seed (or --inputs-from) are required\n${usage()}`);
    return 2;
  }
  if (o.seed !== null && !/^\d+$/.test(String(o.seed))) {
    console.error('tflite_reference: --seed must be a non-negative integer');
    return 2;
  }
  try {
    if (!Number.isInteger(o.samples) || o.samples < 0) throw new Error('--samples must be a non-negative integer');
    await runReference({ ...o, seed: o.seed === null ? 0 : Number(o.seed) });
    return 0;
  } catch (e) {
    console.error(`tflite_reference: ERROR: ${e.message}`);
    return 1;
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main();
}
