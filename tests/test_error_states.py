"""desugar/error_states.py: ``with np.errstate(...)`` that only ignores or warns
is its body (it never changes a value); one that raises or calls stays a ``with``,
refused with its line."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad
from tangent_ckpt.compiler.pipeline import desugared
from tangent_ckpt.errors import TangentCkptError

X = np.array([0.3, -0.7, 1.2])


def _safe_log(v):
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.log(np.abs(v) + 1.0)
    return r


def in_a_loop_and_a_helper(x, n=4):
    y = x
    for t in range(n):
        with np.errstate(over="warn"):
            y = np.tanh(y) * 1.1 + _safe_log(x)
    return np.sum(y)


def silenced(x):
    with np.errstate(all="ignore"):
        y = x * 2.0
    return np.sum(y)


def test_a_silent_error_state_is_its_body():
    assert desugared(silenced).splitlines()[1:] == ["    y = x * 2.0", "    return np.sum(y)"]


@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
def test_gradients_through_silent_error_states_match_finite_differences(options):
    check_grad(in_a_loop_and_a_helper, (X,), df=tc.grad(in_a_loop_and_a_helper, **options))


def raising(x):
    with np.errstate(all="raise"):  # REFUSED
        y = x * 2.0
    return np.sum(y)


def named(x):
    with np.errstate(divide="ignore") as state:  # REFUSED
        y = x * 2.0
    return np.sum(y) + 0.0 * len(str(state))


@pytest.mark.parametrize("f", [raising, named])
def test_an_error_state_that_raises_or_is_named_is_refused_with_its_line(f):
    import inspect
    lines, first = inspect.getsourcelines(f)
    line = first + next(k for k, text in enumerate(lines) if "# REFUSED" in text)
    with pytest.raises(TangentCkptError, match="with") as info:
        tc.grad(f)(X)
    assert f"test_error_states.py:{line}:" in str(info.value)
