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
