"""Run each example as a subprocess, small and quick: exit status 0 and an OK check line."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def run_example(name, *args, timeout=120):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return subprocess.run([sys.executable, str(EXAMPLES / name), *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def check_line(stdout):
    lines = [line for line in stdout.splitlines() if line.startswith("check:")]
    assert len(lines) == 1, f"expected one 'check:' line in:\n{stdout}"
    return lines[0]


@pytest.mark.parametrize("steps,snapshots", [(40, 4), (7, 10), (1, 1)])
def test_rnn_example(steps, snapshots):
    proc = run_example("rnn.py", "--steps", str(steps), "--snapshots", str(snapshots),
                       "--batch", "4", "--hidden", "8")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert check_line(proc.stdout).startswith("check: OK"), proc.stdout


def test_rnn_example_default_size_short_loop():
    """The demo's real shapes (32, 256), a short loop."""
    proc = run_example("rnn.py", "--steps", "30", "--snapshots", "3")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert check_line(proc.stdout).startswith("check: OK"), proc.stdout
    assert "max relative difference" in proc.stdout
    assert "revolve_cost(30, 3)" in proc.stdout


def test_rnn_example_prints_source():
    proc = run_example("rnn.py", "--steps", "5", "--snapshots", "2", "--batch", "2",
                       "--hidden", "3", "--source")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "CheckpointedLoop(" in proc.stdout
    assert "def dloss(" in proc.stdout


def test_rnn_example_main_is_importable():
    """`tangent-ckpt demo` calls examples.rnn.main(argv)."""
    sys.path.insert(0, str(ROOT))
    try:
        from examples import rnn
    finally:
        sys.path.remove(str(ROOT))
    assert callable(rnn.main)
    assert rnn.main(["--steps", "3", "--snapshots", "2", "--batch", "2", "--hidden", "3",
                     "--fd-checks", "2"]) == 0


def test_rnn_example_bad_arguments():
    proc = run_example("rnn.py", "--steps", "0")
    assert proc.returncode == 2
    assert "--steps" in proc.stderr
