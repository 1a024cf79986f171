"""Run-time support of checkpointed segments and of the auto mode's memory plan.

``rt.Segment`` is what generated code calls for ``tc.checkpoint(fn, ...)`` and
``with tc.checkpoint_scope(name):``::

    segment12 = rt.Segment('segment12', segment12_primal, segment12_adjoint)
    h2 = segment12.forward(h1, W)             # no intermediates kept
    bh1, bW = segment12.reverse(bh2, h1, W)   # re-run the block, then reverse it

``adjoint`` is a generator function: it records the block, ``yield``\\ s the
outputs, receives their adjoints and returns the inputs' adjoints.  A segment
that is *not* checkpointed this time (``enabled`` false, outputs smaller than
``min_bytes``, or a memory plan with room for its record) keeps the suspended
generator from ``forward`` to ``reverse``: its frame is the record.

A block that draws random numbers (``random_state``: from NumPy's legacy global
state; ``generators``: generator objects it reaches, besides those among its
inputs) draws the same numbers when it is re-run: the generators' states from
before ``forward`` are put back for the re-run, and those of the moment after
it, so the gradient leaves them as running the function once does.

``rt.MemoryPlan`` shares one memory budget among the checkpointed loops and
segments of one gradient call (``grad(f, checkpoint="auto", memory_budget=...)``).
"""

import numpy as np

from tangent_ckpt.runtime.backends import is_array
from tangent_ckpt.runtime.loops.replays import replayed_steps
from tangent_ckpt.errors import CheckpointError
from tangent_ckpt.runtime.loops import profiler as _profiler
from tangent_ckpt.runtime.memory import parse_memory
from tangent_ckpt.runtime.random_state import RandomStates
from tangent_ckpt.runtime.stores.snapshots import tree_nbytes

__all__ = ["Segment", "MemoryPlan", "frame_nbytes"]


def _arrays(value, seen, depth=0):
    if is_array(value):
        if id(value) not in seen:
            seen[id(value)] = value.nbytes
    elif isinstance(value, (list, tuple)) and depth < 8:
        for item in value:
            _arrays(item, seen, depth + 1)
    elif isinstance(value, dict) and depth < 8:
        for item in value.values():
            _arrays(item, seen, depth + 1)


def frame_nbytes(generator, exclude=()):
    """Bytes of the arrays a suspended generator's frame holds (its locals and
    tapes), each array counted once, leaving out the arrays in ``exclude``."""
    frame = getattr(generator, "gi_frame", None)
    if frame is None:
        return 0
    seen = {}
    for value in frame.f_locals.values():
        _arrays(value, seen)
    skip = {}
    _arrays(list(exclude), skip)
    return sum(n for k, n in seen.items() if k not in skip)


def _fmt(n):
    for unit, size in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} B"


class Segment:
    """One execution of a segment: ``forward`` then (at most once) ``reverse``."""

    def __init__(self, name, primal, adjoint, *, min_bytes=None, enabled=True, plan=None,
                 random_state=False, generators=()):
        self.name = name
        self.random_state = random_state
        self.generators = generators
        self._random = None  # (RandomStates, their states before forward)
        self.primal = primal
        self.adjoint = adjoint
        self.min_bytes = min_bytes
        self.enabled = bool(enabled)
        self.plan = plan
        self._record = None
        self._held = 0
        self.checkpointed = None

    def forward(self, *inputs):
        """Run the segment; return its outputs.  Checkpointed: nothing else is kept."""
        random = RandomStates(inputs, self.random_state, self.generators)
        self._random = (random, random.capture()) if random else None
        if self.enabled and self.min_bytes is None and self.plan is None:
            self.checkpointed = True
            outputs = self.primal(*inputs)
            _profiler.record(self.name, runs=1, checkpoints=1)
            return outputs
        record = self.adjoint(*inputs)
        outputs = next(record)
        keep = not self.enabled
        if self.enabled and self.min_bytes is not None:
            keep = tree_nbytes(outputs) < self.min_bytes
        if self.enabled and self.plan is not None and (self.min_bytes is None or not keep):
            held = frame_nbytes(record, exclude=(inputs, outputs))
            keep = self.plan.admit(self.name, held)
            self._held = held if keep else 0
        self.checkpointed = not keep
        if keep:
            self._record = record
            if _profiler.active_profilers():
                held = self._held or frame_nbytes(record, exclude=(inputs, outputs))
                _profiler.record(self.name, runs=1, bytes_held=held)
        else:
            record.close()  # drop the intermediates now
            _profiler.record(self.name, runs=1, checkpoints=1)
        return outputs

    def reverse(self, b_outputs, *inputs):
        """The inputs' adjoints, given the outputs' adjoints (re-running the segment
        from ``inputs`` when it was checkpointed)."""
        record, self._record = self._record, None
        if record is None:
            record = self.adjoint(*inputs)
            with replayed_steps():  # a print in it ran in the forward sweep
                if self._random is not None:  # the re-run draws the numbers forward drew
                    random, before = self._random
                    now = random.capture()
                    random.restore(before)
                    outputs = next(record)
                    random.restore(now)
                else:
                    outputs = next(record)
            saved = frame_nbytes(record, exclude=(inputs, outputs)) \
                if _profiler.active_profilers() else None
            _profiler.record(self.name, steps_recomputed=1, bytes_saved=saved)
        elif self.plan is not None and self._held:
            self.plan.release_bytes(self.name, self._held)
            self._held = 0
        try:
            record.send(b_outputs)
        except StopIteration as stop:
            return stop.value
        raise RuntimeError(f"{self.name}: the segment's adjoint yielded twice")  # pragma: no cover

    def __repr__(self):
        return f"<rt.Segment {self.name}>"


