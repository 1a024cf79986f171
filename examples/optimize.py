"""SciPy's L-BFGS-B on tangent_ckpt gradients: ``tc.ravel`` + ``value_and_grad(..., flat=True)``.

    python examples/optimize.py                 # network: 64 samples; heating: 168 hours, 4 zones
    python examples/optimize.py --hours 24 --zones 2

``scipy.optimize.minimize(fun, x0, jac=True)`` wants one flat vector of
parameters and a function returning the value and the flat gradient.
``tc.ravel(params)`` gives ``(flat, unravel)`` for nested parameters, and
``tc.value_and_grad(f, wrt=..., flat=True)`` returns ``(value, flat gradient)``
with the gradients raveled in the same order.

1. A two-layer network ``[(W1, b1), (W2, b2)]`` fitted to a smooth function
   (the flat gradient is first checked against central finite differences).
2. The heating schedule ``u`` (hours x zones) of ``yearly_cost`` from
   ``examples/building_energy.py``, whose loop over the hours is checkpointed
   (taped vs checkpointed, finite differences, peak memory checked first).

The script prints the cost before and after each fit and the final gradient
norm.  Without SciPy it says so and exits with status 0 (``check: SKIPPED``).
"""

import argparse
import os
import sys
from typing import List, Optional, Tuple

import numpy as np

import tangent_ckpt as tc
from tangent_ckpt.demo import check_example

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from building_energy import make_inputs, yearly_cost  # noqa: E402


def mse(W1: np.ndarray, b1: np.ndarray, W2: np.ndarray, b2: np.ndarray,
        X: np.ndarray, y: np.ndarray) -> float:
    """Mean squared error of the network ``tanh(X @ W1 + b1) @ W2 + b2``."""
    h = np.tanh(X @ W1 + b1)
    return np.mean((h @ W2 + b2 - y) ** 2)


def network_data(samples: int, hidden: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2.0, 2.0, size=(samples, 2))
    y = np.sin(X[:, 0]) * np.cos(X[:, 1])
    params = [(0.5 * rng.standard_normal((2, hidden)), np.zeros(hidden)),
              (0.5 * rng.standard_normal(hidden), np.zeros(()))]
    return X, y, params


def flat_fd_error(fun, x: np.ndarray, checks: int, eps: float = 1e-6, seed: int = 1) -> float:
    """Worst relative error of ``fun``'s flat gradient against central differences."""
    rng = np.random.default_rng(seed)
    _, grad = fun(x)
    worst = 0.0
    for j in rng.choice(x.size, size=min(checks, x.size), replace=False):
        step = np.zeros_like(x)
        step[j] = eps
        numeric = (fun(x + step)[0] - fun(x - step)[0]) / (2 * eps)
        worst = max(worst, abs(numeric - grad[j]) / max(abs(numeric), 1e-8))
    return worst


def fit_network(minimize, samples: int, hidden: int, maxiter: int, fd_checks: int) -> int:
    X, y, params = network_data(samples, hidden)
    x0, unravel = tc.ravel(params)
    print(f"two-layer network: {samples} samples, {hidden} hidden units, "
          f"{x0.size} parameters in [(W1, b1), (W2, b2)]")
    value_and_flat_grad = tc.value_and_grad(mse, wrt=(0, 1, 2, 3), flat=True)

    def fun(x: np.ndarray) -> Tuple[float, np.ndarray]:
        (W1, b1), (W2, b2) = unravel(x)
        value, grad = value_and_flat_grad(W1, b1, W2, b2, X, y)
        return float(value), grad

    error = flat_fd_error(fun, x0, fd_checks)
    print(f"  flat gradient vs central differences at {fd_checks} entries: "
          f"max relative error {error:.1e}")
    if not error < 1e-6:
        print("check: FAILED (network gradient)")
        return 1
    before = fun(x0)[0]
    res = minimize(fun, x0, jac=True, method="L-BFGS-B", options={"maxiter": maxiter})
    after, grad = fun(res.x)
    print(f"  L-BFGS-B: {res.nit} iterations, {res.nfev} evaluations; mean squared error "
          f"{before:.4f} -> {after:.4f}; gradient norm {np.linalg.norm(grad):.1e}")
    if not after < 0.5 * before:
        print("check: FAILED (the optimizer did not fit the network)")
        return 1
    return 0


def optimize_heating(minimize, hours: int, zones: int, snapshots: int, maxiter: int,
                     fd_checks: int) -> int:
    u0, T0, T_out, price, coupling, n = make_inputs(hours, zones)
    print(f"\noptimal heating: {zones} zones, {hours} hours, {u0.size} controls, "
          f"{snapshots} snapshots")
    taped = tc.grad(yearly_cost, wrt=(0,))  # a tuple in, a 1-tuple out, as check_example reads
    ckpt = tc.grad_with_checkpointing(yearly_cost, wrt=(0,), snapshots=snapshots)
    status = check_example(yearly_cost, (u0, T0, T_out, price, coupling, n), (0,), ("u",),
                           taped, ckpt, fd_checks=fd_checks, snapshots=snapshots,
                           eps=1e-3, label="gradient check")
    if status:
        print("check: FAILED (gradient)")
        return status

    x0, unravel = tc.ravel(u0)  # the (hours, zones) schedule as one vector
    cost_and_grad = tc.value_and_grad(yearly_cost, wrt=0, checkpoint=True,
                                      snapshots=snapshots, flat=True)

    def fun(x: np.ndarray) -> Tuple[float, np.ndarray]:
        value, grad = cost_and_grad(unravel(x), T0, T_out, price, coupling, n)
        return float(value), grad

    before = fun(x0)[0]
    res = minimize(fun, x0, jac=True, method="L-BFGS-B", options={"maxiter": maxiter})
    after, grad = fun(res.x)
    print(f"\nL-BFGS-B: {res.nit} iterations, {res.nfev} cost+gradient evaluations, "
          f"{res.message}")
    print(f"  cost before {before:.6f}   after {after:.6f}   ({before / after:.2f}x lower)")
    print(f"  final gradient norm {np.linalg.norm(grad):.2e}")
    if not after < before:
        print("check: FAILED (the optimizer did not lower the cost)")
        return 1
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--samples", type=int, default=64)
    p.add_argument("--hidden", type=int, default=8)
    p.add_argument("--hours", type=int, default=168)
    p.add_argument("--zones", type=int, default=4)
    p.add_argument("--snapshots", type=int, default=8)
    p.add_argument("--maxiter", type=int, default=200)
    p.add_argument("--fd-checks", type=int, default=4)
    args = p.parse_args(argv)
    try:
        from scipy.optimize import minimize
    except ImportError:
        print("SciPy is not installed (pip install scipy): nothing to optimize")
        print("check: SKIPPED")
        return 0

    status = fit_network(minimize, args.samples, args.hidden, args.maxiter, args.fd_checks)
    if status:
        return status
    status = optimize_heating(minimize, args.hours, args.zones, args.snapshots, args.maxiter,
                              args.fd_checks)
    if status:
        return status
    print("check: OK (gradients checked, the network fitted and the heating cost lowered "
          "by L-BFGS-B)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
