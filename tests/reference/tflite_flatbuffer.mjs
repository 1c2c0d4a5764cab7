// Tiny read-only view of a .tflite flatbuffer: the main subgraph's tensors
// (with constant data), operators (builtin options decoded with the tables of
// tflite_builder.mjs) and declared inputs/outputs, and the signature defs, so
// the reference scripts can check the interpreter's I/O order against the
// model file and op_eval.mjs can evaluate any small model file
// independently. Field ids follow tensorflow/lite/schema/schema.fbs.

import { BUILTIN, BUILTIN_OPTIONS_UNION, ENUMS, OPTIONS } from './tflite_builder.mjs';
import { densify } from './sparsity.mjs';

const BUILTIN_NAMES = Object.fromEntries(Object.entries(BUILTIN).map(([k, v]) => [v, k]));
const TYPED = { float32: Float32Array, int32: Int32Array, float16: Uint16Array, int8: Int8Array, uint8: Uint8Array, int16: Int16Array, bool: Uint8Array, float64: Float64Array };

const TENSOR_TYPES = [
  'float32', 'float16', 'int32', 'uint8', 'int64', 'string', 'bool', 'int16',
  'complex64', 'int8', 'float64', 'complex128', 'uint64', 'resource', 'variant',
  'uint32', 'uint16', 'int4',
];

export class Table {
  constructor(view, pos) {
    this.v = view;
    this.pos = pos;
    this.vt = pos - view.getInt32(pos, true);
    this.vtLen = view.getUint16(this.vt, true);
  }
  off(field) {
    const o = 4 + 2 * field;
    if (o >= this.vtLen) return 0;
    return this.v.getUint16(this.vt + o, true);
  }
  has(field) { return this.off(field) !== 0; }
  u32(field, dflt = 0) { const o = this.off(field); return o ? this.v.getUint32(this.pos + o, true) : dflt; }
  i32(field, dflt = 0) { const o = this.off(field); return o ? this.v.getInt32(this.pos + o, true) : dflt; }
  i8(field, dflt = 0) { const o = this.off(field); return o ? this.v.getInt8(this.pos + o) : dflt; }
  u8(field, dflt = 0) { const o = this.off(field); return o ? this.v.getUint8(this.pos + o) : dflt; }
  f32(field, dflt = 0) { const o = this.off(field); return o ? this.v.getFloat32(this.pos + o, true) : dflt; }
  bool(field) { return this.i8(field, 0) !== 0; }
  indirect(field) {
    const o = this.off(field);
    if (!o) return 0;
    const at = this.pos + o;
    return at + this.v.getUint32(at, true);
  }
  table(field) { const p = this.indirect(field); return p ? new Table(this.v, p) : null; }
  str(field) {
    const p = this.indirect(field);
    if (!p) return null;
    const n = this.v.getUint32(p, true);
    return Buffer.from(this.v.buffer, this.v.byteOffset + p + 4, n).toString('utf8');
  }
  vecLen(field) { const p = this.indirect(field); return p ? this.v.getUint32(p, true) : 0; }
  i32Vec(field) {
    const p = this.indirect(field);
    if (!p) return [];
    const n = this.v.getUint32(p, true);
    const out = [];
    for (let i = 0; i < n; i++) out.push(this.v.getInt32(p + 4 + 4 * i, true));
    return out;
  }
  tableVec(field) {
    const p = this.indirect(field);
    if (!p) return [];
    const n = this.v.getUint32(p, true);
    const out = [];
    for (let i = 0; i < n; i++) {
      const at = p + 4 + 4 * i;
      out.push(new Table(this.v, at + this.v.getUint32(at, true)));
    }
    return out;
  }
}

// Decodes an operator's builtin options table with the field list of
// tflite_builder.mjs OPTIONS (enum fields come back as names: 'SAME', 'RELU6',
// 'REFLECT'). Fields the model omits are left out (TFLite's default applies).
function decodeOptions(type, t) {
  const name = BUILTIN_OPTIONS_UNION[type - 1];
  const fields = name && OPTIONS[name];
  if (!t || !fields) return name ? {} : undefined;
  const o = {};
  fields.forEach((f, id) => {
    if (!f || !t.has(id)) return;
    const [key, kind] = f;
    if (kind === 'vec_i32') o[key] = t.i32Vec(id);
    else if (kind === 'f32') o[key] = t.f32(id);
    else if (kind === 'bool') o[key] = t.bool(id);
    else if (kind === 'i32') o[key] = t.i32(id);
    else {
      const v = t.i8(id);
      const names = ENUMS[key] && Object.entries(ENUMS[key]).find(([, n]) => n === v);
      o[key] = names ? names[0] : v;
    }
  });
  return o;
}

