"""A new user's reports: model bytes for export, short messages for bad
device/threads/benchmark arguments, contradictory fixed shapes by index and
by name, and non-TFLite bytes failing as a file does."""

import json

import numpy as np
import pytest

import kiln
from conftest import cli_error, model_path


@pytest.fixture(scope="module")
def alexa(tmp_path_factory):
    path = tmp_path_factory.mktemp("alexa") / "alexa.kiln"
    kiln.compile(model_path("alexa")).save(path)
    return path


def test_export_takes_model_bytes_as_compile_does(tmp_path):
    data = model_path("alexa").read_bytes()
    from_bytes = kiln.export(data, out_dir=tmp_path / "eb")
    from_path = kiln.export(model_path("alexa"), out_dir=tmp_path / "ep")
    assert (tmp_path / "eb" / "model.kiln").exists() or from_bytes["files"]
    assert from_bytes["manifest"]["sections"] == from_path["manifest"]["sections"]
    with pytest.raises(TypeError, match="out_dir="):
        kiln.export(data)


BIG = 10**30


@pytest.mark.parametrize("call,exc,match", [
    (lambda a: kiln.load(a, device=5), TypeError, "device= takes"),
    (lambda a: kiln.load(a, device="gpu"), ValueError, "not a device"),
    (lambda a: kiln.load(a, device="local-task", threads=BIG), ValueError, "from 1 to 256"),
    (lambda a: kiln.load(a, device="local-task", threads=2.0), TypeError, "threads= takes an int"),
    (lambda a: kiln.load(a).benchmark(10**20), ValueError, "at most"),
    (lambda a: kiln.load(a).benchmark("3"), TypeError, "takes an int"),
    (lambda a: kiln.diff(a, a, benchmark=-1), ValueError, "benchmark="),
    (lambda a: kiln.diff(a, a, benchmark=BIG), ValueError, "benchmark="),
])
def test_bad_arguments_give_short_messages(alexa, call, exc, match):
    with pytest.raises(exc, match=match) as e:
        call(alexa.read_bytes())
    assert len(str(e.value)) < 200, str(e.value)[:300]


def test_device_none_is_local_sync(alexa):
    module = kiln.load(alexa.read_bytes(), device=None)
    assert module.device == "local-sync" and module.threads == 1


def test_index_and_name_fixing_one_input_differently_is_refused():
    model = model_path("embedding")
    name = kiln.inspect(model, fix_shapes={0: (1, 76, 32, 1)})["signature"]["inputs"][0]["name"]
    message = cli_error("compile", model, "--fix-shape=0=1x76x32x1",
                        f"--fix-shape={name}=2x76x32x1")
    assert "twice" in message and f"'{name}'" in message and "'0'" in message
    assert "[1,76,32,1]" in message and "[2,76,32,1]" in message
    with pytest.raises(kiln.Error) as e:
        kiln.compile(model, fix_shapes={0: (1, 76, 32, 1), name: (2, 76, 32, 1)})
    assert str(e.value) == message
    # The same shape given both ways is not a contradiction.
    kiln.compile(model, fix_shapes={0: (1, 76, 32, 1), name: (1, 76, 32, 1)})


def test_non_tflite_bytes_fail_as_a_file_does(tmp_path):
    bad = tmp_path / "model.tflite"
    bad.write_bytes(b"not a model")
    message = cli_error("compile", bad)
    assert "not a TFLite model" in message
    with pytest.raises(kiln.Error) as e:
        kiln.compile(b"not a model")
    assert str(e.value) == message
    with pytest.raises(kiln.Error) as e:
        kiln.inspect(b"garbage")
    assert "not a TFLite model" in str(e.value) and "model.mlir" not in str(e.value)


def test_tosa_mlir_text_bytes_still_compile():
    from conftest import DATA
    data = (DATA / "mlir" / "add_scale.mlir").read_bytes()
    assert kiln.compile(data).bytes
