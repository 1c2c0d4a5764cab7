"""Inputs fixed to values from Python (fix_values=), as `kiln compile
--fix-value`: the same artifact bytes, the fixed inputs gone from the Module's
signature and listed by inspect(), outputs by the model's definition, and the
CLI's errors.

The models are tests/data/onnx/fix_value/ (make_models.py): rate.onnx,
y = If(sr == 16000) x * 2 else x * 3, + w; z = If(flag) Relu(x) else -x,
+ sr / 1000; scale.onnx, y = x * w + sr / 1000."""

import json

import numpy as np
import pytest

import kiln
from conftest import DATA, cli, cli_error

RATE = DATA / "onnx" / "fix_value" / "rate.onnx"
SCALE = DATA / "onnx" / "fix_value" / "scale.onnx"


def test_artifact_bytes_equal_the_cli(tmp_path):
    for values, flags in [
        ({"sr": 16000, "flag": True}, ["--fix-value=sr=16000", "--fix-value=flag=true"]),
        ({"sr": np.int64(8000), "flag": np.bool_(False), "w": np.array([0.5, -1, 2], np.float32)},
         ["--fix-value=sr=8000", "--fix-value=flag=false", "--fix-value=w=[0.5,-1,2]"]),
        # By index, a float for a whole number, a list for a 1-element value.
        ({1: 16000.0, 3: [1]}, ["--fix-value=1=16000", "--fix-value=3=1"]),
    ]:
        out = tmp_path / "cli.kiln"
        cli("compile", RATE, *flags, "-o", out)
        assert kiln.compile(RATE, fix_values=values).bytes == out.read_bytes(), values


def test_fixed_inputs_leave_the_signature_and_fold_the_ifs():
    x = np.array([[-3, -2, -1], [1, 2, 3]], np.float32)
    w = np.array([0.5, -1, 2], np.float32)
    for sr, flag in [(16000, True), (8000, False)]:
        module = kiln.load(kiln.compile(RATE, fix_values={"sr": sr, "flag": flag}))
        assert [t.name for t in module.inputs] == ["x", "w"]
        y, z = module(x, w)
        np.testing.assert_array_equal(y, x * (2 if sr == 16000 else 3) + w)
        want_z = (np.maximum(x, 0) if flag else -x) + np.float32(sr) / np.float32(1000)
        np.testing.assert_allclose(z, want_z, rtol=1e-6, atol=1e-6)
    # Every input fixed: a Module without inputs.
    module = kiln.load(kiln.compile(SCALE, fix_values={"x": x, "w": w, "sr": 16000}))
    assert len(module.inputs) == 0
    got = module()
    y = got[0] if isinstance(got, (list, tuple)) else got
    np.testing.assert_array_equal(y, x * w + np.float32(16))


def test_inspect_lists_fixed_values_as_the_cli():
    got = kiln.inspect(RATE, fix_values={"sr": 16000, "flag": True, "w": [0.5, -1, 2]})
    want = json.loads(cli("inspect", RATE, "--fix-value=sr=16000", "--fix-value=flag=true",
                          "--fix-value=w=0.5,-1,2", "--json").stdout)
    assert got == want
    fixed = got["signature"]["fixed_values"]
    assert [(f["name"], f["element_type"], f["shape"], f["values"]) for f in fixed] == [
        ("sr", "int64", [], [16000]), ("w", "float32", [3], [0.5, -1, 2]), ("flag", "bool", [], [1])]
    # rate.onnx: If "pick_rate" on sr == 16000, If on flag; both fixed true.
    flow = [(d["op_type"], d["decision"]) for d in got["control_flow"]]
    assert flow == [("If", "then_branch taken")] * 2
    assert "pick_rate" in got["control_flow"][0]["node"]
    assert "input 'sr' (--fix-value)" in got["control_flow"][0]["reason"]
    artifact = kiln.compile(RATE, fix_values={"sr": 16000, "flag": True})
    assert [f["name"] for f in kiln.inspect(artifact)["artifact"]["fixed_values"]] == ["sr", "flag"]


def test_errors_are_the_cli_messages():
    cases = [
        ({"sr": 16000, "flag": 2}, ["--fix-value=sr=16000", "--fix-value=flag=2"]),
        ({"rate": 16000}, ["--fix-value=rate=16000"]),
        ({"sr": 16000, "flag": True, "w": [1, 2]},
         ["--fix-value=sr=16000", "--fix-value=flag=true", "--fix-value=w=1,2"]),
        # (An unfixed If no longer fails here: it compiles as a run-time
        # select where its branches agree, rate.onnx's do.)
    ]
    for values, flags in cases:
        with pytest.raises(kiln.Error) as e:
            kiln.compile(RATE, fix_values=values)
        assert str(e.value) == cli_error("compile", RATE, *flags, "-o", "/dev/null"), values
    with pytest.raises(TypeError):
        kiln.compile(RATE, fix_values={"sr": "16000"})
    with pytest.raises(TypeError):
        kiln.compile(RATE, fix_values=[("sr", 16000)])
