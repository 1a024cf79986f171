"""desugar/enumerate_starts.py: ``enumerate(xs, start=k)`` is ``enumerate(xs, k)``;
a loop over it unrolled or indexed reads the start Python gives (it crashed
the lowering with an AttributeError and no file or line)."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad
from source_lines import line_of
from tangent_ckpt.compiler.pipeline import desugared
from tangent_ckpt.errors import UnsupportedSyntaxError

X = np.array([0.3, -0.2, 0.5])
MODES = [{}, {"checkpoint": True, "snapshots": 2}]


def weighted_by_a_start(x):
    out = x * 0.0
    for j, w in enumerate((0.5, 0.25), start=1):
        out = out + w * x / j
    return np.sum(out ** 2)


def _weighted(x):
    out = x * 0.0
    for j, w in enumerate([0.5, 0.25, 0.125], start=2):
        out = np.tanh(out + w * x * j)
    return out


def helper_weighted_by_a_start(x, n):
    for t in range(n):
        x = x + 0.1 * _weighted(x)
    return np.sum(x ** 2)


@pytest.mark.parametrize("options", MODES, ids=["taped", "checkpointed"])
@pytest.mark.parametrize("f, args", [
    (weighted_by_a_start, (X,)),
    (helper_weighted_by_a_start, (X, 3)),
], ids=["display", "helper_display"])
def test_a_start_given_by_keyword_is_the_start(f, args, options):
    check_grad(f, args, df=tc.grad(f, **options))
    value, _ = tc.value_and_grad(f, **options)(*args)
    assert value == pytest.approx(f(*args), rel=1e-12)


def _counted(items, start=0):
    return zip(range(start, start + len(items)), items)


def enumerate_of_the_users(x):
    enumerate = _counted  # noqa: A001 - the function's own enumerate, which is left
    out = x * 0.0
    for j, w in enumerate((0.5, 0.25), start=1):
        out = out + w * x / j
    return np.sum(out)


def test_a_users_own_enumerate_is_left_as_written():
    assert "start=1" in desugared(enumerate_of_the_users)


A = np.array([[0.2, -0.1, 0.4], [0.3, 0.5, -0.6], [-0.7, 0.1, 0.2]])


def rows_weighted_from_one(x, A):
    y = 0.0
    for i, row in enumerate(A, start=1):
        y = y + i * np.sum(np.sin(row * x))
    return y + i      # the last trip's number, as in Python


def rows_from_a_parameter(x, A, k):
    s = 0.0
    for i, row in enumerate(A, k):
        s = s + np.tanh(i * row @ x)
    return s


def zipped_rows_from_one(x, A):
    s = 0.0
    for t, (a, b) in enumerate(zip(A, A[::-1]), 1):
        t = t * 2      # the body rebinding the index: Python's next trip counts on
        s = s + t * np.dot(a, b * x)
    return s


@pytest.mark.parametrize("options", MODES, ids=["taped", "checkpointed"])
@pytest.mark.parametrize("f, args", [
    (rows_weighted_from_one, (X, A)),
    (rows_from_a_parameter, (X, A, 3)),
    (zipped_rows_from_one, (X, A)),
], ids=["rows", "start_given", "zip_rows"])
def test_a_loop_over_rows_counts_from_its_start(f, args, options):
    """``for i, row in enumerate(A, 1)`` over an array's rows: written counting
    from 0 (``i = i_0 + 1``); it was refused ("add the start to the index")."""
    check_grad(f, args, wrt=(0, 1), df=tc.grad(f, wrt=(0, 1), **options))
    value, _ = tc.value_and_grad(f, wrt=(0, 1), **options)(*args)
    assert value == pytest.approx(f(*args), rel=1e-12)
    assert "i = i_0 + 1" in desugared(rows_weighted_from_one)


def _draw(rng):
    return int(rng.integers(1, 3))


def start_and_rows_both_drawn(x, A, seed):
    rng = np.random.default_rng(seed)
    s = 0.0
    for i, row in enumerate(rng.permutation(A), _draw(rng)):   # START DRAWN
        s = s + i * np.sum(row * x)
    return s


def test_a_start_that_could_run_in_another_order_is_refused_at_its_line():
    """The start and the iterable both draw from ``rng``: moving the start
    before the loop would change which draw each gets, so the loop is refused,
    naming its line (the lowering refused every start, with no reason)."""
    with pytest.raises(UnsupportedSyntaxError) as info:
        tc.grad(start_and_rows_both_drawn)(X, A, 0)
    message = str(info.value)
    assert f"test_enumerate_starts.py:{line_of(start_and_rows_both_drawn, '# START DRAWN')}:" \
        in message, message
    assert "which runs first matters" in message, message
