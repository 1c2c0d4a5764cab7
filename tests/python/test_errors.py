"""Every documented error path raises the documented exception: kiln.Error (a
RuntimeError) with the CLI's one-line message, ValueError for a wrong input
count, name, shape or dtype (naming the input and what it expects) or a bad
device, TypeError for a keyword of the wrong name or type."""

import json

import numpy as np
import pytest

import kiln
from conftest import DATA, cli_error, model_path


@pytest.fixture(scope="module")
def alexa(tmp_path_factory):
    path = tmp_path_factory.mktemp("alexa") / "alexa.kiln"
    kiln.compile(model_path("alexa")).save(path)
    return path


@pytest.fixture(scope="module")
def module(alexa):
    return kiln.load(alexa)


def test_error_is_a_runtime_error():
    assert issubclass(kiln.Error, RuntimeError)
    assert kiln.Error.__module__ == "kiln"


def same_message(excinfo, message):
    assert str(excinfo.value) == message
    assert "\n" not in str(excinfo.value)


def test_missing_model(tmp_path):
    missing = tmp_path / "missing.tflite"
    with pytest.raises(kiln.Error) as e:
        kiln.compile(missing)
    same_message(e, cli_error("compile", missing, "-o", tmp_path / "x.kiln"))


def test_garbage_model(tmp_path):
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"\0" * 64)
    with pytest.raises(kiln.Error) as e:
        kiln.compile(bad)
    same_message(e, cli_error("compile", bad, "-o", tmp_path / "x.kiln"))


def test_dynamic_input_not_fixed(tmp_path):
    # shape [-1,8]: no recorded size to compile at.
    model = DATA / "bad" / "dynamic_batch.tflite"
    with pytest.raises(kiln.Error) as e:
        kiln.compile(model)
    same_message(e, cli_error("compile", model, "-o", tmp_path / "x.kiln"))
    assert "--fix-shape" in str(e.value)


def test_recorded_batch_compiles_with_the_cli_warning(tmp_path):
    # embedding's batch is -1 in its shape_signature and recorded as 1.
    model = model_path("embedding")
    with pytest.warns(kiln.BuildWarning, match="compiled at its recorded shape 1x76x32x1"):
        kiln.compile(model)


@pytest.mark.parametrize("recipe,flag", [
    ({"tiles": {0: [-8]}}, "--tile=0=-8"),
    ({"fix_shapes": {0: (1, 0, 32, 1)}}, "--fix-shape=0=1x0x32x1"),
    ({"target": "z80"}, "--target=z80"),
    ({"profile": "tiny"}, "--profile=tiny"),
    ({"output_format": "zip"}, "--output-format=zip"),
])
def test_bad_setting_value_has_the_cli_message(recipe, flag, tmp_path):
    model = model_path("embedding")
    with pytest.raises(kiln.Error) as e:
        kiln.compile(model, **recipe)
    same_message(e, cli_error("compile", model, flag, "-o", tmp_path / "x.kiln"))


def test_tile_the_tiler_refuses(tmp_path):
    model = model_path("alexa")
    with pytest.raises(kiln.Error) as e:
        kiln.compile(model, tiles={0: [1, 2, 3, 4, 5, 6, 7, 8, 9]})
    same_message(e, cli_error("compile", model, "--tile=0=1,2,3,4,5,6,7,8,9",
                              "-o", tmp_path / "x.kiln"))


def test_unknown_keyword_and_wrong_types():
    model = model_path("alexa")
    with pytest.raises(TypeError, match="unexpected keyword argument 'tile'"):
        kiln.compile(model, tile={0: [1]})
    with pytest.raises(TypeError, match="cpu= takes a str"):
        kiln.compile(model, cpu=3)
    with pytest.raises(TypeError, match="fusion= takes True or False"):
        kiln.compile(model, fusion="no")
    with pytest.raises(TypeError, match="tiles="):
        kiln.compile(model, tiles=[1, 2])
    with pytest.raises(TypeError, match="sequence of int"):
        kiln.compile(model, fix_shapes={0: "1x16x96"})
    with pytest.raises(TypeError, match="one of them"):
        kiln.compile()
    with pytest.raises(TypeError):
        kiln.compile(3.5)


def test_project_with_settings(tmp_path):
    project = tmp_path / "m.kilnproj"
    project.write_text(json.dumps({"kiln_project": 1, "model": str(model_path("alexa"))}))
    with pytest.raises(kiln.Error, match="edit the project"):
        kiln.compile(project=project, cpu="x86-64-v3")
    bad = tmp_path / "bad.kilnproj"
    bad.write_text(json.dumps({"kiln_project": 1, "model": "a.tflite", "tilez": {}}))
    with pytest.raises(kiln.Error) as e:
        kiln.compile(project=bad)
    same_message(e, cli_error("compile", f"--project={bad}", "-o", tmp_path / "x.kiln"))


def test_load_errors(tmp_path):
    missing = tmp_path / "missing.kiln"
    with pytest.raises(kiln.Error, match="cannot read"):
        kiln.load(missing)
    with pytest.raises(kiln.Error, match="KILN|artifact"):
        kiln.load(b"\0" * 128)
    with pytest.raises(kiln.Error, match="a TFLite model, not a Kiln artifact: load "
                                         "kiln.compile"):
        kiln.load(model_path("alexa"))
    garbage = tmp_path / "garbage.kiln"
    garbage.write_bytes(b"\0" * 128)
    with pytest.raises(kiln.Error) as e:
        kiln.load(garbage)
    cli_message = cli_error("run", garbage)
    same_message(e, cli_message)


