"""Disk-level snapshot I/O off the sweep's critical path, and where snapshots go.

``SnapshotStore`` says where the disk-level snapshots of a checkpointed loop go
(``snapshot_store=`` of ``grad`` / ``CheckpointedLoop``):

* ``None`` -- ``.npy`` files in a private folder of the system temporary
  directory (the default);
* a local folder (``"/scratch/me"``, a ``pathlib.Path``) -- ``.npy`` files in a
  private folder made inside it;
* a URL fsspec opens (``"file:///scratch/me"``, ``"s3://bucket/run"``,
  ``"memory://x"``) -- zarr arrays under a private prefix (needs the optional
  ``[store]`` extra: zarr and fsspec);
* ``"host"`` -- host memory (``host_store.HostStore``): the level below the
  device for a loop on GPU arrays (CuPy), whose RAM-level snapshots stay in
  device memory;
* ``SnapshotStore(where, codec="zstd", level=3, write_queue=2, prefetch=True)``
  to choose lossless compression (zarr codecs ``"zstd"``, ``"blosc"``,
  ``"gzip"``; URLs only) and the buffers; ``host_slots=k`` keeps ``k`` of the
  level's slots in host memory and the rest in ``where`` (device -> host ->
  disk, ``host_store.SpillStore``).

``BufferedStore`` runs every operation of one disk-level store on a single
background thread, in order: ``store`` returns once the write is queued (at
most ``write_queue`` writes in flight: each holds a reference to its state),
``prefetch(slot)`` starts reading a snapshot the reverse sweep will restore
next, and ``restore`` takes the prefetched copy (or reads now).  It counts the
seconds the thread spent on I/O (``io_seconds``) and the seconds the sweep
waited for it (``waited_seconds``); the rest was overlapped with computation.
A failure on the thread is raised in the sweep at the next call, as
``SnapshotStoreError``; ``close()`` cancels what is queued, waits for the
running operation and removes the private folder or prefix.
"""

import os
import time
from concurrent.futures import ThreadPoolExecutor

from tangent_ckpt.errors import CheckpointError
from tangent_ckpt.runtime.stores.disk_store import DiskStore
from tangent_ckpt.runtime.stores.host_store import HostStore, SpillStore
from tangent_ckpt.runtime.scheduling.schedules import FREE, RESTORE, STORE
from tangent_ckpt.runtime.stores.snapshots import tree_copy, tree_nbytes
from tangent_ckpt.runtime.stores.zarr_store import ZarrStore, is_url

__all__ = ["SnapshotStore", "BufferedStore", "open_disk_level", "prefetching"]


class SnapshotStore:
    """Where and how disk-level snapshots are written (see the module docstring)."""

    def __init__(self, where=None, codec=None, level=None, write_queue=2, prefetch=True,
                 host_slots=0):
        if where is not None and not isinstance(where, (str, os.PathLike)):
            raise CheckpointError(f"snapshot_store must be a folder, a URL, 'host' or None, "
                                  f"not {where!r}")
        self.where = None if where is None else os.fspath(where)
        if isinstance(host_slots, bool) or not isinstance(host_slots, int) or host_slots < 0:
            raise CheckpointError(f"host_slots must be an integer >= 0, got {host_slots!r}")
        if host_slots and self.where == HOST:
            raise CheckpointError("host_slots= splits a level between host memory and a "
                                  "folder or URL; with 'host' every slot is in host memory")
        self.host_slots = host_slots
        if codec is not None and not is_url(self.where):
            raise CheckpointError("snapshot_store: compression needs a zarr store; give a URL "
                                  f"(e.g. 'file://{os.path.abspath(self.where or '.')}')")
        self.codec = codec
        self.level = level
        if isinstance(write_queue, bool) or not isinstance(write_queue, int) or write_queue < 1:
            raise CheckpointError(f"write_queue must be an integer >= 1, got {write_queue!r}")
        self.write_queue = write_queue
        self.prefetch = bool(prefetch)

    @classmethod
    def of(cls, value):
        """A SnapshotStore from ``snapshot_store=`` (a SnapshotStore, a path, a URL, None)."""
        return value if isinstance(value, cls) else cls(value)

    @property
    def buffered_states(self):
        """States a sweep may hold in flight: queued writes and one prefetched read."""
        return self.write_queue + (1 if self.prefetch else 0)

    def open(self, disk_dir=None, slots=None):
        """The backend store (not yet buffered); checks the location now.
        ``slots``: how many slots the level has (where ``host_slots`` split it)."""
        if self.where == HOST:
            return HostStore()
        if is_url(self.where):
            store = ZarrStore(self.where, codec=self.codec, level=self.level)
        else:
            store = DiskStore(self.where if self.where is not None else disk_dir)
        if self.host_slots and slots is not None:
            return SpillStore(HostStore(), store, slots, self.host_slots)
        return store

    def key(self):
        return (self.where, self.codec, self.level, self.write_queue, self.prefetch,
                self.host_slots)

    def __eq__(self, other):
        return isinstance(other, SnapshotStore) and self.key() == other.key()

    def __hash__(self):
        return hash(self.key())

    def __repr__(self):
        # generated code prints this: it must read back as the same store
        parts = [repr(self.where)]
        if self.codec is not None:
            parts.append(f"codec={self.codec!r}")
        if self.level is not None:
            parts.append(f"level={self.level!r}")
        if self.write_queue != 2:
            parts.append(f"write_queue={self.write_queue!r}")
        if not self.prefetch:
            parts.append("prefetch=False")
        if self.host_slots:
            parts.append(f"host_slots={self.host_slots!r}")
        return f"rt.SnapshotStore({', '.join(parts)})"


