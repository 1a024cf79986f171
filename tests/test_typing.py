"""The package is typed (PEP 561): it ships py.typed, and mypy -- where it is
installed (extra ``[typing]``) -- checks the examples and user code against the
public type hints.  mypy runs outside the repository with the package on the
path, the way it sees an installed package."""

import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_py_typed_is_shipped_as_package_data():
    assert os.path.exists(os.path.join(ROOT, "tangent_ckpt", "py.typed"))
    text = open(os.path.join(ROOT, "pyproject.toml")).read()
    assert '[tool.setuptools.package-data]\ntangent_ckpt = ["py.typed"]' in text


def test_an_editable_install_is_a_plain_path_entry_mypy_can_follow():
    """setuptools' editable install of a flat layout is an import-hook finder that
    mypy cannot follow (import-not-found after `pip install -e .`); with the
    packages' root declared as package-dir it writes a .pth line with the
    checkout's folder instead (checked by hand in a fresh venv: mypy then finds
    tangent_ckpt and its hints)."""
    text = open(os.path.join(ROOT, "pyproject.toml")).read()
    assert '[tool.setuptools]\npackage-dir = {"" = "."}' in text


USER_CODE = """\
import numpy as np
import tangent_ckpt as tc
def f(x: np.ndarray) -> float:
    return float(np.sum(x ** 2))
df = tc.grad(f, wrt='a')
flat, unravel = tc.ravel([np.ones(2)])
count: int = flat
dg = tc.grad(f, snapshot=3)
dc = tc.grad_with_checkpointing(wrt=0, snapshots=2)(f)
dc.compile()
dd = tc.grad_with_checkpointing(f, shedule="online")
"""


@pytest.fixture(scope="module")
def mypy_output(tmp_path_factory):
    """One mypy run over copies of the examples and a user file with two type errors."""
    pytest.importorskip("mypy")
    folder = tmp_path_factory.mktemp("typing")
    for name in os.listdir(os.path.join(ROOT, "examples")):
        if name.endswith(".py") and name != "__init__.py":
            shutil.copy(os.path.join(ROOT, "examples", name), folder / name)
    (folder / "user.py").write_text(USER_CODE)
    env = dict(os.environ, PYTHONPATH=ROOT)
    files = sorted(p.name for p in folder.iterdir())
    proc = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental",
                           "--config-file", os.path.join(ROOT, "pyproject.toml"), *files],
                          capture_output=True, text=True, env=env, cwd=str(folder),
                          timeout=300)
    return proc.stdout + proc.stderr


def test_mypy_accepts_the_examples(mypy_output):
    errors = [line for line in mypy_output.splitlines()
              if ": error:" in line and not line.startswith("user.py")]
    assert errors == [], mypy_output
    assert "Found 5 errors in 1 file" in mypy_output, mypy_output


def test_mypy_sees_the_public_type_hints(mypy_output):
    assert 'user.py:5: error: Argument "wrt" to "grad" has incompatible type "str"' \
        in mypy_output, mypy_output
    assert "user.py:7: error: Incompatible types in assignment" in mypy_output
    # a misspelt option is a type error (no **kwargs catch-all in the signatures)
    assert 'user.py:8: error: Unexpected keyword argument "snapshot" for "grad"' in mypy_output
    assert 'user.py:11: error: Unexpected keyword argument "shedule" for overloaded ' \
        'function "grad_with_checkpointing"; did you mean "schedule"?' in mypy_output
    # the decorator form is typed: its result is a gradient, with compile()
    assert "user.py:10" not in mypy_output
    assert "py.typed" not in mypy_output   # the package is recognised as typed
