// Minimal NumPy .npy reader/writer (format 1.0 on write; 1.0/2.0/3.0 on read).
//
// Supported dtypes: '<f4' (float32), '<f8' (float64), '<i4' (int32), '<i2'
// (int16), '<u2', '<u4', '<i8' (int64, as BigInt64Array), '|u1' (uint8), '|i1'
// (int8), '|b1' (bool, as Uint8Array). float16 ('<f2') is not supported.
// Only C-order (fortran_order: False) arrays are supported.
//
//   import { writeNpy, readNpy, encodeNpy, decodeNpy } from './npy.mjs';
//   writeNpy('x.npy', new Float32Array([1, 2, 3, 4]), [2, 2]);
//   const { dtype, shape, data } = readNpy('x.npy');

import fs from 'node:fs';

const MAGIC = Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]); // \x93NUMPY

const DTYPES = {
  '<f4': { ctor: Float32Array, size: 4 },
  '<f8': { ctor: Float64Array, size: 8 },
  '<i4': { ctor: Int32Array, size: 4 },
  '<i2': { ctor: Int16Array, size: 2 },
  '<u2': { ctor: Uint16Array, size: 2 },
  '<u4': { ctor: Uint32Array, size: 4 },
  '<i8': { ctor: BigInt64Array, size: 8 },
  '|u1': { ctor: Uint8Array, size: 1 },
  '|i1': { ctor: Int8Array, size: 1 },
  '|b1': { ctor: Uint8Array, size: 1 },
};

// Map a typed array to its default npy dtype descr.
export function descrForArray(arr) {
  if (arr instanceof Float32Array) return '<f4';
  if (arr instanceof Float64Array) return '<f8';
  if (arr instanceof Int32Array) return '<i4';
  if (arr instanceof Int16Array) return '<i2';
  if (arr instanceof Uint16Array) return '<u2';
  if (arr instanceof Uint32Array) return '<u4';
  if (arr instanceof BigInt64Array) return '<i8';
  if (arr instanceof Uint8Array) return '|u1';
  if (arr instanceof Int8Array) return '|i1';
  throw new Error(`npy: unsupported array type ${arr?.constructor?.name}`);
}

function shapeToPy(shape) {
  if (shape.length === 0) return '()';
  if (shape.length === 1) return `(${shape[0]},)`;
  return `(${shape.join(', ')})`;
}

// Encode to a Buffer in .npy format version 1.0 (header padded so the data
// starts at a multiple of 64 bytes, as NumPy itself does).
export function encodeNpy(data, shape, descr = descrForArray(data)) {
  const info = DTYPES[descr];
  if (!info) throw new Error(`npy: unsupported dtype ${descr}`);
  const count = shape.reduce((a, b) => a * b, 1);
  if (data.length !== count) {
    throw new Error(`npy: data length ${data.length} does not match shape [${shape}] (${count})`);
  }
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shapeToPy(shape)}, }`;
  // magic(6) + version(2) + header_len(2) + header + '\n' must be a multiple of 64.
  const base = MAGIC.length + 2 + 2;
  const total = Math.ceil((base + header.length + 1) / 64) * 64;
  header = header + ' '.repeat(total - base - header.length - 1) + '\n';
  if (header.length > 0xffff) throw new Error('npy: header too long for format 1.0');
  const out = Buffer.alloc(total + count * info.size);
  MAGIC.copy(out, 0);
  out[6] = 1; out[7] = 0;
  out.writeUInt16LE(header.length, 8);
  out.write(header, base, 'latin1');
  // Host is little-endian (x86-64 / aarch64); copy the raw bytes.
  const bytes = new Uint8Array(data.buffer, data.byteOffset, count * info.size);
  out.set(bytes, total);
  return out;
}

export function writeNpy(file, data, shape, descr) {
  fs.writeFileSync(file, encodeNpy(data, shape, descr));
}

function parseHeader(text) {
  const descr = /'descr'\s*:\s*'([^']+)'/.exec(text);
  const fortran = /'fortran_order'\s*:\s*(True|False)/.exec(text);
  const shape = /'shape'\s*:\s*\(([^)]*)\)/.exec(text);
  if (!descr || !fortran || !shape) throw new Error(`npy: cannot parse header ${text}`);
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s.length > 0).map(Number);
  return { descr: descr[1], fortranOrder: fortran[1] === 'True', shape: dims };
}

// Decode a .npy Buffer. Returns { dtype, shape, data } where data is a fresh
// (aligned) typed array.
export function decodeNpy(buf) {
  if (buf.length < 10 || !buf.subarray(0, 6).equals(MAGIC)) throw new Error('npy: bad magic');
  const major = buf[6];
  let headerLen, off;
  if (major === 1) { headerLen = buf.readUInt16LE(8); off = 10; }
  else if (major === 2 || major === 3) { headerLen = buf.readUInt32LE(8); off = 12; }
  else throw new Error(`npy: unsupported version ${major}`);
  const text = buf.toString(major === 3 ? 'utf8' : 'latin1', off, off + headerLen);
  const { descr, fortranOrder, shape } = parseHeader(text);
  let d = descr;
  if (d === '=f4' || d === 'f4') d = '<f4';
  if (d === '=i4' || d === 'i4') d = '<i4';
  if (d === '<u1' || d === 'u1') d = '|u1';
  if (d === '<i1' || d === 'i1') d = '|i1';
  const info = DTYPES[d];
  if (!info) throw new Error(`npy: unsupported dtype ${descr}`);
  if (fortranOrder && shape.length > 1) throw new Error('npy: fortran_order arrays are not supported');
  const count = shape.reduce((a, b) => a * b, 1);
  const start = off + headerLen;
  const nbytes = count * info.size;
  if (buf.length < start + nbytes) throw new Error('npy: truncated data');
  const copy = new Uint8Array(nbytes);
  copy.set(buf.subarray(start, start + nbytes));
  return { dtype: d, shape, data: new info.ctor(copy.buffer) };
}

export function readNpy(file) {
  return decodeNpy(fs.readFileSync(file));
}
