// Independent double-precision evaluation of small TFLite models, written
// from the TFLite kernel semantics (no TFLite code involved). Used by
// make_op_cases.mjs / make_io_cases.mjs to check (and, for listed reference
// bugs, replace) what the TFLite interpreter computes, and by
// check_op_cases.mjs to re-check the stored data.
//
//   const outs = evaluateModel(parseTflite(bytes).subgraphs[0], inputs, { fusedTanhIgnored })
//
// Each operator is computed in double and its result rounded to float32
// (what a float32 runtime stores between operators). It documents the exact
// semantics in readable form: the SAME padding split (clamped at 0 when the
// computed total is negative), the TRANSPOSE_CONV padding rule, resize
// coordinate maps, the average-pool divisor, MIRROR_PAD's two modes,
// ROUND's ties to even, FLOOR_MOD's sign, CAST's truncation. int32 and bool
// results are stored as integers (bool 0 / 1) instead.
// fusedTanhIgnored: evaluate a fused TANH the way TFLite's float kernels do
// (as no activation; quirk "fused_tanh_ignored" of the op cases).
import { fromFloat16Bits } from './tflite_builder.mjs';

const numel = (s) => s.reduce((a, b) => a * b, 1);
const strides = (s) => { const st = new Array(s.length); let k = 1; for (let i = s.length - 1; i >= 0; i--) { st[i] = k; k *= s[i]; } return st; };
const unravel = (i, s) => { const idx = new Array(s.length); for (let d = s.length - 1; d >= 0; d--) { idx[d] = i % s[d]; i = Math.floor(i / s[d]); } return idx; };
const T = (shape, data) => ({ shape, data: data ?? new Float64Array(numel(shape)) });
const at = (t, idx) => { const st = strides(t.shape); let o = 0; idx.forEach((v, d) => { o += v * st[d]; }); return t.data[o]; };

function bcastGet(t, outIdx) {
  const r = t.shape.length; const off = outIdx.length - r;
  const idx = t.shape.map((d, i) => (d === 1 ? 0 : outIdx[off + i]));
  return at(t, idx);
}
function bshape(a, b) { const n = Math.max(a.length, b.length); const o = []; for (let i = 0; i < n; i++) { const x = a[a.length - n + i] ?? 1; const y = b[b.length - n + i] ?? 1; o.push(x === 1 ? y : x); } return o; }
function map2(a, b, f) { const s = bshape(a.shape, b.shape); const o = T(s); for (let i = 0; i < o.data.length; i++) { const idx = unravel(i, s); o.data[i] = f(bcastGet(a, idx), bcastGet(b, idx)); } return o; }
const map1 = (a, f) => T(a.shape, a.data.map(f));
const ACT = { NONE: (x) => x, RELU: (x) => Math.max(0, x), RELU6: (x) => Math.min(6, Math.max(0, x)), RELU_N1_TO_1: (x) => Math.min(1, Math.max(-1, x)), TANH: Math.tanh };
let tanhIgnored = false; // per evaluation (evaluateModel option fusedTanhIgnored)
const act = (t, a) => map1(t, a === 'TANH' && tanhIgnored ? ACT.NONE : ACT[a ?? 'NONE']);
const pads = (inp, k, s, d, padding, out) => (padding === 'VALID' ? 0 : Math.floor(Math.max((out - 1) * s + (k - 1) * d + 1 - inp, 0) / 2));

