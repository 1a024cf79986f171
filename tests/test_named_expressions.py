"""desugar/named_expressions.py: a ``:=`` that Python evaluates first in its
statement is the assignment before the statement (for a ``while`` test: before
the loop, at the end of each trip and before each ``continue``); elsewhere it
stays refused by the lowering."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_value_and_grad
from tangent_ckpt.compiler.pipeline import desugared

X = np.array([0.3, -0.5, 1.2])


def counted_while(x):
    s = 0.0
    k = 0
    while (k := k + 1) < 4:
        s = s + np.sum(x * k)
    return s


def while_with_continue_break_and_else(x):
    s = 0.0
    k = 0
    while (k := k + 1) < 6:
        if k % 2 == 0:
            continue
        s = s + np.sum(np.sin(x) * k)
        if k > 3:
            break
    else:
        s = s * 2.0
    return s + k


def a_nested_loops_continue_is_its_own(x):
    s = 0.0
    k = 0
    while not (k := k + 1) >= 3:
        for j in range(2):
            if j == 1:
                continue
            s = s + np.sum(x) * j
        s = s + np.sum(x * x)
    return s


def converged_test(x):
    h = x * 1.0
    while (err := np.max(np.abs(h - np.tanh(h)))) > 1e-3 and err < 10.0:
        h = np.tanh(h) * 0.5
    return np.sum(h) + err


def if_test_and_value(x):
    if (m := np.max(np.abs(x))) > 1.0:
        x = x / m
    y = (n := np.sum(x)) * x
    return np.sum(x * y) + m * n


@pytest.mark.parametrize("f", [counted_while, while_with_continue_break_and_else,
                               a_nested_loops_continue_is_its_own, converged_test,
                               if_test_and_value])
@pytest.mark.parametrize("scale", [1.0, 3.0])
def test_an_assignment_expression_evaluated_first_is_the_assignment_before(f, scale):
    """Once refused ("unsupported expression: assignment expression (:=)"): value
    and gradient as Python's, taped and checkpointed."""
    x = X * scale
    check_value_and_grad(f, (x,), rel=1e-12)
    np.testing.assert_allclose(tc.grad(f, checkpoint=True, snapshots=2)(x), tc.grad(f)(x),
                               rtol=1e-12)


def test_the_while_test_is_assigned_again_where_python_evaluates_it():
    text = desugared(while_with_continue_break_and_else)
    assert "k = k + 1\n    broke_out = False\n    while k < 6:\n        if k % 2 == 0:\n" \
           "            k = k + 1\n            continue\n" in text
    assert text.count("k = k + 1") == 3  # before the loop, before continue, end of a trip


def evaluated_after_a_call(x):
    y = np.sum(x) + (n := 3.0)
    return y * n


def test_one_evaluated_after_another_part_stays_refused():
    with pytest.raises(tc.UnsupportedSyntaxError, match=r"test_named_expressions.py:\d+: "
                                                        r"unsupported expression"):
        tc.grad(evaluated_after_a_call)(X)


def _normalised(v):
    if (m := np.max(np.abs(v))) > 1.0:
        v = v / m
    return v


def through_a_helper(x):
    return np.sum(_normalised(x * 3.0) * x)


def test_a_helpers_assignment_expression_is_written_where_it_is_inlined():
    check_value_and_grad(through_a_helper, (X,), rel=1e-12)
    assert ":=" not in desugared(through_a_helper)
