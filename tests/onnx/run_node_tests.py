#!/usr/bin/python3
"""Runs the ONNX backend test cases through `kiln compile` and `kiln run`.

    tests/onnx/run_node_tests.py [--kiln build/bin/kiln] [--filter REGEX] [-v]
        [--jobs 2] [--timeout 60] [--out-dir DIR] [--write-docs]
        [--data-dir DIR ...] [--min-pass-rate 97]

The cases are the folders node (932), pytorch-converted (82),
pytorch-operator (35) and simple (23) of Debian's libonnx-testdata 1.12
(/usr/share/libonnx-testdata/data; --data-dir picks others). Each case
(<folder>/<case>/) is model.onnx with test_data_set_0/input_K.pb and
output_K.pb (serialized TensorProtos, the ONNX reference's values). Every
case ends in one status:

  pass     kiln compile and kiln run succeed and every output has the
           expected shape and values: float outputs within
           1e-4 x (1 + |expected|) (NaN where NaN is expected), or within
           atol + rtol x |expected| where the case documents its own
           tolerance (a data.json with rtol/atol; no 1.12 node case does);
           integer and bool outputs exactly.
  fail     compiled but wrong: an output's values or shape differ, an output
           is missing, `kiln run` exits with an error, or kiln compile
           refuses with an "internal error" (Kiln accepted the model and
           then built invalid IR: a Kiln bug, not a refusal).
  refused  kiln compile exits with status 1 or 2 and exactly one stderr line,
           "kiln: error: ..." (an operator, attribute or element type Kiln
           does not support, named).
  crash    anything else: a signal, another exit status, more than one stderr
           line, an MLIR dump or LLVM crash report on stderr, or no result
           within --timeout seconds.

Static-compilable: a case is out of reach for the first reason of
OUT_OF_REACH that applies (read from the model alone, before Kiln runs):
training-only nodes, random outputs, output shapes that depend on input
values, sequence/optional/string values, graph inputs or outputs of other
element types than float32/int32/int64/bool, zero-size tensors. Every other
case is static-compilable, whatever its operators; the headline pass rate
(--min-pass-rate) is pass / static-compilable, and a static-compilable case
that fails (a wrong value) fails the run, as a crash anywhere does.

Cases are also grouped by the older core-operator list (reported apart):
  in-list       every node's op type is one of CORE_OPERATORS or
                FOLDED_OPERATORS and every graph input and output is a
                float32, int32, int64 or bool tensor (or int8 and uint8
                where a quantized operator, QUANT_OPERATORS, is used);
  element-type  every op type is listed, but a graph input or output has
                another type;
  other         some node's op type is not in the lists.

Shape inputs: Kiln compiles static shapes, so an input that sets an output
shape, the axes an operator works on or a Resize's grid (SHAPE_INPUTS: Reshape's
shape, Slice's starts/ends/axes/steps, Pad's pads, Resize's roi/scales/sizes,
..., and the quantization parameters of QuantizeLinear, DequantizeLinear,
QLinearConv and QLinearMatMul and the weight zero points of ConvInteger and
MatMulInteger) must be known at compile time. Where a case feeds one as a graph input,
the harness moves it into the model as an initializer holding the case's
input value (what deploying such a model with Kiln takes) and runs the rest;
--no-freeze feeds them at run time as the case does (Kiln refuses those).
Likewise a graph input that decides control flow (CONTROL_INPUTS: If's
condition, Loop's trip count and condition) is fixed to the case's value
with `kiln compile --fix-value=NAME=VALUE`, so that Kiln folds the If or
unrolls the Loop as it does for a deployed model with that value, and is not
fed to `kiln run`.

Writes DIR/onnx-node-tests.md (summary per folder, the out-of-reach cases by
reason, every static-compilable case that does not pass and every crash,
with its reason, a per-operator table) and
DIR/onnx-node-tests.json (every case) into --out-dir (default
build/onnx-node-tests); --write-docs writes them into docs/ as well (the
committed table). Exit status 1 if a case crashed, a static-compilable case
failed or the static-compilable pass rate (percent) is below
--min-pass-rate, else 0.
"""
import argparse
import collections
import concurrent.futures
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import numpy_helper

DATA_ROOT = '/usr/share/libonnx-testdata/data'
NODE_DIR = os.path.join(DATA_ROOT, 'node')
# The folders of libonnx-testdata 1.12 the report covers (`real` holds the
# model zoo's large models, fetched by other tests).
FOLDERS = ('node', 'pytorch-converted', 'pytorch-operator', 'simple')
REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '../..'))

