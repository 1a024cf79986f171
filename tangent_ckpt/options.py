"""Checkpointing options, below every layer that reads them.

:class:`CheckpointOptions` is made by the public API from the keywords of
``grad``/``grad_with_checkpointing`` and read by the compiler (which loops to
checkpoint, with which schedule) and by ``tc.checkpointed_loop``'s lowering.
"""

import numpy as np

from tangent_ckpt.errors import CheckpointError
from tangent_ckpt.runtime.jit import numba_backend
from tangent_ckpt.runtime.scheduling import schedules
from tangent_ckpt.runtime.scheduling.costs import MEASURE, as_costs
from tangent_ckpt.runtime.memory import parse_memory
from tangent_ckpt.runtime.stores.store_io import SnapshotStore

#: the schedules a checkpointed loop can use (runtime/scheduling/schedules.py)
SCHEDULES = schedules.NAMES
#: what runs the generated steps: NumPy, or Numba (runtime/jit/numba_backend.py)
BACKENDS = ("numpy", "numba")


class CheckpointOptions:
    """Normalized checkpointing options (hashable, part of the compile cache key)."""

    def __init__(self, checkpoint=None, snapshots=None, memory_budget=None,
                 schedule="revolve", min_steps=0, disk_snapshots=0, verify=False,
                 nested=False, costs=None, snapshot_store=None, backend="numpy"):
        # None: not given (taped); then a checkpoint-only option is an error, since
        # it would act on nothing (checkpoint_only); False given explicitly keeps the
        # options of a toggled call (checkpoint=flag, snapshots=3) quiet
        self.checkpoint_given = checkpoint is not None
        checkpoint = False if checkpoint is None else checkpoint
        if checkpoint not in (True, False, "auto"):
            raise CheckpointError(f"checkpoint must be True, False or 'auto', not {checkpoint!r}")
        if snapshots is not None:
            if isinstance(snapshots, bool) or not isinstance(snapshots, (int, np.integer)):
                raise CheckpointError(f"snapshots must be a positive integer, not {snapshots!r}")
            if snapshots < 1:
                raise CheckpointError(f"snapshots must be at least 1, got {snapshots}")
        if memory_budget is not None and snapshots is not None:
            raise CheckpointError("give either snapshots= or memory_budget=, not both")
        if memory_budget is not None:
            memory_budget = parse_memory(memory_budget)
        if schedule not in SCHEDULES:
            raise CheckpointError(f"schedule must be one of {', '.join(SCHEDULES)}, "
                                  f"not {schedule!r}")
        if backend not in BACKENDS:
            raise CheckpointError(f"backend must be one of {', '.join(BACKENDS)}, not {backend!r}")
        if backend == "numba" and not numba_backend.available():
            raise CheckpointError("backend='numba' needs Numba: pip install numba (or, in the "
                                  "checkout, pip install -e '.[numba]')")
        if min_steps is None or min_steps < 0:
            raise CheckpointError(f"min_steps must be >= 0, got {min_steps!r}")
        if disk_snapshots < 0:
            raise CheckpointError(f"disk_snapshots must be >= 0, got {disk_snapshots}")
        self.checkpoint = checkpoint
        self.snapshots = None if snapshots is None else int(snapshots)
        self.memory_budget = memory_budget
        self.schedule = schedule
        self.min_steps = int(min_steps)
        self.disk_snapshots = int(disk_snapshots)
        self.verify = bool(verify)
        self.nested = bool(nested)
        costs = as_costs(costs)
        self.costs = tuple(costs) if costs is not None and costs != MEASURE else costs
        # where disk snapshots go: None (a private temporary folder), a folder, a URL
        # (zarr, the [store] extra) or an rt.SnapshotStore
        self.snapshot_store = None if snapshot_store is None else SnapshotStore.of(snapshot_store)
        self.backend = backend

    def checkpoint_only(self):
        """The options given that only act on checkpointed loops (none by default):
        with ``checkpoint`` not given they act on nothing, an error
        (compiler/package/checkpointed_loops.py, once it knows no loop is marked)."""
        given = {"snapshots": self.snapshots is not None,
                 "memory_budget": self.memory_budget is not None,
                 "schedule": self.schedule != "revolve", "min_steps": self.min_steps != 0,
                 "disk_snapshots": self.disk_snapshots != 0, "verify": self.verify,
                 "nested": self.nested, "costs": self.costs is not None,
                 "snapshot_store": self.snapshot_store is not None}
        return [name for name, is_given in given.items() if is_given]

    def key(self):
        return (self.checkpoint, self.checkpoint_given, self.snapshots, self.memory_budget, self.schedule,
                self.min_steps, self.disk_snapshots, self.verify, self.nested, self.costs,
                self.snapshot_store, self.backend)