// SparsityParameters (schema.fbs) in tflite_builder.mjs's form; each
// SparseIndexVector (Int32Vector 1, Uint16Vector 2, Uint8Vector 3) as a
// plain array, its type in indexType.
function readSparsity(sp) {
  const vector = (m, typeField, field) => {
    const type = m.u8(typeField, 0);
    const v = m.table(field);
    if (!v) return [];
    const p = v.indirect(0);
    if (!p) return [];
    const n = v.v.getUint32(p, true);
    const width = [0, 4, 2, 1][type];
    const get = (i) => (width === 4 ? v.v.getInt32(p + 4 + 4 * i, true) : width === 2 ? v.v.getUint16(p + 4 + 2 * i, true) : v.v.getUint8(p + 4 + i));
    return Array.from({ length: n }, (_, i) => get(i));
  };
  const dimMetadata = sp.tableVec(2).map((m) => (m.i8(0, 0) === 0 ? { format: 'DENSE', denseSize: m.i32(1, 0) }
    : { format: 'SPARSE_CSR', segments: vector(m, 2, 3), indices: vector(m, 4, 5), indexType: ['', 'int32', 'uint16', 'uint8'][m.u8(2, 0)] }));
  return { traversalOrder: sp.i32Vec(0), ...(sp.has(1) ? { blockMap: sp.i32Vec(1) } : {}), dimMetadata };
}

// Returns { version, subgraphs: [{ name, inputs, outputs, tensors: [{index,
// name, shape, dtype, buffer, constant, data?}], operators: [{ op, version,
// inputs, outputs, options? }] }], signatures: [{ key, subgraph, inputs:
// [{name, tensor}], outputs: [...] }] }. `data` is a typed array (float16:
// the raw Uint16 bits) for tensors with buffer data; `op` is the builtin name
// (or 'BUILTIN_<code>' for codes tflite_builder.mjs does not name).
// QuantizationParameters (schema fields 2 scale: [float], 3 zero_point:
// [long]): { scale, zeroPoint } arrays, or null when neither is given.
function readQuantization(q) {
  const vec = (field, size, get) => {
    const p = q.indirect(field);
    if (!p) return [];
    const n = q.v.getUint32(p, true);
    return Array.from({ length: n }, (_, i) => get(p + 4 + size * i));
  };
  const scale = vec(2, 4, (at) => q.v.getFloat32(at, true));
  const zeroPoint = vec(3, 8, (at) => Number(q.v.getBigInt64(at, true)));
  return scale.length || zeroPoint.length ? { scale, zeroPoint } : null;
}

export function parseTflite(bytes) {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes);
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const ident = buf.toString('latin1', 4, 8);
  if (ident !== 'TFL3') throw new Error(`not a TFLite flatbuffer (identifier "${ident}")`);
  const model = new Table(view, view.getUint32(0, true));
  const buffers = model.tableVec(4).map((b) => ({
    size: b.vecLen(0),
    start: b.vecLen(0) ? b.indirect(0) + 4 : 0,
    // Buffers > 2 GB-style models keep data outside the flatbuffer (offset/size, fields 1/2).
    external: b.has(1) && Number(view.getBigUint64(b.pos + b.off(1), true)) > 1,
  }));
  const codes = model.tableVec(1).map((c) => {
    const code = Math.max(c.i8(0, 0), c.i32(3, 0));
    return { op: c.str(1) !== null ? 'CUSTOM' : (BUILTIN_NAMES[code] ?? `BUILTIN_${code}`), version: c.i32(2, 1) };
  });
  const subgraphs = model.tableVec(2).map((sg) => {
    const tensors = sg.tableVec(0).map((t, index) => {
      const buffer = t.u32(2, 0);
      const b = buffers[buffer];
      return {
        index,
        name: t.str(3) ?? '',
        shape: t.i32Vec(0),
        shapeSignature: t.has(7) ? t.i32Vec(7) : null,
        dtype: TENSOR_TYPES[t.i8(1, 0)] ?? `type${t.i8(1, 0)}`,
        buffer,
        constant: !!b && buffer !== 0 && (b.size > 0 || b.external),
        isVariable: t.bool(5),
        ...(t.has(6) ? { sparsity: readSparsity(t.table(6)) } : {}),
        ...(t.has(4) ? { quantization: readQuantization(t.table(4)) } : {}),
      };
    }).map((t) => {
      const b = buffers[t.buffer];
      const ctor = TYPED[t.dtype];
      if (!t.constant || !b.size || !ctor) return t;
      // Copy: the buffer data need not be aligned for the typed array.
      const raw = buf.subarray(b.start, b.start + b.size);
      const data = new ctor(Uint8Array.from(raw).buffer);
      // A sparse constant reads as its dense form (the stored leaves kept).
      if (t.sparsity) return { ...t, storedData: data, data: densify(data, t.shape, t.sparsity) };
      return { ...t, data };
    });
    const operators = sg.tableVec(3).map((o) => {
      const code = codes[o.u32(0, 0)];
      const type = o.u8(3, 0);
      const options = decodeOptions(type, o.table(4));
      const intermediates = o.i32Vec(8);
      return { op: code.op, version: code.version, inputs: o.i32Vec(1), outputs: o.i32Vec(2), ...(options ? { options } : {}), ...(intermediates.length ? { intermediates } : {}) };
    });
    return { name: sg.str(4) ?? '', inputs: sg.i32Vec(1), outputs: sg.i32Vec(2), tensors, operators };
  });
  const tensorMap = (v) => v.map((m) => ({ name: m.str(0) ?? '', tensor: m.u32(1, 0) }));
  const signatures = model.tableVec(7).map((s) => ({
    key: s.str(2) ?? '',
    subgraph: s.u32(4, 0),
    inputs: tensorMap(s.tableVec(0)),
    outputs: tensorMap(s.tableVec(1)),
  }));
  return { version: model.u32(0, 0), subgraphs, signatures };
}
