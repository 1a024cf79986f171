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


def _numeric_jacobian_product(f, x, seed, eps=1e-6):
    """``d sum(seed * f(x)) / dx`` by central differences."""
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        out[i] = np.sum(seed * (f(up) - f(down))) / (2 * eps)
    return out


def _values_for(a, indices, zeros):
    shape = np.shape(a[indices])
    b = np.linspace(0.6, 1.9, max(1, int(np.prod(shape)))).reshape(shape)
    if zeros and b.size > 2:
        b.flat[0] = b.flat[2] = 0.0          # zeros among the factors of a repeated index
    return b


@pytest.mark.parametrize("indices", INDEX_FORMS)
@pytest.mark.parametrize("primitive, ufunc", [(rt.multiply_at, np.multiply),
                                              (rt.divide_at, np.divide)])
def test_multiply_and_divide_at_are_numpys_in_place_update_of_a_copy(primitive, ufunc, indices):
    a = np.arange(1.0, 9.0).reshape(4, 2)
    kept = a.copy()
    b = _values_for(a, indices, zeros=False)
    expected = a.copy()
    ufunc.at(expected, indices, b)
    np.testing.assert_array_equal(primitive(a, indices, b), expected)
    np.testing.assert_array_equal(a, kept)


@pytest.mark.parametrize("indices", INDEX_FORMS)
@pytest.mark.parametrize("zeros", [False, True])
def test_multiply_at_adjoints_and_tangents_match_finite_differences(indices, zeros):
    """Each value's adjoint is g[p] * a[p] times the product of the other values at p,
    exact where some factors are zero (no division by the value)."""
    rng = np.random.default_rng(3)
    a = rng.uniform(0.5, 2.0, (4, 2))
    b = _values_for(a, indices, zeros)
    g = rng.standard_normal(a.shape)
    np.testing.assert_allclose(
        rt.multiplied_at(g, a, indices, b),
        _numeric_jacobian_product(lambda x: rt.multiply_at(x, indices, b), a, g), atol=1e-8)
    np.testing.assert_allclose(
        rt.unbroadcast(rt.factor_adjoint_at(g, a, indices, b), b),
        _numeric_jacobian_product(lambda x: rt.multiply_at(a, indices, x), b, g), atol=1e-8)
    t = rng.standard_normal(b.shape)
    eps = 1e-6
    numeric = (rt.multiply_at(a, indices, b + eps * t) -
               rt.multiply_at(a, indices, b - eps * t)) / (2 * eps)
    np.testing.assert_allclose(rt.factor_tangent_at(t, a, indices, b), numeric, atol=1e-8)


@pytest.mark.parametrize("indices", INDEX_FORMS)
def test_divide_at_adjoints_and_tangents_match_finite_differences(indices):
    rng = np.random.default_rng(4)
    a = rng.uniform(0.5, 2.0, (4, 2))
    b = _values_for(a, indices, zeros=False)
    g = rng.standard_normal(a.shape)
    ans = rt.divide_at(a, indices, b)
    np.testing.assert_allclose(
        rt.divided_at(g, a, indices, b),
        _numeric_jacobian_product(lambda x: rt.divide_at(x, indices, b), a, g), atol=1e-8)
    np.testing.assert_allclose(
        rt.unbroadcast(rt.divisor_adjoint_at(g, ans, indices, b), b),
        _numeric_jacobian_product(lambda x: rt.divide_at(a, indices, x), b, g), atol=1e-8)
    t = rng.standard_normal(b.shape)
    eps = 1e-6
    numeric = (rt.divide_at(a, indices, b + eps * t) -
               rt.divide_at(a, indices, b - eps * t)) / (2 * eps)
    np.testing.assert_allclose(rt.divisor_tangent_at(t, ans, indices, b), numeric, atol=1e-8)


def test_the_second_derivative_helpers_match_finite_differences_of_the_tangents():
    """What tc.hvp differentiates: the values' adjoint of the tangent helpers."""
    rng = np.random.default_rng(5)
    a, indices = rng.uniform(0.5, 2.0, 4), np.array([0, 2, 0, 0, 2])
    b, t, g = rng.uniform(0.5, 2.0, 5), rng.standard_normal(5), rng.standard_normal(4)
    b[1] = 0.0
    np.testing.assert_allclose(
        rt.factor_tangent_adjoint_at(g, t, a, indices, b),
        _numeric_jacobian_product(lambda x: rt.factor_tangent_at(t, a, indices, x), b, g),
        atol=1e-8)
    b[1] = 1.3
    quotient = rt.divide_at(a, indices, b)
    np.testing.assert_allclose(
        rt.divisor_tangent_adjoint_at(g, t, quotient, indices, b),
        _numeric_jacobian_product(lambda x: rt.divisor_tangent_at(t, quotient, indices, x),
                                  b, g), atol=1e-8)


def test_an_integer_result_passes_no_derivative_through_multiply_at():
    like = np.ones(3, dtype=int)
    assert rt.factor_adjoint_at(np.ones(3), like, [0, 0], np.array([2.5, 2.0])) == 0.0
    assert rt.multiplied_at(np.ones(3), like, [0, 0], 2.5) == 0.0
