#!/usr/bin/python3
"""Writes symbolic_n.onnx beside this script (run it again to remake it):

    inputs  x  float32 [N, 4]   (N: a symbolic batch dimension)
            b  float32 [1, 4]   (static)
    node #0 Relu, named "relu#1" (a '#' inside a node name), x -> r
    node #1 Add,  named "add",   r + b -> y
    output  y  float32 [N, 4]

Opset 13, IR version 7. Used by tests/model/ModelInputsTest.cpp and
tests/gui/ShapeFixGuiTest.cpp: readModelInputs reports x as [-1, 4] with
dimension 0 named "N"; `--fix-shape=x=3x4` compiles it.
"""
import os

import onnx
from onnx import TensorProto, helper

here = os.path.dirname(os.path.abspath(__file__))
graph = helper.make_graph(
    [helper.make_node("Relu", ["x"], ["r"], name="relu#1"),
     helper.make_node("Add", ["r", "b"], ["y"], name="add")],
    "symbolic_n",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4]),
     helper.make_tensor_value_info("b", TensorProto.FLOAT, [1, 4])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])])
model = helper.make_model(graph, producer_name="kiln-tests",
                          opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 7
onnx.checker.check_model(model)
onnx.save(model, os.path.join(here, "symbolic_n.onnx"))
