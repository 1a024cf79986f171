"""desugar/ndindex_loops.py: ``for i, j in np.ndindex(...)`` as nested range loops,
against central finite differences, taped and checkpointed; the loops it cannot
write exactly are refused with their line (before, the lowering read
``np.ndindex`` as an array's rows: a TypeError from the generated code)."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad
from source_lines import line_of


def kuramoto(theta, K, n):
    N = theta.shape[0]
    for t in range(n):
        d = np.zeros(N)
        for i, j in np.ndindex(N, N):
            d[i] += K * np.sin(theta[j] - theta[i])
        theta = theta + 0.1 * d
    return np.sum(theta ** 2)


def weighted_by_shape(x):
    A = np.outer(x, x)
    s = 0.0
    for i, j in np.ndindex(A.shape):
        s = s + A[i, j] * (i + 2 * j + 1)
    return s


def one_dimension(x):
    s = 0.0
    for (i,) in np.ndindex(3):
        s = s + x[i] * x[2 - i]
    return s


@pytest.mark.parametrize("f, args", [(kuramoto, (0.5, 3)), (weighted_by_shape, ()),
                                     (one_dimension, ())],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_an_ndindex_loop_visits_the_indices_of_nested_range_loops(f, args):
    x = np.array([0.3, -0.4, 0.7])
    check_grad(f, (x, *args))
    check_grad(f, (x, *args), df=tc.grad(f, checkpoint=True, snapshots=2))


def left_early(x):
    s = 0.0
    for i, j in np.ndindex(3, 3):  # LOOP
        if i == j:
            break
        s = s + x[i]
    return s


def index_tuple(x):
    s = 0.0
    for idx in np.ndindex(3, 3):  # LOOP
        s = s + x[idx[0]] * x[idx[1]]
    return s


@pytest.mark.parametrize("f", [left_early, index_tuple], ids=lambda f: f.__name__)
def test_an_ndindex_loop_that_cannot_be_nested_is_refused_at_its_line(f):
    with pytest.raises(tc.UnsupportedSyntaxError, match="np.ndindex") as info:
        tc.grad(f)(np.array([0.3, -0.4, 0.7]))
    assert f":{line_of(f, '# LOOP')}:" in str(info.value)


def skipping_the_diagonal(x):
    A = np.outer(x, x)
    s = 0.0
    for i, j in np.ndindex(*A.shape):
        if i == j:
            continue
        s = s + A[i, j] * (i + 1)
    return s


def test_continue_goes_on_to_the_next_index():
    x = np.array([0.3, -0.4, 0.7])
    check_grad(skipping_the_diagonal, (x,))


def index_tuples(x):
    A = np.outer(x, x)
    s = 0.0
    for idx in np.ndindex(A.shape):  # LOOP
        s = s + A[idx]
    return s


def shape_of_another_rank(x):
    A = np.outer(x, x)[:, :, None]
    s = 0.0
    for i, j in np.ndindex(A.shape):
        s = s + A[i, j, 0]
    return s


def test_one_name_for_the_index_tuple_is_refused():
    """``for idx in np.ndindex(A.shape)`` was written ``for idx in range(A.shape[0])``:
    a loop over the rows, a wrong value."""
    with pytest.raises(tc.UnsupportedSyntaxError, match="one name per dimension") as info:
        tc.grad(index_tuples)(np.array([0.3, -0.4, 0.7]))
    assert f":{line_of(index_tuples, '# LOOP')}:" in str(info.value)


def test_a_shape_of_another_rank_than_the_names_raises_as_python_does():
    with pytest.raises(ValueError):
        shape_of_another_rank(np.array([0.3, -0.4, 0.7]))
    with pytest.raises(AssertionError, match="np.ndindex"):
        tc.grad(shape_of_another_rank)(np.array([0.3, -0.4, 0.7]))
