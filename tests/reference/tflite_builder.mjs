// Minimal writer for tiny .tflite models, used by selftest.mjs and
// make_op_cases.mjs to produce single-operator test models. Not a general
// FlatBuffers implementation: it lays objects out front to back (parents before
// children, so every uoffset points forward as the format requires), 4-byte
// scalars at most, 16-byte aligned buffer data.
//
//   const bytes = buildTfliteModel({
//     tensors: [{ name: 'a', shape: [2], dtype: 'float32' },
//               { name: 'k', shape: [2], dtype: 'float32', data: new Float32Array([1, 2]) },
//               { name: 'y', shape: [2], dtype: 'float32' }],
//     operators: [{ op: 'ADD', inputs: [0, 1], outputs: [2] }],
//     inputs: [0], outputs: [2],
//   });
//
// Extras (all optional, see make_op_cases.mjs for uses):
//   operator: options: { ...fields }   builtin options table (OPTIONS below;
//                                      enum fields take names: padding 'SAME',
//                                      fused_activation_function 'RELU6'),
//             version: N               operator code version (default 1),
//             customCode: 'Name'       with op: 'CUSTOM'.
//             An input index -1 is an omitted optional input.
//   tensor:   shapeSignature: [-1, 8], quantization: { scale: [..],
//             zeroPoint: [..], quantizedDimension: 0 }, data: any typed array
//             (float16 data: pass the raw Uint16Array bits, see toFloat16Bits),
//             sparsity: { traversalOrder: [..], blockMap: [..], dimMetadata:
//             [{ format: 'DENSE', denseSize: N } | { format: 'SPARSE_CSR',
//             segments: [..], indices: [..], indexType: 'int32' | 'uint16' |
//             'uint8' }] } (schema.fbs SparsityParameters; segments and
//             indices as Int32Vector, Uint16Vector or Uint8Vector, default
//             int32; sparsity.mjs sparsify writes this form).
//   model:    subgraphs: [{ tensors, operators, inputs, outputs, name }, ...]
//             instead of the top-level tensors/operators/inputs/outputs
//             (buffers and operator codes are shared by all subgraphs),
//             signatureDefs: [{ key: 'add', subgraph: 0, inputs: [{ name:
//             'x', tensor: 1 }, ..], outputs: [..] }, ..] (schema v3
//             SignatureDef: signature_key, subgraph_index, TensorMaps of
//             {name, tensor_index}, tensor indices within that subgraph).

const TYPE_IDS = { float32: 0, float16: 1, int32: 2, uint8: 3, int64: 4, bool: 6, int16: 7, int8: 9, float64: 10, resource: 13 };

