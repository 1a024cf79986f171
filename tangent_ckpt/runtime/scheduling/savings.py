"""What checkpointing saves and costs, computed from the schedules themselves.

Units are "states": the memory of one loop state.  Assumption: the tape of one
step (what reverse mode keeps to reverse it, including the step's input state)
is about one state; pass ``tape_size`` (in states) when it is not.

* without checkpointing, every step's tape is kept: ``n * tape_size``;
* with checkpointing, what really stays in memory at the peak: the most snapshots
  the schedule holds at once plus ONE step's tape: ``peak_snapshots + tape_size``.
  (For the uniform sqrt(n) scheme, the peak includes the re-taped segment.)

``recomputation_factor`` = total forward evaluations / n = (A + n) / n, where A is
the number of plain forward steps the schedule runs and the n re-recorded steps are
the ones the adjoint steps replay.  Without checkpointing the factor is 1.
"""

from tangent_ckpt.runtime.scheduling.schedules import (
    ADVANCE, FIRST_TURN, STORE, default_snapshots, revolve, revolve_cost, revolve_peak,
    uniform_cost,
)
from tangent_ckpt.runtime.stores.snapshots import tree_copy

__all__ = ["checkpointed_loop", "compute_checkpoint_positions", "get_memory_savings",
           "estimate_checkpoint_savings", "should_checkpoint"]


def _n_s(seq_length, num_checkpoints):
    n = int(seq_length)
    if n < 0:
        raise ValueError(f"seq_length must be >= 0, got {seq_length}")
    s = default_snapshots(n) if num_checkpoints is None else int(num_checkpoints)
    if s < 1:
        raise ValueError(f"num_checkpoints must be >= 1, got {num_checkpoints}")
    return n, s


def compute_checkpoint_positions(seq_length, num_checkpoints=None):
    """Positions (state indices, 0 = initial state) Revolve's forward sweep stores, in order."""
    n, s = _n_s(seq_length, num_checkpoints)
    out = []
    for a in revolve(n, s):
        if a.kind == FIRST_TURN:
            break
        if a.kind == STORE:
            out.append(a.pos)
    return out


def checkpointed_loop(func, initial_state, seq_length, num_checkpoints=None):
    """Run ``state = func(state)`` seq_length times as Revolve's forward sweep does.

    `func` takes the state only (use a closure or a counter if it needs the index).
    Returns ``(final_state, checkpoints)`` where checkpoints maps each position the
    sweep stores (see compute_checkpoint_positions) to a copy of the state there.
    """
    n, s = _n_s(seq_length, num_checkpoints)
    state, checkpoints = initial_state, {}
    for a in revolve(n, s):
        if a.kind == FIRST_TURN:
            state = func(state)
            break
        if a.kind == ADVANCE:
            for _ in range(a.n):
                state = func(state)
        elif a.kind == STORE:
            checkpoints[a.pos] = tree_copy(state)
    return state, checkpoints


def get_memory_savings(seq_length, num_checkpoints=None, tape_size=1.0, schedule="revolve"):
    """Memory (in states) and recomputation of a checkpointed reverse sweep.

    schedule="revolve" (default) or "uniform" (snapshots every ceil(n / num_checkpoints)
    steps, the sqrt(n) scheme).  Keys: without_checkpointing, with_checkpointing,
    savings_percent, savings_ratio, num_checkpoints, recomputation_factor, plus
    schedule, peak_snapshots, forward_steps (A), total_forward_evaluations (T), and
    repetition_number (revolve) or segment_length (uniform).
    """
    n, s = _n_s(seq_length, num_checkpoints)
    tape = float(tape_size)
    out = {"schedule": schedule, "num_checkpoints": s}
    if schedule == "revolve":
        r, a, t = revolve_cost(n, s)
        peak = revolve_peak(n, s)
        out["repetition_number"] = r
    elif schedule == "uniform":
        every = max(1, -(-n // s))
        a, t, peak = uniform_cost(n, every)
        out["segment_length"] = every
    else:
        raise ValueError(f"unknown schedule {schedule!r}; use 'revolve' or 'uniform'")
    without = n * tape
    with_ = (peak + tape) if n else 0.0
    out.update(
        without_checkpointing=without,
        with_checkpointing=with_,
        savings_percent=(100.0 * (1.0 - with_ / without)) if without else 0.0,
        savings_ratio=(without / with_) if with_ else 1.0,
        recomputation_factor=(t / n) if n else 1.0,
        peak_snapshots=peak,
        forward_steps=a,
        total_forward_evaluations=t,
    )
    return out


def estimate_checkpoint_savings(seq_length, num_checkpoints=None, tape_size=1.0):
    """Revolve and the uniform sqrt(n) scheme side by side at the same num_checkpoints:
    ``{"revolve": get_memory_savings(...), "uniform": get_memory_savings(..., schedule="uniform")}``."""
    return {sch: get_memory_savings(seq_length, num_checkpoints, tape_size, schedule=sch)
            for sch in ("revolve", "uniform")}


def should_checkpoint(seq_length, threshold=0.5, num_checkpoints=None, tape_size=1.0):
    """True when Revolve (default snapshots) saves at least `threshold` (a fraction) of memory."""
    return get_memory_savings(seq_length, num_checkpoints, tape_size)["savings_percent"] >= 100.0 * threshold
