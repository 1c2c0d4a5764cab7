#!/usr/bin/python3
"""Writes tests/data/quant_twins: float models and their quantized twins for
`kiln validate A --compare-with=B` (tests/model/CompareModelsTest.cpp).

Run with /usr/bin/python3 (numpy and onnx); byte-for-byte reproducible.

  identity_4x64.onnx   float32 [4, 64] -> Identity -> float32 [4, 64]: the
                       float twin of tests/data/ops_int8/quantize_float_to_int8
                       (QUANTIZE to int8, scale 0.02, zero point 5) and of
                       .../dequantize_int8 (DEQUANTIZE int8, scale 0.037,
                       zero point -9): the error of each is the quantization
                       step, at most scale / 2.
  gemm_float.onnx      a 10-class classifier: float32 [1, 32] x W [32, 10] + b.
  gemm_qdq.onnx        its int8 twin in ONNX QDQ form (float I/O):
                       x -> QuantizeLinear(sx, zx) -> DequantizeLinear ->
                       MatMul(DequantizeLinear(Wq, sw, 0)) -> Add(b) ->
                       QuantizeLinear(sy, zy) -> DequantizeLinear -> y.
  gemm_meta.json       the parameters and what the comparison must report on
                       Kiln's random inputs (kiln/Compare.h realRandomInputs,
                       seed 1, 16 samples), computed here in float64 with
                       ONNX's QuantizeLinear (round half to even, saturate).
"""
import json
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "quant_twins")
SAMPLES, SEED = 16, 1


def save(model, name):
    model.ir_version = 8
    onnx.checker.check_model(model)
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(model.SerializeToString())


def identity():
    x = helper.make_tensor_value_info("input", TensorProto.FLOAT, [4, 64])
    y = helper.make_tensor_value_info("output", TensorProto.FLOAT, [4, 64])
    graph = helper.make_graph([helper.make_node("Identity", ["input"], ["output"])],
                              "identity", [x], [y])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), "identity_4x64.onnx")


def kiln_random_inputs(n, seed, lo=-1.0, hi=1.0):
    """kiln/Compare.h realRandomInputs for one float input of n elements."""
    state = seed
    out = np.empty(n, np.float32)
    for i in range(n):
        state = (state * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        u = (state >> 40) * (1.0 / 16777216.0)
        out[i] = np.float32(lo + (hi - lo) * u)
    return out


def quantize(v, scale, zero_point):
    """ONNX QuantizeLinear to int8: round half to even, saturate."""
    return np.clip(np.rint(v / scale) + zero_point, -128, 127)


def gemm():
    rng = np.random.default_rng(20261203)
    w = rng.uniform(-0.5, 0.5, (32, 10)).astype(np.float32)
    b = rng.uniform(-0.2, 0.2, 10).astype(np.float32)
    sx, zx = np.float32(2.0 / 255.0), 0
    sw = np.float32(np.abs(w).max() / 127.0)
    wq = quantize(w.astype(np.float64), np.float64(sw), 0).astype(np.int8)
    # The output range covers every |y| the inputs in [-1, 1] can give.
    bound = float(np.abs(w).sum(axis=0).max() + np.abs(b).max())
    sy, zy = np.float32(bound / 127.0), 0

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])
    opset = [helper.make_opsetid("", 13)]
    float_graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["xw"]), helper.make_node("Add", ["xw", "b"], ["y"])],
        "gemm_float", [x], [y], [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "b")])
    save(helper.make_model(float_graph, opset_imports=opset), "gemm_float.onnx")

    inits = [numpy_helper.from_array(wq, "Wq"), numpy_helper.from_array(b, "b"),
             numpy_helper.from_array(np.array(sx, np.float32), "sx"),
             numpy_helper.from_array(np.array(zx, np.int8), "zx"),
             numpy_helper.from_array(np.array(sw, np.float32), "sw"),
             numpy_helper.from_array(np.array(0, np.int8), "zw"),
             numpy_helper.from_array(np.array(sy, np.float32), "sy"),
             numpy_helper.from_array(np.array(zy, np.int8), "zy")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xd"]),
             helper.make_node("DequantizeLinear", ["Wq", "sw", "zw"], ["Wd"]),
             helper.make_node("MatMul", ["xd", "Wd"], ["xw"]),
             helper.make_node("Add", ["xw", "b"], ["yf"]),
             helper.make_node("QuantizeLinear", ["yf", "sy", "zy"], ["yq"]),
             helper.make_node("DequantizeLinear", ["yq", "sy", "zy"], ["y"])]
    qdq_graph = helper.make_graph(nodes, "gemm_qdq", [x], [y], inits)
    save(helper.make_model(qdq_graph, opset_imports=opset), "gemm_qdq.onnx")

    # What the comparison sees on Kiln's inputs: float64 references.
    w64, b64, wd = w.astype(np.float64), b.astype(np.float64), wq.astype(np.float64) * float(sw)
    errors, agree, dot, na, nb, sq = [], 0, 0.0, 0.0, 0.0, 0.0
    for s in range(SAMPLES):
        xs = kiln_random_inputs(32, SEED + s).astype(np.float64)
        yf = xs @ w64 + b64
        xd = (quantize(xs, float(sx), zx) - zx) * float(sx)
        yq = (quantize(xd @ wd + b64, float(sy), zy) - zy) * float(sy)
        d = yf - yq
        errors.append(np.abs(d).max())
        sq += float((d * d).sum())
        dot += float((yf * yq).sum())
        na += float((yf * yf).sum())
        nb += float((yq * yq).sum())
        agree += int(np.argmax(yf) == np.argmax(yq))
    # The worst case any input in [-1, 1] allows: half a step of the output,
    # plus each input's half step through |W|, plus each weight's half step.
    worst = float(sy) / 2 + float(np.abs(wd).sum(axis=0).max()) * float(sx) / 2 + 32 * float(sw) / 2
    meta = {
        "float": "gemm_float.onnx", "quantized": "gemm_qdq.onnx",
        "samples": SAMPLES, "seed": SEED,
        "input_scale": float(sx), "weight_scale": float(sw), "output_scale": float(sy),
        "expected": {
            "max_abs_error": float(max(errors)),
            "rmse": float(np.sqrt(sq / (SAMPLES * 10))),
            "cosine": dot / (np.sqrt(na) * np.sqrt(nb)),
            "top1_agreement": agree / SAMPLES,
        },
        "max_abs_error_bound": worst,
    }
    with open(os.path.join(OUT, "gemm_meta.json"), "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    identity()
    gemm()
