"""Measured working memory: the tracemalloc peak of one call.

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

import threading
import tracemalloc

__all__ = ["peak_of"]

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
