"""Small loops of the kinds simulation code is made of, shared by the numba
backend's tests: a heat equation updated through slices, a Lorenz-96 RK4
integrator, an RNN, and a loop with if/else and break."""

import numpy as np


def heat_loss(u0, k, target, n):
    u = u0.copy()
    for t in range(n):
        u[1:-1] = u[1:-1] + k[1:-1] * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return np.sum((u - target) ** 2)


def lorenz96_tendency(x, F):
    return (np.roll(x, -1) - np.roll(x, 2)) * np.roll(x, 1) - x + F


def lorenz96_loss(x, F, n, dt):
    for t in range(n):
        k1 = lorenz96_tendency(x, F)
        k2 = lorenz96_tendency(x + 0.5 * dt * k1, F)
        k3 = lorenz96_tendency(x + 0.5 * dt * k2, F)
        k4 = lorenz96_tendency(x + dt * k3, F)
        x = x + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return np.sum(x ** 2)


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
