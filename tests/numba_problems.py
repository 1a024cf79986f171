"""Small loops of the kinds simulation code is made of, shared by the numba
backend's tests: a heat equation updated through slices and a Lorenz-96 RK4
integrator (the examples'), an RNN, and a loop with if/else and break."""

import os

import numpy as np
import pytest

from examples.heat_equation import misfit as heat_loss
from examples.lorenz96 import loss as lorenz96_loss


def rnn_loss(h, W, b, n):
    for t in range(n):
        h = np.tanh(h @ W + b)
    return np.sum(h)


def branchy_loss(x, a, n):
    s = 0.0
    for t in range(n):
        if np.sum(x) > 40.0:
            break
        if t % 2 == 0:
            x = x * a + 0.1
        else:
            x = np.sin(x) * a
        s = s + np.sum(x)
    return s + np.sum(x ** 2)


def cases(rng):
    """(name, function, arguments, wrt, options) of each problem at a test size."""
    cells = np.linspace(0.0, 1.0, 32)
    u0 = np.exp(-((cells - 0.3) / 0.1) ** 2)
    k = 0.2 + 0.1 * rng.random(32)
    x40 = 8.0 + rng.standard_normal(40)
    h0 = rng.standard_normal((4, 8))
    W = 0.5 * rng.standard_normal((8, 8)) / np.sqrt(8)
    return [
        ("heat", heat_loss, (u0, k, 0.5 * u0, 200), (0, 1), dict(snapshots=5)),
        ("lorenz96", lorenz96_loss, (x40, 8.0, 100, 0.01), (0, 1), dict(snapshots=4)),
        ("rnn", rnn_loss, (h0, W, 0.1 * rng.standard_normal(8), 30), (1, 2),
         dict(snapshots=4)),
        ("branchy", branchy_loss, (0.5 + 0.1 * rng.random(6), 1.05, 60), (0, 1),
         dict(snapshots=4)),
    ]


def close(got, want):
    """Each gradient of ``got`` within 1e-12 (relative to its largest entry) of ``want``."""
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    for g, w in zip(got, want):
        scale = max(float(np.max(np.abs(w))), 1e-300)
        assert float(np.max(np.abs(np.asarray(g) - w))) <= 1e-12 * scale


@pytest.fixture(autouse=True, scope="module")
def private_cache(tmp_path_factory):
    """Compiled modules and Numba's cache go to a folder of this test run (a test
    module takes it with ``from tests.numba_problems import private_cache``)."""
    old = os.environ.get("TANGENT_CKPT_NUMBA_CACHE")
    os.environ["TANGENT_CKPT_NUMBA_CACHE"] = str(tmp_path_factory.mktemp("numba_cache"))
    yield
    if old is None:
        del os.environ["TANGENT_CKPT_NUMBA_CACHE"]
    else:
        os.environ["TANGENT_CKPT_NUMBA_CACHE"] = old
