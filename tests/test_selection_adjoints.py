"""runtime/primitive_adjoints/selection_adjoints.py: each helper is the transpose
of the (linear) selection it undoes, checked against the Jacobian of the NumPy
function built column by column from unit inputs."""

import numpy as np
import pytest

from tangent_ckpt.runtime.primitive_adjoints.selection_adjoints import (
    choose_adjoint, choose_adjoint_all, compress_adjoint, take_adjoint,
)


def transpose_applied(fn, shape, g):
    """``J^T g`` for the linear ``fn`` on arrays of ``shape``."""
    out = np.zeros(shape)
    for k in np.ndindex(*shape):
        unit = np.zeros(shape)
        unit[k] = 1.0
        out[k] = np.sum(fn(unit) * g)
    return out


@pytest.mark.parametrize("indices, axis, mode", [
    ([0, 2, 2, -1], None, "raise"),        # repeated indices accumulate
    ([[0, 1], [3, 3]], 1, "raise"),
    ([1, -1, 1], 0, "raise"),
    ([5, -7, 11], None, "wrap"),
    ([9, -2], 1, "clip"),                  # a negative index clips to the first
    (2, 1, "raise"),                       # a scalar index drops the axis
])
def test_take_adjoint_is_the_transpose_of_take(indices, axis, mode):
    g = np.random.RandomState(0).randn(*np.shape(np.take(np.zeros((3, 4)), indices, axis,
                                                          mode=mode)))
    expected = transpose_applied(lambda a: np.take(a, indices, axis, mode=mode), (3, 4), g)
    np.testing.assert_allclose(take_adjoint(g, np.zeros((3, 4)), indices, axis, mode),
                               expected)


@pytest.mark.parametrize("condition, axis", [
    ([True, False, True], 0),
    ([False, True], 1),                    # shorter than the axis: the rest is 0
    ([1, 0, 2, 0, 0, 3], None),            # nonzero means kept, on the flattened array
])
def test_compress_adjoint_is_the_transpose_of_compress(condition, axis):
    shape = (3, 4)
    g = np.random.RandomState(1).randn(*np.compress(condition, np.zeros(shape), axis).shape)
    expected = transpose_applied(lambda a: np.compress(condition, a, axis), shape, g)
    np.testing.assert_allclose(compress_adjoint(g, condition, np.zeros(shape), axis),
                               expected)


@pytest.mark.parametrize("mode, offset", [("raise", 0), ("wrap", 2), ("clip", 1)])
def test_choose_adjoint_is_the_transpose_of_choose_per_choice(mode, offset):
    a = np.array([[0, 1, 2, 1], [2, 2, 0, 1]]) + offset
    shapes = [(2, 4), (4,), ()]
    g = np.random.RandomState(2).randn(2, 4)
    for i, shape in enumerate(shapes):
        def chosen(c, i=i):
            choices = [np.zeros(s) for s in shapes]
            choices[i] = c
            return np.choose(a, choices, mode=mode)
        choices = [np.zeros(s) for s in shapes]
        np.testing.assert_allclose(choose_adjoint(g, a, choices, i, mode),
                                   transpose_applied(chosen, shape, g))


def test_choose_adjoint_of_an_array_of_choices_has_its_shape():
    a = np.array([0, 2, 1, 0])
    g = np.arange(4.0)
    expected = transpose_applied(lambda c: np.choose(a, c), (3, 4), g)
    np.testing.assert_allclose(choose_adjoint_all(g, a, np.zeros((3, 4))), expected)


def test_helpers_pass_the_symbolic_zero_through():
    a = np.ones((2, 3))
    assert take_adjoint(0.0, a, [0]) == 0.0
    assert compress_adjoint(0.0, [True], a) == 0.0
    assert choose_adjoint(0.0, [0], [a], 0) == 0.0
