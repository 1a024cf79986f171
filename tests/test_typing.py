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
from numpy.typing import NDArray
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
def loss(x: NDArray[np.float64], s: float, n: int) -> float:
    return float(np.sum(x) * s * n)
x = np.ones(3)
reveal_type(tc.grad(loss)(x, 0.5, 3))
reveal_type(tc.grad(loss, wrt=1)(x, 0.5, 3))
reveal_type(tc.grad(loss, wrt=(0,))(x, 0.5, 3))
reveal_type(tc.grad(loss, wrt=(0, 1))(x, 0.5, 3))
reveal_type(tc.grad(loss, flat=True, checkpoint=True)(x, 0.5, 3))
reveal_type(tc.value_and_grad(loss)(x, 0.5, 3))
reveal_type(tc.grad_with_checkpointing(loss, snapshots=2)(x, 0.5, 3))
@tc.grad_with_checkpointing(wrt=1, snapshots=2)
def decorated(x: NDArray[np.float64], s: float, n: int) -> float:
    return float(np.sum(x) * s * n)
reveal_type(decorated(x, 0.5, 3))
a, b, c = tc.grad(loss, wrt=(0, 1))(x, 0.5, 3)
reveal_type(tc.hvp(loss)(x, 0.5, 3, x))
reveal_type(tc.hvp(loss, (0, 1), checkpoint=True)(x, 0.5, 3, (x, 1.0)))
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
    assert "Found 7 errors in 1 file" in mypy_output, mypy_output


def test_mypy_sees_the_public_type_hints(mypy_output):
    assert 'user.py:6: error: Argument "wrt" to "grad" has incompatible type "str"' \
        in mypy_output, mypy_output
    assert "user.py:8: error: Incompatible types in assignment" in mypy_output
    # a misspelt option is a type error (no **kwargs catch-all in the signatures)
    assert 'user.py:9: error: Unexpected keyword argument "snapshot" for overloaded function ' \
        '"grad"; did you mean "snapshots"?' in mypy_output, mypy_output
    assert 'user.py:12: error: Unexpected keyword argument "shedule" for overloaded ' \
        'function "grad_with_checkpointing"; did you mean "schedule"?' in mypy_output
    # the decorator form is typed: its result is a gradient, with compile()
    assert "user.py:10" not in mypy_output and "user.py:11" not in mypy_output
    assert "py.typed" not in mypy_output   # the package is recognised as typed


def revealed(mypy_output, line):
    found = [text.split('Revealed type is "')[1].rstrip('"') for text in mypy_output.splitlines()
             if text.startswith(f"user.py:{line}: note: Revealed")]
    assert len(found) == 1, mypy_output
    return found[0]


ARRAY = "numpy.ndarray[tuple[Any, ...], numpy.dtype[numpy.float64]]"


@pytest.mark.parametrize("line, expected", [
    (16, ARRAY),                       # wrt=0 (the default): the type of the parameter
    (17, "float"),                     # wrt=1, a float parameter (an np.float64 at run time)
    (18, "tuple[Any]"),                # a tuple wrt: a tuple of as many
    (19, "tuple[Any, Any]"),
    (20, ARRAY),                       # flat=True: one float64 vector
    (21, f"tuple[float, {ARRAY}]"),    # value_and_grad: (the return type, the gradient)
    (22, ARRAY),                       # grad_with_checkpointing called on the function
    (26, "float"),                     # ... and as a decorator with options
    (28, ARRAY),                       # hvp: H v has the type of v
    (29, "tuple[Any, ...]"),
])
def test_gradients_have_the_type_of_their_argument(mypy_output, line, expected):
    """The overloads of grad, value_and_grad, grad_with_checkpointing and hvp: an int
    wrt of 0 or 1 gives the annotated type of that parameter, a tuple wrt a tuple
    of as many gradients -- true at run time too (tests/test_api.py)."""
    assert revealed(mypy_output, line) == expected


def test_a_tuple_of_two_gradients_does_not_unpack_into_three(mypy_output):
    assert "user.py:27: error: Need more than 2 values to unpack (3 expected)" in mypy_output


def test_the_typed_options_are_the_options_each_function_takes():
    """The overloads take the options as TypedDicts: an option added to grad and
    not to its TypedDict would be a type error for every user who passes it."""
    import inspect

    from tangent_ckpt import api, second_order

    def options(fn):
        return {name for name, p in inspect.signature(fn).parameters.items()
                if p.kind == p.KEYWORD_ONLY} - {"wrt", "flat", "has_aux"}
    assert set(api.GradOptions.__annotations__) == options(api.grad) == \
        options(api.value_and_grad)
    assert set(api.CheckpointingOptions.__annotations__) == \
        options(api.grad_with_checkpointing)
    assert set(second_order.HvpOptions.__annotations__) == options(second_order.hvp)
