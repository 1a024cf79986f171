"""compiler/hoist.py: the row-ordered transpose of a loop invariant that every
adjoint step multiplies by is made once, before the reverse sweep."""

import numpy as np
import pytest

import tangent_ckpt as tc
from tangent_ckpt import runtime as rt
from tangent_ckpt.compiler.package.hoist import transpose_invariants

from code_items import block, line, text

from gradcheck import check_grad
from test_checkpointing import rnn  # h = tanh(h @ W + b), summed


def test_adjoints_of_x1_take_the_transposed_invariant():
    items = [line("bh = rt.matmul_adjoint_x1(bh_matmul, h, W)"),
             block("if c:", [line("bx = bx + rt.matmul_adjoint_x1(g, x, W)")]),
             line("bu = rt.matmul_adjoint_x1(g, u, V)")]
    names = {}
    out = transpose_invariants(items, ["W", "b"], names, lambda base: base)
    assert names == {"W": "W_T"}
    assert text(out[0]) == "bh = rt.matmul_adjoint_x1(bh_matmul, h, W, W_T)"
    assert text(out[1].body[0]) == "bx = bx + rt.matmul_adjoint_x1(g, x, W, W_T)"
    assert text(out[2]) == "bu = rt.matmul_adjoint_x1(g, u, V)"  # V is not invariant
    fixed = transpose_invariants([line("a = rt.matmul_adjoint_x1(g, x, V)")], ["V"], names,
                                 lambda base: base, grow=False)
    assert text(fixed[0]) == "a = rt.matmul_adjoint_x1(g, x, V)" and "V" not in names


def test_transposed_is_a_row_ordered_copy_of_2d_arrays_only():
    w = np.arange(6.0).reshape(2, 3)
    t = rt.transposed(w)
    assert t.flags.c_contiguous and np.array_equal(t, w.T)
    assert rt.transposed(np.ones(3)) is None and rt.transposed(2.0) is None
    g = np.ones((4, 3))
    np.testing.assert_array_equal(rt.matmul_adjoint_x1(g, np.ones((4, 2)), w, t), g @ w.T)


def readout(h, v, n):
    for t in range(n):
        h = np.tanh(h + 0.1 * np.sum(h @ v))  # v is a vector: no transposed copy helps
    return np.sum(h)


@pytest.mark.parametrize("options", [dict(snapshots=3), dict(memory_budget=20000)])
def test_checkpointed_loop_makes_the_transposed_copy_once(options):
    r = np.random.default_rng(2)
    h, W, b, n = r.normal(size=(3, 6)), 0.4 * r.normal(size=(6, 6)), r.normal(size=6), 8
    df = tc.grad_with_checkpointing(rnn, wrt=(0, 1, 2), **options)
    src = df.source
    assert "W_T = rt.transposed(W)" in src and "rt.matmul_adjoint_x1(bh_matmul, h, W, W_T)" in src
    assert src.count("rt.transposed(") == 1
    got = df(h, W, b, n)
    for g, t in zip(got, tc.grad(rnn, wrt=(0, 1, 2))(h, W, b, n)):
        np.testing.assert_allclose(g, t, rtol=1e-12, atol=1e-14)
    check_grad(rnn, (h, W, b, n), (0, 1, 2), df=df)


def test_an_invariant_that_is_not_a_matrix_keeps_the_plain_adjoint():
    r = np.random.default_rng(4)
    h, v, n = r.normal(size=(2, 5)), r.normal(size=5), 6
    df = tc.grad_with_checkpointing(readout, wrt=(0, 1), snapshots=2)
    check_grad(readout, (h, v, n), (0, 1), df=df)
