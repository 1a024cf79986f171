"""desugar/map_calls.py: ``map(f, xs)`` consumed at once (unpacked, ``list``,
``tuple``, ``sum``) is the list comprehension it is; ``for h in map(f, xs)`` the
loop calling ``f`` at each trip; a map kept as a value is left for the lowering."""

import numpy as np

import tangent_ckpt as tc

from construct_check import check_construct
from gradcheck import check_grad, check_value_and_grad
from tangent_ckpt.compiler.pipeline import desugared

RNG = np.random.default_rng(31)
X = RNG.standard_normal(3)
W = RNG.standard_normal((3, 3)) * 0.5


def unpacked_and_summed(x, W):
    a, b = map(np.sin, (x, W @ x))
    return np.sum(sum(map(np.tanh, [x, a, b])) * b)


def test_a_map_consumed_at_once_is_a_comprehension():
    text = desugared(unpacked_and_summed)
    # (the comprehensions then written as loops: desugar/comprehension_loops.py)
    assert "a_b_items.append(np.sin(item_2))\n    a, b = a_b_items\n" in text, text
    assert "for item in [x, a, b]:\n        unpacked_and_summed_items.append(np.tanh(item))" \
        in text and "sum(unpacked_and_summed_items)" in text, text
    check_construct(unpacked_and_summed, (X, W), (0, 1))


def of_a_lambda_and_two_lists(x, W):
    c, d = tuple(map(lambda v: v * 2.0, (x, W @ x)))
    e = list(map(lambda u, v: u * np.cos(v), [c, d], [x, x]))
    return np.sum(c * d) + np.sum(e[0] * e[1])


def test_a_lambda_is_the_items_value_and_two_sequences_are_zipped():
    text = desugared(of_a_lambda_and_two_lists)
    assert "c_d_items.append(v_2 * 2.0)\n    c, d = tuple(c_d_items)\n" in text, text
    assert "e = []\n    for u, v in zip([c, d], [x, x]):\n        e.append(u * np.cos(v))\n" \
        in text, text
    check_construct(of_a_lambda_and_two_lists, (X, W), (0, 1))


def damped(v):
    return 0.5 * np.sin(v) + 0.1 * v


def in_a_loop(x, W):
    total = 0.0
    for h in map(damped, (x, W @ x, x * x)):
        total = total + np.sum(h * x)
    return total


def test_a_loop_over_a_map_calls_the_function_at_each_trip():
    text = desugared(in_a_loop)
    assert "map" not in text and "for item in (x, W @ x, x * x):" in text, text
    check_value_and_grad(in_a_loop, (X, W), wrt=(0, 1))
    check_construct(in_a_loop, (X, W), (0, 1))


def kept(x):
    m = map(np.sin, (x, x * 2.0))
    a, b = m
    return np.sum(a * b)


def test_a_map_kept_as_a_value_is_left():
    assert "m = map(np.sin, (x, x * 2.0))" in desugared(kept)


def map_of_a_map(x):
    a, b = map(np.sin, map(np.cos, (x, 2.0 * x)))
    return np.sum(sum(map(np.tanh, map(np.cos, (a, b)))))


def test_a_map_of_a_map_is_left_whole():
    """The outer map written as a comprehension over the inner one was refused
    ("loop over map"); left as it was, the lowering reads both as before."""
    x = np.array([0.3, 0.4])
    value, _ = tc.value_and_grad(map_of_a_map)(x)
    np.testing.assert_allclose(value, map_of_a_map(x), rtol=1e-12)
    check_grad(map_of_a_map, (x,))
