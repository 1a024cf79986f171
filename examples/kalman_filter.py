"""A Kalman filter written as a class, the way tracking code writes it
(``predict()`` and ``update(z)`` rebind ``self.x`` and ``self.P``), tuned by
maximum likelihood: the gradient of the innovations' negative log-likelihood
with respect to the process and measurement noise, through the whole filter,
checkpointed over the measurement sequence.

    python examples/kalman_filter.py [--steps 400] [--snapshots 8] [--iterations 30]

Prints the noise levels found by gradient descent on their logarithms, checks
the checkpointed gradient against the taped one and both against central
finite differences, and prints one `check:` line.
"""

import argparse

import numpy as np

import tangent_ckpt as tc


class KalmanFilter:
    """Constant-velocity model: the state is (position, velocity)."""

    def __init__(self, F, H, Q, R, x0, P0):
        self.F = F
        self.H = H
        self.Q = Q
        self.R = R
        self.x = x0
        self.P = P0

    def predict(self):
        self.x = self.F @ self.x
        self.P = self.F @ self.P @ self.F.T + self.Q

    def update(self, z):
        y = z - self.H @ self.x
        S = self.H @ self.P @ self.H.T + self.R
        K = self.P @ self.H.T @ np.linalg.inv(S)
        self.x = self.x + K @ y
        self.P = self.P - K @ self.H @ self.P
        return y, S


def negative_log_likelihood(log_q, log_r, zs, dt):
    """The innovations' negative log-likelihood (up to a constant)."""
    F = np.array([[1.0, dt], [0.0, 1.0]])
    G = np.array([[0.5 * dt * dt], [dt]])
    H = np.array([[1.0, 0.0]])
    kf = KalmanFilter(F, H, np.exp(log_q) * (G @ G.T), np.exp(log_r) * np.eye(1),
                      np.zeros(2), 10.0 * np.eye(2))
    nll = 0.0
    for z in zs:
        kf.predict()
        y, S = kf.update(z)
        nll = nll + 0.5 * (np.log(np.linalg.det(S)) + y @ np.linalg.solve(S, y))
    return nll


def simulate(steps, dt, q, r, seed=0):
    """Positions of a randomly accelerated object, measured with noise."""
    rng = np.random.default_rng(seed)
    pos, vel, zs = 0.0, 1.0, []
    for _ in range(steps):
        acc = np.sqrt(q) * rng.standard_normal()
        pos, vel = pos + vel * dt + 0.5 * acc * dt * dt, vel + acc * dt
        zs.append([pos + np.sqrt(r) * rng.standard_normal()])
    return np.array(zs)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--snapshots", type=int, default=8)
    parser.add_argument("--iterations", type=int, default=30)
    args = parser.parse_args(argv)
    dt = 0.1
    zs = simulate(args.steps, dt, q=0.5, r=0.2)
    grad = tc.grad(negative_log_likelihood, wrt=(0, 1), checkpoint=True,
                   snapshots=args.snapshots)
    log_q, log_r = 0.0, 0.0
    for _ in range(args.iterations):  # plain gradient descent on the log noise levels
        g_q, g_r = grad(log_q, log_r, zs, dt)
        log_q, log_r = log_q - 0.5 * g_q / len(zs), log_r - 0.5 * g_r / len(zs)
    print(f"{args.steps} measurements: q = {np.exp(log_q):.3f} (simulated with 0.5), "
          f"r = {np.exp(log_r):.3f} (simulated with 0.2)")
    point = (log_q, log_r, zs, dt)
    checkpointed = grad(*point)
    taped = tc.grad(negative_log_likelihood, wrt=(0, 1))(*point)
    eps = 1e-6
    fd = [(negative_log_likelihood(log_q + eps * (j == 0), log_r + eps * (j == 1), zs, dt) -
           negative_log_likelihood(log_q - eps * (j == 0), log_r - eps * (j == 1), zs, dt))
          / (2 * eps) for j in (0, 1)]
    same = np.allclose(checkpointed, taped, rtol=1e-10, atol=1e-12)
    close = np.allclose(taped, fd, rtol=1e-5, atol=1e-6)
    print(f"check: {'OK' if same and close else 'FAILED'} (checkpointed = taped: {same}, "
          f"taped = finite differences: {close})")


if __name__ == "__main__":
    main()
