#!/usr/bin/env python3
"""A real dynamically quantized ONNX model through Kiln: IS-Net (IMG.LY's
background removal "small" model, quantized by ONNX Runtime's
quantize_dynamic to uint8: 119 DynamicQuantizeLinear -> ConvInteger -> Cast ->
Mul groups, opset 15), fetched by tests/reference/fetch_models.mjs.

  isnet_cases.py --kiln KILN --cache DIR     compiles the model (with two
                                             more graph outputs: the first
                                             DynamicQuantizeLinear's y and
                                             the first ConvInteger's int32
                                             accumulator), runs it on a seeded
                                             image and checks:
    - the quantized input (uint8) against NumPy's evaluation of ONNX
      Runtime's DynamicQuantizeLinear: bit-exact;
    - the first ConvInteger (int32, 64 x 512 x 512) against a NumPy
      convolution of that uint8 tensor: bit-exact;
    - the alpha matte [1,1,1024,1024] against ONNX Runtime 1.30's
      (tests/data/models/onnx/isnet_quint8/ort_output_0_every8.npy, every
      8th row and column): within 2e-3 absolute. Later layers quantize
      activations that ORT and Kiln compute in float with sums in different
      orders, so a value next to a quantization boundary can land one LSB
      apart and move the matte slightly; the script prints the largest
      difference.
  isnet_cases.py --write-ort DIR              (maintainers) writes model.onnx
                                             and input_0.npy into DIR for
                                             tests/reference/opset18_reference.mjs
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

FIRST_Q = 'input_quantized'
FIRST_CONV = '/conv_in/Conv_output_0_output_quantized'
TOLERANCE = 2e-3


def image():
    """A seeded 1x3x1024x1024 image in [0, 1]: smooth gradients plus noise."""
    y, x = np.mgrid[0:1024, 0:1024].astype(np.float32) / 1023
    rng = np.random.default_rng(2027)
    base = np.stack([x, y, (x + y) / 2])[None]
    blob = ((x - 0.5) ** 2 + (y - 0.45) ** 2 < 0.08).astype(np.float32)
    img = 0.5 * base + 0.4 * blob + 0.1 * rng.uniform(0, 1, base.shape).astype(np.float32)
    return np.clip(img, 0, 1).astype(np.float32)


def with_probes(path, out):
    m = onnx.load(path)
    keep = m.graph.output[0]
    del m.graph.output[:]
    m.graph.output.append(keep)
    m.graph.output.append(helper.make_tensor_value_info(FIRST_Q, TensorProto.UINT8,
                                                        [1, 3, 1024, 1024]))
    m.graph.output.append(helper.make_tensor_value_info(FIRST_CONV, TensorProto.INT32,
                                                        [1, 64, 512, 512]))
    onnx.save(m, out)
    return m


def initializer(m, name):
    for t in m.graph.initializer:
        if t.name == name:
            return onnx.numpy_helper.to_array(t)
    raise KeyError(name)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--kiln')
    ap.add_argument('--cache', default=os.environ.get('KILN_MODEL_CACHE', ''))
    ap.add_argument('--write-ort', metavar='DIR')
    args = ap.parse_args()
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

    with tempfile.TemporaryDirectory() as tmp:
        probed = os.path.join(tmp, 'isnet.onnx')
        m = with_probes(model, probed)
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
        outs = [os.path.join(tmp, 'out%d.npy' % k) for k in range(3)]
        r = subprocess.run([args.kiln, 'run', art, '--input=@' + xin] +
                           ['--output=@' + o for o in outs], capture_output=True, text=True,
                           timeout=1800)
        if r.returncode != 0:
            verdict('isnet_quint8 run', 'exit %d: %s' % (r.returncode, r.stderr.strip()))
            print('%d passed, %d failed' % (passed, failed))
            return 1
        alpha, xq, conv = (np.load(o) for o in outs)
        want_q, _, want_z = dynamic_quantize(x)
        diff = int(np.count_nonzero(xq.astype(np.int64) != want_q))
        verdict('isnet_quint8 DynamicQuantizeLinear (%d elements)' % xq.size,
                '' if xq.shape == want_q.shape and diff == 0 else '%d elements differ' % diff)
        w = initializer(m, 'conv_in.weight_quantized')
        zw = initializer(m, 'conv_in.weight_zero_point')
        want_c = conv_acc_fast(want_q, w, want_z, zw, (1, 1, 1, 1), (2, 2))
        diff = int(np.count_nonzero(conv.astype(np.int64) != want_c))
        verdict('isnet_quint8 ConvInteger (%d elements)' % conv.size,
                '' if conv.shape == want_c.shape and diff == 0 else '%d elements differ' % diff)
        ort = np.load(os.path.join(DATA, 'ort_output_0_every8.npy'))
        got = alpha[:, :, ::8, ::8]
        err = float(np.abs(got.astype(np.float64) - ort).max()) if got.shape == ort.shape else 1
        print('  alpha matte vs ONNX Runtime (%d samples): max |diff| %.3g, mean %.3g' % (
            ort.size, err, float(np.abs(got.astype(np.float64) - ort).mean())))
        verdict('isnet_quint8 alpha matte', '' if err <= TOLERANCE else
                'max |diff| %.3g > %g' % (err, TOLERANCE))
    print('%d passed, %d failed' % (passed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
