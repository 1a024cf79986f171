"""Timing and memory helpers shared by the benchmark scripts.

Import this module BEFORE NumPy (``from benchmarks import common`` or
``import common`` first thing): it pins the BLAS libraries to one thread so that
timings are reproducible and comparable between methods.

Rules the scripts follow:

* time with :func:`time_median` (wall clock, ``time.perf_counter``, median of
  several runs after a warm-up call);
* measure memory with :func:`peak_memory` in a *separate* call: tracemalloc
  slows allocation down, so it never runs while we time.  tracemalloc sees
  NumPy's array buffers (NumPy reports them to it), so the peak is the real
  extra memory held by the call, not an estimate;
* compute ratios (gradient / forward) from timings taken in the same process.
"""

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
             "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import gc  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402

__all__ = ["time_median", "time_once", "peak_memory", "fmt_bytes", "fmt_seconds", "table"]


def time_once(fn, *args, **kwargs):
    """(seconds, result) of one call."""
    gc.collect()
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return time.perf_counter() - t0, out


def time_median(fn, *args, repeat=5, warmup=1, **kwargs):
    """Median wall time in seconds of ``repeat`` calls, after ``warmup`` untimed calls."""
    for _ in range(warmup):
        fn(*args, **kwargs)
    times = []
    for _ in range(max(1, repeat)):
        t, _ = time_once(fn, *args, **kwargs)
        times.append(t)
    return statistics.median(times)


def peak_memory(fn, *args, **kwargs):
    """(peak bytes, result): tracemalloc peak of one call above what was allocated before it.

    Everything the call allocates counts (tapes, snapshots, temporaries, the
    result); memory that existed before the call (the inputs) does not.
    """
    if tracemalloc.is_tracing():
        raise RuntimeError("peak_memory: tracemalloc is already tracing")
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        out = fn(*args, **kwargs)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak - base, out


def fmt_bytes(n):
    """Bytes in decimal units (1 MB = 10**6 B), 3 significant figures."""
    if n is None:
        return "-"
    n = float(n)
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.3g} {unit}"
        n /= 1000.0
    return f"{n} B"  # pragma: no cover


def fmt_seconds(t):
    if t is None:
        return "-"
    if t < 1e-3:
        return f"{t * 1e6:.0f} us"
    if t < 1:
        return f"{t * 1e3:.1f} ms"
    return f"{t:.2f} s"


def table(headers, rows):
    """A plain-text table (first column left-aligned, the rest right-aligned)."""
    text = [[str(c) for c in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in text)) if text else len(h)
              for i, h in enumerate(headers)]

    def line(cells):
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths)))
    out = [line(headers), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in text]
    return "\n".join(out)
