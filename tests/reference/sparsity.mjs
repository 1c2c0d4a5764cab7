// TFLite sparse tensors (schema v3 SparsityParameters) for the test
// tooling: `sparsify` encodes a dense row-major array the way TFLite's
// model optimization converter does (a coordinate of a SPARSE_CSR level is
// kept when its sub-block holds a non-zero; DENSE levels keep everything),
// `densify` decodes one. The format (tensorflow/lite/kernels/internal/utils/
// sparsity_format_converter.cc, read for the semantics): a rank-R tensor
// with B blocked dimensions is traversed as R + B levels; level l iterates
// expanded dimension traversalOrder[l] (< R: a blocked tensor dimension,
// R + j: block j, which divides dimension blockMap[j]); a DENSE level
// visits 0 .. denseSize - 1, a SPARSE_CSR level, for parent position p,
// indices[segments[p] .. segments[p + 1]); the stored values are the leaves
// in visiting order.
//
// Used by make_sparse_cases.mjs (writing models) and tflite_flatbuffer.mjs
// (reading them: a sparse constant's `data` is its dense form).

/// The expanded-dimension sizes: blocked tensor dimensions, then blocks.
function expandedSizes(shape, blockMap, blockSizes) {
  const sizes = shape.slice();
  blockMap.forEach((d, j) => {
    if (shape[d] % blockSizes[j] !== 0) throw new Error(`block ${j} (${blockSizes[j]}) does not divide dimension ${d} (${shape[d]})`);
    sizes[d] = shape[d] / blockSizes[j];
    sizes.push(blockSizes[j]);
  });
  return sizes;
}

/// Row-major flat index of expanded coordinates `coord` (by expanded dimension).
function flatIndex(shape, blockMap, blockSizes, coord) {
  const index = shape.map((_, d) => coord[d]);
  blockMap.forEach((d, j) => { index[d] = index[d] * blockSizes[j] + coord[shape.length + j]; });
  return index.reduce((flat, x, d) => flat * shape[d] + x, 0);
}

/// Encodes `dense` (row-major over `shape`). `formats[l]` is 'DENSE' or
/// 'SPARSE_CSR' for level l of traversal order `traversalOrder` (default:
/// tensor dimensions, then blocks, in order); `blockMap`/`blockSizes` the
/// blocked dimensions. Block levels must be DENSE, as TFLite requires.
/// Returns { sparsity (tflite_builder.mjs form), values (same type as dense) }.
export function sparsify(dense, shape, { formats, blockMap = [], blockSizes = [], traversalOrder, indexType = 'int32' }) {
  const sizes = expandedSizes(shape, blockMap, blockSizes);
  const order = traversalOrder ?? sizes.map((_, i) => i);
  const levels = order.length;
  const meta = order.map((e, l) => (formats[l] === 'DENSE' ? { format: 'DENSE', denseSize: sizes[e] }
    : { format: 'SPARSE_CSR', segments: [0], indices: [], indexType }));
  const values = [];
  const coord = new Array(levels).fill(0); // by expanded dimension
  const nonzeroBelow = (l) => {
    if (l === levels) return dense[flatIndex(shape, blockMap, blockSizes, coord)] !== 0;
    const e = order[l];
    const saved = coord[e];
    for (let i = 0; i < sizes[e]; i++) {
      coord[e] = i;
      if (nonzeroBelow(l + 1)) { coord[e] = saved; return true; }
    }
    coord[e] = saved;
    return false;
  };
  const walk = (l) => {
    if (l === levels) { values.push(dense[flatIndex(shape, blockMap, blockSizes, coord)]); return; }
    const e = order[l];
    for (let i = 0; i < sizes[e]; i++) {
      coord[e] = i;
      if (meta[l].format === 'DENSE') walk(l + 1);
      else if (nonzeroBelow(l + 1)) { meta[l].indices.push(i); walk(l + 1); }
    }
    if (meta[l].format === 'SPARSE_CSR') meta[l].segments.push(meta[l].indices.length);
  };
  walk(0);
  const sparsity = { traversalOrder: order, dimMetadata: meta, ...(blockMap.length ? { blockMap } : {}) };
  return { sparsity, values: new dense.constructor(values) };
}

/// Decodes `values` (stored leaves) of a tensor of `shape` with `sparsity`
/// ({ traversalOrder, blockMap?, dimMetadata }) into a new dense array of
/// the same type, zeros elsewhere. Throws on an index outside its level.
export function densify(values, shape, sparsity) {
  const blockMap = sparsity.blockMap ?? [];
  const order = sparsity.traversalOrder;
  const meta = sparsity.dimMetadata;
  const rank = shape.length;
  const blockSizes = blockMap.map((_, j) => meta[order.indexOf(rank + j)].denseSize);
  const sizes = expandedSizes(shape, blockMap, blockSizes);
  const dense = new values.constructor(shape.reduce((a, b) => a * b, 1));
  const coord = new Array(order.length).fill(0);
  let next = 0;
  const walk = (l, position) => {
    if (l === order.length) { dense[flatIndex(shape, blockMap, blockSizes, coord)] = values[next++]; return; }
    const e = order[l];
    const m = meta[l];
    if (m.format === 'DENSE') {
      for (let i = 0; i < sizes[e]; i++) { coord[e] = i; walk(l + 1, position * sizes[e] + i); }
      return;
    }
    for (let k = m.segments[position]; k < m.segments[position + 1]; k++) {
      if (!(m.indices[k] >= 0 && m.indices[k] < sizes[e])) throw new Error(`level ${l} index ${m.indices[k]} outside 0..${sizes[e] - 1}`);
      coord[e] = m.indices[k];
      walk(l + 1, k);
    }
  };
  walk(0, 0);
  if (next !== values.length) throw new Error(`the sparsity describes ${next} values; ${values.length} are stored`);
  return dense;
}
