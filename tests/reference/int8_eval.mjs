// Independent evaluation of TFLite's int8/uint8 operators, written from the
// arithmetic of TensorFlow Lite's builtin integer kernels (reference and
// optimized kernels of tensorflow/lite/kernels/internal, quantization_util.cc,
// kernel_util.cc): the fixed-point multipliers, their rounding, and the float
// lookup tables of SOFTMAX/LOGISTIC/TANH. No TFLite code is used.
// make_int8_cases.mjs checks every stored reference of tests/data/ops_int8
// against it (tests/data/ops_int8/README.md lists the formulas).
//
//   evaluateInt8(graph, inputs) -> outputs (typed arrays), or null when the
//   graph has an operator this file does not model.
//
// graph: { tensors: [{ shape, dtype, quantization: { scale: [], zeroPoint: [] },
// data? }], operators: [{ op, inputs, outputs, options }], inputs, outputs }
// (make_int8_cases.mjs's QGraph); inputs: typed arrays in graph input order.

const f32 = Math.fround;
const INT32_MIN = -(2n ** 31n);
const RANGE = { int8: [-128, 127], uint8: [0, 255], int32: [-(2 ** 31), 2 ** 31 - 1] };
const ARRAY = { int8: Int8Array, uint8: Uint8Array, int32: Int32Array, float32: Float32Array, bool: Uint8Array };

// std::round / TfLiteRound: half away from zero.
export const roundAway = (x) => (x >= 0 ? Math.floor(x + 0.5) : -Math.floor(-x + 0.5));

// QuantizeMultiplier (quantization_util.cc): m = q * 2^shift, q in [0.5, 1),
// q31 = round(q * 2^31); 2^31 becomes 2^30 with shift + 1; shift < -31 -> 0.
export function quantizeMultiplier(m) {
  if (m === 0) return { q31: 0n, shift: 0 };
  let shift = Math.floor(Math.log2(m)) + 1;
  let q = m / 2 ** shift;
  while (q >= 1) { q /= 2; shift++; }
  while (q < 0.5) { q *= 2; shift--; }
  let q31 = roundAway(q * 2 ** 31);
  if (q31 === 2 ** 31) { q31 /= 2; shift++; }
  if (shift < -31) return { q31: 0n, shift: 0 };
  return { q31: BigInt(q31), shift };
}

// SaturatingRoundingDoublingHighMul (gemmlowp): (a*b + nudge) / 2^31,
// truncating; nudge 2^30, or 1 - 2^30 for a negative product.
function srdhm(a, b) {
  if (a === INT32_MIN && b === INT32_MIN) return 2n ** 31n - 1n;
  const ab = a * b;
  return (ab + (ab >= 0n ? 1n << 30n : 1n - (1n << 30n))) / (1n << 31n);
}

// RoundingDivideByPOT: x / 2^e rounded half away from zero.
function rdbpot(x, e) {
  const E = BigInt(e);
  const mask = (1n << E) - 1n;
  const threshold = (mask >> 1n) + (x < 0n ? 1n : 0n);
  return (x >> E) + ((x & mask) > threshold ? 1n : 0n);
}

// MultiplyByQuantizedMultiplier (common.h): x * q31 * 2^shift, double rounding.
export function mbqm(x, { q31, shift }) {
  const left = shift > 0 ? shift : 0;
  return Number(rdbpot(srdhm(BigInt(x) * (1n << BigInt(left)), q31), shift > 0 ? 0 : -shift));
}

const clamp = (v, [lo, hi]) => Math.min(hi, Math.max(lo, v));
const numel = (s) => s.reduce((a, b) => a * b, 1);
const scaleOf = (t, c = 0) => f32(t.quantization.scale[t.quantization.scale.length > 1 ? c : 0]);
const zpOf = (t) => Number(t.quantization.zeroPoint[0]);

// CalculateActivationRangeQuantized: RELU / RELU6 bounds zo + round(v / so)
// (float32 division), within the type's range.
function activationRange(act, out) {
  const [lo, hi] = RANGE[out.dtype];
  const q = (v) => zpOf(out) + roundAway(f32(v / scaleOf(out)));
  if (act === 'RELU') return [Math.max(lo, q(0)), hi];
  if (act === 'RELU6') return [Math.max(lo, q(0)), Math.min(hi, q(6))];
  if (act === 'RELU_N1_TO_1') return [Math.max(lo, q(-1)), Math.min(hi, q(1))];
  return [lo, hi];
}

function strides(shape) {
  const s = new Array(shape.length).fill(1);
  for (let i = shape.length - 2; i >= 0; i--) s[i] = s[i + 1] * shape[i + 1];
  return s;
}

// Broadcast index: flat output index -> flat input index.
function broadcaster(inShape, outShape) {
  const pad = [...new Array(outShape.length - inShape.length).fill(1), ...inShape];
  const is = strides(pad); const os = strides(outShape);
  return (i) => {
    let r = 0;
    for (let d = 0; d < outShape.length; d++) {
      const c = Math.floor(i / os[d]) % outShape[d];
      if (pad[d] !== 1) r += c * is[d];
    }
    return r;
  };
}

