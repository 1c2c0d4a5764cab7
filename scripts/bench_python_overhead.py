#!/usr/bin/env python3
"""The cost of running a model from Python (docs/python.md, "Call overhead"):
the median time of `module(x)` over N calls minus the median `kiln run
--benchmark=N` measures for the same artifact and input (the runtime's
kiln_module_invoke alone), in alternating rounds so that other load on the
machine falls on both alike.

    PYTHONPATH=build/python python3 scripts/bench_python_overhead.py
    PYTHONPATH=build/python python3 scripts/bench_python_overhead.py MODEL.tflite \\
        --runs=2000 --rounds=5 --device=local-sync

The model defaults to the wake-word head ($KILN_MODEL_CACHE/alexa.tflite,
~/.cache/kiln/models by default) with tests/data/models/alexa/input_0.npy;
another model runs on seeded random inputs.
"""

import argparse
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import kiln

ROOT = pathlib.Path(__file__).resolve().parents[1]


def main():
    cache = pathlib.Path(os.environ.get("KILN_MODEL_CACHE") or
                         pathlib.Path.home() / ".cache" / "kiln" / "models")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", nargs="?", default=str(cache / "alexa.tflite"))
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--device", default="local-sync")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--kiln", default=str(ROOT / "build" / "bin" / "kiln"))
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        artifact = pathlib.Path(tmp) / "model.kiln"
        kiln.compile(args.model).save(artifact)
        module = kiln.load(artifact, device=args.device, threads=args.threads)
        default_input = ROOT / "tests" / "data" / "models" / "alexa" / "input_0.npy"
        if pathlib.Path(args.model).name == "alexa.tflite" and default_input.exists():
            inputs = [np.load(default_input)]
        else:
            rng = np.random.default_rng(1)
            inputs = [rng.uniform(-1, 1, t.shape).astype(t.dtype) for t in module.inputs]
        input_flags = []
        for k, x in enumerate(inputs):
            np.save(pathlib.Path(tmp) / f"input_{k}.npy", x)
            input_flags.append(f"--input=@{pathlib.Path(tmp) / f'input_{k}.npy'}")
        device_flags = [f"--device={args.device}"]
        if args.device == "local-task":
            device_flags.append(f"--threads={module.threads}")

        clock = time.perf_counter_ns
        timer = []  # the cost of the two clock reads themselves
        for _ in range(args.runs):
            t0 = clock()
            t1 = clock()
            timer.append(t1 - t0)
        timer_us = statistics.median(timer) / 1000

        python_us, cli_us = [], []
        for round_ in range(args.rounds):
            for _ in range(50):  # warm
                module(*inputs)
            times = []
            for _ in range(args.runs):
                t0 = clock()
                module(*inputs)
                t1 = clock()
                times.append(t1 - t0)
            python_us.append(statistics.median(times) / 1000)
            done = subprocess.run([args.kiln, "run", str(artifact), *input_flags, *device_flags,
                                   f"--benchmark={args.runs}"],
                                  capture_output=True, text=True, check=True)
            median = re.search(r"median: ([0-9.]+) ms", done.stdout)
            cli_us.append(float(median.group(1)) * 1000)
            print(f"round {round_ + 1}: module(x) {python_us[-1]:.3f} us, kiln run "
                  f"{cli_us[-1]:.3f} us, overhead {python_us[-1] - cli_us[-1]:.3f} us")

    overheads = [p - c for p, c in zip(python_us, cli_us)]
    print(f"{pathlib.Path(args.model).name} on {module.device}, {module.threads} thread(s), "
          f"{args.runs} calls x {args.rounds} rounds")
    print(f"median module(x): {statistics.median(python_us):.3f} us; median kiln run "
          f"--benchmark: {statistics.median(cli_us):.3f} us")
    print(f"overhead per call: median {statistics.median(overheads):.3f} us "
          f"(rounds {min(overheads):.3f} .. {max(overheads):.3f} us), of which the "
          f"perf_counter_ns pair around each call is {timer_us:.3f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
