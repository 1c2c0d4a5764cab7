"""ONNX models in the Python package, as on the command line: a path or its
bytes (written to a temporary model.onnx), --fix-shape of a symbolic
dimension, and inspect()'s "model_inputs" equal to `kiln inspect --json`.

The model is tests/data/model_inputs/symbolic_n.onnx (make_symbolic_n.py):
x float32 [N,4], b float32 [1,4], y = Relu(x) + b."""

import json

import numpy as np

import kiln
from conftest import DATA, cli, cli_error

MODEL = DATA / "model_inputs" / "symbolic_n.onnx"


def test_inspect_lists_symbolic_dimensions_as_the_cli():
    got = kiln.inspect(MODEL, fix_shapes={"x": (2, 4)})
    want = json.loads(cli("inspect", MODEL, "--fix-shape=x=2x4", "--json").stdout)
    assert got == want
    x, b = got["model_inputs"]
    assert (x["name"], x["shape"], x["dim_names"], x["dynamic"]) == ("x", [-1, 4], ["N", ""], True)
    assert (b["name"], b["shape"], b["dynamic"]) == ("b", [1, 4], False)
    # From the bytes: the same inputs (a temporary model.onnx).
    from_bytes = kiln.inspect(MODEL.read_bytes(), fix_shapes={0: (2, 4)})
    assert from_bytes["model_inputs"] == got["model_inputs"]


def test_onnx_runs_with_a_fixed_batch():
    artifact = kiln.compile(MODEL.read_bytes(), fix_shapes={"x": (3, 4)})
    x = np.array([[-1, 2, -3, 4], [5, -6, 7, -8], [0, 0, 0, 0]], dtype=np.float32)
    b = np.full((1, 4), 0.5, dtype=np.float32)
    got = kiln.load(artifact)(x, b)
    y = got[0] if isinstance(got, (list, tuple)) else got
    np.testing.assert_array_equal(y, np.maximum(x, 0) + 0.5)


def test_fix_shape_refused_as_the_cli():
    message = cli_error("compile", MODEL, "--fix-shape=x=2x5")
    assert "dimension 1 is static (4) and cannot become 5" in message
    try:
        kiln.compile(MODEL, fix_shapes={"x": (2, 5)})
    except kiln.Error as e:
        assert "dimension 1 is static (4) and cannot become 5" in str(e)
    else:
        raise AssertionError("kiln.compile took a fix contradicting a static dimension")
