"""Arrays of other libraries (runtime/backends.py) on Dask arrays: the gradient
of the same NumPy source, taped and checkpointed, equals the NumPy gradient,
comes back as Dask arrays, and builds its graph without computing anything;
what Dask cannot do is refused naming the function and the library.
CuPy's twin of these tests is tests/test_backends_cupy.py."""

import dataclasses
import warnings

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
from dask.callbacks import Callback  # noqa: E402

import tangent_ckpt as tc  # noqa: E402
from tangent_ckpt.errors import OptionError  # noqa: E402
from tangent_ckpt.runtime import backends  # noqa: E402
from tangent_ckpt.runtime.backends import BackendError, NumpyFor  # noqa: E402
from tangent_ckpt.runtime.loops.driver import CheckpointedLoop  # noqa: E402
from tangent_ckpt.runtime.stores.host_store import HostStore  # noqa: E402
from tangent_ckpt.runtime.stores.store_io import SnapshotStore  # noqa: E402
from tests.backend_problems import (  # noqa: E402
    assert_same_gradient, host_values, problems, rnn_loss)

PROBLEMS = problems(np.random.default_rng(0))


class Computes(Callback):
    """Counts the Dask computations started while it is active."""

    def __init__(self):
        super().__init__()
        self.count = 0

    def _start(self, dsk):
        self.count += 1


def on_dask(args, chunks=-1):
    return tuple(da.from_array(a, chunks=chunks) if isinstance(a, np.ndarray) else a
                 for a in args)


@pytest.fixture(autouse=True)
def dask_fallbacks_are_errors():
    """Dask warns (FutureWarning) when it hands a NumPy function back to NumPy,
    which turns its array into a NumPy one: here that fails the test."""
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*is not implemented by Dask array",
                                category=FutureWarning)
        yield


@pytest.mark.parametrize("name", sorted(PROBLEMS))
@pytest.mark.parametrize("checkpointed", [False, True], ids=["taped", "checkpointed"])
def test_dask_gradient_equals_numpy_gradient(name, checkpointed):
    f, args, wrt = PROBLEMS[name]
    grad = tc.grad_with_checkpointing(f, wrt=wrt, snapshots=2) if checkpointed \
        else tc.grad(f, wrt=wrt)
    want = grad(*args)
    given = on_dask(args)
    before = host_values([a for a in given if isinstance(a, da.Array)])
    with Computes() as computes:
        got = grad(*given)
    assert computes.count == 0          # a graph: nothing computed, no host round trip
    assert all(isinstance(g, da.Array) for g in got)
    assert_same_gradient(got, want)
    after = host_values([a for a in given if isinstance(a, da.Array)])
    assert all(np.array_equal(x, y) for x, y in zip(before, after))


def test_dask_gradient_over_several_chunks():
    f, args, wrt = PROBLEMS["rnn"]
    grad = tc.grad_with_checkpointing(f, wrt=wrt, snapshots=2)
    got = grad(*on_dask(args, chunks=2))
    assert all(isinstance(g, da.Array) for g in got)
    assert_same_gradient(got, grad(*args))


def test_dask_and_numpy_calls_of_one_gradient_each_run_in_their_library():
    f, args, wrt = PROBLEMS["rnn"]
    grad = tc.grad(f, wrt=wrt)
    first = grad(*args)
    on = grad(*on_dask(args))
    again = grad(*args)
    assert all(type(g) is np.ndarray for g in first + again)
    assert all(isinstance(g, da.Array) for g in on)
    assert_same_gradient(on, first)


@dataclasses.dataclass
class Cell:
    W: object
    b: object


def test_dask_arrays_in_containers_and_objects():
    _, (h0, W, b, n), _ = PROBLEMS["rnn"]

    def loss(h, params, n):
        for t in range(n):
            h = np.tanh(h @ params["W"] + params["b"])
        return np.sum(h)

    def loss_of(h, cell, n):
        for t in range(n):
            h = np.tanh(h @ cell.W + cell.b)
        return np.sum(h)

    want = tc.grad(rnn_loss, wrt=(1, 2))(h0, W, b, n)
    got = tc.grad(loss, wrt=1)(da.from_array(h0), {"W": da.from_array(W),
                                                   "b": da.from_array(b)}, n)
    assert isinstance(got["W"], da.Array) and isinstance(got["b"], da.Array)
    assert_same_gradient((got["W"], got["b"]), want)
    cell = tc.grad_with_checkpointing(loss_of, wrt=1, snapshots=2)(
        da.from_array(h0), Cell(da.from_array(W), da.from_array(b)), n)
    assert isinstance(cell, Cell) and isinstance(cell.W, da.Array)
    assert_same_gradient((cell.W, cell.b), want)


