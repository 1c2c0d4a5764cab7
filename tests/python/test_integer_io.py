"""int8/uint8 inputs and outputs through the Python package: a module takes and returns int8/uint8 arrays, and kiln.validate
compares integer outputs in LSB as `kiln validate --json` does, with
tolerance_lsb= as --tolerance-lsb=. Model: tests/data/mlir/int8_io.mlir
(sum = clamp(a + b, -128, 127) on int8, c_out = c on uint8); the expected
values are computed here by hand."""

import json

import numpy as np
import pytest

import kiln
from conftest import DATA, cli

MODEL = DATA / "mlir" / "int8_io.mlir"
A = np.array([[100, -100, 5], [-5, 127, -128]], np.int8)
B = np.array([[100, -100, 3], [2, 1, -1]], np.int8)
C = np.array([0, 1, 200, 255], np.uint8)
SUM = np.array([[127, -128, 8], [-3, 127, -128]], np.int8)


def test_module_takes_and_returns_integer_arrays():
    module = kiln.load(kiln.compile(MODEL))
    assert [t[2] for t in module.inputs] == [np.dtype("int8")] * 2 + [np.dtype("uint8")]
    total, c_out = module(A, B, C)
    assert total.dtype == np.int8 and c_out.dtype == np.uint8
    np.testing.assert_array_equal(total, SUM)
    np.testing.assert_array_equal(c_out, C)


def test_validate_counts_lsb_like_the_cli(tmp_path):
    for k, array in enumerate((A, B, C)):
        np.save(tmp_path / f"input_{k}.npy", array)
    reference = SUM.copy()
    reference[0, 2] += 2  # 10 for 8: 2 LSB
    np.save(tmp_path / "output_0.npy", reference)
    np.save(tmp_path / "output_1.npy", C)
    exact = kiln.validate(MODEL, tmp_path)
    assert exact == json.loads(cli("validate", MODEL, tmp_path, "--json", check=False).stdout)
    assert exact["pass"] is False
    total = exact["outputs"][0]
    assert total["integer"] is True
    assert total["max_abs_error"] == 2 and total["differing"] == 1
    assert kiln.validate(MODEL, tmp_path, tolerance_lsb=2)["pass"] is True
    with pytest.raises(ValueError, match="tolerance_lsb"):
        kiln.validate(MODEL, tmp_path, tolerance_lsb=-1)
