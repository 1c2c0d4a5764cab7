#!/usr/bin/env node
// Output-binding and zero-size cases.
//
//   node tests/reference/make_io_cases.mjs [--only REGEX] [--list] [--shared DIR] [--verbose]
//
// tests/data/outputs/<case>/: models whose outputs are, or fold to, a graph
// input, a constant, another output or a view of one (pass-through operators
// of every kind that can fold away, outputs in permuted order, one tensor
// listed twice, ...): every output slot must receive its own tensor.
// tests/data/zero/<case>/: zero-size tensors (a zero dimension, an empty
// slice) next to normal outputs, with what TFLite returns for them.
//
// Each folder holds model.tflite, input_K.npy, output_K.npy and meta.json
// (meta.json "case.tests" says what the case tests), written like the op
// cases of make_op_cases.mjs: seed-1 inputs, the TFLite interpreter's
// outputs reconciled with the independent evaluation of op_eval.mjs
// ("reference": "tflite" when they agree within 1e-5*(1+|ref|); a case the
// interpreter gets wrong must be listed in KNOWN_IO_REFERENCE_BUGS and then
// stores the independent result; anything else fails the run). Each root
// also gets an index.json. Deterministic: a rerun gives identical files.
//
// Cases copied from the bug reports of ../shared/cases (--shared DIR, default
// <repo>/../shared/cases) keep the report's model.tflite and input_K.npy
// byte for byte; their expected_K.npy become output_K.npy after both TFLite
// and op_eval.mjs reproduce them, and meta.json "case.source" names the
// folder. Without the shared folder the committed copies are kept as they are.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  Graph, binary, concat, mirrorPad, pad, reconcileReference, reduce, reshape, runCase, stridedSlice, unary,
} from './make_op_cases.mjs';
import { readNpy } from './npy.mjs';
import { AGREEMENT_TOLERANCE, compareValues } from './op_eval.mjs';
import { prettyJson, runReference } from './tflite_reference.mjs';
import { resetTflite, setTfliteLogSink } from './tflite_runtime.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const DATA = path.join(repo, 'tests/data');
const ROOTS = { outputs: path.join(DATA, 'outputs'), zero: path.join(DATA, 'zero') };

// Cases on which the TFLite interpreter is wrong (case name -> reason); see
// make_op_cases.mjs KNOWN_REFERENCE_BUGS.
export const KNOWN_IO_REFERENCE_BUGS = {
  dequantize_constant_output: 'the interpreter loads the model but Infer() fails ("failed to setup XNNPACK runtime", '
    + 'XNNPACK delegate node): a DEQUANTIZE whose float16 input is a constant and whose output is a model output',
};

const CASES = [];
// root: 'outputs' or 'zero'; tests: what Kiln must get right.
function add(root, name, desc, tests, build) {
  if (CASES.some((c) => c.name === name)) throw new Error(`duplicate case ${name}`);
  CASES.push({ root, name, desc, build, meta: { tests } });
}
// Copied from ../shared/cases/<name>.
function shared(root, name, desc, tests, { expected = true } = {}) {
  const source = `../shared/cases/${name} (bug report: model.tflite and input_K.npy as given, ${expected
    ? 'its expected_K.npy stored as output_K.npy' : 'which has no expected values: output_K.npy from TFLite'})`;
  CASES.push({ root, name, desc, shared: true, meta: { tests, source } });
}
const ident = (g, x, op, outShape, options) => g.op(op, [x], outShape, options);

// ---------------------------------------------------------------- outputs/

const OUT = 'every output slot K holds model output K';
shared('outputs', 'identity_transpose_perm_012', 'TRANSPOSE [2,3,4] with perm [0,1,2]: the output is the input',
  `${OUT}: an output that folds to the graph input (identity TRANSPOSE) is written`);
shared('outputs', 'output_is_graph_input', 'outputs [input, RELU(input)] on [2,5]',
  `${OUT}: output 0 is the graph input itself, output 1 a computed tensor`);
shared('outputs', 'sum_empty_axes', 'SUM [2,3] over an empty axes tensor (shape [0]): reduces nothing',
  `${OUT}: a reduction over no axes folds to its input`);

add('outputs', 'transpose_perm_012_with_relu', 'outputs [TRANSPOSE([3,2,5], perm [0,1,2]), RELU(input)]',
  `${OUT}: identity TRANSPOSE next to a computed output`, (g) => {
    const x = g.input([3, 2, 5]);
    g.output(g.op('TRANSPOSE', [x, g.i32('perm', [0, 1, 2])], [3, 2, 5], {}), unary(g, 'RELU', x));
  });
