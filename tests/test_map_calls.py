"""desugar/map_calls.py: ``map(f, xs)`` consumed at once (unpacked, ``list``,
``tuple``, ``sum``) is the list comprehension it is; ``for h in map(f, xs)`` the
loop calling ``f`` at each trip; a map kept as a value the generator expression it is."""

import numpy as np

import tangent_ckpt as tc

from construct_check import check_construct
from gradcheck import check_grad, check_value_and_grad
from tangent_ckpt.compiler.pipeline import desugared
from tangent_ckpt.errors import TangentCkptError

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
    # (and the loop over the display unrolled: desugar/static_loops.py)
    assert "item = a\n    unpacked_and_summed_items.append(np.tanh(item))\n" in text \
        and "sum(unpacked_and_summed_items)" in text, text
    check_construct(unpacked_and_summed, (X, W), (0, 1))


def of_a_lambda_and_two_lists(x, W):
    c, d = tuple(map(lambda v: v * 2.0, (x, W @ x)))
    e = list(map(lambda u, v: u * np.cos(v), [c, d], [x, x]))
    return np.sum(c * d) + np.sum(e[0] * e[1])


def test_a_lambda_is_the_items_value_and_two_sequences_are_zipped():
    text = desugared(of_a_lambda_and_two_lists)
    assert "c_d_items.append(v_2 * 2.0)\n    c, d = tuple(c_d_items)\n" in text, text
    # (the comprehension's loop over two displays, written out by static_loops)
    assert "e = []\n    u = c\n    v = x\n    e.append(u * np.cos(v))\n" \
        "    u = d\n    v = x\n    e.append(u * np.cos(v))\n" in text, text
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
    assert "map" not in text and "item_2 = W @ x\n    item_3 = x * x\n" in text, text
    assert "for item in" not in text, text  # (static_loops.py: one copy per item)
    check_value_and_grad(in_a_loop, (X, W), wrt=(0, 1))
    check_construct(in_a_loop, (X, W), (0, 1))


def kept(x):
    m = map(np.sin, (x, x * 2.0))
    a, b = m
    return np.sum(a * b)


def test_a_map_kept_as_a_value_is_the_generator_it_is():
    """A map bound to a name is the generator expression it is (desugar writes
    it as the loop before the statement that reads it); the lowering held it as
    the tuple of its items."""
    source = desugared(kept)
    assert "map(" not in source and "np.sin(item)" in source
    check_value_and_grad(kept, (X,))
    check_construct(kept, (X,), (0,))


def draws_in_a_kept_map(x, rng):
    m = map(lambda v: v * rng.standard_normal(), (x, 2.0 * x))
    a = rng.standard_normal()  # drawn after the map is made, before its items
    b, c = m
    return np.sum(a * b + c)


def test_a_kept_maps_calls_run_when_its_items_are_read():
    """``map`` calls its function when an item is asked for: the draws of the
    lambda come after ``a``'s, as in Python."""
    x = np.array([0.3, -0.2])
    value, _ = tc.value_and_grad(draws_in_a_kept_map)(x, np.random.default_rng(5))
    np.testing.assert_allclose(value, draws_in_a_kept_map(x, np.random.default_rng(5)),
                               rtol=1e-12)


def map_of_a_map(x):
    a, b = map(np.sin, map(np.cos, (x, 2.0 * x)))
    return np.sum(sum(map(np.tanh, map(np.cos, (a, b)))))


def test_a_map_of_a_map_is_left_whole():
    """The outer map written as a comprehension over the inner one was refused
    ("loop over map"); the inner map is now a generator expression first, which
    the outer comprehension reads."""
    x = np.array([0.3, 0.4])
    value, _ = tc.value_and_grad(map_of_a_map)(x)
    np.testing.assert_allclose(value, map_of_a_map(x), rtol=1e-12)
    check_grad(map_of_a_map, (x,))


class Damped:
    def __init__(self, c):
        self.c = c

    def apply(self, v):
        return self.c * np.sin(v) + 0.1 * v


def of_a_method(x):
    d = Damped(0.5)
    m = map(d.apply, (x, 2.0 * x))
    a, b = m
    c, e = map(d.apply, (a, b))
    return np.sum(a * b + c * e)


def test_a_map_of_an_objects_method_binds_the_method_where_the_map_is_made():
    """``map(d.apply, xs)``: the method is read once, where the map is made
    (``fn = d.apply``), then called per item, kept or consumed at once."""
    source = desugared(of_a_method)
    assert "map(" not in source, source
    check_value_and_grad(of_a_method, (X,))
    check_construct(of_a_method, (X,), (0,))


def comprehension_over_a_map_drawing(x, rng):
    return np.sum(sum([u + rng.standard_normal()
                       for u in map(lambda v: v * rng.standard_normal(), (x, 2.0 * x))]))


def test_a_map_a_loop_reads_item_by_item_is_not_written_out_before_it():
    """A map that is a loop's or a comprehension's iterable computes each item at
    its trip, between the body's draws: as a generator written out before the
    loop it would draw in another order (a wrong value), so it stays a map, which
    the lowering refuses as before ("loop over map")."""
    x = np.array([0.3, -0.2])
    try:
        value, _ = tc.value_and_grad(comprehension_over_a_map_drawing)(
            x, np.random.default_rng(3))
    except TangentCkptError as error:
        assert "test_map_calls.py:" in str(error)
        return
    np.testing.assert_allclose(
        value, comprehension_over_a_map_drawing(x, np.random.default_rng(3)), rtol=1e-12)
