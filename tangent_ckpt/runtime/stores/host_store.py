"""The middle level of device -> host -> disk: snapshots in host memory.

A checkpointed loop keeps its RAM-level snapshots where the loop state lives:
for CuPy arrays that is device memory (``snapshots.RamStore`` copies each
array on the device).  Its slower level (``disk_snapshots``; the slots the
cost-aware planner, ``runtime.hrevolve``, places there) is a
``store_io.SnapshotStore``: files, a zarr store, or with ``"host"`` this
module's :class:`HostStore`, host-memory copies of the device arrays (written
and read on the I/O thread, off the sweep's critical path).

With ``SnapshotStore(where, host_slots=k)`` the slower level is split:
:class:`SpillStore` keeps ``k`` of its slots in host memory and the rest in
``where`` (files or zarr).  The schedules give the low slots to the outermost
snapshots, written once and read least often, so those go to disk and the
``k`` highest slots of the level to host memory: device -> host -> disk in
order of how often a snapshot is touched.  The planner sees two levels, the
device and the level below it, planned for the costs measured on slot 0 (the
lowest, slowest place): the host slots can only make the plan cheaper than
planned.
"""

from tangent_ckpt.runtime.stores.disk_store import LeafStore

__all__ = ["HostStore", "SpillStore"]


class HostStore(LeafStore):
    """Snapshots as host-memory NumPy arrays (the host copies of device arrays;
    a NumPy array is copied).  Checksummed like the disk stores."""

    kind = "host"
    level = "host"
    fresh_reads = False   # restore copies (or copies to the device)

    def __init__(self):
        super().__init__()
        self._arrays = {}

    def _open(self):
        return "host memory"

    def _write_leaf(self, name, host, fresh):
        self._arrays[name] = host if fresh else host.copy()
        return int(host.nbytes)

    def _read(self, name):
        return self._arrays[name]

    def _delete(self, name):
        del self._arrays[name]

    def _remove(self):
        self._arrays.clear()


class SpillStore:
    """The level below the device split in two: of ``slots`` slots (0 ..
    slots - 1), the ``host_slots`` highest in host memory (:class:`HostStore`),
    the others in ``disk`` (a ``DiskStore`` or ``ZarrStore``)."""

    kind = "host+disk"

    def __init__(self, host, disk, slots, host_slots):
        self.host, self.disk = host, disk
        self.first_host = max(0, int(slots) - int(host_slots))
        self.path = None

    def _pick(self, slot):
        return self.host if slot >= self.first_host else self.disk

    def level_of(self, slot):
        return self._pick(slot).level

    def location(self):
        self.host.location()
        if self.first_host:
            self.disk.location()
        self.path = self.disk.path
        return self.path

    def store(self, slot, tree):
        return self._pick(slot).store(slot, tree)

    def restore(self, slot):
        return self._pick(slot).restore(slot)

    def free(self, slot):
        self._pick(slot).free(slot)

    def __contains__(self, slot):
        return slot in self._pick(slot)

    def __len__(self):
        return len(self.host) + len(self.disk)

    @property
    def nbytes(self):
        return self.host.nbytes + self.disk.nbytes

    @property
    def bytes_written(self):
        return self.host.bytes_written + self.disk.bytes_written

    def close(self):
        self.host.close()
        self.disk.close()
