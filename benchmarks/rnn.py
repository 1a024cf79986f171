"""Benchmark: gradient of a vanilla RNN loop, h = tanh(h @ W + b), w.r.t. W and b.

    python benchmarks/rnn.py            # T = 1000 steps, h (32, 256), float64 (~1 minute)
    python benchmarks/rnn.py --long     # also T = 100 000 steps, checkpointed, 20 snapshots (~4 minutes)
    python benchmarks/rnn.py --progress # also the cost of progress=True (checkpointed, 10 snapshots)

One table, all rows measured in the same process:

* forward: the plain NumPy loop (no gradient), the baseline of every ratio;
* grad time: median of ``--repeat`` (>= 5) calls after one warm-up call;
* peak memory: tracemalloc peak of ONE gradient call, in a separate run from the
  timings (tracemalloc slows allocation down); it counts everything the call
  allocates (tapes, snapshots, temporaries), not the inputs;
* rel diff: max |g - g_ref| / max |g_ref| against the hand-written BPTT;
* plain steps / n: untaped forward steps per loop step, from ``tc.profile()``
  (taped = 1; Revolve: A + 1, the binomial optimum plus the primal's last step).
  The checkpointed adjoint steps start from the states before and after their
  step, so for this loop they re-run nothing of it.

The hand-written Revolve row is what a careful person writes with the same
schedule: it reverses step k from the stored states h_k and h_(k+1), with
``bW += h.T @ g`` and ``g @ W.T`` each step.

BLAS runs on one thread (set in benchmarks/common.py before NumPy is imported).
autograd rows appear only when autograd is installed (``pip install -e '.[peers]'``).
"""

import argparse
import contextlib
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (pins BLAS threads before NumPy loads)

import numpy as np  # noqa: E402

import tangent_ckpt as tc  # noqa: E402
from tangent_ckpt.runtime.loops import progress  # noqa: E402
from tangent_ckpt.runtime.scheduling.schedules import (  # noqa: E402
    ADVANCE, FIRST_TURN, FREE, RESTORE, STORE, revolve, revolve_cost,
)

try:  # optional peer, never needed by the tests
    import autograd  # noqa: E402
    import autograd.numpy as anp  # noqa: E402
except ImportError:  # pragma: no cover
    autograd = anp = None

BATCH, HIDDEN = 32, 256


def loss(h, W, b, n):
    for t in range(n):
        h = np.tanh(h @ W + b)
    return np.sum(h)


def make_inputs(seed=0):
    rng = np.random.default_rng(seed)
    h0 = rng.standard_normal((BATCH, HIDDEN))
    W = 0.5 * rng.standard_normal((HIDDEN, HIDDEN)) / np.sqrt(HIDDEN)
    b = 0.1 * rng.standard_normal(HIDDEN)
    return h0, W, b


def bptt(h, W, b, n):
    """Hand-written backpropagation through time: keeps every h, then one reverse sweep."""
    hs = [h]
    for t in range(n):
        h = np.tanh(h @ W + b)
        hs.append(h)
    bh = np.ones_like(h)
    bW = np.zeros_like(W)
    bb = np.zeros_like(b)
    for t in range(n - 1, -1, -1):
        hn = hs[t + 1]
        bpre = bh * (1.0 - hn * hn)
        bW += hs[t].T @ bpre
        bb += bpre.sum(axis=0)
        bh = bpre @ W.T
        hs[t + 1] = None  # release as we go, as a careful hand-written version would
    return bW, bb


def hand_revolve(h, W, b, n, snapshots=10):
    """Hand-written Revolve on the optimal schedule: snapshots of h, and step k
    reversed from h_k and h_(k+1) (tanh' = 1 - h_(k+1)^2: nothing is re-run)."""
    snaps, work = {}, h
    bW, bb, bh, after = np.zeros_like(W), np.zeros_like(b), None, None
    for a in revolve(n, snapshots):
        if a.kind is ADVANCE:
            for _ in range(a.n):
                work = np.tanh(work @ W + b)
        elif a.kind is STORE:
            snaps[a.slot] = work
        elif a.kind is RESTORE:
            work = snaps[a.slot]
        elif a.kind is FREE:
            del snaps[a.slot]
        else:  # FIRST_TURN (the primal's last step) or REVERSE
            if a.kind is FIRST_TURN:
                after = np.tanh(work @ W + b)
                bh = np.ones_like(after)
            bpre = bh * (1.0 - after * after)
            bW += work.T @ bpre
            bb += bpre.sum(axis=0)
            bh = bpre @ W.T
            after = work
    return bW, bb


