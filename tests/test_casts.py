"""Casts in the differentiated path (lower/calls.py ``CallLowering.cast`` and
``rt.cast_result``): a result of integers or truth values is piecewise constant
in its input, so its derivative is 0, whichever way the cast is spelled
(``dtype=`` of any rule, ``x.astype``, ``int(...)``, ``np.int64(...)``,
``round``); a floating or complex dtype keeps the derivative (a real floating one
of a complex value its real part: analyze/complex_values.py ``takes_real_part``,
``rt.setitem_adjoint_value``); a dtype known only at run time is decided when the
gradient runs."""

import math
import warnings

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad, numeric_grad

X = np.array([1.3, 2.7, -0.4])


def _integer_casts():
    return {
        "asarray_dtype_int": lambda x: np.sum(np.asarray(x, dtype=int) ** 2 * x),
        "array_dtype_int64": lambda x: np.sum(np.array(x, dtype=np.int64) ** 2 * x),
        "array_positional_int": lambda x: np.sum(np.array(x, int) ** 2 * x),
        "asarray_string_i8": lambda x: np.sum(np.asarray(x, "i8") ** 2 * x),
        "asarray_bool": lambda x: np.sum(np.asarray(x, dtype=bool) * x),
        "asarray_uint8": lambda x: np.sum(np.asarray(x * x, np.uint8) * x),
        "array_ndmin": lambda x: np.sum(np.array(x, dtype=int, ndmin=2) ** 2 * x),
        "array_of_items": lambda x: np.sum(np.array([x[0], x[1]], dtype=int) * x[:2]),
        "astype_int32": lambda x: np.sum(x.astype(np.int32) ** 2 * x),
        "astype_keyword": lambda x: np.sum(x.astype(dtype=int, copy=True) * x),
        "sum_dtype_int": lambda x: np.sum(x * 3.0, dtype=int) * np.sum(x),
        "cumsum_dtype_int": lambda x: np.sum(np.cumsum(x * 3.0, dtype=int) * x),
        "full_like_dtype_int": lambda x: np.sum(np.full_like(x, x[0] * 3.0, dtype=int) * x),
        "linspace_dtype_int": lambda x: np.sum(np.linspace(0.0, x[0] * 5.0, 3, dtype=int) * x),
        "int_builtin": lambda x: int(x[0] * 3.0) * np.sum(x),
        "numpy_int_type": lambda x: np.int64(x[1] * 3.0) * np.sum(x ** 2),
        "numpy_bool_type": lambda x: np.bool_(x[0]) * np.sum(x ** 2),
        "round_builtin": lambda x: round(x[0] * 3.0) ** 2 + np.sum(x),
        "round_digits": lambda x: round(x[0] * 3.0, 1) * np.sum(x),
        "math_floor": lambda x: math.floor(x[0] * 3.0) * np.sum(x),
        "math_trunc": lambda x: math.trunc(x[1] * 3.0) * np.sum(x),
    }


@pytest.mark.parametrize("name", sorted(_integer_casts()))
def test_integer_cast_has_derivative_zero(name):
    f = _integer_casts()[name]
    check_grad(f, (X,))


def _float_casts():
    return {
        "asarray_float64": lambda x: np.sum(np.asarray(x, dtype=np.float64) ** 3),
        "asarray_float_positional": lambda x: np.sum(np.asarray(x, float) ** 3),
        "astype_float": lambda x: np.sum(x.astype(float) ** 3),
        "array_complex_abs": lambda x: np.sum(np.abs(np.asarray(x, dtype=complex) * (1 + 2j))
                                              ** 2),
        "complex_to_real_drops_imaginary": lambda x: np.sum(
            np.asarray((x * (1 + 2j)) ** 2, dtype=float) * x),
    }


@pytest.mark.parametrize("name", sorted(_float_casts()))
def test_floating_cast_keeps_the_derivative(name):
    with warnings.catch_warnings():
        # np.exceptions is NumPy 1.25+; np.ComplexWarning was removed from np in 2.0
        warnings.simplefilter("ignore", getattr(np, "exceptions", np).ComplexWarning)
        check_grad(_float_casts()[name], (X,))


