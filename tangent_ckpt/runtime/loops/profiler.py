"""Exact counters of checkpointed loops: ``with tangent_ckpt.profile() as prof: ...``.

Profilers form a thread-local stack: a loop run in a thread reports to every
profiler active *in that thread* (nested profilers all see it), never to
profilers of other threads.  Loops report through :func:`record`, which is also
the hook for any other scope that wants to add counts later.

Fields (per loop in ``prof.loops[name]`` and totals on ``prof`` itself):

``forward_steps``        plain (untaped) primal steps, including the forward sweep
``recorded_steps``       adjoint steps (each re-records and reverses one step)
``verify_steps``         extra plain steps run by ``verify=True`` checks
``snapshots_stored``     STORE actions executed
``peak_snapshots``       most snapshots held at once
``peak_snapshot_bytes``  most snapshot bytes held at once (RAM + disk)
``disk_bytes_written``   bytes written to ``.npy`` snapshot files
``disk_writes``          snapshots written to disk (STORE actions whose level is DISK)
``disk_reads``           snapshots read from disk (RESTORE actions whose level is DISK)
``measure_steps``        plain steps run to time a step before planning (``costs="measure"``)
``probe_steps``          steps run once more to measure a step's working memory
                         before a memory budget is planned (one forward step and
                         one adjoint step per loop run; results thrown away)
``io_seconds``           seconds the store's I/O thread spent writing and reading
                         disk-level snapshots
``io_waited_seconds``    seconds the sweep waited for that I/O (a full write queue,
                         a read not prefetched or not finished)
``io_overlapped_seconds`` io_seconds - io_waited_seconds: I/O hidden behind the steps
``working_bytes``        under a memory budget: the sweep's working memory paid before
                         any snapshot (one measured step and the reserves, see
                         ``CheckpointedLoop.working_bytes``); else 0
``state_bytes``          size of one loop state (tree_nbytes)
``tape_bytes_per_step``  tracemalloc peak of the first adjoint step of the loop (its
                         re-recording and its temporaries: an upper bound of one
                         step's tape), measured only if tracemalloc was not already
                         tracing; else None
``memory_saved_bytes``   steps * state_bytes - peak_snapshot_bytes: the states a tape of
                         every step would keep (a tape holds at least the values the
                         reverse sweep reads; for most loops that includes the state),
                         less the snapshots held.  Exact, not an estimate.
``runs``                 how many times the loop ran
``peak_device_bytes``    most snapshot bytes held where the loop state lives (device
                         memory for CuPy arrays, RAM for NumPy's)
``peak_host_bytes``      most snapshot bytes held as host-memory copies of device
                         arrays (``snapshot_store="host"`` or ``host_slots=``)
``peak_disk_bytes``      most snapshot bytes held on disk (files, zarr)

Per loop and per checkpointed segment / scope (``tc.checkpoint``,
``tc.checkpoint_scope``, reported under the scope's name):

``checkpoints``          snapshots stored (loops) / executions checkpointed (segments)
``bytes_held``           most bytes held between the sweeps (loop snapshots; the record
                         of a segment that was not checkpointed)
``bytes_saved``          bytes not kept versus taping (loops: memory_saved_bytes;
                         segments: the re-recorded intermediates, measured when profiling)
``steps_recomputed``     primal steps run again (loops: the plain steps of the reverse
                         sweep, from restored snapshots -- the progress bar's
                         ``recomputed``; the forward sweep's first run of each step
                         is not counted, and neither are the adjoint steps, which
                         re-record their step: ``recorded_steps``; segments: re-runs)

``prof.notes``: the auto mode's decisions, one line per loop/segment.

Totals: counts are summed over loops; peaks, sizes are maxima over loops.
"""

import threading

__all__ = ["profile", "Profiler", "LoopStats", "record", "active_profilers"]

_SUM_FIELDS = ("forward_steps", "recorded_steps", "verify_steps", "snapshots_stored",
               "disk_bytes_written", "disk_writes", "disk_reads", "measure_steps",
               "probe_steps", "io_seconds", "io_waited_seconds",
               "io_overlapped_seconds", "memory_saved_bytes", "steps", "runs",
               "checkpoints", "bytes_saved", "steps_recomputed")
_MAX_FIELDS = ("peak_snapshots", "peak_snapshot_bytes", "state_bytes", "tape_bytes_per_step",
               "bytes_held", "working_bytes", "peak_device_bytes", "peak_host_bytes",
               "peak_disk_bytes")
