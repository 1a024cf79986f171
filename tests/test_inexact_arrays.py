"""A float stored into an integer or boolean array is truncated by NumPy
(compiler/analyze/inexact_arrays.py): no derivative flows through the write.

``y = np.zeros_like(np.arange(4)); y[1] = 0.7 * x`` stores 0 whatever ``x`` is
near 1.3; learner code writes this often.  The gradient (taped, checkpointed,
forward mode) is the derivative of the code as NumPy runs it, checked against
central finite differences; writes into arrays that surely hold floats keep
their fast adjoint unchanged.
"""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))

import tangent_ckpt as tc  # noqa: E402
from gradcheck import numeric_grad  # noqa: E402
from tangent_ckpt.compiler.analyze.inexact_arrays import surely_inexact  # noqa: E402
from tangent_ckpt.compiler.pipeline import _analyzed  # noqa: E402


def store_into_int_literal(x):
    a = np.array([1, 2, 3])
    a[0] = x
    return np.sum(a * 1.5) + x


def zeros_like_of_arange_filled_in_a_loop(x):
    t = np.arange(0, 4)
    y = np.zeros_like(t)
    y[0] = 1
    for i in range(1, 4):
        y[i] = y[i - 1] + x * 0.5
    return np.sum(y) + x


def augmented_write_into_int_array(x):
    a = np.array([1, 2, 3])
    a[1] += x
    return np.sum(a * 1.0) + x


def slice_store_into_arange(x):
    a = np.arange(4)
    a[1:3] = np.array([x, 2 * x])
    return np.sum(a * 1.0) + x


def store_into_full_of_int(x):
    a = np.full(3, 0)
    a[1] = x * 4.0
    return np.sum(a) * 1.0 + x


def store_into_bool_array(x):
    a = np.zeros(2, dtype=bool)
    a[0] = x
    return np.sum(a * x)


def store_into_int_dtype_argument(x, counts):
    c = counts.copy()
    c[0] = x * 3.0
    return np.sum(c * x)


def store_into_float_array(x):
    a = np.zeros(3)
    a[0] = x * x
    a[1:] = np.array([x, 2.0])
    return np.sum(a * 1.5)


def store_into_float32_array(x):
    a = np.zeros(3, dtype=np.float32)
    a[0] = x * x
    return np.sum(a * 1.5)


TRUNCATING = [store_into_int_literal, zeros_like_of_arange_filled_in_a_loop,
              augmented_write_into_int_array, slice_store_into_arange,
              store_into_full_of_int, store_into_bool_array]


def _check(fn, args, **options):
    expected = numeric_grad(fn, args, (0,))[0]
    got = tc.grad(fn, **options)(*args)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-7)
    return got


@pytest.mark.parametrize("fn", TRUNCATING + [store_into_float_array])
def test_store_gradient_equals_finite_differences(fn):
    _check(fn, (1.3,))


@pytest.mark.parametrize("fn", TRUNCATING)
def test_store_into_an_integer_array_passes_no_derivative(fn):
    """The stored value's derivative is dropped: the gradient is that of the rest
    of the function (1.0 from the ``+ x``, or ``sum(a)`` for the boolean one)."""
    got = tc.grad(fn)(1.3)
    want = {store_into_bool_array: 1.0}.get(fn, 1.0)
    assert got == pytest.approx(want)


def test_checkpointed_loop_filling_an_integer_array_equals_taped():
    taped = tc.grad(zeros_like_of_arange_filled_in_a_loop)(1.3)
    ckpt = tc.grad(zeros_like_of_arange_filled_in_a_loop, checkpoint=True, snapshots=2)(1.3)
    assert ckpt == taped == pytest.approx(1.0)


def test_integer_argument_copy_is_checked_at_run_time():
    """The argument's dtype is unknown when compiling: the same compiled code is
    right for an integer and a float argument."""
    ints, floats = np.array([1, 2, 3]), np.array([1.0, 2.0, 3.0])
    for counts in (ints, floats):
        expected = numeric_grad(store_into_int_dtype_argument, (1.3, counts), (0,))[0]
        got = tc.grad(store_into_int_dtype_argument)(1.3, counts)
        np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert counts is floats and ints.tolist() == [1, 2, 3]


@pytest.mark.parametrize("fn", TRUNCATING + [store_into_float_array])
def test_forward_mode_tangent_equals_finite_differences(fn):
    expected = numeric_grad(fn, (1.3,), (0,))[0]
    value, tangent = tc.jvp(fn)(1.3, 1.0)
    assert value == pytest.approx(fn(1.3))
    np.testing.assert_allclose(tangent, expected, rtol=1e-4, atol=1e-6)


def test_float32_array_keeps_the_stored_derivative():
    """float32 truncates nothing (it rounds): d/dx sum(1.5 * x**2) = 3 x, in both
    modes (finite differences are too coarse in float32 to compare with)."""
    _, tangent = tc.jvp(store_into_float32_array)(1.3, 1.0)
    assert tangent == pytest.approx(3 * 1.3, rel=1e-6)
    assert tc.grad(store_into_float32_array)(1.3) == pytest.approx(3 * 1.3, rel=1e-6)


def test_float_arrays_keep_the_unchecked_adjoint():
    """np.zeros((3,)) surely holds floats: its writes read no dtype at run time."""
    text = str(tc.grad(store_into_float_array).source)
    assert "setitem_adjoint_value(ba, 0, a_mul)" not in text
    assert ", a)" not in text.split("reverse sweep")[1]
    text = str(tc.grad(store_into_int_literal).source)
    assert "rt.setitem_adjoint_value(ba, 0, x, a)" in text


def _names(fn):
    function, bindings = _analyzed(fn, (0,))[:2]
    return surely_inexact(function, bindings)


def test_analysis_proves_float_makers_and_not_integer_ones():
    names = _names(store_into_float_array)
    assert "a" in names
    assert "a" not in _names(store_into_int_literal)
    assert "a" not in _names(store_into_full_of_int)
    assert "y" not in _names(zeros_like_of_arange_filled_in_a_loop)
    assert "c" not in _names(store_into_int_dtype_argument)   # a copy of an argument


def made(x):
    i = np.zeros(3, int)
    f = np.zeros(3, dtype=float)
    g = np.zeros_like(f)
    h = g * 2
    k = np.arange(3)
    m = k * 2
    n = k / 2
    p = np.exp(k)
    q = f[1:]
    r = np.sum(k)
    return np.sum(f + g + h + m + n + p + q + r + i) * x


def test_analysis_follows_dtypes_through_operations():
    names = _names(made)
    assert {"f", "g", "h", "n", "p", "q"} <= names
    assert not {"i", "k", "m", "r"} & names
