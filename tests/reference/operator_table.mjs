#!/usr/bin/env node
// The TensorFlow Lite Micro operator table, docs/operators.md: one row per
// operator TFLM's MicroMutableOpResolver registers (tflm_resolver_ops.json),
// with the types TFLM's reference kernels accept, Kiln's float32 and int8
// status and the test cases behind each.
//
//   node tests/reference/operator_table.mjs           # writes docs/operators.md
//   node tests/reference/operator_table.mjs --check   # exit 1 if it is stale (CTest)
//
// Kiln's status is derived, never typed: an operator is supported in float32
// (int8) when a committed op case of tests/data/ops (tests/data/ops_int8;
// tests/data/control_flow for IF, WHILE, CALL_ONCE; tests/data/state for
// the stateful operators: recurrent layers, SVDF, resource variables) runs
// it on float (int8/uint8) tensors. Every such folder is a test
// (OpCaseTest.cpp, OpCaseInt8Test.cpp, ControlFlowTest.cpp, StateTest.cpp
// list the folders themselves) that must
// match TFLite 2.9 or the independent evaluator, so a case on the branch is
// a passing case. The importer's converter tables (the register...Ops
// functions of core/lib/Import/TFLite*Ops.cpp) are read as a cross-check:
// an operator they accept without an op case is shown as "importer only", and
// an operator a case uses that no table names stops the script (the reading
// of the tables is stale). Operator codes come from each model.tflite
// (tflite_flatbuffer.mjs), names from Kiln's core/schema/tflite.fbs. Plain
// node, no npm packages, no TFLite, no network; deterministic output.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseTflite } from './tflite_flatbuffer.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const OUT = path.join(ROOT, 'docs/operators.md');
const COMMAND = 'node tests/reference/operator_table.mjs';
const QUANTIZED = new Set(['int8', 'uint8']);

// The other committed models, by test: [label, folder under tests/data, how].
// 'dirs': every DIR/model.tflite; 'files': every *.tflite (unparsable files,
// such as the garbled refusal models, are skipped).
const OTHER_TESTS = [
  ['special values', 'special', 'dirs'],
  ['output binding', 'outputs', 'dirs'],
  ['zero-size', 'zero', 'dirs'],
  ['bug reports', 'cases', 'dirs'],
  ['int8 models', 'models/int8', 'files'],
  ['bad-input models', 'bad', 'files'],
  ['recurrent refusals', 'state/refused', 'files'],
];

/// BuiltinOperator code -> name, from the enum of core/schema/tflite.fbs.
function builtinNames() {
  const fbs = fs.readFileSync(path.join(ROOT, 'core/schema/tflite.fbs'), 'utf8');
  const body = fbs.match(/enum BuiltinOperator\s*:\s*\w+\s*\{([^}]*)\}/);
  if (!body) throw new Error('core/schema/tflite.fbs: no enum BuiltinOperator');
  const names = new Map();
  for (const m of body[1].matchAll(/^\s*(\w+)\s*=\s*(\d+)/gm)) names.set(Number(m[2]), m[1]);
  return names;
}

/// The operators of a parsed model, each as { op, quantized } (quantized: an
/// input or output tensor is int8/uint8), over every subgraph.
function modelOperators(file, names) {
  const model = parseTflite(fs.readFileSync(file));
  const ops = [];
  for (const sg of model.subgraphs)
    for (const o of sg.operators) {
      const code = /^BUILTIN_(\d+)$/.exec(o.op);
      const op = code ? (names.get(Number(code[1])) ?? o.op) : o.op;
      const tensors = [...o.inputs, ...o.outputs].filter((t) => t >= 0).map((t) => sg.tensors[t]);
      ops.push({ op, quantized: tensors.some((t) => QUANTIZED.has(t.dtype)) });
    }
  return ops;
}

/// Folder names of ROOT/rel holding a model.tflite, sorted.
function caseDirs(rel) {
  const dir = path.join(ROOT, 'tests/data', rel);
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir).filter((d) => fs.existsSync(path.join(dir, d, 'model.tflite'))).sort();
}

