#!/usr/bin/python3
"""Models for --fix-value (tests/model/CliTest.cpp FixValue*, tests/python,
tests/gui/FixValueGuiTest.cpp), written by hand with onnx.helper:

rate.onnx (opset 13): inputs x float32 [2,3], sr int64 [] (a sample rate),
w float32 [3], flag bool [];
  y = If(Equal(sr, 16000)) then x * 2 else x * 3, plus w (broadcast over rows)
  z = If(flag) then Relu(x) else Neg(x), plus Cast(sr, float32) / 1000
An If on sr or flag folds only when the input is fixed (--fix-value=sr=16000
--fix-value=flag=true); w is data, fixed or not.

scale.onnx (opset 13, no control flow: it builds with every input given or
some fixed): inputs x float32 [2,3], w float32 [3], sr int64 [];
  y = x * w + Cast(sr, float32) / 1000

Expected outputs are computed by NumPy in the tests from these definitions.

    python3 make_models.py      (in this folder)
"""
import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper as nh


def branch(name, nodes, out):
    return h.make_graph(nodes, name, [], [h.make_tensor_value_info(out, T.FLOAT, [2, 3])])


def rate():
    inputs = [h.make_tensor_value_info('x', T.FLOAT, [2, 3]),
              h.make_tensor_value_info('sr', T.INT64, []),
              h.make_tensor_value_info('w', T.FLOAT, [3]),
              h.make_tensor_value_info('flag', T.BOOL, [])]
    inits = [nh.from_array(np.array(16000, np.int64), 'k16000'),
             nh.from_array(np.array(2, np.float32), 'two'),
             nh.from_array(np.array(3, np.float32), 'three'),
             nh.from_array(np.array(1000, np.float32), 'thousand')]
    nodes = [
        h.make_node('Equal', ['sr', 'k16000'], ['is16k'], name='is_16k'),
        h.make_node('If', ['is16k'], ['scaled'], name='pick_rate',
                    then_branch=branch('then_rate', [h.make_node('Mul', ['x', 'two'], ['t_o'])], 't_o'),
                    else_branch=branch('else_rate', [h.make_node('Mul', ['x', 'three'], ['e_o'])], 'e_o')),
        h.make_node('Add', ['scaled', 'w'], ['y'], name='add_w'),
        h.make_node('If', ['flag'], ['signed'], name='pick_sign',
                    then_branch=branch('then_sign', [h.make_node('Relu', ['x'], ['r_o'])], 'r_o'),
                    else_branch=branch('else_sign', [h.make_node('Neg', ['x'], ['n_o'])], 'n_o')),
        h.make_node('Cast', ['sr'], ['srf'], name='sr_float', to=T.FLOAT),
        h.make_node('Div', ['srf', 'thousand'], ['khz'], name='khz'),
        h.make_node('Add', ['signed', 'khz'], ['z'], name='add_khz'),
    ]
    outputs = [h.make_tensor_value_info('y', T.FLOAT, [2, 3]),
               h.make_tensor_value_info('z', T.FLOAT, [2, 3])]
    graph = h.make_graph(nodes, 'rate', inputs, outputs, inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid('', 13)], producer_name='kiln-tests')
    model.ir_version = 7
    onnx.checker.check_model(model)
    onnx.save(model, 'rate.onnx')


def scale():
    inputs = [h.make_tensor_value_info('x', T.FLOAT, [2, 3]),
              h.make_tensor_value_info('w', T.FLOAT, [3]),
              h.make_tensor_value_info('sr', T.INT64, [])]
    inits = [nh.from_array(np.array(1000, np.float32), 'thousand')]
    nodes = [
        h.make_node('Mul', ['x', 'w'], ['xw'], name='mul_w'),
        h.make_node('Cast', ['sr'], ['srf'], name='sr_float', to=T.FLOAT),
        h.make_node('Div', ['srf', 'thousand'], ['khz'], name='khz'),
        h.make_node('Add', ['xw', 'khz'], ['y'], name='add_khz'),
    ]
    outputs = [h.make_tensor_value_info('y', T.FLOAT, [2, 3])]
    graph = h.make_graph(nodes, 'scale', inputs, outputs, inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid('', 13)], producer_name='kiln-tests')
    model.ir_version = 7
    onnx.checker.check_model(model)
    onnx.save(model, 'scale.onnx')


if __name__ == '__main__':
    rate()
    scale()
