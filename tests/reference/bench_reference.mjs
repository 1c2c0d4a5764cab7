#!/usr/bin/env node
// Single-thread latency baselines for Kiln's real models:
//   - ONNX Runtime 1.30 (onnxruntime-node, native MLAS kernels) on the .onnx twins,
//     intraOpNumThreads 1, interOpNumThreads 1, executionMode 'sequential',
//     default graph optimizations ('all');
//   - the TFLite interpreter (wasm SIMD build, XNNPACK delegate, numThreads 1)
//     on the .tflite models.
// Each model gets a random input (prng.mjs, seed 1), --warmup untimed runs, then
// --runs timed runs; prints median/min/max ms per inference as a markdown table.
// ORT times include the JS -> native call (`await session.run(feeds)`); TFLite
// times are `Infer()` on inputs already in the wasm heap. A model without an
// ONNX twin in the cache (fetch_models.mjs) gets no ORT row.
//
//   node bench_reference.mjs [--models a,b,...] [--tflite-files F,...] [--runs N] [--warmup N]
//       [--cache DIR] [--json FILE]
//
// --models: names of cached models (default: every .tflite of fetch_models.mjs,
// MODELS and BENCH_FILES; the benchmark files are fetched too).
// --tflite-files: .tflite paths timed on the TFLite wasm interpreter only
// (no ORT row, nothing fetched; with it, --models defaults to none). Inputs
// of any type prng.mjs fills (int8 models: scripts/bench_int8.py uses it).

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { BENCH_FILES, MODELS as TEST_MODELS, defaultCacheDir, fetchModels } from './fetch_models.mjs';
import { fillInput } from './prng.mjs';
import { createRunner, loadTflite, tflitePackageVersion } from './tflite_runtime.mjs';

const require = createRequire(import.meta.url);

const ALL_MODELS = [...TEST_MODELS, ...BENCH_FILES]
  .filter((f) => f.name.endsWith('.tflite'))
  .map((f) => f.name.replace(/\.tflite$/, ''));

function parseArgs(argv) {
  const o = { runs: 200, warmup: 20, cache: defaultCacheDir(), json: null, models: null, files: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--runs') o.runs = Number(argv[++i]);
    else if (a === '--warmup') o.warmup = Number(argv[++i]);
    else if (a === '--cache') o.cache = argv[++i];
    else if (a === '--json') o.json = argv[++i];
    else if (a === '--models') o.models = argv[++i].split(',').filter((m) => m);
    else if (a === '--tflite-files') o.files = argv[++i].split(',').filter((f) => f);
    else if (a === '-h' || a === '--help') o.help = true;
    else throw new Error(`unknown argument ${a}`);
  }
  if (!(o.runs >= 1) || !(o.warmup >= 0)) throw new Error('--runs must be >= 1 and --warmup >= 0');
  o.models ??= o.files.length ? [] : ALL_MODELS;
  const missing = o.files.filter((f) => !fs.existsSync(f));
  if (missing.length) throw new Error(`no such file ${missing.join(', ')}`);
  const unknown = o.models.filter((m) => !ALL_MODELS.includes(m));
  if (unknown.length) throw new Error(`unknown model ${unknown.join(', ')} (known: ${ALL_MODELS.join(', ')})`);
  return o;
}

function stats(times) {
  const s = [...times].sort((a, b) => a - b);
  const mid = s.length >> 1;
  const median = s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
  return { median, min: s[0], max: s[s.length - 1] };
}

const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