// Convolution family: CONV_2D, DEPTHWISE_CONV_2D (NHWC, SAME/VALID, stride,
// dilation), per-channel multipliers input_scale * w_scale[c] / output_scale
// computed in double; out-of-bounds taps are skipped (= zero-point padding).
function conv(g, op, x, depthwise) {
  const [X, W, B] = op.inputs.map((i) => (i >= 0 ? g.tensors[i] : null));
  const O = g.tensors[op.outputs[0]];
  const o = op.options;
  const [, H, Wd, C] = X.shape; const [, OH, OW, OC] = O.shape;
  const [kh, kw] = [W.shape[1], W.shape[2]];
  const [sh, sw, dh, dw] = [o.stride_h, o.stride_w, o.dilation_h_factor ?? 1, o.dilation_w_factor ?? 1];
  const pad = (inS, outS, k, s, d) => (o.padding === 'VALID' ? 0 : Math.max(0, Math.floor(((outS - 1) * s + (k - 1) * d + 1 - inS) / 2)));
  const [ph, pw] = [pad(H, OH, kh, sh, dh), pad(Wd, OW, kw, sw, dw)];
  const [zx, zw, zo] = [zpOf(X), zpOf(W), zpOf(O)];
  const mult = Array.from({ length: OC }, (_, c) => quantizeMultiplier((scaleOf(X) * scaleOf(W, c)) / scaleOf(O)));
  const range = activationRange(o.fused_activation_function, O);
  const out = new ARRAY[O.dtype](numel(O.shape));
  const m = depthwise ? OC / C : 1;
  let n = 0;
  for (let b = 0; b < O.shape[0]; b++) for (let i = 0; i < OH; i++) for (let j = 0; j < OW; j++) for (let oc = 0; oc < OC; oc++) {
    let acc = B ? B.data[oc] : 0;
    for (let a = 0; a < kh; a++) for (let e = 0; e < kw; e++) {
      const y = i * sh - ph + a * dh; const xx = j * sw - pw + e * dw;
      if (y < 0 || y >= H || xx < 0 || xx >= Wd) continue;
      const base = ((b * H + y) * Wd + xx) * C;
      if (depthwise) acc += (x[base + Math.floor(oc / m)] - zx) * (W.data[(a * kw + e) * OC + oc] - zw);
      else for (let ic = 0; ic < C; ic++) acc += (x[base + ic] - zx) * (W.data[((oc * kh + a) * kw + e) * C + ic] - zw);
    }
    out[n++] = clamp(mbqm(acc, mult[oc]) + zo, range);
  }
  return out;
}

function fullyConnected(g, op, x) {
  const [X, W, B] = op.inputs.map((i) => (i >= 0 ? g.tensors[i] : null));
  const O = g.tensors[op.outputs[0]];
  const [units, K] = W.shape;
  const mult = quantizeMultiplier((scaleOf(X) * scaleOf(W)) / scaleOf(O));
  const range = activationRange(op.options.fused_activation_function, O);
  const out = new ARRAY[O.dtype](numel(O.shape));
  for (let r = 0; r < x.length / K; r++) for (let u = 0; u < units; u++) {
    let acc = B ? B.data[u] : 0;
    for (let k = 0; k < K; k++) acc += (x[r * K + k] - zpOf(X)) * (W.data[u * K + k] - zpOf(W));
    out[r * units + u] = clamp(mbqm(acc, mult) + zpOf(O), range);
  }
  return out;
}

function batchMatmul(g, op, a, b) {
  const [A, Bt] = op.inputs.map((i) => g.tensors[i]);
  const O = g.tensors[op.outputs[0]];
  const { adj_x: ax, adj_y: ay } = op.options;
  const [ra, ca] = A.shape.slice(-2); const [rb, cb] = Bt.shape.slice(-2);
  const [M, K, N] = [ax ? ca : ra, ax ? ra : ca, ay ? rb : cb];
  const batches = numel(O.shape.slice(0, -2));
  const mult = quantizeMultiplier((scaleOf(A) * scaleOf(Bt)) / scaleOf(O));
  const out = new ARRAY[O.dtype](numel(O.shape));
  for (let t = 0; t < batches; t++) for (let i = 0; i < M; i++) for (let j = 0; j < N; j++) {
    let acc = 0;
    for (let k = 0; k < K; k++) {
      const av = a[t * ra * ca + (ax ? k * ca + i : i * ca + k)];
      const bv = b[t * rb * cb + (ay ? j * cb + k : k * cb + j)];
      acc += (av - zpOf(A)) * (bv - zpOf(Bt));
    }
    out[(t * M + i) * N + j] = clamp(mbqm(acc, mult) + zpOf(O), RANGE[O.dtype]);
  }
  return out;
}

// ADD / SUB: inputs shifted left by 20 and scaled to 2 * max(s1, s2).
function addSub(g, op, a, b) {
  const [A, B] = op.inputs.map((i) => g.tensors[i]);
  const O = g.tensors[op.outputs[0]];
  const twiceMax = 2 * Math.max(scaleOf(A), scaleOf(B));
  const [m1, m2] = [quantizeMultiplier(scaleOf(A) / twiceMax), quantizeMultiplier(scaleOf(B) / twiceMax)];
  const mo = quantizeMultiplier(twiceMax / (2 ** 20 * scaleOf(O)));
  const range = activationRange(op.options.fused_activation_function, O);
  const [ia, ib] = [broadcaster(A.shape, O.shape), broadcaster(B.shape, O.shape)];
  const out = new ARRAY[O.dtype](numel(O.shape));
  for (let i = 0; i < out.length; i++) {
    const u = mbqm((a[ia(i)] - zpOf(A)) * 2 ** 20, m1);
    const v = mbqm((b[ib(i)] - zpOf(B)) * 2 ** 20, m2);
    out[i] = clamp(mbqm(op.op === 'ADD' ? u + v : u - v, mo) + zpOf(O), range);
  }
  return out;
}

