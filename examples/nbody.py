"""An N-body simulation as people write it, differentiated through every step.

    python examples/nbody.py                     # 40 stars, 400 leapfrog steps
    python examples/nbody.py --bodies 8 --steps 50 --source

The simulation follows the structure of Philip Mocz's "Create Your Own N-body
Simulation" (github.com/pmocz/nbody-python): pairwise separations from column
slices (``x.T - x``), a softened ``1/r^3`` written in place through a boolean
mask (``inv_r3[inv_r3 > 0] = inv_r3[inv_r3 > 0] ** -1.5``), ``np.hstack`` of the
three components, and a kick-drift-kick leapfrog updating ``vel`` and ``pos`` in
place.  The loss is the final total energy (kinetic + softened potential) plus
the spread of the cluster; the gradient is w.r.t. the initial positions and
velocities.  Each step builds several N x N matrices, so a taped gradient keeps
O(steps * N^2) floats; the checkpointed one keeps ``--snapshots`` copies of
(pos, vel, acc) and replays steps on the Revolve schedule.  Prints taped vs
checkpointed, finite differences, the peak memory of both gradient calls, then
``check: OK``.
"""

import argparse
import sys

import numpy as np

import tangent_ckpt as tc
from tangent_ckpt.demo import check_example

G = 1.0            # Newton's constant in simulation units
SOFTENING = 0.1    # softening length


def get_acc(pos, mass):
    """Acceleration of each body from all the others (N x 3)."""
    x = pos[:, 0:1]
    y = pos[:, 1:2]
    z = pos[:, 2:3]
    dx = x.T - x
    dy = y.T - y
    dz = z.T - z
    inv_r3 = dx ** 2 + dy ** 2 + dz ** 2 + SOFTENING ** 2
    inv_r3[inv_r3 > 0] = inv_r3[inv_r3 > 0] ** (-1.5)
    ax = G * (dx * inv_r3) @ mass
    ay = G * (dy * inv_r3) @ mass
    az = G * (dz * inv_r3) @ mass
    return np.hstack((ax, ay, az))


def get_energy(pos, vel, mass):
    """Kinetic and (softened) potential energy, each pair counted once."""
    KE = 0.5 * np.sum(mass * vel ** 2)
    x = pos[:, 0:1]
    y = pos[:, 1:2]
    z = pos[:, 2:3]
    inv_r = 1.0 / np.sqrt((x.T - x) ** 2 + (y.T - y) ** 2 + (z.T - z) ** 2 + SOFTENING ** 2)
    PE = G * np.sum(np.triu(-(mass * mass.T) * inv_r, 1))
    return KE, PE


def loss(pos, vel, mass, n_steps, dt):
    """Leapfrog (kick-drift-kick) for n_steps; final energy plus the cluster's spread."""
    pos = pos.copy()
    vel = vel.copy()
    acc = get_acc(pos, mass)
    for i in range(n_steps):
        vel += acc * dt / 2.0
        pos += vel * dt
        acc = get_acc(pos, mass)
        vel += acc * dt / 2.0
    KE, PE = get_energy(pos, vel, mass)
    return KE + PE + 0.1 * np.sum(pos ** 2)


def make_inputs(bodies, steps, dt, seed=17):
    rng = np.random.default_rng(seed)
    mass = 20.0 * np.ones((bodies, 1)) / bodies
    pos = rng.standard_normal((bodies, 3))
    vel = rng.standard_normal((bodies, 3))
    vel -= np.mean(mass * vel, 0) / np.mean(mass)      # centre-of-mass frame
    return pos, vel, mass, steps, dt


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bodies", type=int, default=40)
    p.add_argument("--steps", type=int, default=400)
    p.add_argument("--dt", type=float, default=0.005)
    p.add_argument("--snapshots", type=int, default=10)
    p.add_argument("--fd-checks", type=int, default=4)
    p.add_argument("--source", action="store_true", help="print the generated gradient")
    args = p.parse_args(argv)
    if args.bodies < 2 or args.steps < 1 or args.snapshots < 1:
        p.error("--bodies must be >= 2, --steps and --snapshots >= 1")
    inputs = make_inputs(args.bodies, args.steps, args.dt)
    print(f"N-body leapfrog: {args.bodies} bodies, {args.steps} steps of dt = {args.dt} "
          f"(t = {args.steps * args.dt:g}), {args.snapshots} snapshots; "
          "gradient w.r.t. pos0, vel0")
    taped = tc.grad(loss, wrt=(0, 1))
    ckpt = tc.grad_with_checkpointing(loss, wrt=(0, 1), snapshots=args.snapshots)
    if args.source:
        print(ckpt.source)
    return check_example(loss, inputs, (0, 1), ("pos0", "vel0"), taped, ckpt,
                         fd_checks=args.fd_checks, snapshots=args.snapshots, rtol=1e-5)


if __name__ == "__main__":
    sys.exit(main())
