// Writes a copy of a .tflite model in which every quantized_dimension that
// TensorFlow Lite 2.9 refuses is rewritten to 0, so that TFLite can produce
// reference outputs for it. Kiln itself must accept the original file: this
// copy exists only for the reference tools (make_int8_expected.sh).
//
//   node fix_quantized_dimension.mjs IN.tflite OUT.tflite
//
// TFLite 2.9's InterpreterBuilder (ParseQuantization) refuses a tensor whose
// QuantizationParameters.quantized_dimension (field 6, int32) lies outside
// [0, rank) ("quantized_dimension must be in range [0, 1). Was 3. / Tensor 33
// has invalid quantization parameters"). TensorFlow Lite Micro ignores the
// field where it is meaningless. person_detect.tflite carries
// quantized_dimension 3 on its 15 int32 bias tensors of rank 1 (the
// CONV_2D / DEPTHWISE_CONV_2D biases of the per-channel layers, one scale per
// output channel): for a rank-1 tensor the only channel axis is 0, so 0 is
// the value that means what the file means.
//
// The rewrite is byte-level and in place: the field is a 4-byte scalar stored
// inline in the QuantizationParameters table (located with the flatbuffer
// walker of tflite_flatbuffer.mjs), so overwriting it with 0 changes no
// offset and no other byte. A field that is absent (default 0) or valid is
// left alone. Only rank-1 tensors are rewritten; any other out-of-range
// value is an error (it would need a decision, not a rewrite). Prints one
// line per rewritten tensor and the output's sha256.

import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Table } from './tflite_flatbuffer.mjs';

const TENSOR_SHAPE = 0;
const TENSOR_NAME = 3;
const TENSOR_QUANTIZATION = 4;
const QUANT_SCALE = 2;
const QUANT_DIMENSION = 6;

// Returns a copy of `bytes` with the fix applied and the list of
// {subgraph, tensor, name, rank, scales, was} rewritten.
export function fixQuantizedDimension(bytes) {
  const out = Buffer.from(bytes);
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  if (out.toString('latin1', 4, 8) !== 'TFL3') throw new Error('not a TFLite flatbuffer');
  const model = new Table(view, view.getUint32(0, true));
  const fixed = [];
  model.tableVec(2).forEach((sg, s) => sg.tableVec(0).forEach((t, i) => {
    const q = t.table(TENSOR_QUANTIZATION);
    if (!q || !q.has(QUANT_DIMENSION)) return;
    const rank = t.vecLen(TENSOR_SHAPE);
    const dim = q.i32(QUANT_DIMENSION);
    if (dim >= 0 && (rank === 0 || dim < rank)) return;
    const name = t.str(TENSOR_NAME) ?? '';
    if (rank !== 1) {
      throw new Error(`tensor ${i} (${name}): quantized_dimension ${dim} on a rank-${rank} tensor; only rank 1 is rewritten`);
    }
    view.setInt32(q.pos + q.off(QUANT_DIMENSION), 0, true);
    fixed.push({ subgraph: s, tensor: i, name, rank, scales: q.vecLen(QUANT_SCALE), was: dim });
  }));
  return { bytes: out, fixed };
}

function main(argv) {
  if (argv.length !== 2) {
    console.error('usage: node fix_quantized_dimension.mjs IN.tflite OUT.tflite');
    return 2;
  }
  const { bytes, fixed } = fixQuantizedDimension(fs.readFileSync(argv[0]));
  fs.mkdirSync(path.dirname(path.resolve(argv[1])), { recursive: true });
  fs.writeFileSync(argv[1], bytes);
  for (const f of fixed) {
    process.stderr.write(`tensor ${f.tensor} ${f.name} (rank ${f.rank}, ${f.scales} scales): quantized_dimension ${f.was} -> 0\n`);
  }
  process.stderr.write(`${fixed.length} field(s) rewritten; ${argv[1]} sha256 ` +
    `${crypto.createHash('sha256').update(bytes).digest('hex')}\n`);
  return 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