function conv(x, w, b, o) {
  const [n, h, wd, ci] = x.shape; const [co, kh, kw] = w.shape;
  const sh = o.stride_h; const sw = o.stride_w; const dh = o.dilation_h_factor; const dw = o.dilation_w_factor;
  const oh = o.padding === 'SAME' ? Math.ceil(h / sh) : Math.floor((h - (kh - 1) * dh - 1) / sh) + 1;
  const ow = o.padding === 'SAME' ? Math.ceil(wd / sw) : Math.floor((wd - (kw - 1) * dw - 1) / sw) + 1;
  const pt = pads(h, kh, sh, dh, o.padding, oh); const pl = pads(wd, kw, sw, dw, o.padding, ow);
  const out = T([n, oh, ow, co]);
  for (let bb = 0; bb < n; bb++) for (let y = 0; y < oh; y++) for (let xx = 0; xx < ow; xx++) for (let c = 0; c < co; c++) {
    let s = b ? b.data[c] : 0;
    for (let ky = 0; ky < kh; ky++) for (let kx = 0; kx < kw; kx++) {
      const iy = y * sh + ky * dh - pt; const ix = xx * sw + kx * dw - pl;
      if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
      for (let k = 0; k < ci; k++) s += at(x, [bb, iy, ix, k]) * at(w, [c, ky, kx, k]);
    }
    out.data[((bb * oh + y) * ow + xx) * co + c] = s;
  }
  return act(out, o.fused_activation_function);
}
function dwconv(x, w, b, o) {
  const [n, h, wd, ci] = x.shape; const [, kh, kw, co] = w.shape; const m = co / ci;
  const s = o.stride_h; const d = o.dilation_h_factor;
  const oh = o.padding === 'SAME' ? Math.ceil(h / s) : Math.floor((h - (kh - 1) * d - 1) / s) + 1;
  const ow = o.padding === 'SAME' ? Math.ceil(wd / s) : Math.floor((wd - (kw - 1) * d - 1) / s) + 1;
  const pt = pads(h, kh, s, d, o.padding, oh); const pl = pads(wd, kw, s, d, o.padding, ow);
  const out = T([n, oh, ow, co]);
  for (let bb = 0; bb < n; bb++) for (let y = 0; y < oh; y++) for (let xx = 0; xx < ow; xx++) for (let c = 0; c < co; c++) {
    let acc = b.data[c]; const ic = Math.floor(c / m);
    for (let ky = 0; ky < kh; ky++) for (let kx = 0; kx < kw; kx++) {
      const iy = y * s + ky * d - pt; const ix = xx * s + kx * d - pl;
      if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
      acc += at(x, [bb, iy, ix, ic]) * at(w, [0, ky, kx, c]);
    }
    out.data[((bb * oh + y) * ow + xx) * co + c] = acc;
  }
  return act(out, o.fused_activation_function);
}
function tconv(shapeT, w, x, b, o) {
  const [n, oh, ow, co] = Array.from(shapeT.data); const [, kh, kw, ci] = w.shape; const [, h, wd] = x.shape; const s = o.stride_h;
  // TFLite: padding from a conv of the output with the same params.
  const convOut = (sz, k) => (o.padding === 'SAME' ? Math.ceil(sz / s) : Math.floor((sz - k) / s) + 1);
  const pt = o.padding === 'VALID' ? 0 : Math.floor(Math.max((convOut(oh, kh) - 1) * s + kh - oh, 0) / 2);
  const pl = o.padding === 'VALID' ? 0 : Math.floor(Math.max((convOut(ow, kw) - 1) * s + kw - ow, 0) / 2);
  const out = T([n, oh, ow, co]);
  for (let bb = 0; bb < n; bb++) for (let iy = 0; iy < h; iy++) for (let ix = 0; ix < wd; ix++) for (let ky = 0; ky < kh; ky++) for (let kx = 0; kx < kw; kx++) {
    const y = iy * s + ky - pt; const xx = ix * s + kx - pl;
    if (y < 0 || y >= oh || xx < 0 || xx >= ow) continue;
    for (let c = 0; c < co; c++) {
      let acc = 0;
      for (let k = 0; k < ci; k++) acc += at(x, [bb, iy, ix, k]) * at(w, [c, ky, kx, k]);
      out.data[((bb * oh + y) * ow + xx) * co + c] += acc;
    }
  }
  if (b) for (let i = 0; i < out.data.length; i++) out.data[i] += b.data[i % co];
  return out;
}
function fc(x, w, b, o, outShape) {
  const [u, k] = w.shape; const rows = numel(x.shape) / k; const out = T(outShape);
  for (let r = 0; r < rows; r++) for (let j = 0; j < u; j++) {
    let s = b ? b.data[j] : 0;
    for (let i = 0; i < k; i++) s += x.data[r * k + i] * w.data[j * k + i];
    out.data[r * u + j] = s;
  }
  return act(out, o.fused_activation_function);
}
function bmm(a, b, o, outShape) {
  const out = T(outShape); const r = outShape.length;
  const M = outShape[r - 2]; const N = outShape[r - 1]; const K = o.adj_x ? a.shape[a.shape.length - 2] : a.shape[a.shape.length - 1];
  for (let i = 0; i < out.data.length; i++) {
    const idx = unravel(i, outShape); const bi = idx.slice(0, -2); const m = idx[r - 2]; const nn = idx[r - 1];
    let s = 0;
    for (let k = 0; k < K; k++) {
      const ai = o.adj_x ? [...bi, k, m] : [...bi, m, k];
      const bj = o.adj_y ? [...bi, nn, k] : [...bi, k, nn];
      s += bcastGet(a, ai) * bcastGet(b, bj);
    }
    out.data[i] = s;
  }
  return out;
}
function pool(x, o, avg) {
  const [n, h, wd, c] = x.shape; const fh = o.filter_height; const fw = o.filter_width; const sh = o.stride_h; const sw = o.stride_w;
  const oh = o.padding === 'SAME' ? Math.ceil(h / sh) : Math.floor((h - fh) / sh) + 1;
  const ow = o.padding === 'SAME' ? Math.ceil(wd / sw) : Math.floor((wd - fw) / sw) + 1;
  const pt = pads(h, fh, sh, 1, o.padding, oh); const pl = pads(wd, fw, sw, 1, o.padding, ow);
  const out = T([n, oh, ow, c]);
  for (let bb = 0; bb < n; bb++) for (let y = 0; y < oh; y++) for (let xx = 0; xx < ow; xx++) for (let ch = 0; ch < c; ch++) {
    let s = avg ? 0 : -Infinity; let cnt = 0;
    for (let ky = 0; ky < fh; ky++) for (let kx = 0; kx < fw; kx++) {
      const iy = y * sh + ky - pt; const ix = xx * sw + kx - pl;
      if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
      const v = at(x, [bb, iy, ix, ch]); cnt++;
      s = avg ? s + v : Math.max(s, v);
    }
    out.data[((bb * oh + y) * ow + xx) * c + ch] = avg ? s / cnt : s;
  }
  return act(out, o.fused_activation_function);
}
function reduce(x, axesT, o, kind, outShape) {
  const r = x.shape.length; const axes = new Set(Array.from(axesT.data, (a) => (a < 0 ? a + r : a)));
  const out = T(outShape); const cnt = new Float64Array(out.data.length);
  const init = { MEAN: 0, SUM: 0, REDUCE_MAX: -Infinity, REDUCE_MIN: Infinity }[kind];
  out.data.fill(init);
  const redShape = x.shape.map((d, i) => (axes.has(i) ? 1 : d));
  const rst = strides(redShape);
  for (let i = 0; i < x.data.length; i++) {
    const idx = unravel(i, x.shape); let oi = 0; idx.forEach((v, d) => { if (!axes.has(d)) oi += v * rst[d]; });
    const v = x.data[i];
    if (kind === 'REDUCE_MAX') out.data[oi] = Math.max(out.data[oi], v);
    else if (kind === 'REDUCE_MIN') out.data[oi] = Math.min(out.data[oi], v);
    else out.data[oi] += v;
    cnt[oi]++;
  }
  if (kind === 'MEAN') for (let i = 0; i < out.data.length; i++) out.data[i] /= cnt[i];
  return out;
}
function softmax(x, beta) {
  const n = x.shape[x.shape.length - 1]; const out = T(x.shape);
  for (let r = 0; r < x.data.length / n; r++) {
    let mx = -Infinity; for (let i = 0; i < n; i++) mx = Math.max(mx, x.data[r * n + i]);
    let s = 0; for (let i = 0; i < n; i++) { out.data[r * n + i] = Math.exp(beta * (x.data[r * n + i] - mx)); s += out.data[r * n + i]; }
    for (let i = 0; i < n; i++) out.data[r * n + i] /= s;
  }
  return out;
}
const f = Math.fround;
function resize(x, sizeT, o, bilinear) {
  const [n, h, w, c] = x.shape; const [oh, ow] = Array.from(sizeT.data);
  const ac = !!o.align_corners; const hp = !!o.half_pixel_centers;
  const scale = (i, oo) => f(ac && oo > 1 ? (i - 1) / (oo - 1) : i / oo);
  const shh = scale(h, oh); const sww = scale(w, ow);
  const out = T([n, oh, ow, c]);
  for (let bb = 0; bb < n; bb++) for (let y = 0; y < oh; y++) for (let xx = 0; xx < ow; xx++) for (let ch = 0; ch < c; ch++) {
    let v;
    if (bilinear) {
      const iyf = hp ? f(f((y + 0.5) * shh) - 0.5) : f(y * shh);
      const ixf = hp ? f(f((xx + 0.5) * sww) - 0.5) : f(xx * sww);
      const y0 = Math.max(Math.floor(iyf), 0); const y1 = Math.min(Math.ceil(iyf), h - 1);
      const x0 = Math.max(Math.floor(ixf), 0); const x1 = Math.min(Math.ceil(ixf), w - 1);
      const dy = iyf - y0; const dx = ixf - x0;
      v = at(x, [bb, y0, x0, ch]) * (1 - dy) * (1 - dx) + at(x, [bb, y1, x0, ch]) * dy * (1 - dx)
        + at(x, [bb, y0, x1, ch]) * (1 - dy) * dx + at(x, [bb, y1, x1, ch]) * dy * dx;
    } else {
      const off = hp ? 0.5 : 0;
      const rnd = (z) => (z < 0 ? -Math.round(-z) : Math.round(z)); // half away from zero for z >= 0 same as Math.round
      const pick = (o2, s, size) => {
        const z = f((o2 + off) * s);
        let i = Math.min(ac ? rnd(z) : Math.floor(z), size - 1);
        if (hp) i = Math.max(0, i);
        return i;
      };
      v = at(x, [bb, pick(y, shh, h), pick(xx, sww, w), ch]);
    }
    out.data[((bb * oh + y) * ow + xx) * c + ch] = v;
  }
  return out;
}
function stridedSlice(x, bT, eT, sT, o, outShape) {
  const shape = x.shape; const begin = Array.from(bT.data); const end = Array.from(eT.data); const st = Array.from(sT.data);
  const bit = (m, i) => ((m ?? 0) >> i) & 1;
  const spec = [];
  for (let i = 0; i < begin.length; i++) {
    if (bit(o.ellipsis_mask, i)) { for (let k = 0; k < shape.length - (begin.length - 1); k++) spec.push({ s: 1, bm: 1, em: 1 }); }
    else spec.push({ b: begin[i], e: end[i], s: st[i], bm: bit(o.begin_mask, i), em: bit(o.end_mask, i), sh: bit(o.shrink_axis_mask, i) });
  }
  while (spec.length < shape.length) spec.push({ s: 1, bm: 1, em: 1 });
  const ranges = spec.map((d, i) => {
    const D = shape[i]; const norm = (v) => (v < 0 ? v + D : v); const cl = (v, lo, hi) => Math.min(Math.max(v, lo), hi);
    if (d.sh) { return [norm(d.b)]; }
    const r = [];
    if (d.s > 0) { const b = d.bm ? 0 : cl(norm(d.b), 0, D); const e = d.em ? D : cl(norm(d.e), 0, D); for (let k = b; k < e; k += d.s) r.push(k); }
    else { const b = d.bm ? D - 1 : cl(norm(d.b), -1, D - 1); const e = d.em ? -1 : cl(norm(d.e), -1, D - 1); for (let k = b; k > e; k += d.s) r.push(k); }
    return r;
  });
  const out = T(outShape); const full = ranges.map((r) => r.length);
  for (let i = 0; i < out.data.length; i++) { const idx = unravel(i, full); out.data[i] = at(x, idx.map((v, d) => ranges[d][v])); }
  return out;
}

