"""Private adjoint buffers (compiler/transform/owned_adjoints.py): the adjoint of
a carried array that a checkpointed loop only writes into through subscripts
stays one private buffer across the adjoint steps, zeroed and added to in
place; such a buffer never shares memory with the caller's arrays (the seed
among them) or with another adjoint, on every path that runs adjoint steps."""

import ast

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad
from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler.transform.owned_adjoints import ArrayFacts, basic_index

rng = np.random.default_rng(7)


def heat(u0, k, n):
    u = u0.copy()
    for t in range(n):
        u[1:-1] = u[1:-1] + k[1:-1] * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return np.sum(u ** 2)


def heat_field(u0, k, n):
    u = u0.copy()
    for t in range(n):
        u[1:-1] = u[1:-1] + k[1:-1] * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return u


def two_fields(u0, w0, k, n):
    u = u0.copy()
    w = w0.copy()
    for t in range(n):
        u[1:-1] = u[1:-1] + k[1:-1] * (u[2:] - 2.0 * u[1:-1] + u[:-2])
        w[1:-1] = w[1:-1] + k[1:-1] * (w[2:] - u[1:-1] + w[:-2])
    s = u + w                  # bu and bw start as one array
    return np.sum(s * s)


def stacked(u0, k, n):
    u = u0.copy()
    for t in range(n):
        u[1:-1] = u[1:-1] + k[1:-1] * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    s = np.stack([u, u * u])   # bu starts as a view of bs
    return np.sum(s ** 3)


def two_loops(u0, k, n):
    u = u0.copy()
    for t in range(n):
        u[1:-1] = u[1:-1] + k[1:-1] * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    for t in range(n):
        u[1:] = u[1:] * 0.9 + 0.1 * k[1:] * u[:-1]
    return np.sum(u ** 2)


def gathered(x, idx, n):
    y = x * 1.0
    for t in range(n):
        y[0:3] = y[0:3] * 0.5 + x[idx]   # idx names element 0 twice
    return np.sum(y ** 2)


def matmul_and_negation(h, W, n):
    for t in range(n):
        m = h @ W
        z = -W
        h = np.tanh(m + 0.01 * np.sum(z, axis=0))
    return np.sum(h)


def _inputs(size=12):
    return rng.normal(size=size), 0.2 + 0.05 * rng.random(size)


def _adjoint_step(df):
    source = df.source
    return source[source.index("def loop"):source.index("\ndef d")]


def test_a_carried_array_written_through_slices_has_a_private_adjoint():
    u0, k = _inputs()
    df = tc.grad(heat, wrt=(0, 1), checkpoint=True, snapshots=3)
    got = check_grad(heat, (u0, k, 9), wrt=(0, 1), df=df)
    taped = tc.grad(heat, wrt=(0, 1))(u0, k, 9)
    for g, t in zip(got, taped):
        np.testing.assert_array_equal(g, t)   # the same operations, the same bits
    step = _adjoint_step(df)
    assert "bu[1:-1] = 0.0" in step and "bu[2:] += bu_item_3" in step
    assert "bk[1:-1] += bu_item_2" in step        # k was passed as an array
    assert "bu[1:-1] -= bu_sub * 2.0" in step     # the negation is subtracted
    assert "setitem_adjoint" not in df.source and "broadcast_shape" not in df.source
    assert "bu = rt.private_adjoint(bu, u)" in df.source


def test_the_general_code_keeps_helpers_where_types_are_unknown():
    df = tc.grad(heat, wrt=(0, 1), checkpoint=True, snapshots=3)
    step = _adjoint_step(df)   # compiled before any call: k may be any sequence
    assert "bu[2:] += bu_item_3" in step          # u0.copy() is an array
    assert "bk = rt.accumulate_at(bk, k, np.s_[1:-1], bu_item_2)" in step


