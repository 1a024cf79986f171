"""compiler/analyze/scalar_output.py: the output proved a scalar needs no spreading of the
output adjoint; anything else starts the reverse sweep with rt.output_adjoint."""

import numpy as np
import pytest

import tangent_ckpt as tc


def full_sum(x):
    return np.sum(x ** 2)


def running_cost(x, n):
    cost = 0.0
    for t in range(n):
        x = np.tanh(x)
        cost = cost + np.mean(x) * t
    return cost / n


def branch_of_scalars(x):
    if np.sum(x) > 0:
        y = x.max()
    else:
        y = 2.0 * np.linalg.norm(x)
    return y


def reduced_on_an_axis(x):
    return np.sum(x, axis=0)


def stacked(x):
    return np.stack([np.sum(x), np.max(x)])


def times_a_parameter(x, w):
    return np.sum(x) * w


def one_branch_array(x):
    y = np.sum(x)
    if y > 0:
        y = x * 2.0
    return y


@pytest.mark.parametrize("fn, args", [(full_sum, (np.ones(3),)),
                                      (running_cost, (np.ones(3), 4)),
                                      (branch_of_scalars, (np.ones(3),))])
def test_a_proved_scalar_output_reads_no_output_adjoint_helper(fn, args):
    df = tc.grad(fn)
    df(*args)
    assert "output_adjoint" not in df.source


@pytest.mark.parametrize("fn, args", [(reduced_on_an_axis, (np.ones((2, 3)),)),
                                      (stacked, (np.ones(3),)),
                                      (times_a_parameter, (np.ones(3), np.ones(2))),
                                      (one_branch_array, (np.ones(3),))])
def test_an_output_not_proved_scalar_spreads_the_output_adjoint(fn, args):
    df = tc.grad(fn)
    g = df(*args)
    assert "rt.output_adjoint(" in df.source
    out = np.asarray(fn(*args))
    np.testing.assert_allclose(g, df(*args, np.ones(out.shape)), rtol=1e-13)
