# lit configuration of Kiln's IR tests (core/test): each .mlir file runs
# kiln-opt (app/kiln-opt) on itself and checks the output with FileCheck.
#   ctest --test-dir build -R Lit          # or, for one file:
#   /usr/lib/llvm-16/build/utils/lit/lit.py -v build/core/test --filter hoist
import os

import lit.formats

config.name = 'Kiln'
config.test_format = lit.formats.ShTest(True)
config.suffixes = ['.mlir']
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.kiln_obj_root, 'core', 'test')
config.excludes = ['lit.cfg.py', 'lit.site.cfg.py.in', 'CMakeLists.txt', 'README.md']
# kiln-opt from the build, FileCheck and not from LLVM 16's tools.
config.environment['PATH'] = os.pathsep.join(
    [config.kiln_tools_dir, config.llvm_tools_dir, config.environment.get('PATH', '')])