// BuiltinOperator codes (tensorflow/lite/schema/schema.fbs).
export const BUILTIN = {
  ADD: 0, AVERAGE_POOL_2D: 1, CONCATENATION: 2, CONV_2D: 3, DEPTHWISE_CONV_2D: 4, DEQUANTIZE: 6,
  FULLY_CONNECTED: 9, LOGISTIC: 14, MAX_POOL_2D: 17, MUL: 18, RELU: 19, RELU_N1_TO_1: 20, RELU6: 21,
  RESHAPE: 22, RESIZE_BILINEAR: 23, SOFTMAX: 25, TANH: 28, CUSTOM: 32, PAD: 34, GATHER: 36,
  TRANSPOSE: 39, MEAN: 40, SUB: 41, DIV: 42, SQUEEZE: 43, STRIDED_SLICE: 45, EXP: 47, CAST: 53,
  PRELU: 54, MAXIMUM: 55, MINIMUM: 57, NEG: 59, PADV2: 60, SLICE: 65, TRANSPOSE_CONV: 67,
  EXPAND_DIMS: 70, LOG: 73, SUM: 74, SQRT: 75, RSQRT: 76, POW: 78, REDUCE_MAX: 82, REDUCE_MIN: 89,
  RESIZE_NEAREST_NEIGHBOR: 97, LEAKY_RELU: 98, SQUARED_DIFFERENCE: 99, MIRROR_PAD: 100, ABS: 101, HARD_SWISH: 117,
  QUANTIZE: 114, BATCH_MATMUL: 126, CUMSUM: 128, BROADCAST_TO: 130, RANDOM_UNIFORM: 148,
  FLOOR: 8, LESS: 58, GREATER: 61, GREATER_EQUAL: 62, LESS_EQUAL: 63, SELECT: 64, SIN: 66, EQUAL: 71,
  NOT_EQUAL: 72, LOGICAL_OR: 84, LOGICAL_AND: 86, LOGICAL_NOT: 87, FLOOR_DIV: 90, SQUARE: 92,
  ZEROS_LIKE: 93, FLOOR_MOD: 95, CEIL: 104, ADD_N: 106, COS: 108, ELU: 111, ROUND: 116, SELECT_V2: 123,
  DEPTH_TO_SPACE: 5, SPACE_TO_DEPTH: 26, SPLIT: 49, LOG_SOFTMAX: 50, ARG_MAX: 56, SHAPE: 77, ARG_MIN: 79,
  PACK: 83, UNPACK: 88, FILL: 94, SPLIT_V: 102, BROADCAST_ARGS: 145, L2_NORMALIZATION: 11, REVERSE_V2: 105,
  GATHER_ND: 107, EMBEDDING_LOOKUP: 7, L2_POOL_2D: 12, BATCH_TO_SPACE_ND: 37, SPACE_TO_BATCH_ND: 38,
  VAR_HANDLE: 142, READ_VARIABLE: 143, ASSIGN_VARIABLE: 144,
  DENSIFY: 124,
  UNIDIRECTIONAL_SEQUENCE_RNN: 35, UNIDIRECTIONAL_SEQUENCE_LSTM: 44, BIDIRECTIONAL_SEQUENCE_LSTM: 52,
  IF: 118, WHILE: 119, CALL_ONCE: 129, SVDF: 27, REDUCE_ALL: 140, DYNAMIC_UPDATE_SLICE: 151,
};

// BuiltinOptions union members, in schema order (union type = position + 1).
export const BUILTIN_OPTIONS_UNION = [
  'Conv2DOptions', 'DepthwiseConv2DOptions', 'ConcatEmbeddingsOptions', 'LSHProjectionOptions',
  'Pool2DOptions', 'SVDFOptions', 'RNNOptions', 'FullyConnectedOptions', 'SoftmaxOptions',
  'ConcatenationOptions', 'AddOptions', 'L2NormOptions', 'LocalResponseNormalizationOptions',
  'LSTMOptions', 'ResizeBilinearOptions', 'CallOptions', 'ReshapeOptions', 'SkipGramOptions',
  'SpaceToDepthOptions', 'EmbeddingLookupSparseOptions', 'MulOptions', 'PadOptions', 'GatherOptions',
  'BatchToSpaceNDOptions', 'SpaceToBatchNDOptions', 'TransposeOptions', 'ReducerOptions', 'SubOptions',
  'DivOptions', 'SqueezeOptions', 'SequenceRNNOptions', 'StridedSliceOptions', 'ExpOptions',
  'TopKV2Options', 'SplitOptions', 'LogSoftmaxOptions', 'CastOptions', 'DequantizeOptions',
  'MaximumMinimumOptions', 'ArgMaxOptions', 'LessOptions', 'NegOptions', 'PadV2Options',
  'GreaterOptions', 'GreaterEqualOptions', 'LessEqualOptions', 'SelectOptions', 'SliceOptions',
  'TransposeConvOptions', 'SparseToDenseOptions', 'TileOptions', 'ExpandDimsOptions', 'EqualOptions',
  'NotEqualOptions', 'ShapeOptions', 'PowOptions', 'ArgMinOptions', 'FakeQuantOptions', 'PackOptions',
  'LogicalOrOptions', 'OneHotOptions', 'LogicalAndOptions', 'LogicalNotOptions', 'UnpackOptions',
  'FloorDivOptions', 'SquareOptions', 'ZerosLikeOptions', 'FillOptions',
  'BidirectionalSequenceLSTMOptions', 'BidirectionalSequenceRNNOptions',
  'UnidirectionalSequenceLSTMOptions', 'FloorModOptions', 'RangeOptions',
  'ResizeNearestNeighborOptions', 'LeakyReluOptions', 'SquaredDifferenceOptions', 'MirrorPadOptions',
  'AbsOptions', 'SplitVOptions', 'UniqueOptions', 'ReverseV2Options', 'AddNOptions', 'GatherNdOptions',
  'CosOptions', 'WhereOptions', 'RankOptions', 'ReverseSequenceOptions', 'MatrixDiagOptions',
  'QuantizeOptions', 'MatrixSetDiagOptions', 'HardSwishOptions', 'IfOptions', 'WhileOptions',
  'DepthToSpaceOptions', 'NonMaxSuppressionV4Options', 'NonMaxSuppressionV5Options',
  'ScatterNdOptions', 'SelectV2Options', 'DensifyOptions', 'SegmentSumOptions', 'BatchMatMulOptions',
  'CumsumOptions', 'CallOnceOptions', 'BroadcastToOptions', 'Rfft2dOptions', 'Conv3DOptions',
  'HashtableOptions', 'HashtableFindOptions', 'HashtableImportOptions', 'HashtableSizeOptions',
  'VarHandleOptions', 'ReadVariableOptions', 'AssignVariableOptions',
];

