"""What a gradient call pays to check that it is still valid.

Before every call, a compiled gradient checks that each global, helper function
and closure variable it was compiled against still denotes the same object
(docs/inplace.md, "Globals at call time"). This script times that check beside
the gradient calls themselves: a small function (the worst case, where the call
is cheapest) and the RNN of benchmarks/rnn.py.

    python benchmarks/call_overhead.py
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402,F401  (pins BLAS to one thread before NumPy loads)

import numpy as np  # noqa: E402

import tangent_ckpt as tc  # noqa: E402

SCALE = 0.5


def small(x):
    return np.sum(SCALE * np.tanh(x) ** 2)


def rnn(h, W, b, n):
    for t in range(n):
        h = np.tanh(h @ W + b)
    return np.sum(h)


def main():
    rng = np.random.default_rng(0)
    rows = []
    x = rng.normal(size=8)
    h, W, b = rng.normal(size=(32, 256)), rng.normal(size=(256, 256)) * 0.05, np.zeros(256)
    cases = [("small function, 8 numbers", tc.grad(small), (x,)),
             ("RNN (32, 256), T = 200, taped", tc.grad(rnn, wrt=(1, 2)), (h, W, b, 200)),
             ("RNN (32, 256), T = 200, snapshots=10",
              tc.grad(rnn, wrt=(1, 2), checkpoint=True, snapshots=10), (h, W, b, 200))]
    for label, df, args in cases:
        compiled = df.compile()
        call = common.time_median(df, *args, repeat=7)
        check = common.time_median(lambda: [compiled.dependencies.changed()
                                            for _ in range(1000)], repeat=7) / 1000
        rows.append([label, str(len(compiled.dependencies)), common.fmt_seconds(call),
                     common.fmt_seconds(check), f"{100 * check / call:.3f}%"])
    print(common.table(["gradient", "names checked", "call", "check", "check / call"], rows))


if __name__ == "__main__":
    main()