// Three-way broadcast (SELECT_V2).
function map3(a, b, c, f) {
  const s = bshape(bshape(a.shape, b.shape), c.shape); const o = T(s);
  for (let i = 0; i < o.data.length; i++) { const idx = unravel(i, s); o.data[i] = f(bcastGet(a, idx), bcastGet(b, idx), bcastGet(c, idx)); }
  return o;
}
// Round half to even (TFLite ROUND, reference/round.h RoundToNearest).
function roundHalfEven(x) {
  if (!Number.isFinite(x)) return x;
  const f = Math.floor(x); const d = x - f;
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}
// FLOOR_MOD (floor_mod.cc): the remainder with the divisor's sign.
function floorMod(x, y) {
  const r = x % y; // C fmod, exact
  return r !== 0 && (y < 0) !== (r < 0) ? r + y : r;
}
const bool = (v) => (v ? 1 : 0);
// CAST (cast.cc): static_cast per element; float -> int truncates, x -> bool is x != 0.
function cast(x, dtype) {
  if (dtype === 'bool') return bool(x !== 0);
  if (dtype === 'int32') return Math.trunc(x);
  return x;
}

// Data movement and shape operators (TFLite pack.cc, unpack.cc, split.cc,
// split_v.cc, shape.cc, broadcast_to.cc, broadcast_args.cc, fill.cc,
// reference/depth_to_space.h, space_to_depth.h, arg_min_max.h,
// log_softmax.h). Multi-output ones return one tensor per output.
const normAxis = (axis, rank) => (axis < 0 ? axis + rank : axis);
function pack(ins, o, outShape) {
  const ax = normAxis(o.axis ?? 0, outShape.length); const out = T(outShape);
  for (let i = 0; i < out.data.length; i++) { const idx = unravel(i, outShape); const k = idx[ax]; idx.splice(ax, 1); out.data[i] = at(ins[k], idx); }
  return out;
}
// Consecutive parts of x along axis, sizes[k] elements each.
function splitParts(x, axis, sizes) {
  const ax = normAxis(axis, x.shape.length); let offset = 0;
  return sizes.map((n) => {
    const shape = [...x.shape]; shape[ax] = n; const out = T(shape); const from = offset;
    for (let i = 0; i < out.data.length; i++) { const idx = unravel(i, shape); idx[ax] += from; out.data[i] = at(x, idx); }
    offset += n;
    return out;
  });
}
function splitV(x, sizesT, axisT) {
  const ax = normAxis(axisT.data[0], x.shape.length); const sizes = Array.from(sizesT.data);
  const open = sizes.indexOf(-1);
  if (open >= 0) sizes[open] = x.shape[ax] - sizes.reduce((s, v, k) => s + (k === open ? 0 : v), 0);
  return splitParts(x, ax, sizes);
}
function argMinMax(x, axisT, outShape, isMax) {
  const ax = normAxis(axisT.data[0], x.shape.length); const out = T(outShape);
  for (let i = 0; i < out.data.length; i++) {
    const idx = unravel(i, outShape); let best = 0; let bestV;
    for (let k = 0; k < x.shape[ax]; k++) {
      const src = [...idx]; src.splice(ax, 0, k); const v = at(x, src);
      if (k === 0 || (isMax ? v > bestV : v < bestV)) { best = k; bestV = v; } // ties: the first index
    }
    out.data[i] = best;
  }
  return out;
}
function depthToSpace(x, bs, outShape) {
  const oc = outShape[3]; const out = T(outShape);
  for (let i = 0; i < out.data.length; i++) {
    const [n, y, xx, c] = unravel(i, outShape);
    out.data[i] = at(x, [n, Math.floor(y / bs), Math.floor(xx / bs), ((y % bs) * bs + (xx % bs)) * oc + c]);
  }
  return out;
}
function spaceToDepth(x, bs, outShape) {
  const ic = x.shape[3]; const out = T(outShape);
  for (let i = 0; i < out.data.length; i++) {
    const [n, y, xx, c] = unravel(i, outShape); const blk = Math.floor(c / ic);
    out.data[i] = at(x, [n, y * bs + Math.floor(blk / bs), xx * bs + (blk % bs), c % ic]);
  }
  return out;
}
function logSoftmax(x) {
  const depth = x.shape[x.shape.length - 1]; const out = T(x.shape);
  for (let r = 0; r < x.data.length / depth; r++) {
    const row = x.data.subarray(r * depth, (r + 1) * depth); const m = Math.max(...row);
    const lse = Math.log(row.reduce((s, v) => s + Math.exp(v - m), 0));
    for (let k = 0; k < depth; k++) out.data[r * depth + k] = row[k] - m - lse;
  }
  return out;
}

