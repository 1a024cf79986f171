"""User-supplied adjoints of a stage (@tc.custom_adjoint, register_adjoint), inside
checkpointed loops, and stages that checkpoint themselves (recursive checkpointing);
tc.checkpointed_loop inside a differentiated function."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad, numeric_grad

RNG = np.random.default_rng(11)
X = RNG.standard_normal((3, 4))
W = RNG.standard_normal((4, 4)) * 0.5


def close(a, b, tol=1e-12):
    a = a if isinstance(a, tuple) else (a,)
    b = b if isinstance(b, tuple) else (b,)
    for x, y in zip(a, b):
        np.testing.assert_allclose(x, y, rtol=tol, atol=tol)


@tc.custom_adjoint
def stage(x, W):
    return np.tanh(x @ W)


@stage.defadjoint
def _stage_adjoint(g, ans, x, W):
    gpre = g * (1.0 - ans * ans)
    return gpre @ W.T, x.T @ gpre


def stage_plain(x, W):
    return np.tanh(x @ W)


def black_box(x, W):  # no source needed: its adjoint by finite differences
    return np.sin(x @ W)


@tc.register_adjoint(black_box)
def _black_box_adjoint(g, ans, x, W):
    eps = 1e-6
    gx, gW = np.zeros_like(x), np.zeros_like(W)
    for arr, grad in ((x, gx), (W, gW)):
        for i in np.ndindex(arr.shape):
            old = arr[i]
            arr[i] = old + eps
            hi = np.sum(g * black_box(x, W))
            arr[i] = old - eps
            lo = np.sum(g * black_box(x, W))
            arr[i] = old
            grad[i] = (hi - lo) / (2 * eps)
    return gx, gW


def f_stage(x, W, n):
    for t in range(n):
        x = stage(x, W) + x
    return np.sum(x ** 2)


def f_stage_plain(x, W, n):
    for t in range(n):
        x = stage_plain(x, W) + x
    return np.sum(x ** 2)


def f_box(x, W):
    return np.sum(black_box(x, W) ** 2)


def test_analytic_custom_adjoint_everywhere():
    want = tc.grad(f_stage_plain, wrt=(0, 1))(X, W, 5)
    close(tc.grad(f_stage, wrt=(0, 1))(X, W, 5), want)
    for s in (1, 2, 5):
        close(tc.grad_with_checkpointing(f_stage, wrt=(0, 1), snapshots=s)(X, W, 5), want)
    close(tc.grad(f_stage, wrt=(0, 1), checkpoint=True, memory_budget="64kB")(X, W, 5), want)
    assert "stage_adjoint(" in tc.grad(f_stage, wrt=1).source


def test_finite_difference_adjoint():
    got = tc.grad(f_box, wrt=(0, 1))(X.copy(), W.copy())
    want = numeric_grad(f_box, (X, W), wrt=(0, 1))
    close(got, want, tol=1e-6)


def rnn(h, W, n):
    for t in range(n):
        h = np.tanh(h @ W)
    return h


def rnn_sum(h, W, n, g):
    return np.sum(g * rnn(h, W, n))


_inner = tc.grad_with_checkpointing(rnn_sum, wrt=(0, 1), snapshots=2)


@tc.custom_adjoint
def long_stage(h, W):
    return rnn(h, W, 6)


@long_stage.defadjoint
def _long_stage_adjoint(g, ans, h, W):
    return _inner(h, W, 6, g)  # the stage checkpoints itself: recursive checkpointing


def f_recursive(h, W, n):
    for t in range(n):
        h = long_stage(h, W) * 0.9 + h * 0.1
    return np.sum(h ** 2)


def f_recursive_plain(h, W, n):
    for t in range(n):
        h = rnn(h, W, 6) * 0.9 + h * 0.1
    return np.sum(h ** 2)


def test_recursive_checkpointing():
    want = tc.grad(f_recursive_plain, wrt=(0, 1))(X, W, 3)
    close(tc.grad_with_checkpointing(f_recursive, wrt=(0, 1), snapshots=1)(X, W, 3), want)
    with tc.profile() as prof:
        tc.grad_with_checkpointing(f_recursive, wrt=(0, 1), snapshots=1)(X, W, 3)
    assert len(prof.loops) == 2  # the outer loop and the stage's own loop


def test_custom_adjoint_keyword_form_and_decorator_returns():
    def double(x):
        return 2.0 * x
    deco = tc.custom_adjoint(adjoint=lambda g, ans, x: 2.0 * g)
    assert deco(double) is double

    def f(x):
        return np.sum(double(x) ** 2)
    check_grad(f, (X,))


def step(h):
    return np.tanh(h @ W) + 0.1 * h


def f_ckloop(h, n):
    out, _ = tc.checkpointed_loop(step, h, n, 2)
    return np.sum(out ** 2)


def f_ckloop_plain(h, n):
    for k in range(n):
        h = step(h)
    return np.sum(h ** 2)


def test_checkpointed_loop_is_differentiable():
    want = tc.grad(f_ckloop_plain)(X, 7)
    close(tc.grad(f_ckloop)(X, 7), want)
    src = tc.grad(f_ckloop).source
    assert "rt.CheckpointedLoop(" in src and "snapshots=2" in src
    with tc.profile() as prof:
        tc.grad(f_ckloop)(X, 7)
    (st,) = prof.loops.values()
    assert st.peak_snapshots <= 2 and st.steps_recomputed == st.forward_steps - 7 > 0
    check_grad(f_ckloop, (X, 4))
    assert np.allclose(f_ckloop(X, 7), f_ckloop_plain(X, 7), rtol=1e-15)


def test_checkpointed_loop_num_checkpoints_must_be_constant():
    def f(h, n, s):
        out, _ = tc.checkpointed_loop(step, h, n, s)
        return np.sum(out)
    with pytest.raises(tc.UnsupportedSyntaxError, match="constant int"):
        tc.grad(f)(X, 3, 2)