# The core operator set of the ONNX front end (the 71 operators its first
# conformance target named: convolutions, matmuls, activations,
# elementwise, reductions, pools, layout and normalization), and the
# shape-computation operators the importer folds to constants.
CORE_OPERATORS = '''Conv ConvTranspose Gemm MatMul BatchNormalization Relu LeakyRelu PRelu Elu
Selu Clip Sigmoid HardSigmoid HardSwish Tanh Exp Log Sqrt Reciprocal Neg Abs Floor Ceil Erf Pow
Add Sub Mul Div Min Max Sum Mean Equal Greater Less Where Not And Softmax LogSoftmax MaxPool
AveragePool GlobalAveragePool GlobalMaxPool ReduceMean ReduceSum ReduceMax ReduceMin ReduceProd
ReduceL2 Reshape Flatten Squeeze Unsqueeze Transpose Concat Split Slice Gather Pad Tile Expand
Resize Upsample DepthToSpace SpaceToDepth LayerNormalization InstanceNormalization Identity
Dropout Cast NegativeLogLikelihoodLoss SoftmaxCrossEntropyLoss Sin Cos Tan Sinh Cosh Asin Acos
Atan Asinh Acosh Atanh HannWindow HammingWindow BlackmanWindow
LSTM GRU RNN GatherElements GatherND
QuantizeLinear DequantizeLinear DynamicQuantizeLinear QLinearConv QLinearMatMul ConvInteger
MatMulInteger'''.split()
# The quantized operators: a case using one of them may have int8 and uint8
# graph inputs and outputs (QUANT_TYPES) and stays in the list.
QUANT_OPERATORS = set('''QuantizeLinear DequantizeLinear DynamicQuantizeLinear QLinearConv
QLinearMatMul ConvInteger MatMulInteger'''.split())
FOLDED_OPERATORS = 'Shape Size Constant ConstantOfShape Range'.split()
LISTED = set(CORE_OPERATORS) | set(FOLDED_OPERATORS)

# Cases out of reach, by why (checked in this order; the first that applies
# is the case's). Every other case is *static-compilable*: the denominator of
# the headline pass rate. The first four are beyond any static compiler of
# inference graphs; the last two are outside what Kiln compiles by design
# (docs/design.md: float32 compute with int32/int64/bool index and mask
# tensors; tensors of at least one element).
OUT_OF_REACH = {
    'training': 'training only: ai.onnx.preview.training optimizers, Gradient, '
                'BatchNormalization with training_mode = 1 (batch statistics and running-mean '
                'outputs)',
    'random': 'random output: Bernoulli, Random*, Multinomial and Dropout in training mode draw '
              'from a generator whose stream the expected values come from',
    'data-dependent shape': 'the output shape depends on input values (NonZero, Unique, '
                            'Compress, NonMaxSuppression)',
    'non-tensor': 'sequence, optional, map or string values (Sequence*, Optional*, '
                  'StringNormalizer, string Cast): Kiln compiles fixed-size numeric tensors',
    'element type': 'a graph input or output of another element type than float32, int32, '
                    'int64 or bool (int8 and uint8 too where a quantized operator takes them; '
                    'float64, float16, int16, uint16-64 are out): by design, Kiln computes '
                    'float32 with int32/int64/bool index and mask tensors',
    'zero-size': 'a zero-size graph input or output (a 0 dimension): by design, Kiln '
                 'compiles tensors of at least one element (docs/design.md, "Shapes and '
                 'sizes")',
}
TRAINING_DOMAINS = ('ai.onnx.preview.training',)
TRAINING_OPS = {'Gradient'}
RANDOM_OPS = {'Bernoulli', 'RandomNormal', 'RandomUniform', 'RandomNormalLike',
              'RandomUniformLike', 'Multinomial'}
DATA_DEPENDENT_OPS = {'NonZero', 'Unique', 'Compress', 'NonMaxSuppression'}
STRING_OPS = {'StringNormalizer', 'RegexFullMatch', 'StringConcat', 'StringSplit'}

# TensorProto element types Kiln compiles (graph inputs and outputs).
KILN_TYPES = {onnx.TensorProto.FLOAT, onnx.TensorProto.INT32, onnx.TensorProto.INT64,
              onnx.TensorProto.BOOL}
QUANT_TYPES = KILN_TYPES | {onnx.TensorProto.INT8, onnx.TensorProto.UINT8}

# Inputs that set an output's shape, the axes an operator works on, or a
# Resize's sampling grid, by operator and input position (ONNX operator
# specification). Kiln compiles static shapes, so these values must be known
# when the model is compiled; many node tests feed them as graph inputs.
# Unless --no-freeze, such a graph input becomes an initializer holding the
# case's input value (as a deployer fixing them would) before kiln compile.
SHAPE_INPUTS = {'Reshape': {1}, 'Expand': {1}, 'Tile': {1}, 'Slice': {1, 2, 3, 4},
                'Pad': {1, 3}, 'Split': {1}, 'Squeeze': {1}, 'Unsqueeze': {1},
                'ConstantOfShape': {0}, 'Range': {0, 1, 2}, 'Resize': {1, 2, 3},
                'Upsample': {1}, 'TopK': {1}, 'OneHot': {1}, 'CumSum': {1},
                'HannWindow': {0}, 'HammingWindow': {0}, 'BlackmanWindow': {0},
                'LSTM': {4}, 'GRU': {4}, 'RNN': {4}, 'MaxUnpool': {2},
                'DFT': {1}, 'STFT': {1, 3},
                # Quantization parameters (scales; zero points of the
                # weights and outputs) are compiled in.
                'QuantizeLinear': {1, 2}, 'DequantizeLinear': {1, 2},
                'QLinearConv': {1, 2, 4, 5, 6, 7}, 'QLinearMatMul': {1, 2, 4, 5, 6, 7},
                'ConvInteger': {3}, 'MatMulInteger': {3}}