def test_integer_array_read_is_refused_on_dask_naming_function_and_library():
    def pick(x, idx):
        return np.sum(x[idx] ** 2)

    x = np.arange(5.0)
    idx = np.array([0, 3, 3])
    assert np.allclose(tc.grad(pick)(x, idx), [0.0, 0.0, 0.0, 12.0, 0.0])
    with pytest.raises(BackendError, match=r"np\.add\.at.*dask arrays"):
        tc.grad(pick)(da.from_array(x), idx)


def test_numba_backend_refuses_dask_arrays():
    pytest.importorskip("numba")
    f, args, wrt = PROBLEMS["rnn"]
    grad = tc.grad_with_checkpointing(f, wrt=wrt, snapshots=2, backend="numba")
    with pytest.raises(OptionError, match="NumPy arrays, not dask arrays"):
        grad(*on_dask(args))


def test_wrt_of_an_integer_dask_array_is_refused():
    with pytest.raises(tc.WrtError, match="dtype int64"):
        tc.grad(lambda x: np.sum(x * 1.0))(da.arange(3))


# --- the pieces ----------------------------------------------------------------

def test_arrays_of_other_libraries_are_recognised_by_their_protocols():
    x = da.ones(3)
    assert backends.is_foreign_array(x) and backends.is_array(x)
    assert backends.library_of(x) == "dask"
    for value in (np.ones(3), np.float64(1.0), 1.0, [1.0], da.Array):
        assert not backends.is_foreign_array(value)
    assert backends.array_library([1.0, np.ones(2), x]) == ("dask", da.Array)
    assert not backends.array_library([x]).has_views   # Dask: a slice is a copy
    assert backends.array_library([1.0, np.ones(2)]) is None


def test_numpy_for_a_library_keeps_its_arrays_there():
    np_dask = NumpyFor(backends.Library("dask", da.Array))
    assert np_dask.ndarray is np.ndarray     # no views: isinstance(x, np.ndarray) says so
    x = da.from_array(np.arange(4.0))
    assert isinstance(np_dask.copy(x), da.Array)
    assert isinstance(np_dask.asarray(x, dtype=np.float32), da.Array)
    assert np_dask.asarray(x, dtype=np.float32).dtype == np.float32
    assert isinstance(np_dask.array(x), da.Array)
    assert np_dask.size(x) == 4 and np_dask.size(x, 0) == 4
    assert np_dask.shares_memory(x, x) is False   # Dask arrays have no views
    assert np_dask.tanh is np.tanh
    a = np.arange(3.0)
    assert np_dask.shares_memory(a, a[1:]) and np_dask.copy(a) is not a


def test_host_and_disk_levels_restore_dask_arrays_as_dask_arrays(tmp_path):
    state = (da.from_array(np.arange(6.0)), 2.0)
    host = HostStore()
    host.store(0, state)
    restored = host.restore(0)
    assert isinstance(restored[0], da.Array) and restored[1] == 2.0
    assert np.array_equal(np.asarray(restored[0]), np.arange(6.0))
    assert host.nbytes == 6 * 8 + 8
    host.close()
    numpy_state = np.arange(3.0)
    host.store(1, numpy_state)
    back = host.restore(1)
    assert back is not numpy_state and np.array_equal(back, numpy_state)
    back[0] = 7.0     # a restored state is the caller's to write into
    assert host.restore(1)[0] == 0.0
    host.close()