function mul(g, op, a, b) {
  const [A, B] = op.inputs.map((i) => g.tensors[i]);
  const O = g.tensors[op.outputs[0]];
  const m = quantizeMultiplier((scaleOf(A) * scaleOf(B)) / scaleOf(O));
  const range = activationRange(op.options.fused_activation_function, O);
  const [ia, ib] = [broadcaster(A.shape, O.shape), broadcaster(B.shape, O.shape)];
  const out = new ARRAY[O.dtype](numel(O.shape));
  for (let i = 0; i < out.length; i++) out[i] = clamp(mbqm((a[ia(i)] - zpOf(A)) * (b[ib(i)] - zpOf(B)), m) + zpOf(O), range);
  return out;
}

// AVERAGE_POOL_2D / MAX_POOL_2D on the stored values (input and output share
// scale and zero point); the average rounds half away from zero with C
// truncating division over the in-bounds cells.
function pool(g, op, x) {
  const X = g.tensors[op.inputs[0]]; const O = g.tensors[op.outputs[0]];
  const o = op.options;
  const [N, H, W, C] = X.shape; const [, OH, OW] = O.shape;
  const pad = (inS, outS, k, s) => (o.padding === 'VALID' ? 0 : Math.max(0, Math.floor(((outS - 1) * s + k - inS) / 2)));
  const [ph, pw] = [pad(H, OH, o.filter_height, o.stride_h), pad(W, OW, o.filter_width, o.stride_w)];
  const range = activationRange(o.fused_activation_function, O);
  const out = new ARRAY[O.dtype](numel(O.shape));
  let n = 0;
  for (let b = 0; b < N; b++) for (let i = 0; i < OH; i++) for (let j = 0; j < OW; j++) for (let c = 0; c < C; c++) {
    let acc = 0; let cnt = 0; let max = -Infinity;
    for (let y = Math.max(0, i * o.stride_h - ph); y < Math.min(H, i * o.stride_h - ph + o.filter_height); y++) {
      for (let xx = Math.max(0, j * o.stride_w - pw); xx < Math.min(W, j * o.stride_w - pw + o.filter_width); xx++) {
        const v = x[((b * H + y) * W + xx) * C + c];
        acc += v; cnt++; max = Math.max(max, v);
      }
    }
    const half = Math.floor(cnt / 2);
    const avg = acc > 0 ? Math.trunc((acc + half) / cnt) : Math.trunc((acc - half) / cnt);
    out[n++] = clamp(op.op === 'MAX_POOL_2D' ? max : avg, range);
  }
  return out;
}

// SOFTMAX (int8/uint8): float table[255 - v] = expf(-input_scale * beta * v).
function softmax(g, op, x) {
  const X = g.tensors[op.inputs[0]]; const O = g.tensors[op.outputs[0]];
  const s = f32(-scaleOf(X) * f32(op.options.beta));
  const table = new Float32Array(256);
  for (let v = 0; v <= 255; v++) table[255 - v] = Math.exp(f32(s * v));
  const depth = X.shape[X.shape.length - 1];
  const out = new ARRAY[O.dtype](x.length);
  for (let r = 0; r < x.length / depth; r++) {
    const row = x.subarray(r * depth, (r + 1) * depth);
    const off = 255 - Math.max(...row);
    let sum = f32(0);
    for (const v of row) sum = f32(sum + table[off + v]);
    const inv = f32(1 / f32(sum * scaleOf(O)));
    row.forEach((v, j) => {
      const p = f32(table[off + v] * inv);
      const q = O.dtype === 'uint8' ? Math.trunc(f32(p + 0.5)) : roundAway(p) + zpOf(O);
      out[r * depth + j] = clamp(q, RANGE[O.dtype]);
    });
  }
  return out;
}

// A 256-entry table over the input values (LOGISTIC, TANH): float32
// f(input_scale * (q - zi)), divided by the output scale, rounded half away.
function lut(g, op, x, fn) {
  const X = g.tensors[op.inputs[0]]; const O = g.tensors[op.outputs[0]];
  const out = new ARRAY[O.dtype](x.length);
  x.forEach((q, i) => {
    const y = fn(f32(scaleOf(X) * (q - zpOf(X))));
    out[i] = clamp(roundAway(f32(y / scaleOf(O))) + zpOf(O), RANGE[O.dtype]);
  });
  return out;
}

// Requantization of one value by input_scale / output_scale (plus an
// alternative multiplier for negative inputs: LEAKY_RELU). float32: the
// multipliers are float32 expressions widened to double (activations.cc
// ReluPrepare, LeakyReluPrepare: `input->params.scale / output->params.scale`,
// `input->params.scale * params->alpha / output->params.scale`), else double.
function requantize(g, op, x, { negativeScale, range, float32 = false } = {}) {
  const X = g.tensors[op.inputs[0]]; const O = g.tensors[op.outputs[0]];
  const div = (a, b) => (float32 ? f32(a / b) : a / b);
  const m = quantizeMultiplier(div(scaleOf(X), scaleOf(O)));
  const mn = negativeScale !== undefined ? quantizeMultiplier(div(negativeScale, scaleOf(O))) : m;
  const out = new ARRAY[O.dtype](x.length);
  x.forEach((q, i) => { const v = q - zpOf(X); out[i] = clamp(mbqm(v, v >= 0 ? m : mn) + zpOf(O), range ?? RANGE[O.dtype]); });
  return out;
}

function quantizeFloat(g, op, x) {
  const O = g.tensors[op.outputs[0]];
  return ARRAY[O.dtype].from(x, (v) => clamp(roundAway(f32(v / scaleOf(O))) + zpOf(O), RANGE[O.dtype]));
}

