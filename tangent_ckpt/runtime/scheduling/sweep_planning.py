"""Which sweep a checkpointed loop runs: the uniform schedule's segment length,
taped segments under a memory budget, and the RAM + disk plan.

Plain functions of the loop's sizes and options; the driver
(``runtime.driver.CheckpointedLoop``) executes what they choose.
"""

from tangent_ckpt.errors import CheckpointError
from tangent_ckpt.runtime.scheduling.costs import DEFAULT_COSTS, MEASURE, measure_costs
from tangent_ckpt.runtime.scheduling.hrevolve import plan_two_level
from tangent_ckpt.runtime.scheduling.schedules import revolve_cost, uniform_cost

__all__ = ["MEASURE_REPEAT", "uniform_every", "segment_length", "segment_spans",
           "measured_costs", "disk_plan"]

#: runs of the first step timed when the costs are measured (counted as measure_steps)
MEASURE_REPEAT = 3


def uniform_every(name, n, s):
    """The shortest segment length whose uniform schedule for `n` steps fits in `s`
    snapshots (it holds a whole segment's tape); else a CheckpointError."""
    if n <= 1:
        return 1
    k = max(1, -(-n // s))
    while k <= n:
        if uniform_cost(n, k)[2] <= s:
            return k
        if k - 2 > s:
            break
        k += 1
    best = min(range(1, n + 1), key=lambda k: uniform_cost(n, k)[2]) if n <= 4096 else None
    need = uniform_cost(n, best)[2] if best else "more"
    raise CheckpointError(f"{name}: the uniform schedule needs {need} snapshots for {n} steps "
                          f"(it holds a whole segment's tape), only {s} allowed; "
                          "use schedule='revolve'")


def segment_length(n, s, tape_states, next_state):
    """Steps per taped segment for `n` steps in `s` snapshots, or None when Revolve
    in `s` snapshots is the better sweep: the best segment length's snapshots and
    tape (`tape_states` states per step) do not fit, or (`next_state`: Revolve
    reverses from the states on both sides of each step) Revolve runs no more
    plain steps than the segments' 2n."""
    if s >= n or n < 2:
        return None
    k = max(1, int(round((n / tape_states) ** 0.5)))
    if -(-n // k) + tape_states * k > s:
        return None  # not even the best segment length fits: Revolve in s snapshots
    if next_state and revolve_cost(n, s)[1] + 1 <= 2 * n:
        return None
    return k


def segment_spans(n, k):
    """``(slot, first, end)`` of each taped segment of k steps, last segment first."""
    for slot in reversed(range(-(-n // k))):
        yield slot, slot * k, min(n, slot * k + k)


def measured_costs(run_step, state, store, slot, repeat=MEASURE_REPEAT):
    """Costs timed on this loop: ``run_step()`` `repeat` times and `state` written
    as a snapshot to the free `slot` of `store`, read back and freed."""
    return measure_costs(run_step, lambda: store.store(slot, state),
                         lambda: store.restore(slot), lambda: store.free(slot), repeat)


def disk_plan(n, s_ram, disk_snapshots, costs):
    """The RAM + disk plan (``hrevolve.plan_two_level``) weighed by `costs`
    (None or MEASURE not yet measured: ``DEFAULT_COSTS``)."""
    known = costs if costs is not None and costs != MEASURE else DEFAULT_COSTS
    write, read = known.relative()
    return plan_two_level(n, s_ram, disk_snapshots, write, read)