/// The op cases: Map operator -> { float: Set of case, int8: Set of case }. Each
/// operator instance counts in the column of its tensors' types.
function opCases(names) {
  const cases = new Map();
  const add = (op, column, name) => {
    if (!cases.has(op)) cases.set(op, { float: new Set(), int8: new Set() });
    cases.get(op)[column].add(name);
  };
  for (const rel of ['ops', 'ops_int8', 'control_flow', 'state'])
    for (const name of caseDirs(rel)) {
      const file = path.join(ROOT, 'tests/data', rel, name, 'model.tflite');
      let ops;
      try {
        ops = modelOperators(file, names);
      } catch (e) {
        throw new Error(`tests/data/${rel}/${name}/model.tflite: ${e.message}`);
      }
      // A case is named by its folder; one counted in the other folder's
      // column (no such case today) keeps its tests/data/ folder in front.
      for (const o of ops) {
        const column = o.quantized ? 'int8' : 'float';
        add(o.op, column, rel === (column === 'int8' ? 'ops_int8' : 'ops') ? name : `${rel}/${name}`);
      }
    }
  return cases;
}

/// The other tests: Map operator -> Map label -> Set of case/model names.
function otherTests(names) {
  const found = new Map();
  for (const [label, rel, how] of OTHER_TESTS) {
    const dir = path.join(ROOT, 'tests/data', rel);
    if (!fs.existsSync(dir)) continue;
    const entries = how === 'dirs'
      ? caseDirs(rel).map((d) => [d, path.join(dir, d, 'model.tflite')])
      : fs.readdirSync(dir).filter((f) => f.endsWith('.tflite')).sort().map((f) => [f.replace(/\.tflite$/, ''), path.join(dir, f)]);
    for (const [name, file] of entries) {
      let ops;
      try {
        ops = modelOperators(file, names);
      } catch {
        continue; // a deliberately broken refusal model
      }
      for (const { op } of ops) {
        if (!found.has(op)) found.set(op, new Map());
        const byLabel = found.get(op);
        if (!byLabel.has(label)) byLabel.set(label, new Set());
        byLabel.get(label).add(name);
      }
    }
  }
  return found;
}

/// The operators Kiln's TFLite converter tables name: { float: Set, int8: Set }.
/// Reads the body of every `void register...Ops(ConverterTable &table)` of
/// core/lib/Import/TFLite*.cpp; TFLiteQuantized*.cpp files fill the int8 table.
export function importerTables() {
  const dir = path.join(ROOT, 'core/lib/Import');
  const tables = { float: new Set(), int8: new Set() };
  for (const file of fs.readdirSync(dir).filter((f) => /^TFLite\w*\.cpp$/.test(f)).sort()) {
    const text = fs.readFileSync(path.join(dir, file), 'utf8');
    // Control flow is registered in both tables (its subgraphs' operators
    // pick their own), and so are DENSIFY (TFLiteSparsity.cpp: float and
    // int8 sparse constants) and the resource variables (TFLiteStateOps.cpp).
    // A registerQuantized...Ops function fills the int8 table wherever it
    // is (TFLiteSvdfOps.cpp holds both of SVDF's).
    const both = ['TFLiteControlFlowOps.cpp', 'TFLiteSparsity.cpp', 'TFLiteStateOps.cpp'];
    const into = (fn) => (file.startsWith('TFLiteQuantized') || fn.startsWith('registerQuantized') ? [tables.int8]
      : both.includes(file) ? [tables.float, tables.int8] : [tables.float]);
    for (const m of text.matchAll(/^void (register\w*Ops)\(ConverterTable &\w+\) \{\n([\s\S]*?)^\}/gm))
      for (const op of m[2].matchAll(/BuiltinOperator::(\w+)/g)) for (const table of into(m[1])) table.add(op[1]);
  }
  return tables;
}

/// Kiln's status in one column: 'yes' with an op case, 'importer only'
/// when the converter table has it without a case, else 'no'.
function kilnStatus(cases, table, op) {
  if (cases.size) return 'yes';
  return table.has(op) ? 'importer only' : 'no';
}

