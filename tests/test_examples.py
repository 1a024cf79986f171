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


# ------------------------------------------------------------------ the other examples

SMALL = {
    "lstm.py": ["--steps", "12", "--batch", "2", "--inputs", "3", "--hidden", "4",
                "--snapshots", "3"],
    "heat_equation.py": ["--cells", "12", "--steps", "40", "--snapshots", "4"],
    "lorenz96.py": ["--dim", "6", "--steps", "30", "--snapshots", "4"],
    "nbody.py": ["--bodies", "4", "--steps", "20", "--snapshots", "3"],
    "building_energy.py": ["--hours", "30", "--zones", "2", "--snapshots", "4"],
    "optimize.py": ["--hours", "12", "--zones", "2", "--snapshots", "3", "--maxiter", "50"],
}


def _needs_optional_dependency(name):
    """optimize.py drives SciPy, an optional extra: without it the example says
    SKIPPED (tested by test_scipy_examples_without_scipy_skip)."""
    if name == "optimize.py":
        pytest.importorskip("scipy")


@pytest.mark.parametrize("name", sorted(SMALL))
def test_example_runs_small(name):
    _needs_optional_dependency(name)
    proc = run_example(name, *SMALL[name])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    line = check_line(proc.stdout)
    assert line.startswith("check: OK"), proc.stdout
    assert "finite differences" in proc.stdout
    assert "peak memory of the gradient call" in proc.stdout
    # equal up to the order of floating-point sums (rt.ProductSum gathers steps)
    diff = float(proc.stdout.split("max relative difference ")[1].split()[0])
    assert diff <= 1e-12, proc.stdout


@pytest.mark.parametrize("name", sorted(SMALL))
def test_example_main_in_process(name, capsys):
    """Each example has main(argv=None) returning the exit status."""
    _needs_optional_dependency(name)
    import importlib.util
    spec = importlib.util.spec_from_file_location(f"example_{name[:-3]}", EXAMPLES / name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(SMALL[name] + ["--fd-checks", "2"]) == 0
    assert "check: OK" in capsys.readouterr().out


def test_heat_equation_does_not_mutate_its_input():
    sys.path.insert(0, str(EXAMPLES))
    try:
        import heat_equation
    finally:
        sys.path.remove(str(EXAMPLES))
    u0, k, target, n = heat_equation.make_inputs(10, 5)
    before = u0.copy()
    heat_equation.misfit(u0, k, target, n)
    import tangent_ckpt as tc
    tc.grad_with_checkpointing(heat_equation.misfit, wrt=(0, 1), snapshots=2)(u0, k, target, n)
    assert (u0 == before).all()


@pytest.mark.parametrize("name", ["optimize.py", "newton_cg.py"])
def test_scipy_examples_without_scipy_skip(name):
    code = ("import sys, runpy; sys.modules['scipy'] = None; sys.modules['scipy.optimize'] = None; "
            f"sys.argv = [{name!r}]; runpy.run_path({str(EXAMPLES / name)!r}, "
            "run_name='__main__')")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=60, cwd=ROOT, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert "check: SKIPPED" in proc.stdout


def test_newton_cg_example_fits_with_hvp():
    pytest.importorskip("scipy")
    proc = run_example("newton_cg.py", "--steps", "40", "--hidden", "2", "--snapshots", "3",
                       "--maxiter", "50")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert check_line(proc.stdout).startswith("check: OK"), proc.stdout
    assert "trust-ncg" in proc.stdout and "L-BFGS-B" in proc.stdout and "peak MB" in proc.stdout


def test_containers_example():
    proc = run_example("containers.py", "--steps", "9", "--snapshots", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert check_line(proc.stdout).startswith("check: OK"), proc.stdout
    assert "rnn gradient: {'Wxh'" in proc.stdout


@pytest.mark.parametrize("days,snapshots", [(60, 4), (7, 1)])
def test_sir_model_example(days, snapshots):
    proc = run_example("sir_model.py", "--days", str(days), "--snapshots", str(snapshots))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert check_line(proc.stdout).startswith("check: OK"), proc.stdout


@pytest.mark.parametrize("steps,snapshots", [(50, 3), (20, 25)])
def test_kalman_filter_example(steps, snapshots):
    proc = run_example("kalman_filter.py", "--steps", str(steps), "--snapshots", str(snapshots),
                       "--iterations", "3")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert check_line(proc.stdout).startswith("check: OK"), proc.stdout