def test_float32_cast_keeps_the_derivative_of_the_identity():
    f = lambda x: np.sum(np.asarray(x, dtype=np.float32).astype(np.float64) * x)  # noqa: E731
    got = tc.grad(f)(X)
    np.testing.assert_allclose(got, 2 * X, rtol=1e-6)


def run_time_dtype(x, dt):
    y = np.asarray(x * x, dtype=dt)
    return np.sum(y * x) + np.sum(x.astype(dt) ** 3) + np.sum(np.cumsum(x, dtype=dt) * x)


@pytest.mark.parametrize("dt", [int, np.int32, bool, float, np.float64],
                         ids=lambda d: getattr(d, "__name__", str(d)))
def test_dtype_known_at_run_time_is_decided_when_the_gradient_runs(dt):
    check_grad(run_time_dtype, (X, dt))
    v = np.array([0.3, -1.0, 2.0])
    _, tangent = tc.jvp(run_time_dtype)(X, dt, v)
    eps = 1e-6
    expected = (run_time_dtype(X + eps * v, dt) - run_time_dtype(X - eps * v, dt)) / (2 * eps)
    np.testing.assert_allclose(tangent, expected, rtol=1e-6, atol=1e-8)
    hv = tc.hvp(run_time_dtype)(X, dt, v)
    grad = tc.grad(run_time_dtype)
    np.testing.assert_allclose(hv, (grad(X + eps * v, dt) - grad(X - eps * v, dt)) / (2 * eps),
                               rtol=1e-5, atol=1e-6)


def test_integer_cast_has_no_tangent_and_no_curvature():
    def f(x):
        return np.sum(np.asarray(x * x, dtype=int) * x ** 2) + np.sum(x, dtype=np.int32) * x[0]
    v = np.array([0.3, -1.0, 2.0])
    y = np.asarray(X * X, dtype=int)
    _, tangent = tc.jvp(f)(X, v)
    np.testing.assert_allclose(tangent, np.sum(2 * y * X * v) + int(np.sum(X)) * v[0])
    np.testing.assert_allclose(tc.hvp(f)(X, v), 2 * y * v)


def quantized_loop(x, n):
    for t in range(n):
        levels = np.asarray(x * 4.0, dtype=int)
        x = np.tanh(x * 0.9 + 0.05 * levels) + 0.01 * int(x[0] * 10.0) * x
    return np.sum(x ** 2)


LOOP_OPTIONS = [dict(), dict(checkpoint=True), dict(checkpoint=True, snapshots=2),
                dict(checkpoint=True, memory_budget="40kB")]


@pytest.mark.parametrize("options", LOOP_OPTIONS,
                         ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "taped")
def test_integer_cast_in_a_checkpointed_loop(options):
    x = np.array([0.31, -0.52, 0.83])
    got = check_grad(quantized_loop, (x, 6), df=tc.grad(quantized_loop, **options))
    taped = tc.grad(quantized_loop)(x, 6)
    np.testing.assert_allclose(got[0], taped, rtol=1e-12, atol=1e-14)
    assert np.allclose(taped, numeric_grad(quantized_loop, (x, 6))[0], rtol=1e-6, atol=1e-8)


def test_cast_of_a_run_time_dtype_reads_as_one_call():
    source = tc.grad(run_time_dtype).source
    assert "rt.cast_result(y_asarray, dt)" in source
    assert "rt.through_cast(" in source


def float64_of_an_item(x):
    return np.float64(x[0]) * x[1]


def float32_of_an_array(x):
    return np.sum(np.float32(x) * 2.0) + np.longdouble(x[2]) * 1.0


def float64_accumulated(x, n):
    s = np.float64(0.0)
    for t in range(n):
        s = s + np.double(np.sum(x)) * t
    return s