function l2Normalize(x) {
  const depth = x.shape[x.shape.length - 1]; const out = T(x.shape);
  for (let r = 0; r < x.data.length / depth; r++) {
    const row = x.data.subarray(r * depth, (r + 1) * depth);
    const norm = Math.max(Math.sqrt(row.reduce((s, v) => s + v * v, 0)), 1e-6); // l2normalization.h epsilon
    for (let k = 0; k < depth; k++) out.data[r * depth + k] = row[k] / norm;
  }
  return out;
}
function gatherNd(params, idx, outShape) {
  const m = idx.shape[idx.shape.length - 1]; const lead = idx.shape.length - 1; const out = T(outShape);
  for (let i = 0; i < out.data.length; i++) {
    const o = unravel(i, outShape); const tuple = [];
    for (let j = 0; j < m; j++) tuple.push(at(idx, [...o.slice(0, lead), j]));
    out.data[i] = at(params, [...tuple, ...o.slice(lead)]);
  }
  return out;
}

// CUMSUM (cumsum.cc): running sums along `axis`, accumulated in order
// (reverse: from the end; exclusive: each sum leaves its own element out).
function cumsum(x, axis, exclusive, reverse) {
  const out = T(x.shape); const k = x.shape[axis];
  const inner = numel(x.shape.slice(axis + 1)); const outer = numel(x.shape.slice(0, axis));
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) {
      let acc = 0;
      for (let j = 0; j < k; j++) {
        const idx = (o * k + (reverse ? k - 1 - j : j)) * inner + i;
        if (exclusive) { out.data[idx] = acc; acc += x.data[idx]; } else { acc += x.data[idx]; out.data[idx] = acc; }
      }
    }
  }
  return out;
}

// SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND on [N, spatial..., C] (1 or 2
// spatial dims): batch b = (i * bw + j) * N + n holds padded position
// (y * bh + i, x * bw + j) of image n.
function spaceToBatch(x, block, pads, outShape) {
  const s2 = x.shape.length === 4; const n = x.shape[0]; const out = T(outShape);
  const [bh, bw] = s2 ? block : [block[0], 1];
  for (let i = 0; i < out.data.length; i++) {
    const o = unravel(i, outShape); const b = o[0]; const nn = b % n; const blk = Math.floor(b / n);
    const y = o[1] * bh + Math.floor(blk / bw) - pads[0]; const xx = s2 ? o[2] * bw + (blk % bw) - pads[2] : 0;
    const inside = y >= 0 && y < x.shape[1] && (!s2 || (xx >= 0 && xx < x.shape[2]));
    out.data[i] = inside ? at(x, s2 ? [nn, y, xx, o[3]] : [nn, y, o[2]]) : 0;
  }
  return out;
}
function batchToSpace(x, block, crops, outShape) {
  const s2 = x.shape.length === 4; const out = T(outShape); const n = outShape[0];
  const [bh, bw] = s2 ? block : [block[0], 1];
  for (let i = 0; i < out.data.length; i++) {
    const o = unravel(i, outShape); const y = o[1] + crops[0]; const xx = s2 ? o[2] + crops[2] : 0;
    const b = ((y % bh) * bw + (xx % bw)) * n + o[0];
    out.data[i] = at(x, s2 ? [b, Math.floor(y / bh), Math.floor(xx / bw), o[3]] : [b, Math.floor(y / bh), o[2]]);
  }
  return out;
}

