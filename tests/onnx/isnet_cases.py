#!/usr/bin/env python3
"""A real dynamically quantized ONNX model through Kiln: IS-Net (IMG.LY's
background removal "small" model, quantized by ONNX Runtime's
quantize_dynamic to uint8: 119 DynamicQuantizeLinear -> ConvInteger -> Cast ->
Mul groups, opset 15), fetched by tests/reference/fetch_models.mjs.

The whole network takes 1024 x 1024 images (its Resize sizes are constants)
and more than 20 minutes to compile on a small machine, so the test runs its
input convolution and its first stage's encoder: the backward slice of
/stage1/rebnconv7/relu_s1/Relu_output_0 (9 DynamicQuantizeLinear ->
ConvInteger -> Cast -> Mul -> Add [-> Relu] layers, one dilated, 5 MaxPools,
the model's own weights and zero points), on a 1 x 3 x 256 x 256 image (these
layers are fully convolutional).

  isnet_cases.py --kiln KILN --cache DIR     compiles that graph (its
                                             PROBES, the uint8 outputs of
                                             the DynamicQuantizeLinear nodes
                                             and the first ConvInteger's int32
                                             accumulator, made graph outputs),
                                             runs it on a seeded image and
                                             checks:
    - the first DynamicQuantizeLinear and ConvInteger against NumPy's
      evaluation of ONNX Runtime's arithmetic: bit-exact;
    - every probe against ONNX Runtime 1.30's (the sha256 of its bytes and
      every 4th element along each spatial axis, committed in
      tests/data/models/onnx/isnet_quint8/): bit-exact, or the count of
      differing sampled elements is printed and the test fails;
    - the float output against ONNX Runtime's within 1e-5 relative.
  isnet_cases.py --write-ort DIR --cache DIR (maintainers) writes model.onnx
                                             and input_0.npy into DIR for
                                             tests/reference/opset18_reference.mjs,
                                             then --commit-ort DIR stores the
                                             reference summaries
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, '..', 'data', 'models', 'onnx', 'isnet_quint8')
sys.path.insert(0, HERE)
from quant_cases import conv_acc_fast, dynamic_quantize  # noqa: E402

import hashlib  # noqa: E402
import json  # noqa: E402

CUT = '/stage1/rebnconv7/relu_s1/Relu_output_0'
FIRST_Q = 'input_quantized'
FIRST_CONV = '/conv_in/Conv_output_0_output_quantized'
SIZE = 256


def image():
    """A seeded 1x3xSIZExSIZE image in [0, 1]: smooth gradients plus noise."""
    y, x = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32) / (SIZE - 1)
    rng = np.random.default_rng(2027)
    base = np.stack([x, y, (x + y) / 2])[None]
    blob = ((x - 0.5) ** 2 + (y - 0.45) ** 2 < 0.08).astype(np.float32)
    img = 0.5 * base + 0.4 * blob + 0.1 * rng.uniform(0, 1, base.shape).astype(np.float32)
    return np.clip(img, 0, 1).astype(np.float32)


def with_probes(path, out):
    """The slice of the model computing CUT, at SIZE, with the probes as
    outputs: [CUT (float), FIRST_CONV (int32), the DynamicQuantizeLinear
    outputs (uint8) in graph order]."""
    m = onnx.load(path)
    g = m.graph
    producer = {o: n for n in g.node for o in n.output}
    need, stack = set(), [CUT]
    while stack:
        v = stack.pop()
        n = producer.get(v)
        if n is None or id(n) in need:
            continue
        need.add(id(n))
        stack.extend(i for i in n.input if i)
    nodes = [n for n in g.node if id(n) in need]
    used = {i for n in nodes for i in n.input}
    inits = [t for t in g.initializer if t.name in used]
    probes = [n.output[0] for n in nodes if n.op_type == 'DynamicQuantizeLinear']
    nchw = ['n', 'c', 'h', 'w']  # every probe is 4-D; shape inference sizes them
    outputs = [helper.make_tensor_value_info(CUT, TensorProto.FLOAT, nchw),
               helper.make_tensor_value_info(FIRST_CONV, TensorProto.INT32, nchw)] + [
        helper.make_tensor_value_info(p, TensorProto.UINT8, nchw) for p in probes]
    graph = helper.make_graph(nodes, 'isnet_stage1', [helper.make_tensor_value_info(
        'input', TensorProto.FLOAT, [1, 3, SIZE, SIZE])], outputs, initializer=inits)
    sliced = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 15)],
                               producer_name='kiln-isnet-slice')
    sliced.ir_version = m.ir_version
    onnx.save(sliced, out)
    return sliced


def initializer(m, name):
    for t in m.graph.initializer:
        if t.name == name:
            return onnx.numpy_helper.to_array(t)
    raise KeyError(name)


def sample(a):
    return a[..., ::4, ::4]


def digest(a):
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--kiln')
    ap.add_argument('--cache', default=os.environ.get('KILN_MODEL_CACHE', ''))
    ap.add_argument('--write-ort', metavar='DIR')
    ap.add_argument('--commit-ort', metavar='DIR')
    args = ap.parse_args()
    if args.commit_ort:
        # ONNX Runtime's outputs by name (its session's output order).
        names = json.load(open(os.path.join(args.commit_ort, 'output_names.json')))
        arrays = [np.load(os.path.join(args.commit_ort, 'output_%d.npy' % k))
                  for k in range(len(names))]
        os.makedirs(DATA, exist_ok=True)
        np.savez_compressed(os.path.join(DATA, 'ort_samples.npz'),
                            **{'out%d' % k: sample(a) for k, a in enumerate(arrays)})
        with open(os.path.join(DATA, 'ort_reference.json'), 'w') as f:
            json.dump([{'name': n, 'shape': list(a.shape), 'dtype': str(a.dtype),
                        'sha256': digest(a)} for n, a in zip(names, arrays)], f, indent=1)
        return 0
    model = os.path.join(args.cache, 'isnet_quint8.onnx')
    if not os.path.exists(model):
        print('FAIL isnet_quint8: %s is missing (run tests/reference/fetch_models.mjs)' % model)
        print('0 passed, 1 failed')
        return 1
    if args.write_ort:
        os.makedirs(args.write_ort, exist_ok=True)
        with_probes(model, os.path.join(args.write_ort, 'model.onnx'))
        np.save(os.path.join(args.write_ort, 'input_0.npy'), image())
        return 0
    passed = failed = 0

    def verdict(name, problem):
        nonlocal passed, failed
        print(('PASS ' if not problem else 'FAIL ') + name + (': ' + problem if problem else ''))
        passed += not problem
        failed += bool(problem)

    ref = json.load(open(os.path.join(DATA, 'ort_reference.json')))
    samples = np.load(os.path.join(DATA, 'ort_samples.npz'))
    with tempfile.TemporaryDirectory() as tmp:
        probed = os.path.join(tmp, 'isnet.onnx')
        m = with_probes(model, probed)
        names = [o.name for o in m.graph.output]
        x = image()
        xin = os.path.join(tmp, 'x.npy')
        np.save(xin, x)
        art = os.path.join(tmp, 'isnet.kiln')
        r = subprocess.run([args.kiln, 'compile', probed, '-o', art], capture_output=True,
                           text=True, timeout=1800)
        if r.returncode != 0:
            verdict('isnet_quint8 compile', 'exit %d: %s' % (r.returncode, r.stderr.strip()))
            print('%d passed, %d failed' % (passed, failed))
            return 1
        outs = [os.path.join(tmp, 'out%d.npy' % k) for k in range(len(names))]
        r = subprocess.run([args.kiln, 'run', art, '--input=@' + xin] +
                           ['--output=@' + o for o in outs], capture_output=True, text=True,
                           timeout=1800)
        if r.returncode != 0:
            verdict('isnet_quint8 run', 'exit %d: %s' % (r.returncode, r.stderr.strip()))
            print('%d passed, %d failed' % (passed, failed))
            return 1
        got = [np.load(o) for o in outs]
        # NumPy: the first DynamicQuantizeLinear and ConvInteger.
        want_q, _, want_z = dynamic_quantize(x)
        q = got[names.index(FIRST_Q)]
        diff = int(np.count_nonzero(q.astype(np.int64) != want_q))
        verdict('isnet_quint8 NumPy DynamicQuantizeLinear (%d elements)' % q.size,
                '' if q.shape == want_q.shape and diff == 0 else '%d elements differ' % diff)
        w = initializer(m, 'conv_in.weight_quantized')
        zw = initializer(m, 'conv_in.weight_zero_point')
        want_c = conv_acc_fast(want_q, w, want_z, zw, (1, 1, 1, 1), (2, 2))
        c = got[1]
        diff = int(np.count_nonzero(c.astype(np.int64) != want_c))
        verdict('isnet_quint8 NumPy ConvInteger (%d elements)' % c.size,
                '' if c.shape == want_c.shape and diff == 0 else '%d elements differ' % diff)
        # ONNX Runtime: every probe.
        by_name = {r['name']: (r, samples['out%d' % k]) for k, r in enumerate(ref)}
        for name, a in zip(names, got):
            r_k, s_k = by_name[name]
            label = 'isnet_quint8 ONNX Runtime %s %s %s' % (name, r_k['dtype'], r_k['shape'])
            if list(a.shape) != r_k['shape'] or str(a.dtype) != r_k['dtype']:
                verdict(label, 'got %s %s' % (a.dtype, list(a.shape)))
            elif digest(a) == r_k['sha256']:
                verdict(label + ' bit-exact', '')
            elif a.dtype.kind == 'f':
                err = np.abs(sample(a).astype(np.float64) - s_k) / (1e-30 + np.abs(s_k).max())
                verdict(label, '' if err.max() <= 1e-5 else
                        'max relative difference %.3g' % err.max())
            else:
                d = int(np.count_nonzero(sample(a).astype(np.int64) != s_k))
                verdict(label, 'not bit-exact: %d of %d sampled elements differ (max %d LSB)' % (
                    d, s_k.size, int(np.abs(sample(a).astype(np.int64) - s_k).max())))
    print('%d passed, %d failed' % (passed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
