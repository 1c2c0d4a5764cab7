#!/usr/bin/env python3
"""Checks a deployment artifact against reference outputs, as a model engineer
does before shipping: compile a TFLite model with Kiln, load the artifact on
the thread-pool device, run it on recorded inputs and compare every output with
the reference framework's (max |error|, RMSE, cosine similarity).

    PYTHONPATH=build/python python3 examples/python/verify.py \\
        ~/.cache/kiln/models/alexa.tflite \\
        --input tests/data/models/alexa/input_0.npy \\
        --reference tests/data/models/alexa/output_0.npy

Inputs and references are .npy files in signature order (one --input per
model input, one --reference per output). Build settings: --fix-shape
NAME=1x76x32x1 for a dynamic input, --cpu, --profile; --save writes the
artifact that was checked. Exit status 0 when every element is within
--atol + --rtol x |reference|, 3 when not, 1 on an error (kiln.Error).
"""

import argparse
import sys

import numpy as np

import kiln


def parse_shape(text):
    name, _, dims = text.rpartition("=")
    if not name or not dims:
        raise argparse.ArgumentTypeError(f"expected NAME=D0xD1x..., got {text!r}")
    return (int(name) if name.isdigit() else name), tuple(int(d) for d in dims.split("x"))


def compare(got, ref):
    """max |got - ref|, RMSE and cosine similarity, in float64."""
    g = got.astype(np.float64).ravel()
    r = ref.astype(np.float64).ravel()
    err = g - r
    norms = np.linalg.norm(g) * np.linalg.norm(r)
    cosine = float(g @ r / norms) if norms > 0 else (1.0 if not g.any() and not r.any() else 0.0)
    return float(np.max(np.abs(err))), float(np.sqrt(np.mean(err * err))), cosine


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help=".tflite model")
    parser.add_argument("--input", action="append", default=[], help="input .npy (repeat)")
    parser.add_argument("--reference", action="append", default=[],
                        help="reference output .npy (repeat)")
    parser.add_argument("--fix-shape", action="append", default=[], type=parse_shape,
                        help="NAME=D0xD1x... for an input with dynamic dimensions")
    parser.add_argument("--cpu", default=None, help="LLVM CPU, e.g. x86-64-v3 or host")
    parser.add_argument("--profile", default=None, help="default or stripped")
    parser.add_argument("--threads", type=int, default=None,
                        help="local-task threads (default: every CPU)")
    parser.add_argument("--atol", type=float, default=1e-4)
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--save", default=None, help="write the artifact checked here")
    args = parser.parse_args()

    try:
        artifact = kiln.compile(args.model, cpu=args.cpu, profile=args.profile,
                                fix_shapes=dict(args.fix_shape) or None)
        if args.save:
            artifact.save(args.save)
        info = artifact.plan["artifact"]
        print(f"compiled {args.model}: {len(artifact)} bytes, {info['command_count']} commands "
              f"in {info['wave_count']} waves, arena {info['arena_bytes']} bytes, "
              f"{info['target_triple']} {info['target_cpu']}, profile {info['profile']}")

        module = kiln.load(artifact, device="local-task", threads=args.threads)
        print(f"loaded on {module.device} with {module.threads} thread(s)")
        inputs = [np.load(path) for path in args.input]
        references = [np.load(path) for path in args.reference]
        if len(references) != len(module.outputs):
            print(f"error: the model has {len(module.outputs)} output(s), "
                  f"{len(references)} --reference given", file=sys.stderr)
            return 1
        outputs = module(*inputs)
    except (kiln.Error, ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1

    passed = True
    for k, (info, got, ref) in enumerate(zip(module.outputs, outputs, references)):
        if got.shape != ref.shape:
            print(f"output {k} '{info.name}': shape {got.shape}, reference {ref.shape}")
            passed = False
            continue
        max_error, rmse, cosine = compare(got, ref)
        outside = int(np.count_nonzero(
            np.abs(got.astype(np.float64) - ref) > args.atol + args.rtol * np.abs(ref)))
        passed = passed and outside == 0
        print(f"output {k} '{info.name}' {info.shape} {info.dtype}: max |error| {max_error:.3e}"
              f"  RMSE {rmse:.3e}  cosine {cosine:.8f}  outside tolerance {outside}")
    stats = module.benchmark(100)
    print(f"latency: median {stats['median_ms']:.4f} ms (min {stats['min_ms']:.4f}, "
          f"max {stats['max_ms']:.4f}, {stats['runs']} runs)")
    print(("PASS" if passed else "FAIL") +
          f": every element within {args.atol:g} + {args.rtol:g} x |reference|" +
          ("" if passed else " does not hold"))
    return 0 if passed else 3


if __name__ == "__main__":
    sys.exit(main())
