"""Benchmark: lists grown by append in a loop (the textbook SIR model, a logistic
map), taped and checkpointed, for growing n: n appends should cost O(n), not O(n**2).

    python benchmarks/list_appends.py                         # n = 1000, 4000, 16000
    python benchmarks/list_appends.py --n 1000 4000 --repeat 3
    python benchmarks/list_appends.py --compare-with /work/main   # the same table from
                                                                  # another checkout, side by side

For each n and method (all in one process; ``--compare-with`` measures the other
checkout in a child process of the same run):

* time: median of ``--repeat`` gradient calls after a warm-up call;
* peak: tracemalloc peak of ONE gradient call (separate from the timings);
* t / t(forward): the gradient's time over the plain function's;
* growth: t(n) / t(n / 4) for the previous n of the list (4 for linear time,
  16 for quadratic).

BLAS runs on one thread (benchmarks/common.py pins it before NumPy loads).
"""

import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import common  # noqa: E402  (pins BLAS threads before NumPy loads)

import numpy as np  # noqa: E402

import tangent_ckpt as tc  # noqa: E402
from examples.sir_model import sir_peak  # noqa: E402


def logistic_growth(r, x0, days):
    xs = [x0]
    for d in range(days):
        xs.append(r * xs[-1] * (1.0 - xs[-1]))
    return np.sum(np.array(xs))


MODELS = {"SIR": (sir_peak, (0.3, 0.1, 0.99, 0.01)),
          "logistic": (logistic_growth, (2.5, 0.3))}


def measure(ns, repeat):
    """{model/method: {n: (seconds, peak bytes)} or None (refused)} for this
    checkout's tangent_ckpt."""
    out = {}
    for model, (f, args) in MODELS.items():
        forward = f
        methods = {"forward (the function)": forward,
                   "tc.grad taped": tc.grad(f, wrt=(0, 1)),
                   "tc.grad checkpoint=True": tc.grad(f, wrt=(0, 1), checkpoint=True)}
        for label, fn in methods.items():
            key = f"{model}: {label}"
            try:
                fn(*args, 10)  # compile outside the measurement
            except tc.TangentCkptError:
                out[key] = None
                continue
            out[key] = {}
            for n in ns:
                peak, _ = common.peak_memory(fn, *args, n)
                out[key][n] = (common.time_median(fn, *args, n, repeat=repeat), peak)
    return out


def rows_of(results, ns, tag):
    rows = []
    for key, by_n in results.items():
        if by_n is None:
            rows.append([tag, key, "-", "refused", "-", "-", "-"])
            continue
        forward = results[key.split(":")[0] + ": forward (the function)"]
        for k, n in enumerate(ns):
            t, peak = by_n[n]
            growth = f"{t / by_n[ns[k - 1]][0]:.1f} (x{n // ns[k - 1]} n)" if k else "-"
            rows.append([tag, key, n, common.fmt_seconds(t), f"{t / forward[n][0]:.1f}",
                         growth, common.fmt_bytes(peak)])
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[1000, 4000, 16000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--compare-with", metavar="DIR",
                        help="another checkout of tangent_ckpt, measured in a child process")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    ns = sorted(args.n)
    results = measure(ns, args.repeat)
    if args.json:
        print(json.dumps({key: None if by_n is None else {str(n): v for n, v in by_n.items()}
                          for key, by_n in results.items()}))
        return
    rows = rows_of(results, ns, "this")
    if args.compare_with:
        env = dict(os.environ, PYTHONPATH=os.path.abspath(args.compare_with))
        child = subprocess.run([sys.executable, os.path.abspath(__file__), "--json",
                                "--repeat", str(args.repeat), "--n", *map(str, ns)],
                               env=env, capture_output=True, text=True, check=True)
        other = {key: None if by_n is None else {int(n): tuple(v) for n, v in by_n.items()}
                 for key, by_n in json.loads(child.stdout).items()}
        rows = rows_of(other, ns, os.path.basename(os.path.normpath(args.compare_with))) + rows
    print(f"lists grown by append (SIR: three lists; logistic: one); median of "
          f"{args.repeat}, BLAS threads = 1")
    print(common.table(["checkout", "method", "n", "time", "t / t(forward)", "growth",
                        "peak"], rows))


if __name__ == "__main__":
    main()