SHAPE_INPUTS.update({op: {1} for op in ('ReduceSum', 'ReduceMean', 'ReduceMax', 'ReduceMin',
                                        'ReduceProd', 'ReduceL1', 'ReduceL2', 'ReduceLogSum',
                                        'ReduceLogSumExp', 'ReduceSumSquare')})

# Inputs that decide control flow, by operator and input position: If's
# condition, Loop's trip count and condition. Kiln folds If and unrolls Loop
# at compile time, so unless --no-freeze a graph input there is fixed to the
# case's value with --fix-value (a numeric tensor of at most
# MAX_FIXED_ELEMENTS elements).
CONTROL_INPUTS = {'If': {0}, 'Loop': {0, 1}}
MAX_FIXED_ELEMENTS = 16

TOLERANCE = 1e-4
STATUSES = ('pass', 'fail', 'refused', 'crash')
GROUPS = ('in-list', 'element-type', 'other')
# On stderr these mean an IR dump or an LLVM crash report, never a message.
DUMP_MARKERS = ('module {', 'func.func', 'loc(', 'Stack dump',
                'PLEASE submit', 'Assertion', 'LLVM ERROR', '#0 0x')


# --- What a case is -----------------------------------------------------------

def op_name(node):
    """Op type, prefixed by its domain outside the default one."""
    return node.op_type if node.domain in ('', 'ai.onnx') else f'{node.domain}.{node.op_type}'


def type_name(type_proto):
    """'float32', 'int64', 'sequence', ... for a ValueInfo's TypeProto."""
    kind = type_proto.WhichOneof('value')
    if kind != 'tensor_type':
        return kind or 'undefined'
    elem = type_proto.tensor_type.elem_type
    names = {onnx.TensorProto.FLOAT: 'float32', onnx.TensorProto.DOUBLE: 'float64',
             onnx.TensorProto.FLOAT16: 'float16'}
    try:
        return names.get(elem) or onnx.TensorProto.DataType.Name(elem).lower()
    except ValueError:
        return f'type {elem}'


def handled_type(type_proto, quantized=False):
    return (type_proto.WhichOneof('value') == 'tensor_type' and
            type_proto.tensor_type.elem_type in (QUANT_TYPES if quantized else KILN_TYPES))


def all_nodes(graph):
    """The nodes of `graph` and of its subgraphs (If, Loop, Scan bodies)."""
    for n in graph.node:
        yield n
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                yield from all_nodes(a.g)
            for g in a.graphs:
                yield from all_nodes(g)


def attr_value(node, name, default=None):
    for a in node.attribute:
        if a.name == name:
            return onnx.helper.get_attribute_value(a)
    return default


def out_of_reach(case_dir, model, io):
    """The OUT_OF_REACH key of a case, or None when it is static-compilable."""
    nodes = list(all_nodes(model.graph))
    types = {n.op_type for n in nodes}
    constants = {t.name: t for t in model.graph.initializer}
    if any(n.domain in TRAINING_DOMAINS for n in nodes) or types & TRAINING_OPS or \
            any(n.op_type == 'BatchNormalization' and attr_value(n, 'training_mode', 0)
                for n in nodes):
        return 'training'
    data = os.path.join(case_dir, 'test_data_set_0')
    graph_inputs = [v.name for v in model.graph.input if v.name not in constants]

    def dropout_training(n):
        # training_mode (input 2) true, as a constant or the case's input value.
        if n.op_type != 'Dropout' or len(n.input) < 3 or not n.input[2]:
            return False
        name = n.input[2]
        if name in constants:
            return bool(numpy_helper.to_array(constants[name]).any())
        if name in graph_inputs:
            k = graph_inputs.index(name)
            path = os.path.join(data, f'input_{k}.pb')
            return os.path.exists(path) and bool(read_tensor(path).any())
        return True
    if types & RANDOM_OPS or any(dropout_training(n) for n in nodes):
        return 'random'
    if types & DATA_DEPENDENT_OPS:
        return 'data-dependent shape'
    # Sequence and optional values inside the graph count as such too.
    sequences = {t for t in types if t.startswith(('Sequence', 'Optional')) or
                 t in ('SplitToSequence', 'ConcatFromSequence')}
    if types & STRING_OPS or sequences or any(v.type.WhichOneof('value') != 'tensor_type' or
                                 v.type.tensor_type.elem_type == onnx.TensorProto.STRING
                                 for v in io):
        return 'non-tensor'
    if not all(handled_type(v.type, bool(types & QUANT_OPERATORS)) for v in io):
        return 'element type'
    # (An empty shape input, such as ReduceSum's axes [], becomes an
    # initializer: not a zero-size tensor Kiln computes.)
    shape_fed = {n.input[k] for n in nodes for k in SHAPE_INPUTS.get(n.op_type, ())
                 if k < len(n.input)}
    if any(d.HasField('dim_value') and d.dim_value == 0
           for v in io if v.name not in shape_fed for d in v.type.tensor_type.shape.dim):
        return 'zero-size'
    return None


