"""A full disk raises kiln.Error naming the file and the OS's reason; it never
ends the process (LLVM's fatal "IO failure on output stream" once did) and
never replaces a good file. /dev/full always; a 256 KiB tmpfs when the tests
run as root (skipped, saying so, otherwise)."""

import os
import subprocess

import pytest

import kiln
from conftest import DATA

MODEL = DATA / "ops" / "conv_2d_tile_edges" / "model.tflite"


def test_save_to_dev_full_raises():
    with pytest.raises(kiln.Error, match="/dev/full: cannot write: No space left on device"):
        kiln.compile(MODEL).save("/dev/full")


@pytest.fixture
def small_disk(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "kiln-py-full", str(tmp_path)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip("cannot mount a tmpfs: " + done.stderr.strip())
    yield tmp_path
    subprocess.run(["umount", str(tmp_path)])


def fill(path):
    subprocess.run(["dd", "if=/dev/zero", "of=%s" % (path / "filler"), "bs=4k", "count=1000"],
                   capture_output=True)


def test_full_disk_keeps_the_previous_file_and_raises(small_disk):
    out = small_disk / "x.kiln"
    kiln.compile(MODEL).save(out)
    good = out.read_bytes()
    fill(small_disk)
    with pytest.raises(kiln.Error, match="No space left on device"):
        kiln.compile(MODEL, profile="stripped").save(out)
    assert out.read_bytes() == good
    assert sorted(p.name for p in small_disk.iterdir()) == ["filler", "x.kiln"]
    with pytest.raises(kiln.Error, match="No space left on device"):
        kiln.export(MODEL, out_dir=small_disk / "bundle")
    assert not (small_disk / "bundle").exists()  # no folder left behind
