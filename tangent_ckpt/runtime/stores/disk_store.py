"""Snapshots that leave RAM: one file (or zarr array) per array leaf, checksummed.

``LeafStore`` holds what every such store shares: it splits a snapshot (a
pytree) into its array leaves, writes each under a name of its own, keeps the
tree structure, the other leaves and a checksum (BLAKE2b of dtype, shape and
bytes) of every array in memory, checks the checksum when the array is read
back, and turns every I/O failure into a :class:`SnapshotStoreError` that says
what happened and what to do -- a full disk, a store that disappeared, a
snapshot deleted or corrupted are never a wrong gradient.

``DiskStore`` writes ``.npy`` files into a private folder (``tempfile.mkdtemp``
inside `disk_dir`, default the system temporary directory), removed by
``close()``.  ``zarr_store.ZarrStore`` writes zarr arrays to any fsspec URL.
"""

import errno
import hashlib
import os
import shutil
import tempfile

import numpy as np

from tangent_ckpt.errors import CheckpointError, SnapshotStoreError
from tangent_ckpt.runtime.backends import from_host, is_array, is_foreign_array, to_host
from tangent_ckpt.runtime.stores.snapshots import tree_flatten, tree_nbytes, tree_unflatten

__all__ = ["LeafStore", "DiskStore", "checksum"]

_ON_STORE = object()  # placeholder for an array leaf kept by the store


def checksum(x):
    """BLAKE2b digest of an array's dtype, shape and bytes."""
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{x.dtype.str}{x.shape}".encode())
    h.update(memoryview(np.ascontiguousarray(x)).cast("B"))
    return h.digest()


def _is_full(exc):
    if getattr(exc, "errno", None) in (errno.ENOSPC, errno.EDQUOT):
        return True
    # numpy's tofile reports a short write as "N requested and M written"
    return "requested and" in str(exc) and "written" in str(exc)