#: ``snapshot_store="host"``: the level below the device is host memory
HOST = "host"


def open_disk_level(spec, disk_dir=None, slots=None):
    """A BufferedStore over the backend `spec` (a SnapshotStore) names, for a
    level of ``slots`` slots."""
    return BufferedStore(spec.open(disk_dir, slots), spec.write_queue, spec.prefetch)


def prefetching(actions, store):
    """An iterator over `actions` that starts reading each disk snapshot of `store`
    (a ``snapshots.TwoLevelStore``) the sweep will restore once the disk restore
    before it has run (and the slot's last write is queued), so the read overlaps
    the steps reversed in between.  Without a disk level: `actions` themselves."""
    if not store.disk_slots:
        return iter(actions)
    return _prefetched(list(actions), store)


def _prefetched(actions, store):
    start = {}  # action index -> disk slots to prefetch once it has run
    previous, touched = -1, {}
    for j, a in enumerate(actions):
        if a.kind is RESTORE and store.is_disk(a.slot):
            start.setdefault(max(previous, touched.get(a.slot, -1)), []).append(a.slot)
            previous = j
        elif a.kind in (STORE, FREE) and store.is_disk(a.slot):
            touched[a.slot] = j
    for slot in start.get(-1, ()):
        store.prefetch(slot)
    for j, a in enumerate(actions):
        yield a
        for slot in start.get(j, ()):
            store.prefetch(slot)


class BufferedStore:
    """A backend store driven by one background thread (see the module docstring)."""

    def __init__(self, backend, write_queue=2, prefetch=True):
        self.backend = backend
        self.write_queue = int(write_queue)
        self.use_prefetch = bool(prefetch)
        self._pool = None
        self._writes = []        # futures of queued writes and frees, oldest first
        self._pending = {}       # slot -> state whose write is queued
        self._prefetched = {}    # slot -> future of its read
        self._sizes = {}
        self.io_seconds = 0.0
        self.waited_seconds = 0.0
        self.bytes_written = 0

    # ------------------------------------------------------------------ helpers
    def _submit(self, fn, *args):
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tangent_ckpt_io")
        return self._pool.submit(self._timed, fn, *args)

    def _timed(self, fn, *args):
        t0 = time.perf_counter()
        try:
            return fn(*args)
        finally:
            self.io_seconds += time.perf_counter() - t0  # only the I/O thread adds here

    def _wait(self, future):
        t0 = time.perf_counter()
        try:
            return future.result()
        finally:
            self.waited_seconds += time.perf_counter() - t0

    def _settle(self, block_until=None):
        """Raise the first failed write; wait until at most `block_until` are queued."""
        keep = []
        for f in self._writes:
            if f.done():
                f.result()  # raises the thread's SnapshotStoreError here
            else:
                keep.append(f)
        self._writes = keep
        while block_until is not None and len(self._writes) > block_until:
            self._wait(self._writes.pop(0))

    def _write(self, slot, tree):
        written = self.backend.store(slot, tree)
        self.bytes_written += written
        self._pending.pop(slot, None)

    # ------------------------------------------------------------------ API
    @property
    def path(self):
        return self.backend.path

    def store(self, slot, tree):
        """Queue a write (waits while `write_queue` writes are in flight); returns
        the snapshot's bytes (written in the background)."""
        self._settle(block_until=self.write_queue - 1)
        self.backend.location()  # made here: a missing store is an error in the sweep's thread
        self._drop_prefetch(slot)
        self._pending[slot] = tree
        self._sizes[slot] = size = tree_nbytes(tree)
        self._writes.append(self._submit(self._write, slot, tree))
        return size

    def prefetch(self, slot):
        """Start reading `slot` (after every queued write: the thread runs in order)."""
        if self.use_prefetch and slot not in self._prefetched and slot in self._sizes:
            self._prefetched[slot] = self._submit(self.backend.restore, slot)

    def restore(self, slot):
        self._settle()
        future = self._prefetched.pop(slot, None)
        queued = self._pending.get(slot)
        if queued is not None and (future is None or future.cancel()):
            return tree_copy(queued)  # its write is still queued: no need to read it back
        if future is None:
            future = self._submit(self.backend.restore, slot)
        return self._wait(future)

    def _drop_prefetch(self, slot):
        future = self._prefetched.pop(slot, None)
        if future is not None and not future.cancel():
            self._wait(future)

    def free(self, slot):
        self._drop_prefetch(slot)
        if self._sizes.pop(slot, None) is not None:
            self._writes.append(self._submit(self.backend.free, slot))

    def flush(self):
        """Wait for every queued write and free; raise the first failure."""
        self._settle(block_until=0)

    def __contains__(self, slot):
        return slot in self._sizes

    def __len__(self):
        return len(self._sizes)

    @property
    def nbytes(self):
        return sum(self._sizes.values())

    def level_nbytes(self):
        """{level: bytes} of the snapshots held ("host", "disk")."""
        levels = {}
        for slot, size in self._sizes.items():
            level = self.backend.level_of(slot)
            levels[level] = levels.get(level, 0) + size
        return levels

    def close(self):
        """Cancel what is queued, wait for the running operation, remove everything."""
        pool, self._pool = self._pool, None
        if pool is not None:
            t0 = time.perf_counter()
            pool.shutdown(wait=True, cancel_futures=True)
            self.waited_seconds += time.perf_counter() - t0
        self._writes.clear()
        self._pending.clear()
        self._prefetched.clear()
        self._sizes.clear()
        self.backend.close()