// MEAN: same scale and zero point: sum / n truncated toward zero; otherwise
// round(mean * si / so - zi * si / so) + zo in float32.
// The int32 sums of the stored values over the constant axes (input 1).
function axisSums(g, op, x) {
  const X = g.tensors[op.inputs[0]]; const O = g.tensors[op.outputs[0]];
  const axes = new Set([...g.tensors[op.inputs[1]].data].map((a) => (a < 0 ? a + X.shape.length : a)));
  const keptShape = X.shape.map((d, i) => (axes.has(i) ? 1 : d));
  const sums = new Array(numel(keptShape)).fill(0);
  const xs = strides(X.shape); const ks = strides(keptShape);
  for (let i = 0; i < x.length; i++) {
    let k = 0;
    for (let d = 0; d < X.shape.length; d++) if (!axes.has(d)) k += (Math.floor(i / xs[d]) % X.shape[d]) * ks[d];
    sums[k] += x[i];
  }
  return { X, O, sums, n: x.length / sums.length };
}

function mean(g, op, x) {
  const { X, O, sums, n } = axisSums(g, op, x);
  const same = scaleOf(X) === scaleOf(O) && zpOf(X) === zpOf(O);
  const scale = f32(scaleOf(X) / scaleOf(O)); const bias = f32(-zpOf(X) * scale);
  return ARRAY[O.dtype].from(sums, (s) => clamp(same ? Math.trunc(s / n)
    : roundAway(f32(f32(f32(s) / n) * scale + bias)) + zpOf(O), RANGE[O.dtype]));
}

// SUM with an output scale of its own (QuantizedMeanOrSum, compute_sum):
// scale = si / so, bias = -zi * scale * n (float32), round(sum * scale +
// bias) + zo, cast to the 8-bit type WITHOUT saturation: TFLite 2.9 wraps
// (the typed array's conversion does the same).
function sum(g, op, x) {
  const { X, O, sums, n } = axisSums(g, op, x);
  const scale = f32(scaleOf(X) / scaleOf(O)); const bias = f32(f32(-zpOf(X) * scale) * n);
  return ARRAY[O.dtype].from(sums, (s) => roundAway(f32(f32(f32(s) * scale) + bias)) + zpOf(O));
}

// uint8/int8 CONCATENATION; inputs with other scales are requantized in float:
// round(x * s_i / so - z_i * s_i / so) + zo.
function concatenation(g, op, xs) {
  const O = g.tensors[op.outputs[0]];
  const axis = op.options.axis < 0 ? op.options.axis + O.shape.length : op.options.axis;
  const outer = numel(O.shape.slice(0, axis)); const inner = numel(O.shape.slice(axis + 1));
  const inv = f32(1 / scaleOf(O));
  const out = new ARRAY[O.dtype](numel(O.shape));
  let n = 0;
  for (let o = 0; o < outer; o++) {
    op.inputs.forEach((ti, k) => {
      const T = g.tensors[ti]; const len = T.shape[axis] * inner;
      const same = scaleOf(T) === scaleOf(O) && zpOf(T) === zpOf(O);
      const sc = f32(scaleOf(T) * inv); const bias = f32(-zpOf(T) * sc);
      for (let i = 0; i < len; i++) {
        const v = xs[k][o * len + i];
        out[n++] = same ? v : clamp(roundAway(f32(f32(v * sc) + bias)) + zpOf(O), RANGE[O.dtype]);
      }
    });
  }
  return out;
}

// ResizeBilinearInteger: 10-bit source coordinates, 2^20-unit four-tap sum.
function resizeBilinear(g, op, x) {
  const X = g.tensors[op.inputs[0]]; const O = g.tensors[op.outputs[0]];
  const [N, H, W, C] = X.shape; const [, OH, OW] = O.shape;
  const { align_corners: align, half_pixel_centers: half } = op.options;
  const scale10 = (i, o) => (align && o > 1 ? Math.trunc((1024 * (i - 1) + Math.trunc((o - 1) / 2)) / (o - 1)) : Math.trunc((1024 * i + Math.trunc(o / 2)) / o));
  const coord = (v, s, size) => {
    const sv = half ? v * s + Math.trunc(s / 2) - 512 : v * s;
    return [sv, Math.max(Math.trunc(sv / 1024), 0), Math.min(Math.trunc((sv + 1023) / 1024), size - 1)];
  };
  const [hs, ws] = [scale10(H, OH), scale10(W, OW)];
  const out = new ARRAY[O.dtype](numel(O.shape));
  let n = 0;
  const at = (b, y, xx, c) => BigInt(x[((b * H + y) * W + xx) * C + c]);
  for (let b = 0; b < N; b++) for (let i = 0; i < OH; i++) {
    const [iy, y0, y1] = coord(i, hs, H);
    for (let j = 0; j < OW; j++) {
      const [ix, x0, x1] = coord(j, ws, W);
      const [fy, fx] = [BigInt(iy - 1024 * y0), BigInt(ix - 1024 * x0)];
      for (let c = 0; c < C; c++) {
        const sum = at(b, y0, x0, c) * (1024n - fy) * (1024n - fx) + at(b, y1, x0, c) * fy * (1024n - fx)
          + at(b, y0, x1, c) * (1024n - fy) * fx + at(b, y1, x1, c) * fy * fx;
        out[n++] = Number((sum + (sum > 0n ? 1n << 19n : -(1n << 19n))) / (1n << 20n));
      }
    }
  }
  return out;
}

// ABS (elementwise.cc AbsEvalQuantized, TFLite Micro elementwise.cc):
// |x - zi|, times float32(si / so) as a fixed-point multiplier when the scales
// differ, plus zo.
function abs(g, op, x) {
  const X = g.tensors[op.inputs[0]]; const O = g.tensors[op.outputs[0]];
  const m = quantizeMultiplier(f32(scaleOf(X) / scaleOf(O)));
  const same = scaleOf(X) === scaleOf(O);
  return ARRAY[O.dtype].from(x, (q) => {
    const v = Math.abs(q - zpOf(X));
    return clamp((same ? v : mbqm(v, m)) + zpOf(O), RANGE[O.dtype]);
  });
}

