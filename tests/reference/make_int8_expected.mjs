// Writes the references of the three int8 real models of
// tests/data/models/int8/ (TensorFlow Lite Micro's hello_world_int8,
// micro_speech_quantized and person_detect; README.md there):
//
//   node make_int8_expected.mjs [--lib libtensorflowlite_c.so] [--check]
//
// Each folder tests/data/models/int8/<case>/ gets input_0.npy, output_0.npy
// and meta.json (tflite_reference.mjs's layout; "stacked_samples": N when
// the files hold N runs stacked on a new leading axis):
//
//   hello_world_int8         64 runs, seed 1, int8 x over -128..127
//   hello_world_int8_sine    64 runs, x_i = 2*pi*i/63 quantized (below)
//   micro_speech_quantized   1 run, seed 1, int8 [1,1960]
//   person_detect            1 run, seed 1, int8 [1,96,96,1]
//   person_detect_images     2 runs: person.bmp, no_person.bmp (pixel - 128)
//
// Every case runs on the wasm interpreter (tflite_reference.mjs, its
// XNNPACK delegate) and on TensorFlow Lite 2.9's native C library
// (tflite_native_reference.mjs: builtin integer kernels), and the two are
// compared element by element; meta.json records the counts. The stored
// output is the native library's (the builtin kernels: the ground
// truth); meta.json "reference" says so and, where the wasm
// interpreter differs, "wasm_discrepancy" gives the counts. --check only
// compares and prints, writing nothing. Bit-for-bit reproducible.
//
// person_detect.tflite carries a quantized_dimension TFLite 2.9 refuses;
// the references come from the copy fix_quantized_dimension.mjs writes (in
// a temporary folder); Kiln compiles the original file.

import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fixQuantizedDimension } from './fix_quantized_dimension.mjs';
import { evaluateFcModel } from './int8_fc_eval.mjs';
import { readNpy, writeNpy } from './npy.mjs';
import { Table } from './tflite_flatbuffer.mjs';
import { prettyJson, runReference } from './tflite_reference.mjs';
import { buildNative, compareArrays, defaultNativeLib, nativeOutputsFor } from './tflite_native_reference.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const dataDir = path.resolve(here, '..', 'data', 'models', 'int8');
const sha256 = (b) => crypto.createHash('sha256').update(b).digest('hex');

// Scale and zero point of subgraph 0's input `k` (per-tensor quantization).
function inputQuantization(bytes, k) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const model = new Table(view, view.getUint32(0, true));
  const sg = model.tableVec(2)[0];
  const t = sg.tableVec(0)[sg.i32Vec(1)[k]];
  const q = t.table(4);
  const scale = view.getFloat32(q.indirect(2) + 4, true);
  const zeroPoint = Number(view.getBigInt64(q.indirect(3) + 4, true));
  return { scale, zeroPoint };
}

// hello_world's sine curve: x_i = 2*pi*i/(n-1), i = 0..n-1, quantized with
// the input tensor's parameters as TFLite's QUANTIZE kernel does:
// q = clamp(round(x / scale) + zero_point, -128, 127), round half away from
// zero, x / scale in double with scale the model's float32 value.
function sineInputs(bytes, n) {
  const { scale, zeroPoint } = inputQuantization(bytes, 0);
  const q = new Int8Array(n);
  for (let i = 0; i < n; i++) {
    const x = (2 * Math.PI * i) / (n - 1);
    const r = x / scale;
    const rounded = Math.sign(r) * Math.round(Math.abs(r));
    q[i] = Math.max(-128, Math.min(127, rounded + zeroPoint));
  }
  return {
    data: q,
    source: {
      kind: 'sine curve',
      x: `2*pi*i/${n - 1}, i = 0..${n - 1} (one run each)`,
      quantization: `clamp(round_half_away_from_zero(x / ${scale}) + ${zeroPoint}, -128, 127)`,
      input_scale: scale,
      input_zero_point: zeroPoint,
      note: `x above ${((127 - zeroPoint) + 0.5) * scale} saturates at 127`,
    },
  };
}