add('outputs', 'transpose_identity_rank4', 'TRANSPOSE [1,2,3,4] with perm [0,1,2,3]',
  `${OUT}: rank-4 identity TRANSPOSE folds to the input`, (g) => {
    g.output(g.op('TRANSPOSE', [g.input([1, 2, 3, 4]), g.i32('perm', [0, 1, 2, 3])], [1, 2, 3, 4], {}));
  });
add('outputs', 'transpose_round_trip', 'TRANSPOSE [3,5] perm [1,0] twice: back to the input',
  `${OUT}: two TRANSPOSEs that cancel fold to the input`, (g) => {
    const t = g.op('TRANSPOSE', [g.input([3, 5]), g.i32('perm', [1, 0])], [5, 3], {});
    g.output(g.op('TRANSPOSE', [t, g.i32('perm', [1, 0])], [3, 5], {}));
  });
for (const [op, n] of [['SUM', 'sum'], ['MEAN', 'mean'], ['REDUCE_MAX', 'reduce_max']]) {
  add('outputs', `${n}_empty_axes_rank3`, `${op} [2,3,4] over an empty axes tensor, keep_dims false`,
    `${OUT}: ${op} over no axes folds to its input`, (g) => g.output(reduce(g, op, g.input([2, 3, 4]), [], false)));
}
add('outputs', 'mean_empty_axes_keepdims_with_relu', 'outputs [RELU(input), MEAN([1,4,4,3], axes []) keep_dims true]',
  `${OUT}: an empty-axes MEAN in slot 1 after a computed output`, (g) => {
    const x = g.input([1, 4, 4, 3]);
    g.output(unary(g, 'RELU', x), reduce(g, 'MEAN', x, [], true));
  });
add('outputs', 'reshape_same_shape', 'RESHAPE [2,3,4] to [2,3,4]', `${OUT}: a RESHAPE to the same shape folds to the input`,
  (g) => g.output(reshape(g, g.input([2, 3, 4]), [2, 3, 4])));
add('outputs', 'reshape_round_trip', 'RESHAPE [2,3,4] -> [6,4] -> [2,3,4]', `${OUT}: two RESHAPEs that cancel fold to the input`,
  (g) => g.output(reshape(g, reshape(g, g.input([2, 3, 4]), [6, 4]), [2, 3, 4])));
add('outputs', 'squeeze_view_of_input', 'SQUEEZE [1,3,1,4] -> [3,4]', `${OUT}: the output is a view (same bytes) of the input`,
  (g) => g.output(ident(g, g.input([1, 3, 1, 4]), 'SQUEEZE', [3, 4], { squeeze_dims: [] })));
add('outputs', 'expand_dims_view_of_input', 'EXPAND_DIMS [3,4] axis 1 -> [3,1,4]', `${OUT}: the output is a view (same bytes) of the input`,
  (g) => g.output(g.op('EXPAND_DIMS', [g.input([3, 4]), g.i32('axis', [1], [])], [3, 1, 4], {})));
add('outputs', 'concatenation_single_input', 'CONCATENATION of one [2,3,4] input on axis 1',
  `${OUT}: a one-input CONCATENATION folds to its input`, (g) => g.output(concat(g, [g.input([2, 3, 4])], 1)));
add('outputs', 'pad_all_zero', 'PAD [1,3,3,2] with all-zero paddings', `${OUT}: a PAD by nothing folds to its input`,
  (g) => g.output(pad(g, g.input([1, 3, 3, 2]), [[0, 0], [0, 0], [0, 0], [0, 0]])));
add('outputs', 'padv2_all_zero', 'PADV2 [2,5] with all-zero paddings, constant value 7', `${OUT}: a PADV2 by nothing folds to its input`,
  (g) => g.output(pad(g, g.input([2, 5]), [[0, 0], [0, 0]], 7)));
add('outputs', 'mirror_pad_all_zero', 'MIRROR_PAD REFLECT [1,4,4,2] with all-zero paddings', `${OUT}: a MIRROR_PAD by nothing folds to its input`,
  (g) => g.output(mirrorPad(g, g.input([1, 4, 4, 2]), [[0, 0], [0, 0], [0, 0], [0, 0]], 'REFLECT')));
add('outputs', 'slice_whole_tensor', 'SLICE [3,4,5] begin [0,0,0] size [3,4,-1]', `${OUT}: a SLICE of everything folds to its input`,
  (g) => g.output(g.op('SLICE', [g.input([3, 4, 5]), g.i32('begin', [0, 0, 0]), g.i32('size', [3, 4, -1])], [3, 4, 5], {})));
