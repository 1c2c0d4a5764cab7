#!/usr/bin/env python3
"""Writes the source graph's test models (onnx.helper, deterministic):

long_names.onnx: x [1, 3, 16, 16] -> Conv (3x3, strides 2, pads 1, 8
channels) -> Relu -> Conv (1x1, 4 channels) -> y [1, 4, 8, 8], with
exporter-style node names (53 and 54 characters) that differ only near
their end.

tall_chain.onnx: x [1, 16] -> 24 x (MatMul by a 16x16 weight, Relu) -> y
[1, 16]: 48 nodes in one column, taller than any window (24 dispatches).

Run with /usr/bin/python3 (numpy, onnx) in this folder."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

PREFIX = "/model/backbone/stage_3/block_2/"


def tall_chain(folder):
    rng = np.random.default_rng(31)
    nodes, weights, value = [], [], "x"
    for k in range(24):
        w = "w%d" % k
        weights.append(numpy_helper.from_array((rng.standard_normal((16, 16)) / 4).astype(np.float32), w))
        nodes.append(helper.make_node("MatMul", [value, w], ["m%d" % k], "/encoder/layers.%d/mlp/MatMul" % k))
        value = "y" if k == 23 else "r%d" % k
        nodes.append(helper.make_node("Relu", ["m%d" % k], [value], "/encoder/layers.%d/mlp/Relu" % k))
    graph = helper.make_graph(nodes, "tall_chain",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])], weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="kiln-tests")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(folder, "tall_chain.onnx"))


def main():
    rng = np.random.default_rng(30)
    w1 = numpy_helper.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32), "w_expand")
    b1 = numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), "b_expand")
    w2 = numpy_helper.from_array(rng.standard_normal((4, 8, 1, 1)).astype(np.float32), "w_project")
    nodes = [
        helper.make_node("Conv", ["x", "w_expand", "b_expand"], ["expanded"], PREFIX + "depthwise_expand/Conv",
                         kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["expanded"], ["activated"], PREFIX + "depthwise_expand/Relu"),
        helper.make_node("Conv", ["activated", "w_project"], ["y"], PREFIX + "pointwise_project/Conv",
                         kernel_shape=[1, 1]),
    ]
    graph = helper.make_graph(nodes, "long_names",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])],
                              [w1, b1, w2])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="kiln-tests")
    model.ir_version = 8
    onnx.checker.check_model(model)
    folder = os.path.dirname(os.path.abspath(__file__))
    onnx.save(model, os.path.join(folder, "long_names.onnx"))
    tall_chain(folder)


if __name__ == "__main__":
    main()
