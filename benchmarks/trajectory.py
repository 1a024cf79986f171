"""Benchmark: a trajectory filled one row per step, S[t] = sin(S[t - 1]) * 1.01.

    python benchmarks/trajectory.py                 # n = 200, 800, 3200; m = 1000
    python benchmarks/trajectory.py --n 200 800     # fewer rows
    python benchmarks/trajectory.py --no-taped      # skip the taped gradient
    python benchmarks/trajectory.py --checkpointed-up-to 800    # skip larger checkpointed runs

For each n, one table row per method, all measured in the same process:

* peak / S: tracemalloc peak of ONE gradient call (separate from the timings),
  as a multiple of the bytes of S (n * m * 8), inputs not counted;
* time: median of ``--repeat`` calls after a warm-up call;
* snapshot bytes: the profiler's peak_snapshot_bytes for the checkpointed loop;
* rel diff: max |g - g_ref| / max |g_ref| against the hand-written BPTT.

The floor is a hand-written NumPy BPTT of the same loop: the forward fills S in
place, the reverse walks the rows back with one row of adjoint at a time.
BLAS runs on one thread (benchmarks/common.py pins it before NumPy loads).
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (pins BLAS threads before NumPy loads)

import numpy as np  # noqa: E402

import tangent_ckpt as tc  # noqa: E402


def trajectory(x, n):
    S = np.zeros((n, x.shape[0]))
    S[0] = x
    for t in range(1, n):
        S[t] = np.sin(S[t - 1]) * 1.01
    return np.sum(S ** 2)


def hand_bptt(x, n):
    """The floor: forward in place, reverse one row of adjoint at a time."""
    S = np.zeros((n, x.shape[0]))
    S[0] = x
    for t in range(1, n):
        S[t] = np.sin(S[t - 1]) * 1.01
    g = 2.0 * S[n - 1]
    for t in range(n - 1, 0, -1):
        g = g * 1.01 * np.cos(S[t - 1]) + 2.0 * S[t - 1]
    return g


def checkpointed_stats(grad, x, n):
    with tc.profile() as prof:
        grad(x, n)
    stats = prof.as_dict() if hasattr(prof, "as_dict") else {}
    return stats.get("peak_snapshot_bytes")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[200, 800, 3200])
    parser.add_argument("--m", type=int, default=1000)
    parser.add_argument("--snapshots", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-taped", action="store_true")
    parser.add_argument("--checkpointed-up-to", type=int, default=100000,
                        help="largest n for the checkpointed gradient (with whole snapshots "
                             "its time grows with n**2)")
    args = parser.parse_args(argv)

    taped = tc.grad(trajectory)
    checkpointed = tc.grad(trajectory, checkpoint=True, snapshots=args.snapshots)
    methods = [("hand-written BPTT (floor)", hand_bptt)]
    if not args.no_taped:
        methods.append(("tc.grad (taped)", taped))
    methods.append((f"tc.grad checkpointed, {args.snapshots} snapshots", checkpointed))

    rows = []
    times = {}
    for n in args.n:
        x = np.random.default_rng(0).uniform(-1.0, 1.0, args.m)
        s_bytes = n * args.m * 8
        reference = hand_bptt(x, n)
        for label, fn in methods:
            if fn is checkpointed and n > args.checkpointed_up_to:
                rows.append([label, n, common.fmt_bytes(s_bytes), "-", "skipped", "-", "-"])
                continue
            fn(x, min(n, 3))  # compile outside the measurement
            peak, g = common.peak_memory(fn, x, n)
            t = common.time_median(fn, x, n, repeat=args.repeat)
            times[(label, n)] = t
            snap = checkpointed_stats(fn, x, n) if fn is checkpointed else None
            rel = np.max(np.abs(g - reference)) / np.max(np.abs(reference))
            rows.append([label, n, common.fmt_bytes(s_bytes), f"{peak / s_bytes:.2f}",
                         common.fmt_seconds(t),
                         "-" if snap is None else f"{common.fmt_bytes(snap)} "
                                                  f"({snap / s_bytes:.2f} S)",
                         f"{rel:.1e}"])
    print(f"trajectory S[t] = sin(S[t-1]) * 1.01, m = {args.m}, "
          f"median of {args.repeat}, BLAS threads = 1")
    print(common.table(["method", "n", "S", "peak / S", "time", "snapshot bytes",
                        "rel diff"], rows))
    ns = sorted(args.n)
    if len(ns) > 1:
        print()
        for label, _ in methods:
            ratios = ", ".join(f"t({b})/t({a}) = {times[(label, b)] / times[(label, a)]:.1f}"
                               for a, b in zip(ns, ns[1:])
                               if (label, a) in times and (label, b) in times)
            print(f"{label}: {ratios}")


if __name__ == "__main__":
    main()
