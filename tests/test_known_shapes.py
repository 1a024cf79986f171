"""compiler/analyze/known_shapes.py and api.py's shape key: a gradient is compiled for
its call's argument shapes; it leaves out rt.unbroadcast only where those
shapes agree, keeps it where they broadcast, and a call with other shapes gets
its own compiled code.  Every case is checked against finite differences."""

import numpy as np
import pytest

import tangent_ckpt as tc
from tangent_ckpt import api
from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler.analyze.known_shapes import INT, argument_shapes
from tangent_ckpt.compiler.lower.normalize import normalize
from tangent_ckpt.compiler.frontend.parse import parse_function
from tangent_ckpt.compiler.analyze.shapes import shape_facts

from gradcheck import check_grad


def relax(T, UA, C, T_out, n):
    cost = 0.0
    for t in range(n):
        T = T + 0.1 * (UA * (T_out[t] - T)) / C
        cost = cost + np.sum((T - 20.0) ** 2)
    return cost


def grows(h, c, n):
    for t in range(n):
        h = np.tanh(h * 0.5 + c)   # h (4,) + c (3, 4): h becomes (3, 4) after one step
    return np.sum(h ** 2)


def mixed(A, x, W, t):
    y = A @ x                   # (3,)
    z = W[t] * y                # W[t]: (3,)
    s = np.sum(z, axis=0, keepdims=True)
    return np.sum(np.sin(z) + s)


def proved(fn, shapes):
    function, _, _ = normalize(parse_function(fn))
    shape_facts(function)
    argument_shapes(function, shapes)
    return {s.target: set(s.same_shape) for s in ir.walk(function.body)
            if isinstance(s, ir.Assign) and s.same_shape}


def test_shapes_followed_through_a_loop_drop_every_unbroadcast():
    rng = np.random.default_rng(0)
    args = (18.0 + rng.random(4), 0.3 + rng.random(4), 1.0 + rng.random(4),
            rng.normal(size=6), 6)
    for options in ({}, dict(checkpoint=True, snapshots=2)):
        df = tc.grad(relax, wrt=(0, 1, 2), **options)
        check_grad(relax, args, wrt=(0, 1, 2), df=df)
        assert "rt.unbroadcast" not in df.source and "rt.shape_of" not in df.source, df.source
    assert "rt.unbroadcast" in tc.grad(relax, wrt=(0, 1, 2)).source   # before a call


def test_a_broadcast_keeps_its_unbroadcast_for_these_shapes():
    rng = np.random.default_rng(1)
    # UA and C scalars-in-arrays of shape (1,): broadcast against T (4,)
    args = (18.0 + rng.random(4), 0.3 + rng.random(1), 1.0 + rng.random(1),
            rng.normal(size=5), 5)
    df = tc.grad(relax, wrt=(0, 1, 2))
    check_grad(relax, args, wrt=(0, 1, 2), df=df)
    assert "rt.unbroadcast(bT_mul * T_sub, UA)" in df.source, df.source
    # (a division's adjoint keeps a structurally zero bT_div zero: rt.where_nonzero)
    assert "bC -= rt.unbroadcast(rt.where_nonzero(bT_div, bT_div * T_div / C), C)" in df.source, \
        df.source


def test_one_gradient_called_with_two_shapes_compiles_each():
    rng = np.random.default_rng(2)
    df = tc.grad(relax, wrt=(0, 1, 2))
    same = (18.0 + rng.random(4), 0.3 + rng.random(4), 1.0 + rng.random(4),
            rng.normal(size=4), 4)
    broadcast = (18.0 + rng.random(3), 0.3 + rng.random(1), 1.0 + rng.random(3),
                 rng.normal(size=4), 4)
    for args in (same, broadcast, same, broadcast):
        check_grad(relax, args, wrt=(0, 1, 2), df=df)
        assert ("rt.unbroadcast" in df.source) == (args is broadcast)


def test_a_state_whose_shape_grows_keeps_the_general_code():
    rng = np.random.default_rng(3)
    args = (rng.normal(size=4), rng.normal(size=(3, 4)), 3)
    for options in ({}, dict(checkpoint=True, snapshots=2)):
        df = tc.grad(grows, wrt=(0, 1), **options)
        check_grad(grows, args, wrt=(0, 1), df=df)
        assert "rt.unbroadcast" in df.source
    facts = proved(grows, {"h": (4,), "c": (3, 4), "n": INT})
    assert not any("h_mul" in same for same in facts.values()), facts  # h's shape is unknown


def test_matmul_integer_index_and_reductions_have_known_shapes():
    facts = proved(mixed, {"A": (3, 5), "x": (5,), "W": (7, 3), "t": INT})
    assert facts["z"] == {"z_item", "y"}, facts
    assert facts["mixed_add"] == {"mixed_sin"}, facts   # s: (1,) broadcasts to z's (3,)
    rng = np.random.default_rng(4)
    args = (rng.normal(size=(3, 5)), rng.normal(size=5), rng.normal(size=(7, 3)), 2)
    df = tc.grad(mixed, wrt=(0, 1, 2))
    check_grad(mixed, args, wrt=(0, 1, 2), df=df)
    assert "rt.unbroadcast(bmixed_add, s)" in df.source


def test_an_index_that_is_not_an_int_teaches_nothing():
    facts = proved(mixed, {"A": (3, 5), "x": (5,), "W": (7, 3), "t": ()})
    assert "z_item" not in facts.get("z", set()), facts


def test_after_several_shapes_one_general_gradient_serves(monkeypatch):
    monkeypatch.setattr(api, "_SHAPES_PER_GRADIENT", 2)
    rng = np.random.default_rng(5)
    df = tc.grad(relax, wrt=(0, 1, 2))
    for size in (2, 3, 4):
        args = (18.0 + rng.random(size), 0.3 + rng.random(size), 1.0 + rng.random(size),
                rng.normal(size=3), 3)
        check_grad(relax, args, wrt=(0, 1, 2), df=df)
    assert "rt.unbroadcast" in df.source   # the third shape: the general code


@pytest.mark.parametrize("value, key", [(np.zeros((2, 3)), (2, 3)), (1.5, ()), (3, INT),
                                        (np.float32(2.0), ()), (True, None), ([1.0], None)])
def test_what_the_cache_key_assumes_of_an_argument(value, key):
    assert api._shape_key(value) == key


def readout(h, W, n):
    for t in range(n):
        z = np.tanh(W @ h)          # (4,) every step
        h = 0.5 * h + 0.5 * z
        w = h[:t + 1]               # a computed slice: unknown
        u = h[:, None] * h          # (4, 4) ...
        u = np.sum(u, axis=0)       # ... then (4,): the step's first value has another shape
    return np.sum(z) + np.sum(w) + np.sum(u)


def steady_shapes(fn, shapes):
    function, _, _ = normalize(parse_function(fn))
    shape_facts(function)
    argument_shapes(function, shapes)
    return next(s for s in function.body if isinstance(s, ir.For)).steady_shapes


def test_a_loop_knows_the_values_that_keep_one_shape_at_every_assignment():
    steady = steady_shapes(readout, {"h": (4,), "W": (4, 4), "n": INT})
    assert {"z", "h"} <= steady and not {"w", "u"} & steady, steady
    assert not steady_shapes(readout, {"h": None, "W": (4, 4), "n": INT}) & {"z", "h"}
