"""compiler/desugar/shuffle_calls.py: ``np.random.shuffle(a)`` / ``rng.shuffle(a)``
on an array is the write ``a[...] = np.random.permutation(a)``, which draws the
same numbers: an SGD loop shuffling its index array each epoch is differentiated
taped and checkpointed, equal to central finite differences with the same seed.
A shuffle of a list, or by a generator not known when compiling, stays as written
(refused, as before)."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import numeric_grad
from tangent_ckpt.compiler.pipeline import desugared
from tangent_ckpt.errors import UnsupportedSyntaxError

X = np.random.default_rng(0).normal(size=(8, 3))
Y = np.random.default_rng(1).normal(size=8)
RUNS = [{}, {"checkpoint": True, "snapshots": 2}]


def sgd_shuffling_its_indices(w, lr, n):
    np.random.seed(0)
    idx = np.arange(8)
    for epoch in range(n):
        np.random.shuffle(idx)
        batch = idx[:4]
        r = X[batch] @ w - Y[batch]
        w = w - lr * X[batch].T @ r / 4
    return np.sum((X @ w - Y) ** 2)


def sgd_with_a_generator(w, lr, n):
    rng = np.random.default_rng(4)
    order = np.arange(8)
    for epoch in range(n):
        rng.shuffle(order)
        r = X[order[:4]] @ w - Y[order[:4]]
        w = w - lr * X[order[:4]].T @ r / 4
    return np.sum((X @ w - Y) ** 2)


@pytest.mark.parametrize("options", RUNS, ids=["taped", "checkpointed"])
@pytest.mark.parametrize("fn", [sgd_shuffling_its_indices, sgd_with_a_generator],
                         ids=lambda f: f.__name__)
def test_a_shuffled_index_array_is_differentiated(fn, options):
    args = (np.array([0.1, -0.3, 0.2]), 0.1, 7)
    got = tc.grad(fn, wrt=(0, 1), **options)(*args)
    expected = numeric_grad(fn, args, wrt=(0, 1))
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-9)


def test_desugar_writes_the_shuffle_as_a_permutation():
    text = desugared(sgd_shuffling_its_indices)
    assert "idx[...] = np.random.permutation(idx)" in text
    assert "rng.permutation(order)" in desugared(sgd_with_a_generator)


def shuffles_a_list(w):
    order = [0, 1, 2, 3]
    np.random.shuffle(order)
    return np.sum(X[order] @ w)


def shuffles_with_a_generator_given(w, rng):
    idx = np.arange(8)
    rng.shuffle(idx)   # rng may be anything with a shuffle: not rewritten
    return np.sum(X[idx] @ w)


@pytest.mark.parametrize("fn, args", [
    (shuffles_a_list, ()), (shuffles_with_a_generator_given, (np.random.default_rng(0),))])
def test_a_shuffle_not_surely_of_an_array_by_numpy_stays_refused(fn, args):
    assert ".shuffle(" in desugared(fn)
    with pytest.raises(UnsupportedSyntaxError, match="shuffle"):
        tc.grad(fn)(np.array([0.1, -0.3, 0.2]), *args)