// Options tables: fields in schema order (field id = position; null = a
// deprecated slot). Kinds: i8 (enums), bool, i32, f32, vec_i32, str.
const ACT = 'fused_activation_function';
export const OPTIONS = {
  Conv2DOptions: [['padding', 'i8'], ['stride_w', 'i32'], ['stride_h', 'i32'], [ACT, 'i8'],
    ['dilation_w_factor', 'i32'], ['dilation_h_factor', 'i32']],
  DepthwiseConv2DOptions: [['padding', 'i8'], ['stride_w', 'i32'], ['stride_h', 'i32'],
    ['depth_multiplier', 'i32'], [ACT, 'i8'], ['dilation_w_factor', 'i32'], ['dilation_h_factor', 'i32']],
  Pool2DOptions: [['padding', 'i8'], ['stride_w', 'i32'], ['stride_h', 'i32'], ['filter_width', 'i32'],
    ['filter_height', 'i32'], [ACT, 'i8']],
  FullyConnectedOptions: [[ACT, 'i8'], ['weights_format', 'i8'], ['keep_num_dims', 'bool'],
    ['asymmetric_quantize_inputs', 'bool']],
  SoftmaxOptions: [['beta', 'f32']],
  ConcatenationOptions: [['axis', 'i32'], [ACT, 'i8']],
  AddOptions: [[ACT, 'i8'], ['pot_scale_int16', 'bool']],
  MulOptions: [[ACT, 'i8']],
  SubOptions: [[ACT, 'i8'], ['pot_scale_int16', 'bool']],
  DivOptions: [[ACT, 'i8']],
  ResizeBilinearOptions: [null, null, ['align_corners', 'bool'], ['half_pixel_centers', 'bool']],
  ResizeNearestNeighborOptions: [['align_corners', 'bool'], ['half_pixel_centers', 'bool']],
  ReshapeOptions: [['new_shape', 'vec_i32']],
  GatherOptions: [['axis', 'i32'], ['batch_dims', 'i32']],
  ReducerOptions: [['keep_dims', 'bool']],
  SqueezeOptions: [['squeeze_dims', 'vec_i32']],
  StridedSliceOptions: [['begin_mask', 'i32'], ['end_mask', 'i32'], ['ellipsis_mask', 'i32'],
    ['new_axis_mask', 'i32'], ['shrink_axis_mask', 'i32'], ['offset', 'bool']],
  TransposeConvOptions: [['padding', 'i8'], ['stride_w', 'i32'], ['stride_h', 'i32'], [ACT, 'i8']],
  LeakyReluOptions: [['alpha', 'f32']],
  BatchMatMulOptions: [['adj_x', 'bool'], ['adj_y', 'bool'], ['asymmetric_quantize_inputs', 'bool']],
  CumsumOptions: [['exclusive', 'bool'], ['reverse', 'bool']],
  CastOptions: [['in_data_type', 'i8'], ['out_data_type', 'i8']],
  MirrorPadOptions: [['mode', 'i8']],
  PackOptions: [['values_count', 'i32'], ['axis', 'i32']],
  UnpackOptions: [['num', 'i32'], ['axis', 'i32']],
  SplitOptions: [['num_splits', 'i32']],
  SplitVOptions: [['num_splits', 'i32']],
  ShapeOptions: [['out_type', 'i8']],
  ArgMaxOptions: [['output_type', 'i8']],
  ArgMinOptions: [['output_type', 'i8']],
  DepthToSpaceOptions: [['block_size', 'i32']],
  SpaceToDepthOptions: [['block_size', 'i32']],
  L2NormOptions: [[ACT, 'i8']],
  IfOptions: [['then_subgraph_index', 'i32'], ['else_subgraph_index', 'i32']],
  WhileOptions: [['cond_subgraph_index', 'i32'], ['body_subgraph_index', 'i32']],
  CallOnceOptions: [['init_subgraph_index', 'i32']],
  VarHandleOptions: [['container', 'str'], ['shared_name', 'str']],
  ReadVariableOptions: [],
  AssignVariableOptions: [],
  SequenceRNNOptions: [['time_major', 'bool'], [ACT, 'i8'], ['asymmetric_quantize_inputs', 'bool']],
  UnidirectionalSequenceLSTMOptions: [[ACT, 'i8'], ['cell_clip', 'f32'], ['proj_clip', 'f32'], ['time_major', 'bool'],
    ['asymmetric_quantize_inputs', 'bool']],
  BidirectionalSequenceLSTMOptions: [[ACT, 'i8'], ['cell_clip', 'f32'], ['proj_clip', 'f32'], ['merge_outputs', 'bool'],
    ['time_major', 'bool'], ['asymmetric_quantize_inputs', 'bool']],
  SVDFOptions: [['rank', 'i32'], [ACT, 'i8'], ['asymmetric_quantize_inputs', 'bool']],
  // Field-less options tables.
  PadOptions: [], PadV2Options: [], TransposeOptions: [], ExpOptions: [], DequantizeOptions: [],
  MaximumMinimumOptions: [], NegOptions: [], SliceOptions: [], ExpandDimsOptions: [], PowOptions: [],
  SquaredDifferenceOptions: [], AbsOptions: [], HardSwishOptions: [], BroadcastToOptions: [],
  LogSoftmaxOptions: [], FillOptions: [], ReverseV2Options: [], GatherNdOptions: [],
  SpaceToBatchNDOptions: [], BatchToSpaceNDOptions: [],
};

