#!/usr/bin/python3
"""ONNX LSTM, GRU and RNN against an independent NumPy evaluation of the
ONNX operator definitions.

    tests/onnx/recurrent_cases.py [--kiln build/bin/kiln] [--filter REGEX] [--ort DIR]

Each case is one recurrent node on seeded random weights and input, written
with onnx.helper into a temporary folder, compiled by `kiln compile` and run
by `kiln run` on the artifact, and compared with `reference()` below: the
equations of ONNX Operators.md (LSTM gates i o f c with peepholes P i o f,
GRU gates z r h with linear_before_reset, RNN), clip applied to gate
pre-activations, activation_alpha / activation_beta consumed in order by the
activations that take them (as ONNX Runtime reads them). No Kiln code or
ONNX Runtime is involved in the expected values. Within 1e-4 x (1 +
|expected|).

--ort DIR (a tests/reference folder after `npm ci`, holding
ort_reference.mjs and onnxruntime-node) also checks reference() itself:
each case with X as its only input and layout 0 (ONNX Runtime 1.30 refuses
layout 1; the backend node tests' *_batchwise cases cover it) runs on ONNX
Runtime (on ort_reference.mjs's seeded input), within the same tolerance.

The cases cover forward, reverse and bidirectional, layout 1, peepholes,
input_forget, linear_before_reset, activation lists with parameters, clip,
initial states, constant sequence_lens (full and shorter lengths), weights fed at run time
(tosa.matmul rather than fully_connected) and omitted outputs. Then inputs
Kiln refuses (REFUSED): exit status 1 and one error line with the phrase.

Prints one line per case and 'N passed, M failed'; exit status 1 if any
failed.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_KILN = os.path.normpath(os.path.join(HERE, '../../build/bin/kiln'))

GATES = {'LSTM': 4, 'GRU': 3, 'RNN': 1}
DEFAULT_ACTS = {'LSTM': ['Sigmoid', 'Tanh', 'Tanh'], 'GRU': ['Sigmoid', 'Tanh'], 'RNN': ['Tanh']}


def activation(name, alphas, betas):
    """The function `name`, taking its alpha/beta from the front of the lists."""
    n = name.lower()
    take = lambda lst, d: lst.pop(0) if lst else d
    if n == 'sigmoid':
        return lambda x: 1 / (1 + np.exp(-x))
    if n == 'tanh':
        return np.tanh
    if n == 'relu':
        return lambda x: np.maximum(x, 0)
    if n == 'leakyrelu':
        a = take(alphas, 0.01)
        return lambda x: np.where(x < 0, a * x, x)
    if n == 'thresholdedrelu':
        a = take(alphas, 1.0)
        return lambda x: np.where(x > a, x, 0)
    if n == 'elu':
        a = take(alphas, 1.0)
        return lambda x: np.where(x < 0, a * (np.exp(x) - 1), x)
    if n == 'hardsigmoid':
        a, b = take(alphas, 0.2), take(betas, 0.5)
        return lambda x: np.clip(a * x + b, 0, 1)
    if n == 'scaledtanh':
        a, b = take(alphas, 1.0), take(betas, 1.0)
        return lambda x: a * np.tanh(b * x)
    if n == 'affine':
        a, b = take(alphas, 1.0), take(betas, 0.0)
        return lambda x: a * x + b
    if n == 'softsign':
        return lambda x: x / (1 + np.abs(x))
    if n == 'softplus':
        return lambda x: np.log1p(np.exp(x))
    raise ValueError(name)


def reference(op, attrs, x, w, r, b=None, h0=None, c0=None, p=None, lens=None):
    """Y [S, D, B, H], Y_h [D, B, H], Y_c (LSTM) for layout 0 operands;
    with `lens`, batch k runs its first lens[k] steps alone (Y zero after)."""
    if lens is not None:
        parts = []
        for k, n in enumerate(lens):
            one = lambda v: None if v is None else v[:, k:k + 1]
            y, yh, yc = reference(op, attrs, x[:n, k:k + 1], w, r, b, one(h0), one(c0), p)
            y = np.concatenate([y, np.zeros((x.shape[0] - n,) + y.shape[1:])])
            parts.append((y, yh, yc))
        return tuple(np.concatenate([q[j] for q in parts], axis=2 - (j > 0)) for j in range(3))
    d_count, gh, _ = w.shape
    hidden = r.shape[2]
    s_len, batch, _ = x.shape
    direction = attrs.get('direction', 'forward')
    names = attrs.get('activations', DEFAULT_ACTS[op] * d_count)
    alphas, betas = list(attrs.get('activation_alpha', [])), list(attrs.get('activation_beta', []))
    acts = [activation(n, alphas, betas) for n in names]
    per = len(DEFAULT_ACTS[op])
    clip = attrs.get('clip')
    cl = (lambda v: np.clip(v, -clip, clip)) if clip is not None else (lambda v: v)
    y = np.zeros((s_len, d_count, batch, hidden))
    yh = np.zeros((d_count, batch, hidden))
    yc = np.zeros((d_count, batch, hidden))
    for d in range(d_count):
        f, g = acts[d * per], acts[d * per + 1] if per > 1 else None
        hact = acts[d * per + 2] if per > 2 else None
        bias = b[d] if b is not None else np.zeros(2 * gh)
        wb, rb = bias[:gh], bias[gh:]
        h = h0[d] if h0 is not None else np.zeros((batch, hidden))
        c = c0[d] if c0 is not None else np.zeros((batch, hidden))
        steps = range(s_len)
        if direction == 'reverse' or d == 1:
            steps = reversed(steps)
        for t in steps:
            xw = x[t] @ w[d].T + wb
            if op == 'RNN':
                h = f(cl(xw + h @ r[d].T + rb))
            elif op == 'GRU':
                H = hidden
                z = f(cl(xw[:, :H] + h @ r[d][:H].T + rb[:H]))
                rr = f(cl(xw[:, H:2 * H] + h @ r[d][H:2 * H].T + rb[H:2 * H]))
                if attrs.get('linear_before_reset', 0):
                    rec = rr * (h @ r[d][2 * H:].T + rb[2 * H:])
                else:
                    rec = (rr * h) @ r[d][2 * H:].T + rb[2 * H:]
                hh = g(cl(xw[:, 2 * H:] + rec))
                h = (1 - z) * hh + z * h
            else:
                H = hidden
                pre = xw + h @ r[d].T + rb
                pi, po, pf = (p[d][:H], p[d][H:2 * H], p[d][2 * H:]) if p is not None else (0, 0, 0)
                i = f(cl(pre[:, :H] + pi * c))
                if attrs.get('input_forget', 0):
                    fg = 1 - i
                else:
                    fg = f(cl(pre[:, 2 * H:3 * H] + pf * c))
                cc = g(cl(pre[:, 3 * H:]))
                c = fg * c + i * cc
                o = f(cl(pre[:, H:2 * H] + po * c))
                h = o * hact(c)
            y[t, d] = h
        yh[d], yc[d] = h, c
    return y, yh, yc


# name, op, (seq, batch, input, hidden), attrs, options
# options: bias, h0, c0, peep, lens (constant full-length sequence_lens),
# runtime_w (W and R graph inputs), outputs (which of Y, Y_h, Y_c are named).
CASES = [
    ('lstm_forward', 'LSTM', (4, 2, 3, 5), {}, {'bias': 1}),
    ('lstm_reverse', 'LSTM', (3, 2, 4, 3), {'direction': 'reverse'}, {'bias': 1, 'h0': 1, 'c0': 1}),
    ('lstm_bidirectional', 'LSTM', (5, 3, 2, 4), {'direction': 'bidirectional'},
     {'bias': 1, 'h0': 1, 'c0': 1}),
    ('lstm_layout1_bidirectional', 'LSTM', (3, 2, 3, 4),
     {'direction': 'bidirectional', 'layout': 1}, {'bias': 1, 'h0': 1, 'c0': 1}),
    ('lstm_peepholes', 'LSTM', (4, 2, 3, 3), {}, {'bias': 1, 'peep': 1, 'c0': 1}),
    ('lstm_input_forget_clip', 'LSTM', (4, 2, 3, 3), {'input_forget': 1, 'clip': 0.7},
     {'bias': 1, 'peep': 1}),
    ('lstm_activations', 'LSTM', (3, 2, 3, 4),
     {'activations': ['HardSigmoid', 'LeakyRelu', 'Softsign'], 'activation_alpha': [0.3, 0.2],
      'activation_beta': [0.4]}, {'bias': 1}),
    ('lstm_only_y_c', 'LSTM', (3, 1, 2, 3), {}, {'bias': 1, 'outputs': (2,)}),
    ('lstm_runtime_weights_lens', 'LSTM', (3, 2, 3, 2), {'direction': 'bidirectional'},
     {'bias': 1, 'runtime_w': 1, 'lens': 1}),
    ('lstm_short_lens_bidirectional', 'LSTM', (5, 4, 3, 3), {'direction': 'bidirectional'},
     {'bias': 1, 'h0': 1, 'c0': 1, 'peep': 1, 'lens': [5, 2, 2, 4]}),
    ('gru_short_lens_reverse', 'GRU', (4, 3, 2, 3), {'direction': 'reverse'},
     {'bias': 1, 'h0': 1, 'lens': [1, 4, 3]}),
    ('rnn_short_lens_layout1', 'RNN', (4, 3, 2, 3), {'direction': 'bidirectional', 'layout': 1},
     {'bias': 1, 'lens': [3, 4, 2]}),
    ('gru_forward', 'GRU', (4, 2, 3, 5), {}, {'bias': 1}),
    ('gru_linear_before_reset', 'GRU', (4, 2, 3, 4), {'linear_before_reset': 1},
     {'bias': 1, 'h0': 1}),
    ('gru_bidirectional_layout1', 'GRU', (3, 2, 4, 3),
     {'direction': 'bidirectional', 'layout': 1, 'linear_before_reset': 1}, {'bias': 1, 'h0': 1}),
    ('gru_reverse_activations_clip', 'GRU', (4, 3, 2, 3),
     {'direction': 'reverse', 'activations': ['ScaledTanh', 'Elu'], 'activation_alpha': [0.8, 1.2],
      'activation_beta': [0.6], 'clip': 1.5}, {'bias': 1}),
    ('gru_only_y_h', 'GRU', (3, 2, 3, 2), {}, {'outputs': (1,)}),
    ('rnn_forward', 'RNN', (4, 2, 3, 5), {}, {'bias': 1}),
    ('rnn_bidirectional_relu_affine', 'RNN', (3, 2, 3, 4),
     {'direction': 'bidirectional', 'activations': ['Relu', 'Affine'], 'activation_alpha': [0.5],
      'activation_beta': [0.1]}, {'bias': 1, 'h0': 1}),
    ('rnn_layout1_softplus_thresholded', 'RNN', (3, 2, 3, 3),
     {'direction': 'bidirectional', 'layout': 1, 'activations': ['Softplus', 'ThresholdedRelu'],
      'activation_alpha': [0.1]}, {'bias': 1}),
    ('rnn_reverse_sigmoid_clip', 'RNN', (5, 1, 2, 3),
     {'direction': 'reverse', 'activations': ['Sigmoid'], 'clip': 0.5}, {'h0': 1}),
]

# name, op, shape, attrs, options, phrase of the one error line.
REFUSED = [
    ('refuse_activation', 'RNN', (3, 2, 3, 4), {'activations': ['Gelu']}, {},
     "activation 'Gelu' is not supported"),
    ('refuse_hidden_size', 'LSTM', (3, 2, 3, 4), {'hidden_size': 5}, {},
     'hidden_size 5 does not match R'),
    ('refuse_zero_length', 'GRU', (3, 2, 3, 4), {}, {'lens': [3, 0]},
     'sequence_lens 0 of batch 1 is outside [1, seq_length 3]'),
    ('refuse_runtime_lens', 'GRU', (3, 2, 3, 4), {}, {'lens': 'input'},
     'sequence_lens must be a constant'),
    ('refuse_dynamic_seq', 'LSTM', ('S', 2, 3, 4), {}, {}, 'dynamic dimension'),
    ('refuse_unroll_cap', 'RNN', (300, 1, 2, 2), {'direction': 'bidirectional'}, {},
     'exceeds the 512 time steps Kiln unrolls'),
    ('refuse_activation_count', 'LSTM', (3, 2, 3, 4),
     {'direction': 'bidirectional', 'activations': ['Sigmoid', 'Tanh', 'Tanh']}, {},
     'activations lists 3 functions'),
]


def make_case(path, op, shape, attrs, opt, rng):
    """Writes the model; returns (feeds in input order, reference operands)."""
    s, bsz, isz, hsz = shape
    layout = attrs.get('layout', 0)
    dirs = 2 if attrs.get('direction') == 'bidirectional' else 1
    g = GATES[op]
    u = lambda *dims: rng.uniform(-1, 1, dims).astype(np.float32)
    w, r = u(dirs, g * hsz, isz), u(dirs, g * hsz, hsz)
    ops = {'w': w, 'r': r}
    xdims = [bsz, s, isz] if layout else [s, bsz, isz]
    inputs = [helper.make_tensor_value_info('X', TensorProto.FLOAT, xdims)]
    inits, feeds = [], []
    if isinstance(s, int):
        x = u(*xdims)
        feeds.append(x)
        ops['x'] = x.transpose(1, 0, 2) if layout else x

    def tensor(name, value, runtime):
        if runtime:
            inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, value.shape))
            feeds.append(value)
        else:
            inits.append(numpy_helper.from_array(value, name))
        return name

    names = ['X', tensor('W', w, opt.get('runtime_w')), tensor('R', r, opt.get('runtime_w'))]
    names.append(tensor('B', u(dirs, 2 * g * hsz), False) if opt.get('bias') else '')
    if opt.get('bias'):
        ops['b'] = numpy_helper.to_array(inits[-1])
    lens = opt.get('lens')
    if lens == 'input':
        inputs.append(helper.make_tensor_value_info('L', TensorProto.INT32, [bsz]))
        names.append('L')
    elif lens:
        vals = [s] * bsz if lens == 1 else lens
        ops['lens'] = None if lens == 1 else vals
        inits.append(numpy_helper.from_array(np.array(vals, np.int32), 'L'))
        names.append('L')
    else:
        names.append('')
    for key, nm in (('h0', 'H0'), ('c0', 'C0')):
        if opt.get(key):
            v = u(dirs, bsz, hsz)
            ops[key] = v
            names.append(tensor(nm, v.transpose(1, 0, 2) if layout else v, False))
        else:
            names.append('')
    if op != 'LSTM':
        names = names[:6]
    if opt.get('peep'):
        ops['p'] = u(dirs, 3 * hsz)
        names.append(tensor('P', ops['p'], False))
    while names and names[-1] == '':
        names.pop()
    which = opt.get('outputs', (0, 1, 2) if op == 'LSTM' else (0, 1))
    outs = [('Y', 'Y_h', 'Y_c')[k] if k in which else '' for k in range(3 if op == 'LSTM' else 2)]
    while outs[-1] == '':
        outs.pop()
    node = helper.make_node(op, names, outs, hidden_size=attrs.pop('hidden_size', hsz), **attrs)
    ydims = {'Y': [bsz, s, dirs, hsz] if layout else [s, dirs, bsz, hsz],
             'Y_h': [bsz, dirs, hsz] if layout else [dirs, bsz, hsz]}
    ydims['Y_c'] = ydims['Y_h']
    outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, ydims[n]) for n in outs if n]
    graph = helper.make_graph([node], op.lower(), inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 14)])
    onnx.save(model, path)
    return feeds, ops, [k for k in which]


def compare(k, got, exp, layout):
    """'' if output `k` (layout-0 `exp`) matches `got`, else why not."""
    if layout:
        exp = exp.transpose(2, 0, 1, 3) if k == 0 else exp.transpose(1, 0, 2)
    if got.shape != exp.shape:
        return 'output %d shape %s, expected %s' % (k, list(got.shape), list(exp.shape))
    err = np.abs(got - exp) / (1 + np.abs(exp))
    if err.max() > 1e-4:
        at = np.unravel_index(err.argmax(), err.shape)
        return 'output %d error %.3g at %s: %r, expected %r' % (
            k, err.max(), list(at), float(got[at]), float(exp[at]))
    return ''


def check_ort(args, tmp, name, model, op, attrs, ops, which):
    """reference() against ONNX Runtime on ort_reference.mjs's input."""
    out = os.path.join(tmp, name + '-ort')
    r = subprocess.run(['node', os.path.join(args.ort, 'ort_reference.mjs'), '--model', model,
                        '--out', out], capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        return 'ort_reference.mjs exited %d: %s' % (r.returncode, r.stderr.strip()[-300:])
    x = np.load(os.path.join(out, 'input_0.npy')).astype(np.float64)
    layout = attrs.get('layout', 0)
    f64 = {k: v.astype(np.float64) for k, v in ops.items() if k != 'lens'}
    want = reference(op, attrs, x.transpose(1, 0, 2) if layout else x, f64['w'], f64['r'],
                     f64.get('b'), f64.get('h0'), f64.get('c0'), f64.get('p'), ops.get('lens'))
    for j, k in enumerate(which):
        verdict = compare(k, np.load(os.path.join(out, 'output_%d.npy' % j)), want[k], layout)
        if verdict:
            return 'ONNX Runtime differs from reference(): ' + verdict
    return ''


def run_case(args, tmp, name, op, shape, attrs, opt, rng):
    model = os.path.join(tmp, name + '.onnx')
    feeds, ops, which = make_case(model, op, shape, dict(attrs), opt, rng)
    artifact = os.path.join(tmp, name + '.kiln')
    r = subprocess.run([args.kiln, 'compile', model, '-o', artifact],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        return 'kiln compile exited %d: %s' % (r.returncode, r.stderr.strip())
    cmd = [args.kiln, 'run', artifact]
    for k, v in enumerate(feeds):
        np.save(os.path.join(tmp, 'in%d.npy' % k), v)
        cmd.append('--input=@' + os.path.join(tmp, 'in%d.npy' % k))
    outs = [os.path.join(tmp, 'out%d.npy' % k) for k in range(len(which))]
    cmd += ['--output=@' + o for o in outs]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        return 'kiln run exited %d: %s' % (r.returncode, (r.stderr or r.stdout).strip())
    f64 = {k: v.astype(np.float64) for k, v in ops.items() if k != 'lens'}
    want = reference(op, attrs, f64['x'], f64['w'], f64['r'], f64.get('b'), f64.get('h0'),
                     f64.get('c0'), f64.get('p'), ops.get('lens'))
    for k, path in zip(which, outs):
        verdict = compare(k, np.load(path), want[k], attrs.get('layout', 0))
        if verdict:
            return verdict
    if args.ort and len(feeds) == 1 and not attrs.get('layout', 0):  # ORT 1.30: layout 0 only
        return check_ort(args, tmp, name, model, op, attrs, ops, which)
    return ''


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--kiln', default=DEFAULT_KILN)
    parser.add_argument('--filter', default='')
    parser.add_argument('--ort', help='tests/reference folder with onnxruntime-node installed')
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, op, shape, attrs, opt in CASES:
            if not re.search(args.filter, name):
                continue
            verdict = run_case(args, tmp, name, op, shape, attrs, opt, rng)
            print(('PASS ' if not verdict else 'FAIL ') + name + ('' if not verdict else ': ' + verdict))
            passed += not verdict
            failed += bool(verdict)
        for name, op, shape, attrs, opt, phrase in REFUSED:
            if not re.search(args.filter, name):
                continue
            model = os.path.join(tmp, name + '.onnx')
            make_case(model, op, shape, dict(attrs), opt, rng)
            r = subprocess.run([args.kiln, 'compile', model, '-o', os.path.join(tmp, 'r.kiln')],
                               capture_output=True, text=True, timeout=300)
            lines = [l for l in r.stderr.splitlines() if l.strip()]
            ok = (r.returncode == 1 and len(lines) == 1 and lines[0].startswith('kiln: error:')
                  and phrase in lines[0] and 'internal error' not in lines[0])
            print(('PASS ' if ok else 'FAIL ') + name +
                  ('' if ok else ': exit %d: %s' % (r.returncode, r.stderr.strip())))
            passed += ok
            failed += not ok
    print('%d passed, %d failed' % (passed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