function evalOp(op, ins, o, outShape, outDtype, outShapes) {
  const [a, b, c, d] = ins;
  switch (op.op) {
    case 'EQUAL': return map2(a, b, (x, y) => bool(x === y));
    case 'NOT_EQUAL': return map2(a, b, (x, y) => bool(x !== y));
    case 'GREATER': return map2(a, b, (x, y) => bool(x > y));
    case 'GREATER_EQUAL': return map2(a, b, (x, y) => bool(x >= y));
    case 'LESS': return map2(a, b, (x, y) => bool(x < y));
    case 'LESS_EQUAL': return map2(a, b, (x, y) => bool(x <= y));
    case 'LOGICAL_AND': return map2(a, b, (x, y) => bool(x && y));
    case 'LOGICAL_OR': return map2(a, b, (x, y) => bool(x || y));
    case 'LOGICAL_NOT': return map1(a, (x) => bool(!x));
    case 'SELECT_V2': return map3(a, b, c, (p, x, y) => (p ? x : y));
    case 'SELECT': {
      // Same shapes, or a rank-1 condition choosing slices along dimension 0.
      const out = T(outShape);
      for (let i = 0; i < out.data.length; i++) {
        const idx = unravel(i, outShape);
        const p = a.shape.length === 1 && outShape.length > 1 ? a.data[idx[0]] : a.data[i];
        out.data[i] = p ? b.data[i] : c.data[i];
      }
      return out;
    }
    case 'CAST': return map1(a, (x) => cast(x, outDtype));
    case 'FLOOR': return map1(a, Math.floor);
    case 'CEIL': return map1(a, Math.ceil);
    case 'ROUND': return map1(a, roundHalfEven);
    case 'SQUARE': return map1(a, (x) => x * x);
    case 'SIN': return map1(a, Math.sin);
    case 'COS': return map1(a, Math.cos);
    case 'ELU': return map1(a, (x) => (x < 0 ? Math.expm1(x) : x));
    case 'ZEROS_LIKE': return T(a.shape);
    case 'FLOOR_DIV': return map2(a, b, (x, y) => Math.floor(x / y));
    case 'FLOOR_MOD': return map2(a, b, floorMod);
    case 'ADD_N': return T(outShape, ins.reduce((acc, t) => acc.map((v, i) => v + t.data[i]), new Float64Array(numel(outShape))));
    case 'PACK': return pack(ins, o, outShape);
    case 'UNPACK': return outShapes.map((s, k) => T(s, splitParts(a, o.axis ?? 0, outShapes.map(() => 1))[k].data));
    case 'SPLIT': { const n = o.num_splits; const ax = normAxis(a.data[0], b.shape.length); return splitParts(b, ax, new Array(n).fill(b.shape[ax] / n)); }
    case 'SPLIT_V': return splitV(a, b, c);
    case 'SHAPE': return T([a.shape.length], Float64Array.from(a.shape));
    case 'BROADCAST_ARGS': return T(outShape, Float64Array.from(bshape(Array.from(a.data), Array.from(b.data))));
    case 'BROADCAST_TO': { const out = T(outShape); for (let i = 0; i < out.data.length; i++) out.data[i] = bcastGet(a, unravel(i, outShape)); return out; }
    case 'FILL': return T(outShape, new Float64Array(numel(outShape)).fill(b.data[0]));
    case 'ARG_MAX': return argMinMax(a, b, outShape, true);
    case 'ARG_MIN': return argMinMax(a, b, outShape, false);
    case 'DEPTH_TO_SPACE': return depthToSpace(a, o.block_size, outShape);
    case 'SPACE_TO_DEPTH': return spaceToDepth(a, o.block_size, outShape);
    case 'LOG_SOFTMAX': return logSoftmax(a);
    case 'L2_NORMALIZATION': return l2Normalize(a);
    case 'REVERSE_V2': {
      const axes = new Set(Array.from(b.data, (v) => normAxis(v, a.shape.length))); const out = T(a.shape);
      for (let i = 0; i < out.data.length; i++) out.data[i] = at(a, unravel(i, a.shape).map((q, dd) => (axes.has(dd) ? a.shape[dd] - 1 - q : q)));
      return out;
    }
    case 'GATHER_ND': return gatherNd(a, b, outShape);
    case 'CUMSUM': return cumsum(a, normAxis(b.data[0], a.shape.length), !!o.exclusive, !!o.reverse);
    case 'EMBEDDING_LOOKUP': { const out = T(outShape); const row = numel(outShape.slice(1)); for (let i = 0; i < out.data.length; i++) out.data[i] = b.data[a.data[Math.floor(i / row)] * row + (i % row)]; return out; }
    case 'L2_POOL_2D': return act(map1(pool(map1(a, (v) => v * v), { ...o, fused_activation_function: 'NONE' }, true), Math.sqrt), o.fused_activation_function);
    case 'SPACE_TO_BATCH_ND': return spaceToBatch(a, Array.from(b.data), Array.from(c.data), outShape);
    case 'BATCH_TO_SPACE_ND': return batchToSpace(a, Array.from(b.data), Array.from(c.data), outShape);
    case 'CONV_2D': return conv(a, b, c, o);
    case 'DEPTHWISE_CONV_2D': return dwconv(a, b, c, o);
    case 'TRANSPOSE_CONV': return tconv(a, b, c, d, o);
    case 'FULLY_CONNECTED': return fc(a, b, c, o, outShape);
    case 'BATCH_MATMUL': return bmm(a, b, o, outShape);
    case 'ADD': return act(map2(a, b, (x, y) => x + y), o.fused_activation_function);
    case 'SUB': return act(map2(a, b, (x, y) => x - y), o.fused_activation_function);
    case 'MUL': return act(map2(a, b, (x, y) => x * y), o.fused_activation_function);
    case 'DIV': return act(map2(a, b, (x, y) => x / y), o.fused_activation_function);
    case 'MAXIMUM': return map2(a, b, Math.max);
    case 'MINIMUM': return map2(a, b, Math.min);
    case 'SQUARED_DIFFERENCE': return map2(a, b, (x, y) => (x - y) ** 2);
    case 'POW': return map2(a, b, (x, y) => x ** y);
    case 'PRELU': return map2(a, b, (x, al) => (x >= 0 ? x : al * x));
    case 'RELU': case 'RELU6': case 'RELU_N1_TO_1': return act(a, op.op);
    case 'TANH': return map1(a, Math.tanh);
    case 'LOGISTIC': return map1(a, (x) => 1 / (1 + Math.exp(-x)));
    case 'LEAKY_RELU': return map1(a, (x) => (x >= 0 ? x : o.alpha * x));
    case 'HARD_SWISH': return map1(a, (x) => (x * Math.min(6, Math.max(0, x + 3))) / 6);
    case 'EXP': return map1(a, Math.exp);
    case 'LOG': return map1(a, Math.log);
    case 'NEG': return map1(a, (x) => -x);
    case 'ABS': return map1(a, Math.abs);
    case 'SQRT': return map1(a, Math.sqrt);
    case 'RSQRT': return map1(a, (x) => 1 / Math.sqrt(x));
    case 'MAX_POOL_2D': return pool(a, o, false);
    case 'AVERAGE_POOL_2D': return pool(a, o, true);
    case 'MEAN': case 'SUM': case 'REDUCE_MAX': case 'REDUCE_MIN': return reduce(a, b, o, op.op, outShape);
    // REDUCE_ALL (reduce.cc EvalLogic): the AND of bools, the minimum of 0/1.
    case 'REDUCE_ALL': return reduce(a, b, o, 'REDUCE_MIN', outShape);
    case 'DYNAMIC_UPDATE_SLICE': {
      // dynamic_update_slice.cc: start clamped to [0, operand - update] per dimension.
      const st = a.shape.map((dd, k) => Math.min(Math.max(0, Number(c.data[k])), dd - b.shape[k])); const out = T(a.shape, Float64Array.from(a.data));
      for (let i = 0; i < b.data.length; i++) { const idx = unravel(i, b.shape).map((q, k) => q + st[k]); out.data[idx.reduce((f, q, k) => f * a.shape[k] + q, 0)] = b.data[i]; }
      return out;
    }
    case 'SOFTMAX': return softmax(a, o.beta);
    case 'RESHAPE': case 'SQUEEZE': case 'EXPAND_DIMS': case 'DEQUANTIZE': case 'DENSIFY': return T(outShape, a.data);
    case 'TRANSPOSE': {
      const perm = Array.from(b.data); const out = T(outShape);
      for (let i = 0; i < out.data.length; i++) { const idx = unravel(i, outShape); const src = new Array(perm.length); perm.forEach((p, k) => { src[p] = idx[k]; }); out.data[i] = at(a, src); }
      return out;
    }
    case 'CONCATENATION': {
      const r = outShape.length; const ax = o.axis < 0 ? o.axis + r : o.axis; const out = T(outShape);
      for (let i = 0; i < out.data.length; i++) {
        const idx = unravel(i, outShape); let k = idx[ax]; let t = 0;
        while (k >= ins[t].shape[ax]) { k -= ins[t].shape[ax]; t++; }
        const src = [...idx]; src[ax] = k; out.data[i] = at(ins[t], src);
      }
      return act(out, o.fused_activation_function);
    }
    case 'PAD': case 'PADV2': {
      const p = Array.from(b.data); const out = T(outShape); const v = op.op === 'PADV2' ? c.data[0] : 0;
      for (let i = 0; i < out.data.length; i++) {
        const idx = unravel(i, outShape); const src = idx.map((q, dd) => q - p[2 * dd]);
        out.data[i] = src.every((q, dd) => q >= 0 && q < a.shape[dd]) ? at(a, src) : v;
      }
      return out;
    }
    case 'MIRROR_PAD': {
      // REFLECT mirrors without the edge element (needs pad <= dim - 1),
      // SYMMETRIC with it (pad <= dim); TFLite mirror_pad.cc, TF MirrorPad.
      const p = Array.from(b.data); const sym = (o.mode ?? 'REFLECT') === 'SYMMETRIC'; const out = T(outShape);
      const src = (q, D) => (q < 0 ? (sym ? -q - 1 : -q) : q >= D ? (sym ? 2 * D - 1 - q : 2 * D - 2 - q) : q);
      for (let i = 0; i < out.data.length; i++) out.data[i] = at(a, unravel(i, outShape).map((q, dd) => src(q - p[2 * dd], a.shape[dd])));
      return out;
    }
    case 'SLICE': {
      const bg = Array.from(b.data); const out = T(outShape);
      for (let i = 0; i < out.data.length; i++) out.data[i] = at(a, unravel(i, outShape).map((q, dd) => q + bg[dd]));
      return out;
    }
    case 'STRIDED_SLICE': return stridedSlice(a, b, c, d, o, outShape);
    case 'GATHER': {
      const r = a.shape.length; const ax = o.axis < 0 ? o.axis + r : o.axis; const ir = b.shape.length; const out = T(outShape);
      for (let i = 0; i < out.data.length; i++) {
        const idx = unravel(i, outShape); const ii = at(b, idx.slice(ax, ax + ir));
        out.data[i] = at(a, [...idx.slice(0, ax), ii, ...idx.slice(ax + ir)]);
      }
      return out;
    }
    case 'RESIZE_BILINEAR': return resize(a, b, o, true);
    case 'RESIZE_NEAREST_NEIGHBOR': return resize(a, b, o, false);
    default: throw new Error(`no evaluator for ${op.op}`);
  }
}


