import collections
import os

import numpy as np
import pytest

from tangent_ckpt.runtime.stores.disk_store import DiskStore
from tangent_ckpt.runtime.stores.snapshots import (
    RamStore, TwoLevelStore, tree_copy, tree_equal, tree_flatten, tree_nbytes,
    tree_unflatten,
)

P = collections.namedtuple("P", "h c")


def sample():
    return {"x": (np.arange(6.0).reshape(2, 3), [np.float32(2.5), 3.0, None]),
            "y": P(np.ones(4, dtype=np.int64), 7), "z": np.array(1.5)}


def test_flatten_roundtrip_and_types():
    t = sample()
    leaves, d = tree_flatten(t)
    back = tree_unflatten(d, leaves)
    assert tree_equal(t, back)
    assert isinstance(back["y"], P) and isinstance(back["x"][1], list)


def test_nbytes():
    assert tree_nbytes(sample()) == 48 + 4 + 8 + 0 + 32 + 8 + 8
    assert tree_nbytes(None) == 0


@pytest.mark.parametrize("make", [RamStore, lambda: DiskStore(), lambda: TwoLevelStore(1, DiskStore())])
def test_store_copies_never_alias(make):
    store = make()
    t = sample()
    store.store(0, t)
    t["x"][0][...] = -1  # caller mutates after storing
    r1 = store.restore(0)
    assert r1["x"][0][0, 0] == 0.0
    r1["x"][0][...] = 42  # caller mutates a restored copy
    r2 = store.restore(0)
    assert tree_equal(r2, sample())
    assert r1["x"][0] is not r2["x"][0]
    assert len(store) == 1 and 0 in store and store.nbytes == tree_nbytes(t)
    store.free(0)
    assert len(store) == 0
    store.close()


def test_two_level_placement(tmp_path):
    store = TwoLevelStore(2, DiskStore(tmp_path))
    for slot in range(4):
        store.store(slot, (np.full(3, slot, dtype=float),))
    assert len(store.disk) == 2 and len(store.ram) == 2
    for slot in range(4):
        assert store.restore(slot)[0][0] == slot
    store.close()
    assert os.listdir(tmp_path) == []


def test_tree_copy_and_equal():
    t = sample()
    c = tree_copy(t)
    assert tree_equal(t, c) and c["z"] is not t["z"]
    c["z"][()] = 0
    assert not tree_equal(t, c)
    assert tree_equal((np.array([np.nan]),), (np.array([np.nan]),))
    assert not tree_equal((np.zeros(2),), (np.zeros(2, dtype=np.float32),))