/// "float32, int8" from a TFLM entry's type fields, or its note where none holds.
function tflmTypes(e) {
  const kinds = ['float32', 'int8', 'int16'];
  if (kinds.every((k) => e[k] === 'any')) return 'any (byte copy)';
  const yes = kinds.filter((k) => e[k] === true);
  if (yes.length) return yes.join(', ');
  if (kinds.every((k) => e[k] === null)) return 'no element type';
  return e.note ?? 'none of float32/int8/int16';
}

const list = (names) => [...names].sort().map((n) => `\`${n}\``).join(', ');

function otherCell(byLabel) {
  if (!byLabel) return '';
  return OTHER_TESTS.filter(([label]) => byLabel.has(label)).map(([label]) => `${label}: ${list(byLabel.get(label))}`).join('; ');
}

/// Throws unless every entry of tflm_resolver_ops.json is well formed: a
/// unique name (a BuiltinOperator of core/schema/tflite.fbs for a builtin),
/// a kind, a source file and float32/int8/int16 each true, false, "any" or null.
function checkResolver(resolver, known) {
  const seen = new Set();
  for (const e of resolver.operators ?? []) {
    const where = `tflm_resolver_ops.json: ${JSON.stringify(e.name)}`;
    if (typeof e.name !== 'string' || seen.has(e.name)) throw new Error(`${where}: missing or repeated name`);
    seen.add(e.name);
    if (e.kind !== 'builtin' && e.kind !== 'custom') throw new Error(`${where}: kind must be "builtin" or "custom"`);
    if (e.kind === 'builtin' && !known.has(e.name)) throw new Error(`${where} is not a BuiltinOperator of core/schema/tflite.fbs`);
    if (typeof e.source !== 'string') throw new Error(`${where}: no source file`);
    for (const k of ['float32', 'int8', 'int16'])
      if (![true, false, 'any', null].includes(e[k])) throw new Error(`${where}: ${k} must be true, false, "any" or null`);
  }
  if (!seen.size || !resolver.tflm?.commit) throw new Error('tflm_resolver_ops.json: no operators or no tflm.commit');
}

/// Everything the document says, computed from the repository.
function collect() {
  const resolver = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests/reference/tflm_resolver_ops.json'), 'utf8'));
  const names = builtinNames();
  checkResolver(resolver, new Set(names.values()));
  const cases = opCases(names);
  const tables = importerTables();
  for (const [op, c] of cases)
    for (const col of ['float', 'int8'])
      if (c[col].size && !tables[col].has(op))
        throw new Error(`${op} has ${col} op cases but no register...Ops function of core/lib/Import names it ` +
          '(operator_table.mjs reads those tables: update importerTables)');
  const empty = { float: new Set(), int8: new Set() };
  const rows = resolver.operators.map((e) => {
    const c = e.kind === 'builtin' ? (cases.get(e.name) ?? empty) : empty;
    const tf = e.kind === 'builtin' ? tables.float : new Set();
    const ti = e.kind === 'builtin' ? tables.int8 : new Set();
    return { e, c, float: kilnStatus(c.float, tf, e.name), int8: kilnStatus(c.int8, ti, e.name) };
  });
  const inTflm = new Set(resolver.operators.filter((e) => e.kind === 'builtin').map((e) => e.name));
  const extra = [...new Set([...cases.keys(), ...tables.float, ...tables.int8])].filter((op) => !inTflm.has(op)).sort();
  return { resolver, rows, cases, tables, extra, other: otherTests(names) };
}

const countWhere = (rows, pred) => rows.filter(pred).length;

// QUANTIZE always writes an integer tensor: TFLM's float32 is its float
// input, which the int8 column covers (the float -> int8 op cases), so it
// does not count as a float32 kernel here.
const INTEGER_OUTPUT = new Set(['QUANTIZE']);

/// Whether TFLM's reference kernel runs builtin row `r` in `type` ('float32' or 'int8').
function tflmRuns(r, type) {
  if (type === 'float32' && INTEGER_OUTPUT.has(r.e.name)) return false;
  return r.e[type] === true || r.e[type] === 'any';
}

