"""The RNN demo behind ``tangent-ckpt demo`` and ``python examples/rnn.py``.

    tangent-ckpt demo                        # T = 1000 steps, 10 snapshots
    tangent-ckpt demo --steps 5000 --snapshots 20
    tangent-ckpt demo --source               # also print the generated gradient code

What it does, for ``h = tanh(h @ W + b)`` repeated T times and loss = sum(h):

1. the gradient w.r.t. W and b with ``tc.grad`` (every step taped) and with
   ``tc.grad_with_checkpointing(wrt=(1, 2), snapshots=S)`` (Revolve schedule);
2. checks that the two agree (max relative difference) and spot-checks a few
   entries against central finite differences of the plain NumPy loss;
3. measures the peak memory of each gradient call with tracemalloc (NumPy
   reports its array buffers to tracemalloc, so this is measured, not estimated);
4. prints the profiler's counts for the checkpointed loop next to the Revolve
   optimum ``revolve_cost(T, S)`` (Griewank & Walther, Algorithm 799).

Exit status 0 only if every check passes; the line starting with ``check:``
says OK or FAILED.  The helpers (``max_rel_diff``, ``central_difference``,
``measure_peak``, ``mb``) are shared by the scripts in ``examples/``.
"""


import argparse
import sys
import time
import tracemalloc

import numpy as np

import tangent_ckpt as tc
from tangent_ckpt.runtime.scheduling.schedules import revolve_cost


def loss(h, W, b, n):
    for t in range(n):
        h = np.tanh(h @ W + b)
    return np.sum(h)


def make_inputs(batch=32, hidden=256, seed=0):
    """h0 (batch, hidden), W (hidden, hidden) with spectral radius ~0.5, b (hidden,); float64."""
    rng = np.random.default_rng(seed)
    h0 = rng.standard_normal((batch, hidden))
    W = 0.5 * rng.standard_normal((hidden, hidden)) / np.sqrt(hidden)
    b = 0.1 * rng.standard_normal(hidden)
    return h0, W, b


def max_rel_diff(a, b):
    """max |a - b| / max(max|b|, tiny): a norm-wise relative difference."""
    scale = max(float(np.max(np.abs(b))), np.finfo(float).tiny)
    return float(np.max(np.abs(a - b))) / scale


def central_difference(f, x, index, eps):
    """(f(x + eps e_i) - f(x - eps e_i)) / (2 eps), restoring x afterwards."""
    old = x[index]
    try:
        x[index] = old + eps
        up = f()
        x[index] = old - eps
        down = f()
    finally:
        x[index] = old
    return (up - down) / (2 * eps)


def measure_peak(fn, *args):
    """(peak bytes above the baseline, result) of one call under tracemalloc."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        out = fn(*args)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    return peak, out


def mb(nbytes):
    if abs(nbytes) < 1e5:
        return f"{nbytes / 1e3:.1f} kB"
    return f"{nbytes / 1e6:.2f} MB"


def add_arguments(p):
    """The demo's options, added to an argparse parser."""
    p.add_argument("--steps", type=int, default=1000, help="loop length T (default 1000)")
    p.add_argument("--snapshots", type=int, default=10, help="Revolve snapshots S (default 10)")
    p.add_argument("--batch", type=int, default=32, help="batch size (default 32)")
    p.add_argument("--hidden", type=int, default=256, help="hidden size (default 256)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--fd-checks", type=int, default=4,
                   help="entries of W and b spot-checked by finite differences (default 4)")
    p.add_argument("--rtol", type=float, default=1e-6,
                   help="tolerance of the finite-difference check (default 1e-6)")
    p.add_argument("--source", action="store_true", help="print the generated gradient source")


def parse_args(argv, prog=None):
    p = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p)
    args = p.parse_args(argv)
    if args.steps < 1 or args.snapshots < 1:
        p.error("--steps and --snapshots must be at least 1")
    return args


def main(argv=None, loss_fn=None, prog=None):
    """Parse ``argv`` and run the demo; ``loss_fn`` replaces :func:`loss` (same signature)."""
    return run(parse_args(argv, prog), loss_fn)


