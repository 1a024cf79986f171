"""A write through the transpose of a local (compiler/desugar/transposed_targets.py):
``D.T[:] -= x`` is the write through a name bound to the view ``D.T``, which the
view pass follows into ``D``.  Gradients taped and checkpointed against central
differences, values against Python's; it was refused as "assignment into a
nested subscript"."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad, check_value_and_grad
from tangent_ckpt.compiler.pipeline import desugared
from tangent_ckpt.errors import TangentCkptError

MODES = [pytest.param({}, id="taped"),
         pytest.param({"checkpoint": True, "snapshots": 2}, id="checkpointed")]


def covariance_matrix(x, sigma):
    # alexis-roche/scripts stats/gaussian_process.py: pairwise differences by
    # broadcasting x into the rows, then subtracting it from the columns
    D = np.zeros((len(x), len(x)))
    D[:] = x
    D.T[:] -= x.T
    return np.exp(-.5 * D ** 2 / sigma ** 2)


def gp_fit(x, y, sigma):
    K = covariance_matrix(x, sigma) + 0.1 * np.eye(len(x))
    c = np.linalg.solve(np.linalg.cholesky(K), y)
    return np.dot(c, c)


def columns_pushed_in_a_loop(A, v, n):
    B = np.array(A)
    for t in range(n):
        B.T[1] += v * np.sin(B[:, 0])
        B.T[0] = np.tanh(B.T[1])
    return np.sum(B ** 2)


X = np.array([0.3, 1.1, 2.0, 2.4])


def test_a_covariance_written_through_its_transpose():
    check_value_and_grad(gp_fit, (X, X ** 2, 0.8), wrt=(0, 1, 2))


@pytest.mark.parametrize("options", MODES)
def test_columns_written_through_the_transpose_in_a_loop(options):
    A = np.array([[0.2, -0.5], [1.0, 0.3], [0.4, 0.9]])
    args = (A, 0.7, 3)
    df = tc.grad(columns_pushed_in_a_loop, wrt=(0, 1), **options)
    check_grad(columns_pushed_in_a_loop, args, wrt=(0, 1), df=df)
    if options:
        assert "CheckpointedLoop(" in df.source


def test_written_through_a_name_bound_to_the_view():
    source = desugared(covariance_matrix)
    assert "D_T = D.T" in source and "D_T[:] -= x.T" in source


G = np.ones((2, 2))


def writes_a_module_arrays_transpose(x):
    G.T[0] = x
    return np.sum(G * x)


class _Field:
    def __init__(self, T):
        self.T = T            # an attribute named T (a temperature field), no transpose


def heats_a_field_named_T(x):
    field = _Field(np.zeros(3))
    field.T[1:] = x[:2] * 2.0
    return np.sum(field.T * x)


def test_an_attribute_named_T_of_an_object_is_not_a_transpose():
    check_value_and_grad(heats_a_field_named_T, (np.array([0.5, -1.0, 2.0]),))


def test_the_transpose_of_a_module_level_array_is_left_as_written():
    with pytest.raises(TangentCkptError, match="test_transposed_targets.py"):
        tc.grad(writes_a_module_arrays_transpose)(np.array([1.0, 2.0]))
