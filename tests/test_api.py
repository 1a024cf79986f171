"""The public API: grad, value_and_grad, source, the compile cache, register_adjoint."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad

rng = np.random.default_rng(1)


def loss(x, W, b):
    return np.sum(np.tanh(W @ x + b) ** 2)


def vector_out(x, W):
    return np.sin(W @ x)


def test_several_wrt_in_wrt_order():
    x, W, b = rng.standard_normal(3), rng.standard_normal((2, 3)), rng.standard_normal(2)
    db, dx = tc.grad(loss, wrt=(2, 0))(x, W, b)
    assert db.shape == b.shape and dx.shape == x.shape
    check_grad(loss, (x, W, b), wrt=(2, 0))
    check_grad(loss, (x, W, b), wrt=(0, 1, 2))


def test_single_wrt_gives_the_gradient_itself():
    x, W, b = rng.standard_normal(3), rng.standard_normal((2, 3)), rng.standard_normal(2)
    for wrt in (1, (1,)):
        dW = tc.grad(loss, wrt=wrt)(x, W, b)
        assert isinstance(dW, np.ndarray) and dW.shape == W.shape


def test_output_adjoint_argument():
    x, W, seed = rng.standard_normal(3), rng.standard_normal((4, 3)), rng.standard_normal(4)
    df = tc.grad(vector_out, wrt=(0,))
    positional = df(x, W, seed)
    keyword = df(x, W, bvector_out=seed)
    np.testing.assert_allclose(positional, keyword)
    check_grad(vector_out, (x, W), seed=seed)
    np.testing.assert_allclose(df(x, W), df(x, W, np.ones(4)))  # default: ones


def test_value_and_grad():
    x, W, b = rng.standard_normal(3), rng.standard_normal((2, 3)), rng.standard_normal(2)
    value, dx = tc.value_and_grad(loss)(x, W, b)
    assert value == pytest.approx(loss(x, W, b))
    np.testing.assert_allclose(dx, tc.grad(loss)(x, W, b))
    value, (dx2, dW) = tc.value_and_grad(loss, wrt=(0, 1))(x, W, b)
    np.testing.assert_allclose(dx2, dx)
    assert dW.shape == W.shape


def test_source_function_and_attribute():
    df = tc.grad(loss, wrt=(1,))
    assert tc.source(df) == df.source
    assert "def dloss(" in df.source
    with pytest.raises(TypeError):
        tc.source(loss)


def test_repeated_grad_reuses_the_compiled_function():
    first = tc.grad(loss, wrt=(0, 1))
    second = tc.grad(loss, wrt=(0, 1))
    assert first.compile() is second.compile()
    assert first.compile() is not tc.grad(loss, wrt=(0,)).compile()


def test_float32_gradient_keeps_dtype():
    x = rng.standard_normal(3).astype(np.float32)
    W = rng.standard_normal((2, 3)).astype(np.float32)
    b = rng.standard_normal(2).astype(np.float32)
    dx, dW = tc.grad(loss, wrt=(0, 1))(x, W, b)
    assert dx.dtype == np.float32 and dW.dtype == np.float32
    ex, eW = tc.grad(loss, wrt=(0, 1))(x.astype(float), W.astype(float), b.astype(float))
    np.testing.assert_allclose(dx, ex, rtol=1e-4, atol=1e-5)


# --- user adjoints for black boxes ---------------------------------------------------
def blackbox(x, w):
    """A Python loop the compiler should not see (think: a call into scipy)."""
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = np.sin(x[i]) * w
    return out


def blackbox_adjoint(g, ans, x, w):
    return g * np.cos(x) * w, np.sum(g * np.sin(x))


def scale(x, k):
    return x * k


tc.register_adjoint(blackbox, blackbox_adjoint)
tc.register_adjoint(scale, lambda g, ans, x, k: (g * k, None))


def uses_blackbox(x, w, n):
    for t in range(n):
        x = blackbox(x, w)
    return np.sum(scale(x, 3.0) ** 2)


def test_register_adjoint_for_a_black_box():
    check_grad(uses_blackbox, (rng.standard_normal(3), 0.8, 3), wrt=(0, 1))
    source = tc.grad(uses_blackbox, wrt=(0, 1)).source
    assert "blackbox_adjoint(" in source and "for i in range" not in source
