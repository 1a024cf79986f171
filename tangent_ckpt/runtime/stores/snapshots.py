"""Snapshot stores: copies of loop states (pytrees) in RAM, or in RAM and on a disk-level store.

A pytree is a tuple (including namedtuples), list or dict of pytrees, or a leaf.
Array leaves (``np.ndarray``, and the arrays of another library such as CuPy's,
copied where they live: a CuPy snapshot stays in device memory) are copied on
store and copied again on restore, so neither the caller's arrays nor a
restored state ever alias a stored snapshot.
Other leaves (NumPy scalars, Python numbers, None, strings) are immutable and kept
as they are.
"""

import numpy as np

from tangent_ckpt.errors import CheckpointError
from tangent_ckpt.runtime.backends import is_array, to_host
from tangent_ckpt.runtime.primitive_adjoints.numpy_adjoints import overwritten

__all__ = [
    "tree_flatten", "tree_unflatten", "tree_copy", "tree_nbytes", "tree_equal",
    "RamStore", "TwoLevelStore", "WriteJournal",
]

_PY_SCALAR_BYTES = 8


def tree_flatten(tree):
    """(leaves, treedef).  treedef is a nested description rebuilt by tree_unflatten."""
    leaves = []
    return leaves, _describe(tree, leaves)


def _describe(x, leaves):
    # module-level recursion: a recursive closure would form a reference cycle that
    # keeps every leaf (the loop state's arrays) alive until the garbage collector runs
    if isinstance(x, tuple):
        return ("tuple", type(x), tuple(_describe(c, leaves) for c in x))
    if isinstance(x, list):
        return ("list", type(x), tuple(_describe(c, leaves) for c in x))
    if isinstance(x, dict):
        keys = tuple(x.keys())
        return ("dict", type(x), keys, tuple(_describe(x[k], leaves) for k in keys))
    leaves.append(x)
    return None


def tree_unflatten(treedef, leaves):
    return _build(treedef, iter(leaves))


def _build(d, it):
    if d is None:
        return next(it)
    kind, typ = d[0], d[1]
    if kind == "tuple":
        kids = [_build(c, it) for c in d[2]]
        if typ is tuple:
            return tuple(kids)
        if hasattr(typ, "_fields"):
            return typ(*kids)
        return typ(kids)
    if kind == "list":
        kids = [_build(c, it) for c in d[2]]
        return kids if typ is list else typ(kids)
    keys, kids = d[2], d[3]
    out = {k: _build(c, it) for k, c in zip(keys, kids)}
    return out if typ is dict else typ(out)


def _copy_leaf(x):
    if is_array(x):
        return x.copy()
    return x


def tree_copy(tree):
    """A deep copy of every array leaf; immutable leaves shared."""
    leaves, treedef = tree_flatten(tree)
    return tree_unflatten(treedef, [_copy_leaf(x) for x in leaves])


def _leaf_nbytes(x):
    if is_array(x):   # a CuPy array's bytes are device memory: counted the same
        return int(x.nbytes)
    if isinstance(x, np.generic):
        return int(x.itemsize)
    if x is None:
        return 0
    if isinstance(x, (bool, int, float)):
        return _PY_SCALAR_BYTES
    if isinstance(x, complex):
        return 2 * _PY_SCALAR_BYTES
    return 0


def tree_nbytes(tree):
    """Bytes of data in a pytree: arrays' nbytes, NumPy scalars' itemsize, 8 per Python
    number (16 per complex), 0 for None and other objects."""
    if type(tree) is np.ndarray:
        return int(tree.nbytes)   # the common loop state, measured at every snapshot
    if type(tree) is tuple:       # a few arrays and numbers (T, cost): no flattening
        total = 0
        for x in tree:
            if type(x) is np.ndarray:
                total += x.nbytes
            elif type(x) is float:
                total += _PY_SCALAR_BYTES
            else:
                break
        else:
            return int(total)
    leaves, _ = tree_flatten(tree)
    return sum(_leaf_nbytes(x) for x in leaves)


