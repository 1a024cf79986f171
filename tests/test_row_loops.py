"""compiler/desugar/row_loops.py: ``for row in X`` (or ``enumerate(X)``) whose body
writes into ``row`` is the loop over ``X``'s indices with ``row = X[k]``, a view
the view pass follows; differentiated taped and checkpointed against central
finite differences.  The fence refused each of these as "a write into 'row' may
also change 'X'"."""

import ast

import gast
import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import numeric_grad
from tangent_ckpt.compiler.desugar.passes import desugar
from tangent_ckpt.compiler.frontend.parse import parse_function
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


def rows_kicked_each_step(P, dt, n):
    P = P * 1.0
    for t in range(n):
        for p in P:
            p += dt * np.tanh(p[::-1])
    return np.sum(P ** 2)


@pytest.mark.parametrize("options", RUNS, ids=["taped", "checkpointed"])
def test_a_row_loop_inside_a_time_loop_is_differentiated(options):
    args = (np.arange(6.0).reshape(3, 2) / 4, 0.3, 4)
    got = tc.grad(rows_kicked_each_step, wrt=(0, 1), **options)(*args)
    for g, e in zip(got, numeric_grad(rows_kicked_each_step, args, wrt=(0, 1))):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-8)


def keys_of_a_dict(x):
    d = {0: x, 1: 2.0 * x}
    total = 0.0
    for key in d:
        key += 1          # the key, an int: d[0] would be x
        total = total + key * np.sum(x)
    return total


def rebound_later_in_an_outer_loop(X, s):
    X = X * 1.0
    for t in range(2):
        for row in X:
            row *= s
        X = X + 1.0       # a new X for the next run: the iterator's and an index's agree,
    return np.sum(X ** 2)  # but this pass does not look round the loop


def _rewritten(fn):
    """The function after desugar alone (no fence), as text."""
    parsed = parse_function(fn)
    desugar(parsed)
    return ast.unparse(gast.gast_to_ast(parsed.node))


def test_a_loop_over_what_may_be_a_dict_or_comes_round_is_left_as_written():
    assert "for key in d:" in _rewritten(keys_of_a_dict)
    with pytest.raises(TangentCkptError):   # the fence takes the key for what d holds
        tc.grad(keys_of_a_dict)(np.array([0.3, -0.2]))
    assert "for row in X:" in _rewritten(rebound_later_in_an_outer_loop)