class LeafStore:
    """Base of the stores that keep array leaves outside RAM.

    Subclasses provide ``_open()`` (create the private location; return its
    name), ``_write(name, array) -> bytes written``, ``_read(name) -> array``,
    ``_delete(name)`` and ``_remove()`` (delete the private location).

    An array of another library (a CuPy array on a GPU) is written as its host
    copy (``backends.to_host``) and read back into its library
    (``backends.from_host``, like an empty array of that library kept with the
    checksum): the snapshot leaves the device, the restored state is back on it.
    """

    kind = "store"
    level = "disk"       # which level of the hierarchy the store is (TwoLevelStore.level_nbytes)
    fresh_reads = True   # _read gives a new array (a file read); else restore copies it

    def __init__(self):
        self.path = None
        self._meta = {}  # slot -> (treedef, kept leaves, [(name, checksum)])
        self._bytes = {}
        self.bytes_written = 0

    # ------------------------------------------------------------------ errors
    def _failed(self, action, name, exc):
        where = f"{self.kind} snapshot {name!r} in {self.path!r}"
        if isinstance(exc, SnapshotStoreError):
            return exc
        if action == "write" and _is_full(exc):
            return SnapshotStoreError(
                f"cannot write {where}: no space left ({exc}); free space there or point "
                "snapshot_store= at a larger disk (or use fewer disk_snapshots)")
        if action == "read" and isinstance(exc, (FileNotFoundError, KeyError)):
            return SnapshotStoreError(
                f"{where} is missing (deleted while the gradient ran?): {exc!r}; the gradient "
                "cannot be computed without it")
        return SnapshotStoreError(f"cannot {action} {where}: {exc!r}")

    # ------------------------------------------------------------------ API
    def level_of(self, slot):
        """The level of the hierarchy ``slot`` is kept on ("host", "disk")."""
        return self.level

    def location(self):
        """The private folder / prefix, created on first use."""
        if self.path is None:
            self.path = self._open()
        return self.path

    def store(self, slot, tree):
        """Write a snapshot; returns the bytes written."""
        self.location()
        self.free(slot)
        leaves, treedef = tree_flatten(tree)
        kept, names, written = [], [], 0
        for i, x in enumerate(leaves):
            if is_array(x):
                if x.dtype.hasobject:
                    raise CheckpointError("cannot write an object array to a disk snapshot")
                name = f"slot{slot}_leaf{i}"
                host = to_host(x)   # x itself for a NumPy array
                # an empty array of x's library: what the leaf is restored into
                template = np.empty_like(x, shape=(0,)) if is_foreign_array(x) else None
                # listed first: free() removes a partial write
                names.append((name, checksum(host), template))
                self._meta[slot] = (treedef, kept, names)
                try:
                    written += self._write_leaf(name, host, host is not x)
                except Exception as exc:
                    raise self._failed("write", name, exc) from exc
                kept.append(_ON_STORE)
            else:
                kept.append(x)
        self._meta[slot] = (treedef, kept, names)
        self._bytes[slot] = tree_nbytes(tree)
        self.bytes_written += written
        return written

    def restore(self, slot):
        """Read a snapshot back (fresh arrays); checks every array's checksum."""
        treedef, kept, names = self._meta[slot]
        it = iter(names)
        leaves = []
        for x in kept:
            if x is not _ON_STORE:
                leaves.append(x)
                continue
            name, digest, template = next(it)
            try:
                array = self._read(name)
            except Exception as exc:
                raise self._failed("read", name, exc) from exc
            if checksum(array) != digest:
                raise SnapshotStoreError(
                    f"{self.kind} snapshot {name!r} in {self.path!r} is corrupted (checksum "
                    "mismatch): its bytes changed after it was written; refusing to compute "
                    "a gradient from it")
            if template is not None:
                array = from_host(array, template)   # back to the device
            elif not self.fresh_reads:
                array = array.copy()
            leaves.append(array)
        return tree_unflatten(treedef, leaves)

    def _write_leaf(self, name, host, fresh):
        """Write the host array of one leaf (``fresh``: a copy made for this
        write, which a store may keep as it is)."""
        return self._write(name, host)

    def free(self, slot):
        meta = self._meta.pop(slot, None)
        self._bytes.pop(slot, None)
        if meta is not None:
            for name, *_ in meta[2]:
                try:
                    self._delete(name)
                except Exception:
                    pass  # already gone: close() removes the whole location anyway

    def __contains__(self, slot):
        return slot in self._meta

    def __len__(self):
        return len(self._meta)

    @property
    def nbytes(self):
        return sum(self._bytes.values())

    def close(self):
        self._meta.clear()
        self._bytes.clear()
        if self.path is not None:
            self._remove()
            self.path = None


def check_dir(path, what="disk_dir"):
    """A CheckpointError unless `path` is a writable folder."""
    if not os.path.isdir(path):
        raise CheckpointError(f"{what} {path!r} does not exist or is not a directory; "
                              f"create it or pass {what}=None for a private temporary folder")
    if not os.access(path, os.W_OK | os.X_OK):
        raise CheckpointError(f"{what} {path!r} is not writable; pass a writable folder "
                              f"or {what}=None for a private temporary folder")


class DiskStore(LeafStore):
    """Snapshots as ``.npy`` files (one per array leaf) in a private temporary folder.

    The folder is created with ``tempfile.mkdtemp`` inside `disk_dir` (or the system
    temporary directory) on first use and removed by ``close()``.  The tree
    structure, non-array leaves and checksums stay in memory.
    """

    kind = "disk"

    def __init__(self, disk_dir=None, prefix="tangent_ckpt_"):
        super().__init__()
        if disk_dir is not None:
            disk_dir = os.fspath(disk_dir)
            check_dir(disk_dir)
        self.disk_dir = disk_dir
        self.prefix = prefix

    def _open(self):
        try:
            return tempfile.mkdtemp(prefix=self.prefix, dir=self.disk_dir)
        except OSError as e:
            raise SnapshotStoreError(f"cannot create a snapshot folder in "
                                     f"{self.disk_dir or tempfile.gettempdir()!r}: {e}") from None

    def _file(self, name):
        return os.path.join(self.path, name + ".npy")

    def _write(self, name, x):
        fn = self._file(name)
        np.save(fn, x, allow_pickle=False)
        return os.path.getsize(fn)

    def _read(self, name):
        return np.load(self._file(name), allow_pickle=False)

    def _delete(self, name):
        os.remove(self._file(name))

    def _remove(self):
        shutil.rmtree(self.path, ignore_errors=True)