def _leaf_equal(a, b):
    if is_array(a) or is_array(b):
        a, b = np.asarray(to_host(a)), np.asarray(to_host(b))
        return a.shape == b.shape and a.dtype == b.dtype and bool(
            np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    return type(a) is type(b) and a == b


def tree_equal(a, b):
    """Exact equality of two pytrees (same structure, shapes, dtypes and values; NaN == NaN)."""
    la, da = tree_flatten(a)
    lb, db = tree_flatten(b)
    return da == db and len(la) == len(lb) and all(_leaf_equal(x, y) for x, y in zip(la, lb))


class WriteJournal:
    """What the steps of a checkpointed loop overwrite in the arrays they write
    in place (``S[t] = ...`` in a trajectory), so that snapshots need not copy them.

    The arrays are given up front (``arrays``).  A step calls ``keep(S, index)``
    before each in-place write; a snapshot of a state holding ``S`` keeps ``S``
    by reference with the journal's length then (``mark``), and restoring it puts
    back, latest first, every element written since (``undo_to``).  Schedules
    restore their most recent snapshot first, so a mark is never older than
    entries already undone.  The journal holds each overwritten region once (a
    single zero for a region of +0.0): for a trajectory written one row per step,
    the rows written since the first snapshot, nothing for rows of ``np.zeros``.
    """

    def __init__(self, arrays=()):
        self.arrays = list(arrays)
        self._entries = []
        self.nbytes = 0

    def holds(self, leaf):
        """Is ``leaf`` one of the arrays written in place?"""
        return any(leaf is a for a in self.arrays)

    def keep(self, array, index):
        kept = overwritten(array[index])
        self._entries.append((array, index, kept))
        self.nbytes += _leaf_nbytes(kept)

    def mark(self):
        return len(self._entries)

    def undo_to(self, mark):
        if mark > len(self._entries):
            raise CheckpointError("a snapshot of arrays written in place was restored after "
                                  "a later one had been undone (the schedule is not last in, "
                                  "first out)")
        entries = self._entries
        while len(entries) > mark:
            array, index, kept = entries.pop()
            array[index] = kept
            self.nbytes -= _leaf_nbytes(kept)

    def clear(self):
        self._entries.clear()
        self.nbytes = 0


class RamStore:
    """Snapshots in memory, keyed by slot.

    copy: store and restore copies of the arrays (the default).  With
    ``copy=False`` a snapshot is the state itself, which is safe, and saves two
    copies per snapshot, only when no step ever writes into its input state (the
    steps the compiler generates never do: they copy an array before assigning
    into it).
    """

    def __init__(self, copy=True, journal=None):
        self.copy = copy
        self.journal = journal  # WriteJournal: its arrays are kept by reference, not counted
        self._snaps = {}
        self._bytes = {}
        self._marks = {}
        self._total = 0  # sum of _bytes, kept as we go: read after every store

    def store(self, slot, tree):
        if slot in self._snaps:
            self.free(slot)
        self._snaps[slot] = tree_copy(tree) if self.copy else tree
        if self.journal is None:
            size = tree_nbytes(tree)
        else:
            self._marks[slot] = self.journal.mark()
            leaves, _ = tree_flatten(tree)
            size = sum(_leaf_nbytes(x) for x in leaves if not self.journal.holds(x))
        self._bytes[slot] = size
        self._total += size
        return 0  # disk bytes written

    def restore(self, slot):
        tree = self._snaps[slot]
        if self.journal is not None:
            self.journal.undo_to(self._marks[slot])
        return tree_copy(tree) if self.copy else tree

    def free(self, slot):
        self._snaps.pop(slot, None)
        self._marks.pop(slot, None)
        self._total -= self._bytes.pop(slot, 0)

    def __contains__(self, slot):
        return slot in self._snaps

    def __len__(self):
        return len(self._snaps)

    @property
    def nbytes(self):
        """Bytes the snapshots hold: their copies, and what the journal kept."""
        return self._total + (self.journal.nbytes if self.journal is not None else 0)

    def close(self):
        self._snaps.clear()
        self._bytes.clear()
        self._marks.clear()
        self._total = 0
        if self.journal is not None:
            self.journal.clear()


class TwoLevelStore:
    """Slots ``< disk_slots`` on a disk-level store, the others in RAM.

    Schedules hand out low slots to the outermost, longest-lived snapshots (slot 0 is
    position 0), which are restored least often, so those are the ones put on disk.
    `disk` is the disk-level store (a ``store_io.BufferedStore`` around a
    ``DiskStore`` or ``ZarrStore``), made by the caller; None when disk_slots is 0.
    """

    def __init__(self, disk_slots=0, disk=None, copy=True, journal=None):
        self.disk_slots = int(disk_slots) if disk is not None else 0
        self.ram = RamStore(copy, journal)
        self.disk = disk
        if not self.disk_slots:   # RAM only: the RAM store's methods, without a hop per call
            self.store, self.restore, self.free = self.ram.store, self.ram.restore, self.ram.free

    def is_disk(self, slot):
        return slot < self.disk_slots

    def _pick(self, slot):
        return self.disk if slot < self.disk_slots else self.ram

    def store(self, slot, tree):
        return self._pick(slot).store(slot, tree)

    def restore(self, slot):
        return self._pick(slot).restore(slot)

    def prefetch(self, slot):
        """Start reading a disk snapshot in the background (RAM: nothing to do)."""
        if slot < self.disk_slots:
            self.disk.prefetch(slot)

    def free(self, slot):
        self._pick(slot).free(slot)

    def __contains__(self, slot):
        return slot in self._pick(slot)

    def __len__(self):
        return len(self.ram) + (len(self.disk) if self.disk is not None else 0)

    @property
    def nbytes(self):
        return self.ram.nbytes + (self.disk.nbytes if self.disk is not None else 0)

    @property
    def ram_nbytes(self):
        return self.ram.nbytes

    def level_nbytes(self):
        """Bytes held per level: ``{"device": ..., "host": ..., "disk": ...}``.  The
        first level is where the arrays live (device memory for CuPy arrays, RAM
        for NumPy's); "host" is host-memory copies of device arrays (the spill
        level, runtime/stores/host_store.py), "disk" snapshot files or a zarr store."""
        levels = {"device": self.ram.nbytes, "host": 0, "disk": 0}
        if self.disk is not None:
            for level, nbytes in self.disk.level_nbytes().items():
                levels[level] += nbytes
        return levels

    @property
    def path(self):
        return self.disk.path if self.disk is not None else None

    def close(self):
        self.ram.close()
        if self.disk is not None:
            self.disk.close()
