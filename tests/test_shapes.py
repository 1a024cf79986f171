"""compiler/analyze/shapes.py: rt.unbroadcast is left out only where the operand provably
has the result's shape; every case is checked against finite differences."""

import numpy as np

import tangent_ckpt as tc
from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler.lower.normalize import normalize
from tangent_ckpt.compiler.frontend.parse import parse_function
from tangent_ckpt.compiler.analyze.shapes import shape_facts

from gradcheck import check_grad


def heat_step(u, k):
    u = u.copy()
    u[1:-1] = u[1:-1] + k[1:-1] * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return np.sum(u ** 2)


def first_times_rest(x):
    return np.sum(x[:1] * x[1:])  # lengths 1 and n - 1: a broadcast


def row_plus_bias(x, b):
    return np.sum(np.tanh(x + b))  # (3, 4) + (4,): a broadcast


def square_matmul(a):
    return np.sum(a @ a + a)


def general_source(fn, wrt=(0,), **options):
    """The gradient as compiled before any call: for arguments of any shape."""
    return tc.grad(fn, wrt=wrt, **options).source


def facts(fn):
    function, _, _ = normalize(parse_function(fn))
    shape_facts(function)
    return {s.target: s.same_shape for s in ir.walk(function.body)
            if isinstance(s, ir.Assign) and s.same_shape}


def test_slices_of_one_array_with_equal_lengths_have_equal_shapes():
    same = facts(heat_step)
    assert any(set(v) == {"u_item_3", "u_mul"} for v in same.values()), same  # u[2:] - 2 u[1:-1]
    rng = np.random.default_rng(0)
    u, k = rng.normal(size=9), rng.normal(size=9)
    df = tc.grad(heat_step, wrt=(0, 1))
    check_grad(heat_step, (u, k), wrt=(0, 1), df=df)
    assert "rt.unbroadcast(bu_sub, u_item_3)" not in df.source
    assert "u_item_3" in df.source


def test_a_broadcast_keeps_its_unbroadcast():
    rng = np.random.default_rng(1)
    df = tc.grad(first_times_rest)
    check_grad(first_times_rest, (rng.normal(size=6),), df=df)
    assert "rt.unbroadcast(bfirst_times_rest_mul * first_times_rest_item_2, " \
        "first_times_rest_item)" in df.source
    df = tc.grad(row_plus_bias, wrt=(0, 1))
    check_grad(row_plus_bias, (rng.normal(size=(3, 4)), rng.normal(size=4)), wrt=(0, 1), df=df)
    assert "bb = rt.unbroadcast(brow_plus_bias_add, b)" in df.source
    assert "bx = brow_plus_bias_add" in df.source   # compiled for x (3, 4) and b (4,)
    general = general_source(row_plus_bias, (0, 1))
    assert "bx = rt.unbroadcast(brow_plus_bias_add, x)" in general  # b's shape is unknown


def test_matmul_is_not_elementwise():
    assert "a_matmul" not in {n for v in facts(square_matmul).values() for n in v}
    rng = np.random.default_rng(2)
    check_grad(square_matmul, (rng.normal(size=(3, 3)),))


def test_a_python_number_never_widens_a_shape():
    def scaled(x):
        y = 2.0 * x
        return np.sum(np.sin(y) - 1.0)
    same = facts(scaled)
    assert ("x",) in same.values()
    df = tc.grad(scaled)
    check_grad(scaled, (np.linspace(0.0, 1.0, 5),), df=df)
    assert "rt.unbroadcast" not in df.source.split("reverse sweep")[1].split("repeat_to_match")[1]


def heat_loop(u0, k, n):
    u = u0.copy()
    for t in range(n):
        u[1:-1] = u[1:-1] + k[1:-1] * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return np.sum(u ** 2)


def write_of_a_broadcast(u, c):
    u = u.copy()
    u[1:-1] = u[1:-1] + c   # c may be a number or any array broadcasting to u[1:-1]
    return np.sum(u ** 2)


def write_after_a_branch(u, k, flag):
    u = u.copy()
    v = u[1:-1] * k[1:-1]
    if flag > 0:
        u = u * 2.0
    u[1:-1] = u[1:-1] + v   # u is another array now: nothing is learned about v
    return np.sum(u ** 2)


def test_a_slice_write_proves_the_shapes_of_what_it_writes():
    """u[1:-1] = u[1:-1] + k[1:-1] * (...) succeeded: the value, and every
    temporary between it and the slices of u, has the shape of u[1:-1]; only
    k[1:-1] keeps its rt.unbroadcast."""
    same = facts(heat_loop)
    assert set(same["u_value_add"]) == {"u_item", "u_mul_2"}, same
    assert same["u_mul_2"] == ("u_add",), same
    rng = np.random.default_rng(2)
    u0, k = rng.normal(size=10), rng.normal(size=10)
    for options in ({}, dict(checkpoint=True, snapshots=2)):
        df = tc.grad(heat_loop, wrt=(0, 1), **options)
        check_grad(heat_loop, (u0, k, 5), wrt=(0, 1), df=df)
        general = general_source(heat_loop, (0, 1), **options)
        assert "rt.unbroadcast(bu_value_add" not in general, general
        assert "rt.unbroadcast(bu_mul_2 * u_item_2" not in general, general
        assert "rt.unbroadcast(bu_mul_2 * u_add, u_item_2)" in general
        # compiled for u0 and k of 10 elements, k[1:-1] has u[1:-1]'s shape too
        assert "rt.unbroadcast" not in df.source, df.source


def test_a_written_broadcast_keeps_its_unbroadcast():
    rng = np.random.default_rng(3)
    u = rng.normal(size=7)
    df = tc.grad(write_of_a_broadcast, wrt=(0, 1))
    for c in (0.5, rng.normal(size=1), rng.normal(size=5)):
        check_grad(write_of_a_broadcast, (u, c), wrt=(0, 1), df=df)
        # compiled for each c's shape: only c of u[1:-1]'s shape needs no sum
        assert ("rt.unbroadcast(bu_value_add, c)" in df.source) == (np.shape(c) != (5,))
    assert "rt.unbroadcast(bu_value_add, c)" in general_source(write_of_a_broadcast, (0, 1))


def test_a_write_teaches_nothing_across_a_branch():
    rng = np.random.default_rng(4)
    u, k = rng.normal(size=8), rng.normal(size=8)
    assert "v" not in facts(write_after_a_branch)
    df = tc.grad(write_after_a_branch, wrt=(0, 1))
    for flag in (1.0, -1.0):
        check_grad(write_after_a_branch, (u, k, flag), wrt=(0, 1), df=df)
    assert "rt.unbroadcast(bu_value_add, v)" in general_source(write_after_a_branch, (0, 1))


def writes(fn):
    function, _, _ = normalize(parse_function(fn))
    shape_facts(function)
    return [s.value_fits for s in ir.walk(function.body) if isinstance(s, ir.SetItem)]


def scalar_into_slice(u, n):
    u = u.copy()
    for t in range(n):
        u[1:-1] = 0.5 * np.sum(u)   # a number broadcast into the slice
    return np.sum(u ** 2)


def test_a_write_whose_value_has_the_slice_s_shape_is_marked():
    assert writes(heat_loop) == [True]   # its adjoint is bu[1:-1], copied
    assert writes(scalar_into_slice) == [False]   # its adjoint sums the slice
    rng = np.random.default_rng(2)
    for options in ({}, dict(checkpoint=True, snapshots=2)):
        check_grad(scalar_into_slice, (rng.normal(size=7), 3),
                   df=tc.grad(scalar_into_slice, **options))
