"""desugar/array_roots.py: a name bound to arithmetic of a parameter and a number
(``y = x * 1.0``, ``u0 + 0.0``, ``-x``) is followed as an array when the
parameter is one of at least one dimension, checked when the function starts;
a swap through it (``y[0], y[1] = y[1], y[0]``) was refused ("a write into 'y'
may also change 'y_item_2'") because ``y``'s dimensions were not known.  Exact
for any number of dimensions: for rows, both become the second, as NumPy does."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad
from tangent_ckpt.errors import TangentCkptError

MODES = [{}, {"checkpoint": True, "snapshots": 2}]
X = np.array([0.3, -0.5, 0.8, 1.1])
M = np.array([[0.3, -0.5], [0.8, 1.1], [0.2, 0.4]])


def swap_of_a_scaled_copy(x):
    y = x * 1.0
    y[0], y[1] = y[1], y[0]
    return np.sum(y.T * np.arange(1, len(y) + 1))


def periodic_ghost_cells(u0):
    u = u0 + 0.0
    u[0], u[-1] = u[-2], u[1]
    return np.sum(u.T ** 2 * np.arange(1, len(u) + 1))


def negated_then_swapped_in_a_loop(x, n):
    y = -x
    for k in range(n):
        y[0], y[-1] = y[-1], y[0] * 0.5
    return np.sum(y.T * np.arange(1, len(y) + 1))


@pytest.mark.parametrize("options", MODES, ids=["taped", "checkpointed"])
@pytest.mark.parametrize("x", [X, M], ids=["vector", "rows"])
@pytest.mark.parametrize("f, extra", [(swap_of_a_scaled_copy, ()), (periodic_ghost_cells, ()),
                                      (negated_then_swapped_in_a_loop, (3,))],
                         ids=["swap", "ghosts", "loop"])
def test_a_swap_through_arithmetic_of_a_parameter_is_exact(f, extra, x, options):
    args = (x,) + extra
    check_grad(f, args, df=tc.grad(f, **options))
    value, _ = tc.value_and_grad(f, **options)(*args)
    assert value == pytest.approx(f(*args), rel=1e-12)


def test_a_zero_dimensional_array_is_refused_when_called():
    """``y = x * 1.0`` of a 0-d ``x`` is a NumPy scalar (Python raises at the
    swap): the check refuses it, naming the parameter, before anything runs."""
    with pytest.raises(TangentCkptError, match="'x' is given a 0-d array"):
        tc.grad(swap_of_a_scaled_copy)(np.array(2.0))
