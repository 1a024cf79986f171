"""lower/calls.py rewritten_method + ATTRIBUTE_FUNCTIONS: ``.real``, ``.imag``,
``.conj()``, ``.T``, ``.shape``/``.ndim``/``.size``/``.dtype``,
``.astype(float)``, ``.copy()``, ``.item()``; draws with ``rng.rand`` /
``rng.random`` like ``rng.randn``."""

import numpy as np
import pytest

import tangent_ckpt as tc
from construct_check import check_construct
from gradcheck import check_grad

RNG = np.random.default_rng(11)
X = RNG.standard_normal((3, 3))


def attributes(x):
    z = x.real + x.conj() + x.T * x.imag + x.astype(float) * x.copy()
    return np.sum(z) * x.size + x.ndim + x[0, 0].item() * x.item(4) + len(x.shape)


def float32_cast(x):
    return np.sum(np.sin(x.astype(np.float32).astype("float64")))


def draws(x, seed):
    rng = np.random.RandomState(seed)
    return np.sum(x * rng.rand(3, 3) + x ** 2 * rng.random((3, 3)) + rng.randn(3, 3) * x)


@pytest.mark.parametrize("f, args, autograd", [
    (attributes, (X,), True),
    (float32_cast, (X,), False),
    (draws, (X, 3), False),
], ids=lambda v: getattr(v, "__name__", ""))
def test_an_attribute_or_small_method_is_differentiated(f, args, autograd):
    if f is float32_cast:  # float32 rounds: compare with finite differences loosely
        g = tc.grad(f)(*args)
        np.testing.assert_allclose(g, np.cos(X.astype(np.float32).astype(float)), rtol=1e-6)
        return
    check_construct(f, args, (0,), autograd=autograd)


def integer_cast(x):
    return np.sum(x.astype(int) * x)


def boolean_mask_cast(x):
    mask = np.triu(np.ones((3, 3)), k=1).astype(bool)
    y = x * 1.0
    y[mask] = 0.0
    return np.sum(y ** 2)


@pytest.mark.parametrize("f", [integer_cast, boolean_mask_cast])
def test_a_cast_to_integers_or_booleans_is_a_constant(f):
    """Like np.trunc: piecewise constant, no derivative (checked away from the jumps)."""
    check_grad(f, (np.array([[0.3, 1.6, -2.2], [2.7, -0.4, 1.2], [0.8, 3.3, -1.7]]),))


def complex_cast(x):
    return np.sum(np.abs(x.astype(complex)))


def split_step_fourier(psi_re, V0, nt):
    # a real initial wave function cast to complex, then split-step Fourier steps
    # of the 1-D Schroedinger equation (refused before: "unsupported method .astype()")
    N = psi_re.size
    x = np.linspace(-5, 5, N, endpoint=False)
    k = 2 * np.pi * np.fft.fftfreq(N, d=x[1] - x[0])
    V = V0 * x ** 2
    psi = psi_re.astype(complex)
    for n in range(nt):
        psi = psi * np.exp(-0.025j * V)
        psi = np.fft.ifft(np.exp(-0.025j * k ** 2) * np.fft.fft(psi))
        psi = psi * np.exp(-0.025j * V)
    return np.sum(np.abs(psi) ** 2 * x)


def test_a_cast_to_complex_numbers_is_np_asarray_with_that_dtype():
    check_grad(complex_cast, (X,))


@pytest.mark.parametrize("checkpoint", [False, True])
def test_a_real_wave_function_cast_to_complex_and_stepped(checkpoint):
    psi = np.exp(-(np.linspace(-5, 5, 16, endpoint=False) - 1) ** 2)
    df = tc.grad(split_step_fourier, wrt=(0, 1), checkpoint=checkpoint, snapshots=2)
    check_grad(split_step_fourier, (psi, 0.3, 3), wrt=(0, 1), df=df)


def joined_shape(x, k):
    return np.sum(np.ones(x.shape + (k,)) * x[:, None]) + np.sum(np.ones((k,) + x.shape) * x)


def joined_shape_function(x):
    return np.sum(np.ones(np.shape(x) + (1,))) * np.sum(x)


def joined_shape_slice(x, k):
    return np.sum(np.ones(np.shape(x)[:1] + (2, k))) * np.sum(x)


def repeated_shape(x):
    return np.sum(np.zeros(x.shape * 2)) + np.sum(x) * len(x.shape * 3)


@pytest.mark.parametrize("f, args", [
    (joined_shape, (np.array([0.5, -0.3, 1.2, 0.7]), 3)),
    (joined_shape_function, (np.array([0.5, -0.3, 1.2, 0.7]),)),
    (joined_shape_slice, (np.array([0.5, -0.3, 1.2, 0.7]), 3)),
    (repeated_shape, (np.array([0.5, -0.3, 1.2]),)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_a_shape_is_a_tuple_that_plus_joins(f, args):
    """``x.shape + (k,)`` and ``np.shape(x) + (1,)`` join tuples, as Python runs
    them: ``np.shape(x) + (1,)`` was the elementwise sum, ``np.ones((5,))`` for
    ``np.ones((4, 1))`` (10.5 where Python gives 8.4), and ``x.shape + (k,)`` was
    refused as a list meeting a tuple."""
    value, _ = tc.value_and_grad(f)(*args)
    assert value == pytest.approx(f(*args), rel=1e-12)
    check_grad(f, args)
    check_grad(f, args, df=tc.grad(f, checkpoint=True, snapshots=2))