add('outputs', 'strided_slice_everything', 'STRIDED_SLICE [4,6] begin [0,0] end [4,6] strides [1,1]',
  `${OUT}: a STRIDED_SLICE that takes everything folds to its input`, (g) => g.output(stridedSlice(g, g.input([4, 6]), [0, 0], [4, 6], [1, 1])));
add('outputs', 'strided_slice_everything_masks', 'STRIDED_SLICE [2,3,4] with begin_mask and end_mask 0b111 (and end 0)',
  `${OUT}: a masked STRIDED_SLICE that takes everything folds to its input`,
  (g) => g.output(stridedSlice(g, g.input([2, 3, 4]), [0, 0, 0], [0, 0, 0], [1, 1, 1], { begin_mask: 7, end_mask: 7 })));
add('outputs', 'output_is_only_graph_input', 'no operators: the single output is the single input [2,3]',
  `${OUT}: a model without operators copies its input to its output`, (g) => g.output(g.input([2, 3])));
add('outputs', 'output_is_second_input', 'inputs a, b [2,4]; outputs [b, ADD(a, b), a]',
  `${OUT}: graph inputs as outputs 0 and 2 around a computed output, in input order b, a`, (g) => {
    const a = g.input([2, 4], { name: 'a' });
    const b = g.input([2, 4], { name: 'b' });
    g.output(b, binary(g, 'ADD', a, b), a);
  });
add('outputs', 'input_as_two_outputs', 'outputs [input, RELU(input), input] on [3,4]',
  `${OUT}: one graph input bound to two output slots`, (g) => {
    const x = g.input([3, 4]);
    g.output(x, unary(g, 'RELU', x), x);
  });
add('outputs', 'outputs_permuted_order', 'tensors input(0), relu(1), add(2); outputs listed [relu, input, add]',
  `${OUT}: subgraph outputs in non-tensor order, one of them the input`, (g) => {
    const x = g.input([2, 3, 4]);
    const r = unary(g, 'RELU', x);
    g.output(r, x, binary(g, 'ADD', x, r));
  });
add('outputs', 'outputs_permuted_four', 'tensors input, tanh, relu, add; outputs listed [relu, input, add, tanh]',
  `${OUT}: four outputs in shuffled tensor order`, (g) => {
    const x = g.input([1, 4, 4, 3]);
    const t = unary(g, 'TANH', x);
    const r = unary(g, 'RELU', x);
    g.output(r, x, binary(g, 'ADD', t, r), t);
  });
add('outputs', 'constant_output', 'outputs [RELU(input [2,3]), a constant [2,3] tensor]',
  `${OUT}: a constant tensor (model buffer) is copied to its output slot`, (g) => {
    const x = g.input([2, 3]);
    g.output(unary(g, 'RELU', x), g.weights('constant', [2, 3]));
  });
add('outputs', 'constant_output_only', 'no input; the single output is a constant [4] tensor',
  `${OUT}: a model with no inputs whose output is a constant`, (g) => g.output(g.weights('constant', [4])));
add('outputs', 'output_view_of_output', 'y = ADD(input [2,6], constant [6]); outputs [y, RESHAPE(y) to [3,4]]',
  `${OUT}: output 1 is a view (reshape) of output 0`, (g) => {
    const y = binary(g, 'ADD', g.input([2, 6]), g.weights('constant', [6]));
    g.output(y, reshape(g, y, [3, 4]));
  });
add('outputs', 'output_view_of_output_first', 'y = MUL(input [2,6], constant [6]); outputs [RESHAPE(y) to [12], y]',
  `${OUT}: output 0 is a view (reshape) of output 1`, (g) => {
    const y = binary(g, 'MUL', g.input([2, 6]), g.weights('constant', [6]));
    g.output(reshape(g, y, [12]), y);
  });
add('outputs', 'same_tensor_twice', 'outputs [RELU(input), RELU(input)]: the same tensor listed twice',
  `${OUT}: one computed tensor bound to two output slots`, (g) => {
    const r = unary(g, 'RELU', g.input([2, 5]));
    g.output(r, r);
  });
add('outputs', 'dequantize_constant_output', 'outputs [DEQUANTIZE(float16 constant [2,3]), RELU(input [2,3])]',
  `${OUT}: a constant folded at import (float16 widened) is copied to its output slot`, (g) => {
    const x = g.input([2, 3]);
    const k = g.op('DEQUANTIZE', [g.weightsF16('constant_f16', [2, 3])], [2, 3], {}, { version: 3, name: 'constant' });
    g.output(k, unary(g, 'RELU', x));
  });

