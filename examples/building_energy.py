"""Heating a building: a running cost and data indexed by the loop counter.

    python examples/building_energy.py               # 2000 hourly steps, 4 zones
    python examples/building_energy.py --hours 8760  # a whole year
    python examples/building_energy.py --hours 48 --zones 2

A lumped thermal model: each hour ``t`` the zone temperatures ``T`` relax to
the outdoor temperature ``T_out[t]`` and to each other, the heaters add
``gain * u[t]``, and the cost accumulates the energy bill ``price[t] * u[t]^2``
plus a comfort penalty ``(T - setpoint)^2``.  The carried state is
``(T, cost)``; the data (``T_out``, ``price``) and the controls ``u`` are
indexed by the loop counter, so the adjoint of ``u[t]`` lands in row ``t`` of
the gradient.  The gradient is w.r.t. the heating schedule ``u`` (hours x
zones) and the initial temperatures.  Prints taped vs checkpointed, finite
differences, the peak memory of both gradient calls, then ``check: OK``.
``examples/optimize.py`` minimizes this cost with SciPy.
"""

import argparse
import sys

import numpy as np

import tangent_ckpt as tc
from tangent_ckpt.demo import check_example

SETPOINT = 21.0


def yearly_cost(u, T0, T_out, price, coupling, n):
    """u (n, zones) heating power; T0 (zones,); T_out, price (n,); coupling (zones, zones)."""
    T = T0
    cost = 0.0
    for t in range(n):
        loss_out = 0.05 * (T_out[t] - T)
        exchange = T @ coupling
        T = T + loss_out + exchange + 0.5 * u[t]
        cost = cost + price[t] * np.sum(u[t] ** 2) + 0.1 * np.sum((T - SETPOINT) ** 2)
    return cost / n


def make_inputs(hours, zones, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(hours)
    T_out = 5.0 - 8.0 * np.cos(2 * np.pi * t / 8760.0) - 4.0 * np.cos(2 * np.pi * t / 24.0)
    price = 0.2 + 0.1 * (np.sin(2 * np.pi * t / 24.0) > 0) + 0.01 * rng.random(hours)
    A = 0.02 * rng.random((zones, zones))
    A = 0.5 * (A + A.T)
    coupling = A - np.diag(A.sum(axis=1))            # heat flows between zones, conserved
    u = 1.0 + 0.1 * rng.standard_normal((hours, zones))
    T0 = 18.0 + rng.random(zones)
    return u, T0, T_out, price, coupling, hours


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--hours", type=int, default=2000)
    p.add_argument("--zones", type=int, default=4)
    p.add_argument("--snapshots", type=int, default=20)
    p.add_argument("--fd-checks", type=int, default=4)
    p.add_argument("--source", action="store_true", help="print the generated gradient")
    args = p.parse_args(argv)
    inputs = make_inputs(args.hours, args.zones)
    print(f"building: {args.zones} zones, {args.hours} hourly steps, running cost; "
          f"{args.snapshots} snapshots; gradient w.r.t. the heating schedule u and T0")
    taped = tc.grad(yearly_cost, wrt=(0, 1))
    ckpt = tc.grad_with_checkpointing(yearly_cost, wrt=(0, 1), snapshots=args.snapshots)
    if args.source:
        print(ckpt.source)
    # the model is linear and the cost quadratic in u and T0, so central differences
    # are exact up to rounding: a large step (1e-3) keeps the rounding error small
    return check_example(yearly_cost, inputs, (0, 1), ("u", "T0"), taped, ckpt,
                         fd_checks=args.fd_checks, snapshots=args.snapshots, eps=1e-3)


if __name__ == "__main__":
    sys.exit(main())
