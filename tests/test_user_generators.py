"""desugar/user_generators.py: ``enumerate`` of a call of the user's generator is
the loop over the generator counting its trips, and a comprehension over one
(``comprehension_loops.py``'s first run) its loop -- both then inlined by
``inline_functions.py``, in the function and in the helpers it inlines.  Each
gradient is checked against central finite differences, taped and checkpointed."""

import numpy as np
import pytest

import tangent_ckpt as tc
from construct_check import check_construct
from tangent_ckpt.compiler.pipeline import desugared

X = np.array([0.3, 0.7, 1.1])


def states(x, n):
    for _ in range(n):
        x = np.tanh(x) * 1.2 + 0.1
        yield x


def pairs(x, n):
    v = 0.0 * x
    for _ in range(n):
        v = v - 0.1 * x
        x = x + 0.1 * v
        yield x, v


def counted(x, n):
    total = 0.0
    for k, s in enumerate(states(x, n)):
        total = total + k * np.sum(s)
    return total


def counted_from_a_start_left_early(x, n):
    total = 0.0
    for k, (a, b) in enumerate(pairs(x, n), 1):
        if k == 2:
            continue
        total = total + k * np.sum(a * b)
        if k >= 3:
            break
    return total * k   # the count the last trip bound


def counted_by_a_comprehension(x, n):
    return sum(k * np.sum(s) for k, s in enumerate(states(x, n)))


def keyed_by_a_dict_comprehension(x, n):
    d = {k: np.sum(s) for k, s in enumerate(states(x, n))}
    return d[0] * d[1]


def indexing_by_the_count(x, n):
    ws = np.array([0.5, 1.0, 1.5, 2.0, 2.5, 3.0])
    start = 2
    total = 0.0
    for k, s in enumerate(states(x, n), start):
        total = total + ws[k] * np.sum(s)
    return total


def _helper_total(x, n):
    return sum(np.sum(s) for s in states(x, n)) + sum(k for k, _ in enumerate(states(x, 2)))


def in_a_helper(x, n):
    return _helper_total(x * 2.0, n) + _helper_total(x, 2)


@pytest.mark.parametrize("f", [counted, counted_from_a_start_left_early,
                               counted_by_a_comprehension, keyed_by_a_dict_comprehension,
                               indexing_by_the_count, in_a_helper],
                         ids=lambda f: f.__name__)
def test_enumerate_or_a_comprehension_over_a_users_generator_is_inlined(f):
    """They were refused ('generators (yield) cannot be differentiated', 'a loop
    over a generator that could not be inlined')."""
    assert "yield" not in str(desugared(f)).split("\n\n\n")[0]
    check_construct(f, (X, 4), (0,), autograd=False)


def test_the_count_is_written_at_the_top_of_each_trip():
    text = str(desugared(counted)).split("\n\n\n")[0]
    assert "k_next = 0" in text and "k = k_next\n" in text and "k_next = k_next + 1" in text, \
        text
    assert "enumerate" not in text, text


def read_after_no_trip(x, n, m):
    total = 0.0
    for k, s in enumerate(states(x, m)):
        total = total + np.sum(s)
    return total * k


def test_the_count_is_unbound_after_a_loop_that_made_no_trip():
    for options in ({}, {"checkpoint": True, "snapshots": 2}):
        with pytest.raises(UnboundLocalError):
            tc.grad(read_after_no_trip, **options)(X, 3, 0)
    with pytest.raises(UnboundLocalError):
        read_after_no_trip(X, 3, 0)
