#!/usr/bin/env node
// ONNX Runtime's per-node times for one model (onnxruntime-node 1.30, 1 thread).
//
//   node ort_profile.mjs --model F.onnx [--runs N] [--warmup N] [--shape 1x76x32x1]
//                        [--top K] [--json FILE]
//
// The session runs with ORT's profiler on (`enableProfiling: true`; the same
// options as bench_reference.mjs: intraOpNumThreads 1, interOpNumThreads 1,
// sequential, default graph optimizations), on the seed-1 input of prng.mjs
// (`--shape` fixes a dynamic input; otherwise symbolic dims are 1). After
// --warmup runs and --runs runs, the profile (a Chrome trace-event JSON file
// that ORT writes into a temporary folder) is read: every "model_run" event
// (cat "Session") is one run, and every "<node>_kernel_time" event (cat
// "Node") inside one of the last --runs runs is one execution of that node.
// Prints a markdown table, slowest node first: node name, op type (after
// ORT's fusions, e.g. FusedConv), median and mean us, share of the sum of
// medians; --json FILE writes { model, runs, warmup, run_median_us, nodes:
// [{ name, op, median_us, mean_us, count }] } with every node.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { fillInput } from './prng.mjs';

const require = createRequire(import.meta.url);

function parseArgs(argv) {
  const o = { runs: 100, warmup: 20, top: 10, shape: null, json: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--model') o.model = argv[++i];
    else if (a === '--runs') o.runs = Number(argv[++i]);
    else if (a === '--warmup') o.warmup = Number(argv[++i]);
    else if (a === '--shape') o.shape = argv[++i].split('x').map(Number);
    else if (a === '--top') o.top = Number(argv[++i]);
    else if (a === '--json') o.json = argv[++i];
    else if (a === '-h' || a === '--help') o.help = true;
    else throw new Error(`unknown argument ${a}`);
  }
  if (o.help) return o;
  if (!o.model) throw new Error('--model is required');
  if (!(o.runs >= 1) || !(o.warmup >= 0)) throw new Error('--runs must be >= 1 and --warmup >= 0');
  return o;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

// Per-node statistics from the events of ORT's profile, over the runs after
// the first `warmup` ones.
export function nodeStats(events, warmup) {
  const runs = events.filter((e) => e.cat === 'Session' && e.name === 'model_run')
    .sort((a, b) => a.ts - b.ts);
  const timed = runs.slice(warmup);
  if (timed.length === 0) throw new Error(`the profile holds ${runs.length} runs, none after ${warmup} warm-up runs`);
  const inTimedRun = (e) => timed.some((r) => e.ts >= r.ts && e.ts <= r.ts + r.dur);
  const nodes = new Map();
  for (const e of events) {
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time') || !inTimedRun(e)) continue;
    const name = e.name.slice(0, -'_kernel_time'.length);
    if (!nodes.has(name)) nodes.set(name, { name, op: e.args?.op_name ?? '?', durs: [] });
    nodes.get(name).durs.push(e.dur);
  }
  const rows = [...nodes.values()].map((n) => ({
    name: n.name,
    op: n.op,
    median_us: median(n.durs),
    mean_us: n.durs.reduce((a, b) => a + b, 0) / n.durs.length,
    count: n.durs.length,
  }));
  rows.sort((a, b) => b.median_us - a.median_us);
  return { runMedianUs: median(timed.map((r) => r.dur)), timedRuns: timed.length, nodes: rows };
}

export async function profileModel({ model, runs = 100, warmup = 20, shape = null }) {
  const ort = require('onnxruntime-node');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kiln-ort-profile-'));
  try {
    const session = await ort.InferenceSession.create(model, {
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      logSeverityLevel: 3,
      enableProfiling: true,
      profileFilePrefix: path.join(dir, 'ort'),
    });
    const feeds = {};
    session.inputNames.forEach((name, k) => {
      const md = session.inputMetadata?.[k];
      if (md && md.type !== 'float32') throw new Error(`${model}: input ${name} is ${md.type}, only float32 supported`);
      const dims = shape && k === 0 ? shape : (md?.shape ?? []).map((d) => (typeof d === 'number' && d >= 0 ? d : 1));
      const data = fillInput(new Float32Array(dims.reduce((a, b) => a * b, 1)), 1, k);
      feeds[name] = new ort.Tensor('float32', data, dims);
    });
    for (let i = 0; i < warmup + runs; i++) await session.run(feeds);
    session.endProfiling();
    await session.release?.();
    const file = fs.readdirSync(dir).find((f) => f.endsWith('.json'));
    if (!file) throw new Error(`ONNX Runtime wrote no profile into ${dir}`);
    return nodeStats(JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')), warmup);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function main() {
  let o;
  try {
    o = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`ort_profile: ${e.message}`);
    return 2;
  }
  if (o.help) {
    console.log('usage: node ort_profile.mjs --model F.onnx [--runs N] [--warmup N] [--shape DIMS] [--top K] [--json FILE]');
    return 0;
  }
  const r = await profileModel(o);
  const total = r.nodes.reduce((a, n) => a + n.median_us, 0);
  console.log(`${path.basename(o.model)}: ONNX Runtime, 1 thread, ${r.timedRuns} profiled runs after ${o.warmup} warm-up runs; ` +
    `run median ${r.runMedianUs} us, sum of node medians ${total.toFixed(1)} us, ${r.nodes.length} nodes\n`);
  console.log('| node | op | median us | mean us | share |');
  console.log('|---|---|---:|---:|---:|');
  for (const n of r.nodes.slice(0, o.top)) {
    console.log(`| ${n.name} | ${n.op} | ${n.median_us.toFixed(1)} | ${n.mean_us.toFixed(1)} | ${(100 * n.median_us / total).toFixed(1)}% |`);
  }
  if (o.json) {
    fs.writeFileSync(o.json, `${JSON.stringify({ model: o.model, runs: o.runs, warmup: o.warmup,
      run_median_us: r.runMedianUs, nodes: r.nodes }, null, 1)}\n`);
  }
  return 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main();
}