def test_device_host_disk_levels_of_a_checkpointed_loop(tmp_path):
    """Two slots where the arrays live, two below: one in host memory and one
    on disk (the lowest, least touched); the profiler reports each level."""
    W = da.from_array(np.full((4, 4), 0.2))
    loop = CheckpointedLoop(20, snapshots=2, disk_snapshots=2, disk_dir=str(tmp_path),
                            snapshot_store=SnapshotStore(None, host_slots=1),
                            costs=(1.0, 1.0, 0.5, 0.5))
    h0 = da.from_array(np.linspace(-1.0, 1.0, 4))
    with tc.profile() as prof:
        h = loop.forward(lambda t, h: np.tanh(h @ W), h0)
        bh = loop.reverse(lambda t, h, bh: (bh * (1.0 - np.tanh(h @ W) ** 2)) @ W.T,
                          da.ones(4))
    assert isinstance(h, da.Array) and isinstance(bh, da.Array)
    assert loop.last_plan.disk_writes > 0
    assert prof.peak_device_bytes == 2 * 32
    assert prof.peak_host_bytes == 32 and prof.peak_disk_bytes == 32
    assert "snapshot bytes per level: device 64, host 32, disk 32" in prof.report()
    hn = np.linspace(-1.0, 1.0, 4)
    states = [hn]
    for _ in range(20):
        states.append(np.tanh(states[-1] @ np.full((4, 4), 0.2)))
    b = np.ones(4)
    for t in reversed(range(20)):
        b = (b * (1.0 - np.tanh(states[t] @ np.full((4, 4), 0.2)) ** 2)) @ np.full((4, 4), 0.2)
    assert np.allclose(np.asarray(bh), b, rtol=1e-13)
    assert list(tmp_path.iterdir()) == []    # the disk level's folder is removed


def test_snapshot_store_host_refuses_host_slots():
    with pytest.raises(tc.CheckpointError, match="host_slots"):
        SnapshotStore("host", host_slots=1)
    assert repr(SnapshotStore(None, host_slots=2)) == "rt.SnapshotStore(None, host_slots=2)"


def test_writes_through_views_and_aliases_are_refused_on_dask():
    """NumPy (and CuPy) carry a write through v = y[1:3] or z = y into y; Dask's
    slices are copies, so such code computes something else there: refused
    at the user's line rather than differentiated with NumPy's meaning."""
    def through_view(x):
        y = x.copy()
        v = y[1:3]
        v[:] = v * 2.0
        return np.sum(y ** 2)

    def through_alias(x):
        y = x * 1.0
        z = y
        z += 1.0
        return np.sum(y ** 2)

    def into_itself(x):
        y = x * 1.0
        y[1:3] = y[1:3] * 2.0
        y += 1.0
        return np.sum(y ** 2)

    x = np.arange(4.0)
    for f, line in ((through_view, "v[:] = v * 2.0"), (through_alias, "z += 1.0")):
        assert tc.grad(f)(x).shape == (4,)     # NumPy: followed
        with pytest.raises(BackendError, match="dask arrays have no views") as err:
            tc.grad(f)(da.from_array(x))
        assert f"test_backends.py:{_line_of(f, line)}" in str(err.value)
    got = tc.grad(into_itself)(da.from_array(x))
    assert isinstance(got, da.Array)
    assert_same_gradient((got,), (tc.grad(into_itself)(x),))


def test_a_write_into_a_root_copied_after_its_views_runs_on_dask():
    """Views read, then the root rebound by a copy and written (what the tangent
    of a slice-updated loop does, tc.hvp of the heat equation): no view outlives
    the copy, so nothing relies on views and Dask computes what NumPy does."""
    def rebound(x):
        y = x * 1.0
        for t in range(2):
            v = y[1:3]
            w = v * 2.0 + y[:2]
            y = y.copy()
            y[1:3] = w
        return np.sum(y ** 2)

    x = np.arange(4.0) * 0.5
    got = tc.grad(rebound)(da.from_array(x))
    assert isinstance(got, da.Array)
    assert_same_gradient((got,), (tc.grad(rebound)(x),))


def _line_of(f, text):
    import inspect
    lines, first = inspect.getsourcelines(f)
    return first + next(i for i, line in enumerate(lines) if text in line)


def test_a_checkpointed_loop_refuses_a_dask_generator_a_taped_one_takes_it():
    def noisy(x, rng, n):
        for t in range(n):
            x = np.tanh(x) + 0.01 * rng.standard_normal(x.shape)
        return np.sum(x)

    x = da.from_array(np.linspace(-1.0, 1.0, 4))
    assert isinstance(tc.grad(noisy)(x, da.random.default_rng(0), 3), da.Array)
    with pytest.raises(BackendError, match="dask.array.random.Generator, whose state cannot"):
        tc.grad_with_checkpointing(noisy, snapshots=2)(x, da.random.default_rng(0), 3)