def run(args, loss_fn=None):
    """Run the demo with parsed options; returns the exit status (0 = every check passed)."""
    if args.steps < 1 or args.snapshots < 1:
        raise ValueError("--steps and --snapshots must be at least 1")
    loss = globals()["loss"] if loss_fn is None else loss_fn
    T, S = args.steps, args.snapshots
    h0, W, b = make_inputs(args.batch, args.hidden, args.seed)
    failures = []
    print(f"RNN h = tanh(h @ W + b): h {h0.shape}, W {W.shape}, float64, T = {T} steps, "
          f"loss = sum(h)")

    dloss_taped = tc.grad(loss, wrt=(1, 2))
    dloss_ckpt = tc.grad_with_checkpointing(loss, wrt=(1, 2), snapshots=S)
    if args.source:
        print("\n# ---- generated source of the checkpointed gradient ----")
        print(dloss_ckpt.source)
        print("# ---- end of generated source ----\n")

    # 1. both gradients (timed once each; see benchmarks/rnn.py for careful timings)
    t0 = time.perf_counter()
    dW_tape, db_tape = dloss_taped(h0, W, b, T)
    t_tape = time.perf_counter() - t0
    with tc.profile() as prof:
        t0 = time.perf_counter()
        dW_ckpt, db_ckpt = dloss_ckpt(h0, W, b, T)
        t_ckpt = time.perf_counter() - t0

    # 2a. checkpointed vs taped: the same floating-point operations, so ~1e-12 or better
    agree = max(max_rel_diff(dW_ckpt, dW_tape), max_rel_diff(db_ckpt, db_tape))
    print(f"\ncheckpointed vs taped gradient: max relative difference {agree:.2e}")
    if not agree <= 1e-12:
        failures.append(f"checkpointed and taped gradients differ by {agree:.2e} (> 1e-12)")

    # 2b. spot checks against central finite differences of the plain NumPy loss
    rng = np.random.default_rng(args.seed + 1)
    Wc, bc = W.copy(), b.copy()
    f = lambda: loss(h0, Wc, bc, T)  # noqa: E731
    print(f"finite differences (central, eps = 1e-6) at {args.fd_checks} random entries:")
    worst = 0.0
    for k in range(args.fd_checks):
        if k % 2 == 0:
            name, x, g = "W", Wc, dW_ckpt
            idx = tuple(int(i) for i in rng.integers(0, W.shape))
        else:
            name, x, g = "b", bc, db_ckpt
            idx = (int(rng.integers(0, b.shape[0])),)
        fd = central_difference(f, x, idx, 1e-6)
        ad = float(g[idx])
        err = abs(ad - fd) / max(abs(fd), 1e-8)
        worst = max(worst, err)
        label = f"d{name}[{', '.join(map(str, idx))}]"
        print(f"  {label:<14} checkpointed {ad: .10e}   finite diff {fd: .10e}   rel err {err:.1e}")
    if not worst <= args.rtol:
        failures.append(f"finite-difference relative error {worst:.1e} > {args.rtol:g}")

    # 3. memory, each call in its own tracemalloc run (not the timed runs above)
    peak_tape, _ = measure_peak(dloss_taped, h0, W, b, T)
    peak_ckpt, _ = measure_peak(dloss_ckpt, h0, W, b, T)
    state = h0.nbytes
    print(f"\npeak memory of the gradient call (tracemalloc; one loop state h = {mb(state)}):")
    print(f"  taped (tc.grad)          {mb(peak_tape):>12}   {t_tape:6.2f} s")
    print(f"  checkpointed (S = {S:<3})   {mb(peak_ckpt):>12}   {t_ckpt:6.2f} s")
    saved = peak_tape - peak_ckpt
    ratio = peak_tape / peak_ckpt if peak_ckpt else float("inf")
    print(f"  memory saved             {mb(saved):>12}   ({ratio:.1f}x less)")

    # 4. recomputation: profiler counts vs the Revolve optimum
    r, A, Tot = revolve_cost(T, S)
    fwd, rec = prof.forward_steps, prof.recorded_steps
    print(f"\nrecomputation (profiler) vs Revolve optimum revolve_cost({T}, {S}) = "
          f"(r={r}, A={A}, T={Tot}):")
    print(f"  plain forward steps      {fwd:>8}   optimum A + 1 = {A + 1}  "
          "(A schedule advances + 1 step that produces the loop's result)")
    print(f"  adjoint steps            {rec:>8}   expected n = {T}  (each starts from the "
          "states before and after its step: nothing of it is re-run)")
    print(f"  plain steps / n          {fwd / T:>8.3f}   optimum (A + 1) / n = "
          f"{(A + 1) / T:.3f}  (taped: 1.000)")
    print(f"  peak snapshots held      {prof.peak_snapshots:>8}   allowed {S}")
    if fwd != A + 1:
        failures.append(f"forward steps {fwd} != Revolve optimum A + 1 = {A + 1}")
    if rec != T:
        failures.append(f"recorded steps {rec} != n = {T}")
    if prof.peak_snapshots > S:
        failures.append(f"{prof.peak_snapshots} snapshots held > {S}")
    # the saving is only expected when the loop is long next to the snapshots kept
    if T >= 100 and 4 * S <= T and not peak_ckpt < peak_tape:
        failures.append("checkpointing did not lower the peak memory")

    print()
    if failures:
        print("check: FAILED")
        for msg in failures:
            print(f"  - {msg}")
        return 1
    print("check: OK (checkpointed == taped, matches finite differences, "
          "recomputation == Revolve optimum)")
    return 0