// Which options table each builtin takes (ops not listed have none).
export const OP_OPTIONS = {
  ADD: 'AddOptions', AVERAGE_POOL_2D: 'Pool2DOptions', CONCATENATION: 'ConcatenationOptions',
  CONV_2D: 'Conv2DOptions', DEPTHWISE_CONV_2D: 'DepthwiseConv2DOptions', DEQUANTIZE: 'DequantizeOptions',
  FULLY_CONNECTED: 'FullyConnectedOptions', MAX_POOL_2D: 'Pool2DOptions', MUL: 'MulOptions',
  RESHAPE: 'ReshapeOptions', RESIZE_BILINEAR: 'ResizeBilinearOptions', SOFTMAX: 'SoftmaxOptions',
  PAD: 'PadOptions', GATHER: 'GatherOptions', TRANSPOSE: 'TransposeOptions', MEAN: 'ReducerOptions',
  SUB: 'SubOptions', DIV: 'DivOptions', SQUEEZE: 'SqueezeOptions', STRIDED_SLICE: 'StridedSliceOptions',
  EXP: 'ExpOptions', CAST: 'CastOptions', MAXIMUM: 'MaximumMinimumOptions', MINIMUM: 'MaximumMinimumOptions',
  NEG: 'NegOptions', PADV2: 'PadV2Options', SLICE: 'SliceOptions', TRANSPOSE_CONV: 'TransposeConvOptions',
  EXPAND_DIMS: 'ExpandDimsOptions', SUM: 'ReducerOptions', POW: 'PowOptions', REDUCE_MAX: 'ReducerOptions',
  REDUCE_MIN: 'ReducerOptions', RESIZE_NEAREST_NEIGHBOR: 'ResizeNearestNeighborOptions',
  LEAKY_RELU: 'LeakyReluOptions', SQUARED_DIFFERENCE: 'SquaredDifferenceOptions', ABS: 'AbsOptions',
  HARD_SWISH: 'HardSwishOptions', BATCH_MATMUL: 'BatchMatMulOptions', CUMSUM: 'CumsumOptions',
  BROADCAST_TO: 'BroadcastToOptions', MIRROR_PAD: 'MirrorPadOptions',
  PACK: 'PackOptions', UNPACK: 'UnpackOptions', SPLIT: 'SplitOptions', SPLIT_V: 'SplitVOptions',
  SHAPE: 'ShapeOptions', ARG_MAX: 'ArgMaxOptions', ARG_MIN: 'ArgMinOptions', DEPTH_TO_SPACE: 'DepthToSpaceOptions',
  SPACE_TO_DEPTH: 'SpaceToDepthOptions', LOG_SOFTMAX: 'LogSoftmaxOptions', FILL: 'FillOptions',
  L2_NORMALIZATION: 'L2NormOptions', REVERSE_V2: 'ReverseV2Options', GATHER_ND: 'GatherNdOptions',
  L2_POOL_2D: 'Pool2DOptions', SPACE_TO_BATCH_ND: 'SpaceToBatchNDOptions', BATCH_TO_SPACE_ND: 'BatchToSpaceNDOptions',
  VAR_HANDLE: 'VarHandleOptions', READ_VARIABLE: 'ReadVariableOptions', ASSIGN_VARIABLE: 'AssignVariableOptions',
  UNIDIRECTIONAL_SEQUENCE_RNN: 'SequenceRNNOptions', UNIDIRECTIONAL_SEQUENCE_LSTM: 'UnidirectionalSequenceLSTMOptions',
  BIDIRECTIONAL_SEQUENCE_LSTM: 'BidirectionalSequenceLSTMOptions',
  IF: 'IfOptions', WHILE: 'WhileOptions', CALL_ONCE: 'CallOnceOptions', SVDF: 'SVDFOptions',
  REDUCE_ALL: 'ReducerOptions',
};

