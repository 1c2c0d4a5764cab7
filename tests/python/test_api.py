"""kiln.inspect, diff, validate, Module.benchmark and version give what the
CLI's commands give (`--json` documents as Python objects); the docstrings
say what help() should."""

import json
import pydoc

import numpy as np
import pytest

import kiln
from conftest import DATA, KILN, cli, model_path


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    folder = tmp_path_factory.mktemp("api")
    default = folder / "alexa.kiln"
    stripped = folder / "alexa-stripped.kiln"
    kiln.compile(model_path("alexa")).save(default)
    kiln.compile(model_path("alexa"), profile="stripped").save(stripped)
    return default, stripped


def test_inspect_model_equals_cli():
    model = model_path("embedding")
    got = kiln.inspect(model, fix_shapes={0: (1, 76, 32, 1)})
    want = json.loads(cli("inspect", model, "--fix-shape=0=1x76x32x1", "--json").stdout)
    assert got == want
    assert got["signature"]["inputs"][0]["shape"] == [1, 76, 32, 1]
    # The model's bytes plan the same dispatches.
    from_bytes = kiln.inspect(model.read_bytes(), fix_shapes={0: (1, 76, 32, 1)})
    assert from_bytes["dispatches"] == got["dispatches"]


def test_diff_equals_cli(builds):
    default, stripped = builds
    got = kiln.diff(default, stripped)
    assert got == json.loads(cli("diff", default, stripped, "--json").stdout)
    assert got["reflection"]["delta"] < 0 and got["total"]["b"] == stripped.stat().st_size
    named = kiln.diff(kiln.Artifact.read(default), stripped.read_bytes())
    assert (named["a_file"], named["b_file"]) == ("A", "B")
    timed = kiln.diff(default, stripped, benchmark=10)
    assert timed["median_ms"]["a"] > 0 and timed["timing"]["runs"] >= 10


def test_validate_equals_cli(builds):
    default, _ = builds
    folder = DATA / "models" / "alexa"
    got = kiln.validate(default, folder)
    want = json.loads(cli("validate", default, folder, "--json").stdout)
    assert got == want
    assert got["pass"] is True
    assert got["outputs"][0]["cosine"] > 0.9999
    # A model is compiled first, as `kiln validate MODEL DIR` does.
    assert kiln.validate(model_path("alexa"), folder, device="local-task",
                         threads=2)["outputs"] == got["outputs"]
    # Too tight a tolerance: "pass": False, not an exception.
    failed = kiln.validate(default, DATA / "models" / "alexa", atol=0, rtol=0)
    done = cli("validate", default, folder, "--atol=0", "--rtol=0", "--json", check=False)
    assert failed == json.loads(done.stdout)
    assert failed["pass"] is (done.returncode == 0)


def test_benchmark(builds):
    default, _ = builds
    module = kiln.load(default, device="local-task", threads=2)
    stats = module.benchmark(20)
    assert set(stats) == {"median_ms", "min_ms", "max_ms", "runs", "device", "threads"}
    assert stats["runs"] == 20 and stats["device"] == "local-task" and stats["threads"] == 2
    assert 0 < stats["min_ms"] <= stats["median_ms"] <= stats["max_ms"]
    with pytest.raises(ValueError):
        module.benchmark(0)


def test_version():
    assert kiln.version() == kiln.__version__
    assert cli("--version").stdout.splitlines()[0] == f"kiln {kiln.version()}"


def test_targets_are_the_clis():
    # One table (kiln/Targets.h): kiln.targets() lists what --target takes.
    targets = kiln.targets()
    names = [t["name"] for t in targets]
    assert names[0] == "host" and "thumbv6m-none-eabi" in names
    help_text = cli("help", "compile").stdout
    for t in targets:
        assert t["name"] in help_text
        assert t["bare_metal"] == ("-none-" in t["name"])
    m0 = targets[names.index("thumbv6m-none-eabi")]
    assert m0["integer_only"] and m0["cpu"] == "cortex-m0plus" and m0["workgroup_bytes"] == 4096


def test_module_repr_and_threads_default(builds):
    default, _ = builds
    module = kiln.load(default, device="local-task")
    assert module.threads >= 1
    assert "local-task" in repr(module) and "float32[1, 16, 96]" in repr(module)
    assert kiln.load(default).threads == 1


def test_outputs_are_fresh_arrays(builds):
    default, _ = builds
    module = kiln.load(default)
    x = np.ones((1, 16, 96), np.float32)
    a = module(x)[0]
    b = module(x)[0]
    assert a is not b and a.tobytes() == b.tobytes()
    assert a.flags.c_contiguous and a.flags.writeable and a.flags.owndata


def test_help_documents_the_api():
    text = pydoc.render_doc(kiln.compile, renderer=pydoc.plaintext)
    for needle in ("tiles", "fix_shapes", "cpu", "project", "kiln.Error", "TypeError",
                   "--tile", "bytes"):
        assert needle in text, needle
    module_doc = pydoc.render_doc(kiln.Module, renderer=pydoc.plaintext)
    for needle in ("ValueError", "dtype", "shape", "Thread safety", "GIL", "local-task"):
        assert needle in module_doc, needle
    for function in (kiln.load, kiln.inspect, kiln.diff, kiln.validate, kiln.export,
                     kiln.version, kiln.Artifact):
        assert function.__doc__ and len(function.__doc__) > 100, function
