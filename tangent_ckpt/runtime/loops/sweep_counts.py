"""What a checkpointed loop counts and reports: the counters of a sweep, their
running totals (``CheckpointedLoop.last_stats``) and the disk I/O seconds.

The names are the profiler's (see ``runtime.profiler``).
"""

__all__ = ["COUNTERS", "SUMMED", "fresh_counters", "add_counts", "summary", "IoClock"]

#: what a sweep counts as it runs (reset after each report)
COUNTERS = ("forward_steps", "recorded_steps", "verify_steps", "snapshots_stored",
            "disk_bytes_written", "disk_writes", "disk_reads", "measure_steps", "probe_steps")
#: the reported numbers that add up over the forward and the reverse sweep
SUMMED = COUNTERS + ("io_seconds", "io_waited_seconds", "io_overlapped_seconds")


def fresh_counters():
    """Every counter at zero."""
    return dict.fromkeys(COUNTERS, 0)


def add_counts(totals, counts):
    """Fold one report into `totals`: counters add up, the rest is replaced."""
    for k, v in counts.items():
        if k in totals and k in SUMMED:
            totals[k] += v
        else:
            totals[k] = v


def summary(counts, bytes_held, reverse):
    """The summary every loop and segment reports beside its counts (see profiler).
    ``reverse``: the counts are the reverse sweep's, whose plain steps are the
    steps recomputed (the forward sweep runs each step once, as taping does;
    the progress bar's ``recomputed`` counts the same steps)."""
    return dict(checkpoints=counts.get("snapshots_stored", 0), bytes_held=bytes_held,
                bytes_saved=counts.get("memory_saved_bytes"),
                steps_recomputed=counts.get("forward_steps", 0) if reverse else 0)


class IoClock:
    """Seconds of disk-level I/O since the last reading."""

    def __init__(self):
        self.seen = (0.0, 0.0)

    def since_last(self, disk):
        """All the I/O seconds of `disk` since the last call, the part the sweep
        waited for, and the rest, overlapped with computation ({} without a disk)."""
        if disk is None:
            return {}
        io, waited = disk.io_seconds - self.seen[0], disk.waited_seconds - self.seen[1]
        self.seen = (disk.io_seconds, disk.waited_seconds)
        return dict(io_seconds=io, io_waited_seconds=waited,
                    io_overlapped_seconds=max(0.0, io - waited))
