"""Calls the compiler cannot see into: a library function without an adjoint
rule (scipy.integrate.solve_ivp) is refused by name at the user's line, also
when a lambda is passed to it or when only its result's attribute (sol.y) is
differentiated; another library's array-like (a pandas Series) is refused
with the conversion to make."""

import inspect

import numpy as np
import pytest

import tangent_ckpt as tc

try:
    from scipy.integrate import solve_ivp
except ImportError:  # the [scipy] extra
    solve_ivp = None


def _line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if text in line)


def solve_with_a_lambda(y0, k):
    sol = solve_ivp(lambda t, y: -k * y, (0.0, 1.0), y0)
    return np.sum(sol.y[:, -1])


def decay(t, y, k):
    return -k * y


def solve_with_args(y0, k):
    sol = solve_ivp(decay, (0.0, 1.0), y0, args=(k,))
    return np.sum(sol.y[:, -1])


def solve_with_a_nested_def(y0, k):
    def rhs(t, y):
        return -k * y
    sol = solve_ivp(rhs, (0.0, 1.0), y0)
    return np.sum(sol.y[:, -1])


@pytest.mark.parametrize("fn, text, said", [
    (solve_with_a_lambda, "sol = solve_ivp", "calls the lambda passed to it"),
    (solve_with_args, "sol = solve_ivp", "register one"),
    (solve_with_a_nested_def, "sol = solve_ivp", "calls the function rhs passed to it"),
])
@pytest.mark.parametrize("wrt", [0, 1])
def test_a_solver_without_a_rule_is_refused_by_name_at_its_line(fn, text, said, wrt):
    if solve_ivp is None:
        pytest.skip("needs SciPy")
    with pytest.raises(tc.UnsupportedFunctionError) as caught:
        tc.grad(fn, wrt=wrt)(np.ones(2), 0.5)
    message = str(caught.value)
    assert f"{__file__}:{_line_of(fn, text)}: no adjoint rule for " \
           "scipy.integrate.solve_ivp" in message, message
    assert said in message and "register_adjoint" in message
    assert "LocalFunction" not in message and "sol.y" not in message


class Labeller:
    def __init__(self, centres):
        self.centres = centres

    def compute_label(self, x):
        return np.sum((self.centres - x) ** 2)

    def predict(self, X):
        return np.apply_along_axis(self.compute_label, 1, X)


def labels_by_a_method(X):
    return np.sum(Labeller(X[0] * 2.0).predict(X))


def test_a_bound_method_passed_to_a_library_call_is_refused_as_a_function_is():
    """``np.apply_along_axis(self.compute_label, 1, X)`` (a k-means ``predict``):
    the bound method reached the reverse transform as an operand, a bare
    TypeError about ``MethodValue``."""
    with pytest.raises(tc.UnsupportedFunctionError) as caught:
        tc.grad(labels_by_a_method)(np.arange(6.0).reshape(3, 2))
    message = str(caught.value)
    line = _line_of(Labeller.predict, "apply_along_axis")
    assert f"{__file__}:{line}: no adjoint rule for numpy.apply_along_axis" in message
    assert "calls the method self.compute_label passed to it" in message
    assert "MethodValue" not in message


class Series:
    """A stand-in for pandas.Series (pandas is not always installed): an
    array-like of another library, with __array__ and no __array_function__."""

    def __init__(self, values):
        self._values = np.asarray(values, dtype=float)
        self._range = range(len(values))

    def __array__(self, dtype=None, copy=None):
        return self._values


Series.__module__ = "pandas.core.series"


def squares(x, w):
    return np.sum(w * x ** 2)


@pytest.mark.parametrize("make", [lambda v: Series(v), lambda v: _real_series(v)],
                         ids=["stand-in", "pandas"])
@pytest.mark.parametrize("position", [0, 1])
def test_a_pandas_series_is_refused_with_the_conversion_to_make(make, position):
    args = [np.array([1.0, 2.0]), np.array([0.5, 0.25])]
    args[position] = make(args[position])
    name = "xw"[position]
    with pytest.raises(tc.WrtError, match=f"argument '{name}' is a pandas Series: .*"
                                          rf"np.asarray\({name}\).*{name}.to_numpy\(\)"):
        tc.grad(squares)(*args)


def _real_series(values):
    pandas = pytest.importorskip("pandas")
    return pandas.Series(values)


def test_dask_style_arrays_are_not_taken_for_foreign_array_likes():
    from tangent_ckpt.container_args import foreign_array

    class Duck:
        def __array__(self, dtype=None, copy=None):
            return np.zeros(2)

        def __array_function__(self, func, types, args, kwargs):
            return NotImplemented
    Duck.__module__ = "dask.array.core"
    assert not foreign_array(Duck()) and foreign_array(Series([1.0]))
    assert not foreign_array(np.ones(2)) and not foreign_array(1.0)
