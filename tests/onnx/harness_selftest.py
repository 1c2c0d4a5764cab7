#!/usr/bin/python3
"""Checks run_node_tests.py's verdicts with stand-in `kiln` scripts: a clean
refusal, a crash by signal, an unknown exit status, a second stderr line, an
IR dump, an internal error, a timeout; and its output comparison.

    /usr/bin/python3 tests/onnx/harness_selftest.py      (CTest: OnnxNodeHarness)
"""
import os
import stat
import sys
import tempfile
import unittest

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_node_tests as h  # noqa: E402


class Verdicts(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def compile_with(self, body, timeout=30):
        """compile_case's verdict when `kiln` is a shell script running `body`."""
        kiln = os.path.join(self.dir.name, 'kiln')
        with open(kiln, 'w') as f:
            f.write('#!/bin/sh\n' + body + '\n')
        os.chmod(kiln, stat.S_IRWXU)
        return h.compile_case(kiln, os.path.join(self.dir.name, 'model.onnx'),
                              os.path.join(self.dir.name, 'm.kiln'), timeout)

    def test_one_error_line_is_a_refusal(self):
        status, reason = self.compile_with(
            "echo 'kiln: error: model.onnx: node #0 Foo: not supported' >&2; exit 1")
        self.assertEqual(status, 'refused')
        self.assertEqual(reason, 'node #0 Foo: not supported')

    def test_success_builds(self):
        self.assertIsNone(self.compile_with("echo wrote; echo 'kiln: warning: x' >&2; exit 0"))

    def test_signal_is_a_crash(self):
        status, reason = self.compile_with('kill -SEGV $$')
        self.assertEqual(status, 'crash')
        self.assertIn('SIGSEGV', reason)

    def test_other_exit_status_is_a_crash(self):
        status, reason = self.compile_with("echo 'kiln: error: x' >&2; exit 3")
        self.assertEqual((status, 'exit status 3' in reason), ('crash', True))

    def test_two_lines_are_a_crash(self):
        status, _ = self.compile_with("echo 'kiln: error: a' >&2; echo 'more' >&2; exit 1")
        self.assertEqual(status, 'crash')

    def test_ir_dump_is_a_crash(self):
        status, _ = self.compile_with("echo 'kiln: error: a module { func.func' >&2; exit 1")
        self.assertEqual(status, 'crash')
        status, _ = self.compile_with("echo 'module {' >&2; exit 0")
        self.assertEqual(status, 'crash')

    def test_internal_error_is_a_failure(self):
        status, _ = self.compile_with(
            "echo 'kiln: error: m.onnx: internal error: bad IR; please report it' >&2; exit 1")
        self.assertEqual(status, 'fail')

    def test_timeout_raises(self):
        with self.assertRaises(h.subprocess.TimeoutExpired):
            self.compile_with('sleep 5', timeout=0.5)


class Compare(unittest.TestCase):
    def test_float_tolerance_is_relative_to_one_plus_expected(self):
        want = np.array([0.0, 100.0, np.nan, np.inf], np.float32)
        ok = np.array([0.99e-4, 100.0 + 100 * 1e-4, np.nan, np.inf], np.float32)
        self.assertIsNone(h.compare(ok, want, None))
        self.assertIn('1 of 4', h.compare(np.array([2e-4, 100, np.nan, np.inf], np.float32),
                                          want, None))
        self.assertIn('1 of 4', h.compare(np.array([0, 100, 0, np.inf], np.float32), want, None))

    def test_documented_tolerance(self):
        want = np.array([1000.0])
        self.assertIsNone(h.compare(np.array([1000.9]), want, (1e-7, 1e-3)))
        self.assertIsNotNone(h.compare(np.array([1001.1]), want, (1e-7, 1e-3)))

    def test_shape_and_integers(self):
        self.assertIn('shape', h.compare(np.zeros((2, 3)), np.zeros((3, 2)), None))
        self.assertIsNone(h.compare(np.array([1, 2], np.int64), np.array([1, 2], np.int32), None))
        self.assertIsNotNone(h.compare(np.array([1, 3]), np.array([1, 2]), None))
        self.assertIsNone(h.compare(np.array([True, False]), np.array([True, False]), None))


class OutOfReach(unittest.TestCase):
    """describe()'s static-compilable classification, read from the model."""

    def reach(self, nodes, inputs, outputs, inits=()):
        from onnx import helper
        with tempfile.TemporaryDirectory() as d:
            graph = helper.make_graph(nodes, 'g', inputs, outputs, list(inits))
            h.onnx.save(helper.make_model(graph), os.path.join(d, 'model.onnx'))
            os.mkdir(os.path.join(d, 'test_data_set_0'))
            return h.describe(d)['reach']

    def test_classes(self):
        from onnx import TensorProto as T, helper
        f = helper.make_tensor_value_info
        node = helper.make_node
        self.assertIsNone(self.reach([node('Relu', ['x'], ['y'])], [f('x', T.FLOAT, [2])],
                                     [f('y', T.FLOAT, [2])]))
        self.assertIsNone(self.reach([node('Abs', ['x'], ['y'])], [f('x', T.INT64, [2])],
                                     [f('y', T.INT64, [2])]))
        self.assertEqual(self.reach([node('Relu', ['x'], ['y'])], [f('x', T.DOUBLE, [2])],
                                    [f('y', T.DOUBLE, [2])]), 'element type')
        self.assertEqual(self.reach([node('Relu', ['x'], ['y'])], [f('x', T.FLOAT, [0, 2])],
                                    [f('y', T.FLOAT, [0, 2])]), 'zero-size')
        self.assertEqual(self.reach([node('NonZero', ['x'], ['y'])], [f('x', T.FLOAT, [2])],
                                    [f('y', T.INT64, [1, None])]), 'data-dependent shape')
        self.assertEqual(self.reach([node('Bernoulli', ['x'], ['y'])], [f('x', T.FLOAT, [2])],
                                    [f('y', T.FLOAT, [2])]), 'random')
        seq = [node('SequenceConstruct', ['x'], ['s']), node('ConcatFromSequence', ['s'], ['y'],
                                                              axis=0)]
        self.assertEqual(self.reach(seq, [f('x', T.FLOAT, [2])], [f('y', T.FLOAT, [2])]),
                         'non-tensor')
        bn = node('BatchNormalization', ['x', 's', 'b', 'm', 'v'], ['y'], training_mode=1)
        self.assertEqual(self.reach([bn], [f(n, T.FLOAT, [2]) for n in 'xsbmv'],
                                    [f('y', T.FLOAT, [2])]), 'training')
        # An empty shape input (ReduceSum's axes []) is frozen, not zero-size.
        rs = node('ReduceSum', ['x', 'a'], ['y'])
        self.assertIsNone(self.reach([rs], [f('x', T.FLOAT, [2]), f('a', T.INT64, [0])],
                                     [f('y', T.FLOAT, [1])]))


if __name__ == '__main__':
    unittest.main()
