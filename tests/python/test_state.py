"""State carried from one call to the next (tests/data/state, made by
tests/reference/make_state_cases.mjs): a kiln.Module keeps a stateful
model's variables in its own arena, so consecutive calls give TFLite 2.9's
outputs of the same consecutive invokes, and reset_state() starts over."""

import numpy as np

import kiln
from conftest import DATA


def _step(case: str, step: int, kind: str):
    folder = DATA / "state" / case
    if step:
        folder = folder / f"step_{step}"
    return [np.load(p) for p in sorted(folder.glob(f"{kind}_*.npy"))]


def test_calls_carry_the_state_and_reset_starts_over():
    module = kiln.load(kiln.compile(str(DATA / "state" / "resource_counter_and_decay" /
                                        "model.tflite")))
    assert module.state_count == 2
    for step in range(3):
        got = module(*_step("resource_counter_and_decay", step, "input"))
        for g, want in zip(got, _step("resource_counter_and_decay", step, "output")):
            np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-5)
    module.reset_state()
    got = module(*_step("resource_counter_and_decay", 0, "input"))
    assert got[0].tolist() == [1.0]  # the counter starts over at 0 + 1


def test_stateless_model_has_no_state():
    module = kiln.load(kiln.compile(str(DATA / "state" / "resource_read_only" / "model.tflite")))
    assert module.state_count == 0
    module.reset_state()  # nothing to reset: no error


def test_inspect_lists_the_state():
    plan = kiln.inspect(str(DATA / "state" / "resource_accumulator" / "model.tflite"))
    assert [v["name"] for v in plan["state"]] == ["acc"]
    assert plan["state"][0]["bytes"] == 16
    assert plan["memory"]["persistent_bytes"] == 64
