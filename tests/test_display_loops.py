"""desugar/display_loops.py: a ``for`` loop over a tuple or list display in its
header (``enumerate`` and ``zip`` of displays, strings and constant ranges too)
is its body once per item, a constant loop variable folded into its copy."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad
from tangent_ckpt.compiler.pipeline import desugared


def keys_then_rebound(x, y):
    d = {"enc": x, "dec": y}
    s = 0.0
    for k in ("enc", "dec"):
        s = s + np.sum(d[k] ** 2)
    k = 3.0  # bound elsewhere too: the loop's copies still read their keys
    return s * k


def counter_decides_a_branch(a, b):
    s = 1.0
    for k, v in enumerate([a, b], 1):
        if k == 1:
            s = s + np.sum(np.sin(v))
        else:
            s = s * np.sum(v * v)
    return s * k  # the last counter after the loop, as in Python


def zipped_key_and_weight(x):
    d = {}
    for k, w in zip("abc", [1.0, 2.0, 3.0]):
        d[k] = x * w
    return np.sum(d["a"] * d["c"]) + np.sum(d["b"])


def item_rebound_by_the_loop_variable(a, b):
    s = 0.0
    for a in (b, a):  # the second item is the a of before the loop
        s = s + np.sum(a * a) * s + np.sum(a)
    return s


def nested_pairs(W1, b1, W2, b2):
    h = np.array([0.3, -0.2])
    for W, b in ((W1, b1), (W2, b2)):
        h = np.tanh(W @ h + b)
    return np.sum(h)


FUNCTIONS = [keys_then_rebound, counter_decides_a_branch, zipped_key_and_weight,
             item_rebound_by_the_loop_variable]


@pytest.mark.parametrize("f", FUNCTIONS)
@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
def test_unrolled_copies_compute_what_python_does(f, options):
    rng = np.random.default_rng(0)
    args = tuple(rng.normal(size=2) for _ in range(f.__code__.co_argcount))
    wrt = tuple(range(len(args)))
    value, _ = tc.value_and_grad(f, wrt=wrt, **options)(*args)
    np.testing.assert_allclose(value, f(*(a.copy() for a in args)), rtol=1e-12)
    check_grad(f, args, wrt=wrt)


def test_pairs_unpacked_per_copy():
    rng = np.random.default_rng(1)
    args = (rng.normal(size=(2, 2)), rng.normal(size=2), rng.normal(size=(2, 2)),
            rng.normal(size=2))
    check_grad(nested_pairs, args, wrt=(0, 1, 2, 3))


def test_the_loop_is_gone_and_a_key_read_is_a_constant():
    text = desugared(keys_then_rebound)
    assert "for k in" not in text
    assert "d['enc']" in text and "d['dec']" in text


def test_a_loop_with_break_stays_a_loop():
    def left_early(a, b):
        s = 0.0
        for v in (a, b):
            if s > 1.0:
                break
            s = s + np.sum(v)
        return s
    assert "for v in (a, b)" in desugared(left_early)
