"""The 1-D heat equation, explicit Euler: an array state updated through slices.

    python examples/heat_equation.py                 # 256 cells, 5000 steps
    python examples/heat_equation.py --cells 32 --steps 200

``u[1:-1] = u[1:-1] + k[1:-1] * (u[2:] - 2 u[1:-1] + u[:-2])`` updates the
interior of ``u`` in place (the ends are fixed).  The function copies its input
first (``u = u0.copy()``) so that calling it never changes the caller's array;
the checkpointed loop snapshots ``u`` by copy.  The loss is the misfit to a
target profile; the gradient is w.r.t. the initial temperature ``u0`` and the
diffusivity field ``k`` (an inverse problem).  Prints taped vs checkpointed,
finite differences, the peak memory of both gradient calls, then ``check: OK``.
"""

import argparse
import sys

import numpy as np

import tangent_ckpt as tc
from tangent_ckpt.demo import check_example


def misfit(u0, k, target, n):
    u = u0.copy()
    for t in range(n):
        u[1:-1] = u[1:-1] + k[1:-1] * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return np.sum((u - target) ** 2)


def make_inputs(cells, steps, seed=0):
    rng = np.random.default_rng(seed)
    x = np.linspace(0.0, 1.0, cells)
    u0 = np.exp(-((x - 0.3) / 0.1) ** 2) + 0.05 * rng.standard_normal(cells)
    k = 0.2 + 0.1 * rng.random(cells)       # k dt / dx^2 < 0.5: stable
    target = 0.5 * np.exp(-((x - 0.5) / 0.2) ** 2)
    return u0, k, target, steps


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cells", type=int, default=256)
    p.add_argument("--steps", type=int, default=5000)
    p.add_argument("--snapshots", type=int, default=16)
    p.add_argument("--fd-checks", type=int, default=4)
    p.add_argument("--source", action="store_true", help="print the generated gradient")
    args = p.parse_args(argv)
    inputs = make_inputs(args.cells, args.steps)
    print(f"heat equation: {args.cells} cells, {args.steps} explicit steps, "
          f"state u = {inputs[0].nbytes / 1e3:.1f} kB, {args.snapshots} snapshots; "
          "gradient w.r.t. u0 and k")
    u0_before = inputs[0].copy()
    taped = tc.grad(misfit, wrt=(0, 1))
    ckpt = tc.grad_with_checkpointing(misfit, wrt=(0, 1), snapshots=args.snapshots)
    if args.source:
        print(ckpt.source)
    status = check_example(misfit, inputs, (0, 1), ("u0", "k"), taped, ckpt,
                           fd_checks=args.fd_checks, snapshots=args.snapshots)
    if not np.array_equal(inputs[0], u0_before):  # the function must not mutate its argument
        print("check: FAILED (u0 was modified)")
        return 1
    return status


if __name__ == "__main__":
    sys.exit(main())