// GetInvSqrtQuantizedMultiplierExp (common.h), reverse_shift -1: 1/sqrt(v)
// by five Newton steps x = 1.5 x - (v/2) x^3 in 3-integer-bit fixed point
// (raw / 2^28) on v normalized by bit pairs into [2^27, 2^29).
function invSqrt(v) {
  if (v <= 1) return { q31: 2n ** 31n - 1n, shift: 0 };
  let shift = 11;
  while (v >= 2 ** 29) { v = Math.trunc(v / 4); shift++; }
  const pairs = Math.floor((Math.clz32(v) - 1) / 2) - 1;
  shift -= pairs;
  v *= 4 ** pairs;
  const sat = (x, e) => { const r = x * (1n << BigInt(e)); return r > 2n ** 31n - 1n ? 2n ** 31n - 1n : r < INT32_MIN ? INT32_MIN : r; };
  const halfInput = rdbpot(BigInt(v >> 1), 1);
  const halfThree = (1n << 28n) + (1n << 27n);
  let x = 1n << 28n;
  for (let i = 0; i < 5; i++) {
    const cube = sat(srdhm(srdhm(x, x), x), 6);
    x = sat(srdhm(halfThree, x) - srdhm(halfInput, cube), 3);
  }
  let q31 = srdhm(x, 1518500250n);
  if (shift < 0) { q31 = BigInt.asIntN(32, q31 << BigInt(-shift)); shift = 0; }
  return { q31, shift: -shift };
}

// RSQRT (elementwise.cc RsqrtEvalQuantized): v = x - zi; 0 -> max; else
// MBQM(MBQM(1, invSqrt(v) << 20), 1 / (sqrtf(si) * so) >> 20) + zo. Negative
// v: TFLite stops with an error; Kiln's table gives the type's max there.
function rsqrt(g, op, x) {
  const X = g.tensors[op.inputs[0]]; const O = g.tensors[op.outputs[0]];
  const m = quantizeMultiplier(1 / f32(f32(Math.sqrt(scaleOf(X))) * scaleOf(O)));
  return ARRAY[O.dtype].from(x, (q) => {
    const v = q - zpOf(X);
    if (v <= 0) return RANGE[O.dtype][1];
    const inv = invSqrt(v);
    const data = mbqm(1, { q31: inv.q31, shift: inv.shift + 20 });
    return clamp(mbqm(data, { q31: m.q31, shift: m.shift - 20 }) + zpOf(O), RANGE[O.dtype]);
  });
}

// PRELU (prelu.cc, BroadcastPrelu4DSlow): v = x - zx; v >= 0: MBQM(v, sx /
// so), else MBQM(v (alpha - za), sx sa / so) (double multipliers), plus zo.
function prelu(g, op, x, alpha) {
  const [X, A] = op.inputs.map((i) => g.tensors[i]);
  const O = g.tensors[op.outputs[0]];
  const m1 = quantizeMultiplier(scaleOf(X) / scaleOf(O));
  const m2 = quantizeMultiplier((scaleOf(X) * scaleOf(A)) / scaleOf(O));
  return broadcastBinary(g, op, x, alpha, ARRAY[O.dtype], (xv, av) => {
    const v = xv - zpOf(X);
    return clamp((v >= 0 ? mbqm(v, m1) : mbqm(v * (av - zpOf(A)), m2)) + zpOf(O), RANGE[O.dtype]);
  });
}

// gemmlowp one_over_one_plus_x_for_x_in_0_1 (raw, 0 integer bits): Newton
// steps in 2-integer-bit fixed point from 48/17 - 32/17 d, d = (1 + a) / 2.
const wrap = (v) => BigInt.asIntN(32, v);
const satShift = (x, e) => { const r = x * (1n << BigInt(e)); return r > 2n ** 31n - 1n ? 2n ** 31n - 1n : r < INT32_MIN ? INT32_MIN : r; };
function oneOverOnePlusX(a) {
  const sum = a + 2n ** 31n - 1n;
  const half = (sum + (sum >= 0n ? 1n : -1n)) / 2n;
  let x = wrap(1515870810n + srdhm(half, -1010580540n));
  for (let i = 0; i < 3; i++) x = wrap(x + satShift(srdhm(x, wrap((1n << 29n) - srdhm(half, x))), 2));
  return satShift(x, 1);
}

// DIV (reference_ops DivElementwise; TFLite Micro div.cc int8): a negative
// divisor flips both signs; GetReciprocal(y, 31); x shifted left by its
// CountLeadingSignBits; MBQM-smaller-than-one by the output multiplier with
// the shifts taken back.
function quantizedDivide(x, y, m) {
  if (y < 0) { x = -x; y = -y; }
  const hp1 = Math.clz32(y);
  const recipShift = 31 - hp1;
  const inv = oneOverOnePlusX(wrap(BigInt(y) * (1n << BigInt(hp1)) - 2n ** 31n));
  const headroom = x >= 0 ? Math.clz32(x) - 1 : Math.clz32(~x) - 1;
  const unscaled = srdhm(wrap(BigInt(x) * (1n << BigInt(headroom))), inv);
  const e = recipShift + headroom - m.shift;
  return e > 31 ? 0 : Number(rdbpot(srdhm(unscaled, m.q31), Math.max(e, 0)));
}