def test_corrupted_artifact(alexa, tmp_path):
    data = bytearray(alexa.read_bytes())
    data[len(data) // 2] ^= 0xFF
    bad = tmp_path / "bad.kiln"
    bad.write_bytes(bytes(data))
    with pytest.raises(kiln.Error) as e:
        kiln.load(bad)
    same_message(e, cli_error("run", bad))
    with pytest.raises(kiln.Error, match="checksum"):
        kiln.inspect(bytes(data))
    with pytest.raises(kiln.Error):
        kiln.Artifact(bytes(data)).sections


@pytest.mark.parametrize("device,threads,match", [
    ("gpu", None, "not a device"),
    ("local-task", 0, "from 1 to 256"),
    ("local-task", 257, "from 1 to 256"),
    ("local-sync", 2, "applies to device='local-task'"),
])
def test_bad_device(alexa, device, threads, match):
    with pytest.raises(ValueError, match=match):
        kiln.load(alexa, device=device, threads=threads)


def test_wrong_input_count(module):
    x = np.zeros((1, 16, 96), np.float32)
    with pytest.raises(ValueError, match=r"takes 1 input\(s\), 2 given; expected, in order: "
                                         r"'serving_default_onnx_tf__tf_Flatten_0_79e3d279:0' "
                                         r"\(1, 16, 96\) float32"):
        module(x, x)
    with pytest.raises(ValueError, match=r"takes 1 input\(s\), 0 given"):
        module()


def test_wrong_shape(module):
    with pytest.raises(ValueError) as e:
        module(np.zeros((1, 16, 95), np.float32))
    assert str(e.value) == ("input 0 'serving_default_onnx_tf__tf_Flatten_0_79e3d279:0' "
                            "expects shape (1, 16, 96), got (1, 16, 95)")
    with pytest.raises(ValueError, match="expects shape"):
        module(np.zeros((16, 96), np.float32))
    with pytest.raises(ValueError, match="expects shape"):
        module(np.float32(0))


def test_wrong_dtype(module):
    with pytest.raises(ValueError) as e:
        module(np.zeros((1, 16, 96), np.float64))
    assert str(e.value).startswith(
        "input 0 'serving_default_onnx_tf__tf_Flatten_0_79e3d279:0' expects dtype float32, "
        "got float64")
    with pytest.raises(ValueError, match="expects dtype float32, got >f4"):
        module(np.zeros((1, 16, 96), ">f4"))
    with pytest.raises(ValueError, match="expects dtype float32, got int32"):
        module(np.zeros((1, 16, 96), np.int32))
    # A list becomes an array of its own dtype (float64): no silent conversion.
    with pytest.raises(ValueError, match="expects dtype float32, got float64"):
        module(np.zeros((1, 16, 96)).tolist())


def test_wrong_names(module):
    x = np.zeros((1, 16, 96), np.float32)
    with pytest.raises(ValueError, match="no input named 'x'; its inputs are "
                                         "'serving_default_onnx_tf__tf_Flatten_0_79e3d279:0'"):
        module(x=x)
    with pytest.raises(ValueError, match="either in order or by name"):
        module(x, **{"serving_default_onnx_tf__tf_Flatten_0_79e3d279:0": x})


def test_inspect_diff_validate_export_errors(alexa, tmp_path):
    model = model_path("alexa")
    with pytest.raises(kiln.Error, match="already compiled"):
        kiln.inspect(alexa, cpu="x86-64-v3")
    with pytest.raises(kiln.Error) as e:
        kiln.diff(alexa, model)
    same_message(e, cli_error("diff", alexa, model))
    with pytest.raises(kiln.Error) as e:
        kiln.validate(alexa, tmp_path / "nowhere")
    same_message(e, cli_error("validate", alexa, tmp_path / "nowhere"))
    with pytest.raises(kiln.Error, match="already compiled"):
        kiln.validate(alexa, tmp_path, fusion=False)
    with pytest.raises(ValueError, match="atol"):
        kiln.validate(alexa, tmp_path, atol=-1)
    with pytest.raises(ValueError, match="samples"):
        kiln.validate(alexa, tmp_path, samples=0)
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(kiln.Error) as e:
        kiln.export(model, out_dir=blocker / "sub")
    same_message(e, cli_error("export", model, "-o", blocker / "sub"))
    with pytest.raises(kiln.Error) as e:
        kiln.export(model, out_dir=tmp_path / "b", ram_budget="lots")
    same_message(e, cli_error("export", model, "-o", tmp_path / "b", "--ram-budget=lots"))
    with pytest.raises(kiln.Error, match="cannot read"):
        kiln.diff(tmp_path / "nothing.kiln", alexa)


def test_save_error(alexa, tmp_path):
    with pytest.raises(kiln.Error, match="write failed|cannot write"):
        kiln.Artifact.read(alexa).save(tmp_path / "no" / "such" / "dir" / "a.kiln")
