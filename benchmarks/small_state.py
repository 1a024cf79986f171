"""Small-state loops: tangent_ckpt's gradients beside hand-written NumPy floors.

    python benchmarks/small_state.py                 # the three problems, full size
    python benchmarks/small_state.py --quick         # small sizes: a smoke test
    python benchmarks/small_state.py --problems heat --repeat 7

Problems (float64), each a loop whose step is many cheap NumPy calls on a small state:

* ``heat``: explicit 1-D heat equation, 1024 cells, T = 10 000, the interior
  updated through slices; loss = squared misfit; gradient w.r.t. u0 and k.
* ``lorenz96``: Lorenz-96 (40 variables, forcing F per variable) integrated
  with classical RK4, dt = 0.001, T = 5 000; loss = sum(x**2); gradient w.r.t.
  x0 and F.
* ``building``: a 4-zone building-energy RC model, forward Euler, outdoor
  temperature and heat gains read per step, T = 10 000; loss = running sum of
  squared deviations from a set point; gradient w.r.t. UA and C.

For each problem one table, all rows measured in the same process (median of
``--repeat`` rounds after a warm-up, each round timing every method once, so a
busy machine slows all rows alike; BLAS on one thread): the plain NumPy forward,
tangent_ckpt taped (``tc.grad``) and the hand-written taped gradient, then
tangent_ckpt checkpointed (Revolve, snapshots=10) and the hand-written Revolve
on the same schedule.  ``vs hand`` is each tangent_ckpt row over its hand-written
floor.  The hand-written gradients are what a careful person writes: a step and
an adjoint step in plain NumPy, in-place accumulation, nothing taped but the
states and what the adjoint reads (for RK4, each stage's rolled differences).

The problem definitions (``PROBLEMS``: the user function, inputs, wrt and the
hand-written gradients) are importable, so ``benchmarks/peers.py`` and other
scripts run the same code.
"""

import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (pins BLAS threads before NumPy loads)

import numpy as np  # noqa: E402

from tangent_ckpt.runtime.scheduling.schedules import (  # noqa: E402
    ADVANCE, FIRST_TURN, FREE, RESTORE, STORE, revolve,
)


# --------------------------------------------------------------------------- heat

def heat_loss(u0, k, target, n):
    u = u0.copy()
    for t in range(n):
        u[1:-1] = u[1:-1] + k[1:-1] * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return np.sum((u - target) ** 2)


def heat_inputs(cells, T):
    rng = np.random.default_rng(0)
    x = np.linspace(0.0, 1.0, cells)
    u0 = np.exp(-((x - 0.3) / 0.1) ** 2)
    k = 0.2 + 0.1 * rng.random(cells)
    target = 0.5 * np.exp(-((x - 0.5) / 0.2) ** 2)
    return (u0, k, target, T)


def _heat_step(u, k):
    v = u.copy()
    v[1:-1] = u[1:-1] + k[1:-1] * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return v


def _heat_adjoint_step(u, bu, k, bk):
    """bu (adjoint after the step) -> adjoint before it, in place; bk accumulates."""
    g = bu[1:-1].copy()
    bk[1:-1] += g * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    kg = k[1:-1] * g
    bu[1:-1] -= 2.0 * kg
    bu[2:] += kg
    bu[:-2] += kg
    return bu


def heat_taped(u0, k, target, n):
    us = [u0]
    u = u0
    for t in range(n):
        u = _heat_step(u, k)
        us.append(u)
    bu = 2.0 * (u - target)
    bk = np.zeros_like(k)
    for t in range(n - 1, -1, -1):
        bu = _heat_adjoint_step(us[t], bu, k, bk)
        us[t + 1] = None
    return bu, bk


def heat_revolve(u0, k, target, n, snapshots=10):
    bk = np.zeros_like(k)
    bu = hand_revolve(lambda u: _heat_step(u, k),
                      lambda u, bu: _heat_adjoint_step(u, bu, k, bk),
                      lambda u: 2.0 * (u - target), u0, n, snapshots)
    return bu, bk


# --------------------------------------------------------------------------- Lorenz-96

L96_DT = 0.001


def l96_rhs(x, F):
    return (np.roll(x, -1) - np.roll(x, 2)) * np.roll(x, 1) - x + F


def lorenz96_loss(x, F, n):
    h = L96_DT
    for t in range(n):
        k1 = l96_rhs(x, F)
        k2 = l96_rhs(x + 0.5 * h * k1, F)
        k3 = l96_rhs(x + 0.5 * h * k2, F)
        k4 = l96_rhs(x + h * k3, F)
        x = x + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return np.sum(x ** 2)


def lorenz96_inputs(size, T):
    rng = np.random.default_rng(0)
    F = 8.0 + 0.1 * rng.standard_normal(size)
    x0 = 8.0 + rng.standard_normal(size)
    return (x0, F, T)