def autograd_grad():
    def loss_ag(params, h, n):
        W, b = params
        for t in range(n):
            h = anp.tanh(anp.dot(h, W) + b)
        return anp.sum(h)
    g = autograd.grad(loss_ag)
    return lambda h, W, b, n: tuple(g((W, b), h, n))


def rel_diff(got, ref):
    return max(float(np.max(np.abs(g - r))) / max(float(np.max(np.abs(r))), 1e-300)
               for g, r in zip(got, ref))


def methods():
    out = [
        ("tangent_ckpt taped (tc.grad)", tc.grad(loss, wrt=(1, 2)), True),
        ("hand-written NumPy BPTT", bptt, False),
        ("tangent_ckpt checkpointed, snapshots=10",
         tc.grad_with_checkpointing(loss, wrt=(1, 2), snapshots=10), True),
        ("hand-written NumPy Revolve, snapshots=10", hand_revolve, False),
        ('tangent_ckpt checkpointed, memory_budget="10MB"',
         tc.grad_with_checkpointing(loss, wrt=(1, 2), memory_budget="10MB"), True),
    ]
    if autograd is not None:
        from importlib.metadata import version
        out.append((f"autograd {version('autograd')}", autograd_grad(), False))
    return out


def run_default(steps, repeat):
    h0, W, b = make_inputs()
    n = steps
    print(f"RNN h = tanh(h @ W + b): h ({BATCH}, {HIDDEN}), W ({HIDDEN}, {HIDDEN}), float64, "
          f"T = {n}, loss = sum(h), gradient w.r.t. W and b")
    print(f"numpy {np.__version__}, BLAS threads = {os.environ['OPENBLAS_NUM_THREADS']}, "
          f"median of {repeat} runs; peak memory in a separate tracemalloc run\n")

    t_fwd = common.time_median(loss, h0, W, b, n, repeat=repeat)
    m_fwd, _ = common.peak_memory(loss, h0, W, b, n)
    ref = bptt(h0, W, b, n)
    rows = [("forward only (plain NumPy loop)", common.fmt_seconds(t_fwd), "1.00",
             common.fmt_bytes(m_fwd), "-", "-")]
    for name, fn, profiled in methods():
        t = common.time_median(fn, h0, W, b, n, repeat=repeat)
        peak, g = common.peak_memory(fn, h0, W, b, n)
        evals = "1.00" if not profiled else None
        if fn is hand_revolve:
            evals = f"{(revolve_cost(n, 10)[1] + 1) / n:.2f}"
        if profiled:
            with tc.profile() as prof:
                fn(h0, W, b, n)
            evals = f"{prof.forward_steps / n:.2f}" if prof.runs else "1.00"
        rows.append((name, common.fmt_seconds(t), f"{t / t_fwd:.2f}", common.fmt_bytes(peak),
                     f"{rel_diff(g, ref):.1e}", evals))
    if autograd is None:
        rows.append(("autograd (not installed: pip install -e '.[peers]')", "-", "-", "-", "-", "-"))
    print(common.table(("method", "grad time", "grad/fwd", "peak memory", "rel diff",
                        "plain steps/n"), rows))
    r, A, T = revolve_cost(n, 10)
    print(f"\nRevolve optimum for n = {n}, s = 10: r = {r}, A = {A} plain steps; the driver runs "
          f"A + 1 = {(A + 1) / n:.2f} n plain steps and n adjoint steps.")