// Enum-valued option fields (by field name): name -> value.
export const ENUMS = {
  padding: { SAME: 0, VALID: 1 },
  mode: { REFLECT: 0, SYMMETRIC: 1 }, // MirrorPadOptions.mode (MirrorPadMode)
  out_type: { INT32: 2, INT64: 4 }, // ShapeOptions.out_type (TensorType)
  output_type: { INT32: 2, INT64: 4 }, // ArgMaxOptions / ArgMinOptions.output_type
  fused_activation_function: { NONE: 0, RELU: 1, RELU_N1_TO_1: 2, RELU6: 3, TANH: 4, SIGN_BIT: 5 },
};

function optionsTable(op, options) {
  const name = OP_OPTIONS[op];
  if (!name) throw new Error(`${op} takes no builtin options`);
  const schema = OPTIONS[name];
  const fields = [];
  for (const [key, value] of Object.entries(options)) {
    const id = schema.findIndex((f) => f && f[0] === key);
    if (id < 0) throw new Error(`${name} has no field ${key}`);
    const kind = schema[id][1];
    let v = value;
    if (ENUMS[key] && typeof v === 'string') {
      v = ENUMS[key][v];
      if (v === undefined) throw new Error(`${name}.${key}: bad value ${value}`);
    }
    if (kind === 'str') fields.push([id, 'off', str(v)]);
    else fields.push([id, kind === 'vec_i32' ? 'off' : kind, kind === 'vec_i32' ? vecI32(v) : v]);
  }
  return { type: BUILTIN_OPTIONS_UNION.indexOf(name) + 1, table: table(fields) };
}

// float32 -> IEEE half bits (round to nearest even), for FLOAT16 buffers.
export function toFloat16Bits(values) {
  const out = new Uint16Array(values.length);
  const f = new Float32Array(1);
  const u = new Uint32Array(f.buffer);
  for (let i = 0; i < values.length; i++) {
    f[0] = values[i];
    const x = u[0];
    const sign = (x >>> 16) & 0x8000;
    const exp = (x >>> 23) & 0xff;
    let mant = x & 0x7fffff;
    let h;
    if (exp === 0xff) h = sign | 0x7c00 | (mant ? 0x200 : 0);
    else {
      const e = exp - 127 + 15;
      if (e >= 0x1f) h = sign | 0x7c00;
      else if (e <= 0) {
        if (e < -10) h = sign;
        else {
          mant |= 0x800000;
          const shift = 14 - e;
          let hm = mant >>> shift;
          const rem = mant & ((1 << shift) - 1);
          const half = 1 << (shift - 1);
          if (rem > half || (rem === half && (hm & 1))) hm++;
          h = sign | hm;
        }
      } else {
        let hm = mant >>> 13;
        const rem = mant & 0x1fff;
        let he = e;
        if (rem > 0x1000 || (rem === 0x1000 && (hm & 1))) {
          hm++;
          if (hm === 0x400) { hm = 0; he++; }
        }
        h = he >= 0x1f ? sign | 0x7c00 : sign | (he << 10) | hm;
      }
    }
    out[i] = h;
  }
  return out;
}

