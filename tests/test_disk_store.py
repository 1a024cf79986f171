"""Disk snapshots (.npy, checksummed) and their faults: full disk, deleted or
corrupted snapshot -> SnapshotStoreError, never a wrong gradient."""

import errno
import os

import numpy as np
import pytest

from tangent_ckpt.errors import CheckpointError, SnapshotStoreError
from tangent_ckpt.runtime.stores.disk_store import DiskStore
from tangent_ckpt.runtime.stores.snapshots import tree_equal


def sample():
    return {"x": (np.arange(6.0).reshape(2, 3), [np.float32(2.5), 3.0, None]),
            "z": np.array(1.5)}


def test_disk_store_files_and_cleanup(tmp_path):
    store = DiskStore(tmp_path)
    written = store.store(3, sample())
    assert written > 0 and store.bytes_written == written
    folder = store.path
    assert folder.startswith(str(tmp_path)) and len(os.listdir(folder)) == 2  # one per array
    store.free(3)
    assert os.listdir(folder) == []
    store.store(4, sample())
    store.close()
    assert not os.path.exists(folder) and os.listdir(tmp_path) == []


def test_disk_dir_errors(tmp_path):
    with pytest.raises(CheckpointError, match="does not exist"):
        DiskStore(tmp_path / "missing")
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(CheckpointError, match="not a directory"):
        DiskStore(f)


def test_full_disk_is_a_clear_error(tmp_path, monkeypatch):
    store = DiskStore(tmp_path)

    def no_space(fn, x, allow_pickle=False):
        with open(fn, "wb") as fh:
            fh.write(b"\x93NUMPY")  # a partial file, as a full disk leaves behind
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(np, "save", no_space)
    with pytest.raises(SnapshotStoreError, match="no space left.*snapshot_store="):
        store.store(0, sample())
    store.close()
    assert os.listdir(tmp_path) == []


def test_short_write_reads_as_a_full_disk(tmp_path, monkeypatch):
    store = DiskStore(tmp_path)
    monkeypatch.setattr(np, "save", lambda *a, **k: (_ for _ in ()).throw(
        OSError("8192 requested and 1008 written")))
    with pytest.raises(SnapshotStoreError, match="no space left"):
        store.store(0, sample())
    store.close()


def test_deleted_snapshot_is_a_clear_error(tmp_path):
    store = DiskStore(tmp_path)
    store.store(0, sample())
    for name in os.listdir(store.path):
        os.remove(os.path.join(store.path, name))
    with pytest.raises(SnapshotStoreError, match="missing"):
        store.restore(0)
    store.close()


@pytest.mark.parametrize("where", ["header", "data"])
def test_corrupted_snapshot_is_caught_by_its_checksum(tmp_path, where):
    store = DiskStore(tmp_path)
    t = sample()
    store.store(0, t)
    fn = os.path.join(store.path, sorted(os.listdir(store.path))[0])
    raw = bytearray(open(fn, "rb").read())
    raw[-1 if where == "data" else 20] ^= 0x01  # one bit
    open(fn, "wb").write(bytes(raw))
    with pytest.raises(SnapshotStoreError, match="corrupted|cannot read"):
        store.restore(0)
    store.close()


def test_restore_checks_and_returns_fresh_arrays(tmp_path):
    store = DiskStore(tmp_path)
    t = sample()
    store.store(1, t)
    a, b = store.restore(1), store.restore(1)
    assert tree_equal(a, t) and a["z"] is not b["z"]
    store.close()


def test_object_arrays_are_refused(tmp_path):
    store = DiskStore(tmp_path)
    with pytest.raises(CheckpointError, match="object array"):
        store.store(0, (np.array([None, 1], dtype=object),))
    store.close()
    assert os.listdir(tmp_path) == []
