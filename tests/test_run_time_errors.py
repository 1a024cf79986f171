"""Refusals raised while a gradient runs name the user's file:line
(compiler/run_time_errors.py): a subscript write whose index names an element
twice is found by the reverse sweep, taped or checkpointed."""

import inspect

import numpy as np
import pytest

import tangent_ckpt as tc
from construct_check import check_construct


def repeated_constant_index(x):
    y = x.copy()
    y[[0, 0, 1]] += x[2]
    return np.sum(y ** 2)


def repeated_index_array_in_a_loop(x, idx):
    y = x.copy()
    for _ in range(3):
        y[idx] = x[2] * y[1]
    return np.sum(y ** 2)


def _line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("options", [{}, {"checkpoint": True}, {"checkpoint": True,
                                                                 "snapshots": 1}])
@pytest.mark.parametrize("fn, args, text", [
    (repeated_constant_index, (np.ones(3),), "y[[0, 0, 1]]"),
    (repeated_index_array_in_a_loop, (np.ones(3), np.array([0, 2, 0])), "y[idx] ="),
])
def test_repeated_index_refusal_names_the_users_line(fn, args, text, options):
    before = [np.copy(a) for a in args]
    with pytest.raises(tc.TangentCkptError) as caught:
        tc.grad(fn, **options)(*args)
    where = f"test_run_time_errors.py:{_line_of(fn, text)}: "
    assert where in str(caught.value)
    assert "names an element more than once" in str(caught.value)
    for b, a in zip(before, args):
        assert np.array_equal(a, b)


def test_unique_index_array_is_still_differentiated():
    x, idx = np.array([0.5, -1.0, 2.0]), np.array([2, 0])
    check_construct(repeated_index_array_in_a_loop, (x, idx), wrt=(0,), autograd=False)