/// The summary and the method, above the table.
function header({ resolver, rows, extra }) {
  const builtins = rows.filter((r) => r.e.kind === 'builtin');
  const custom = rows.length - builtins.length;
  const tflmFloat = countWhere(builtins, (r) => tflmRuns(r, 'float32'));
  const tflmInt8 = countWhere(builtins, (r) => tflmRuns(r, 'int8'));
  const yes = (col) => countWhere(builtins, (r) => r[col] === 'yes');
  const only = (col) => countWhere(builtins, (r) => r[col] === 'importer only');
  const both = (col, type) => countWhere(builtins, (r) => r[col] === 'yes' && tflmRuns(r, type));
  const t = resolver.tflm;
  return [
    '# TensorFlow Lite Micro operators in Kiln',
    '',
    `<!-- Generated by \`${COMMAND}\` from the repository; do not edit. CTest`,
    '     reference_operator_table_check fails when this file is stale. -->',
    '',
    `TFLM's \`MicroMutableOpResolver\` (${t.resolver}, tflite-micro commit`,
    `\`${t.commit.slice(0, 12)}\`, ${t.commit_date}) registers **${rows.length} operators**: ${builtins.length} builtins and`,
    `${custom} custom operators. Of the ${builtins.length} builtins, TFLM's reference kernels take float32`,
    `in ${tflmFloat} and int8 in ${tflmInt8} (counting byte copies of any type; QUANTIZE, float input, counts as int8).`,
    '',
    `- **Kiln float32: ${yes('float')}** of the ${builtins.length} builtins have an op case (${both('float', 'float32')} of the ${tflmFloat} that TFLM runs in float32)` +
      (only('float') ? `, ${only('float')} more ${only('float') === 1 ? 'is' : 'are'} accepted by the importer without one.` : '.'),
    `- **Kiln int8: ${yes('int8')}** have an int8/uint8 op case (${both('int8', 'int8')} of the ${tflmInt8} that TFLM runs in int8)` +
      (only('int8') ? `, ${only('int8')} more ${only('int8') === 1 ? 'is' : 'are'} accepted by the importer without one.` : '.'),
    `- Custom operators (TFLM's signal library, CIRCULAR_BUFFER, detection post-processing, Ethos-U, DECODE): Kiln refuses every`,
    '  custom operator with one error naming it (the refusal models listed in their rows).',
    `- Kiln also imports ${extra.length} operators TFLM does not register (last table).`,
    '',
    '## How the columns are derived',
    '',
    `Regenerate with \`${COMMAND}\` (plain node; no TFLite, no network).`,
    '',
    '- **TFLM types**: `tests/reference/tflm_resolver_ops.json`, read from TFLM\'s sources (its `method` says how):',
    '  the types the reference kernel file (`tensorflow/lite/micro/kernels/`) accepts; optimized kernels (CMSIS-NN, Xtensa, ...) are not counted.',
    '- **Kiln float32 / int8**: *yes* when a committed op case runs the operator on float (int8/uint8) tensors:',
    '  the folders of `tests/data/ops` (`TFLite/OpCase.*`, against TFLite 2.9 or `op_eval.mjs`) and',
    '  `tests/data/ops_int8` (`OpCaseInt8/*`, bit-exact against TFLite 2.9\'s builtin integer kernels), and for IF, WHILE and CALL_ONCE `tests/data/control_flow` (`TFLite/ControlFlowCase.*`). Each operator',
    '  of each `model.tflite` counts in the column of its tensors (int8 when one of its inputs or outputs is int8/uint8),',
    '  so a chain case counts for every operator in it (QUANTIZE and DEQUANTIZE of int8 count as int8; DEQUANTIZE of',
    '  float16 weights as float32). Both tests run every folder, so a case on the main branch is a',
    '  passing case. *importer only*: a converter table of `core/lib/Import` (the `register...Ops` functions of',
    '  `TFLite*Ops.cpp`, `TFLiteQuantized*.cpp` for int8) accepts it but no op case runs it; *no*: the importer refuses',
    '  it with one error naming the operator.',
    '- **Other tests**: the other committed models that contain the operator: special-value rows (`tests/data/special`,',
    '  CTest `TfliteSpecialValues`), output-binding and zero-size cases (`tests/data/outputs`, `tests/data/zero`),',
    '  bug-report cases (`tests/data/cases`), the int8 real models (`tests/data/models/int8`) and the bad-input models',
    '  (`tests/data/bad`, `Cli.*`: such a model contains the operator, it does not mean Kiln refuses it; a few of them compile).',
    '',
  ];
}