// ---------------------------------------------------------------- zero/

const ZERO = 'a zero-size tensor runs as TFLite runs it (empty output, the rest unaffected) or is refused with one line naming it';
shared('zero', 'user_zero_dim_1x0x4x3', 'RELU on a [1,0,4,3] input', `${ZERO}: a zero dimension in a graph input`, { expected: false });
shared('zero', 'strided_slice_empty_result', 'STRIDED_SLICE [4,5] begin [3,0] end [1,5]: an empty [0,5] result',
  `${ZERO}: an empty slice as the model output`);
add('zero', 'zero_dim_relu_chain_with_normal_output', 'inputs a [1,0,4,3], b [2,3]; outputs [RELU6(RELU(a)), TANH(b)]',
  `${ZERO}: a zero-size chain next to a normal output`, (g) => {
    const a = g.input([1, 0, 4, 3], { name: 'a' });
    const b = g.input([2, 3], { name: 'b' });
    g.output(unary(g, 'RELU6', unary(g, 'RELU', a)), unary(g, 'TANH', b));
  });
add('zero', 'empty_slice_with_normal_output', 'input [4,5]; outputs [STRIDED_SLICE begin [3,0] end [1,5] ([0,5]), RELU(input)]',
  `${ZERO}: an empty slice that feeds nothing else next to a normal output`, (g) => {
    const x = g.input([4, 5]);
    g.output(stridedSlice(g, x, [3, 0], [1, 5], [1, 1]), unary(g, 'RELU', x));
  });
add('zero', 'slice_size_zero_with_normal_output', 'input [3,4]; outputs [RELU(input), SLICE begin [1,0] size [0,4] ([0,4])]',
  `${ZERO}: a SLICE of size 0 as output 1`, (g) => {
    const x = g.input([3, 4]);
    g.output(unary(g, 'RELU', x), g.op('SLICE', [x, g.i32('begin', [1, 0]), g.i32('size', [0, 4])], [0, 4], {}));
  });
add('zero', 'concatenation_empty_slice_and_input', 'CONCATENATION on axis 0 of STRIDED_SLICE(input [4,5]) = [0,5] and input [4,5]',
  `${ZERO}: an empty intermediate joined to a non-empty tensor`, (g) => {
    const x = g.input([4, 5]);
    g.output(concat(g, [stridedSlice(g, x, [3, 0], [1, 5], [1, 1]), x], 0));
  });
add('zero', 'concatenation_empty_input_and_input', 'CONCATENATION on axis 1 of inputs a [2,0,3] and b [2,4,3]',
  `${ZERO}: an empty graph input joined to a non-empty one`, (g) => {
    const a = g.input([2, 0, 3], { name: 'a' });
    const b = g.input([2, 4, 3], { name: 'b' });
    g.output(concat(g, [a, b], 1));
  });

// ---------------------------------------------------------------- running

// Copies ../shared/cases/<name> into ROOT/<name>, runs it on TFLite with the
// report's inputs, reconciles with op_eval.mjs and checks that the report's
// expected_K.npy (if any) agree with both before storing them as output_K.npy.
async function runSharedCase(c, dir, sharedDir, { verbose }) {
  const src = path.join(sharedDir, c.name);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  fs.copyFileSync(path.join(src, 'model.tflite'), path.join(dir, 'model.tflite'));
  // A zero-size input has no file in the report: generated (nothing to fill).
  const inputsFrom = fs.existsSync(path.join(src, 'input_0.npy')) ? src : undefined;
  const meta = await runReference({
    model: path.join(dir, 'model.tflite'), seed: 1, out: dir, quiet: !verbose, inputsFrom,
    extraMeta: { case: { name: c.name, description: c.desc, ...c.meta } },
  });
  const entry = reconcileReference(dir, meta, { knownBug: KNOWN_IO_REFERENCE_BUGS[c.name] });
  if (inputsFrom) for (const t of meta.inputs) fs.copyFileSync(path.join(src, t.file), path.join(dir, t.file));
  meta.outputs.forEach((t, k) => {
    const expected = path.join(src, `expected_${k}.npy`);
    if (!fs.existsSync(expected)) return;
    const e = readNpy(expected); const mine = readNpy(path.join(dir, t.file));
    const d = compareValues(e.data, mine.data);
    if (e.shape.join() !== mine.shape.join() || d.scaled > AGREEMENT_TOLERANCE) {
      throw new Error(`${expected} differs from the stored reference (shape [${e.shape}] vs [${mine.shape}], scaled error ${d.scaled})`);
    }
    fs.copyFileSync(expected, path.join(dir, t.file));
  });
  return entry;
}

