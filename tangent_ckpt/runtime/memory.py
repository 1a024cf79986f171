"""Memory: a budget read from what the user wrote (``parse_memory("64MB")``), and
the measured working memory of one call (its tracemalloc peak).

A memory budget is only a promise if the memory a step needs is measured, not
assumed: ``peak_of(fn, *args)`` runs ``fn`` and returns ``(result, bytes)``,
where ``bytes`` is the most memory the call held at once above what was held
when it started (tracemalloc sees NumPy's allocations).

When tracemalloc is not tracing, it is started for the call and stopped after
it.  When the caller is already tracing (a test measuring the whole gradient),
its peak is never reset: if the call raised the peak, the call's own peak is
exact; otherwise the call's peak is at most the earlier peak above the current
use, and that upper bound is returned (a budget then errs on the safe side).
Measurements are serialised by a lock, so one thread never stops the tracing
that another thread's measurement reads.
"""

import re
import sys
import threading
import tracemalloc

import numpy as np

from tangent_ckpt.errors import CheckpointError

__all__ = ["parse_memory", "peak_of"]

#: a memory budget without bound (``memory_budget=float("inf")``), in bytes: more
#: than any machine holds, an int that the sizing arithmetic takes as it is
UNBOUNDED = sys.maxsize

_LOCK = threading.RLock()  # re-entrant: a step may hold a nested checkpointed loop


def peak_of(fn, *args):
    """``(fn(*args), the call's peak memory in bytes above its start)``."""
    with _LOCK:
        if tracemalloc.is_tracing():
            current, peak_before = tracemalloc.get_traced_memory()
            result = fn(*args)
            peak_after = tracemalloc.get_traced_memory()[1]
            return result, max(peak_after, peak_before) - current
        tracemalloc.start()
        try:
            result = fn(*args)
            return result, tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()


_UNITS = {"": 1, "b": 1,
          "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9,
          "t": 10**12, "tb": 10**12,
          "ki": 2**10, "kib": 2**10, "mi": 2**20, "mib": 2**20, "gi": 2**30, "gib": 2**30,
          "ti": 2**40, "tib": 2**40}
_MEM_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*$")


def parse_memory(value):
    """Bytes from an int/float or a string such as "64MB", "1.5GiB", "512kB", "100".

    SI units (kB, MB, GB, TB: powers of 1000) and IEC units (KiB, MiB, GiB, TiB:
    powers of 1024); case-insensitive; a missing unit means bytes.  An infinite
    budget (``float("inf")``) means no bound: :data:`UNBOUNDED` bytes, in which
    every state fits.
    """
    if isinstance(value, bool):
        raise CheckpointError(f"memory_budget must be bytes or a string like '64MB', got {value!r}")
    if isinstance(value, (int, np.integer)):
        nbytes = min(int(value), UNBOUNDED)
    elif isinstance(value, (float, np.floating)):
        nbytes = float(value)
    elif isinstance(value, str):
        m = _MEM_RE.match(value)
        unit = m.group(2).lower() if m else None
        if m is None or unit not in _UNITS:
            raise CheckpointError(f"cannot read memory_budget {value!r}; write e.g. '64MB', "
                                  "'1.5GiB', '512kB' or a number of bytes")
        nbytes = float(m.group(1)) * _UNITS[unit]
    else:
        raise CheckpointError(f"memory_budget must be bytes or a string like '64MB', got {value!r}")
    if not nbytes > 0:  # NaN too
        raise CheckpointError(f"memory_budget must be a positive number of bytes, got {value!r}")
    return UNBOUNDED if nbytes >= UNBOUNDED else int(nbytes)