function tableRows({ rows, other }) {
  const out = [
    '## TFLM\'s resolver list',
    '',
    '| operator | TFLM types (reference kernel) | Kiln float32 | float32 op cases | Kiln int8 | int8 op cases | other tests |',
    '|---|---|---|---|---|---|---|',
  ];
  // Builtins, then custom operators, each by name (code-unit order: no locale).
  const key = (r) => `${r.e.kind === 'builtin' ? 0 : 1}${r.e.name}`;
  const sorted = [...rows].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  for (const { e, c, float, int8 } of sorted) {
    const name = e.kind === 'custom' ? `${e.name} (custom)` : e.name;
    const src = e.source ? ` (\`${e.source.replace(/^tensorflow\/lite\/micro\/kernels\//, '')}\`)` : '';
    const cell = (s) => s.replace(/\|/g, '\\|');
    out.push(`| ${name} | ${cell(tflmTypes(e))}${src} | ${float} | ${list(c.float)} | ${int8} | ${list(c.int8)} | ${otherCell(other.get(e.kind === 'builtin' ? e.name : 'CUSTOM'))} |`);
  }
  return out;
}

function extraRows({ extra, cases, tables, other }) {
  const out = [
    '',
    '## Kiln operators TFLM does not register',
    '',
    '| operator | Kiln float32 | float32 op cases | Kiln int8 | int8 op cases | other tests |',
    '|---|---|---|---|---|---|',
  ];
  const empty = { float: new Set(), int8: new Set() };
  for (const op of extra) {
    const c = cases.get(op) ?? empty;
    out.push(`| ${op} | ${kilnStatus(c.float, tables.float, op)} | ${list(c.float)} | ${kilnStatus(c.int8, tables.int8, op)} | ${list(c.int8)} | ${otherCell(other.get(op))} |`);
  }
  return out;
}

/// The builtins TFLM runs in a type that Kiln has no op case for, per column.
function gapRows({ rows }) {
  const out = ['', '## Gaps: TFLM kernels without a Kiln op case', ''];
  for (const [col, tflmCol, label] of [['float', 'float32', 'float32'], ['int8', 'int8', 'int8']]) {
    const gaps = rows.filter((r) => r.e.kind === 'builtin' && r[col] !== 'yes' && tflmRuns(r, tflmCol));
    const names = gaps.map((r) => (r[col] === 'importer only' ? `${r.e.name} (importer only)` : r.e.name));
    out.push(`- ${label} (${gaps.length}): ${names.join(', ') || 'none'}`);
  }
  return out;
}

/// The whole of docs/operators.md.
export function render() {
  const data = collect();
  return [...header(data), ...tableRows(data), ...gapRows(data), ...extraRows(data), ''].join('\n');
}

function main(argv) {
  const check = argv.includes('--check');
  const unknown = argv.filter((a) => a !== '--check');
  if (unknown.length) {
    console.error(`usage: ${COMMAND} [--check]`);
    return 2;
  }
  const text = render();
  const rel = path.relative(ROOT, OUT);
  if (!check) {
    fs.writeFileSync(OUT, text);
    console.log(`wrote ${rel}`);
    return 0;
  }
  const old = fs.existsSync(OUT) ? fs.readFileSync(OUT, 'utf8') : '';
  if (old === text) {
    console.log(`${rel} is up to date`);
    return 0;
  }
  const a = old.split('\n');
  const b = text.split('\n');
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  console.error(`${rel} is stale (first difference at line ${i + 1}):\n  file:      ${a[i] ?? '(end)'}\n  generated: ${b[i] ?? '(end)'}`);
  console.error(`run: ${COMMAND}   (and commit ${rel})`);
  return 1;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    process.exitCode = main(process.argv.slice(2));
  } catch (e) {
    console.error(`operator_table.mjs: ${e.message}`);
    process.exitCode = 1;
  }
}
