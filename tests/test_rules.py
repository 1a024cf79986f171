"""compiler/transform/rules.py: adjoints of slice reads go into the adjoint
buffer in place only where that buffer is an array no other name shares
(``track_fresh``); the peepholes (``b - x`` for ``b + -x``, ``g * (2 * x)`` for
the adjoint of ``x ** 2``, ``np.roll``'s folded shift) keep the same numbers.
Every case is checked against finite differences."""

import ast

import numpy as np

import tangent_ckpt as tc
from tangent_ckpt import runtime as rt
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.code import Block, Line
from tangent_ckpt.compiler.transform.rules import negated, track_fresh

from gradcheck import check_grad


def line(target, value):
    return Line(sx.assign(target, value))


def test_a_new_array_is_fresh_until_something_else_reads_it():
    fresh = set()
    track_fresh(fresh, [line("bu", sx.rt("setitem_adjoint_array", "bu", sx.const(0)))])
    assert fresh == {"bu"}
    track_fresh(fresh, [line("bu", sx.rt("accumulate_at", "bu", "u", sx.const(1), "g"))])
    assert fresh == {"bu"}
    track_fresh(fresh, [Line(sx.add_to("bu", sx.name("g")))])
    assert fresh == {"bu"}
    track_fresh(fresh, [line("bv", sx.name("bu"))])   # bv shares bu's array now
    assert fresh == set()


def test_a_helper_that_may_return_its_argument_ends_freshness():
    fresh = {"bu"}
    track_fresh(fresh, [line("bw", sx.rt("unbroadcast", "bu", "w"))])
    assert fresh == set()


def test_rebinding_and_blocks_end_freshness():
    fresh = {"bu", "bv"}
    track_fresh(fresh, [line("bu", sx.binop("bu", "+", sx.name("g")))])
    assert fresh == {"bv"}
    track_fresh(fresh, [Block(sx.if_(sx.name("c")), [], None)])
    assert fresh == set()


def heat(u0, k, n):
    u = u0.copy()
    for t in range(n):
        u[1:-1] = u[1:-1] + k[1:-1] * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return np.sum(u ** 2)


def shared_after_write(x):
    y = x * 1.0
    y[0:2] = y[1:3] * 3.0
    z = y                      # z and y are one array: their adjoints start shared
    return np.sum(z[1:] * z[:-1]) + np.sum(y[2:] ** 2)


def read_twice_after_write(x):
    y = x * 2.0
    y[1:3] = 0.5 * y[2:4]
    a = y[:2]
    b = y[1:]
    return np.sum(a ** 2) + np.sum(b ** 3) + np.sum(y * y[::-1])


def test_slice_reads_after_a_slice_write_accumulate_in_place():
    rng = np.random.default_rng(0)
    u0, k = rng.normal(size=12), 0.2 * rng.random(12)
    for options in ({}, dict(checkpoint=True, snapshots=3)):
        df = tc.grad(heat, wrt=(0, 1), **options)
        check_grad(heat, (u0, k, 7), wrt=(0, 1), df=df)
        assert "bu[2:] += bu_item_3" in df.source   # bu is private: added to in place
        assert "getitem_adjoint" not in df.source and "setitem_adjoint" not in df.source


def test_in_place_accumulation_never_changes_a_shared_adjoint():
    rng = np.random.default_rng(1)
    for f in (shared_after_write, read_twice_after_write):
        x = rng.normal(size=6)
        before = x.copy()
        df = tc.grad(f)
        check_grad(f, (x,), df=df)
        assert np.array_equal(x, before)
        assert "= rt.accumulate_at(by, y, " in df.source   # the in-place path ran


def _negated_text(text):
    result = negated(ast.parse(text, mode="eval").body)
    return None if result is None else ast.unparse(result)


def test_a_negation_is_subtracted_instead():
    assert _negated_text("-g") == "g"
    assert _negated_text("-g * ans / x2") == "g * ans / x2"
    assert _negated_text("g * -ans") is None          # only the leftmost factor
    assert _negated_text("-g + x") is None
    assert _negated_text("(-g) ** 2") is None
    unbroadcast = sx.rt("unbroadcast", ast.parse("-g * y", mode="eval").body, "x")
    result = negated(unbroadcast)
    assert sx.calls_helper(result, rt.unbroadcast) and ast.unparse(result.args[0]) == "g * y"
    assert ast.unparse(result.args[1]) == "x"


def subtracts(x, y, c):
    z = x - y / c          # y's adjoint: -g / c, c's: -(-g) * ans / c
    w = np.roll(z, 2) - np.roll(z, -1, 0)
    return np.sum(w ** 2) + np.sum((y - x) ** 2)


def test_peepholes_keep_the_gradient():
    rng = np.random.default_rng(7)
    x, y = rng.normal(size=6), rng.normal(size=6)
    for c in (1.5 + rng.random(6), 1.5 + rng.random(1)):   # same shape, then a broadcast
        df = tc.grad(subtracts, wrt=(0, 1, 2))
        check_grad(subtracts, (x, y, c), wrt=(0, 1, 2), df=df)
        source = df.source
        assert "np.negative(" not in source and "power_adjoint_base" not in source, source
        assert "+ -" not in source, source
        assert ("rt.unbroadcast" in source) == (c.shape == (1,)), source
    taped = tc.grad(subtracts, wrt=(0, 1, 2))(x, y, c)
    loop = tc.grad(subtracts, wrt=(0, 1, 2), checkpoint=True, snapshots=2)(x, y, c)
    for a, b in zip(taped, loop):
        np.testing.assert_allclose(a, b, rtol=1e-12)
