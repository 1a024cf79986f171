"""Newton-CG with checkpointed Hessian-vector products: fit an RNN simulation.

    python examples/newton_cg.py                       # 1 000 steps, 10 snapshots
    python examples/newton_cg.py --steps 200 --hidden 3 --snapshots 4

The recurrent weights ``W`` and bias ``b`` of a long simulation
``h = tanh(h @ W + x[t] + b)`` are fitted to the trajectory of a "true" model
(the misfit is summed over every step).  Two SciPy optimizers run from the same
start:

- ``trust-ncg``, given the gradient (``tc.value_and_grad``) and the
  Hessian-vector product ``tc.hvp`` -- reverse mode over the tangent-linear
  program, its loop checkpointed on the Revolve schedule like the gradient's;
- ``L-BFGS-B`` with the gradient alone.

Before optimizing, the Hessian-vector product is checked against central
differences of the gradient, and the checkpointed one against the taped one.
The script prints, per optimizer, its iterations, function / gradient /
Hessian-vector evaluations, wall time and the tracemalloc peak.  Without SciPy
it says so and exits with status 0 (``check: SKIPPED``).
"""

import argparse
import sys
import time
import tracemalloc
from typing import List, Optional

import numpy as np

import tangent_ckpt as tc


def misfit(W: np.ndarray, b: np.ndarray, h0: np.ndarray, X: np.ndarray, Y: np.ndarray,
           n: int) -> float:
    """Mean over the steps of the squared distance between the simulated and the
    observed states."""
    h = h0
    cost = 0.0
    for t in range(n):
        h = np.tanh(h @ W + X[t] + b)
        cost = cost + np.sum((h - Y[t]) ** 2)
    return cost / n


def make_problem(steps: int, hidden: int, batch: int = 4, seed: int = 0):
    """The inputs, the observed trajectory of the true model, and a start."""
    rng = np.random.default_rng(seed)
    W_true = 0.6 * rng.standard_normal((hidden, hidden)) / np.sqrt(hidden)
    b_true = 0.1 * rng.standard_normal(hidden)
    h0 = 0.5 * rng.standard_normal((batch, hidden))
    X = 0.5 * rng.standard_normal((steps, batch, hidden))
    Y = np.empty_like(X)
    h = h0
    for t in range(steps):
        h = np.tanh(h @ W_true + X[t] + b_true)
        Y[t] = h
    W0 = W_true + 0.3 * rng.standard_normal(W_true.shape)
    b0 = np.zeros(hidden)
    return (W0, b0), (h0, X, Y, steps)


def check_hvp(hvp_taped, hvp_ckpt, grad, params, data, eps: float = 1e-5) -> float:
    """Worst relative error of H v against central differences of the gradient, and
    of the checkpointed product against the taped one (returns the larger)."""
    rng = np.random.default_rng(1)
    v = tuple(rng.standard_normal(p.shape) for p in params)
    taped = hvp_taped(*params, *data, v)
    ckpt = hvp_ckpt(*params, *data, v)
    plus = grad(*[p + eps * d for p, d in zip(params, v)], *data)
    minus = grad(*[p - eps * d for p, d in zip(params, v)], *data)
    fd_error = max(float(np.max(np.abs(h - (gp - gm) / (2 * eps))) / (np.max(np.abs(h)) + 1e-12))
                   for h, gp, gm in zip(taped, plus, minus))
    same = max(float(np.max(np.abs(a - c))) / (np.max(np.abs(a)) + 1e-30)
               for a, c in zip(taped, ckpt))
    print(f"  H v vs central differences of the gradient: max relative error {fd_error:.1e}")
    print(f"  checkpointed H v vs taped H v: max relative difference {same:.1e}")
    return max(fd_error, same * 1e6)  # the two products must agree to round-off


def run(label, minimize, fun, x0, **kwargs):
    counts = {"hessp": 0}
    if "hessp" in kwargs:
        hessp = kwargs["hessp"]

        def counted(x, p):
            counts["hessp"] += 1
            return hessp(x, p)
        kwargs["hessp"] = counted
    tracemalloc.start()
    start = time.perf_counter()
    try:
        res = minimize(fun, x0, jac=True, **kwargs)
        seconds = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return dict(label=label, iterations=res.nit, evaluations=res.nfev,
                hessp=counts["hessp"] if "hessp" in kwargs else "-",
                seconds=seconds, peak=peak, value=float(res.fun), x=res.x)


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--hidden", type=int, default=4)
    p.add_argument("--snapshots", type=int, default=10)
    p.add_argument("--maxiter", type=int, default=200)
    args = p.parse_args(argv)
    try:
        from scipy.optimize import minimize
    except ImportError:
        print("SciPy is not installed (pip install scipy): nothing to optimize")
        print("check: SKIPPED")
        return 0

    (W0, b0), data = make_problem(args.steps, args.hidden)
    x0, unravel = tc.ravel((W0, b0))
    print(f"RNN simulation: {args.steps} steps, {args.hidden} hidden units, {x0.size} "
          f"parameters (W, b); loops checkpointed with {args.snapshots} snapshots")

    options = dict(checkpoint=True, snapshots=args.snapshots)
    value_and_grad = tc.value_and_grad(misfit, wrt=(0, 1), flat=True, **options)
    hvp = tc.hvp(misfit, wrt=(0, 1), **options)
    error = check_hvp(tc.hvp(misfit, wrt=(0, 1)), hvp, tc.grad(misfit, wrt=(0, 1)),
                      (W0, b0), data)
    if not error < 1e-4:
        print("check: FAILED (Hessian-vector product)")
        return 1

    def fun(x):
        value, grad = value_and_grad(*unravel(x), *data)
        return float(value), grad

    def hessp(x, v):
        return tc.ravel(hvp(*unravel(x), *data, unravel(v)))[0]

    start_value = fun(x0)[0]
    rows = [run("trust-ncg (gradient + tc.hvp)", minimize, fun, x0, method="trust-ncg",
                hessp=hessp, options={"maxiter": args.maxiter, "gtol": 1e-8}),
            run("L-BFGS-B (gradient only)", minimize, fun, x0, method="L-BFGS-B",
                options={"maxiter": args.maxiter, "gtol": 1e-8, "ftol": 1e-15})]
    print(f"\n  misfit at the start: {start_value:.3e}")
    print(f"  {'optimizer':32s} {'iters':>6s} {'f+g evals':>10s} {'H v':>6s} "
          f"{'time s':>8s} {'peak MB':>8s} {'final misfit':>13s}")
    for r in rows:
        print(f"  {r['label']:32s} {r['iterations']:6d} {r['evaluations']:10d} "
              f"{str(r['hessp']):>6s} {r['seconds']:8.2f} {r['peak'] / 1e6:8.2f} "
              f"{r['value']:13.3e}")
    if not all(r["value"] < 0.5 * start_value for r in rows):
        print("check: FAILED (an optimizer did not lower the misfit)")
        return 1
    print("check: OK (H v checked; trust-ncg with tc.hvp and L-BFGS-B both lowered the misfit)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