def describe(case_dir):
    """The case's operator, node op types, opset, I/O types, group and
    whether it is out of reach (OUT_OF_REACH)."""
    model = onnx.load(os.path.join(case_dir, 'model.onnx'))
    graph = model.graph
    ops = [op_name(n) for n in graph.node]
    name = os.path.basename(case_dir)
    # The operator under test: a function's expansion belongs to the
    # operator of its unexpanded sibling case; Constant nodes feed it.
    operator = None
    if name.endswith('_expanded'):
        sibling = os.path.join(os.path.dirname(case_dir), name[:-len('_expanded')], 'model.onnx')
        if os.path.exists(sibling):
            operator = op_name(onnx.load(sibling).graph.node[-1])
    if operator is None:
        tested = [o for o in ops if o != 'Constant'] or ops
        operator = tested[-1] if tested else '(empty graph)'
    initializers = {t.name for t in graph.initializer}
    io = [v for v in graph.input if v.name not in initializers] + list(graph.output)
    quantized = any(o in QUANT_OPERATORS for o in ops)
    bad_types = sorted({f'{v.name}: {type_name(v.type)}' for v in io
                        if not handled_type(v.type, quantized)})
    opset = next((o.version for o in model.opset_import if o.domain in ('', 'ai.onnx')), 0)
    if not all(o in LISTED for o in ops):
        group = 'other'
    elif bad_types:
        group = 'element-type'
    else:
        group = 'in-list'
    return {'operator': operator, 'ops': sorted(set(ops)), 'opset': opset, 'group': group,
            'unhandled_types': bad_types, 'reach': out_of_reach(case_dir, model, io)}


# --- Running it ---------------------------------------------------------------

def numbered(data_dir, prefix):
    files = [f for f in os.listdir(data_dir) if re.fullmatch(prefix + r'_\d+\.pb', f)]
    return sorted(files, key=lambda f: int(re.findall(r'\d+', f)[0]))


def read_tensor(path):
    t = onnx.TensorProto()
    with open(path, 'rb') as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def stderr_problem(stderr, allowed_prefix):
    """Why stderr is not (at most) lines starting with allowed_prefix, or None."""
    lines = [l for l in stderr.splitlines() if l.strip()]
    for marker in DUMP_MARKERS:
        if marker in stderr:
            return f"'{marker}' on stderr: {lines[0][:200] if lines else ''}"
    stray = [l for l in lines if not l.startswith(allowed_prefix)]
    if stray:
        return f'unexpected stderr line: {stray[0][:200]}'
    return None


def exit_problem(rc):
    if rc < 0:
        try:
            return f'killed by {signal.Signals(-rc).name}'
        except ValueError:
            return f'killed by signal {-rc}'
    return f'exit status {rc}'


# Extra `kiln compile` flags (--compile-flag, e.g. --check-bounds).
COMPILE_FLAGS = []


def compile_case(kiln, model, artifact, timeout, flags=()):
    """(status, reason) after kiln compile (with `flags` too), or None when it
    built the artifact."""
    p = subprocess.run([kiln, 'compile', model, '-o', artifact] + COMPILE_FLAGS + list(flags),
                       capture_output=True,
                       text=True, errors='replace', timeout=timeout)
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    if p.returncode == 0:
        problem = stderr_problem(p.stderr, 'kiln: warning:')
        return ('crash', 'kiln compile succeeded with ' + problem) if problem else None
    if p.returncode not in (1, 2):
        return 'crash', f'kiln compile: {exit_problem(p.returncode)}: ' + (lines[-1] if lines else '')
    problem = stderr_problem(p.stderr, 'kiln: error:')
    if problem or len(lines) != 1:
        return 'crash', f'kiln compile: {len(lines)} stderr lines, not one error line: ' + \
            (problem or (lines[0] if lines else '(none)'))
    message = lines[0][len('kiln: error:'):].strip()
    if message.startswith(os.path.basename(model) + ': '):
        message = message[len(os.path.basename(model)) + 2:]
    if 'internal error' in message or 'importer error' in message:
        return 'fail', 'kiln compile: ' + message
    return 'refused', message


def tolerance(case_dir):
    """(atol, rtol) the case documents in a data.json, else None."""
    path = os.path.join(case_dir, 'data.json')
    if not os.path.exists(path):
        return None
    with open(path) as f:
        data = json.load(f)
    if 'rtol' not in data and 'atol' not in data:
        return None
    return float(data.get('atol', 1e-7)), float(data.get('rtol', 1e-3))


def compare(got, want, tol):
    """None when got matches want, else why not."""
    if got.shape != want.shape:
        return f'shape {list(got.shape)}, expected {list(want.shape)}'
    if want.dtype.kind in 'fc':
        g, w = got.astype(np.float64), want.astype(np.float64)
        bound = TOLERANCE * (1 + np.abs(w)) if tol is None else tol[0] + tol[1] * np.abs(w)
        with np.errstate(invalid='ignore'):
            ok = (np.abs(g - w) <= bound) | (np.isnan(g) & np.isnan(w)) | (g == w)
        if ok.all():
            return None
        bad = int(np.size(ok) - np.count_nonzero(ok))
        idx = np.unravel_index(np.argmin(ok), ok.shape) if ok.ndim else ()
        return (f'{bad} of {ok.size} values differ, e.g. at {list(map(int, idx))}: '
                f'{g[idx]:.7g}, expected {w[idx]:.7g}')
    if got.dtype != want.dtype and not (got.dtype.kind in 'iub' and want.dtype.kind in 'iub'):
        return f'element type {got.dtype}, expected {want.dtype}'
    if np.array_equal(got.astype(np.int64), want.astype(np.int64)):
        return None
    ok = got.astype(np.int64) == want.astype(np.int64)
    return f'{int(ok.size - np.count_nonzero(ok))} of {ok.size} values differ'


