"""desugar/boolean_values.py: ``x = a or b`` / ``x = a and b`` as the ``if`` that
chooses the operand by its truth -- the operand evaluated once, the other one
only where Python evaluates it -- so ``rng = rng or np.random.default_rng(0)``
compiles; inside a larger expression it stays refused."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_value_and_grad
from tangent_ckpt.compiler.pipeline import desugared

X = np.array([0.3, -0.5, 1.2])


def default_generator(x, rng=None):
    rng = rng or np.random.default_rng(0)
    return np.sum(x * rng.standard_normal(3))


def zero_is_false(x, scale=0.0):
    s = scale or np.sum(x)  # 0.0 is false: s is the sum
    return s * np.sum(x)


def and_of_a_default(x, w=None):
    w = w and w * 2.0
    t = x if w is None else x * w
    return np.sum(t)


def three_operands(x, a=None, b=None):
    s = a or b or 3.0
    return np.sum(x) * s


def first_trip_is_false(x):
    s = 0.0
    for t in range(3):
        v = s or np.sum(x)
        s = s + v * t
    return s


def a_test_evaluated_once(x, c=1.0):
    z = (c > 0) and np.sin(x)
    return np.sum(z * x)


CASES = [(default_generator, (X,)), (zero_is_false, (X,)), (zero_is_false, (X, 2.0)), (and_of_a_default, (X,)),
         (and_of_a_default, (X, 0.5)), (three_operands, (X,)), (three_operands, (X, None, 2.0)),
         (first_trip_is_false, (X,)), (a_test_evaluated_once, (X,)),
         (a_test_evaluated_once, (X, -1.0))]


@pytest.mark.parametrize("f, args", CASES)
def test_an_operand_chosen_by_its_truth_is_the_value_python_gives(f, args):
    """Once refused ("`and`/`or` used as a value"): value and gradient as Python's,
    taped and checkpointed."""
    check_value_and_grad(f, args, rel=1e-12)
    taped = tc.grad(f)(*args)
    np.testing.assert_allclose(tc.grad(f, checkpoint=True, snapshots=2)(*args), taped,
                               rtol=1e-12)


def test_a_generator_given_is_the_one_drawn_from():
    value, grad = tc.value_and_grad(default_generator)(X, np.random.default_rng(5))
    assert value == default_generator(X, np.random.default_rng(5))
    np.testing.assert_array_equal(grad, np.random.default_rng(5).standard_normal(3))


def test_the_if_reads_as_written():
    text = desugared(default_generator)
    assert "if not rng:\n        rng = np.random.default_rng(0)" in text
    assert "operand = c > 0\n    if operand:\n        z = np.sin(x)\n    else:\n" \
        "        z = operand" in desugared(a_test_evaluated_once)


def inside_an_expression(x, scale=None):
    return np.sum(x * (scale or 2.0))


def test_inside_a_larger_expression_it_stays_refused():
    with pytest.raises(tc.UnsupportedSyntaxError, match=r"test_boolean_values.py:\d+: "
                                                        "`and`/`or` used as a value"):
        tc.grad(inside_an_expression)(X)