// An 8-bit palettized (grayscale) BMP as a top-left-first row-major array
// of gray values. Format: BITMAPFILEHEADER (pixel data offset at byte 10),
// BITMAPINFOHEADER (width 18, height 22: negative = top-down rows, bits
// per pixel 28, compression 30 = 0), a 256-entry BGRA palette at 14 +
// header size, rows padded to 4 bytes, bottom-up when height > 0.
function readGrayBmp(file) {
  const b = fs.readFileSync(file);
  if (b.toString('latin1', 0, 2) !== 'BM') throw new Error(`${file}: not a BMP file`);
  const dataOffset = b.readUInt32LE(10);
  const headerSize = b.readUInt32LE(14);
  const width = b.readInt32LE(18);
  const rawHeight = b.readInt32LE(22);
  const bits = b.readUInt16LE(28);
  if (bits !== 8 || b.readUInt32LE(30) !== 0) throw new Error(`${file}: want an uncompressed 8-bit BMP`);
  const height = Math.abs(rawHeight);
  const palette = 14 + headerSize;
  const stride = Math.ceil(width / 4) * 4;
  const gray = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    const row = rawHeight > 0 ? height - 1 - y : y;
    for (let x = 0; x < width; x++) {
      const p = palette + 4 * b[dataOffset + row * stride + x];
      if (b[p] !== b[p + 1] || b[p] !== b[p + 2]) throw new Error(`${file}: palette entry is not gray`);
      gray[y * width + x] = b[p];
    }
  }
  return { width, height, gray };
}

function imageInputs(names) {
  const parts = names.map((n) => {
    const img = readGrayBmp(path.join(dataDir, n));
    if (img.width !== 96 || img.height !== 96) throw new Error(`${n}: ${img.width}x${img.height}, want 96x96`);
    return Int8Array.from(img.gray, (g) => g - 128);
  });
  const data = new Int8Array(parts.reduce((a, p) => a + p.length, 0));
  parts.forEach((p, i) => data.set(p, i * p.length));
  return {
    data,
    source: {
      kind: 'images',
      files: names.map((n) => ({ file: n, sha256: sha256(fs.readFileSync(path.join(dataDir, n))) })),
      value: 'gray pixel - 128, rows top to bottom (BMP rows are stored bottom-up), one run per image',
    },
  };
}

function referenceModel(name, tmp) {
  const original = path.join(dataDir, `${name}.tflite`);
  const bytes = fs.readFileSync(original);
  const { bytes: fixedBytes, fixed } = fixQuantizedDimension(bytes);
  if (!fixed.length) return { file: original, bytes, rewrite: null };
  const file = path.join(tmp, `${name}.tflite`);
  fs.writeFileSync(file, fixedBytes);
  return {
    file,
    bytes,
    rewrite: {
      script: 'tests/reference/fix_quantized_dimension.mjs',
      why: 'TFLite 2.9 refuses quantized_dimension outside [0, rank); the references run on a copy with those fields set to 0',
      tensors: fixed.map((f) => `${f.tensor} ${f.name}: ${f.was} -> 0`),
      copy_sha256: sha256(fixedBytes),
    },
  };
}

const CASES = [
  { folder: 'hello_world_int8', model: 'hello_world_int8', samples: 64, seed: 1, fcOnly: true },
  { folder: 'hello_world_int8_sine', model: 'hello_world_int8', samples: 64, inputs: (b) => sineInputs(b, 64), fcOnly: true },
  { folder: 'micro_speech_quantized', model: 'micro_speech_quantized', seed: 1 },
  { folder: 'person_detect', model: 'person_detect', seed: 1 },
  { folder: 'person_detect_images', model: 'person_detect', samples: 2, inputs: () => imageInputs(['person.bmp', 'no_person.bmp']) },
];

// The requantization roundings int8_fc_eval.mjs knows, in the order the
// check reports them.
const ROUNDINGS = {
  double: "gemmlowp's SRDHM then rounding right shift, ties away from zero: TFLite's reference integer kernels, TFLite Micro",
  tosa_double_round: 'TOSA apply_scale with double_round = true',
  ties_up: 'SRDHM then rounding right shift, ties upward',
  single: 'one rounding, (a*q + 2^(30-s)) >> (31-s): ruy, TFLITE_SINGLE_ROUNDING',
  tosa_single_round: 'TOSA apply_scale with double_round = false',
};

// An all-FULLY_CONNECTED model evaluated independently (int8_fc_eval.mjs)
// with each rounding, compared with both engines; writes the reference
// kernels' result (double rounding) as reference_kernels_output_0.npy.
function fcCheck(bytes, out, meta, native, wasm) {
  const runs = meta.stacked_samples ?? 1;
  const input = readNpy(path.join(out, meta.inputs[0].file)).data;
  const n = input.length / runs;
  const check = { evaluator: 'tests/reference/int8_fc_eval.mjs', roundings: {} };
  for (const [rounding, what] of Object.entries(ROUNDINGS)) {
    const y = new Int8Array(native.data.length);
    const m = y.length / runs;
    for (let s = 0; s < runs; s++) y.set(evaluateFcModel(bytes, input.subarray(s * n, (s + 1) * n), { rounding }), s * m);
    check.roundings[rounding] = {
      what,
      differing_from_native: compareArrays(y, native.data).differing,
      differing_from_wasm: compareArrays(y, wasm.data).differing,
    };
    if (rounding === 'double') writeNpy(path.join(out, 'reference_kernels_output_0.npy'), y, native.shape, native.dtype);
  }
  return check;
}