def freeze_shape_inputs(case_dir, work):
    """(model to compile, input files kiln run takes, names of frozen inputs):
    graph inputs in a SHAPE_INPUTS position become initializers holding the
    data set's values (a model written to `work`); others stay inputs."""
    path = os.path.join(case_dir, 'model.onnx')
    data = os.path.join(case_dir, 'test_data_set_0')
    files = numbered(data, 'input')
    model = onnx.load(path)
    graph = model.graph
    initializers = {t.name for t in graph.initializer}
    inputs = [v for v in graph.input if v.name not in initializers]
    shape_fed = {n.input[k] for n in graph.node if n.domain in ('', 'ai.onnx')
                 for k in SHAPE_INPUTS.get(n.op_type, ()) if k < len(n.input) and n.input[k]}
    # An _expanded case's graph inputs are its operator's inputs, in order,
    # whichever nodes of the function body read them.
    name = os.path.basename(case_dir)
    sibling = os.path.join(os.path.dirname(case_dir), name[:-len('_expanded')], 'model.onnx')
    if name.endswith('_expanded') and os.path.exists(sibling):
        node = onnx.load(sibling).graph.node[-1]
        shape_fed |= {inputs[k].name for k in SHAPE_INPUTS.get(node.op_type, ())
                      if k < len(inputs)}
    frozen = [k for k, v in enumerate(inputs) if v.name in shape_fed and k < len(files)]
    if not frozen:
        return path, files, []
    for k in frozen:
        t = onnx.TensorProto()
        with open(os.path.join(data, files[k]), 'rb') as f:
            t.ParseFromString(f.read())
        t.name = inputs[k].name
        graph.initializer.append(t)
        graph.input.remove(inputs[k])
    path = os.path.join(work, 'model.onnx')
    onnx.save(model, path)
    return path, [f for k, f in enumerate(files) if k not in frozen], \
        [inputs[k].name for k in frozen]


def value_text(array):
    """--fix-value's VALUE for `array`: its elements, ',' between them."""
    out = []
    for v in np.asarray(array).reshape(-1).tolist():
        out.append(('true' if v else 'false') if isinstance(v, bool) else
                   str(v) if isinstance(v, int) else repr(float(v)))
    return ','.join(out)


def fix_control_inputs(case_dir, model_path, files):
    """(--fix-value flags, input files kiln run still takes, names fixed):
    the graph inputs of `model_path` (fed by `files`, in order) in a
    CONTROL_INPUTS position, fixed to the data set's values."""
    model = onnx.load(model_path)
    graph = model.graph
    initializers = {t.name for t in graph.initializer}
    inputs = [v for v in graph.input if v.name not in initializers]
    control = {n.input[k] for n in graph.node if n.domain in ('', 'ai.onnx')
               for k in CONTROL_INPUTS.get(n.op_type, ()) if k < len(n.input) and n.input[k]}
    data = os.path.join(case_dir, 'test_data_set_0')
    flags, fixed, kept = [], [], []
    for k, f in enumerate(files):
        if k < len(inputs) and inputs[k].name in control:
            try:
                value = read_tensor(os.path.join(data, f))
            except Exception:  # a sequence or optional value
                value = None
            if value is not None and value.dtype.kind in 'biuf' and value.size <= MAX_FIXED_ELEMENTS:
                flags.append(f'--fix-value={inputs[k].name}={value_text(value)}')
                fixed.append(inputs[k].name)
                continue
        kept.append(f)
    return flags, kept, fixed


def run_artifact(kiln, case_dir, artifact, feeds, work, timeout):
    """(status, reason) of kiln run on the case's data set, given the input
    files `feeds`."""
    data = os.path.join(case_dir, 'test_data_set_0')
    args = [kiln, 'run', artifact]
    for f in feeds:
        path = os.path.join(work, f.replace('.pb', '.npy'))
        try:
            np.save(path, read_tensor(os.path.join(data, f)))
        except Exception as e:  # a sequence or optional input
            return 'fail', f'{f} is not a tensor Kiln can take ({e})'
        args.append('--input=@' + path)
    outputs = numbered(data, 'output')
    for k in range(len(outputs)):
        args.append(f'--output=@{work}/got_{k}.npy')
    p = subprocess.run(args, capture_output=True, text=True, errors='replace', timeout=timeout)
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    if p.returncode < 0:
        return 'crash', f'kiln run: {exit_problem(p.returncode)}'
    if p.returncode != 0:
        return 'fail', f'kiln run: {exit_problem(p.returncode)}: ' + (lines[-1] if lines else '')
    tol = tolerance(case_dir)
    for k, f in enumerate(outputs):
        got_path = os.path.join(work, f'got_{k}.npy')
        if not os.path.exists(got_path):
            return 'fail', f'no output {k}'
        why = compare(np.load(got_path), read_tensor(os.path.join(data, f)), tol)
        if why:
            return 'fail', f'output {k}: {why}'
    return 'pass', ''


