"""The schedule driver that generated gradient code calls: ``rt.CheckpointedLoop``.

    loop = CheckpointedLoop(range(n), snapshots=10, name="loop3")
    h = loop.forward(primal_step, h, W, b)          # all n steps, snapshots stored
    bstate = loop.reverse(adjoint_step, bstate, W, b)  # steps n-1 .. 0 reversed

Contract for the callbacks:

* ``step(index, state, *args) -> new_state`` must not mutate `state` in place (the
  driver keeps a reference to the state before the last step instead of copying
  it).  Restored states are fresh copies, so a step may do whatever it likes with
  arrays it creates itself.
* ``adjoint_step(index, state_before_step, bstate, *args) -> bstate`` re-records
  step `index` from `state_before_step` and reverses it.  It is called exactly once
  per step, for k = n-1 down to 0.  `bstate` is an opaque pytree.  A step may
  update the arrays of the `bstate` it is given in place and return them (the
  generated steps do, for private adjoint buffers made before ``reverse``): every
  path hands a `bstate` to one step only and never reads it again.
* ``index`` is ``steps[k]`` (for ``steps`` given as an int or None: k itself).

Counting: forward() runs n plain steps (the schedule's forward sweep advances to
position n-1, then the last step runs once more, plainly, to produce the loop's
result, keeping the state before it for FIRST_TURN).  reverse() runs the
schedule's remaining advances and the n adjoint steps.  So for Revolve,
forward_steps = A + 1 and recorded_steps = n, with A from ``revolve_cost``.
"""

import tracemalloc

import numpy as np

from tangent_ckpt.errors import CheckpointError
from tangent_ckpt.runtime.jit import numba_sweep
from tangent_ckpt.runtime.loops import profiler as _profiler
from tangent_ckpt.runtime.loops import progress
from tangent_ckpt.runtime.scheduling import snapshot_sizing as sizing
from tangent_ckpt.runtime.loops import sweep_counts
from tangent_ckpt.runtime.scheduling import sweep_planning as planning
from tangent_ckpt.runtime.scheduling.costs import MEASURE, as_costs
from tangent_ckpt.runtime.loops.determinism import ReplayCheck, not_reproduced, state_digest
from tangent_ckpt.runtime.loops.replays import replayed_steps
from tangent_ckpt.runtime.memory import parse_memory, peak_of
from tangent_ckpt.runtime.primitive_adjoints.numpy_adjoints import settled
from tangent_ckpt.runtime.scheduling.online import OnlineSchedule
from tangent_ckpt.runtime.random_state import RandomStates, SlotRandomStates
from tangent_ckpt.runtime.scheduling.schedule_runner import run_schedule
from tangent_ckpt.runtime.scheduling.schedules import (
    Action, ADVANCE, DISK, FIRST_TURN, FREE, RESTORE, REVERSE, STORE, label_levels, revolve,
    uniform, NAMES as schedule_names,
)
from tangent_ckpt.runtime.scheduling.snapshot_sizing import DEFAULT_ONLINE_SNAPSHOTS, as_count
from tangent_ckpt.runtime.stores.snapshots import TwoLevelStore, WriteJournal, tree_copy, tree_nbytes
from tangent_ckpt.runtime.stores.store_io import SnapshotStore, open_disk_level, prefetching

__all__ = ["CheckpointedLoop", "parse_memory", "run_schedule", "DEFAULT_ONLINE_SNAPSHOTS"]

#: the levels snapshots are kept on, fastest first: where the arrays live (device
#: memory for CuPy arrays, RAM for NumPy's), host memory, disk (host_store.py)
LEVELS = ("device", "host", "disk")
#: the profiler's count of each level, made once (a name made per flush is kept by
#: every profiled call: tests/test_hygiene.py)
_PEAK_KEYS = {level: f"peak_{level}_bytes" for level in LEVELS}


