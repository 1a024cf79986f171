"""Snapshots as zarr arrays on an fsspec URL (the optional [store] extra)."""

import os

import numpy as np
import pytest

zarr = pytest.importorskip("zarr")
fsspec = pytest.importorskip("fsspec")

import tangent_ckpt as tc  # noqa: E402
from tangent_ckpt.errors import SnapshotStoreError  # noqa: E402
from tangent_ckpt.runtime.loops.profiler import profile  # noqa: E402
from tangent_ckpt.runtime.stores.snapshots import tree_equal  # noqa: E402
from tangent_ckpt.runtime.stores.zarr_store import ZarrStore  # noqa: E402


def sample():
    return {"x": (np.arange(600.0).reshape(20, 30), [np.float32(2.5), 3.0, None]),
            "z": np.array(1.5), "i": np.arange(5)}


@pytest.mark.parametrize("codec", [None, "zstd", "blosc", "gzip"])
def test_roundtrip_local_url(tmp_path, codec):
    store = ZarrStore(f"file://{tmp_path}", codec=codec)
    t = sample()
    written = store.store(0, t)
    assert written > 0
    back = store.restore(0)
    assert tree_equal(back, t) and back["x"][0] is not t["x"][0]
    if codec is not None:  # lossless and smaller for a compressible array
        assert written < t["x"][0].nbytes
    store.free(0)
    store.close()
    assert os.listdir(tmp_path) == []


def test_memory_url_and_cleanup():
    store = ZarrStore("memory://tangent_ckpt_tests")
    store.store(1, sample())
    fs = fsspec.filesystem("memory")
    root = store.path.split("://", 1)[1]
    assert fs.exists(root)
    assert tree_equal(store.restore(1), sample())
    store.close()
    assert not fs.exists(root)


def test_missing_store_and_faults(tmp_path):
    with pytest.raises(tc.CheckpointError, match="does not exist"):
        ZarrStore(f"file://{tmp_path}/missing")
    with pytest.raises(SnapshotStoreError, match="cannot open"):
        ZarrStore("nosuchprotocol://x")
    with pytest.raises(tc.CheckpointError, match="unknown snapshot codec"):
        ZarrStore(f"file://{tmp_path}", codec="lz77")
    store = ZarrStore(f"file://{tmp_path}", codec="zstd")
    store.store(0, sample())
    chunks = [os.path.join(d, f) for d, _, fs in os.walk(store.path) for f in fs
              if f != "zarr.json"]
    raw = bytearray(open(chunks[0], "rb").read())
    raw[len(raw) // 2] ^= 0xFF
    open(chunks[0], "wb").write(bytes(raw))
    with pytest.raises(SnapshotStoreError, match="corrupted|cannot read"):
        store.restore(0)
    for c in chunks:
        os.remove(c)
    with pytest.raises(SnapshotStoreError):
        store.restore(0)  # a deleted chunk reads as zeros in zarr: the checksum says so
    store.close()
    assert os.listdir(tmp_path) == []


def rnn(h, W, n):
    for t in range(n):
        h = np.tanh(h @ W)
    return np.sum(h)


def test_gradient_with_a_compressed_zarr_store(tmp_path):
    rng = np.random.default_rng(0)
    h, W = rng.normal(size=(4, 6)), rng.normal(size=(6, 6)) * 0.5
    want = tc.grad(rnn, wrt=1)(h, W, 40)
    store = tc.SnapshotStore(f"file://{tmp_path}", codec="zstd")
    df = tc.grad_with_checkpointing(rnn, wrt=1, snapshots=2, disk_snapshots=3,
                                    snapshot_store=store)
    assert "rt.SnapshotStore('file://" in df.source and "codec='zstd'" in df.source
    with profile() as prof:
        got = df(h, W, 40)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert prof.disk_bytes_written > 0 and prof.io_seconds > 0
    assert os.listdir(tmp_path) == []