function div(g, op, a, b) {
  const [A, B] = op.inputs.map((i) => g.tensors[i]);
  const O = g.tensors[op.outputs[0]];
  const m = quantizeMultiplier(f32(scaleOf(A) / f32(scaleOf(B) * scaleOf(O))));
  const range = activationRange(op.options.fused_activation_function, O);
  const [lo, hi] = RANGE[O.dtype];
  return broadcastBinary(g, op, a, b, ARRAY[O.dtype], (x, y) => {
    const n = x - zpOf(A); const d = y - zpOf(B);
    const v = d !== 0 ? zpOf(O) + quantizedDivide(n, d, m) : (n > 0 ? hi : n < 0 ? lo : zpOf(O));
    return clamp(clamp(v, [lo, hi]), range);
  });
}

// Elementwise binary over broadcast operands: f(a_i, b_i) into `Out`.
function broadcastBinary(g, op, a, b, Out, f) {
  const [A, B] = op.inputs.map((i) => g.tensors[i]);
  const O = g.tensors[op.outputs[0]];
  const [ia, ib] = [broadcaster(A.shape, O.shape), broadcaster(B.shape, O.shape)];
  const out = new Out(numel(O.shape));
  for (let i = 0; i < out.length; i++) out[i] = f(a[ia(i)], b[ib(i)]);
  return out;
}

// SQUARED_DIFFERENCE (squared_difference.cc, int8): inputs shifted left 7,
// scaled by s_i / (2 max(s1, s2)), the difference squared, scaled by
// (2 max)^2 / (2^14 so), plus zo.
function squaredDifference(g, op, a, b) {
  const [A, B] = op.inputs.map((i) => g.tensors[i]);
  const O = g.tensors[op.outputs[0]];
  const twiceMax = 2 * Math.max(scaleOf(A), scaleOf(B));
  const [m1, m2] = [quantizeMultiplier(scaleOf(A) / twiceMax), quantizeMultiplier(scaleOf(B) / twiceMax)];
  const mo = quantizeMultiplier((twiceMax * twiceMax) / (2 ** 14 * scaleOf(O)));
  return broadcastBinary(g, op, a, b, ARRAY[O.dtype], (x, y) => {
    const d = mbqm((x - zpOf(A)) * 2 ** 7, m1) - mbqm((y - zpOf(B)) * 2 ** 7, m2);
    return clamp(mbqm(d * d, mo) + zpOf(O), RANGE[O.dtype]);
  });
}

// Comparisons (comparisons.cc, ComparisonWithScaling): each side (x - zp) *
// 2^8 times its own scale as a fixed-point multiplier, compared -> bool.
function comparison(g, op, a, b, f) {
  const [A, B] = op.inputs.map((i) => g.tensors[i]);
  const [ma, mb] = [quantizeMultiplier(scaleOf(A)), quantizeMultiplier(scaleOf(B))];
  return broadcastBinary(g, op, a, b, Uint8Array,
    (x, y) => (f(mbqm((x - zpOf(A)) * 256, ma), mbqm((y - zpOf(B)) * 256, mb)) ? 1 : 0));
}

// SELECT / SELECT_V2 (select.cc): c ? x : y on the stored values, broadcast
// (SELECT's rank-1 condition, which picks rows, is not used by the cases).
function select(g, op, c, x, y) {
  const [C, X, Y] = op.inputs.map((i) => g.tensors[i]);
  const O = g.tensors[op.outputs[0]];
  const [ic, ix, iy] = [C, X, Y].map((t) => broadcaster(t.shape, O.shape));
  return ARRAY[O.dtype].from({ length: numel(O.shape) }, (_, i) => (c[ic(i)] ? x[ix(i)] : y[iy(i)]));
}

// ADD_N / CUMSUM int8 (TFLite Micro add_n.cc / cumsum.cc, reference_ops
// AddN / CumSum int8): every term (x - zp) << 20 times 0.5 (s / 2s), the
// accumulator starting at the same of -zp (the "x = 0" of the kernels is the
// input offset), the sum times 2 s / (2^20 so), plus zo, saturated.
function shiftedSum(X, O) {
  const half = quantizeMultiplier(0.5);
  const term = (v) => mbqm((v - zpOf(X)) * 2 ** 20, half);
  const start = mbqm(-zpOf(X) * 2 ** 20, half);
  const mo = quantizeMultiplier((2 * scaleOf(X)) / (2 ** 20 * scaleOf(O)));
  const finish = (acc) => clamp(mbqm(acc, mo) + zpOf(O), RANGE[O.dtype]);
  return { term, start, finish };
}

function addN(g, op, xs) {
  const X = g.tensors[op.inputs[0]]; const O = g.tensors[op.outputs[0]];
  const { term, start, finish } = shiftedSum(X, O);
  return ARRAY[O.dtype].from({ length: xs[0].length }, (_, i) => finish(xs.reduce((acc, x) => acc + term(x[i]), start)));
}

function cumsum(g, op, x) {
  const X = g.tensors[op.inputs[0]]; const O = g.tensors[op.outputs[0]];
  const rank = X.shape.length;
  let axis = g.tensors[op.inputs[1]].data[0];
  if (axis < 0) axis += rank;
  const { exclusive, reverse } = op.options;
  const { term, start, finish } = shiftedSum(X, O);
  const outer = numel(X.shape.slice(0, axis)); const depth = X.shape[axis]; const inner = numel(X.shape.slice(axis + 1));
  const out = new ARRAY[O.dtype](x.length);
  for (let o = 0; o < outer; o++) for (let k = 0; k < inner; k++) {
    let acc = start;
    for (let t = 0; t < depth; t++) {
      const d = reverse ? depth - 1 - t : t;
      const idx = (o * depth + d) * inner + k;
      if (exclusive) { out[idx] = finish(acc); acc += term(x[idx]); } else { acc += term(x[idx]); out[idx] = finish(acc); }
    }
  }
  return out;
}

