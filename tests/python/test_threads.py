"""One Module called from several Python threads at once: every call returns
its own input's correct outputs (calls on one Module are serialized by its
lock, the documented restriction, and the GIL is released while the model
runs, so other threads and other Modules go on meanwhile)."""

import threading
import time

import numpy as np
import pytest

import kiln
from conftest import MODELS, model_path

THREADS = 8
CALLS = 12


@pytest.fixture(scope="module")
def artifacts():
    return {name: kiln.compile(model_path(name), **recipe)
            for name, (_, recipe) in MODELS.items()}


def seeded_inputs(module, seed):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, t.shape).astype(t.dtype) for t in module.inputs]


def run_threads(target, count):
    errors = []
    start = threading.Barrier(count)

    def body(k):
        try:
            start.wait()
            target(k)
        except BaseException as e:  # reported in the main thread
            errors.append(e)

    threads = [threading.Thread(target=body, args=(k,)) for k in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


@pytest.mark.parametrize("device,threads", [("local-sync", None), ("local-task", 2)])
@pytest.mark.parametrize("name", list(MODELS))
def test_one_module_from_many_threads(name, device, threads, artifacts):
    module = kiln.load(artifacts[name], device=device, threads=threads)
    inputs = [seeded_inputs(module, seed) for seed in range(THREADS * CALLS)]
    expected = [module(*x) for x in inputs]
    # Different inputs give different outputs, so a mixed-up call would show.
    assert not np.array_equal(expected[0][0], expected[1][0])
    got = [None] * len(inputs)

    def work(k):
        for c in range(CALLS):
            i = k * CALLS + c
            got[i] = module(*inputs[i])

    run_threads(work, THREADS)
    for i, (g, e) in enumerate(zip(got, expected)):
        for a, b in zip(g, e):
            assert a.tobytes() == b.tobytes(), f"call {i}"


def test_gil_is_released_while_the_model_runs(artifacts):
    """While one thread runs BlazeFace in a loop, a pure-Python counter in
    another thread keeps counting."""
    module = kiln.load(artifacts["blazeface"])
    x = seeded_inputs(module, 0)
    stop = threading.Event()
    counted = [0]

    def count():
        while not stop.is_set():
            counted[0] += 1

    counter = threading.Thread(target=count)
    counter.start()
    try:
        deadline = time.perf_counter() + 0.5
        calls = 0
        while time.perf_counter() < deadline:
            module(*x)
            calls += 1
    finally:
        stop.set()
        counter.join()
    assert calls > 0
    assert counted[0] > 1000


def test_modules_run_in_parallel_threads(artifacts):
    """One Module per thread, each on its own inputs: all correct."""
    modules = [kiln.load(artifacts["embedding"]) for _ in range(4)]
    inputs = [seeded_inputs(modules[0], seed) for seed in range(4)]
    expected = [modules[0](*x) for x in inputs]
    got = [None] * 4

    def work(k):
        for _ in range(5):
            got[k] = modules[k](*inputs[k])

    run_threads(work, 4)
    for g, e in zip(got, expected):
        assert g[0].tobytes() == e[0].tobytes()


def test_compiles_from_several_threads(artifacts):
    """Compilations from several threads (serialized inside) give the same bytes."""
    results = [None] * 3

    def work(k):
        results[k] = kiln.compile(model_path("alexa")).bytes

    run_threads(work, 3)
    assert results[0] == results[1] == results[2] == artifacts["alexa"].bytes