async function benchOrt(ort, file, runs, warmup) {
  const session = await ort.InferenceSession.create(file, {
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    logSeverityLevel: 3, // silence "Removing initializer ..." warnings
  });
  const feeds = {};
  const shapes = [];
  session.inputNames.forEach((name, k) => {
    const md = session.inputMetadata?.[k];
    if (md && md.type !== 'float32') throw new Error(`${file}: input ${name} is ${md.type}, only float32 supported`);
    // Dynamic dims (symbolic names or -1) are fixed to 1 (batch).
    const shape = (md?.shape ?? []).map((d) => (typeof d === 'number' && d >= 0 ? d : 1));
    const data = fillInput(new Float32Array(shape.reduce((a, b) => a * b, 1)), 1, k);
    feeds[name] = new ort.Tensor('float32', data, shape);
    shapes.push(shape);
  });
  for (let i = 0; i < warmup; i++) await session.run(feeds);
  const times = [];
  for (let i = 0; i < runs; i++) {
    const t0 = nowMs();
    await session.run(feeds);
    times.push(nowMs() - t0);
  }
  await session.release?.();
  return { shapes, ...stats(times) };
}

function benchTflite(tfl, file, runs, warmup) {
  const m = createRunner(tfl, fs.readFileSync(file), { numThreads: 1 });
  m.inputs.forEach((t) => fillInput(t.data(), 1, t.index, t.dtype));
  for (let i = 0; i < warmup; i++) m.infer();
  const times = [];
  for (let i = 0; i < runs; i++) {
    const t0 = nowMs();
    m.infer();
    times.push(nowMs() - t0);
  }
  return { shapes: m.inputs.map((t) => t.shape), ...stats(times) };
}

async function main() {
  let o;
  try {
    o = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`bench_reference: ${e.message}`);
    return 2;
  }
  if (o.help) {
    console.log('usage: node bench_reference.mjs [--models a,b,...] [--tflite-files F,...] [--runs N] [--warmup N] [--cache DIR] [--json FILE]');
    return 0;
  }
  const { files } = o.models.length
    ? fetchModels({ cacheDir: o.cache, bench: true, log: (s) => process.stderr.write(`${s}\n`) })
    : { files: {} };
  const ort = o.models.length ? require('onnxruntime-node') : null;
  const ortVersion = ort ? require('onnxruntime-node/package.json').version : null;
  const tfl = await loadTflite({ quiet: true });
  const wasmEngine = `TFLite wasm (tfjs-tflite ${tflitePackageVersion()}, XNNPACK)`;

  const rows = [];
  for (const m of o.models) {
    if (!files[`${m}.onnx`]) continue; // no ONNX twin
    const r = await benchOrt(ort, files[`${m}.onnx`], o.runs, o.warmup);
    rows.push({ engine: `ONNX Runtime ${ortVersion}`, model: `${m}.onnx`, ...r });
  }
  for (const m of o.models) {
    const r = benchTflite(tfl, files[`${m}.tflite`], o.runs, o.warmup);
    rows.push({ engine: wasmEngine, model: `${m}.tflite`, ...r });
  }
  for (const f of o.files) {
    rows.push({ engine: wasmEngine, model: path.basename(f), file: f, ...benchTflite(tfl, f, o.runs, o.warmup) });
  }

  const cpu = os.cpus()[0]?.model?.trim() ?? 'unknown CPU';
  const f = (x) => (x < 1 ? x.toFixed(3) : x.toFixed(2));
  console.log(`1 thread, ${o.runs} timed runs after ${o.warmup} warm-up runs, seed-1 random input (float: [-1, 1)); ` +
    `node ${process.version}, ${cpu}`);
  console.log('');
  console.log('| engine | model | input | median ms | min ms | max ms |');
  console.log('|---|---|---|---:|---:|---:|');
  for (const r of rows) {
    console.log(`| ${r.engine} | ${r.model} | ${r.shapes.map((s) => `[${s.join(',')}]`).join(' ')} | ${f(r.median)} | ${f(r.min)} | ${f(r.max)} |`);
  }
  if (o.json) {
    fs.writeFileSync(o.json, `${JSON.stringify({ runs: o.runs, warmup: o.warmup, node: process.version, cpu, rows }, null, 2)}\n`);
  }
  return 0;
}

process.exitCode = await main();
