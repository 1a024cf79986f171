"""How many snapshots a checkpointed loop keeps: counted, or bought from a memory budget.

A memory budget first pays for what a sweep holds beside its snapshots
(:func:`working_bytes`): one step's working memory (the larger of a forward step
and an adjoint step, measured on step 0 by :func:`measure_step_bytes` before the
schedule is planned), the states a sweep holds beside its snapshots (the state
before the step being reversed, the state after it, a restored copy, the state's
adjoint), what the code around the loop holds meanwhile (its result, the loss's
temporaries and their adjoints), and four times the arguments (their adjoint
buffers, one contribution's temporary, the rows an rt.ProductSum gathers, the
transposed copies the reverse sweep multiplies by).  The rest buys snapshots
(:func:`snapshots_in_budget`).
"""

import numpy as np

from tangent_ckpt.errors import CheckpointError
from tangent_ckpt.runtime.memory import peak_of
from tangent_ckpt.runtime.scheduling.schedules import default_snapshots, uniform_cost
from tangent_ckpt.runtime.backends import is_foreign_array, on_device
from tangent_ckpt.runtime.stores.snapshots import tree_flatten, tree_nbytes

__all__ = ["DEFAULT_ONLINE_SNAPSHOTS", "TAPE_STATES", "HELD_STATES", "AROUND_STATES",
           "RESERVED_ARGUMENTS", "ASSUMED_STEP_STATES", "as_count", "working_bytes",
           "measure_step_bytes", "budget_refusal", "snapshots_in_budget", "default_count"]

#: snapshots of an online (while) loop when neither `snapshots` nor `memory_budget` is given
DEFAULT_ONLINE_SNAPSHOTS = 16
#: the tape of one step of a taped segment, in states, at least
TAPE_STATES = 2
#: states a sweep holds beside its snapshots, and states the code around the loop holds
HELD_STATES = 4
AROUND_STATES = 6
#: the arguments' adjoint buffers and temporaries, in copies of the arguments
RESERVED_ARGUMENTS = 4
#: without a measurement (no probe: a loop driven by hand), a step is taken to
#: need this many states
ASSUMED_STEP_STATES = 4


def as_count(name, value, minimum):
    """`value` as an int >= `minimum`, else a CheckpointError naming the option."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise CheckpointError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if value < minimum:
        what = "at least 1 (the snapshot of the loop's input)" if minimum == 1 else f">= {minimum}"
        raise CheckpointError(f"{name} must be {what}, got {value}")
    return value


def fmt_bytes(n):
    """A byte count for a message: ``1.5 MiB (1572864 bytes)``."""
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.3g} {unit} ({n} bytes)"
    return f"{n} bytes"


def working_bytes(state_bytes, args=(), step_bytes=None, buffered_states=0):
    """What a sweep holds beside its snapshots, paid from a memory budget first:
    one step's working memory (`step_bytes`, measured; else assumed to be
    ``ASSUMED_STEP_STATES`` states), the states held beside the snapshots and
    around the loop, the store's write and prefetch buffers
    (`buffered_states`) and the arguments' adjoint buffers."""
    if step_bytes is None:
        step_bytes = ASSUMED_STEP_STATES * state_bytes
    states = HELD_STATES + AROUND_STATES + buffered_states
    return int(step_bytes) + states * state_bytes + RESERVED_ARGUMENTS * tree_nbytes(args)


def measure_step_bytes(step, index, state, args, adjoint_probe=None):
    """``(forward_bytes, adjoint_bytes, probes)``: the working memory (tracemalloc
    peak) of one forward step and one adjoint step from `state`, and how many
    steps that ran.  ``adjoint_probe(index, state, next_state, *args)`` runs the
    adjoint step from zero adjoints; without one (a loop driven by hand) only the
    forward step runs and the adjoint step is taken to need twice as much.

    A compiled step (``backend="numba"``: it counts ``compile_seconds``) runs once
    first, unmeasured and uncounted, so that the peak is the step's and not
    Numba's compiler's.

    tracemalloc sees host memory only.  For a state of another library's arrays a
    step is taken to need at least ``ASSUMED_STEP_STATES`` states, as when nothing
    is measured; for one in a GPU's memory (CuPy's) exactly that: the host peak
    tracemalloc reports there is not device memory -- on a first call it is mostly
    the library compiling its kernels, once -- and a budget of device memory does
    not pay for it."""
    if getattr(step, "compile_seconds", None) is not None:
        warm = step(index, state, *args)
        if adjoint_probe is not None:
            adjoint_probe(index, state, warm, *args)
    after, forward_bytes = peak_of(lambda: step(index, state, *args))
    leaves = tree_flatten(state)[0]
    floor = 0
    if any(is_foreign_array(leaf) for leaf in leaves):
        floor = ASSUMED_STEP_STATES * tree_nbytes(state)
    probes = 1 if adjoint_probe is None else 2
    if adjoint_probe is None:
        adjoint_bytes = 2 * forward_bytes
    else:
        _, adjoint_bytes = peak_of(adjoint_probe, index, state, after, *args)
    if any(on_device(leaf) for leaf in leaves):
        return floor, floor, probes
    return max(forward_bytes, floor), max(adjoint_bytes, floor), probes


def budget_refusal(name, budget, overhead, state_bytes, step_bytes=None):
    """The error for a budget that cannot hold one snapshot beside the working
    memory (`step_bytes`: the measured step, None before it is measured)."""
    measured = step_bytes is not None
    return CheckpointError(
        f"{name}: memory_budget {fmt_bytes(budget)} cannot hold one "
        f"snapshot of the loop state ({fmt_bytes(state_bytes)}) beside the working "
        f"memory of the sweep ({'measured ' if measured else 'at least '}"
        f"{fmt_bytes(overhead)}"
        + (f", of which one step {fmt_bytes(step_bytes)}" if measured else "")
        + "); raise the budget")


def snapshots_in_budget(budget, overhead, state_bytes, n, requested=None):
    """As many states as fit in ``budget - overhead`` (all of them if they all
    fit), at most `requested` and, for a known `n`, between 1 and n."""
    room = budget - overhead
    fit = room // state_bytes if state_bytes else max(n or DEFAULT_ONLINE_SNAPSHOTS, 1)
    s = fit if requested is None else min(requested, fit)
    return s if n is None else max(1, min(s, n))


def default_count(schedule, n, s, min_steps=0):
    """The slots to use when neither the caller nor a budget fixed `s` (None), and
    every state for a loop shorter than `min_steps`; never more than the trip
    count (``snapshots=10**9`` on a 4-step loop plans with 4)."""
    if s is None and schedule == "uniform" and n:
        # the sqrt(n) scheme's own size: segments of about sqrt(n) steps
        s = uniform_cost(n, max(1, round(n ** 0.5)))[2]
    if s is None:
        s = default_snapshots(n) if n is not None else DEFAULT_ONLINE_SNAPSHOTS
    if n is not None and n < min_steps:
        s = max(1, n)  # a short loop keeps every state: each step is recomputed once
    if n is not None:  # more slots than steps plan the same schedule as n slots
        s = min(s, max(1, n))
    return s