def check_example(f, args, wrt, names, taped, checkpointed, fd_checks=4, rtol=1e-6, eps=1e-6,
                  seed=1, snapshots=None, label="check"):
    """The checks every script in ``examples/`` prints; returns the exit status.

    ``f(*args)`` is the plain NumPy function, ``taped`` and ``checkpointed`` its
    gradient functions w.r.t. the float array arguments at positions ``wrt``
    (named ``names``).  Prints the checkpointed vs taped difference, ``fd_checks``
    central finite differences at random entries, and the tracemalloc peak of
    both gradient calls, then one ``check: OK`` / ``check: FAILED`` line.
    """
    failures = []
    g_tape = taped(*args)
    with tc.profile() as prof:
        g_ckpt = checkpointed(*args)
    if len(wrt) == 1:
        g_tape, g_ckpt = (g_tape,), (g_ckpt,)
    agree = max(max_rel_diff(np.asarray(a), np.asarray(b)) for a, b in zip(g_ckpt, g_tape))
    print(f"checkpointed vs taped gradient: max relative difference {agree:.2e}")
    if not agree <= 1e-12:
        failures.append(f"checkpointed and taped gradients differ by {agree:.2e} (> 1e-12)")

    rng = np.random.default_rng(seed)
    work = list(args)
    for k in wrt:
        work[k] = np.array(args[k], dtype=float, copy=True)
    print(f"finite differences (central, eps = {eps:g}) at {fd_checks} random entries:")
    worst = 0.0
    for c in range(fd_checks):
        j = c % len(wrt)
        x, g = work[wrt[j]], np.asarray(g_ckpt[j])
        idx = tuple(int(i) for i in rng.integers(0, x.shape)) if x.ndim else ()
        if not x.ndim:
            raise TypeError("check_example: finite differences need array arguments")
        fd = central_difference(lambda: f(*work), x, idx, eps)
        ad = float(g[idx])
        err = abs(ad - fd) / max(abs(fd), 1e-8)
        worst = max(worst, err)
        entry = f"d{names[j]}[{', '.join(map(str, idx))}]"
        print(f"  {entry:<14} checkpointed {ad: .10e}   finite diff {fd: .10e}   rel err {err:.1e}")
    if not worst <= rtol:
        failures.append(f"finite-difference relative error {worst:.1e} > {rtol:g}")

    peak_tape, _ = measure_peak(taped, *args)
    peak_ckpt, _ = measure_peak(checkpointed, *args)
    print("peak memory of the gradient call (tracemalloc):")
    print(f"  taped          {mb(peak_tape):>12}")
    print(f"  checkpointed   {mb(peak_ckpt):>12}   (forward steps {prof.forward_steps}, "
          f"recorded steps {prof.recorded_steps}, peak snapshots {prof.peak_snapshots})")
    ratio = peak_tape / peak_ckpt if peak_ckpt else float("inf")
    print(f"  memory saved   {mb(peak_tape - peak_ckpt):>12}   ({ratio:.1f}x less)")
    if snapshots is not None and prof.peak_snapshots > snapshots:
        failures.append(f"{prof.peak_snapshots} snapshots held > {snapshots}")
    print()
    if failures:
        print(f"{label}: FAILED")
        for msg in failures:
            print(f"  - {msg}")
        return 1
    print(f"{label}: OK (checkpointed == taped, matches finite differences)")
    return 0
