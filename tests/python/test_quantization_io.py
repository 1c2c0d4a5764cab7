"""Quantization of the inputs and outputs (issue 30, item 13) as TensorFlow
Lite's Interpreter.get_input_details() gives it: TensorInfo.quantization
(scale, zero_point) and TensorInfo.quantization_parameters. Expected values
are person_detect.tflite's own (TensorFlow Lite Micro; `flatc --json` of the
file): input int8 scale 2/255 (0.007843138 as float32), zero point -1;
output int8 scale 1/256, zero point -128. A float model has (0.0, 0) and
empty arrays, as TFLite reports a float tensor."""

import numpy as np
import pytest

import kiln
from conftest import DATA

PERSON_DETECT = DATA / "models" / "int8" / "person_detect.tflite"
IDENTITY = DATA / "quant_twins" / "identity_4x64.onnx"


def test_int8_model_reports_scale_and_zero_point():
    module = kiln.load(kiln.compile(PERSON_DETECT))
    (x,), (y,) = module.inputs, module.outputs
    scale, zero_point = x.quantization
    assert np.float32(scale) == np.float32(2.0 / 255.0)
    assert zero_point == -1
    assert y.quantization == (1.0 / 256.0, -128)
    params = x.quantization_parameters
    assert params["scales"].dtype == np.float32 and params["zero_points"].dtype == np.int32
    np.testing.assert_array_equal(params["scales"], np.array([2.0 / 255.0], np.float32))
    np.testing.assert_array_equal(params["zero_points"], [-1])
    assert params["quantized_dimension"] == 0
    # Still the 3-tuple it was.
    name, shape, dtype = x
    assert (name, shape, dtype) == ("input", (1, 96, 96, 1), np.dtype("int8"))


def test_dequantizing_with_it_gives_the_real_output():
    module = kiln.load(kiln.compile(PERSON_DETECT))
    (y,) = module(np.zeros((1, 96, 96, 1), np.int8))
    scale, zero_point = module.outputs[0].quantization
    probabilities = scale * (y.astype(np.float64) - zero_point)
    # The softmax output sums to 1 within one step per class.
    assert probabilities.sum() == pytest.approx(1.0, abs=2 * scale)


def test_float_model_has_none():
    (x,) = kiln.load(kiln.compile(IDENTITY)).inputs
    assert x.quantization == (0.0, 0)
    assert x.quantization_parameters["scales"].size == 0
    assert x.quantization_parameters["zero_points"].size == 0
    assert x.quantization_parameters["quantized_dimension"] == 0


def test_compare_float_model_and_its_int8_twin_as_the_cli_does():
    """kiln.compare equals `kiln validate --compare-with --json`, and on the
    Gemm classifier and its QDQ twin the float64 reference of
    gemm_meta.json (tests/reference/make_quant_twins.py)."""
    import json

    from conftest import cli

    twins = DATA / "quant_twins"
    meta = json.loads((twins / "gemm_meta.json").read_text())
    got = kiln.compare(twins / "gemm_float.onnx", twins / "gemm_qdq.onnx",
                       samples=meta["samples"], seed=meta["seed"])
    want = json.loads(cli("validate", twins / "gemm_float.onnx",
                          f"--compare-with={twins / 'gemm_qdq.onnx'}",
                          f"--samples={meta['samples']}", "--json").stdout)
    assert got["outputs"] == want["outputs"]
    (y,) = got["outputs"]
    step = meta["output_scale"]
    assert y["max_abs_error"] == pytest.approx(meta["expected"]["max_abs_error"], abs=step)
    assert y["cosine"] == pytest.approx(meta["expected"]["cosine"], abs=1e-4)
    assert y["top1_agreement"] == meta["expected"]["top1_agreement"]
    same = kiln.compare(PERSON_DETECT, PERSON_DETECT, samples=2)
    assert same["outputs"][0]["max_abs_error"] == 0 and same["outputs"][0]["cosine"] == 1
    with pytest.raises(kiln.Error, match="input 0 is 1x96x96x1xi8"):
        kiln.compare(PERSON_DETECT, IDENTITY, samples=1)
