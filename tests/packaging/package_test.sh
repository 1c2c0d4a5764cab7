#!/usr/bin/env bash
# Builds the .deb with CPack, unpacks it into a temporary root and runs the
# installed tools: `kiln --version`, a compile of a TOSA model and of a real
# model, a firmware kit (kiln export --kit) for this machine built and run,
# builds examples/c against the installed runtime through its
# kiln-runtime.pc and runs it, imports the installed Python package and runs
# a model with it, and checks the package's file list and dependencies.
#   package_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/out" > "$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log"; exit 1; }
deb=$(ls "$work"/out/kiln_*.deb)
echo "package: $(basename "$deb") ($(stat -c %s "$deb") bytes)"
dpkg-deb -x "$deb" "$work/root"
for f in usr/bin/kiln usr/bin/kiln-workbench usr/include/kiln/runtime.h \
         usr/share/applications/kiln-workbench.desktop \
         usr/share/icons/hicolor/scalable/apps/kiln-workbench.svg \
         usr/share/mime/packages/kiln.xml; do
  [ -e "$work/root/$f" ] || { echo "missing /$f"; exit 1; }
done
ls "$work"/root/usr/lib/*/libkiln_runtime.a > /dev/null || { echo "missing libkiln_runtime.a"; exit 1; }
pc=$(ls "$work"/root/usr/lib/*/pkgconfig/kiln-runtime.pc 2> /dev/null || true)
[ -f "$pc" ] || { echo "missing kiln-runtime.pc"; exit 1; }
pcdir=$(dirname "$pc")
# The .pc file finds its prefix from its own folder: the example links
# against the unpacked package with plain cc (no C++ runtime library).
PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs kiln-runtime > "$work/pc.txt" ||
  { cat "$work/pc.txt"; exit 1; }
cc -std=c99 -O2 "$src/examples/c/run_model.c" $(cat "$work/pc.txt") -o "$work/run_model" ||
  { echo "examples/c/run_model.c does not build with $(cat "$work/pc.txt")"; exit 1; }
for glob in '*.kiln' '*.tflite' '*.onnx' '*.kilnproj'; do
  grep -qF "pattern=\"$glob\"" "$work/root/usr/share/mime/packages/kiln.xml" ||
    { echo "no MIME type for $glob"; exit 1; }
done
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
for lib in libllvm16 libmlir-16 libqt6widgets6 libqcustomplot; do
  case "$depends" in *"$lib"*) ;; *) echo "Depends lacks $lib"; exit 1 ;; esac
done
kiln="$work/root/usr/bin/kiln"
"$kiln" --version | grep -q "^kiln " || { echo "kiln --version failed"; exit 1; }
# Without a display the workbench answers --version offscreen.
env -u DISPLAY -u WAYLAND_DISPLAY -u QT_QPA_PLATFORM XDG_RUNTIME_DIR="$work" \
  "$work/root/usr/bin/kiln-workbench" --version 2>/dev/null | grep -q "^kiln-workbench " ||
  { echo "kiln-workbench --version failed"; exit 1; }
"$kiln" compile "$src/tests/data/mlir/add_scale.mlir" -o "$work/add.kiln"
[ -s "$work/add.kiln" ] || { echo "no artifact"; exit 1; }
"$kiln" inspect "$work/add.kiln" --sizes > /dev/null
printed=$("$work/run_model" "$work/add.kiln" 3 -5)
case "$printed" in *"output 0 'sum' values: -1 -1 -1 -1 -1 -1"*) ;;
  *) echo "the example built against the package printed:"; echo "$printed"; exit 1 ;; esac
echo "installed kiln compiled add_scale.mlir into $(stat -c %s "$work/add.kiln") bytes"
# The firmware kits' runtime archives, one folder per target the build made
# (build/lib/kiln/TARGET), and a kit of the installed kiln for this machine
# that finds its archive in ../lib/kiln beside /usr/bin and runs.
for dir in "$build"/lib/kiln/*/; do
  [ -d "$dir" ] || continue
  target=$(basename "$dir")
  [ -s "$work/root/usr/lib/kiln/$target/libkiln_runtime.a" ] ||
    { echo "missing /usr/lib/kiln/$target/libkiln_runtime.a"; exit 1; }
done
"$kiln" export "$src/tests/data/mlir/add_scale.mlir" --target=host --kit -o "$work/kit" > /dev/null
printed=$(make -s -C "$work/kit" run)
case "$printed" in *"kiln-output 0 24 "*"kiln-done"*) ;;
  *) echo "the installed kiln's host kit printed:"; echo "$printed"; exit 1 ;; esac
echo "installed kiln exported a host kit that ran: $(ls "$work/root/usr/lib/kiln" | tr '\n' ' ')"
# The Python package, when this build has it (python3-dev, pybind11-dev and
# python3-numpy installed): in Debian's dist-packages, importable from the
# unpacked tree, compiling and running the same model.
if [ -d "$build/python/kiln" ]; then
  site="$work/root/usr/lib/python3/dist-packages"
  [ -f "$site/kiln/__init__.py" ] && ls "$site"/kiln/_kiln.*.so > /dev/null ||
    { echo "missing the Python package in /usr/lib/python3/dist-packages/kiln"; exit 1; }
  case "$depends" in *python3-numpy*) ;; *) echo "Depends lacks python3-numpy"; exit 1 ;; esac
  add_model="$(cd "$src" && pwd)/tests/data/mlir/add_scale.mlir"
  printed=$(cd "$work" && PYTHONPATH="$site" /usr/bin/python3 -c '
import sys, numpy as np, kiln
assert kiln.__file__.startswith(sys.argv[1]), kiln.__file__
artifact = kiln.compile(sys.argv[2])
(out,) = kiln.load(artifact)(np.full((2, 3), 3, np.float32), np.full((2, 3), -5, np.float32))
print("python", kiln.version(), out.ravel().tolist())
' "$site" "$add_model") ||
    { echo "the packaged kiln module failed"; exit 1; }
  version=$("$kiln" --version | head -1 | cut -d' ' -f2)
  case "$printed" in "python $version [-1.0, -1.0, -1.0, -1.0, -1.0, -1.0]") ;;
    *) echo "the packaged Python module printed: $printed"; exit 1 ;; esac
  echo "installed Python package ran add_scale.mlir"
fi
