"""Build settings from Python are the CLI's flags: an artifact compiled with
tiles= and fix_shapes= (and the other keywords) equals `kiln compile` with the
same flags byte for byte, and a .kilnproj build of the same recipe."""

import json

import pytest

import kiln
from conftest import cli, model_path

EMBEDDING_SHAPE = (1, 76, 32, 1)


def tuned_tile(plan):
    """A dispatch id and tile sizes other than the compiler's choice that the
    tiler accepts: one split parallel loop of the first dispatch that has one,
    halved (or doubled back to its range)."""
    for d in plan["dispatches"]:
        for k, (size, extent, kind) in enumerate(zip(d["tile_sizes"], d["loop_ranges"],
                                                     d["loop_kinds"])):
            if kind == "parallel" and size > 0 and extent >= 4:
                sizes = list(d["tile_sizes"])
                sizes[k] = size // 2 if size >= 2 else 2
                return d["id"], sizes
    pytest.fail("no dispatch with a split parallel loop")


@pytest.fixture(scope="module")
def embedding_tile():
    plan = kiln.inspect(model_path("embedding"), fix_shapes={0: EMBEDDING_SHAPE})
    return tuned_tile(plan)


def test_tiles_and_fix_shapes_equal_cli_and_project(embedding_tile, tmp_path):
    dispatch, sizes = embedding_tile
    model = model_path("embedding")
    got = kiln.compile(model, fix_shapes={"serving_default_input_1:0": EMBEDDING_SHAPE},
                       tiles={dispatch: sizes})
    tile_flag = f"--tile={dispatch}=" + ",".join(map(str, sizes))
    cli("compile", model, "-o", tmp_path / "cli.kiln",
        "--fix-shape=serving_default_input_1:0=1x76x32x1", tile_flag)
    assert got.bytes == (tmp_path / "cli.kiln").read_bytes()
    # The tile took effect: the plan records it, and the default build differs.
    tiled = {d["id"]: d["tile_sizes"] for d in got.plan["dispatches"]}
    assert tiled[dispatch] == sizes
    default = kiln.compile(model, fix_shapes={0: EMBEDDING_SHAPE})
    assert default.bytes != got.bytes

    # The same recipe as a project: kiln compile --project and
    # kiln.compile(project=) build the same bytes.
    project = tmp_path / "embedding.kilnproj"
    project.write_text(json.dumps({
        "kiln_project": 1,
        "model": str(model),
        "tiles": {str(dispatch): sizes},
        "fixed_shapes": {"serving_default_input_1:0": list(EMBEDDING_SHAPE)},
    }))
    cli("compile", f"--project={project}", "-o", tmp_path / "project.kiln")
    assert (tmp_path / "project.kiln").read_bytes() == got.bytes
    assert kiln.compile(project=project).bytes == got.bytes
    assert kiln.inspect(project=project)["dispatches"] == \
        kiln.inspect(model, fix_shapes={0: EMBEDDING_SHAPE}, tiles={dispatch: sizes})[
            "dispatches"]


@pytest.mark.parametrize("recipe,flags", [
    ({"cpu": "x86-64-v3", "profile": "stripped"},
     ["--target-cpu=x86-64-v3", "--profile=stripped"]),
    ({"fusion": False}, ["--fusion=false"]),
    ({"no_fusion": [1, 2], "reflection": False, "debug_symbols": True},
     ["--no-fusion=1", "--no-fusion=2", "--reflection=false", "--debug-symbols=true"]),
    ({"target": "aarch64-linux-gnu", "features": "+neon"},
     ["--target=aarch64-linux-gnu", "--target-cpu-features=+neon"]),
])
def test_keywords_are_the_cli_flags(recipe, flags, tmp_path):
    model = model_path("alexa")
    cli("compile", model, "-o", tmp_path / "cli.kiln", *flags)
    assert kiln.compile(model, **recipe).bytes == (tmp_path / "cli.kiln").read_bytes()


def test_c_module_equals_cli(tmp_path):
    model = model_path("alexa")
    artifact = kiln.compile(model, target="thumbv7em-none-eabihf", output_format="c-module",
                            profile="stripped", module_name="wake")
    cli("compile", model, "--target=thumbv7em-none-eabihf", "--output-format=c-module",
        "--profile=stripped", "--module-name=wake", "-o", tmp_path / "cli")
    assert artifact.format == "c-module"
    assert sorted(artifact.files) == sorted(p.name for p in (tmp_path / "cli").iterdir())
    for name, data in artifact.files.items():
        assert data == (tmp_path / "cli" / name).read_bytes(), name
    artifact.save(tmp_path / "py")
    for name, data in artifact.files.items():
        assert (tmp_path / "py" / name).read_bytes() == data
    # Its plan is `kiln inspect MODEL --json` of the same build's plan.
    assert artifact.plan["dispatches"] == kiln.inspect(
        model, target="thumbv7em-none-eabihf", output_format="c-module",
        profile="stripped", module_name="wake")["dispatches"]
    with pytest.raises(kiln.Error, match="C module"):
        artifact.bytes


def test_export_equals_cli(tmp_path):
    model = model_path("alexa")
    result = kiln.export(model, target="aarch64-linux-gnu", profile="stripped",
                         out_dir=tmp_path / "py", ram_budget="1M", fusion=False)
    cli("export", model, "--target=aarch64-linux-gnu", "--profile=stripped",
        "--ram-budget=1M", "--fusion=false", "-o", tmp_path / "cli")
    names = sorted(p.name for p in (tmp_path / "cli").iterdir())
    assert sorted(result["files"]) == names
    for name in names:
        assert (tmp_path / "py" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes()
    assert result["dir"] == str(tmp_path / "py")
    assert result["manifest"] == json.loads((tmp_path / "cli" / "manifest.json").read_text())
    assert result["command"].startswith("kiln export")
    assert [b["memory"] for b in result["budgets"]] == ["RAM"]
    assert not result["budgets"][0]["exceeded"]


def test_export_with_a_kit_equals_cli(tmp_path):
    """kit=True writes the Cortex-M firmware kit `kiln export --kit` writes."""
    model = model_path("alexa")
    result = kiln.export(model, target="thumbv7em-none-eabihf", output_format="c-module",
                         out_dir=tmp_path / "py", kit=True)
    cli("export", model, "--target=thumbv7em-none-eabihf", "--output-format=c-module", "--kit",
        "-o", tmp_path / "cli")
    names = sorted(p.name for p in (tmp_path / "cli").iterdir())
    assert sorted(result["files"]) == names
    for name in ("main.c", "startup.c", "kit_buffers.c", "alexa.ld", "Makefile"):
        assert name in names
    for name in names:
        assert (tmp_path / "py" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes()
    assert result["manifest"]["kit"]["board"] == "mps2-an386"
    assert " --kit" in result["command"]
    with pytest.raises(TypeError, match="kit= takes True or False"):
        kiln.export(model, out_dir=tmp_path / "bad", kit="yes")


def test_export_budget_exceeded_warns(tmp_path):
    with pytest.warns(kiln.BuildWarning, match="exceeds the budget"):
        result = kiln.export(model_path("alexa"), out_dir=tmp_path, ram_budget=16)
    assert result["budgets"][0]["exceeded"]


def test_fix_shape_of_a_static_input_warns():
    with pytest.warns(kiln.BuildWarning, match="changes nothing"):
        artifact = kiln.compile(model_path("alexa"), fix_shapes={0: (1, 16, 96)})
    assert artifact.warnings
