"""What the aliasing fence's run-time guard costs (docs/inplace.md, "What is
guarded at run time").

A function that writes into one parameter while another is read afterwards
gets ``rt.distinct_arrays(h, W, ...)`` once at the top of its gradient: an
identity test, then ``np.shares_memory``, which compares the arrays' bounds
before anything else.  This script times that one check beside a step of the
loop and beside the whole (checkpointed) gradient call, on a small-state loop
(the worst case: a step is cheapest) and a larger one, and the check alone on
views whose bounds overlap without a shared byte (``np.shares_memory`` then
solves the exact problem: its slowest input).

    OPENBLAS_NUM_THREADS=1 python benchmarks/alias_guards.py
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402,F401  (pins BLAS to one thread before NumPy loads)

import numpy as np  # noqa: E402

import tangent_ckpt as tc  # noqa: E402
from tangent_ckpt import runtime as rt  # noqa: E402


def leaky(h, W, n):
    for t in range(n):
        h += np.tanh(h @ W)  # a write into the parameter h; W is read in every step
        h *= 0.5
    return np.sum(h ** 2)


def step(h, W):
    h += np.tanh(h @ W)
    h *= 0.5
    return h


def guard(a, b):
    rt.distinct_arrays(a, b, names=("h", "W"), line=1)


def micro(t):
    return f"{t * 1e6:.2f} us"


def per_call(fn, *args, calls=1000):
    return common.time_median(lambda: [fn(*args) for _ in range(calls)], repeat=7) / calls


def main():
    rng = np.random.default_rng(0)
    rows = []
    cases = [("small state: h (8,), W (8, 8), n = 1000", (8,), 8, 1000, 1000),
             ("larger: h (64, 512), W (512, 512), n = 100", (64, 512), 512, 100, 20)]
    for label, hshape, width, n, calls in cases:
        h, W = rng.normal(size=hshape), rng.normal(size=(width, width)) * 0.05
        df = tc.grad(leaky, wrt=(0, 1), checkpoint=True, snapshots=10)
        assert "rt.distinct_arrays(h, W" in df.source
        call = common.time_median(df, h, W, n, repeat=7)
        one_step = per_call(step, h.copy(), W, calls=calls)
        check = per_call(guard, h, W)
        rows.append([label, micro(check), micro(one_step),
                     f"{100 * check / one_step:.2f}%", common.fmt_seconds(call),
                     f"{100 * check / call:.1e}%"])
    print(common.table(["loop (checkpointed, snapshots=10)", "guard", "one step",
                        "guard / step", "gradient call", "guard / call"], rows))
    A = rng.normal(size=(512, 1024))
    worst = [("disjoint arrays", rng.normal(size=(512, 512)), rng.normal(size=(512, 512))),
             ("halves of one array", A[:, :512], A[:, 512:]),
             ("interleaved columns (A[:, ::2], A[:, 1::2])", A[:, ::2], A[:, 1::2])]
    rows = [[label, micro(per_call(guard, a, b))] for label, a, b in worst]
    print()
    print(common.table(["the check alone, two (512, 512) arrays", "guard"], rows))


if __name__ == "__main__":
    main()