def run_long(steps, snapshots):
    h0, W, b = make_inputs()
    n, s = steps, snapshots
    print(f"\n--long: T = {n} steps, checkpointed with snapshots = {s} (each figure from one run)")
    df = tc.grad_with_checkpointing(loss, wrt=(1, 2), snapshots=s)
    t_fwd, _ = common.time_once(loss, h0, W, b, n)
    with tc.profile() as prof:
        t_grad, _ = common.time_once(df, h0, W, b, n)
    peak, _ = common.peak_memory(df, h0, W, b, n)
    r, A, T = revolve_cost(n, s)
    rows = [
        ("forward only (plain NumPy loop)", common.fmt_seconds(t_fwd), "1.00", "-"),
        (f"tangent_ckpt checkpointed, snapshots={s}", common.fmt_seconds(t_grad),
         f"{t_grad / t_fwd:.2f}", common.fmt_bytes(peak)),
    ]
    print(common.table(("method", "time", "grad/fwd", "peak memory"), rows))
    print(f"profiler: forward steps {prof.forward_steps} (Revolve optimum A + 1 = {A + 1}), "
          f"recorded steps {prof.recorded_steps} (n = {n}), peak snapshots {prof.peak_snapshots}, "
          f"peak snapshot bytes {common.fmt_bytes(prof.peak_snapshot_bytes)}")
    state = h0.nbytes
    print(f"(not run) taping all {n} steps would keep at least {n} copies of h = "
          f"{common.fmt_bytes(n * state)} (tc.grad's tape holds one per step, as BPTT does)")


def run_progress(steps, repeat):
    """The checkpointed gradient with progress=True against the same without:
    runs alternate (off, on, off, on, ...) so that both see the same machine;
    the bars go to os.devnull (their text, not the terminal, is what is timed)."""
    h0, W, b = make_inputs()
    quiet = tc.grad_with_checkpointing(loss, wrt=(1, 2), snapshots=10)
    loud = tc.grad_with_checkpointing(loss, wrt=(1, 2), snapshots=10, progress=True)
    off, on = [], []
    with open(os.devnull, "w") as sink, contextlib.redirect_stderr(sink):
        quiet(h0, W, b, steps), loud(h0, W, b, steps)  # warm-up: compile, first allocations
        for _ in range(repeat):
            off.append(common.time_once(quiet, h0, W, b, steps)[0])
            on.append(common.time_once(loud, h0, W, b, steps)[0])
    t_off, t_on = statistics.median(off), statistics.median(on)
    pairs = statistics.median(b / a for a, b in zip(off, on))
    print(f"\n--progress: T = {steps}, checkpointed with snapshots = 10, median of {repeat} "
          "alternating runs")
    rows = [("progress off", common.fmt_seconds(t_off), "1.000"),
            ("progress=True (plain stderr counter" +
             (", tqdm installed)" if progress._tqdm() else ")"),
             common.fmt_seconds(t_on), f"{t_on / t_off:.3f}")]
    print(common.table(("gradient", "time", "ratio"), rows))
    print(f"median of the per-pair ratios on/off: {pairs:.3f} "
          f"(cost {100 * (pairs - 1):+.2f} %)")
    # the same cost without the machine's noise: what the hooks cost per call,
    # times the calls one gradient makes (one per step run, forward and reverse)
    with tc.profile() as prof, open(os.devnull, "w") as sink, \
            contextlib.redirect_stderr(sink):
        quiet(h0, W, b, steps)
    calls = prof.forward_steps + prof.recorded_steps
    with open(os.devnull, "w") as sink:
        bar = progress.LoopProgress("bench", "reverse", calls, stream=sink)
        k = 200_000
        start = time.perf_counter()
        for _ in range(k):
            bar.advance()
        per_call = (time.perf_counter() - start) / k
    print(f"hooks: {1e6 * per_call:.2f} us per call x {calls} calls per gradient = "
          f"{1e3 * per_call * calls:.2f} ms = {100 * per_call * calls / t_off:.3f} % of the "
          "gradient")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=1000, help="T for the table (default 1000)")
    p.add_argument("--repeat", type=int, default=5, help="timed runs per method (default 5)")
    p.add_argument("--long", action="store_true",
                   help="also run T = 100 000 steps, checkpointed with 20 snapshots")
    p.add_argument("--progress", action="store_true",
                   help="also time the checkpointed gradient with progress=True against without")
    p.add_argument("--progress-only", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--long-steps", type=int, default=100_000, help=argparse.SUPPRESS)
    p.add_argument("--long-snapshots", type=int, default=20, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.progress_only:
        run_progress(args.steps, max(1, args.repeat))
        return 0
    run_default(args.steps, max(1, args.repeat))
    if args.progress:
        run_progress(args.steps, max(1, args.repeat))
    if args.long:
        run_long(args.long_steps, args.long_snapshots)
    return 0


if __name__ == "__main__":
    sys.exit(main())