class CheckpointedLoop:
    """One checkpointed loop: forward() then reverse(), executing a schedule.

    steps: an int n, a range / sequence (callbacks get steps[k]), or None for a
    while loop run with forward_while.  schedule: "revolve" | "uniform" | "online".
    snapshots: RAM snapshot slots (int >= 1); None -> default_snapshots(n), or as many
    states as fit in `memory_budget`, or DEFAULT_ONLINE_SNAPSHOTS for an unknown n.
    For "uniform", `snapshots` bounds the peak including the segment tape, and the
    segment length is the shortest that fits.  disk_snapshots: extra slots kept as
    .npy files in a private folder made with tempfile.mkdtemp inside `disk_dir`
    (default: system temp dir).  With "revolve" the RAM + disk schedule is planned
    for its cost (``runtime.hrevolve.plan_two_level``): never worse than RAM alone.
    costs: what a forward step, an adjoint step, a disk write and a disk read cost
    (``runtime.costs``; None: ``DEFAULT_COSTS``); "measure" times the first step
    (three runs, counted as ``measure_steps``) and one disk snapshot before planning.
    snapshot_store: where disk snapshots go instead (a folder, an fsspec URL for
    zarr arrays, or an ``rt.SnapshotStore``; see store_io.py).  Disk writes are
    queued, disk reads of the reverse sweep prefetched (``store_io.prefetching``).
    verify: see ``_verify_at``; extra steps are counted as ``verify_steps``.
    min_steps: a loop of fewer steps keeps every state (no replays beyond the
    one re-recording of each step).
    taped_segment: ``segment(indices, state, bstate, *args) -> bstate`` records the
    steps ``indices`` with a tape and reverses them.  With a memory budget that
    cannot hold every state, the loop then keeps a snapshot every k steps and
    reverses segment by segment: 2n forward steps in all (each step run once in
    the sweep, once on the tape), fewer than Revolve needs in the same memory.
    The tape of one step is taken to be one measured adjoint step (at least
    ``TAPE_STATES`` states).
    adjoint_probe: ``probe(index, state, next_state, *args)`` runs the adjoint
    step from zero adjoints; a memory budget measures it on step 0 before the
    schedule is planned (see ``_measure_steps``).
    next_state: the adjoint step also takes the state after its step,
    ``adjoint_step(index, state, next_state, bstate, *args)``, so it need not
    re-run the step to get there.  The driver holds that state anyway (the
    reversal of step k + 1 started from it; for the last step it is the loop's
    result, which must not be changed in place before ``reverse``).  With a
    memory budget, taped segments are then used only when they run fewer plain
    steps than Revolve in the same memory (2n against A(n, s) + 1).
    copy_snapshots: False keeps the states themselves as RAM snapshots instead
    of copies; only for steps that never write into their input state (the
    compiler's steps copy an array before assigning into it).
    in_place: arrays of the state the steps write into in place (``S[t] = ...``),
    each step calling ``writes.keep(S, t)`` first (``self.writes``, a
    ``snapshots.WriteJournal``, passed to the steps as their last argument).
    Snapshots keep these arrays by reference, and restoring one undoes the
    writes made since, so a snapshot of a trajectory costs what its steps
    overwrote, not a copy of it.  RAM snapshots of a for loop only (no disk,
    memory budget or online schedule), with ``copy_snapshots=False``.
    random_state: the steps draw from NumPy's legacy global random state.  Its
    state (and that of every np.random.Generator / RandomState among the
    arguments, always) is kept with each snapshot and restored with it, so a
    recomputed step draws the numbers it drew the first time; the reverse
    sweep leaves the generators as it found them.
    generators: the np.random.Generator / RandomState objects the steps reach
    without being passed them (a module global, a closure's variable, an
    object's attribute), kept and restored like those among the arguments.
    """

    # the sizing constants, here for the code that reads them off the class
    TAPE_STATES = sizing.TAPE_STATES
    HELD_STATES, AROUND_STATES = sizing.HELD_STATES, sizing.AROUND_STATES
    RESERVED_ARGUMENTS = sizing.RESERVED_ARGUMENTS
    ASSUMED_STEP_STATES = sizing.ASSUMED_STEP_STATES

    SCHEDULES = schedule_names

    def __init__(self, steps, *, schedule="revolve", snapshots=None, memory_budget=None,
                 disk_snapshots=0, disk_dir=None, snapshot_store=None, name=None, verify=False,
                 min_steps=0, taped_segment=None, plan=None, next_state=False,
                 copy_snapshots=True, adjoint_probe=None, random_state=False, costs=None,
                 in_place=(), generators=()):
        if schedule not in self.SCHEDULES:
            raise CheckpointError(f"unknown schedule {schedule!r}; use one of {', '.join(self.SCHEDULES)}")
        self.schedule = schedule
        if steps is None:
            self.steps, self.n = None, None
        elif isinstance(steps, (int, np.integer)) and not isinstance(steps, bool):
            if steps < 0:
                raise CheckpointError(f"a loop cannot run {steps} steps")
            self.steps, self.n = None, int(steps)
        else:
            self.steps, self.n = steps, len(steps)
        self.snapshots = None if snapshots is None else as_count("snapshots", snapshots, 1)
        self.memory_budget = None if memory_budget is None else parse_memory(memory_budget)
        self.disk_snapshots = as_count("disk_snapshots", disk_snapshots, 0)
        self.disk_dir = disk_dir
        self.costs = as_costs(costs)
        self.last_plan = None  # the RAM + disk plan of the last forward() (runtime.hrevolve)
        self._store_spec = SnapshotStore.of(snapshot_store)
        if self.disk_snapshots:
            self._store_spec.open(disk_dir)  # checks the folder / URL now, before any step
        self.name = name if name is not None else "loop"
        self.verify = bool(verify)
        self.min_steps = as_count("min_steps", min_steps, 0)
        self.taped_segment = taped_segment
        self.next_state = bool(next_state)
        self.copy_snapshots = bool(copy_snapshots)
        self.writes = WriteJournal(in_place) if in_place else None
        if self.writes is not None and (self.copy_snapshots or self.disk_snapshots or
                                        memory_budget is not None or plan is not None or
                                        schedule == "online" or taped_segment is not None):
            raise CheckpointError(f"{self.name}: arrays written in place need RAM snapshots "
                                  "kept by reference (copy_snapshots=False) of a for loop on "
                                  "the revolve or uniform schedule, without a memory budget")
        self._last_mark = 0
        self.random_state = bool(random_state)
        self.generators = tuple(generators)
        self._random = None
        self._cond = None
        self._progress = None
        self.plan = plan  # rt.MemoryPlan (auto mode): the budget is this loop's share of it
        self.adjoint_probe = adjoint_probe
        self._step_bytes = None    # measured working memory of one step (budget only)
        self._tape_states = self.TAPE_STATES
        self._segments = None
        self._store = None
        self._compiled = None   # numba_sweep.CompiledSweep of a forward sweep run compiled
        self._layout_changes = False  # the steps change the state's layout: no buffers
        self._it = None
        self._prev = None
        self._last = None
        self.last_stats = {}

    # ------------------------------------------------------------------ helpers
    def _index(self, k):
        return k if self.steps is None else self.steps[k]

    working_bytes = staticmethod(sizing.working_bytes)

    def working_memory(self, args=()):
        """``working_bytes`` of this loop, with its measured step if it has one."""
        return self.working_bytes(self._state_bytes, args, self._step_bytes,
                                  self._buffered_states())

    def _buffered_states(self):
        """States the snapshot store may hold in flight (write queue, prefetch)."""
        return self._store_spec.buffered_states if self.disk_snapshots else 0

    def _measure_steps(self, state, args):
        """Measure one step's working memory on step 0 (``sizing.measure_step_bytes``)
        before anything is planned; the results are thrown away and counted as
        ``probe_steps``, the generators left as they were."""
        entry = self._random.capture() if self._random is not None else None
        with replayed_steps():  # (its prints ran, or will run, with the step itself)
            forward_bytes, adjoint_bytes, probes = sizing.measure_step_bytes(
                self._step, self._index(0), state, args, self.adjoint_probe)
        self._c["probe_steps"] += probes
        if entry is not None:
            self._random.restore(entry)  # the measured steps drew numbers the loop draws
        self._step_bytes = max(forward_bytes, adjoint_bytes)
        if self._state_bytes:
            # a taped segment's tape per step: at most one adjoint step's peak
            self._tape_states = max(self.TAPE_STATES, -(-adjoint_bytes // self._state_bytes))

    def _resolve_snapshots(self, state, n, args=(), probe=True):
        """RAM snapshot slots for this run (checks the budget before the sweep).

        A memory budget pays for the snapshots and for what the sweep holds beside
        them (``working_memory``).  The working memory of a step is measured on
        step 0 first (``_measure_steps``) -- after a check that the budget can hold
        one snapshot beside the rest, so that a budget far too small is refused
        before any step runs.  The rest buys snapshots.
        """
        sbytes = self._state_bytes = tree_nbytes(state)
        if self.memory_budget is not None or self.plan is not None:
            floor = self.working_bytes(sbytes, args, 0, self._buffered_states())
            budget = self.memory_budget if self.plan is None else self.plan.budget
            if sbytes + floor > budget:
                self.memory_budget = budget
                raise sizing.budget_refusal(self.name, budget, floor, sbytes)
            if probe and (n is None or n >= 1):
                self._measure_steps(state, args)
        if self.plan is not None:
            self.memory_budget = self.plan.share(self, args)
        s = self.snapshots
        if self.memory_budget is not None:
            overhead = self.working_memory(args)
            if sbytes + overhead > self.memory_budget:
                raise sizing.budget_refusal(self.name, self.memory_budget, overhead, sbytes,
                                            self._step_bytes)
            s = sizing.snapshots_in_budget(self.memory_budget, overhead, sbytes, n, s)
        return sizing.default_count(self.schedule, n, s, self.min_steps)

    def _begin(self, step, args, state, n, probe=True):
        self._step, self._args = step, args
        self._many = getattr(step, "advance", None)  # backend="numba": many steps per call
        # (a generator in the carried state, passed on unchanged, is kept too)
        self._random = RandomStates((*args, state), self.random_state, self.generators) or None
        self._cond = None  # forward_while's condition, replayed with the steps (_advance)
        self._random_at = SlotRandomStates(self._random)  # kept with each snapshot
        self._c = sweep_counts.fresh_counters()
        self._io = sweep_counts.IoClock()
        s_ram = self._resolve_snapshots(state, n, args, probe)
        total = s_ram + self.disk_snapshots
        self.used_snapshots = total
        disk = open_disk_level(self._store_spec, self.disk_dir, self.disk_snapshots) \
            if self.disk_snapshots else None
        self._store = TwoLevelStore(self.disk_snapshots, disk, self.copy_snapshots, self.writes)
        self._replay = ReplayCheck() if self.verify else None
        self._measured_tape = None
        self._peak_snaps = 0
        self._peak_bytes = 0
        self._peak_levels = dict.fromkeys(LEVELS, 0)
        return total

    def _exec(self, a, work, pos, random_states=None):
        """Execute one non-reversal action; returns (work, pos).  ``random_states``:
        the generator states that go with a stored ``work`` when they are not the
        current ones (the online schedule storing the state before the last step)."""
        kind, c = a.kind, self._c
        if kind is ADVANCE:
            n = a.n
            work = self._advance(work, pos, n)
            pos += n
            c["forward_steps"] += n
            if self._progress is not None:
                self._progress.ran(n)
        elif kind is STORE:
            store = self._store
            c["disk_bytes_written"] += store.store(a.slot, work)
            c["snapshots_stored"] += 1
            if a.level is DISK:
                c["disk_writes"] += 1
            if self._replay is not None:
                self._replay.stored(a.slot, a.pos, work)
            if self._random is not None:
                self._random_at.keep(a.slot, random_states)
            held = len(store)
            if held > self._peak_snaps:
                self._peak_snaps = held
            held = store.nbytes + self._random_at.nbytes
            if held > self._peak_bytes:
                self._peak_bytes = held
            self._held_per_level(store)
            if self._progress is not None:
                self._progress.snapshots(len(store))
        elif kind is RESTORE:
            work = self._store.restore(a.slot)
            pos = a.pos
            if self._random is not None:
                self._random_at.restore(a.slot)
            if a.level is DISK:
                self._c["disk_reads"] += 1
        elif kind is FREE:
            self._store.free(a.slot)
            if self._progress is not None:
                self._progress.snapshots(len(self._store))
            if self._random is not None:
                self._random_at.free(a.slot)
            if self._replay is not None:
                self._replay.freed(a.slot)
        else:
            raise AssertionError(f"unexpected action {a}")
        return work, pos

    def _advance(self, work, pos, n):
        """Run the n plain steps from position ``pos``.  A step with a compiled
        ``advance(first index, stride, count, state, *args)`` (backend="numba")
        runs them in one call when the indices are a range and no random state
        rides along."""
        step, args, many = self._step, self._args, self._many
        if many is not None and n > 1 and self._random is None:
            if self.steps is None:
                return many(pos, 1, n, work, *args)
            if isinstance(self.steps, range):
                return many(self.steps[pos], self.steps.step, n, work, *args)
        if self._random is not None and self._cond is not None:
            return self._advance_drawing_tests(work, pos, n)
        steps = self.steps
        # the loop's own index per step, without a method call per step
        for k in range(pos, pos + n) if steps is None else steps[pos:pos + n]:
            work = step(k, work, *args)
        return work

    def _advance_drawing_tests(self, work, pos, n):
        """``_advance`` for a while loop whose generators ride along: the forward
        sweep tested the condition between two steps, so the replay tests it too
        (and ignores the answer, known to be true), drawing what it drew (``while
        np.random.rand() < p``): each replayed step starts from the generator
        state it started from the first time."""
        step, cond, args, idx = self._step, self._cond, self._args, self._index
        for p in range(pos, pos + n):
            work = step(idx(p), work, *args)
            cond(idx(p + 1), work, *args)
        return work

    def _verify_at(self, q, work):
        """verify=True: before reversing step q, if a snapshot of position q+1 was stored
        earlier (and since freed), re-run step q from the (restored or recomputed)
        state q and require the exact same state (all bytes, shapes, dtypes)."""
        digest = self._replay.expected_after(q)
        if digest is None:
            return
        before = self._random.capture() if self._random is not None else None
        mark = self.writes.mark() if self.writes is not None else None
        got = state_digest(self._step(self._index(q), work, *self._args))
        if mark is not None:
            self.writes.undo_to(mark)  # the adjoint step starts from state q again
        if before is not None:
            self._random.restore(before)  # the adjoint step draws step q's numbers again
        self._c["verify_steps"] += 1
        if got != digest:
            raise not_reproduced(self.name, self._index(q), q + 1)

    def _reverse_one(self, adjoint_step, q, work, after, bstate, args):
        """Reverse step q from its state ``work`` (and, with next_state, the state
        ``after`` it)."""
        if self.verify:
            self._verify_at(q, work)
        index = q if self.steps is None else self.steps[q]
        c = self._c
        if c["recorded_steps"]:   # the tape is measured on the first step only (_recorded)
            bstate = adjoint_step(index, work, after, bstate, *args) if self.next_state \
                else adjoint_step(index, work, bstate, *args)
        else:
            states = (work, after) if self.next_state else (work,)
            bstate = self._recorded(1, adjoint_step, index, *states, bstate, *args)
        c["recorded_steps"] += 1
        if self._progress is not None:
            self._progress.advance()
        return bstate

    def _recorded(self, steps, fn, *call):
        """Call ``fn(*call)``, which re-records ``steps`` steps and reverses them; the
        first such call under a profiler measures the tape per step (tracemalloc peak,
        only when tracemalloc is not already tracing)."""
        if self._c["recorded_steps"] or not _profiler.active_profilers() \
                or tracemalloc.is_tracing():
            return fn(*call)
        result, peak = peak_of(fn, *call)
        self._measured_tape = peak // max(1, steps)
        return result

    def _held_per_level(self, store):
        """Keep the most bytes each level (device, host, disk) has held."""
        peaks = self._peak_levels
        if store.disk is None:
            if store.nbytes > peaks["device"]:
                peaks["device"] = store.nbytes
            return
        for level, nbytes in store.level_nbytes().items():
            if nbytes > peaks[level]:
                peaks[level] = nbytes

    def _flush(self, final=False):
        counts = dict(self._c)
        for k in self._c:
            self._c[k] = 0
        counts.update(peak_snapshots=self._peak_snaps, peak_snapshot_bytes=self._peak_bytes,
                      state_bytes=self._state_bytes)
        levels = getattr(self, "_peak_levels", None) or dict.fromkeys(LEVELS, 0)
        if self._compiled is not None or not any(levels.values()):
            levels = dict(levels, device=self._peak_bytes)   # compiled sweep: one level
        counts.update({_PEAK_KEYS[level]: nbytes for level, nbytes in levels.items()})
        counts.update(self._io.since_last(self._store.disk if self._store is not None else None))
        if self._step_bytes is not None:
            counts["working_bytes"] = self.working_memory(self._args)
        if final:
            counts["tape_bytes_per_step"] = self._measured_tape
            # exact: the states a tape of every step would keep, less the snapshots held
            n = self.n or 0
            counts["memory_saved_bytes"] = max(0, n * self._state_bytes - self._peak_bytes)
        else:
            counts.update(runs=1, steps=self.n or 0)
        sweep_counts.add_counts(self.last_stats, counts)
        counts.update(sweep_counts.summary(counts, self._peak_bytes, reverse=final))
        _profiler.record(self.name, **counts)
        if not final and self.plan is not None:
            self.plan.hold(self)  # the auto mode: what this loop holds until its reverse

    def _show_progress(self, sweep, total):
        """Close the current bar; open one for ``sweep`` if progress is on."""
        if self._progress is not None:
            self._progress.close()
        self._progress = None if sweep is None else progress.start(self.name, sweep, total)
        if self._progress is not None and self._store is not None:
            self._progress.snapshots(len(self._store))

    def close(self):
        """Free all snapshots and remove the temporary folder (idempotent)."""
        self._show_progress(None, None)
        self._it = None
        self._compiled = None
        self._prev = None
        self._last = None
        if self.plan is not None:
            self.plan.release(self)
        if self._store is not None:
            self._store.close()
            self._store = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    @property
    def disk_path(self):
        """The private snapshot folder while it exists, else None."""
        return self._store.path if self._store is not None else None

    # ------------------------------------------------------------------ API
    @property
    def last_index(self):
        """The loop variable of a for loop after it ran: the index of its last
        step (Python leaves it there; a loop that ran no step leaves it as it was,
        which the generated code handles by testing ``self.n`` first)."""
        if not self.n:
            raise CheckpointError(f"{self.name}: no step ran, so there is no last index")
        return self._index(self.n - 1)

    def forward(self, step, state, *args):
        """Run all n steps storing snapshots; return the final state (n == 0: `state`)."""
        if self.n is None:
            raise CheckpointError(f"{self.name}: forward() needs a known number of steps; "
                                  "use forward_while() for a while loop")
        if self.schedule == "online":
            return self._forward_online(lambda k, st, *a: True, step, state, args, limit=self.n)
        self.close()
        n = self.n
        self.last_stats = {}
        s = self._begin(step, args, state, n)
        self._show_progress("forward", n)
        k = self._segment_length(n, s)
        if k:
            return self._forward_segments(step, state, args, n, k)
        sweep = self._compiled_sweep(step, state, n, s)
        if sweep is not None:
            try:
                return self._forward_compiled(step, sweep, state, args, n)
            except numba_sweep.LayoutChanged:  # the steps change the state's shape or dtype
                self._layout_changes = True
                return self.forward(step, state, *args)
        if self.schedule == "uniform":
            if self.disk_snapshots:
                raise CheckpointError("disk_snapshots are only supported by the revolve and online schedules")
            actions = uniform(n, planning.uniform_every(self.name, n, s))
        elif self.disk_snapshots:
            actions = self._disk_plan(n, s - self.disk_snapshots, state, args).actions()
        else:
            actions = revolve(n, s)
        it = iter(actions)
        self._prev_is_input = False
        try:
            work, pos = state, 0
            for a in it:
                if a.kind is FIRST_TURN:
                    break
                work, pos = self._exec(a, work, pos)
            if n == 0:
                self._flush()
                self.close()
                return state
            prev = work
            self._random_prev = self._random.capture() if self._random is not None else None
            if self.writes is not None:  # the reverse sweep undoes the last step first
                self._last_mark = self.writes.mark()
            out = step(self._index(n - 1), prev, *args)
            self._c["forward_steps"] += 1
            if self._progress is not None:
                self._progress.advance()
            if prev is state and self.writes is None:
                prev = tree_copy(state)  # n == 1: never hold the caller's own arrays
            self._prev, self._it = prev, it
            self._last = out if self.next_state else None
            self._flush()
            self._show_progress(None, None)
            return out
        except BaseException:
            self.close()
            raise

    def _compiled_sweep(self, step, state, n, s):
        """A ``numba_sweep.CompiledSweep`` of the schedule when the whole sweep can
        run compiled (backend="numba": the step has a ``sweep``), else None.  It
        cannot with random state, a disk level, a memory budget, written rows,
        verification, a progress bar, indices that are not a range, or a state
        that is not a float array, a float or a flat tuple of them."""
        if getattr(step, "sweep", None) is None or n < 2 or self.schedule == "online" or \
                self._layout_changes or \
                self.disk_snapshots or self.memory_budget is not None or self.plan is not None \
                or self.writes is not None or self.verify or self._random is not None or \
                self._progress is not None or not (self.steps is None or
                                                   isinstance(self.steps, range)) or \
                not numba_sweep.fits(state):
            return None
        every = planning.uniform_every(self.name, n, s) if self.schedule == "uniform" else s
        first, stride = (0, 1) if self.steps is None else (self.steps.start, self.steps.step)
        return numba_sweep.CompiledSweep(numba_sweep.sweep_plan(self.schedule, n, every),
                                         first, stride)

    def _forward_compiled(self, step, sweep, state, args, n):
        """The forward sweep in one compiled call, snapshots in preallocated
        buffers; the last step runs here for the loop's result."""
        try:
            prev = sweep.forward(step, state, args)
            out = step(self._index(n - 1), prev, *args)
            self._c.update(sweep.plan.forward)
            self._peak_snaps = sweep.plan.peak
            self._peak_bytes = sweep.plan.peak * self._state_bytes
            self._prev, self._last, self._compiled = prev, out if self.next_state else None, sweep
            self._flush()
            return out
        except BaseException:
            self.close()
            raise

    def _reverse_compiled(self, adjoint_step, bstate, args):
        """The rest of the schedule in one compiled call (``adjoint_step.sweep``)."""
        sweep, self._compiled = self._compiled, None
        states = (self._prev, self._last) if self.next_state else (self._prev,)
        self._prev = self._last = None
        bstate = sweep.reverse(adjoint_step, states, bstate, self._args + args)
        self._c.update(sweep.plan.reverse, recorded_steps=self.n)
        self._peak_snaps = sweep.plan.peak
        self._peak_bytes = sweep.plan.peak * self._state_bytes
        self._flush(final=True)
        return settled(bstate)

    def _disk_plan(self, n, s_ram, state, args):
        """The RAM + disk schedule for this run, planned for the costs (measured if asked)."""
        costs = self.costs
        if costs == MEASURE and n >= 2:
            entry = self._random.capture() if self._random is not None else None
            try:  # slot 0 is on disk and free before the sweep
                with replayed_steps():
                    costs = planning.measured_costs(
                        lambda: self._step(self._index(0), state, *args), state, self._store, 0)
            except BaseException:
                self.close()  # nothing left behind
                raise
            finally:
                if entry is not None:
                    self._random.restore(entry)  # the timed runs drew numbers the loop draws
            self._c["measure_steps"] += planning.MEASURE_REPEAT
        self.last_plan = planning.disk_plan(n, s_ram, self.disk_snapshots, costs)
        return self.last_plan

    def _segment_length(self, n, s):
        """Steps per taped segment when a budget calls for segments, else None."""
        if (self.taped_segment is None or self.memory_budget is None or self.schedule != "revolve"
                or self.disk_snapshots):
            return None
        return planning.segment_length(n, s, self._tape_states, self.next_state)

    def _forward_segments(self, step, state, args, n, k):
        """The sweep for taped segments: a snapshot before every k-th step."""
        idx = self._index
        try:
            work = state
            for pos in range(n):
                if pos % k == 0:
                    self._exec(Action(STORE, 0, pos // k, pos), work, pos)
                work = step(idx(pos), work, *args)
                if self._progress is not None:
                    self._progress.advance()
            self._c["forward_steps"] += n
            self._segments = k
            self._flush()
            self._show_progress(None, None)
            return work
        except BaseException:
            self.close()
            raise

    def _reverse_segments(self, bstate, args):
        k, n = self._segments, self.n
        self._segments = None
        segment = self.taped_segment
        for slot, a, b in planning.segment_spans(n, k):
            work = self._store.restore(slot)
            if self._random is not None:
                self._random_at.restore(slot)
            indices = range(a, b) if self.steps is None else self.steps[a:b]
            bstate = self._recorded(b - a, segment, indices, work, bstate, *args)
            self._store.free(slot)
            self._c["recorded_steps"] += b - a
            if self._progress is not None:
                self._progress.advance(b - a)
        self._flush(final=True)
        return bstate

    def forward_while(self, cond, step, state, *args):
        """Run steps while ``cond(index, state, *args)`` holds (checked before each step),
        with the online schedule; return the final state.  n is known afterwards (self.n).
        If ``steps`` was given, at most len(steps) steps run (a for loop with break)."""
        limit = len(self.steps) if self.steps is not None else self.n
        return self._forward_online(cond, step, state, args, limit)

    def _forward_online(self, cond, step, state, args, limit):
        self.close()
        self.last_stats = {}
        disk = self.disk_snapshots  # the online schedule's slots below this are on disk
        idx = self._index
        # a budget measures step 0 first: only if the loop runs it; asking the
        # condition draws what it draws (while np.random.random() < p) once more than
        # the loop, so the generators are put back as they were
        runs = limit is None or limit > 0
        if runs and (self.memory_budget is not None or self.plan is not None):
            random = RandomStates(args, self.random_state, self.generators) or None
            entry = random.capture() if random is not None else None
            runs = cond(idx(0), state, *args)
            if entry is not None:
                random.restore(entry)
        s = self._begin(step, args, state, limit, probe=runs)
        self._cond = cond
        self._show_progress("forward", limit)
        sched = OnlineSchedule(s)
        try:
            work, prev, p = state, None, 0
            while (limit is None or p < limit) and cond(idx(p), work, *args):
                for a in label_levels(sched.before_step(p), disk):  # a STORE may take the held state p - 1
                    held = a.pos < p  # the state before step p - 1, and its generators
                    self._exec(a, prev if held else work, p,
                               self._random_prev if held and self._random is not None else None)
                prev = work
                if self._random is not None:
                    self._random_prev = self._random.capture()
                work = step(idx(p), work, *args)
                p += 1
                self._c["forward_steps"] += 1
                if self._progress is not None:
                    self._progress.advance()
            self.n = p
            it = iter(label_levels(sched.reverse(p), disk))
            if p == 0:
                for a in it:
                    self._exec(a, work, 0)
                self._flush()
                self.close()
                return state
            first = next(it)
            assert first.kind is FIRST_TURN
            if prev is state:
                prev = tree_copy(state)
            self._prev, self._it = prev, it
            self._last = work if self.next_state else None
            self._flush()
            self._show_progress(None, None)
            return work
        except BaseException:
            self.close()
            raise

    def reverse(self, adjoint_step, bstate, *args):
        """Reverse steps n-1 .. 0 (restores / advances as scheduled); return bstate.

        Snapshots and the temporary folder are released at the end and on any exception.
        """
        entry = self._random.capture() if self._random is not None else None
        self._show_progress("reverse", self.n)
        try:
            with replayed_steps():  # a print in a step ran when the step first ran
                return self._reverse(adjoint_step, bstate, args)
        finally:
            if entry is not None:
                self._random.restore(entry)  # as the forward sweep left them

    def _reverse(self, adjoint_step, bstate, args):
        if self._segments:
            try:
                return settled(self._reverse_segments(bstate, args))
            finally:
                self.close()
        if self._compiled is not None and getattr(adjoint_step, "sweep", None) is not None:
            try:
                return self._reverse_compiled(adjoint_step, bstate, args)
            finally:
                self.close()
        if self._compiled is not None:  # an adjoint step without a compiled sweep
            self._it = self._compiled.to_store(self._store, self._prev)
            self._compiled = None
        if self._it is None:
            if self.n == 0:
                return bstate
            raise CheckpointError(f"{self.name}: reverse() needs a forward() (or forward_while()) "
                                  "first, and can run only once per forward()")
        it, work, after = prefetching(self._it, self._store), self._prev, self._last
        self._prev = self._last = None
        if self.writes is not None:
            self.writes.undo_to(self._last_mark)  # work: the state before the last step
        keep = self.next_state
        try:
            if self._random is not None:
                self._random.restore(self._random_prev)
            bstate = self._reverse_one(adjoint_step, self.n - 1, work, after, bstate, args)
            after = work if keep else None
            work, pos = None, None
            # the actions of most steps, without a call through _exec: a RAM restore
            # with no generator state beside it, and plain steps with no progress bar
            restore = self._store.restore if not self._store.disk_slots and \
                self._random is None else None
            advance = self._advance if self._progress is None else None
            c = self._c
            for a in it:
                kind = a.kind
                if kind is REVERSE:
                    bstate = self._reverse_one(adjoint_step, a.pos, work, after, bstate, args)
                    after = work if keep else None
                    work = None
                elif kind is ADVANCE and advance is not None:
                    work = advance(work, pos, a.n)
                    pos += a.n
                    c["forward_steps"] += a.n
                elif kind is RESTORE and restore is not None:
                    work, pos = restore(a.slot), a.pos
                else:
                    work, pos = self._exec(a, work, pos)
            self._flush(final=True)
            return settled(bstate)  # the steps may gather products (rt.ProductSum)
        finally:
            self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
