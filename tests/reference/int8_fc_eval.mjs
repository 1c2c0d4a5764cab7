// An independent evaluator for int8 models made only of FULLY_CONNECTED
// operators with per-tensor quantization (hello_world_int8), written from
// TensorFlow Lite's integer kernel semantics, no TFLite code involved:
//
//   acc[o]  = bias[o] + sum_d (w[o,d] - w_zp) * (x[d] - x_zp)        (int32)
//   m       = double(float32(x_scale * w_scale)) / double(y_scale)
//             (GetQuantizedConvolutionMultipler: the scale product is a
//             float32 product, then divided in double)
//   (q, s)  = QuantizeMultiplier(m): m = f * 2^s with f in [0.5, 1),
//             q = round_half_away(f * 2^31) (q = 2^31 -> 2^30, s + 1)
//   y[o]    = clamp(MultiplyByQuantizedMultiplier(acc, q, s) + y_zp, lo, hi)
//   MultiplyByQuantizedMultiplier(a, q, s) =
//             RoundingDivideByPOT(SRDHM(a * 2^max(s, 0), q), max(-s, 0))
//   SRDHM(a, b) = (a*b + (a*b >= 0 ? 2^30 : 1 - 2^30)) / 2^31, truncated
//             (gemmlowp's SaturatingRoundingDoublingHighMul)
//   RoundingDivideByPOT(x, e) = (x >> e) + ((x & (2^e-1)) > ((2^e-1) >> 1)
//             + (x < 0)), arithmetic shift (rounds half away from zero)
//   [lo, hi] = [-128, 127], RELU: [max(-128, y_zp), 127], RELU6 also
//             hi = min(127, y_zp + round(6 / y_scale)).
//
// With { rounding: 'single' } the requantization rounds once instead:
//   MultiplyByQuantizedMultiplier(a, q, s) = (a*q + 2^(30-s)) >> (31-s)
// (ruy's, which TFLite's optimized FULLY_CONNECTED uses through
// cpu_backend_gemm; also TFLite's kernels built with TFLITE_SINGLE_ROUNDING).
// The two differ by one LSB where the double rounding meets a tie.
// make_int8_expected.mjs uses both to tell which rounding each engine
// follows on hello_world_int8.
//
//   evaluateFcModel(bytes, input /* Int8Array, one run */, { rounding }) -> Int8Array

import { parseTflite, Table } from './tflite_flatbuffer.mjs';

// Per-tensor scale and zero point of every tensor of subgraph 0 (null when
// a tensor has no quantization).
function quantParams(bytes) {
  const buf = Buffer.from(bytes);
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const model = new Table(view, view.getUint32(0, true));
  return model.tableVec(2)[0].tableVec(0).map((t) => {
    const q = t.table(4);
    if (!q || q.vecLen(2) !== 1) return null;
    return {
      scale: view.getFloat32(q.indirect(2) + 4, true),
      zeroPoint: Number(view.getBigInt64(q.indirect(3) + 4, true)),
    };
  });
}

function quantizeMultiplier(m) {
  if (m === 0) return { q: 0n, shift: 0 };
  let shift = Math.floor(Math.log2(m)) + 1; // frexp: m = f * 2^shift, f in [0.5, 1)
  let f = m / 2 ** shift;
  if (f >= 1) { f /= 2; shift += 1; }
  if (f < 0.5) { f *= 2; shift -= 1; }
  let q = Math.round(f * 2 ** 31); // f > 0: Math.round is half away from zero
  if (q === 2 ** 31) { q /= 2; shift += 1; }
  if (shift < -31) return { q: 0n, shift: 0 };
  return { q: BigInt(q), shift };
}

function srdhm(a, b) {
  const ab = a * b;
  const nudge = ab >= 0n ? 1n << 30n : 1n - (1n << 30n);
  return (ab + nudge) / (1n << 31n); // BigInt division truncates toward zero
}

function roundingDivideByPot(x, e) {
  const mask = (1n << BigInt(e)) - 1n;
  const remainder = x & mask;
  const threshold = (mask >> 1n) + (x < 0n ? 1n : 0n);
  return (x >> BigInt(e)) + (remainder > threshold ? 1n : 0n);
}