// Evaluates subgraph `sg` ({ tensors: [{ shape, dtype, data? }], operators:
// [{ op, inputs, outputs, options? }], inputs, outputs }, as parseTflite or
// make_op_cases' Graph.spec() give it) on `inputs` (one { shape, data } per
// subgraph input, in subgraph order). Returns one { shape, data: Float64Array
// of float32 values } per subgraph output, in subgraph order. Throws when an
// operator has no evaluator or computes a shape other than the declared one.
export function evaluateModel(sg, inputs, { fusedTanhIgnored = false } = {}) {
  tanhIgnored = fusedTanhIgnored;
  const vals = sg.tensors.map((t) => {
    if (t.data) return T(t.shape, Float64Array.from(t.dtype === 'float16' ? fromFloat16Bits(t.data) : t.data));
    return numel(t.shape) === 0 ? T(t.shape) : null; // empty constants have no buffer
  });
  sg.inputs.forEach((ti, k) => {
    const x = inputs[k];
    if (!x || x.shape.join() !== sg.tensors[ti].shape.join()) throw new Error(`input ${k}: want shape [${sg.tensors[ti].shape}]`);
    vals[ti] = T(x.shape, Float64Array.from(x.data));
  });
  for (const op of sg.operators) {
    const ins = op.inputs.map((i) => (i < 0 ? null : vals[i]));
    const outShapes = op.outputs.map((ti) => sg.tensors[ti].shape);
    const outDtypes = op.outputs.map((ti) => sg.tensors[ti].dtype ?? 'float32');
    const r = evalOp(op, ins, op.options ?? {}, outShapes[0], outDtypes[0], outShapes);
    (Array.isArray(r) ? r : [r]).forEach((t, k) => {
      if (t.shape.join() !== outShapes[k].join()) throw new Error(`${op.op}: computed shape [${t.shape}] for output ${k}, declared [${outShapes[k]}]`);
      // float32 between operators; int32 wraps; bool is 0 or 1 (int64 stays as computed).
      const dt = outDtypes[k];
      const store = dt === 'int32' ? (v) => v | 0 : dt === 'bool' ? (v) => (v ? 1 : 0) : dt === 'int64' ? (v) => v : Math.fround;
      vals[op.outputs[k]] = T(outShapes[k], t.data.map(store));
    });
  }
  return sg.outputs.map((ti) => {
    if (!vals[ti]) throw new Error(`output tensor ${ti} has no value`);
    return vals[ti];
  });
}

// Largest |ref - mine| / (1 + |ref|) and |ref - mine| over two equal-length
// arrays (NaN anywhere counts as Infinity).
export function compareValues(ref, mine) {
  if (ref.length !== mine.length) return { scaled: Infinity, abs: Infinity };
  let scaled = 0; let abs = 0;
  for (let i = 0; i < ref.length; i++) {
    const d = Math.abs(ref[i] - mine[i]);
    const e = Number.isNaN(d) ? Infinity : d;
    abs = Math.max(abs, e); scaled = Math.max(scaled, e / (1 + Math.abs(ref[i])));
  }
  return { scaled, abs };
}

// The tolerance within which the TFLite interpreter and evaluateModel agree
// on every case that is not a listed reference bug.
export const AGREEMENT_TOLERANCE = 1e-5;