// IEEE half bits -> float32 values.
export function fromFloat16Bits(bits) {
  const out = new Float32Array(bits.length);
  for (let i = 0; i < bits.length; i++) {
    const h = bits[i];
    const s = h & 0x8000 ? -1 : 1;
    const e = (h >>> 10) & 0x1f;
    const m = h & 0x3ff;
    out[i] = e === 0 ? s * m * 2 ** -24 : e === 0x1f ? (m ? NaN : s * Infinity) : s * (1 + m / 1024) * 2 ** (e - 15);
  }
  return out;
}

const table = (fields) => ({ t: 'table', fields }); // fields: [id, kind, value]
const str = (v) => ({ t: 'str', v });
const vecI32 = (v) => ({ t: 'vec_i32', v });
const vecU8 = (v) => ({ t: 'vec_u8', v });
const vecOff = (v) => ({ t: 'vec_off', v });
const vecF32 = (v) => ({ t: 'vec_f32', v });
const vecI64 = (v) => ({ t: 'vec_i64', v });

const SIZE = { i8: 1, u8: 1, bool: 1, i32: 4, u32: 4, f32: 4, off: 4 };

class Writer {
  constructor() { this.buf = Buffer.alloc(1024); this.len = 0; }
  ensure(n) {
    if (this.len + n <= this.buf.length) return;
    const b = Buffer.alloc(Math.max(this.buf.length * 2, this.len + n));
    this.buf.copy(b, 0, 0, this.len);
    this.buf = b;
  }
  pad(align, extra = 0) { while ((this.len + extra) % align !== 0) this.u8(0); }
  u8(v) { this.ensure(1); this.buf.writeUInt8(v & 0xff, this.len); this.len += 1; }
  u16(v) { this.ensure(2); this.buf.writeUInt16LE(v, this.len); this.len += 2; }
  i32(v) { this.ensure(4); this.buf.writeInt32LE(v, this.len); this.len += 4; }
  u32(v) { this.ensure(4); this.buf.writeUInt32LE(v >>> 0, this.len); this.len += 4; }
  bytes(b) { this.ensure(b.length); Buffer.from(b.buffer, b.byteOffset, b.byteLength).copy(this.buf, this.len); this.len += b.byteLength; }
  patchU32(at, v) { this.buf.writeUInt32LE(v >>> 0, at); }
  patchI32(at, v) { this.buf.writeInt32LE(v, at); }

  node(n) {
    switch (n.t) {
      case 'table': return this.table(n.fields);
      case 'str': {
        const b = Buffer.from(n.v, 'utf8');
        this.pad(4);
        const at = this.len;
        this.u32(b.length); this.bytes(b); this.u8(0);
        return at;
      }
      case 'vec_i32': {
        this.pad(4);
        const at = this.len;
        this.u32(n.v.length);
        for (const x of n.v) this.i32(x);
        return at;
      }
      case 'vec_u16': {
        this.pad(4);
        const at = this.len;
        this.u32(n.v.length);
        for (const x of n.v) this.u16(x);
        return at;
      }
      case 'vec_f32': {
        this.pad(4);
        const at = this.len;
        this.u32(n.v.length);
        for (const x of n.v) { this.ensure(4); this.buf.writeFloatLE(x, this.len); this.len += 4; }
        return at;
      }
      case 'vec_i64': {
        this.pad(8, 4); // elements 8-byte aligned
        const at = this.len;
        this.u32(n.v.length);
        for (const x of n.v) { this.ensure(8); this.buf.writeBigInt64LE(BigInt(x), this.len); this.len += 8; }
        return at;
      }
      case 'vec_u8': {
        this.pad(16, 4); // data (after the 4-byte length) 16-byte aligned
        const at = this.len;
        this.u32(n.v.byteLength); this.bytes(n.v);
        return at;
      }
      case 'vec_off': {
        this.pad(4);
        const at = this.len;
        this.u32(n.v.length);
        const slots = n.v.map(() => { const s = this.len; this.u32(0); return s; });
        n.v.forEach((child, i) => this.patchU32(slots[i], this.node(child) - slots[i]));
        return at;
      }
      default: throw new Error(`bad node ${n.t}`);
    }
  }