// Single rounding (ruy's MultiplyByQuantizedMultiplier, and TFLite's with
// TFLITE_SINGLE_ROUNDING): (a * q + 2^(30-s)) >> (31 - s), ties upward.
function multiplyByQuantizedMultiplierSingle(acc, { q, shift }) {
  const total = BigInt(31 - shift);
  return Number((BigInt(acc) * q + (1n << (total - 1n))) >> total);
}

// SRDHM, then a rounding right shift with ties upward (ARM's vrshl; the
// final rounding of ruy's kernels before it moved to one rounding).
function multiplyByQuantizedMultiplierTiesUp(acc, { q, shift }) {
  const left = shift > 0 ? shift : 0;
  const right = BigInt(shift > 0 ? 0 : -shift);
  const x = srdhm(BigInt(acc) * (1n << BigInt(left)), q);
  return Number(right ? (x + (1n << (right - 1n))) >> right : x);
}

// TOSA's apply_scale_32 (tosa.rescale / tosa.apply_scale) with total shift
// t = 31 - s: (a*q + 2^(t-1) [+ 2^30 if a >= 0, - 2^30 if a < 0, when
// double_round and t > 31]) >> t, arithmetic shift.
function tosaApplyScale(doubleRound) {
  return (acc, { q, shift }) => {
    const t = BigInt(31 - shift);
    let round = 1n << (t - 1n);
    if (doubleRound && t > 31n) round += acc >= 0 ? 1n << 30n : -(1n << 30n);
    return Number((BigInt(acc) * q + round) >> t);
  };
}

function multiplyByQuantizedMultiplier(acc, { q, shift }) {
  const left = shift > 0 ? shift : 0;
  const right = shift > 0 ? 0 : -shift;
  return Number(roundingDivideByPot(srdhm(BigInt(acc) * (1n << BigInt(left)), q), right));
}

// rounding: 'double' (gemmlowp's two roundings: TFLite's reference integer
// kernels, TensorFlow Lite Micro) or 'single' (ruy's one rounding).
export function evaluateFcModel(bytes, input, { rounding = 'double' } = {}) {
  const requantize = { single: multiplyByQuantizedMultiplierSingle, double: multiplyByQuantizedMultiplier,
    ties_up: multiplyByQuantizedMultiplierTiesUp, tosa_double_round: tosaApplyScale(true),
    tosa_single_round: tosaApplyScale(false) }[rounding];
  if (!requantize) throw new Error(`int8_fc_eval: rounding ${rounding}`);
  const sg = parseTflite(bytes).subgraphs[0];
  const qp = quantParams(bytes);
  const values = new Map([[sg.inputs[0], Int32Array.from(input)]]);
  for (const op of sg.operators) {
    if (op.op !== 'FULLY_CONNECTED') throw new Error(`int8_fc_eval: ${op.op} is not supported`);
    const [xi, wi, bi] = op.inputs;
    const yi = op.outputs[0];
    const x = values.get(xi);
    const w = sg.tensors[wi];
    const bias = bi >= 0 ? sg.tensors[bi].data : null;
    const [xq, wq, yq] = [qp[xi], qp[wi], qp[yi]];
    const [outDim, depth] = w.shape;
    const mult = quantizeMultiplier(Math.fround(xq.scale * wq.scale) / yq.scale);
    const act = op.options?.fused_activation_function ?? 'NONE';
    const lo = act === 'NONE' ? -128 : Math.max(-128, yq.zeroPoint);
    const hi = act === 'RELU6' ? Math.min(127, yq.zeroPoint + Math.round(6 / yq.scale)) : 127;
    if (act !== 'NONE' && act !== 'RELU' && act !== 'RELU6') throw new Error(`int8_fc_eval: activation ${act}`);
    const y = new Int32Array(outDim);
    for (let o = 0; o < outDim; o++) {
      let acc = bias ? bias[o] : 0;
      for (let d = 0; d < depth; d++) acc += (w.data[o * depth + d] - wq.zeroPoint) * (x[d] - xq.zeroPoint);
      const v = requantize(acc, mult) + yq.zeroPoint;
      y[o] = Math.min(hi, Math.max(lo, v));
    }
    values.set(yi, y);
  }
  return Int8Array.from(values.get(sg.outputs[0]));
}