FIELDS = ("forward_steps", "recorded_steps", "verify_steps", "snapshots_stored", "peak_snapshots",
          "peak_snapshot_bytes", "disk_bytes_written", "disk_writes", "disk_reads",
          "measure_steps", "state_bytes", "tape_bytes_per_step",
          "memory_saved_bytes", "steps", "runs", "probe_steps", "io_seconds",
          "io_waited_seconds", "io_overlapped_seconds", "working_bytes",
          "checkpoints", "bytes_held", "bytes_saved", "steps_recomputed",
          "peak_device_bytes", "peak_host_bytes", "peak_disk_bytes")

_local = threading.local()


def active_profilers():
    """The profilers active in the current thread, outermost first."""
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


class LoopStats:
    """Counters of one loop (or of all loops, for the totals)."""

    def __init__(self):
        for f in FIELDS:
            setattr(self, f, 0)
        self.tape_bytes_per_step = None

    def add(self, **counts):
        for k, v in counts.items():
            if v is None:
                continue
            if k in _SUM_FIELDS:
                setattr(self, k, getattr(self, k) + v)
            elif k in _MAX_FIELDS:
                old = getattr(self, k)
                setattr(self, k, v if old is None else max(old, v))
            else:
                raise TypeError(f"unknown profiler field {k!r}")

    def as_dict(self):
        return {f: getattr(self, f) for f in FIELDS}

    def __repr__(self):
        return "LoopStats(" + ", ".join(f"{k}={v}" for k, v in self.as_dict().items()) + ")"


class Profiler(LoopStats):
    """Totals as attributes, per-loop :class:`LoopStats` in ``loops``."""

    def __init__(self):
        super().__init__()
        self.loops = {}
        self.notes = []  # decisions of the auto mode (rt.MemoryPlan)

    def record(self, name, **counts):
        """Add counts for the loop/scope `name` (sums for counts, max for peaks)."""
        self.loops.setdefault(name, LoopStats()).add(**counts)
        self.add(**counts)

    def __enter__(self):
        active_profilers().append(self)
        return self

    def __exit__(self, *exc):
        stack = active_profilers()
        if self in stack:
            stack.remove(self)
        return False

    def report(self):
        """A readable table: one row per loop or segment and a total row.

        Columns, one meaning each: ``runs``; ``steps`` (loop steps run, summed over
        runs); ``recomputed`` (``steps_recomputed``); ``adjoint steps``
        (``recorded_steps``); ``checkpoints`` (snapshots stored / segment runs
        checkpointed); ``peak snapshots``; ``held`` (``bytes_held``); ``saved``
        (``bytes_saved``); ``disk written``; ``tape/step``.  Bytes in kB, MB, GB."""
        columns = (("runs", "runs", str), ("steps", "steps", str),
                   ("recomputed", "steps_recomputed", str),
                   ("adjoint steps", "recorded_steps", str),
                   ("checkpoints", "checkpoints", str),
                   ("peak snapshots", "peak_snapshots", str),
                   ("held", "bytes_held", readable_bytes),
                   ("saved", "bytes_saved", readable_bytes),
                   ("disk written", "disk_bytes_written", readable_bytes),
                   ("tape/step", "tape_bytes_per_step", readable_bytes))
        heads = ("loop",) + tuple(head for head, _, _ in columns)
        rows = list(self.loops.items()) + [("TOTAL", self)]
        text = [[name] + [("-" if getattr(st, field) is None else show(getattr(st, field)))
                          for _, field, show in columns] for name, st in rows]
        widths = [max(len(h), *(len(r[i]) for r in text)) for i, h in enumerate(heads)]

        def fmt(row):
            return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                             for i, (c, w) in enumerate(zip(row, widths)))
        lines = [fmt(heads), "  ".join("-" * w for w in widths)]
        lines += [fmt(r) for r in text]
        if self.peak_host_bytes or self.peak_disk_bytes:
            lines.append(f"snapshot bytes per level: device {self.peak_device_bytes}, "
                         f"host {self.peak_host_bytes}, disk {self.peak_disk_bytes}")
        lines += [f"auto: {note}" for note in self.notes]
        return "\n".join(lines)


def readable_bytes(n):
    """``n`` bytes as ``512 B``, ``7.8 kB``, ``1.50 MB``, ``2.00 GB`` (powers of 1000)."""
    n = int(n)
    if abs(n) < 1000:
        return f"{n} B"
    for unit, size in (("kB", 1e3), ("MB", 1e6), ("GB", 1e9), ("TB", 1e12)):
        if abs(n) < size * 1000 or unit == "TB":
            value = n / size
            return f"{value:.1f} {unit}" if value < 100 else f"{value:.0f} {unit}"
    return f"{n} B"  # pragma: no cover


def profile():
    """A new :class:`Profiler`; use it as a context manager."""
    return Profiler()


def record(name, **counts):
    """Report counts for `name` to every profiler active in this thread."""
    for p in active_profilers():
        p.record(name, **counts)