// CAST (TFLite Micro cast.cc): static_cast of the stored values; float32 ->
// int8 truncates toward zero (the cases stay in range), int32 -> int8 keeps
// the low byte (the typed array's conversion).
function cast(g, op, x) {
  const O = g.tensors[op.outputs[0]];
  return ARRAY[O.dtype].from(x, (v) => (O.dtype === 'float32' ? v : Math.trunc(v)));
}

// EMBEDDING_LOOKUP (embedding_lookup.cc): rows of value at ids; int8 values
// with a float32 output are dequantized, scale * q (zero point 0).
function embeddingLookup(g, op, ids, value) {
  const V = g.tensors[op.inputs[1]]; const O = g.tensors[op.outputs[0]];
  const row = numel(V.shape.slice(1));
  const out = new ARRAY[O.dtype](ids.length * row);
  ids.forEach((id, k) => {
    for (let j = 0; j < row; j++) {
      const q = value[id * row + j];
      out[k * row + j] = O.dtype === 'float32' ? f32(scaleOf(V) * q) : q;
    }
  });
  return out;
}

// ELU int8 (elu.cc, TFLite Micro elu.cc PopulateLookupTable): float32
// f(si (q - zi)), f(v) = v < 0 ? expf(v) - 1 : v, times float32(1 / so),
// rounded half away from zero, plus zo, saturated.
function elu(g, op, x) {
  const X = g.tensors[op.inputs[0]]; const O = g.tensors[op.outputs[0]];
  const inv = f32(1 / scaleOf(O));
  return ARRAY[O.dtype].from(x, (q) => {
    const v = f32(scaleOf(X) * (q - zpOf(X)));
    const y = v < 0 ? f32(f32(Math.exp(v)) - 1) : v;
    return clamp(roundAway(f32(y * inv)) + zpOf(O), RANGE[O.dtype]);
  });
}

// PADV2 (pad.cc): the stored values, padding with the stored constant value.
function padV2(g, op, x, paddings, value) {
  const X = g.tensors[op.inputs[0]]; const O = g.tensors[op.outputs[0]];
  const out = new ARRAY[O.dtype](numel(O.shape)).fill(value[0]);
  const xs = strides(X.shape); const os = strides(O.shape);
  for (let i = 0; i < x.length; i++) {
    let k = 0;
    for (let d = 0; d < X.shape.length; d++) k += (Math.floor(i / xs[d]) % X.shape[d] + paddings[2 * d]) * os[d];
    out[k] = x[i];
  }
  return out;
}

// DYNAMIC_UPDATE_SLICE (dynamic_update_slice.cc): the operand with the
// update written from start, each start clamped to [0, operand - update].
function dynamicUpdateSlice(g, op, operand, update, start) {
  const X = g.tensors[op.inputs[0]]; const U = g.tensors[op.inputs[1]];
  const out = ARRAY[g.tensors[op.outputs[0]].dtype].from(operand);
  const s = X.shape.map((d, k) => Math.min(Math.max(0, Number(start[k])), d - U.shape[k]));
  const xs = strides(X.shape); const us = strides(U.shape);
  for (let i = 0; i < update.length; i++) {
    let k = 0;
    for (let d = 0; d < U.shape.length; d++) k += (Math.floor(i / us[d]) % U.shape[d] + s[d]) * xs[d];
    out[k] = update[i];
  }
  return out;
}

// TRANSPOSE_CONV int8 (reference_integer_ops::TransposeConv, TFLite Micro
// transpose_conv.cc): (x - zx) * w scattered at y * stride - pad + k (pad:
// CONV_2D's for an input of the output's size), plus the bias, MBQM by
// s_in * s_w[o] / s_out (double), plus zo, clamped.
function transposeConv(g, op, x) {
  const [, W, X, B] = op.inputs.map((i) => (i >= 0 ? g.tensors[i] : null));
  const O = g.tensors[op.outputs[0]];
  const o = op.options;
  const [N, H, Wd, C] = X.shape; const [, OH, OW, OC] = O.shape; const [kh, kw] = [W.shape[1], W.shape[2]];
  const pad = (inS, outS, k, s) => (o.padding === 'VALID' ? 0 : Math.max(0, Math.floor(((inS - 1) * s + k - outS) / 2)));
  const [ph, pw] = [pad(H, OH, kh, o.stride_h), pad(Wd, OW, kw, o.stride_w)];
  const acc = new Array(numel(O.shape)).fill(0);
  for (let b = 0; b < N; b++) for (let y = 0; y < H; y++) for (let xx = 0; xx < Wd; xx++) for (let ic = 0; ic < C; ic++) {
    const v = x[((b * H + y) * Wd + xx) * C + ic] - zpOf(X);
    for (let oc = 0; oc < OC; oc++) for (let a = 0; a < kh; a++) for (let e = 0; e < kw; e++) {
      const oy = y * o.stride_h - ph + a; const ox = xx * o.stride_w - pw + e;
      if (oy < 0 || oy >= OH || ox < 0 || ox >= OW) continue;
      acc[((b * OH + oy) * OW + ox) * OC + oc] += v * W.data[((oc * kh + a) * kw + e) * C + ic];
    }
  }
  const mult = Array.from({ length: OC }, (_, c) => quantizeMultiplier((scaleOf(X) * scaleOf(W, c)) / scaleOf(O)));
  const range = activationRange(o.fused_activation_function ?? 'NONE', O);
  return ARRAY[O.dtype].from(acc, (v, i) => clamp(mbqm(v + (B ? B.data[i % OC] : 0), mult[i % OC]) + zpOf(O), range));
}