def test_jvp_and_hvp_on_dask_equal_numpy():
    f, (u0, k, target, n), _ = PROBLEMS["heat"]
    jvp = tc.jvp(f, wrt=(0, 1))
    value, tangent = jvp(*on_dask((u0, k, target, 3)), on_dask((u0, k)))
    assert isinstance(tangent, da.Array)
    want = jvp(u0, k, target, 3, (u0, k))
    assert_same_gradient((value, tangent), want)
    hvp = tc.hvp(f, wrt=0)
    got = hvp(*on_dask((u0, k, target, 3)), da.from_array(u0))
    assert isinstance(got, da.Array)
    assert_same_gradient((got,), (hvp(u0, k, target, 3, u0),))


def test_flat_gradient_of_dask_arrays_is_one_dask_vector():
    f, args, wrt = PROBLEMS["rnn"]
    flat = tc.grad(f, wrt=wrt, flat=True)
    got = flat(*on_dask(args))
    assert isinstance(got, da.Array) and got.shape == (4 * 4 + 4,)
    assert_same_gradient((got,), (flat(*args),))
    vector, unravel = tc.ravel({"W": da.from_array(args[1]), "s": 2.0})
    assert isinstance(vector, da.Array)
    back = unravel(vector * 2.0)
    assert isinstance(back["W"], da.Array) and back["s"] == 4.0


def test_memory_budget_counts_dask_array_bytes():
    """The budget counts the library's arrays (nbytes; device memory for CuPy):
    the argument's adjoint reserves, ten states held around the sweep, a step
    taken as four states (tracemalloc sees host memory only), and the rest buys
    snapshots: 20 - 14 = 6."""
    h0 = da.zeros((64, 256))
    W = da.full((256, 256), 0.01)
    loop = CheckpointedLoop(40, memory_budget=4 * W.nbytes + 20 * h0.nbytes)
    h = loop.forward(lambda t, h, W: np.tanh(h @ W + 0.1), h0, W)
    assert isinstance(h, da.Array) and loop.used_snapshots == 6
    loop.close()


def test_float32_dask_arrays_keep_their_dtype():
    f, args, wrt = PROBLEMS["rnn"]
    args32 = tuple(a.astype(np.float32) if isinstance(a, np.ndarray) else a for a in args)
    grad = tc.grad(f, wrt=wrt)
    want = grad(*args32)
    got = grad(*on_dask(args32))
    assert [g.dtype for g in got] == [np.float32, np.float32]
    assert all(np.array_equal(g, w) for g, w in zip(host_values(got), want))


class Recurrent:
    def __init__(self, W, b):
        self.W, self.b = W, b

    def loss(self, h, n):
        for t in range(n):
            h = np.tanh(h @ self.W + self.b)
        return np.sum(h)


def test_a_method_of_an_object_holding_dask_arrays():
    _, (h0, W, b, n), _ = PROBLEMS["rnn"]
    model = Recurrent(da.from_array(W), da.from_array(b))
    # only the bound object holds Dask arrays: the gradient is compiled for Dask
    got = tc.grad_with_checkpointing(model.loss, wrt=0, snapshots=2)(h0, n)
    assert isinstance(got, da.Array)
    want = tc.grad(Recurrent(W, b).loss, wrt=0)(h0, n)
    assert_same_gradient((got,), (want,))


def tanh_scaled(x, s):
    return np.sum(np.tanh(x * s))


def test_a_float_arguments_gradient_stays_a_lazy_dask_array():
    """A float argument's gradient is a NumPy float64 (tests/test_api.py), but
    beside Dask arrays it stays Dask's 0-d array: a NumPy scalar would compute
    the graph now."""
    x = np.linspace(0.0, 1.0, 6)
    with Computes() as computes:
        gx, gs = tc.grad(tanh_scaled, wrt=(0, 1))(da.from_array(x, chunks=3), 0.7)
    assert computes.count == 0 and isinstance(gs, da.Array) and gs.shape == ()
    want = tc.grad(tanh_scaled, wrt=1)(x, 0.7)
    assert type(want) is np.float64
    assert abs(float(gs.compute()) - want) <= 1e-12 * abs(want)
