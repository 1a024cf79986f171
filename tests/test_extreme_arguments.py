"""desugar/extreme_arguments.py: ``max(a, b, c)`` and ``max([a, b, c])`` (and
``min``) are the nested pairs ``max(max(a, b), c)`` the rule of two numbers
follows; they were refused ("max() takes at most 2 positional arguments", "max()
of a list or tuple of values").  Checked taped and checkpointed against central
finite differences, and against Python's value."""

import builtins

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad
from tangent_ckpt.compiler.pipeline import desugared
from tangent_ckpt.errors import TangentCkptError

RUNS = [{}, {"checkpoint": True, "snapshots": 2}]
U = np.array([0.3, -0.7, 1.2])


def three_arguments(u):
    return max(u[0], u[1], u[2]) * min(u[0] * 2.0, 1.0, u[1] + 3.0)


def a_list_display(u):
    return max([u[0] * 2.0, u[1], u[2] * u[0]]) + min((u[1], u[2]))


def _peak(a, b, c):
    return max(a, b, c)


def in_a_helper(u):
    return _peak(u[0], u[1] * 3.0, u[2]) ** 2


def running_peak(u):
    h = u
    m = 0.0
    for t in range(6):
        h = np.sin(h) * 1.2
        m = max(m, float(h[0]), float(h[1]) * 0.5)
    return m + np.sum(h)


@pytest.mark.parametrize("options", RUNS, ids=["taped", "checkpointed"])
@pytest.mark.parametrize("f", [three_arguments, a_list_display, in_a_helper, running_peak],
                         ids=lambda f: f.__name__)
def test_max_and_min_of_several_values_are_differentiated(f, options):
    check_grad(f, (U.copy(),), df=tc.grad(f, **options))
    assert tc.value_and_grad(f, **options)(U.copy())[0] == pytest.approx(f(U.copy()))


def test_the_pairs_keep_the_order_python_compares_in():
    text = desugared(three_arguments)
    assert "max(max(u[0], u[1]), u[2])" in text
    assert "min(min(u[0] * 2.0, 1.0), u[1] + 3.0)" in text


def test_a_local_named_max_is_not_the_builtin():
    def local_max(u):
        max = builtins.min  # noqa: A001 - a local named max
        return max(u[0], u[1], u[2])
    text = desugared(local_max)
    # not written as the builtin max's pairs; the local, surely builtins.min, is
    # called by that name since session 23 (function_names.py)
    assert "max(max(" not in text and "min(u[0], u[1], u[2])" in text, text


def max_with_a_key(u):
    return max(u[0], u[1], u[2], key=abs)


def test_keywords_are_left_to_the_lowering_which_refuses_them():
    with pytest.raises(TangentCkptError, match=r"test_extreme_arguments.py:\d+: .*max"):
        tc.grad(max_with_a_key)(U.copy())