class MemoryPlan:
    """One memory budget shared by the checkpointed loops and segments of a gradient.

    Policy (greedy, in the order things run): the working memory of a sweep
    (``CheckpointedLoop.working_bytes``: working states, one step's re-recording
    and its temporaries, the arguments' adjoints) is needed by one loop at a time; what is
    left is split evenly among the loops that have not started yet.  A loop's
    ``CheckpointedLoop`` turns that share
    into snapshots (all states when they fit: no replays; taped segments or
    Revolve otherwise).  What it holds after its forward sweep (snapshots) is
    counted as held until its reverse sweep ends.  A segment keeps its record
    (no recomputation) when the record fits in the share a new loop would get,
    ``(budget - held) // (loops_left + 1)``; otherwise it is recomputed.
    """

    def __init__(self, budget, loops=0, name="auto"):
        self.budget = parse_memory(budget)
        self.loops_left = int(loops)
        self.name = name
        self.held = 0
        self.peak_held = 0
        self._items = {}
        self.decisions = []

    def _note(self, text):
        self.decisions.append(text)
        for p in _profiler.active_profilers():
            notes = getattr(p, "notes", None)
            if notes is not None:
                notes.append(text)

    def share(self, loop, args=()):
        """The memory budget of ``loop`` (a CheckpointedLoop about to start; its
        state size is known).  Raises CheckpointError before the loop runs a step
        when the budget cannot give it and the loops still to come (taken to be of
        the same size) one snapshot each."""
        free = self.budget - self.held
        sb = getattr(loop, "_state_bytes", 0)
        loops = max(1, self.loops_left)
        # the sweep's working memory is needed by one loop at a time (the driver's
        # own reserve: working states, one step's re-recording and temporaries, the
        # arguments' adjoints)
        working = loop.working_memory(args)
        # what stays held until the reverse sweep is split among the loops:
        # snapshots and the state before the last step
        holdable = free - working
        if holdable < 2 * sb * loops:
            need = self.held + working + 2 * sb * loops
            raise CheckpointError(
                f"{getattr(loop, 'name', loop)}: memory_budget {_fmt(self.budget)} cannot hold "
                f"one snapshot of a {_fmt(sb)} state for each of the {loops} checkpointed "
                f"loop(s) still to run beside a sweep's working memory ({_fmt(working)})"
                + (f" and what earlier loops hold ({_fmt(self.held)})" if self.held else "")
                + f"; raise the budget to at least {_fmt(need)}")
        per_loop = holdable // loops
        self.loops_left = max(0, self.loops_left - 1)
        # CheckpointedLoop pays its working memory from its budget first: hand it
        # that plus its part
        return per_loop + working

    def hold(self, loop):
        store = getattr(loop, "_store", None)
        nbytes = (store.nbytes if store is not None else 0) + tree_nbytes(getattr(loop, "_prev", None))
        self._items[loop.name] = self._items.get(loop.name, 0) + nbytes
        self.held += nbytes
        self.peak_held = max(self.peak_held, self.held)
        n = loop.n or 0
        s = getattr(loop, "used_snapshots", None)
        how = ("keeps every state (no replays)" if s is not None and s >= n else
               f"taped segments of {loop._segments} steps" if getattr(loop, "_segments", None)
               else f"Revolve with {s} snapshots")
        self._note(f"{loop.name}: {n} steps, budget share {_fmt(loop.memory_budget)}, "
                   f"state {_fmt(getattr(loop, '_state_bytes', 0))}: {how}; holds {_fmt(nbytes)}")

    def release(self, loop):
        nbytes = self._items.pop(getattr(loop, "name", loop), 0)
        self.held -= nbytes

    def admit(self, name, nbytes):
        """May segment ``name`` keep a record of ``nbytes``?  (counted as held if so)"""
        room = (self.budget - self.held) // (self.loops_left + 1)
        keep = nbytes <= room
        if keep:
            self.held += nbytes
            self.peak_held = max(self.peak_held, self.held)
        self._note(f"{name}: record {_fmt(nbytes)}, room {_fmt(max(room, 0))}: "
                   + ("kept (no recomputation)" if keep else "recomputed in the reverse sweep"))
        return keep

    def release_bytes(self, name, nbytes):
        self.held -= nbytes