// Operator -> evaluation (values: the input arrays in operator input order).
const KERNELS = {
  CONV_2D: (g, op, [x]) => conv(g, op, x, false),
  DEPTHWISE_CONV_2D: (g, op, [x]) => conv(g, op, x, true),
  FULLY_CONNECTED: (g, op, [x]) => fullyConnected(g, op, x),
  BATCH_MATMUL: (g, op, [a, b]) => batchMatmul(g, op, a, b),
  ADD: (g, op, [a, b]) => addSub(g, op, a, b),
  SUB: (g, op, [a, b]) => addSub(g, op, a, b),
  MUL: (g, op, [a, b]) => mul(g, op, a, b),
  AVERAGE_POOL_2D: (g, op, [x]) => pool(g, op, x),
  MAX_POOL_2D: (g, op, [x]) => pool(g, op, x),
  MEAN: (g, op, [x]) => mean(g, op, x),
  SUM: (g, op, [x]) => sum(g, op, x),
  SOFTMAX: (g, op, [x]) => softmax(g, op, x),
  LOGISTIC: (g, op, [x]) => lut(g, op, x, (v) => f32(1 / f32(1 + f32(Math.exp(-v))))),
  TANH: (g, op, [x]) => lut(g, op, x, (v) => f32(Math.tanh(v))),
  LEAKY_RELU: (g, op, [x]) => requantize(g, op, x, { negativeScale: f32(scaleOf(g.tensors[op.inputs[0]]) * f32(op.options.alpha)), float32: true }),
  RELU: (g, op, [x]) => requantize(g, op, x, { range: activationRange('RELU', g.tensors[op.outputs[0]]), float32: true }),
  RELU6: (g, op, [x]) => requantize(g, op, x, { range: activationRange('RELU6', g.tensors[op.outputs[0]]), float32: true }),
  QUANTIZE: (g, op, [x]) => (g.tensors[op.inputs[0]].dtype === 'float32' ? quantizeFloat(g, op, x) : requantize(g, op, x)),
  DEQUANTIZE: (g, op, [x]) => { const X = g.tensors[op.inputs[0]]; return Float32Array.from(x, (q) => scaleOf(X) * (q - zpOf(X))); },
  CONCATENATION: (g, op, xs) => concatenation(g, op, xs),
  RESIZE_BILINEAR: (g, op, [x]) => resizeBilinear(g, op, x),
  ABS: (g, op, [x]) => abs(g, op, x),
  DIV: (g, op, [a, b]) => div(g, op, a, b),
  SELECT: (g, op, [c, x, y]) => select(g, op, c, x, y),
  SELECT_V2: (g, op, [c, x, y]) => select(g, op, c, x, y),
  RSQRT: (g, op, [x]) => rsqrt(g, op, x),
  PRELU: (g, op, [x, alpha]) => prelu(g, op, x, alpha),
  MAXIMUM: (g, op, [a, b]) => broadcastBinary(g, op, a, b, ARRAY[g.tensors[op.outputs[0]].dtype], Math.max),
  MINIMUM: (g, op, [a, b]) => broadcastBinary(g, op, a, b, ARRAY[g.tensors[op.outputs[0]].dtype], Math.min),
  SQUARED_DIFFERENCE: (g, op, [a, b]) => squaredDifference(g, op, a, b),
  EQUAL: (g, op, [a, b]) => comparison(g, op, a, b, (x, y) => x === y),
  NOT_EQUAL: (g, op, [a, b]) => comparison(g, op, a, b, (x, y) => x !== y),
  GREATER: (g, op, [a, b]) => comparison(g, op, a, b, (x, y) => x > y),
  GREATER_EQUAL: (g, op, [a, b]) => comparison(g, op, a, b, (x, y) => x >= y),
  LESS: (g, op, [a, b]) => comparison(g, op, a, b, (x, y) => x < y),
  LESS_EQUAL: (g, op, [a, b]) => comparison(g, op, a, b, (x, y) => x <= y),
  ADD_N: (g, op, xs) => addN(g, op, xs),
  CUMSUM: (g, op, [x]) => cumsum(g, op, x),
  CAST: (g, op, [x]) => cast(g, op, x),
  FILL: (g, op, [, value]) => new ARRAY[g.tensors[op.outputs[0]].dtype](numel(g.tensors[op.outputs[0]].shape)).fill(value[0]),
  ZEROS_LIKE: (g, op) => new ARRAY[g.tensors[op.outputs[0]].dtype](numel(g.tensors[op.outputs[0]].shape)),
  EMBEDDING_LOOKUP: (g, op, [ids, value]) => embeddingLookup(g, op, ids, value),
  ELU: (g, op, [x]) => elu(g, op, x),
  PADV2: (g, op, [x, paddings, value]) => padV2(g, op, x, paddings, value),
  DYNAMIC_UPDATE_SLICE: (g, op, [x, u, s]) => dynamicUpdateSlice(g, op, x, u, s),
  TRANSPOSE_CONV: (g, op, [, , x]) => transposeConv(g, op, x),
};

export const EVALUATED_OPERATORS = Object.keys(KERNELS);

export function evaluateInt8(g, inputs) {
  if (!g.operators.every((o) => KERNELS[o.op])) return null;
  const values = new Map(g.inputs.map((t, k) => [t, inputs[k]]));
  for (const op of g.operators) {
    const args = op.inputs.filter((i) => i >= 0).map((i) => values.get(i) ?? g.tensors[i].data);
    values.set(op.outputs[0], KERNELS[op.op](g, op, args));
  }
  return g.outputs.map((t) => values.get(t));
}
