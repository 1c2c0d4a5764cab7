"""TFLite signatures from Python (signature=), as `kiln compile --signature`:
the same artifact bytes, the Module's inputs and outputs named and ordered as
the signature lists them, outputs equal to the stored references (TFLite 2.9's
kernels on the signature's subgraph, checked by make_signature_cases.mjs
against its own evaluation), inspect()'s "signatures", and the CLI's errors.

The model is tests/data/signatures/*/model.tflite
(tests/reference/make_signature_cases.mjs): 'add' x + y -> sum (subgraph 0),
'mul' x * y -> product (subgraph 1, inputs listed y, x), 'sub' x - y ->
difference and 2x -> scaled (subgraph 2, listed y, x -> scaled, difference)."""

import json

import numpy as np
import pytest

import kiln
from conftest import DATA, cli, cli_error

CASES = DATA / "signatures"
MODEL = CASES / "add" / "model.tflite"


def case(name):
    folder = CASES / name
    meta = json.loads((folder / "meta.json").read_text())
    inputs = [np.load(folder / f"input_{k}.npy") for k in range(len(meta["inputs"]))]
    outputs = [np.load(folder / f"output_{k}.npy") for k in range(len(meta["outputs"]))]
    return meta, inputs, outputs


def test_compile_signature_mul_matches_the_cli_and_the_reference(tmp_path):
    out = tmp_path / "mul.kiln"
    cli("compile", MODEL, "--signature=mul", "-o", out)
    artifact = kiln.compile(MODEL, signature="mul")
    assert artifact.bytes == out.read_bytes()
    meta, inputs, outputs = case("mul")
    module = kiln.load(artifact)
    assert [t.name for t in module.inputs] == ["y", "x"] == meta["inputs"]
    assert [t.name for t in module.outputs] == ["product"]
    got = module(*inputs)
    got = got[0] if isinstance(got, (list, tuple)) else got
    np.testing.assert_allclose(got, outputs[0], rtol=1e-6, atol=1e-6)
    # x * y, independently (inputs in the signature's order: y, x).
    np.testing.assert_allclose(got, inputs[1] * inputs[0], rtol=1e-6, atol=1e-6)


def test_every_signature_and_the_default():
    for name in ["add", "mul", "sub"]:
        meta, inputs, outputs = case(name)
        module = kiln.load(kiln.compile(MODEL, signature=name))
        assert [t.name for t in module.inputs] == meta["inputs"], name
        assert [t.name for t in module.outputs] == meta["outputs"], name
        got = module(*inputs)
        got = list(got) if isinstance(got, (list, tuple)) else [got]
        for g, want in zip(got, outputs):
            np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-6)
    # No signature=: subgraph 0 ('add') with its tensors' names.
    module = kiln.load(kiln.compile(MODEL))
    assert [t.name for t in module.inputs] == ["serving_default_x:0", "serving_default_y:0"]
    _, inputs, outputs = case("add")
    got = module(*inputs)
    got = got[0] if isinstance(got, (list, tuple)) else got
    np.testing.assert_allclose(got, outputs[0], rtol=1e-6, atol=1e-6)


def test_inspect_lists_the_signatures_as_the_cli():
    got = kiln.inspect(MODEL, signature="sub")
    want = json.loads(cli("inspect", MODEL, "--signature=sub", "--json").stdout)
    assert got["signatures"] == want["signatures"]
    assert [(s["key"], s["subgraph"], s["compiled"]) for s in got["signatures"]] == [
        ("add", 0, False), ("mul", 1, False), ("sub", 2, True)]
    assert not any(s["compiled"] for s in kiln.inspect(MODEL)["signatures"])
    assert got["signatures"][2]["outputs"] == ["scaled", "difference"]


def test_errors_are_the_cli_messages():
    with pytest.raises(kiln.Error) as e:
        kiln.compile(MODEL, signature="div")
    assert str(e.value) == cli_error("compile", MODEL, "--signature=div", "-o", "/dev/null")
    assert "'add', 'mul', 'sub'" in str(e.value)
    with pytest.raises(TypeError):
        kiln.compile(MODEL, signature=1)
