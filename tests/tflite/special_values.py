#!/usr/bin/python3
"""IEEE special values through TFLite float operators: Kiln against the rows
of tests/data/special (written by tests/reference/make_special_cases.mjs,
which runs both TFLite engines and an independent evaluation on each).

    tests/tflite/special_values.py [--kiln build/bin/kiln] [--filter REGEX]
        [-- extra kiln flags, e.g. --check-bounds]

Each folder holds model.tflite, input_K.npy and the stored reference
output_0.npy: TFLite's builtin kernels where they follow IEEE 754, the
independent evaluation where they do not (meta.json "engines" gives the
builtin, XNNPACK and independent values side by side and the reason). A
NaN must come out NaN (any payload), an infinity the same infinity, a zero
a zero (its sign is not compared), anything else within
1e-5 x (1 + |expected|).

Prints one line per row and 'N passed, M failed'; exit status 1 if any
failed or if the folder holds no rows.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
# The one comparison rule of both special-value tables.
sys.path.insert(0, os.path.join(HERE, '..', 'onnx'))
from special_values import compare  # noqa: E402
DEFAULT_KILN = os.path.normpath(os.path.join(HERE, '../../build/bin/kiln'))
DATA = os.path.normpath(os.path.join(HERE, '../data/special'))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--kiln', default=DEFAULT_KILN)
    parser.add_argument('--data', default=DATA)
    parser.add_argument('--filter', default='')
    parser.add_argument('flags', nargs='*', help='extra flags for kiln run')
    args = parser.parse_args()
    with open(os.path.join(args.data, 'index.json')) as f:
        rows = [r['name'] for r in json.load(f) if re.search(args.filter, r['name'])]
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in rows:
            folder = os.path.join(args.data, name)
            inputs = sorted(f for f in os.listdir(folder) if re.fullmatch(r'input_\d+\.npy', f))
            out = os.path.join(tmp, 'y.npy')
            cmd = [args.kiln, 'run', os.path.join(folder, 'model.tflite'), '--output=@' + out]
            cmd += ['--input=@' + os.path.join(folder, f) for f in inputs] + args.flags
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            verdict = ('kiln run exited %d: %s' % (r.returncode, (r.stderr or r.stdout).strip())
                       if r.returncode else
                       compare(np.load(out), np.load(os.path.join(folder, 'output_0.npy'))))
            print(('PASS ' if not verdict else 'FAIL ') + name + ('' if not verdict else ': ' + verdict))
            passed += not verdict
            failed += bool(verdict)
    print('%d passed, %d failed' % (passed, failed))
    return 1 if failed or not passed else 0


if __name__ == '__main__':
    sys.exit(main())
