"""compiler/memory_sharing.py: the fence's tables of views, new results and writes
are derived from the rows of the rule registry, and a function without a row is
never taken to return a new array."""

import os

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad
from source_lines import line_of
from tangent_ckpt.adjoints import registry
from tangent_ckpt.compiler import memory_sharing
from tangent_ckpt.compiler.memory_sharing import UNKNOWN_VALUE, new_by_default, returns_new
from tangent_ckpt.errors import TransformError

HERE = os.path.basename(__file__)


def _has(table, fn):
    return any(fn is f for f in table)


def test_the_tables_are_the_rows():
    for fn in memory_sharing.VIEW_FUNCTIONS:
        assert registry.facts(fn).view not in (False, None)
    for fn in memory_sharing.WRITING_FUNCTIONS:
        assert registry.facts(fn).writes is not None
    for fn in memory_sharing.COPY_FLAG_FUNCTIONS:
        assert registry.facts(fn).new_unless is not None
    for name in memory_sharing.FRESH_METHODS:
        assert registry.method_facts(name).view is False
    assert _has(memory_sharing.VIEW_FUNCTIONS, np.reshape)
    assert _has(memory_sharing.VIEW_FUNCTIONS, np.lib.stride_tricks.as_strided)
    assert not _has(memory_sharing.VIEW_FUNCTIONS, np.sum)
    assert _has(memory_sharing.WRITING_FUNCTIONS, np.copyto)
    assert _has(memory_sharing.COPY_FLAG_FUNCTIONS, np.array)
    assert {"reshape", "diagonal", "conj", "view", "get"} <= memory_sharing.VIEW_METHODS
    assert {"sum", "copy", "flatten", "astype", "normal"} <= memory_sharing.FRESH_METHODS
    assert "fill" in memory_sharing.ARRAY_WRITING_METHODS
    assert {"fill", "append", "update"} <= memory_sharing.WRITING_METHODS
    assert {len, float, abs, int, range} <= memory_sharing.FRESH_BUILTINS
    assert max not in memory_sharing.FRESH_BUILTINS     # max(a, b) is a or b


def test_only_a_row_makes_a_result_new():
    assert returns_new(np.sum) and returns_new(np.zeros) and returns_new(np.tanh)
    assert not returns_new(np.reshape)
    assert not returns_new(np.frombuffer)      # NumPy, but without a row: a possible view
    assert not returns_new(np.fft.hfft)
    assert returns_new(np.bitwise_and)         # a ufunc allocates its result
    assert not returns_new(lambda x: x)


@pytest.mark.parametrize("fn, npositional, keywords, new", [
    (np.array, 1, {}, True),
    (np.array, 1, {"copy": True}, True),
    (np.array, 1, {"copy": False}, False),
    (np.array, 1, {"copy": None}, False),           # NumPy 2: copy only if needed
    (np.array, 1, {"copy": UNKNOWN_VALUE}, False),
    (np.nan_to_num, 1, {}, True),
    (np.nan_to_num, 2, {}, False),                  # np.nan_to_num(x, False)
    (np.diff, 1, {}, True),
    (np.diff, 2, {}, False),                        # np.diff(a, 0) is a
    (np.diff, 1, {"n": 1}, True),
    (np.ndarray, 2, {}, True),                      # np.ndarray(shape, dtype)
    (np.ndarray, 1, {"buffer": UNKNOWN_VALUE}, False),
    (np.array, None, {}, False),                    # np.array(*args)
    (np.sum, 1, {}, False),                         # not a new_unless row
])
def test_new_by_default(fn, npositional, keywords, new):
    assert new_by_default(fn, npositional, keywords) is new


# --- the fence: a write through the result of a NumPy function without a row ------

def write_through_unrowed_result(x):
    c = np.ones(4)
    w = np.frombuffer(c)   # a view of c; np.frombuffer has no row
    w[0] = 2.0  # WRITE
    return np.sum(x * c)


def write_through_positional_no_copy(x):
    u = x * 1.0
    w = np.nan_to_num(u, False)   # u itself
    w[0] = 0.0  # WRITE
    return np.sum(u * u)


def write_through_diff_zero(x):
    u = x * 1.0
    w = np.diff(u, 0)   # u itself
    w[0] = 0.0  # WRITE
    return np.sum(u * u)


@pytest.mark.parametrize("fn, written, other", [
    (write_through_unrowed_result, "w", "c"),
    (write_through_positional_no_copy, "w", "u"),   # was a wrong gradient: 2 x[0]
    (write_through_diff_zero, "w", "u"),
])
def test_a_possible_view_is_fenced(fn, written, other):
    with pytest.raises(TransformError) as info:
        tc.grad(fn)(np.arange(1.0, 5.0))
    message = str(info.value)
    assert f"{HERE}:{line_of(fn, '# WRITE')}:" in message, message
    assert f"'{written}'" in message and f"'{other}'" in message, message


def write_into_new_results(x):
    d = np.diff(x * 1.0)
    d[0] = 0.0
    a = np.array(x)
    a[1] = 0.0
    b = np.ndarray(x.shape)
    b[:] = 2.0
    return np.sum(d * d) + np.sum(a * x) + np.sum(b * x)


def test_new_results_are_still_written_in_place():
    check_grad(write_into_new_results, (np.array([0.3, -0.2, 0.7, 1.1]),))
