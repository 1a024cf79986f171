"""Benchmark: memory of one gradient of each model in examples/models.py, taped
versus checkpointed (tc.checkpoint per residual block, checkpoint scopes around
attention, the LSTM's time loop on Revolve with 4 snapshots).

    python benchmarks/models.py [--size 2] [--repeat 5]

peak: tracemalloc peak of ONE gradient call (everything it allocates, not the
inputs), measured apart from the timings; time: median of --repeat calls;
max diff: largest |g_ckpt - g_taped| over all parameters (same operations: ~0).
"""

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
import common  # noqa: E402  (pins BLAS threads before NumPy loads)

import numpy as np  # noqa: E402

from examples import models  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=4, help="scale of width/depth/length")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    rows = []
    for name, plain, ckpt, before, params, after, options in \
            models.problems(np.random.default_rng(0), size=args.size):
        call = before + params + after
        d_plain = models.gradient(plain, before, params, after)
        d_ckpt = models.gradient(ckpt, before, params, after, **options)
        g_plain, g_ckpt = d_plain(*call), d_ckpt(*call)
        diff = max(float(np.max(abs(a - b))) for a, b in zip(g_plain, g_ckpt))
        peak_plain, _ = common.peak_memory(d_plain, *call)
        peak_ckpt, _ = common.peak_memory(d_ckpt, *call)
        t_plain = common.time_median(d_plain, *call, repeat=args.repeat)
        t_ckpt = common.time_median(d_ckpt, *call, repeat=args.repeat)
        rows.append([name, common.fmt_bytes(peak_plain), common.fmt_bytes(peak_ckpt),
                     f"{peak_plain / peak_ckpt:.2f}x", common.fmt_seconds(t_plain),
                     common.fmt_seconds(t_ckpt), f"{t_ckpt / t_plain:.2f}x", f"{diff:.1e}"])
    print(common.table(["model", "peak taped", "peak ckpt", "reduction", "time taped",
                        "time ckpt", "slowdown", "max diff"], rows))


if __name__ == "__main__":
    main()
