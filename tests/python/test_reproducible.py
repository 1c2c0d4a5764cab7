"""Reproducible builds: every real model (TFLite float and int8, ONNX),
compiled twice in separate `kiln` processes for every target, gives the same
bytes; and kiln.compile / kiln.inspect in this process give the same bytes
and the same plan as the CLI.

Issue 32 found two ONNX exports of one model 8-36 bytes apart (MLIR 16's
bufferization created globals in a pointer-keyed order; kiln-order-globals
fixes it) and Python picking other int8 kernels than the CLI."""

import json
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

import kiln
from conftest import CACHE, DATA, KILN

INT8 = DATA / "models" / "int8"
# name -> (path, fix-shape flags, integer model)
MODELS = {
    "alexa.tflite": (CACHE / "alexa.tflite", [], False),
    "embedding.tflite": (CACHE / "embedding.tflite", ["--fix-shape=0=1x76x32x1"], False),
    "blazeface.tflite": (CACHE / "blazeface.tflite", [], False),
    "alexa.onnx": (CACHE / "alexa.onnx", [], False),
    "embedding.onnx": (CACHE / "embedding.onnx", ["--fix-shape=0=1x76x32x1"], False),
    "blazeface.onnx": (CACHE / "blazeface.onnx", [], False),
    "ppocr_det.onnx": (CACHE / "ppocr_det.onnx", ["--fix-shape=0=1x3x96x96"], False),
    "person_detect": (INT8 / "person_detect.tflite", [], True),
    "micro_speech": (INT8 / "micro_speech_quantized.tflite", [], True),
    "hello_world": (INT8 / "hello_world_int8.tflite", ["--fix-shape=0=1x1"], True),
}
# target -> extra flags (.kiln on the Linux targets, C modules on Cortex-M)
TARGETS = {
    "host": [],
    "x86_64": ["--target=x86_64-linux-gnu"],
    "aarch64": ["--target=aarch64-linux-gnu"],
    "riscv64": ["--target=riscv64-linux-gnu"],
    "cortex-m4f": ["--target=thumbv7em-none-eabihf", "--output-format=c-module"],
    "cortex-m0plus": ["--target=thumbv6m-none-eabi", "--output-format=c-module"],
}


def builds():
    for model, (path, fixes, integer) in MODELS.items():
        for target, flags in TARGETS.items():
            if target == "cortex-m0plus" and not integer:
                continue  # integer models only (no FPU)
            yield model, target, path, fixes + flags


def compile_once(path, flags, out):
    done = subprocess.run([KILN, "compile", str(path), "-o", str(out)] + flags,
                          capture_output=True, text=True)
    assert done.returncode == 0, f"kiln compile {path} {flags}: {done.stderr}"
    if out.is_dir():
        return {p.name: p.read_bytes() for p in sorted(out.iterdir())}
    return {"": out.read_bytes()}


def test_two_processes_build_the_same_bytes_for_every_target(tmp_path):
    cases = list(builds())

    def run(case):
        model, target, path, flags = case
        suffix = "" if "--output-format=c-module" in flags else ".kiln"
        a = compile_once(path, flags, tmp_path / f"{model}-{target}-a{suffix}")
        b = compile_once(path, flags, tmp_path / f"{model}-{target}-b{suffix}")
        return model, target, a, b

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(run, cases))
    differing = [f"{m} for {t}" for m, t, a, b in results if a != b]
    assert not differing, "builds differ: " + ", ".join(differing)
    assert len(results) == len(cases) == 53  # 7 float models x 5 targets, 3 int8 x 6


@pytest.mark.parametrize("model", sorted(MODELS))
def test_python_builds_what_the_cli_builds(model, tmp_path):
    path, fixes, integer = MODELS[model]
    settings = {}
    if fixes:
        dims = fixes[0].split("=", 2)[2]
        settings["fix_shapes"] = {0: tuple(int(d) for d in dims.split("x"))}
    cli = compile_once(path, fixes, tmp_path / "cli.kiln")[""]
    out = tmp_path / "python.kiln"
    kiln.compile(path, **settings).save(out)
    assert out.read_bytes() == cli, f"{model}: kiln.compile differs from kiln compile"
    done = subprocess.run([KILN, "inspect", str(path), "--json"] + fixes,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert kiln.inspect(path, **settings) == json.loads(done.stdout)