@pytest.mark.parametrize("f, args", [(float64_of_an_item, ()), (float32_of_an_array, ()),
                                     (float64_accumulated, (3,))],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_numpy_float_scalar_types_are_casts_that_keep_the_derivative(f, args):
    """``np.float64(x[0])``, ``np.float32(x)``: refused as 'no adjoint rule for
    float64' where ``float(x[0])`` passed."""
    # rounding to float32 and float16 has derivative 1: the float64 program's gradient
    exact = float64_twin if f is float32_of_an_array else f
    for options in ({}, {"checkpoint": True, "snapshots": 2}):
        grad = tc.grad(f, **options)(X, *args)
        assert grad.dtype == X.dtype  # the argument's, whatever dtype the code worked in
        np.testing.assert_allclose(grad, numeric_grad(exact, [X, *args], (0,))[0], rtol=1e-6)


def float64_twin(x):
    return np.sum(x * 2.0) + x[2] * 1.0


# complex to real: the cast keeps the real part, so the complex value's adjoint is
# the real part of the real result's (which may carry an imaginary part that is no
# derivative, when the real result then multiplies a complex value)

_Z = np.array([1.0 + 2.0j, -0.5 + 0.3j, 0.2 - 1.0j])


def _phases_of(r):
    return np.sum(np.real(np.exp(1j * r))) + np.sum(np.imag(r * _Z))


def _complex_to_real_casts():
    def setitem(x):
        r = np.zeros(3)
        r[:] = x * (1 + 1j)
        return _phases_of(r)

    def setitem_elements(x):
        w = x * (1 + 1j)
        r = np.zeros(3)
        r[0] = w[0]
        r[1:] = w[1:]
        return _phases_of(r)
    return {
        "astype_float": lambda x: _phases_of((x * (1 + 1j)).astype(float)),
        "asarray_dtype_float": lambda x: _phases_of(np.asarray(x * (1 + 1j), dtype=float)),
        "asarray_positional_float": lambda x: _phases_of(np.asarray(x * (1 + 1j), float)),
        "array_dtype_float64": lambda x: _phases_of(np.array(x * (1 + 1j), dtype=np.float64)),
        "asarray_run_time_dtype": lambda x, dt=float: _phases_of(
            np.asarray(x * (1 + 1j), dtype=dt)),
        "sum_dtype_float": lambda x: np.real(np.exp(1j * np.sum(x * (1 + 1j), dtype=float))),
        "times_a_complex_constant": lambda x: np.sum(np.imag(
            np.asarray(x * _Z, dtype=np.float64) * _Z)),
        "setitem": setitem,
        "setitem_elements": setitem_elements,
    }


@pytest.mark.parametrize("name", sorted(_complex_to_real_casts()))
@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
def test_a_complex_to_real_cast_passes_on_the_real_part_of_the_adjoint(name, options):
    """Found by the dtypes hunt: ``w.astype(float)``, ``np.asarray(w, dtype=float)``,
    ``np.array(w, dtype=float)`` and ``r[:] = w`` passed the real result's adjoint to
    ``w`` unchanged, imaginary part and all: the gradient was wrong (2x finite
    differences) wherever the real result later multiplied a complex value."""
    f = _complex_to_real_casts()[name]
    check_grad(f, (X,), df=tc.grad(f, **options))
    v = np.array([0.3, -1.0, 2.0])
    _, tangent = tc.jvp(f)(X, v)
    eps = 1e-6
    np.testing.assert_allclose(tangent, (f(X + eps * v) - f(X - eps * v)) / (2 * eps),
                               rtol=1e-6, atol=1e-8)


def _real_buffer_in_a_loop(x, n):
    r = np.zeros(3)
    s = 0.0
    for t in range(n):
        r[:] = x * (1 + 1j) * (t + 1)
        s = s + _phases_of(r)
    return s


def _cast_in_a_loop(x, n):
    s = 0.0
    for t in range(n):
        s = s + _phases_of((x * (1 + 1j) * (t + 1)).astype(float))
    return s


@pytest.mark.parametrize("f", [_real_buffer_in_a_loop, _cast_in_a_loop])
@pytest.mark.parametrize("options", LOOP_OPTIONS,
                         ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items()) or "taped")
@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
def test_a_complex_to_real_cast_in_a_loop(f, options):
    """The real buffer ``r`` written with complex values in a loop: its adjoint
    stays real (UFuncTypeError adding a complex contribution into it before)."""
    check_grad(f, (X, 3), df=tc.grad(f, **options))


def test_a_real_cast_makes_a_real_value_for_the_rules_written_for_real_input():
    """``np.asarray(w, dtype=float)`` is real: np.linalg.norm of it is no complex
    value (it was refused)."""
    f = lambda x: np.linalg.norm(np.asarray(x * (1 + 1j), dtype=float))  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", getattr(np, "exceptions", np).ComplexWarning)
        check_grad(f, (X,))