def run_case(kiln, case_dir, timeout, freeze):
    """One case's record: its description, status, reason and seconds."""
    start = time.monotonic()
    record = {'case': os.path.basename(case_dir),
              'folder': os.path.basename(os.path.dirname(os.path.abspath(case_dir)))}
    try:
        record.update(describe(case_dir))
    except Exception as e:
        record.update({'operator': '(unreadable)', 'ops': [], 'opset': 0, 'group': 'other',
                       'unhandled_types': [], 'reach': None,
                       'note': f'onnx cannot read the model: {e}'})
    work = tempfile.mkdtemp(prefix='kiln-onnx-')
    try:
        artifact = os.path.join(work, 'model.kiln')
        model = os.path.join(case_dir, 'model.onnx')
        feeds = numbered(os.path.join(case_dir, 'test_data_set_0'), 'input')
        flags = []
        if freeze:
            model, feeds, record['frozen'] = freeze_shape_inputs(case_dir, work)
            flags, feeds, fixed = fix_control_inputs(case_dir, model, feeds)
            if fixed:
                record['fixed_values'] = fixed
        result = compile_case(kiln, model, artifact, timeout, flags)
        if result is None:
            result = run_artifact(kiln, case_dir, artifact, feeds, work,
                                  max(1, timeout - (time.monotonic() - start)))
    except subprocess.TimeoutExpired:
        result = 'crash', f'timeout: no result within {timeout} s'
    finally:
        shutil.rmtree(work, ignore_errors=True)
    record['status'], record['reason'] = result[0], result[1].replace(work + '/', '')
    record['seconds'] = round(time.monotonic() - start, 2)
    return record


# --- Reporting ----------------------------------------------------------------

def static_counts(records):
    """Status counts of the static-compilable cases among `records`."""
    c = collections.Counter(r['status'] for r in records if r['reach'] is None)
    return {s: c[s] for s in STATUSES}


def rate(passed, cases):
    return round(100.0 * passed / cases, 2) if cases else 0.0


def summarize(records):
    counts = {g: collections.Counter(r['status'] for r in records if r['group'] == g)
              for g in GROUPS}
    total = collections.Counter(r['status'] for r in records)
    in_list = sum(counts['in-list'].values())
    static = static_counts(records)
    folders = {}
    for folder in sorted({r['folder'] for r in records}, key=folder_key):
        rs = [r for r in records if r['folder'] == folder]
        c = static_counts(rs)
        folders[folder] = {'cases': len(rs), 'static': sum(c.values()), 'status': c,
                           'pass_rate': rate(c['pass'], sum(c.values()))}
    reach = collections.Counter(r['reach'] for r in records if r['reach'])
    return {'cases': len(records), 'total': {s: total[s] for s in STATUSES},
            'static_cases': sum(static.values()), 'static': static,
            'static_pass_rate': rate(static['pass'], sum(static.values())),
            'folders': folders, 'out_of_reach': {k: reach[k] for k in OUT_OF_REACH},
            'groups': {g: {s: counts[g][s] for s in STATUSES} for g in GROUPS},
            'in_list_cases': in_list, 'in_list_pass_rate': rate(counts['in-list']['pass'], in_list)}


def folder_key(folder):
    return (FOLDERS.index(folder) if folder in FOLDERS else len(FOLDERS), folder)


def case_label(r):
    """`test_abs` for the node folder, `simple/test_shrink` for the others."""
    return r['case'] if r['folder'] == 'node' else f"{r['folder']}/{r['case']}"


def operator_rows(records):
    rows = collections.defaultdict(collections.Counter)
    for r in records:
        rows[r['operator']][r['status']] += 1
        rows[r['operator']]['cases'] += 1
        if r['reach']:
            rows[r['operator']]['out'] += 1
        else:
            rows[r['operator']]['static'] += 1
            rows[r['operator']]['static ' + r['status']] += 1
    return [(op, rows[op]) for op in sorted(rows, key=str.lower)]


