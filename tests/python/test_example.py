"""examples/python/verify.py (the README's example) on the real models: it
compiles, runs on local-task and reports the metrics; exit status 0 when the
outputs match TensorFlow Lite's, 3 when they do not."""

import os
import re
import subprocess
import sys

import numpy as np
import pytest

from conftest import DATA, ROOT, model_path, numbered

SCRIPT = ROOT / "examples" / "python" / "verify.py"


def verify(name, *extra, references=None):
    args = [sys.executable, str(SCRIPT), str(model_path(name))]
    args += [f"--input={p}" for p in numbered(name, "input")]
    args += [f"--reference={p}" for p in (references or numbered(name, "output"))]
    return subprocess.run(args + list(extra), capture_output=True, text=True, env=os.environ)


@pytest.mark.parametrize("name,extra", [
    ("alexa", []),
    ("embedding", ["--fix-shape=serving_default_input_1:0=1x76x32x1"]),
    ("blazeface", ["--threads=2"]),
])
def test_verify_passes(name, extra, tmp_path):
    done = verify(name, *extra, "--save", str(tmp_path / "checked.kiln"))
    assert done.returncode == 0, done.stdout + done.stderr
    rows = re.findall(r"max \|error\| (\S+)  RMSE (\S+)  cosine (\S+)  outside tolerance 0",
                      done.stdout)
    assert len(rows) == len(numbered(name, "output")), done.stdout
    for max_error, rmse, cosine in rows:
        assert float(max_error) < 1e-3 and float(rmse) < 1e-3 and float(cosine) > 0.9999
    assert "local-task" in done.stdout and done.stdout.rstrip().splitlines()[-1].startswith("PASS")
    assert (tmp_path / "checked.kiln").stat().st_size > 0


def test_verify_fails_on_a_wrong_reference(tmp_path):
    wrong = tmp_path / "output_0.npy"
    np.save(wrong, np.load(DATA / "models" / "alexa" / "output_0.npy") + 0.5)
    done = verify("alexa", references=[wrong])
    assert done.returncode == 3, done.stdout + done.stderr
    assert "FAIL" in done.stdout


def test_verify_reports_errors(tmp_path):
    # A dynamic batch that records no size (shape [-1,8]) needs --fix-shape.
    model = DATA / "bad" / "dynamic_batch.tflite"
    done = subprocess.run([sys.executable, str(SCRIPT), str(model)], capture_output=True, text=True,
                          env=os.environ)
    assert done.returncode == 1
    assert done.stderr.startswith("error: ") and "--fix-shape" in done.stderr