// index.json entry of a written case folder (from its meta.json).
function indexEntry(dir) {
  const m = JSON.parse(fs.readFileSync(path.join(dir, 'meta.json'), 'utf8'));
  const io = (ts) => ts.map((t) => ({ index: t.index, name: t.name, shape: t.shape, tensor_index: t.tensor_index }));
  return {
    name: m.case.name, description: m.case.description, tests: m.case.tests, ...(m.case.source ? { source: m.case.source } : {}),
    inputs: io(m.inputs), outputs: io(m.outputs), subgraph_outputs: m.model_subgraph.outputs, reference: m.reference,
    ...(m.tflite_discrepancy ? { tflite_discrepancy: m.tflite_discrepancy.reason } : {}),
  };
}

function writeIndex(root, entries) {
  const doc = {
    generator: 'tests/reference/make_io_cases.mjs',
    engine: 'TensorFlow Lite interpreter (wasm, XNNPACK delegate, 1 thread), checked against tests/reference/op_eval.mjs',
    seed: 1,
    tolerance_hint: '|out - ref| <= 1e-4 * (1 + |ref|)',
    cases: entries,
  };
  const lines = Object.entries(doc).map(([k, v]) => (Array.isArray(v)
    ? `  ${JSON.stringify(k)}: [\n${v.map((e) => `    ${JSON.stringify(e)}`).join(',\n')}\n  ]`
    : `  ${JSON.stringify(k)}: ${JSON.stringify(v)}`));
  fs.writeFileSync(path.join(root, 'index.json'), `{\n${lines.join(',\n')}\n}\n`);
}

async function main() {
  const o = { only: null, list: false, verbose: false, shared: path.resolve(repo, '../shared/cases') };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--only') o.only = new RegExp(argv[++i]);
    else if (a === '--list') o.list = true;
    else if (a === '--shared') o.shared = path.resolve(argv[++i]);
    else if (a === '--verbose' || a === '-v') o.verbose = true;
    else { console.error('usage: node tests/reference/make_io_cases.mjs [--only REGEX] [--list] [--shared DIR] [--verbose]'); return 2; }
  }
  const selected = CASES.filter((c) => !o.only || o.only.test(c.name));
  if (o.list) {
    for (const c of selected) console.log(`${c.root}/${c.name}${c.shared ? '  [from ../shared/cases]' : ''}  ${c.desc}`);
    return 0;
  }
  const haveShared = fs.existsSync(o.shared);
  if (!haveShared) console.log(`${o.shared} not found: the committed copies of the shared cases are kept as they are`);
  const failures = [];
  for (const c of selected) {
    const dir = path.join(ROOTS[c.root], c.name);
    const log = [];
    setTfliteLogSink((line) => { if (!/XNNPACK delegate for CPU/.test(line)) log.push(line); });
    try {
      if (c.shared) {
        if (haveShared) await runSharedCase(c, dir, o.shared, o);
        else if (!fs.existsSync(path.join(dir, 'meta.json'))) throw new Error(`no ${o.shared} and no committed copy`);
      } else {
        await runCase(c, { verbose: o.verbose, root: ROOTS[c.root], knownBugs: KNOWN_IO_REFERENCE_BUGS });
      }
      if (o.verbose) console.error(`ok   ${c.root}/${c.name}`);
    } catch (e) {
      resetTflite();
      const why = log.filter((l) => /ERROR/.test(l)).map((l) => l.replace(/^ERROR:\s*/, '').trim());
      failures.push(`${c.root}/${c.name}: ${[String(e.message || e).split('\n')[0], ...why].join(' | ')}`);
    }
  }
  setTfliteLogSink(null);
  if (!o.only) {
    for (const [root, dir] of Object.entries(ROOTS)) {
      const names = CASES.filter((c) => c.root === root).map((c) => c.name);
      // Folders of cases no longer listed are removed.
      for (const d of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
        if (d !== 'index.json' && !names.includes(d)) fs.rmSync(path.join(dir, d), { recursive: true, force: true });
      }
      const written = names.filter((n) => fs.existsSync(path.join(dir, n, 'meta.json')));
      writeIndex(dir, written.map((n) => indexEntry(path.join(dir, n))));
      console.log(`${written.length} case(s) in ${path.relative(repo, dir)}`);
    }
  }
  for (const f of failures) console.log(`FAIL ${f}`);
  return failures.length ? 1 : 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main();
}