def markdown(summary, records, meta):
    s, t, st = summary, summary['total'], summary['static']
    where = ', '.join(f'`{f}`' for f in meta['folders'])
    out = ['# ONNX backend tests', '',
           '<!-- Generated by tests/onnx/run_node_tests.py --write-docs; do not edit. -->', '',
           ('Every case' if not meta['filter'] else f"The cases matching `{meta['filter']}`") +
           f" of libonnx-testdata {meta['onnx']} (folders {where} of `{DATA_ROOT}`) through "
           f"`kiln compile` and `kiln run` ({meta['kiln']}), integer and bool cases included. "
           'How cases are classified: the docstring of `tests/onnx/run_node_tests.py`; '
           'how to run it: README.md, "ONNX node tests".', '',
           '## Summary', '',
           f"**Static-compilable pass rate: {s['static_pass_rate']:.2f}%** ({st['pass']} of "
           f"{s['static_cases']}; {st['fail']} wrong, {st['crash']} crash). "
           f"{s['cases'] - s['static_cases']} of the {s['cases']} cases are out of reach "
           '(below, with the reason).', '',
           '| folder | cases | static-compilable | pass | fail | refused | crash | pass rate |',
           '|---|---|---|---|---|---|---|---|']
    for folder, f in s['folders'].items():
        c = f['status']
        out.append(f"| {folder} | {f['cases']} | {f['static']} | {c['pass']} | {c['fail']} | "
                   f"{c['refused']} | {c['crash']} | {f['pass_rate']:.2f}% |")
    out.append(f"| all | {s['cases']} | {s['static_cases']} | {st['pass']} | {st['fail']} | "
               f"{st['refused']} | {st['crash']} | {s['static_pass_rate']:.2f}% |")
    out += ['', f"All cases, out of reach included: {t['pass']} pass, {t['fail']} fail, "
            f"{t['refused']} refused, {t['crash']} crash.", '']
    frozen = [r for r in records if r.get('frozen')]
    if meta['frozen_shape_inputs']:
        out.append(f'{len(frozen)} cases feed a shape input (Reshape\'s shape, Slice\'s starts, a '
                   'Resize\'s scales, axes, pads, TopK\'s k, a Loop\'s trip count, ...) as a '
                   'graph input; Kiln compiles static shapes, so the harness made those inputs '
                   'initializers holding the case\'s values before `kiln compile` (SHAPE_INPUTS '
                   f"in the script; {sum(r['status'] == 'pass' for r in frozen)} of them pass). "
                   '`--no-freeze` feeds them at run time instead (Kiln refuses those).')
        fixed = [r for r in records if r.get('fixed_values')]
        if fixed:
            out.append(f'{len(fixed)} cases feed an If\'s condition or a Loop\'s trip count or '
                       'condition as a graph input; the harness fixes it to the case\'s value '
                       'with `--fix-value` (CONTROL_INPUTS in the script; '
                       f"{sum(r['status'] == 'pass' for r in fixed)} of them pass).")
    else:
        out.append('Shape inputs fed at run time (--no-freeze).')
    out += ['', '- pass: every output has the expected shape and values (float within '
            f"{meta['tolerance']}, integers and bools exactly); fail: compiled but a value, "
            'shape or `kiln run` is wrong; refused: one `kiln: error:` line naming what is not '
            'supported; crash: a signal, another exit status, more than one stderr line or an '
            'IR dump, or a timeout.', '',
            '## Out of reach', '',
            'A case is out of reach for the first of these reasons that applies to it; '
            'every other case is static-compilable and counts in the pass rate.', '',
            '| reason | cases | pass | why |', '|---|---|---|---|']
    for key, why in OUT_OF_REACH.items():
        rs = [r for r in records if r['reach'] == key]
        out.append(f"| {key} | {len(rs)} | {sum(r['status'] == 'pass' for r in rs)} | {why} |")
    for key in OUT_OF_REACH:
        rs = [r for r in records if r['reach'] == key]
        if rs:
            out += ['', f'- {key}: ' + ', '.join(f'`{case_label(r)}`' for r in rs)]
    bad = [r for r in records if r['reach'] is None and r['status'] != 'pass']
    out += ['', f'## Static-compilable cases that do not pass ({len(bad)})', '']
    out += [f"- `{case_label(r)}` ({r['operator']}): {r['status']}: {short(r['reason'])}"
            for r in bad] or ['None.']
    crashes = [r for r in records if r['status'] == 'crash' and r['reach']]
    if crashes:
        out += ['', f'## Crashes out of reach ({len(crashes)})', '']
        out += [f"- `{case_label(r)}` ({r['operator']}): {short(r['reason'])}" for r in crashes]
    out += ['', '## Per operator', '',
            'Cases are attributed to the operator under test (an `_expanded` case, the '
            "operator's function body, to the operator it expands). *static*: the "
            'static-compilable cases and how many of them pass; *out of reach*: the others '
            '(whatever their status).', '',
            '| operator | cases | static | static pass | fail | refused | crash | out of reach |',
            '|---|---|---|---|---|---|---|---|']
    for op, c in operator_rows(records):
        out.append(f"| {op} | {c['cases']} | {c['static']} | {c['static pass']} | "
                   f"{c['static fail']} | {c['static refused']} | {c['static crash']} | "
                   f"{c['out']} |")
    g = s['groups']
    out += ['', '## The core operator list', '',
            f"Of the cases whose nodes are all core operators (CORE_OPERATORS and "
            f"FOLDED_OPERATORS in the script) with float32/int32/int64/bool inputs and outputs "
            f"({s['in_list_cases']}), {g['in-list']['pass']} pass: "
            f"{s['in_list_pass_rate']:.2f}%."]
    return '\n'.join(out) + '\n'


def short(reason, limit=240):
    """A reason cut for the tables (an unsupported operator's message lists
    every operator Kiln imports)."""
    return reason if len(reason) <= limit else reason[:limit - 3].rstrip() + '...'


def write_reports(directory, summary, records, meta):
    """onnx-node-tests.md and onnx-node-tests.json (one line per case)."""
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, 'onnx-node-tests.md'), 'w') as f:
        f.write(markdown(summary, records, meta))
    lines = []
    for r in records:
        row = {k: r[k] for k in ('case', 'folder', 'operator', 'group', 'reach', 'status',
                                 'opset')}
        row['reason'] = short(r['reason'])
        if r.get('frozen'):
            row['frozen'] = r['frozen']
        if r.get('fixed_values'):
            row['fixed_values'] = r['fixed_values']
        lines.append(json.dumps(row))
    with open(os.path.join(directory, 'onnx-node-tests.json'), 'w') as f:
        f.write('{"meta": ' + json.dumps(meta) + ',\n "summary": ' + json.dumps(summary) +
                ',\n "cases": [\n' + ',\n'.join(lines) + '\n]}\n')


