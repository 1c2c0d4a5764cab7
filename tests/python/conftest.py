"""Shared helpers of the Python package's tests (tests/python/CMakeLists.txt runs
each test_*.py as a CTest entry Python.<name>, after the fetch_models fixture).

Environment (set by CTest; defaults for a run by hand from the repository root,
`PYTHONPATH=build/python python3 -m pytest tests/python`):
  KILN_BINARY         the kiln CLI the package is compared with (build/bin/kiln)
  KILN_MODEL_CACHE    the real models (~/.cache/kiln/models)
  KILN_TEST_DATA_DIR  tests/data (seeded inputs, TFLite reference outputs)
"""

import os
import pathlib
import subprocess
from typing import Dict, List

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
KILN = os.environ.get("KILN_BINARY") or str(ROOT / "build" / "bin" / "kiln")
DATA = pathlib.Path(os.environ.get("KILN_TEST_DATA_DIR") or ROOT / "tests" / "data")
CACHE = pathlib.Path(os.environ.get("KILN_MODEL_CACHE") or
                     pathlib.Path.home() / ".cache" / "kiln" / "models")

# The three real models of RealModel.* (tests/model/RealModelTest.cpp): the
# CLI flags and the same settings as kiln.compile keywords.
MODELS = {
    "alexa": ([], {}),
    "embedding": (["--fix-shape=0=1x76x32x1"], {"fix_shapes": {0: (1, 76, 32, 1)}}),
    "blazeface": ([], {}),
}


def cli(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    """Runs the kiln CLI; with check, fails the test on a non-zero exit."""
    done = subprocess.run([KILN, *map(str, args)], capture_output=True, text=True)
    if check and done.returncode != 0:
        pytest.fail(f"kiln {' '.join(map(str, args))} exited {done.returncode}:\n"
                    f"{done.stdout}{done.stderr}")
    return done


def cli_error(*args: str) -> str:
    """The message of the CLI's `kiln: error: MESSAGE` line (exit status 1 or 2)."""
    done = cli(*args, check=False)
    assert done.returncode in (1, 2), (done.returncode, done.stdout, done.stderr)
    lines = [l for l in done.stderr.splitlines() if l.startswith("kiln: error: ")]
    assert len(lines) == 1, done.stderr
    return lines[0][len("kiln: error: "):]


def model_path(name: str) -> pathlib.Path:
    path = CACHE / f"{name}.tflite"
    if not path.exists():
        pytest.fail(f"{path} is missing: run `node tests/reference/fetch_models.mjs` "
                    "(CTest's fetch_models fixture does this)")
    return path


def numbered(name: str, kind: str) -> List[pathlib.Path]:
    folder = DATA / "models" / name
    files = []
    while (folder / f"{kind}_{len(files)}.npy").exists():
        files.append(folder / f"{kind}_{len(files)}.npy")
    return files


def inputs_of(name: str) -> List[np.ndarray]:
    return [np.load(f) for f in numbered(name, "input")]


def references_of(name: str) -> List[np.ndarray]:
    return [np.load(f) for f in numbered(name, "output")]


def cli_run(artifact: pathlib.Path, inputs: List[pathlib.Path], out_dir: pathlib.Path,
            outputs: int, *flags: str) -> List[np.ndarray]:
    """`kiln run ARTIFACT --input=@... --output=@...` and the outputs it wrote."""
    outs = [out_dir / f"cli_out_{k}.npy" for k in range(outputs)]
    cli("run", artifact, *[f"--input=@{p}" for p in inputs],
        *[f"--output=@{p}" for p in outs], *flags)
    return [np.load(p) for p in outs]


@pytest.fixture(scope="session")
def cli_artifacts(tmp_path_factory) -> Dict[str, pathlib.Path]:
    """Each real model compiled by `kiln compile` with its flags (once per session)."""
    folder = tmp_path_factory.mktemp("cli")
    out = {}
    for name, (flags, _) in MODELS.items():
        out[name] = folder / f"{name}.kiln"
        cli("compile", model_path(name), "-o", out[name], *flags)
    return out
