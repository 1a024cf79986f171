"""desugar/prepended_lists.py: a list grown only by ``returns.insert(0, G)`` in a
loop is the list of its items in the order they came, read backwards; the
gradient is Python's, taped and checkpointed."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad
from tangent_ckpt.compiler.pipeline import desugared

OPTIONS = [{}, {"checkpoint": True, "snapshots": 2}]


def discounted_returns(x, rewards_scale, n):
    rewards = []
    h = x
    for t in range(n):
        h = np.tanh(1.3 * h + 0.2)
        rewards.append(np.sum(h) * rewards_scale)
    G = 0.0
    returns = []
    for r in reversed(rewards):
        G = r + 0.9 * G
        returns.insert(0, G)
    total = 0.0
    for t in range(len(returns)):
        total = total + returns[t] * (t + 1.0)
    for g in returns:
        total = total * 0.5 + g
    return total + np.sum(np.array(returns) ** 2) + sum(returns)


def normalised_after(x, rewards_scale, n):
    h = x
    returns = []
    G = 0.0
    for t in range(n):
        h = np.sin(h) * rewards_scale
        G = np.sum(h) + 0.5 * G
        returns.insert(0, G * G)
    returns = np.array(returns)  # the name is an array from here on
    returns = (returns - returns.mean()) / (returns.std() + 1e-8)
    return np.sum(returns * np.arange(n)) + returns[0]


@pytest.mark.parametrize("f", [discounted_returns, normalised_after])
@pytest.mark.parametrize("options", OPTIONS)
def test_read_backwards_computes_what_python_does(f, options):
    x = np.array([0.3, -0.4, 0.8])
    value, _ = tc.value_and_grad(f, wrt=(0, 1), **options)(x, 0.7, 5)
    np.testing.assert_allclose(value, f(x.copy(), 0.7, 5), rtol=1e-12)
    df = tc.grad(f, wrt=(0, 1), **options)
    check_grad(f, (x, 0.7, 5), wrt=(0, 1), df=df)
    if options:
        taped = tc.grad(f, wrt=(0, 1))(x, 0.7, 5)
        for g, t in zip(df(x, 0.7, 5), taped):
            np.testing.assert_allclose(g, t, rtol=1e-12, atol=1e-14)


def test_the_inserts_are_appends_read_backwards():
    text = desugared(discounted_returns)
    assert "returns_reversed.append(G)" in text and ".insert(" not in text
    assert "returns_reversed[::-1][t]" in text and "len(returns_reversed)" in text
    assert "for g in returns_reversed[::-1]:" in text
    text = desugared(normalised_after)
    assert "returns = np.array(returns_reversed[::-1])" in text
    assert "returns = (returns - returns.mean())" in text  # the array, as written


def also_appended(x, n):
    ys = []
    for t in range(n):
        ys.insert(0, x * t)
        ys.append(x)
    return ys[0]


def truth_asked(x, n):
    ys = []
    for t in range(n):
        ys.insert(0, x * t)
    return x * 2.0 if ys else x


def kept_by_another_name(x, n):
    ys = []
    for t in range(n):
        ys.insert(0, x * t)
    zs = ys
    return zs[0]


def inserted_elsewhere(x, n):
    ys = []
    for t in range(n):
        ys.insert(1, x * t)
    return ys[0]


def not_in_a_loop(x):
    ys = []
    ys.insert(0, x)
    ys.insert(0, 2.0 * x)
    return ys[0] * ys[1]


@pytest.mark.parametrize("fn", [also_appended, truth_asked, kept_by_another_name,
                                inserted_elsewhere, not_in_a_loop])
def test_other_lists_are_left_to_list_methods(fn):
    """Appended too, its truth asked, kept by another name, inserted elsewhere than at
    the front, or grown outside loops (a list of known length): written as before."""
    assert "_reversed" not in desugared(fn)
