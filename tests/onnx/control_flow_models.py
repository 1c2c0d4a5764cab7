"""ONNX If/Loop models for the import-time folding (ONNXImporter.cpp, "Control flow"):
if_const.onnx (If on a constant: Relu branch), if_input.onnx (If on a bool
input: refused naming node "pick" and input cx), loop.onnx (Loop, trip count 3,
acc += x carried, scan output of each acc). Usage: python3 control_flow_models.py
in an empty folder. Not yet registered in CMakeLists.txt; checked by hand:
kiln run loop.kiln --input=2x3xf32=0.5 gives acc 1.5, scan 0.5/1.0/1.5."""
import onnx, numpy as np
from onnx import helper as h, TensorProto as T, numpy_helper as nh
x = h.make_tensor_value_info('x', T.FLOAT, [2, 3])
y = h.make_tensor_value_info('y', T.FLOAT, [2, 3])
def branch(name, op):
    o = h.make_tensor_value_info(name+'_o', T.FLOAT, [2, 3])
    return h.make_graph([h.make_node(op, ['x'], [name+'_o'])], name, [], [o])
c = nh.from_array(np.array(True), 'c')
g = h.make_graph([h.make_node('If', ['c'], ['y'], then_branch=branch('t', 'Relu'), else_branch=branch('e', 'Neg'))], 'g', [x], [y], [c])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid('', 13)]), 'if_const.onnx')
cx = h.make_tensor_value_info('cx', T.BOOL, [])
g = h.make_graph([h.make_node('If', ['cx'], ['y'], name='pick', then_branch=branch('t', 'Relu'), else_branch=branch('e', 'Neg'))], 'g', [x, cx], [y])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid('', 13)]), 'if_input.onnx')
# Loop: acc = acc + x, 3 times; scan output acc
bi = h.make_tensor_value_info('i', T.INT64, [])
bc = h.make_tensor_value_info('cin', T.BOOL, [])
ba = h.make_tensor_value_info('a', T.FLOAT, [2, 3])
body = h.make_graph([h.make_node('Add', ['a', 'x'], ['a2']), h.make_node('Identity', ['cin'], ['cout']), h.make_node('Identity', ['a2'], ['s'])], 'body',
  [bi, bc, ba], [h.make_tensor_value_info('cout', T.BOOL, []), h.make_tensor_value_info('a2', T.FLOAT, [2, 3]), h.make_tensor_value_info('s', T.FLOAT, [2, 3])])
M = nh.from_array(np.array(3, dtype=np.int64), 'M'); C = nh.from_array(np.array(True), 'C')
z = nh.from_array(np.zeros((2, 3), np.float32), 'z')
g = h.make_graph([h.make_node('Loop', ['M', 'C', 'z'], ['acc', 'scan'], body=body)], 'g', [x],
  [h.make_tensor_value_info('acc', T.FLOAT, [2, 3]), h.make_tensor_value_info('scan', T.FLOAT, [3, 2, 3])], [M, C, z])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid('', 13)]), 'loop.onnx')
