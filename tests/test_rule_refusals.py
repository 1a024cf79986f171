"""What the rules cannot differentiate exactly is refused at compile time, naming
the user's file:line and the construct as spelled, with a hint that fits
(adjoints/registry.py: static parameters and ``only=``; normalize: ``and``/``or``,
``np.r_`` with slices)."""

import numpy as np
import pytest

import tangent_ckpt as tc
from tangent_ckpt.errors import TangentCkptError


def refused(fn, *words, wrt=(0,)):
    with pytest.raises(TangentCkptError) as info:
        tc.grad(fn, wrt=wrt).compile()
    text = str(info.value)
    assert __file__.rsplit("/", 1)[-1] in text, text
    for word in words:
        assert word in text, text
    return info.value


def f_initial(x, y):
    return np.sum(x, initial=y)


def f_qr_complete(a):
    q, r = np.linalg.qr(a, mode="complete")
    return np.sum(r)


def f_svd_hermitian(a):
    return np.sum(np.linalg.svd(a, compute_uv=False, hermitian=True))


def f_average_returned(x):
    avg, total = np.average(x, returned=True)
    return avg


def f_and_value(x, y):
    return (x and y) * 2.0  # (`z = x and y` alone is an if: desugar/boolean_values.py)


def f_r_slice(x):
    return np.sum(np.r_[x, 0:3])


def f_nanstd(x):
    return np.nanstd(x)


def f_list_of_arrays(x, y):
    z = [x, y]
    return np.sum(z * 2.0)


def test_a_differentiated_argument_without_an_adjoint():
    err = refused(f_initial, "np.sum", "initial", "register_adjoint", wrt=(1,))
    assert err.lineno == f_initial.__code__.co_firstlineno + 1


@pytest.mark.parametrize("fn, words", [
    (f_qr_complete, ("np.linalg.qr", "mode='complete'", "reduced")),
    (f_svd_hermitian, ("np.linalg.svd", "hermitian=True")),
    (f_average_returned, ("np.average", "returned=True")),
], ids=lambda v: getattr(v, "__name__", ""))
def test_an_option_the_rule_is_not_written_for(fn, words):
    refused(fn, *words)


def test_and_or_as_a_value():
    refused(f_and_value, "and", "np.where")


def test_row_join_with_a_slice():
    refused(f_r_slice, "np.r_", "np.concatenate")


def test_a_function_without_a_rule_names_it():
    refused(f_nanstd, "np.nanstd", "register_adjoint")


def test_a_list_of_arrays_where_an_array_is_expected():
    err = refused(f_list_of_arrays, "np.stack", "list")
    assert err.lineno == f_list_of_arrays.__code__.co_firstlineno + 2


def test_boolean_and_or_still_work():
    def f(x):
        flag = x[0] > 0 and x[1] < 2
        return np.sum(x * x) if flag else np.sum(x)
    np.testing.assert_allclose(tc.grad(f)(np.array([1.0, 1.0])), [2.0, 2.0])


# --- refused at run time: the shapes decide, and they are known only then -------------

def f_svd_extra_columns(a):
    u, s, vh = np.linalg.svd(a)
    return np.sum(u)


def f_qr_wide(a):
    q, r = np.linalg.qr(a)
    return np.sum(r)


@pytest.mark.parametrize("fn, shape, words", [
    (f_svd_extra_columns, (4, 3), "not unique"),
    (f_qr_wide, (2, 3), "m >= n"),
])
def test_non_unique_adjoints_raise_instead_of_guessing(fn, shape, words):
    a = np.random.default_rng(0).standard_normal(shape)
    with pytest.raises(ValueError, match=words):
        tc.grad(fn)(a)
