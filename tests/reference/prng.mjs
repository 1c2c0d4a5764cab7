// Deterministic input generator shared by the reference scripts.
//
// mulberry32 (Tommy Ettinger's 32-bit generator), state = seed >>> 0:
//   t = (state += 0x6D2B79F5) >>> 0
//   t = imul(t ^ (t >>> 15), t | 1)
//   t ^= t + imul(t ^ (t >>> 7), t | 61)
//   u = ((t ^ (t >>> 14)) >>> 0) / 2^32            // u in [0, 1), multiple of 2^-32
// Input K of a model run with --seed N uses the generator seeded with
// (N + K) >>> 0 and fills the tensor in C (row-major) order with
//   x = float32(-1 + 2 * u)                         // computed in double, then
//                                                   // rounded to nearest float32
// so x is uniform in [-1, 1). -1 + 2*u is exact in double; the only rounding is
// the final cast to float32 (round-to-nearest-even), easy to reproduce in C++.
// Quantized int8 / uint8 inputs cover their whole range: int8 gets
// floor(u * 256) - 128 (-128..127), uint8 floor(u * 256) (0..255). Other
// integer inputs (rare; e.g. indices) get floor(u * 4), i.e. 0..3; bool gets
// u < 0.5 ? 0 : 1.

export function mulberry32(seed) {
  let state = seed >>> 0;
  return function next() {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// FNV-1a (32-bit) of a string's UTF-8 bytes: the seed a generator script
// derives from a case name, so each case's data stays the same when cases
// are added or reordered.
export function fnv1a(str) {
  let h = 0x811c9dc5;
  for (const c of Buffer.from(str, 'utf8')) {
    h ^= c;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

// Fill typed array `arr` (any TFLite dtype view) for input `index` with `seed`.
export function fillInput(arr, seed, index, dtype = 'float32') {
  const u = mulberry32((seed + index) >>> 0);
  if (dtype === 'float32' || dtype === 'float64') {
    for (let i = 0; i < arr.length; i++) arr[i] = -1 + 2 * u();
  } else if (dtype === 'int8' || dtype === 'uint8') {
    const lo = dtype === 'int8' ? -128 : 0;
    for (let i = 0; i < arr.length; i++) arr[i] = lo + Math.floor(u() * 256);
  } else if (dtype === 'bool') {
    for (let i = 0; i < arr.length; i++) arr[i] = u() < 0.5 ? 0 : 1;
  } else {
    for (let i = 0; i < arr.length; i++) arr[i] = Math.floor(u() * 4);
  }
  return arr;
}