def kiln_version(kiln):
    try:
        p = subprocess.run([kiln, '--version'], capture_output=True, text=True, timeout=30)
        return (p.stdout.strip().splitlines() or ['kiln ?'])[0]
    except OSError as e:
        sys.exit(f'run_node_tests.py: cannot run {kiln}: {e}')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--kiln', default=os.path.join(REPO, 'build/bin/kiln'))
    ap.add_argument('--data-dir', action='append', default=[],
                    help='folder of test_* case folders (repeatable; default: the folders '
                         + ', '.join(FOLDERS) + f' of {DATA_ROOT})')
    ap.add_argument('--filter', default='', help='only cases whose name matches this regex')
    ap.add_argument('--jobs', type=int, default=2, help='cases run at once (default 2)')
    ap.add_argument('--timeout', type=float, default=60, help='seconds per case (default 60)')
    ap.add_argument('--out-dir', default=os.path.join(REPO, 'build/onnx-node-tests'))
    ap.add_argument('--write-docs', action='store_true',
                    help='also write docs/onnx-node-tests.md and .json (full runs only)')
    ap.add_argument('--min-pass-rate', type=float, default=0.0,
                    help='exit 1 if the static-compilable pass rate (percent) is below this')
    ap.add_argument('--no-freeze', action='store_true',
                    help='feed shape inputs (SHAPE_INPUTS) at run time as the cases do')
    ap.add_argument('-v', action='store_true', help='print every case, not only the bad ones')
    ap.add_argument('--compile-flag', action='append', default=[],
                    help='an extra kiln compile flag (repeatable), e.g. --compile-flag=--check-bounds')
    a = ap.parse_args()
    COMPILE_FLAGS.extend(a.compile_flag)  # the workers are forked after this
    if a.write_docs and (a.filter or a.compile_flag):
        sys.exit('run_node_tests.py: --write-docs writes the table of every case; drop --filter '
                 'and --compile-flag')
    dirs = a.data_dir or [os.path.join(DATA_ROOT, f) for f in FOLDERS]
    if a.write_docs and a.data_dir:
        sys.exit('run_node_tests.py: --write-docs writes the table of every folder; drop '
                 '--data-dir')
    cases = sorted(os.path.join(d, c) for d in dirs for c in os.listdir(d)
                   if c.startswith('test_') and re.search(a.filter, c))
    meta = {'kiln': kiln_version(a.kiln), 'onnx': onnx.__version__, 'filter': a.filter,
            'folders': [os.path.basename(os.path.normpath(d)) for d in dirs],
            'tolerance': f'{TOLERANCE} x (1 + |expected|)', 'frozen_shape_inputs': not a.no_freeze}
    start = time.monotonic()
    records = []
    with concurrent.futures.ProcessPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        futures = [pool.submit(run_case, a.kiln, c, a.timeout, not a.no_freeze)
                   for c in cases]
        for fut in concurrent.futures.as_completed(futures):
            try:
                r = fut.result()
            except OSError as e:  # kiln missing or being rebuilt: no verdict at all
                for f in futures:
                    f.cancel()
                sys.exit(f'run_node_tests.py: cannot run {a.kiln}: {e}')
            records.append(r)
            loud = r['status'] == 'crash' or (r['reach'] is None and r['status'] == 'fail')
            if a.v or loud:
                print(f"{r['status']:8} {case_label(r)}  [{r['reach'] or 'static'}] "
                      f"{r['reason']}", flush=True)
    records.sort(key=lambda r: (folder_key(r['folder']), r['case']))
    summary = summarize(records)
    seconds = round(time.monotonic() - start, 1)
    write_reports(a.out_dir, summary, records, meta)
    if a.write_docs:
        write_reports(os.path.join(REPO, 'docs'), summary, records, meta)
    print(f"{summary['cases']} cases in {seconds} s: " +
          ', '.join(f"{summary['total'][s]} {s}" for s in STATUSES))
    for folder, f in summary['folders'].items():
        print(f"  {folder}: {f['cases']} cases, {f['static']} static-compilable: " +
              ', '.join(f"{f['status'][s]} {s}" for s in STATUSES))
    print(f"static-compilable pass rate {summary['static_pass_rate']:.2f}% "
          f"({summary['static']['pass']} of {summary['static_cases']}); in-list "
          f"{summary['in_list_pass_rate']:.2f}% ({summary['groups']['in-list']['pass']} of "
          f"{summary['in_list_cases']}); report: {os.path.join(a.out_dir, 'onnx-node-tests.md')}")
    ok = True
    if summary['total']['crash']:
        print(f"FAILED: {summary['total']['crash']} case(s) crashed (see 'crash' lines above)")
        ok = False
    if summary['static_cases'] and summary['static_pass_rate'] < a.min_pass_rate:
        print(f"FAILED: static-compilable pass rate {summary['static_pass_rate']:.2f}% is "
              f'below --min-pass-rate {a.min_pass_rate}%')
        ok = False
    if summary['static']['fail']:
        print(f"FAILED: {summary['static']['fail']} static-compilable case(s) compiled to wrong "
              "results (see 'fail' lines above)")
        ok = False
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
