"""compiler/desugar/row_loops.py: ``for row in X`` (or ``enumerate(X)``) whose body
writes into ``row`` is the loop over ``X``'s indices with ``row = X[k]``, a view
the view pass follows; differentiated taped and checkpointed against central
finite differences.  The fence refused each of these as "a write into 'row' may
also change 'X'"."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import numeric_grad
from tangent_ckpt.compiler.pipeline import desugared
from tangent_ckpt.errors import TangentCkptError

RUNS = [{}, {"checkpoint": True, "snapshots": 2}]


def rows_scaled(X, s):
    X = X * 1.0
    for row in X:
        row *= s
    return np.sum(X ** 2)


def rows_rewritten_with_their_index(X, s):
    X = X * 1.0
    for i, row in enumerate(X):
        row[:] = np.tanh(row * s + i)
    return np.sum(X ** 3)


def particles_kicked(P, V, dt):
    P = P * 1.0
    for k, p in enumerate(P):
        p += dt * V[k]
        p *= 1.0 - 0.1 * np.sum(p ** 2)
    return np.sum(P ** 2)


def rows_of_a_view(X, s):
    X = X * 1.0
    inner = X[:, 1:]
    for row in inner:
        row -= s * row[0]
    return np.sum(X ** 2)


@pytest.mark.parametrize("options", RUNS, ids=["taped", "checkpointed"])
@pytest.mark.parametrize("fn, args", [
    (rows_scaled, (np.arange(6.0).reshape(2, 3) / 5, 0.7)),
    (rows_rewritten_with_their_index, (np.arange(6.0).reshape(2, 3) / 5, 0.7)),
    (particles_kicked, (np.arange(6.0).reshape(3, 2) / 3,
                        np.array([[1.0, 2.0], [0.5, -1.0], [0.0, 0.3]]), 0.3)),
    (rows_of_a_view, (np.arange(12.0).reshape(3, 4) / 7, 0.4)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_a_loop_writing_into_the_rows_it_iterates_is_differentiated(fn, args, options):
    wrt = tuple(range(len(args)))
    got = tc.grad(fn, wrt=wrt, **options)(*args)
    for g, e in zip(got, numeric_grad(fn, args, wrt=wrt)):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-8)


def test_desugar_writes_the_loop_over_indices():
    text = desugared(rows_scaled)
    assert "for row_index in range(len(X)):\n        row = X[row_index]" in text, text
    text = desugared(rows_rewritten_with_their_index)
    assert "for i in range(len(X)):\n        row = X[i]" in text, text


def rows_read_only(X):
    total = 0.0
    for row in X:
        total = total + np.sum(row ** 2)
    return total


def array_rebound_in_the_loop(X, s):
    X = X * 1.0
    for row in X:
        row *= s
        X = X * 2.0    # the iterator keeps the old X: an index would read the new one
    return np.sum(X ** 2)


def test_other_loops_are_left_as_written():
    assert "for row in X:" in desugared(rows_read_only)
    with pytest.raises(TangentCkptError):
        desugared(array_rebound_in_the_loop)   # refused, as before
