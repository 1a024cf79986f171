"""Optimal heating schedule with SciPy: ``minimize(..., jac=True)`` on ``tc.value_and_grad``.

    python examples/optimize.py                 # one week (168 hours), 4 zones
    python examples/optimize.py --hours 24 --zones 2

The cost is ``yearly_cost`` from ``examples/building_energy.py`` (imported from
this folder).  ``tc.value_and_grad(..., checkpoint=True)`` returns the cost and
its gradient w.r.t. the heating schedule ``u`` in one call, with the loop over
the hours checkpointed; ``scipy.optimize.minimize(fun, x0, jac=True,
method="L-BFGS-B")`` uses both.  First the gradient is checked (taped vs
checkpointed, finite differences, peak memory), then the optimizer runs and
the script prints the cost before and after and the final gradient norm.

Without SciPy the script says so and exits with status 0 (``check: SKIPPED``).
"""

import argparse
import os
import sys

import numpy as np

import tangent_ckpt as tc
from tangent_ckpt.demo import check_example

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from building_energy import make_inputs, yearly_cost  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
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

    u0, T0, T_out, price, coupling, n = make_inputs(args.hours, args.zones)
    shape = u0.shape
    print(f"optimal heating: {args.zones} zones, {args.hours} hours, "
          f"{u0.size} controls, {args.snapshots} snapshots")

    taped = tc.grad(yearly_cost, wrt=(0,))
    ckpt = tc.grad_with_checkpointing(yearly_cost, wrt=(0,), snapshots=args.snapshots)
    status = check_example(yearly_cost, (u0, T0, T_out, price, coupling, n), (0,), ("u",),
                           taped, ckpt, fd_checks=args.fd_checks, snapshots=args.snapshots,
                           eps=1e-3, label="gradient check")
    if status:
        print("check: FAILED (gradient)")
        return status

    cost_and_grad = tc.value_and_grad(yearly_cost, wrt=0, checkpoint=True,
                                      snapshots=args.snapshots)

    def fun(x):
        value, g = cost_and_grad(x.reshape(shape), T0, T_out, price, coupling, n)
        return float(value), g.ravel()

    before = yearly_cost(u0, T0, T_out, price, coupling, n)
    res = minimize(fun, u0.ravel(), jac=True, method="L-BFGS-B",
                   options={"maxiter": args.maxiter})
    after = yearly_cost(res.x.reshape(shape), T0, T_out, price, coupling, n)
    gnorm = float(np.linalg.norm(fun(res.x)[1]))
    print(f"\nL-BFGS-B: {res.nit} iterations, {res.nfev} cost+gradient evaluations, "
          f"{res.message}")
    print(f"  cost before {before:.6f}   after {after:.6f}   ({before / after:.2f}x lower)")
    print(f"  final gradient norm {gnorm:.2e}")
    if not after < before:
        print("check: FAILED (the optimizer did not lower the cost)")
        return 1
    print("check: OK (gradient checked, cost lowered by the optimizer)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