def _l96_rhs_parts(x, F):
    """l96_rhs and what its adjoint reads: x[i+1] - x[i-2] and x[i-1]."""
    xm1 = np.roll(x, 1)
    d = np.roll(x, -1) - np.roll(x, 2)
    return d * xm1 - x + F, (d, xm1)


def _l96_rhs_adjoint(parts, w):
    """Adjoint of l96_rhs w.r.t. x for the output adjoint w (w.r.t. F it is w)."""
    d, xm1 = parts
    wm = w * xm1
    bx = np.roll(wm, 1)
    bx -= np.roll(wm, -2)
    bx += np.roll(w * d, -1)
    bx -= w
    return bx


def _l96_stages(x, F):
    """One RK4 step and the parts of its four right-hand sides."""
    h = L96_DT
    k1, p1 = _l96_rhs_parts(x, F)
    k2, p2 = _l96_rhs_parts(x + 0.5 * h * k1, F)
    k3, p3 = _l96_rhs_parts(x + 0.5 * h * k2, F)
    k4, p4 = _l96_rhs_parts(x + h * k3, F)
    return x + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4), (p1, p2, p3, p4)


def _l96_adjoint_step(parts, bxn, bF):
    h = L96_DT
    p1, p2, p3, p4 = parts
    b4 = h / 6.0 * bxn
    b3 = 2.0 * b4
    b2 = 2.0 * b4
    b1 = b4.copy()
    bx = bxn.copy()
    w = _l96_rhs_adjoint(p4, b4)
    bF += b4
    bx += w
    b3 += h * w
    w = _l96_rhs_adjoint(p3, b3)
    bF += b3
    bx += w
    b2 += 0.5 * h * w
    w = _l96_rhs_adjoint(p2, b2)
    bF += b2
    bx += w
    b1 += 0.5 * h * w
    bx += _l96_rhs_adjoint(p1, b1)
    bF += b1
    return bx


def lorenz96_taped(x0, F, n):
    tape = []
    x = x0
    for t in range(n):
        x, stages = _l96_stages(x, F)
        tape.append(stages)
    bx = 2.0 * x
    bF = np.zeros_like(F)
    for t in range(n - 1, -1, -1):
        bx = _l96_adjoint_step(tape.pop(), bx, bF)
    return bx, bF


def lorenz96_revolve(x0, F, n, snapshots=10):
    bF = np.zeros_like(F)
    bx = hand_revolve(lambda x: _l96_stages(x, F)[0],
                      lambda x, bx: _l96_adjoint_step(_l96_stages(x, F)[1], bx, bF),
                      lambda x: 2.0 * x, x0, n, snapshots)
    return bx, bF


# --------------------------------------------------------------------------- building

BUILDING_DT = 0.05


def building_loss(T0, UA, C, A, T_out, Q, T_set, n):
    T = T0
    cost = 0.0
    for t in range(n):
        T = T + BUILDING_DT * (UA * (T_out[t] - T) + A @ T + Q[t]) / C
        cost = cost + np.sum((T - T_set) ** 2)
    return cost


def building_inputs(zones, T):
    rng = np.random.default_rng(0)
    hours = np.arange(T) * BUILDING_DT
    T_out = 5.0 + 5.0 * np.sin(2 * np.pi * hours / 24.0)
    Q = 2.0 + rng.random((T, zones))
    coupling = 0.2 * rng.random((zones, zones))
    coupling = coupling + coupling.T
    A = coupling - np.diag(coupling.sum(axis=1))
    T0 = 18.0 + rng.random(zones)
    UA = 0.3 + 0.1 * rng.random(zones)
    C = 1.0 + rng.random(zones)
    T_set = np.full(zones, 20.0)
    return (T0, UA, C, A, T_out, Q, T_set, T)


def _building_step(T, UA, C, A, To, Qt):
    r = UA * (To - T) + A @ T + Qt
    return T + BUILDING_DT * r / C, r


def _building_adjoint_step(T, r, To, bTn, UA, C, A, bUA, bC):
    br = BUILDING_DT * bTn / C
    bC -= br * r / C
    bUA += br * (To - T)
    return bTn - UA * br + A.T @ br


def building_taped(T0, UA, C, A, T_out, Q, T_set, n):
    Ts, rs = [T0], []
    T = T0
    for t in range(n):
        T, r = _building_step(T, UA, C, A, T_out[t], Q[t])
        Ts.append(T)
        rs.append(r)
    bUA, bC = np.zeros_like(UA), np.zeros_like(C)
    bT = np.zeros_like(T0)
    for t in range(n - 1, -1, -1):
        bT = bT + 2.0 * (Ts[t + 1] - T_set)
        bT = _building_adjoint_step(Ts[t], rs[t], T_out[t], bT, UA, C, A, bUA, bC)
    return bUA, bC


