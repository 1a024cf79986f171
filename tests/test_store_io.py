"""Disk-level I/O off the sweep's path: asynchronous writes with a bounded queue,
prefetched reads, I/O seconds overlapped vs waited, faults raised in the sweep,
nothing left behind."""

import errno
import os
import threading

import numpy as np
import pytest

import tangent_ckpt as tc
from tangent_ckpt.errors import CheckpointError, SnapshotStoreError
from tangent_ckpt.runtime.stores.disk_store import DiskStore
from tangent_ckpt.runtime.loops.driver import CheckpointedLoop
from tangent_ckpt.runtime.loops.profiler import profile
from tangent_ckpt.runtime.stores.store_io import BufferedStore, SnapshotStore

RNG = np.random.default_rng(3)
W = RNG.normal(size=(6, 6)) * 0.5
H0 = RNG.normal(size=(4, 6))


def step(t, h, W):
    return np.tanh(h @ W)


def adjoint_step(t, h, bstate, W):
    bh, bW = bstate
    g = bh * (1.0 - np.tanh(h @ W) ** 2)
    return g @ W.T, bW + h.T @ g


def reference(n):
    loop = CheckpointedLoop(n, snapshots=n)
    out = loop.forward(step, H0, W)
    return out, loop.reverse(adjoint_step, (np.ones_like(out), np.zeros_like(W)), W)


def run(loop, n):
    out = loop.forward(step, H0, W)
    return out, loop.reverse(adjoint_step, (np.ones_like(out), np.zeros_like(W)), W)


class SlowDisk(DiskStore):
    """A DiskStore whose writes and reads take a while and record their thread."""

    def __init__(self, folder, delay=0.0):
        super().__init__(folder)
        self.delay, self.threads, self.reads = delay, set(), []
        self.gate = threading.Event()
        self.gate.set()

    def _write(self, name, x):
        self.gate.wait()
        self.threads.add(threading.current_thread().name)
        threading.Event().wait(self.delay)
        return super()._write(name, x)

    def _read(self, name):
        self.reads.append(name)
        threading.Event().wait(self.delay)
        return super()._read(name)


def test_writes_are_queued_and_bounded(tmp_path):
    disk = SlowDisk(tmp_path)
    store = BufferedStore(disk, write_queue=2)
    disk.gate.clear()  # the I/O thread blocks on the first write
    store.store(0, (np.ones(3),))
    store.store(1, (np.ones(3),))
    assert os.listdir(disk.path) == []  # nothing written yet: the sweep did not wait
    # a queued snapshot is restored from memory, as a fresh copy
    a = store.restore(1)[0]
    assert np.array_equal(a, np.ones(3))
    disk.gate.set()
    store.store(2, (np.full(3, 2.0),))  # waits until at most 1 write is in flight
    store.flush()
    assert len(disk) == 3 and all(t.startswith("tangent_ckpt_io") for t in disk.threads)
    assert store.restore(2)[0][0] == 2.0
    store.close()
    assert os.listdir(tmp_path) == []


def test_prefetch_reads_in_the_background(tmp_path):
    disk = SlowDisk(tmp_path, delay=0.05)
    store = BufferedStore(disk)
    store.store(0, (np.arange(4.0),))
    store.flush()
    store.prefetch(0)
    threading.Event().wait(0.2)  # the sweep reverses steps meanwhile
    waited = store.waited_seconds
    assert store.restore(0)[0][3] == 3.0
    assert disk.reads == ["slot0_leaf0"]
    assert store.waited_seconds - waited < 0.04 and store.io_seconds >= 0.1
    store.close()