  table(fields) {
    // Inline layout: soffset, then fields (largest first) aligned to size.
    const sorted = [...fields].sort((a, b) => SIZE[b[1]] - SIZE[a[1]]);
    let off = 4;
    const where = new Map();
    for (const [id, kind] of sorted) {
      const sz = SIZE[kind];
      off = Math.ceil(off / sz) * sz;
      where.set(id, off);
      off += sz;
    }
    const tableLen = Math.ceil(off / 4) * 4;
    const maxId = fields.reduce((m, f) => Math.max(m, f[0]), -1);
    // vtable
    this.pad(2);
    const vt = this.len;
    this.u16(4 + 2 * (maxId + 1));
    this.u16(tableLen);
    for (let id = 0; id <= maxId; id++) this.u16(where.get(id) ?? 0);
    this.pad(4);
    const at = this.len;
    this.ensure(tableLen);
    this.buf.fill(0, at, at + tableLen);
    this.len += tableLen;
    this.patchI32(at, at - vt);
    const children = [];
    for (const [id, kind, value] of fields) {
      const p = at + where.get(id);
      if (kind === 'i8') this.buf.writeInt8(value, p);
      else if (kind === 'u8') this.buf.writeUInt8(value, p);
      else if (kind === 'bool') this.buf.writeUInt8(value ? 1 : 0, p);
      else if (kind === 'i32') this.buf.writeInt32LE(value, p);
      else if (kind === 'u32') this.buf.writeUInt32LE(value >>> 0, p);
      else if (kind === 'f32') this.buf.writeFloatLE(value, p);
      else if (kind === 'off') children.push([p, value]);
    }
    for (const [p, child] of children) this.patchU32(p, this.node(child) - p);
    return at;
  }
}

// SparsityParameters (schema.fbs): DimensionMetadata.format DENSE = 0,
// SPARSE_CSR = 1; array_segments / array_indices are SparseIndexVector
// unions: Int32Vector (union type 1, table { values: [int] }), Uint16Vector
// (2, [ushort]) or Uint8Vector (3, [ubyte]), chosen by indexType.
const INDEX_VECTOR = {
  int32: [1, (v) => vecI32(v)],
  uint16: [2, (v) => ({ t: 'vec_u16', v })],
  uint8: [3, (v) => vecU8(Uint8Array.from(v))],
};
function sparsityTable({ traversalOrder, blockMap, dimMetadata }) {
  const dims = dimMetadata.map((d) => {
    if (d.format === 'DENSE') return table([[0, 'i8', 0], [1, 'i32', d.denseSize]]);
    if (d.format !== 'SPARSE_CSR') throw new Error(`bad dimension format ${d.format}`);
    const kind = INDEX_VECTOR[d.indexType ?? 'int32'];
    if (!kind) throw new Error(`bad index type ${d.indexType}`);
    const [type, vec] = kind;
    const indexVector = (v) => table([[0, 'off', vec(v)]]);
    return table([[0, 'i8', 1], [2, 'u8', type], [3, 'off', indexVector(d.segments)],
      [4, 'u8', type], [5, 'off', indexVector(d.indices)]]);
  });
  const fields = [[0, 'off', vecI32(traversalOrder)], [2, 'off', vecOff(dims)]];
  if (blockMap) fields.push([1, 'off', vecI32(blockMap)]);
  return table(fields);
}

