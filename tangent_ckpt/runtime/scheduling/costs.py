"""What a step and a disk snapshot cost: the ``costs=`` option of checkpointed loops.

``costs`` is one of

* ``None``: ``DEFAULT_COSTS``, a disk write and a disk read each cost one forward
  step (a fixed guess, so that schedules and counts are the same on every run);
* ``"measure"``: before the plan is made, the loop's first step is run three
  times from its input state (results dropped; the median counts) and one
  snapshot of that state is written to disk and read back, all timed
  (``time.perf_counter``);
* a :class:`Costs` record, a dict with keys ``forward``, ``write``, ``read`` (and
  optionally ``adjoint``), or a tuple ``(forward, adjoint, write, read)``: seconds
  or any relative unit (only the ratios matter for the plan).

The RAM + disk plan minimises ``T + W * write / forward + R * read / forward``
(forward steps T, disk writes W, disk reads R); the n adjoint steps are the same
for every schedule, so ``adjoint`` only enters the reported total.
"""

import statistics
import time
from collections import namedtuple

from tangent_ckpt.errors import CheckpointError

__all__ = ["Costs", "as_costs", "measure_costs", "MEASURE", "DEFAULT_COSTS"]

MEASURE = "measure"

class Costs(namedtuple("Costs", "forward adjoint write read")):
    """Cost of one forward step, one adjoint step, one disk write and one disk read,
    in seconds or relative units."""

    __slots__ = ()

    def relative(self):
        """(write, read) in forward steps: what the RAM + disk plan weighs."""
        return (self.write / self.forward, self.read / self.forward)

    def total(self, n, forward_steps, disk_writes, disk_reads):
        """forward * T + adjoint * n + write * W + read * R."""
        return (self.forward * forward_steps + self.adjoint * n + self.write * disk_writes
                + self.read * disk_reads)


#: the costs planned for when none are given: a disk write or read = one forward step
DEFAULT_COSTS = Costs(1.0, 0.0, 1.0, 1.0)


def as_costs(value):
    """Normalise a ``costs=`` value: None, "measure" or a hashable :class:`Costs`."""
    if value is None or (isinstance(value, str) and value == MEASURE):
        return value
    if isinstance(value, Costs):
        costs = value
    elif isinstance(value, dict):
        unknown = set(value) - set(Costs._fields)
        missing = {"forward", "write", "read"} - set(value)
        if unknown or missing:
            wrong = f"unknown {', '.join(sorted(unknown))}" if unknown else \
                f"missing {', '.join(sorted(missing))}"
            raise CheckpointError(f"costs= needs the keys forward, write, read (and optionally "
                                  f"adjoint); {wrong}")
        costs = Costs(**{"adjoint": 0.0, **value})
    elif isinstance(value, (tuple, list)) and len(value) == 4:
        costs = Costs(*value)
    else:
        raise CheckpointError(f"costs= must be 'measure', a dict with forward, write, read "
                              f"(and adjoint), or a 4-tuple; got {value!r}")
    try:
        costs = Costs(*(float(x) for x in costs))
    except (TypeError, ValueError):
        raise CheckpointError(f"costs= values must be numbers, got {value!r}") from None
    if not costs.forward > 0 or min(costs) < 0:
        raise CheckpointError(f"costs= needs forward > 0 and no negative cost, got {value!r}")
    return costs


def measure_costs(run_step, write, read, free, repeat=3):
    """Time one step (``run_step()``, the median of `repeat` runs: the first run of
    a step is often slower), one snapshot write (``write()``) and read (``read()``);
    ``free()`` drops the test snapshot, also on errors.  Returns a :class:`Costs` in
    seconds (adjoint 0: not known before the reverse sweep)."""
    times = []
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        run_step()
        times.append(time.perf_counter() - t0)
    try:
        t1 = time.perf_counter()
        write()
        t2 = time.perf_counter()
        read()
        t3 = time.perf_counter()
    finally:
        free()
    forward = max(statistics.median(times), 1e-9)
    return Costs(forward, 0.0, t2 - t1, t3 - t2)
