"""The command line: `dump`, `demo`, and one clear line (exit 2) for every user error."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tangent_ckpt.cli import SUBCOMMANDS, main

ROOT = Path(__file__).resolve().parents[1]

USER = textwrap.dedent("""\
    import numpy as np

    SCALE = 0.5

    def loss(x, w, n):
        for t in range(n):
            x = np.tanh(x * w) * SCALE + x
        return np.sum(x ** 2)

    def _private(x):
        return x
""")


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def run_cli(capsys, *argv):
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def assert_user_error(status, err, *fragments):
    assert status == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got:\n{err}"
    assert "Traceback" not in err
    for f in fragments:
        assert f in lines[0], f"{f!r} not in {lines[0]!r}"
    return lines[0]


def test_subcommands_registered():
    assert {"schedule", "dump", "demo"} <= set(SUBCOMMANDS)


def test_dump_prints_module(tmp_path, capsys):
    path = write(tmp_path, "model.py", USER)
    status, out, err = run_cli(capsys, "dump", f"{path}:loss", "--wrt", "0,1", "--snapshots", "3")
    assert status == 0, err
    assert out.startswith("# Gradient of loss()")
    assert "import numpy as np" in out and "import tangent_ckpt.runtime as rt" in out
    assert "rt.CheckpointedLoop(range(n), snapshots=3" in out
    assert "def dloss(x, w, n, bloss=1.0):" in out
    compile(out, "dumped.py", "exec")


def test_dump_no_checkpoint_is_taped(tmp_path, capsys):
    path = write(tmp_path, "model.py", USER)
    status, out, err = run_cli(capsys, "dump", f"{path}:loss", "--wrt", "1", "--no-checkpoint")
    assert status == 0, err
    assert "CheckpointedLoop" not in out
    assert "loops taped" in out.splitlines()[0]


def test_dump_memory_budget_and_schedule(tmp_path, capsys):
    path = write(tmp_path, "model.py", USER)
    status, out, err = run_cli(capsys, "dump", f"{path}:loss", "--memory-budget", "1MB")
    assert status == 0, err
    assert "memory_budget=1000000" in out
    status, out, err = run_cli(capsys, "dump", f"{path}:loss", "--schedule", "online")
    assert status == 0, err
    assert "online" in out


def test_dump_writes_output_file(tmp_path, capsys):
    path = write(tmp_path, "model.py", USER)
    out_path = tmp_path / "dmodel.py"
    status, out, err = run_cli(capsys, "dump", f"{path}:loss", "-o", out_path)
    assert status == 0, err
    assert out == ""
    assert out_path.read_text().startswith("# Gradient of loss()")


# ------------------------------------------------------------------ user errors

def test_missing_file(tmp_path, capsys):
    status, _, err = run_cli(capsys, "dump", f"{tmp_path}/nope.py:loss")
    assert_user_error(status, err, "nope.py", "no such file")


def test_no_such_function(tmp_path, capsys):
    path = write(tmp_path, "model.py", USER)
    status, _, err = run_cli(capsys, "dump", f"{path}:lost")
    line = assert_user_error(status, err, "model.py", "no function named 'lost'")
    assert "loss" in line  # lists what is there
    assert "_private" not in line


def test_not_a_function(tmp_path, capsys):
    path = write(tmp_path, "model.py", USER)
    status, _, err = run_cli(capsys, "dump", f"{path}:SCALE")
    assert_user_error(status, err, "model.py", "'SCALE' is a float")


def test_target_without_function(tmp_path, capsys):
    path = write(tmp_path, "model.py", USER)
    status, _, err = run_cli(capsys, "dump", str(path))
    assert_user_error(status, err, "FILE.py:FUNC")


def test_syntax_error_names_file_and_line(tmp_path, capsys):
    path = write(tmp_path, "broken.py", "import numpy as np\n\ndef f(x):\n    return np.sum(x\n")
    status, _, err = run_cli(capsys, "dump", f"{path}:f")
    assert_user_error(status, err, "broken.py:", "syntax error")


def test_error_while_importing_names_line(tmp_path, capsys):
    path = write(tmp_path, "boom.py", "import numpy as np\nx = 1\nraise RuntimeError('no')\n")
    status, _, err = run_cli(capsys, "dump", f"{path}:f")
    assert_user_error(status, err, "boom.py:3", "RuntimeError: no")


def test_missing_import_in_user_file(tmp_path, capsys):
    path = write(tmp_path, "imp.py", "import numpy as np\nimport no_such_module_xyz\n")
    status, _, err = run_cli(capsys, "dump", f"{path}:f")
    assert_user_error(status, err, "imp.py:2", "no_such_module_xyz")


def test_unsupported_construct_names_file_and_line(tmp_path, capsys):
    path = write(tmp_path, "tried.py", textwrap.dedent("""\
        import numpy as np

        def f(x):
            try:
                y = x * 2.0
            except ValueError:
                y = x
            return np.sum(y)
    """))
    status, _, err = run_cli(capsys, "dump", f"{path}:f")
    assert_user_error(status, err, "tried.py:4", "try")


def test_unsupported_function_names_file_and_line(tmp_path, capsys):
    path = write(tmp_path, "eig.py", textwrap.dedent("""\
        import numpy as np

        def f(x):
            return np.sum(np.linalg.eig(x)[0])
    """))
    status, _, err = run_cli(capsys, "dump", f"{path}:f")
    assert_user_error(status, err, "eig.py:4", "np.linalg.eig", "register_adjoint")


@pytest.mark.parametrize("wrt,fragment", [("0,x", "--wrt"), ("", "--wrt"), ("0,0", "twice"),
                                          ("3", "out of range")])
def test_bad_wrt(tmp_path, capsys, wrt, fragment):
    path = write(tmp_path, "model.py", USER)
    status, _, err = run_cli(capsys, "dump", f"{path}:loss", "--wrt", wrt)
    assert_user_error(status, err, fragment)


def test_out_of_range_wrt_names_file_and_line(tmp_path, capsys):
    path = write(tmp_path, "model.py", USER)
    status, _, err = run_cli(capsys, "dump", f"{path}:loss", "--wrt", "5")
    assert_user_error(status, err, "model.py:5", "loss() has 3 parameters")


@pytest.mark.parametrize("argv,fragment", [
    (["--snapshots", "0"], "--snapshots"),
    (["--memory-budget", "lots"], "memory_budget"),
    (["--snapshots", "2", "--memory-budget", "1MB"], "not allowed with"),
    (["--no-checkpoint", "--snapshots", "3"], "--no-checkpoint"),
    (["--schedule", "fast"], "--schedule"),
])
def test_bad_options(tmp_path, capsys, argv, fragment):
    path = write(tmp_path, "model.py", USER)
    status, _, err = run_cli(capsys, "dump", f"{path}:loss", *argv)
    assert_user_error(status, err, fragment)


def test_unwritable_output(tmp_path, capsys):
    path = write(tmp_path, "model.py", USER)
    status, _, err = run_cli(capsys, "dump", f"{path}:loss", "-o", tmp_path / "no" / "x.py")
    assert_user_error(status, err, "cannot write")


def test_unknown_subcommand(capsys):
    status, _, err = run_cli(capsys, "dumpp")
    assert_user_error(status, err, "invalid choice")


# ------------------------------------------------------------------ demo

def test_demo_small(capsys):
    status, out, err = run_cli(capsys, "demo", "--steps", "12", "--snapshots", "3", "--batch",
                               "2", "--hidden", "4", "--fd-checks", "2")
    assert status == 0, out + err
    assert "check: OK" in out
    assert "revolve_cost(12, 3)" in out
    assert "peak memory of the gradient call" in out


def test_demo_bad_steps(capsys):
    status, _, err = run_cli(capsys, "demo", "--steps", "0")
    assert_user_error(status, err, "--steps")


# ------------------------------------------------------------------ as a program

def _env():
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def test_python_dash_m_user_error_and_demo(tmp_path):
    path = write(tmp_path, "broken.py", "def f(x:\n    pass\n")
    proc = subprocess.run([sys.executable, "-m", "tangent_ckpt", "dump", f"{path}:f"],
                          capture_output=True, text=True, env=_env(), timeout=60,
                          stdin=subprocess.DEVNULL, cwd=tmp_path)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "broken.py:1" in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "tangent_ckpt", "demo", "--steps", "6",
                           "--snapshots", "2", "--batch", "2", "--hidden", "3"],
                          capture_output=True, text=True, env=_env(), timeout=120,
                          stdin=subprocess.DEVNULL, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "check: OK" in proc.stdout


def test_console_script_if_installed(tmp_path):
    import shutil
    exe = shutil.which("tangent-ckpt")
    if exe is None:
        pytest.skip("the tangent-ckpt console script is not on PATH")
    proc = subprocess.run([exe, "dump", f"{tmp_path}/missing.py:f"], capture_output=True,
                          text=True, env=_env(), timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"{tmp_path}/missing.py: no such file"
