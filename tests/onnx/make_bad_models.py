#!/usr/bin/python3
"""Writes the malformed and unsupported ONNX models of tests/data/onnx/.

    tests/onnx/make_bad_models.py [--out tests/data/onnx]

Each is the smallest model showing one bad input `kiln compile` must refuse
with one error line (tests/onnx/OnnxErrorTest.cpp checks the messages;
tests/data/onnx/README.md says what each file is). Deterministic: running it
again rewrites the same bytes.
"""
import argparse
import os
import random

import onnx
import numpy as np
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.normpath(os.path.join(HERE, '../data/onnx'))
TFLITE_SOURCE = os.path.normpath(os.path.join(HERE, '../data/ops/relu/model.tflite'))


def model(nodes, inputs, outputs, opset=17, initializers=(), name='bad'):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(initializers))
    m = helper.make_model(graph, producer_name='kiln-make_bad_models',
                          opset_imports=[helper.make_opsetid('', opset)])
    m.ir_version = 8
    return m


def relu_add():
    """y = Relu(x) + x on float32 [1, 8]: a valid model to cut and garble."""
    x = helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 8])
    y = helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, 8])
    return model([helper.make_node('Relu', ['x'], ['r'], name='relu'),
                  helper.make_node('Add', ['r', 'x'], ['y'], name='add')], [x], [y])


def unsupported_op():
    """Relu, then Bernoulli (random draws, not an operator Kiln imports) as node #1."""
    x = helper.make_tensor_value_info('x', TensorProto.FLOAT, [2, 3, 3])
    y = helper.make_tensor_value_info('y', TensorProto.FLOAT, [2, 3, 3])
    return model([helper.make_node('Relu', ['x'], ['r'], name='relu'),
                  helper.make_node('Bernoulli', ['r'], ['y'], name='coin')], [x], [y])


def opset22():
    """Relu imported from opset 22 of the default domain (Kiln reads 7 to 21)."""
    x = helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 8])
    y = helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, 8])
    return model([helper.make_node('Relu', ['x'], ['y'], name='relu')], [x], [y], opset=22)


def symbolic_batch():
    """Relu on input 'pixels' of shape [batch, 8]: dimension 0 is the symbol 'batch'."""
    x = helper.make_tensor_value_info('pixels', TensorProto.FLOAT, ['batch', 8])
    y = helper.make_tensor_value_info('y', TensorProto.FLOAT, ['batch', 8])
    return model([helper.make_node('Relu', ['pixels'], ['y'], name='relu')], [x], [y])


def shared_symbol():
    """MatMul of 'row' [1, n] and 'column' [n, 1]: the symbol 'n' is
    dimension 1 of one input and dimension 0 of the other, so a suggestion
    must give both the same size."""
    a = helper.make_tensor_value_info('row', TensorProto.FLOAT, [1, 'n'])
    b = helper.make_tensor_value_info('column', TensorProto.FLOAT, ['n', 1])
    y = helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, 1])
    return model([helper.make_node('MatMul', ['row', 'column'], ['y'], name='dot')], [a, b], [y])


def conv_missing_weight():
    """Relu, then node #1 Conv "conv_1" with its input X only (W missing):
    libonnx's checker refuses the input count, naming the node by its name
    alone."""
    x = helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 1, 4, 4])
    y = helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, 1, 4, 4])
    return model([helper.make_node('Relu', ['x'], ['r'], name='relu'),
                  helper.make_node('Conv', ['r'], ['y'], name='conv_1')], [x], [y])


def runtime_reshape():
    """Relu, then node #1 Reshape 'reshape_at_run_time' whose shape is the graph
    input 'target_shape' (int64 [2]): its output shape is known only when the
    model runs."""
    x = helper.make_tensor_value_info('x', TensorProto.FLOAT, [2, 6])
    s = helper.make_tensor_value_info('target_shape', TensorProto.INT64, [2])
    y = helper.make_tensor_value_info('y', TensorProto.FLOAT, [None, None])
    return model([helper.make_node('Relu', ['x'], ['r'], name='relu'),
                  helper.make_node('Reshape', ['r', 'target_shape'], ['y'],
                                   name='reshape_at_run_time')], [x, s], [y])


