"""The compiled sweep of ``backend="numba"``: a checkpointed loop's whole schedule
run inside compiled code.

The Python driver (:class:`~tangent_ckpt.runtime.loops.driver.CheckpointedLoop`)
executes a schedule one action at a time and calls the adjoint step once per
step; for a small state that bookkeeping costs more than the steps.  Here the
schedule is an integer array made once per (schedule, n, snapshots)
(:func:`sweep_plan`), and the numba backend generates for each loop two
compiled functions that walk it (``loopN_forward_sweep``: advances and
snapshot stores up to the first turn; ``loopN_reverse_sweep``: the rest,
restores, advances, adjoint steps).  Snapshots live in preallocated buffers, one
array of ``slots x leaf shape`` per leaf of the state (:func:`snapshot_buffers`):
the memory the Python driver's snapshots take, in one piece.

The actions, and so the counts the profiler reports, are the schedule's own:
:class:`SweepPlan` counts them once beside the array.

It applies to a state that is a float array, a float, or a flat tuple of them
(:func:`fits`); the driver checks the rest (no random state, disk level,
memory budget, journal of in-place writes, verification or progress bar).

NumPy only: the Numba twins of :func:`store_snapshot` and
:func:`restore_snapshot` are in :mod:`tangent_ckpt.runtime.jit.numba_twins`; these
Python versions run when a sweep falls back to Python.
"""

import functools
from dataclasses import dataclass

import numpy as np

from tangent_ckpt.runtime.scheduling.schedules import (
    ADVANCE, FIRST_TURN, FREE, RESTORE, REVERSE, STORE, revolve, uniform,
)

__all__ = ["CODES", "SweepPlan", "sweep_plan", "CompiledSweep", "fits", "snapshot_buffers", "store_snapshot",
           "restore_snapshot"]

#: action kind -> its code in a plan's array (the generated sweeps compare with these numbers)
CODES = {ADVANCE: 0, STORE: 1, RESTORE: 2, FREE: 3, FIRST_TURN: 4, REVERSE: 5}


@dataclass(frozen=True)
class SweepPlan:
    """A schedule as an array: row ``(code, n or slot, pos)`` per action.

    ``turn``: the row of FIRST_TURN (the forward sweep is the rows before it);
    ``slots``: snapshot slots used; ``forward`` / ``reverse``: the driver's
    counters for the two sweeps (plain steps, snapshots stored); ``peak``: most
    snapshots held at once; ``held``: the slots held at the first turn;
    ``actions``: makes the schedule's actions again (as the Python driver reads them)."""
    codes: np.ndarray
    turn: int
    slots: int
    peak: int
    forward: dict
    reverse: dict
    held: tuple
    actions: object


def _plan(actions, again):
    rows, turn, held, peak, slots, at_turn = [], None, set(), 0, 0, ()
    counts = [dict(forward_steps=0, snapshots_stored=0), dict(forward_steps=0, snapshots_stored=0)]
    for a in actions:
        kind = a.kind
        part = counts[turn is not None]
        if kind is ADVANCE:
            rows.append((0, a.n, a.pos))
            part["forward_steps"] += a.n
        elif kind is STORE:
            rows.append((1, a.slot, a.pos))
            part["snapshots_stored"] += 1
            held.add(a.slot)
            peak, slots = max(peak, len(held)), max(slots, a.slot + 1)
        elif kind is RESTORE:
            rows.append((2, a.slot, a.pos))
        elif kind is FREE:
            rows.append((3, a.slot, a.pos))
            held.discard(a.slot)
        elif kind is FIRST_TURN:
            turn, at_turn = len(rows), tuple(sorted(held))
            rows.append((4, 0, a.pos))
            counts[0]["forward_steps"] += 1  # the last step, run plainly for the loop's result
        else:
            rows.append((5, 0, a.pos))
    codes = np.array(rows, dtype=np.int64).reshape(-1, 3)
    codes.flags.writeable = False
    return SweepPlan(codes, turn, slots, peak, counts[0], counts[1], at_turn, again)


