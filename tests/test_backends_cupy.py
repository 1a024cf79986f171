"""The gradient on CuPy arrays on a GPU (runtime/backends.py): the same
problems as tests/test_backends.py's Dask tests, taped and checkpointed, equal
the NumPy gradient and come back as CuPy arrays; snapshots stay in device
memory, are counted in a memory budget there, and spill to host memory and
disk.  Runs wherever CuPy and a GPU exist; skipped elsewhere (CI has no GPU)."""

import numpy as np
import pytest

cp = pytest.importorskip("cupy")
try:
    _GPUS = cp.cuda.runtime.getDeviceCount()
except Exception:  # CuPy installed without a driver or a device
    _GPUS = 0
if not _GPUS:
    pytest.skip("no GPU for CuPy", allow_module_level=True)

import tangent_ckpt as tc  # noqa: E402
from tangent_ckpt.runtime.loops.driver import CheckpointedLoop  # noqa: E402
from tangent_ckpt.runtime.stores.store_io import SnapshotStore  # noqa: E402
from tests.backend_problems import assert_same_gradient, problems, rnn_loss  # noqa: E402

PROBLEMS = problems(np.random.default_rng(0))


def on_gpu(args):
    return tuple(cp.asarray(a) if isinstance(a, np.ndarray) else a for a in args)


@pytest.mark.parametrize("name", sorted(PROBLEMS))
@pytest.mark.parametrize("checkpointed", [False, True], ids=["taped", "checkpointed"])
def test_cupy_gradient_equals_numpy_gradient(name, checkpointed):
    f, args, wrt = PROBLEMS[name]
    grad = tc.grad_with_checkpointing(f, wrt=wrt, snapshots=2) if checkpointed \
        else tc.grad(f, wrt=wrt)
    want = grad(*args)
    given = on_gpu(args)
    before = [a.get() for a in given if isinstance(a, cp.ndarray)]
    got = grad(*given)
    assert all(isinstance(g, cp.ndarray) for g in got)
    assert_same_gradient(got, want)
    assert all(np.array_equal(x, a.get()) for x, a in
               zip(before, [a for a in given if isinstance(a, cp.ndarray)]))


def test_cupy_snapshots_stay_on_the_device_and_spill_to_host_and_disk(tmp_path):
    f, args, wrt = PROBLEMS["rnn"]
    h0, W, b, _ = on_gpu(args)
    want = tc.grad(rnn_loss, wrt=(1, 2))(*args[:3], 30)
    grad = tc.grad_with_checkpointing(rnn_loss, wrt=(1, 2), snapshots=2, disk_snapshots=3,
                                      snapshot_store=SnapshotStore(str(tmp_path), host_slots=2))
    with tc.profile() as prof:
        got = grad(h0, W, b, 30)
    assert all(isinstance(g, cp.ndarray) for g in got)
    assert_same_gradient(got, want)
    assert prof.peak_device_bytes > 0 and prof.peak_host_bytes + prof.peak_disk_bytes > 0


def test_cupy_memory_budget_counts_device_bytes():
    """The budget pays for device memory: the argument's adjoint reserves, ten
    states held around the sweep, a step taken as four states (tracemalloc does
    not see the device), and buys snapshots with the rest: 20 - 14 = 6."""
    h0 = cp.zeros((64, 256))
    W = cp.full((256, 256), 0.01)
    loop = CheckpointedLoop(40, memory_budget=4 * W.nbytes + 20 * h0.nbytes)
    h = loop.forward(lambda t, h, W: cp.tanh(h @ W + 0.1), h0, W)
    bh = loop.reverse(lambda t, h, bh, W: (bh * (1 - cp.tanh(h @ W + 0.1) ** 2)) @ W.T,
                      cp.ones_like(h), W)
    assert isinstance(h, cp.ndarray) and isinstance(bh, cp.ndarray)
    assert loop.used_snapshots == 6
    assert loop.last_stats["peak_snapshot_bytes"] <= 6 * h0.nbytes


def test_writes_through_views_follow_cupy_views_as_numpy_views():
    """CuPy slices are views, as NumPy's: a write through v = y[1:3] changes y,
    and the gradient follows it (on Dask the same code is refused)."""
    def through_view(x, n):
        y = x * 1.0
        for t in range(n):
            v = y[1:3]
            v[:] = v * 0.5 + np.sin(y[2:4])
        return np.sum(y ** 2)

    x = np.linspace(0.1, 0.9, 5)
    for grad in (tc.grad(through_view), tc.grad_with_checkpointing(through_view, snapshots=2)):
        got = grad(cp.asarray(x), 4)
        assert isinstance(got, cp.ndarray)
        assert_same_gradient((got,), (grad(x, 4),))
