"""runtime/primitive_adjoints/scatter_adjoints.py: ``rt.add_at`` and
``rt.subtract_at`` are NumPy's unbuffered ``ufunc.at`` on a copy (the argument
never changes), with NumPy's dtype and errors; ``rt.gathered_at`` and
``rt.scattered_at``, their adjoint and tangent, read a repeated index once per
occurrence and pass nothing through an integer result."""

import numpy as np
import pytest

from tangent_ckpt import runtime as rt

INDEX_FORMS = [np.array([0, 2, 0, 0]), [1, 1], (np.array([0, 3]), np.array([1, 1])),
               (slice(1, 3), 0), np.array([[True, False], [False, True], [True, True],
                                           [False, False]]), 2]


@pytest.mark.parametrize("indices", INDEX_FORMS)
@pytest.mark.parametrize("primitive, ufunc", [(rt.add_at, np.add),
                                              (rt.subtract_at, np.subtract)])
def test_the_result_is_numpys_in_place_update_of_a_copy(primitive, ufunc, indices):
    a = np.arange(8.0).reshape(4, 2)
    kept = a.copy()
    b = np.linspace(0.5, 1.0, np.asarray(a[indices]).size).reshape(np.shape(a[indices]))
    expected = a.copy()
    ufunc.at(expected, indices, b)
    got = primitive(a, indices, b)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(a, kept)
    assert got is not a


def test_the_result_keeps_the_arrays_dtype_as_numpy_does():
    a = np.zeros(3, dtype=np.float32)
    assert rt.add_at(a, [0, 0], np.float64(1.5)).dtype == np.float32
    counts = rt.add_at(np.zeros(3, dtype=int), [0, 0], 1.5)   # NumPy casts unsafely
    np.testing.assert_array_equal(counts, [2, 0, 0])


def test_numpys_errors_are_kept():
    with pytest.raises(ValueError, match="read-only"):
        rt.add_at(np.broadcast_to(np.zeros(3), (2, 3)), 0, 1.0)
    with pytest.raises(TypeError):
        rt.add_at([0.0, 1.0], [0], 1.0)       # a list: NumPy's ufunc.at takes arrays only
    with pytest.raises(IndexError):
        rt.add_at(np.zeros(3), [5], 1.0)


def test_gathered_at_reads_a_repeated_index_once_per_occurrence_into_a_copy():
    g = np.array([1.0, 2.0, 3.0])
    picked = rt.gathered_at(g, np.zeros(3), slice(0, 2))
    picked[0] = 10.0
    assert g[0] == 1.0                           # a copy, never a view of g
    np.testing.assert_array_equal(rt.gathered_at(g, np.zeros(3), [2, 2, 0]), [3.0, 3.0, 1.0])
    assert rt.gathered_at(0.0, np.zeros(3), [0]) == 0.0


def test_an_integer_result_passes_no_derivative():
    like = np.zeros(3, dtype=int)
    assert rt.gathered_at(np.ones(3), like, [0, 0]) == 0.0
    assert rt.scattered_at(np.ones(2), like, [0, 0]) == 0.0


def test_scattered_at_adds_the_tangent_once_per_occurrence():
    like = np.zeros((2, 2), dtype=np.float32)
    t = rt.scattered_at(np.array([1.0, 2.0, 4.0]), like, (np.array([0, 0, 1]), np.array([1, 1, 0])))
    np.testing.assert_array_equal(t, [[0.0, 3.0], [4.0, 0.0]])
    assert t.dtype == np.float64                 # the result type of like and t