def float64_input():
    """Relu on a float64 input 'x' [1, 8]."""
    x = helper.make_tensor_value_info('x', TensorProto.DOUBLE, [1, 8])
    y = helper.make_tensor_value_info('y', TensorProto.DOUBLE, [1, 8])
    return model([helper.make_node('Relu', ['x'], ['y'], name='relu')], [x], [y])


def external_data(out):
    """external/add_weights.onnx: y = x + w, x and w float32 [1, 4], w = [10,
    20, 30, 40] stored in the side file external/add_weights.bin (ONNX
    external data: location, offset 0, length 16); a valid model Kiln must
    read from any working directory."""
    folder = os.path.join(out, 'external')
    os.makedirs(folder, exist_ok=True)
    w = numpy_helper.from_array(np.array([[10, 20, 30, 40]], dtype=np.float32), 'w')
    w.ClearField('raw_data')
    w.data_location = TensorProto.EXTERNAL
    for key, value in (('location', 'add_weights.bin'), ('offset', '0'), ('length', '16')):
        entry = w.external_data.add()
        entry.key, entry.value = key, value
    x = helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, 4])
    m = model([helper.make_node('Add', ['x', 'w'], ['y'], name='add')], [x], [y],
              initializers=[w])
    with open(os.path.join(folder, 'add_weights.bin'), 'wb') as f:
        f.write(np.array([10, 20, 30, 40], dtype='<f4').tobytes())
    with open(os.path.join(folder, 'add_weights.onnx'), 'wb') as f:
        f.write(m.SerializeToString())
    onnx.checker.check_model(os.path.join(folder, 'add_weights.onnx'))
    print('wrote external/add_weights.onnx and external/add_weights.bin')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--out', default=DEFAULT_OUT)
    out = ap.parse_args().out
    os.makedirs(out, exist_ok=True)

    def write(name, data):
        with open(os.path.join(out, name), 'wb') as f:
            f.write(data)
        print(f'wrote {name} ({len(data)} bytes)')

    valid = relu_add().SerializeToString()
    onnx.checker.check_model(relu_add())
    # Truncated: the first half of the valid model (protobuf parsing fails
    # inside the graph).
    write('truncated.onnx', valid[:len(valid) // 2])
    # Garbled: the valid model's first 16 bytes, then seeded random bytes of
    # the same total length.
    rng = random.Random(13)
    write('garbled.onnx', valid[:16] + bytes(rng.randrange(256) for _ in valid[16:]))
    for name in ('truncated.onnx', 'garbled.onnx'):
        try:
            onnx.load(os.path.join(out, name))
            onnx.checker.check_model(onnx.load(os.path.join(out, name)))
        except Exception:
            continue
        raise SystemExit(f'{name} parses and checks: make it more broken')
    with open(TFLITE_SOURCE, 'rb') as f:
        write('tflite_renamed.onnx', f.read())
    for name, make in [('unsupported_op.onnx', unsupported_op),
                       ('opset22.onnx', opset22),
                       ('symbolic_batch.onnx', symbolic_batch),
                       ('shared_symbol.onnx', shared_symbol),
                       ('conv_missing_weight.onnx', conv_missing_weight),
                       ('runtime_reshape.onnx', runtime_reshape),
                       ('float64_input.onnx', float64_input)]:
        m = make()
        if name not in ('opset22.onnx', 'conv_missing_weight.onnx'):  # the checker refuses these
            onnx.checker.check_model(m)
        write(name, m.SerializeToString())
    external_data(out)


if __name__ == '__main__':
    main()