// Runs one case on both engines; returns a summary line. With `write`
// false the folder is produced in a temporary place and discarded.
async function makeCase(c, { exe, lib, tmp, write }) {
  const ref = referenceModel(c.model, tmp);
  const out = write ? path.join(dataDir, c.folder) : path.join(tmp, c.folder);
  const given = c.inputs ? c.inputs(ref.bytes) : null;
  const meta = await runReference({
    model: ref.file, seed: c.seed ?? 1, out, quiet: true, samples: c.samples ?? 0,
    inputData: given ? [given.data] : undefined, inputsSource: given?.source,
  });
  const { wanted: wasm, got: native, meta: written } = nativeOutputsFor({ exe, lib, model: ref.file, dir: out });
  const diffs = native.map((n, k) => {
    const d = compareArrays(wasm[k].data, n.data);
    return { output: k, elements: d.elements, differing: d.differing, max_abs_diff_lsb: d.maxAbsDiff };
  });
  // Store the builtin kernels' outputs (native); where the wasm interpreter
  // differs, keep its outputs beside them as wasm_output_K.npy (no test
  // reads them).
  for (const f of fs.readdirSync(out)) if (/^wasm_output_\d+\.npy$/.test(f)) fs.rmSync(path.join(out, f));
  native.forEach((n, k) => {
    writeNpy(path.join(out, written.outputs[k].file), n.data, n.shape, n.dtype);
    if (diffs[k].differing) writeNpy(path.join(out, `wasm_${written.outputs[k].file}`), wasm[k].data, wasm[k].shape, wasm[k].dtype);
  });
  const fcChecked = c.fcOnly ? fcCheck(ref.bytes, out, written, native[0], wasm[0]) : null;
  const engines = {
    reference: 'tflite-native',
    engine: {
      name: 'TensorFlow Lite 2.9 C library (builtin kernels, no delegate)',
      package: 'tfjs-tflite-node@0.0.2 cc_deps/linux_amd64/libtensorflowlite_c.so',
      library_sha256: sha256(fs.readFileSync(lib)),
      tool: 'tests/reference/tflite_native.c via tflite_native_reference.mjs',
      num_threads: 1,
    },
    second_engine: meta.engine,
    engines_agree: diffs.every((d) => d.differing === 0),
    ...(diffs.some((d) => d.differing) ? { wasm_discrepancy: diffs } : {}),
    ...(fcChecked ? { independent_check: fcChecked } : {}),
  };
  const full = {
    ...meta,
    model: `${c.model}.tflite`,
    model_sha256: sha256(ref.bytes),
    ...(ref.rewrite ? { reference_model_rewrite: ref.rewrite } : {}),
    ...engines,
  };
  fs.writeFileSync(path.join(out, 'meta.json'), `${prettyJson(full)}\n`);
  const fcText = fcChecked
    ? `; independent FC evaluation differing from native/wasm: ${Object.entries(fcChecked.roundings)
      .map(([r, v]) => `${r} ${v.differing_from_native}/${v.differing_from_wasm}`).join(', ')}`
    : '';
  return `${c.folder}: ` + diffs.map((d) => `output ${d.output}: wasm vs native ${d.differing} of ${d.elements} differ (max ${d.max_abs_diff_lsb} LSB)`).join('; ') + fcText;
}

async function main(argv) {
  let lib = defaultNativeLib();
  let write = true;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--lib') lib = argv[++i];
    else if (argv[i] === '--check') write = false;
    else throw new Error(`unknown argument ${argv[i]}; usage: make_int8_expected.mjs [--lib F.so] [--check]`);
  }
  if (!fs.existsSync(lib)) throw new Error(`${lib} is missing: run \`node fetch_models.mjs --bench\``);
  const exe = buildNative();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kiln-int8-ref-'));
  try {
    for (const c of CASES) console.log(await makeCase(c, { exe, lib, tmp, write }));
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

try {
  await main(process.argv.slice(2));
} catch (e) {
  console.error(`make_int8_expected: ${e.message}`);
  process.exitCode = 1;
}