function toBytes(data) {
  if (data instanceof Uint8Array) return data;
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

// One SignatureDef (schema.fbs: inputs 0, outputs 1, signature_key 2,
// deprecated_tag 3, subgraph_index 4; TensorMap: name 0, tensor_index 1).
function signatureDefTable(def) {
  const maps = (list) => vecOff(list.map((m) => table([[0, 'off', str(m.name)], [1, 'u32', m.tensor]])));
  return table([
    [0, 'off', maps(def.inputs)],
    [1, 'off', maps(def.outputs)],
    [2, 'off', str(def.key)],
    [4, 'u32', def.subgraph ?? 0],
  ]);
}

export function buildTfliteModel({ tensors, operators, inputs, outputs, subgraphs, signatureDefs, description = 'kiln test model' }) {
  const graphs = subgraphs ?? [{ tensors, operators, inputs, outputs, name: 'main' }];
  // Operator codes: one per (op, custom code, version), in first-use order.
  const codeKey = (o) => `${o.op}|${o.customCode ?? ''}|${o.version ?? 1}`;
  const codes = [];
  for (const g of graphs) {
    for (const o of g.operators) if (!codes.some((c) => codeKey(c) === codeKey(o))) codes.push(o);
  }
  const buffers = [vecU8(new Uint8Array(0))]; // buffer 0: the empty sentinel
  const subgraphTables = graphs.map((g) => {
    const tensorTables = g.tensors.map((t) => {
      let bufferIndex = 0;
      if (t.data) {
        bufferIndex = buffers.length;
        buffers.push(vecU8(toBytes(t.data)));
      }
      const typeId = TYPE_IDS[t.dtype ?? 'float32'];
      if (typeId === undefined) throw new Error(`unsupported dtype ${t.dtype}`);
      const fields = [
        [0, 'off', vecI32(t.shape)],
        [1, 'i8', typeId],
        [2, 'u32', bufferIndex],
        [3, 'off', str(t.name)],
      ];
      if (t.quantization) {
        const q = t.quantization;
        const qf = [];
        if (q.min) qf.push([0, 'off', vecF32(q.min)]);
        if (q.max) qf.push([1, 'off', vecF32(q.max)]);
        if (q.scale) qf.push([2, 'off', vecF32(q.scale)]);
        if (q.zeroPoint) qf.push([3, 'off', vecI64(q.zeroPoint)]);
        if (q.quantizedDimension !== undefined) qf.push([6, 'i32', q.quantizedDimension]);
        fields.push([4, 'off', table(qf)]);
      }
      if (t.isVariable) fields.push([5, 'bool', true]);
      if (t.sparsity) fields.push([6, 'off', sparsityTable(t.sparsity)]);
      if (t.shapeSignature) fields.push([7, 'off', vecI32(t.shapeSignature)]);
      return table(fields);
    });
    const opTables = g.operators.map((o) => {
      const fields = [
        [0, 'u32', codes.findIndex((c) => codeKey(c) === codeKey(o))],
        [1, 'off', vecI32(o.inputs)],
        [2, 'off', vecI32(o.outputs)],
      ];
      if (o.options) {
        const { type, table: opt } = optionsTable(o.op, o.options);
        fields.push([3, 'u8', type], [4, 'off', opt]);
      }
      // Operator.intermediates (field 8): the integer LSTM's gate and
      // hidden-state quantization tensors.
      if (o.intermediates) fields.push([8, 'off', vecI32(o.intermediates)]);
      return table(fields);
    });
    return table([
      [0, 'off', vecOff(tensorTables)],
      [1, 'off', vecI32(g.inputs)],
      [2, 'off', vecI32(g.outputs)],
      [3, 'off', vecOff(opTables)],
      [4, 'off', str(g.name ?? 'main')],
    ]);
  });
  const opcodeTables = codes.map((o) => {
    const code = BUILTIN[o.op];
    if (code === undefined) throw new Error(`unknown builtin ${o.op}`);
    const fields = [[0, 'i8', Math.min(code, 127)], [2, 'i32', o.version ?? 1], [3, 'i32', code]];
    if (o.customCode !== undefined) fields.push([1, 'off', str(o.customCode)]);
    return table(fields);
  });
  const model = table([
    [0, 'u32', 3],
    [1, 'off', vecOff(opcodeTables)],
    [2, 'off', vecOff(subgraphTables)],
    [3, 'off', str(description)],
    [4, 'off', vecOff(buffers.map((b) => table([[0, 'off', b]])))],
    ...(signatureDefs ? [[7, 'off', vecOff(signatureDefs.map(signatureDefTable))]] : []),
  ]);
  const w = new Writer();
  w.u32(0); // root offset, patched below
  w.bytes(Buffer.from('TFL3', 'latin1'));
  const root = w.node(model);
  w.patchU32(0, root);
  return w.buf.subarray(0, w.len);
}