def test_failed_background_write_surfaces_in_the_sweep(tmp_path, monkeypatch):
    disk = DiskStore(tmp_path)

    def full(name, x):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(disk, "_write", full)
    store = BufferedStore(disk)
    store.store(0, (np.ones(3),))
    with pytest.raises(SnapshotStoreError, match="no space left"):
        store.flush()
    store.close()
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("schedule", ["revolve", "online"])
def test_driver_prefetches_disk_snapshots_and_reports_io(tmp_path, schedule):
    n = 60
    _, want = reference(n)
    loop = CheckpointedLoop(n, schedule=schedule, snapshots=2, disk_snapshots=3,
                            disk_dir=tmp_path, name="d")
    reads = []
    original = DiskStore._read

    def counted(self, name):
        reads.append(threading.current_thread().name)
        return original(self, name)

    DiskStore._read = counted
    try:
        with profile() as prof:
            _, got = run(loop, n)
    finally:
        DiskStore._read = original
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-13)
    assert reads and all(name.startswith("tangent_ckpt_io") for name in reads)
    st = prof.loops["d"]
    assert st.io_seconds > 0
    assert st.io_seconds - st.io_waited_seconds - 1e-9 <= st.io_overlapped_seconds <= st.io_seconds
    if schedule == "revolve":  # the RAM + disk plan the driver ran: its A plain steps + 1
        assert st.forward_steps == loop.last_plan.advances + 1
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("fault", ["full", "deleted", "corrupted"])
def test_driver_faults_are_clear_errors_and_leave_nothing(tmp_path, fault, monkeypatch):
    n = 40
    loop = CheckpointedLoop(n, snapshots=1, disk_snapshots=2, disk_dir=tmp_path, name="f")
    if fault == "full":
        def full(self, name, x):
            raise OSError(errno.ENOSPC, "No space left on device")
        monkeypatch.setattr(DiskStore, "_write", full)
        with pytest.raises(SnapshotStoreError, match="no space left"):
            run(loop, n)
    else:
        out = loop.forward(step, H0, W)
        loop._store.disk.flush()
        folder = loop.disk_path
        for name in os.listdir(folder):
            path = os.path.join(folder, name)
            if fault == "deleted":
                os.remove(path)
            else:
                raw = bytearray(open(path, "rb").read())
                raw[-3] ^= 0x10
                open(path, "wb").write(bytes(raw))
        with pytest.raises(SnapshotStoreError, match="missing" if fault == "deleted" else "corrupted"):
            loop.reverse(adjoint_step, (np.ones_like(out), np.zeros_like(W)), W)
    assert os.listdir(tmp_path) == []


def test_keyboard_interrupt_while_writes_are_queued_leaves_nothing(tmp_path):
    count = [0]

    def interrupted(t, h, W):
        count[0] += 1
        if count[0] == 25:
            raise KeyboardInterrupt
        return step(t, h, W)

    loop = CheckpointedLoop(40, snapshots=1, disk_snapshots=3, disk_dir=tmp_path)
    with pytest.raises(KeyboardInterrupt):
        loop.forward(interrupted, H0, W)
    assert os.listdir(tmp_path) == []


def test_snapshot_store_option_and_spec(tmp_path):
    spec = SnapshotStore(str(tmp_path), write_queue=3, prefetch=False)
    assert spec.buffered_states == 3
    assert eval(repr(spec), {"rt": tc.runtime}) == spec
    assert SnapshotStore.of(str(tmp_path)) == SnapshotStore(str(tmp_path))
    with pytest.raises(CheckpointError, match="compression needs a zarr store"):
        SnapshotStore(str(tmp_path), codec="zstd")
    with pytest.raises(CheckpointError, match="write_queue"):
        SnapshotStore(None, write_queue=0)
    with pytest.raises(CheckpointError, match="does not exist"):
        CheckpointedLoop(10, disk_snapshots=1, snapshot_store=str(tmp_path / "missing"))


def rnn(h, W, n):
    for t in range(n):
        h = np.tanh(h @ W)
    return np.sum(h)


def test_grad_writes_disk_snapshots_to_the_snapshot_store(tmp_path):
    want = tc.grad(rnn, wrt=1)(H0, W, 30)
    df = tc.grad_with_checkpointing(rnn, wrt=1, snapshots=2, disk_snapshots=2,
                                    snapshot_store=str(tmp_path))
    assert f"snapshot_store={str(tmp_path)!r}" in df.source
    with profile() as prof:
        got = df(H0, W, 30)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert prof.disk_bytes_written > 0 and os.listdir(tmp_path) == []