@functools.lru_cache(maxsize=32)
def sweep_plan(schedule, n, snapshots):
    """The :class:`SweepPlan` of ``revolve(n, snapshots)`` (schedule "revolve") or
    ``uniform(n, snapshots)`` (schedule "uniform", ``snapshots`` then being the
    segment length), made once per arguments."""
    def actions():
        return revolve(n, snapshots) if schedule == "revolve" else uniform(n, snapshots)
    return _plan(actions(), actions)


def _leaf_fits(x):
    if type(x) is np.ndarray:
        return x.dtype == np.float64 and x.ndim >= 1
    return type(x) is float or isinstance(x, np.float64)


def fits(state):
    """True for a state the compiled sweep keeps in buffers: a float64 array, a
    float, or a flat tuple of them."""
    if isinstance(state, tuple):
        return len(state) > 0 and all(_leaf_fits(x) for x in state)
    return _leaf_fits(state)


def _leaves(state):
    return state if isinstance(state, tuple) else (state,)


def snapshot_buffers(state, slots):
    """One buffer per leaf of ``state``: ``slots`` rows shaped like the leaf."""
    return tuple(np.empty((slots,) + np.shape(x), dtype=np.float64) for x in _leaves(state))


class LayoutChanged(Exception):
    """A step changed its state's shape or dtype (``acc = 0.0`` becoming an array, a
    real state becoming complex): the buffers made from the state before the first
    step cannot hold it, and the driver runs the sweep without them."""


def store_snapshot(buffers, slot, state):
    """Copy ``state`` into row ``slot`` of its buffers (:class:`LayoutChanged`
    where it no longer fits them)."""
    leaves = _leaves(state)
    if len(leaves) != len(buffers) or not all(
            _leaf_fits(x) and np.shape(x) == buf.shape[1:] for buf, x in zip(buffers, leaves)):
        raise LayoutChanged
    for buf, x in zip(buffers, leaves):
        buf[slot] = x


def restore_snapshot(buffers, slot, like):
    """A fresh copy of the state kept in row ``slot`` (structured like ``like``)."""
    leaves = tuple(buf[slot].copy() if buf.ndim > 1 else float(buf[slot]) for buf in buffers)
    return leaves if isinstance(like, tuple) else leaves[0]


class CompiledSweep:
    """One run of a :class:`SweepPlan` by a step's compiled sweeps: the forward
    sweep fills the snapshot buffers, the reverse sweep (or, for an adjoint step
    without a compiled sweep, the Python driver after :meth:`to_store`) reads them.
    ``first`` and ``stride``: the loop's first index and its step."""

    def __init__(self, plan, first, stride):
        self.plan, self.first, self.stride = plan, first, stride
        self.buffers = None

    def forward(self, step, state, args):
        """Run ``step.sweep`` up to the first turn; return the state before the last step."""
        self.buffers = snapshot_buffers(state, self.plan.slots)
        return step.sweep(self.plan.codes, self.first, self.stride, state, self.buffers, *args)

    def reverse(self, adjoint_step, states, bstate, args):
        """Run ``adjoint_step.sweep`` over the rest of the schedule from the states at
        the first turn; return the adjoint of the loop's input state."""
        buffers, self.buffers = self.buffers, None
        return adjoint_step.sweep(self.plan.codes, self.plan.turn, self.first, self.stride,
                                  *states, bstate, buffers, *args)

    def to_store(self, store, like):
        """Hand the snapshots held at the first turn to `store` (structured like
        `like`); return the schedule's actions after the first turn."""
        for slot in self.plan.held:
            store.store(slot, restore_snapshot(self.buffers, slot, like))
        self.buffers = None
        it = iter(self.plan.actions())
        for a in it:
            if a.kind is FIRST_TURN:
                break
        return it