def test_the_seed_array_is_never_changed():
    u0, k = _inputs()
    seed = rng.normal(size=12)
    before = seed.copy()
    for options in ({}, dict(checkpoint=True, snapshots=3)):
        df = tc.grad(heat_field, wrt=(0, 1), **options)
        check_grad(heat_field, (u0, k, 6), wrt=(0, 1), seed=seed, df=df)
        np.testing.assert_array_equal(seed, before)


@pytest.mark.parametrize("f", [two_fields, stacked, two_loops])
def test_a_private_adjoint_never_shares_another_adjoint_s_memory(f):
    u0, k = _inputs()
    args = (u0, rng.normal(size=12), k, 5) if f is two_fields else (u0, k, 5)
    wrt = (0, 1, 2) if f is two_fields else (0, 1)
    df = tc.grad(f, wrt=wrt, checkpoint=True, snapshots=2)
    got = check_grad(f, args, wrt=wrt, df=df)
    taped = tc.grad(f, wrt=wrt)(*args)
    for g, t in zip(got, taped):
        np.testing.assert_allclose(g, t, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("options, size, n", [
    (dict(snapshots=2, schedule="online"), 64, 30),
    (dict(snapshots=8, schedule="uniform"), 64, 30),
    (dict(snapshots=2, disk_snapshots=2), 64, 30),
    (dict(snapshots=2, verify=True), 64, 30),
    (dict(snapshots=64), 64, 30),
    (dict(memory_budget="24kB"), 16, 200),   # taped segments of 3 steps (loopN_segment)
])
def test_every_schedule_threads_the_private_adjoint_through(options, size, n):
    u0, k = _inputs(size)
    args = (u0, k, n)
    df = tc.grad(heat, wrt=(0, 1), checkpoint=True, **options)
    with tc.profile() as stats:
        got = check_grad(heat, args, wrt=(0, 1), df=df)
    taped = tc.grad(heat, wrt=(0, 1))(*args)
    for g, t in zip(got, taped):
        np.testing.assert_allclose(g, t, rtol=1e-12, atol=1e-14)
    if "memory_budget" in options:
        assert stats.forward_steps == n and stats.snapshots_stored < n   # segments ran


def test_a_read_through_a_repeated_index_still_adds_every_time():
    x, idx = rng.normal(size=5), np.array([0, 0, 3])
    for options in ({}, dict(checkpoint=True, snapshots=2)):
        df = tc.grad(gathered, **options)
        check_grad(gathered, (x, idx, 4), df=df)
        assert "rt.accumulate_at(bx, x, idx, " in df.source


def test_a_gathered_matmul_adjoint_is_never_subtracted_from():
    # bW becomes an rt.ProductSum at `m = h @ W`; `bW -= ...` for `z = -W`, one
    # line earlier in the adjoint, failed on it from the second step on
    h, W = 0.1 * rng.random((8, 256)), 0.01 * rng.random((256, 256))
    for options in ({}, dict(checkpoint=True, snapshots=3)):
        df = tc.grad(matmul_and_negation, wrt=1, **options)
        got = df(h, W, 6)
        eps = 1e-6
        dW = np.zeros_like(W)
        dW[3, 5] = eps
        numeric = (matmul_and_negation(h, W + dW, 6) - matmul_and_negation(h, W - dW, 6)) / (2 * eps)
        np.testing.assert_allclose(got[3, 5], numeric, rtol=1e-6)
        assert "bW -= " not in df.source


def _index(text):
    node = ast.parse(f"x[{text}]", mode="eval").body.slice
    return ir.Index(node, ())


def test_only_indices_that_take_an_axis_and_name_each_element_once_are_basic():
    facts = ArrayFacts(counters=frozenset({"t"}))
    for text in ("1:-1", "t", "t, 2:", "None, 1:", "..., -1", "a:b"):
        assert basic_index(_index(text), facts), text
    for text in ("idx", "t, idx", "True", "...", "None, ...", "()"):   # no axis: maybe a scalar
        assert not basic_index(_index(text), facts), text
