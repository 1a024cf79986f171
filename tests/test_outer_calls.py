"""A binary ufunc's ``outer`` method (compiler/desugar/outer_calls.py):
``np.add.outer(a, b)`` is written as the broadcast it is, differentiated by the
ufunc's own rule, taped and checkpointed, against central differences and with
the value Python computes (it was refused: "no adjoint rule for outer")."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad
from tangent_ckpt.compiler.pipeline import desugared
from tangent_ckpt.errors import UnsupportedFunctionError

X = np.array([0.3, -1.1, 2.0])
M = np.array([[0.5, 1.5], [2.5, 0.1]])


def summed_outer_sum(x, y):
    return np.sum(np.add.outer(x, y) ** 2)


def cubed_outer_difference(x, y):
    d = np.subtract.outer(-x, y)
    return np.sum(d ** 3)


def outer_product_and_ratio(x, y):
    return np.sum(np.multiply.outer(x, y)) * np.sum(np.divide.outer(x, 4.0) ** 2)


def pairwise_steps(x, n):
    # pmocz's n-body: dx = np.add.outer(-x, x), in a time loop
    s = 0.0
    for t in range(n):
        dx = np.add.outer(-x, x)
        x = x + 0.01 * np.sum(dx, axis=1)
        s = s + np.sum(dx ** 2)
    return s


@pytest.mark.parametrize("checkpoint", [False, True])
@pytest.mark.parametrize("fn", [summed_outer_sum, cubed_outer_difference,
                                outer_product_and_ratio])
@pytest.mark.parametrize("x, y", [(X, X[:2]), (X, M), (M, X), (1.5, X), (X, 0.5)],
                         ids=["1d-1d", "1d-2d", "2d-1d", "number-1d", "1d-number"])
def test_a_ufunc_outer_is_differentiated_as_its_broadcast(fn, x, y, checkpoint):
    df = tc.grad(fn, wrt=(0, 1), checkpoint=checkpoint, snapshots=2)
    check_grad(fn, (x, y), wrt=(0, 1), df=df)
    value, _ = tc.value_and_grad(fn, wrt=(0, 1))(x, y)
    assert value == fn(x, y)  # the same ufunc on the same numbers


@pytest.mark.parametrize("checkpoint", [False, True])
def test_a_ufunc_outer_in_a_loop(checkpoint):
    df = tc.grad(pairwise_steps, checkpoint=checkpoint, snapshots=2)
    check_grad(pairwise_steps, (X, 5), df=df)


def test_the_desugared_broadcast_reads_each_argument_as_written():
    text = desugared(cubed_outer_difference)
    assert "np.subtract(np.reshape(-x, np.shape(x) + (1,) * np.ndim(y)), y)" in text, text


def outer_of_an_expression(x, y):
    return np.sum(np.add.outer(x * 2.0, y))


def outer_with_a_dtype(x, y):
    return np.sum(np.add.outer(x, y, dtype=np.float64))


@pytest.mark.parametrize("fn", [outer_of_an_expression, outer_with_a_dtype])
def test_other_outer_calls_are_left_as_written(fn):
    # an argument computed (read twice it would be computed twice) or a keyword
    with pytest.raises(UnsupportedFunctionError, match="no adjoint rule for outer"):
        tc.grad(fn)(X, X)
