"""The three real TFLite models (RealModel.*) compiled and run from Python: the
artifact equals `kiln compile`'s byte for byte, outputs are bit-identical to
`kiln run` on the same artifact and inputs (local-sync and local-task), and
Artifact.plan / .sections are `kiln inspect --json` / `--sizes --json`."""

import json

import numpy as np
import pytest

import kiln
from conftest import MODELS, cli, cli_run, inputs_of, model_path, numbered, references_of


def assert_bit_identical(got, want):
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype and g.shape == w.shape, (k, g.dtype, g.shape, w.dtype, w.shape)
        assert g.tobytes() == w.tobytes(), f"output {k} differs from kiln run's"


@pytest.mark.parametrize("name", list(MODELS))
def test_compile_equals_cli(name, cli_artifacts):
    flags, recipe = MODELS[name]
    artifact = kiln.compile(model_path(name), **recipe)
    assert artifact.bytes == cli_artifacts[name].read_bytes()
    # The model given as bytes compiles to the same code (its source name is
    # the temporary model.tflite, so only the artifact's size is compared).
    from_bytes = kiln.compile(model_path(name).read_bytes(), **recipe)
    assert from_bytes.plan["schedule"] == artifact.plan["schedule"]


@pytest.mark.parametrize("device,threads", [("local-sync", None), ("local-task", 3)])
@pytest.mark.parametrize("name", list(MODELS))
def test_outputs_bit_identical_to_kiln_run(name, device, threads, cli_artifacts, tmp_path):
    path = cli_artifacts[name]
    refs = references_of(name)
    want = cli_run(path, numbered(name, "input"), tmp_path, len(refs))
    module = kiln.load(path, device=device, threads=threads)
    got = module(*inputs_of(name))
    assert isinstance(got, tuple)
    assert_bit_identical(got, want)
    # Against TensorFlow Lite's outputs, RealModel.*'s tolerance.
    for g, r in zip(got, refs):
        assert np.all(np.abs(g - r) <= 1e-4 * (1 + np.abs(r)))
    # By name, from an Artifact, from bytes: the same outputs.
    named = {t.name: x for t, x in zip(module.inputs, inputs_of(name))}
    assert_bit_identical(module(**named), want)
    assert_bit_identical(kiln.load(kiln.Artifact(path.read_bytes()))(*inputs_of(name)), want)


@pytest.mark.parametrize("name", list(MODELS))
def test_signature_matches_the_artifact(name, cli_artifacts):
    module = kiln.load(cli_artifacts[name])
    described = json.loads(cli("inspect", cli_artifacts[name], "--json").stdout)["artifact"]
    for infos, rows in ((module.inputs, described["inputs"]),
                        (module.outputs, described["outputs"])):
        assert [t.name for t in infos] == [r["name"] for r in rows]
        assert [list(t.shape) for t in infos] == [r["shape"] for r in rows]
        assert all(t.dtype == np.float32 for t in infos)
        assert all(isinstance(t.shape, tuple) for t in infos)
    assert module.device == "local-sync" and module.threads == 1
    assert module.arena_bytes == described["arena_bytes"]


@pytest.mark.parametrize("name", list(MODELS))
def test_inputs_not_contiguous_give_the_same_outputs(name, cli_artifacts):
    module = kiln.load(cli_artifacts[name])
    xs = inputs_of(name)
    want = module(*xs)
    # Fortran order and a strided view of a bigger array: copied once.
    fortran = [np.asfortranarray(x) for x in xs]
    strided = []
    for x in xs:
        big = np.zeros(x.shape + (2,), x.dtype)
        big[..., 0] = x
        strided.append(big[..., 0])
        assert not strided[-1].flags.c_contiguous
    assert_bit_identical(module(*fortran), want)
    assert_bit_identical(module(*strided), want)
    # Inputs are not modified.
    assert all(np.array_equal(a, b) for a, b in zip(xs, inputs_of(name)))


@pytest.mark.parametrize("profile", ["default", "stripped"])
@pytest.mark.parametrize("name", list(MODELS))
def test_plan_and_sections_equal_kiln_inspect(name, profile, tmp_path):
    flags, recipe = MODELS[name]
    artifact = kiln.compile(model_path(name), profile=profile, **recipe)
    path = tmp_path / f"{name}.kiln"
    artifact.save(path)
    assert path.read_bytes() == artifact.bytes
    assert artifact.plan == json.loads(cli("inspect", path, "--json").stdout)
    assert kiln.inspect(path) == artifact.plan
    assert kiln.inspect(artifact) == artifact.plan
    if profile == "stripped":
        assert artifact.plan["plan"] is None and "reflection" in artifact.plan["plan_missing"]
    else:
        assert artifact.plan["dispatches"] and artifact.plan["artifact"]["reflection"]
    sizes = json.loads(cli("inspect", path, "--sizes", "--json").stdout)
    assert artifact.sections == sizes["sections"]
    # In the file's section order (JSON objects print their keys sorted).
    assert list(artifact.sections)[0] == "constants"
    assert artifact.overhead_bytes == sizes["overhead_bytes"]
    assert sum(artifact.sections.values()) + artifact.overhead_bytes == len(artifact.bytes)