def building_revolve(T0, UA, C, A, T_out, Q, T_set, n, snapshots=10):
    bUA, bC = np.zeros_like(UA), np.zeros_like(C)
    # the state is (t, T): the step reads the inputs of its own time step
    def step(state):
        t, T = state
        return t + 1, _building_step(T, UA, C, A, T_out[t], Q[t])[0]

    def adjoint_step(state, bT):
        t, T = state
        Tn, r = _building_step(T, UA, C, A, T_out[t], Q[t])
        bT = bT + 2.0 * (Tn - T_set)
        return _building_adjoint_step(T, r, T_out[t], bT, UA, C, A, bUA, bC)

    hand_revolve(step, adjoint_step, lambda state: np.zeros_like(T0), (0, T0), n, snapshots)
    return bUA, bC


# --------------------------------------------------------------------------- Revolve by hand

def hand_revolve(step, adjoint_step, seed, x0, n, snapshots):
    """Run the Revolve schedule by hand: ``step(x)`` -> next state (a new object),
    ``adjoint_step(x, bx)`` reverses the step taken from ``x``, ``seed(x_n)`` is
    the adjoint of the final state.  Returns the adjoint of ``x0``."""
    snaps, work, bx = {}, x0, None
    for a in revolve(n, snapshots):
        if a.kind is ADVANCE:
            for _ in range(a.n):
                work = step(work)
        elif a.kind is STORE:
            snaps[a.slot] = work
        elif a.kind is RESTORE:
            work = snaps[a.slot]
        elif a.kind is FREE:
            del snaps[a.slot]
        else:  # FIRST_TURN (the primal's last step) or REVERSE
            if a.kind is FIRST_TURN:
                bx = seed(step(work))
            bx = adjoint_step(work, bx)
    return bx


# --------------------------------------------------------------------------- table

# name -> (description, user function, wrt, inputs(quick), hand taped, hand Revolve)
PROBLEMS = {
    "heat": ("heat equation, 1024 cells, T = 10000", heat_loss, (0, 1),
             lambda quick: heat_inputs(64, 400) if quick else heat_inputs(1024, 10_000),
             heat_taped, heat_revolve),
    "lorenz96": ("Lorenz-96 RK4, 40 variables, T = 5000", lorenz96_loss, (0, 1),
                 lambda quick: lorenz96_inputs(40, 300) if quick else lorenz96_inputs(40, 5000),
                 lorenz96_taped, lorenz96_revolve),
    "building": ("building RC model, 4 zones, T = 10000", building_loss, (1, 2),
                 lambda quick: building_inputs(4, 400) if quick else building_inputs(4, 10_000),
                 building_taped, building_revolve),
}


def rel_diff(got, ref):
    return max(float(np.max(np.abs(np.asarray(g) - r))) / max(float(np.max(np.abs(r))), 1e-300)
               for g, r in zip(got, ref))


def run(name, repeat, quick, snapshots=10):
    import tangent_ckpt as tc
    desc, f, wrt, inputs, taped, hand_rev = PROBLEMS[name]
    args = inputs(quick)
    if quick:
        desc = f"{name} (--quick: small sizes)"
    tc_taped = tc.grad(f, wrt=wrt)
    tc_rev = tc.grad(f, wrt=wrt, checkpoint=True, snapshots=snapshots)
    tc_taped.compile()
    tc_rev.compile()
    ref = taped(*args)
    methods = [("forward only (plain NumPy loop)", f),
               ("tangent_ckpt taped (tc.grad)", tc_taped),
               ("hand-written NumPy taped", taped),
               (f"tangent_ckpt Revolve, snapshots={snapshots}", tc_rev),
               (f"hand-written NumPy Revolve, snapshots={snapshots}",
                lambda *a: hand_rev(*a, snapshots=snapshots))]
    # rounds: every method once per round, so that a busy machine slows all alike
    times = {label: [] for label, _ in methods}
    for label, fn in methods:
        fn(*args)  # warm-up
    for _ in range(repeat):
        for label, fn in methods:
            times[label].append(common.time_once(fn, *args)[0])
    t_fwd = statistics.median(times[methods[0][0]])
    rows = [(methods[0][0], t_fwd, None, None)]
    for label, fn in methods[1:]:
        peak, g = common.peak_memory(fn, *args)
        rows.append((label, statistics.median(times[label]), peak, rel_diff(g, ref)))
    out = []
    for i, (label, t, peak, rel) in enumerate(rows):
        vs = "-"
        if i in (1, 3):
            vs = f"{t / rows[i + 1][1]:.2f}x"
        out.append((label, common.fmt_seconds(t), f"{t / t_fwd:.2f}", vs,
                    common.fmt_bytes(peak) if peak is not None else "-",
                    f"{rel:.1e}" if rel is not None else "-"))
    print(f"\n## {desc}  (median of {repeat} runs)\n")
    print(common.table(("method", "grad time", "grad/fwd", "vs hand", "peak memory",
                        "rel diff"), out), flush=True)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--problems", default=",".join(PROBLEMS))
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    print(f"numpy {np.__version__}, BLAS threads = {os.environ['OPENBLAS_NUM_THREADS']}")
    for name in args.problems.split(","):
        run(name, 2 if args.quick else args.repeat, args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
