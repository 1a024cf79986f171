"""The problems the array-library tests run on NumPy and on another library
(Dask in CI, CuPy where a GPU is): an RNN, the heat equation updated through
slices (``u[1:-1] = ...`` after ``u = u0.copy()``) and Lorenz-96 with
``np.roll``, each taped and checkpointed, at sizes that keep the tests fast."""

import numpy as np

from examples.heat_equation import misfit as heat_loss
from examples.lorenz96 import loss as lorenz96_loss


def rnn_loss(h, W, b, n):
    for t in range(n):
        h = np.tanh(h @ W + b)
    return np.sum(h)


def problems(rng):
    """{name: (function, NumPy arguments, wrt)} at test sizes."""
    cells = np.linspace(0.0, 1.0, 12)
    u0 = np.exp(-((cells - 0.3) / 0.1) ** 2)
    k = 0.2 + 0.1 * rng.random(12)
    x = 8.0 + rng.standard_normal(8)
    h0 = rng.standard_normal((3, 4))
    W = 0.5 * rng.standard_normal((4, 4))
    return {
        "rnn": (rnn_loss, (h0, W, 0.1 * rng.standard_normal(4), 6), (1, 2)),
        "heat": (heat_loss, (u0, k, 0.5 * u0, 6), (0, 1)),
        "lorenz96": (lorenz96_loss, (x, 8.0 + 0.1 * rng.standard_normal(8), 2, 0.01), (0, 1)),
    }


def assert_same_gradient(got, want):
    """Each gradient of ``got`` (as host values) within 1e-12 of ``want``'s
    largest entry: the same floating-point operations in another library."""
    for g, w in zip(host_values(got), want):
        assert g.shape == np.shape(w)
        scale = max(float(np.max(np.abs(w))), 1e-300)
        assert float(np.max(np.abs(g - w))) <= 1e-12 * scale


def host_values(arrays):
    """NumPy copies of arrays of any library: Dask's computed together (one
    graph), CuPy's copied from the device."""
    if any(hasattr(a, "compute") for a in arrays):
        import dask
        arrays = dask.compute(*arrays)
    return [np.asarray(a.get() if hasattr(type(a), "get") and type(a).__module__.startswith(
        "cupy") else a) for a in arrays]
