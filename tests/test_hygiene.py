"""Resource hygiene: no memory growth, no temporary files left, inputs never mutated."""

import gc
import os
import sys
import tempfile
import tracemalloc
import weakref

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

sys.path.insert(0, os.path.dirname(__file__))

import tangent_ckpt as tc  # noqa: E402
from tangent_ckpt import api  # noqa: E402
from program_strategy import checkpoint_options, make_inputs, programs  # noqa: E402
from test_fuzz import REGRESSIONS, check_program, digest  # noqa: E402


def rnn(h, W, b, n):
    for t in range(n):
        h = np.tanh(h @ W + b)
    return np.sum(h)


def rnn_while(h, W, n):
    k = 0
    while k < n:
        h = np.tanh(h @ W)
        k = k + 1
    return np.sum(h)


def args(n=12):
    rng = np.random.default_rng(0)
    return rng.normal(size=4) * 0.3, rng.normal(size=(4, 4)) * 0.3, rng.normal(size=4) * 0.1, n


GRADIENTS = {
    "taped": lambda: tc.grad(rnn, wrt=(1, 2)),
    "revolve": lambda: tc.grad(rnn, wrt=(1, 2), checkpoint=True, snapshots=3),
    "uniform": lambda: tc.grad(rnn, wrt=(1, 2), checkpoint=True, snapshots=6, schedule="uniform"),
    "online": lambda: tc.grad(rnn, wrt=(1, 2), checkpoint=True, snapshots=2, schedule="online"),
    "budget": lambda: tc.grad(rnn, wrt=(1, 2), checkpoint=True, memory_budget="64kB"),
    "verify": lambda: tc.grad(rnn, wrt=(1, 2), checkpoint=True, snapshots=2, verify=True),
}


def _traced_growth(call, warmup=30, repeats=1000):
    for _ in range(warmup):
        call()
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for _ in range(repeats):
            call()
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("kind", sorted(GRADIENTS))
def test_thousand_gradient_calls_do_not_grow_memory(kind):
    df = GRADIENTS[kind]()
    a = args(6)
    repeats = 1000 if kind in ("taped", "revolve") else 250
    growth = _traced_growth(lambda: df(*a), repeats=repeats)
    assert growth < 16_000, f"{kind}: {growth} bytes retained after {repeats} gradient calls"


def test_thousand_gradient_objects_hit_the_cache_and_do_not_grow_memory():
    a = args(3)
    growth = _traced_growth(lambda: tc.grad(rnn, wrt=(1, 2), checkpoint=True, snapshots=2)(*a),
                            repeats=500)
    assert growth < 16_000, growth


def test_profiled_calls_do_not_grow_memory():
    df = GRADIENTS["revolve"]()
    a = args()

    def call():
        with tc.profile():
            df(*a)
    assert _traced_growth(call, repeats=200) < 16_000


def test_compiled_gradients_of_dead_functions_are_released():
    """The compile cache is weak in the function: closures made in a loop (or the
    fuzzer's temporary modules) do not accumulate compiled code and linecache text."""
    def make(scale):
        def loss(x, n):
            for t in range(n):
                x = np.tanh(x * scale)
            return np.sum(x)
        return loss

    refs = []
    lines_before = sum(1 for k in __import__("linecache").cache if str(k).startswith("<tangent_ckpt"))
    for k in range(20):
        fn = make(0.5 + k / 100)
        tc.grad(fn, checkpoint=True, snapshots=2)(np.ones(3), 4)
        refs.append(weakref.ref(fn))
        del fn
    gc.collect()
    assert sum(r() is not None for r in refs) == 0
    lines_after = sum(1 for k in __import__("linecache").cache if str(k).startswith("<tangent_ckpt"))
    assert lines_after <= lines_before
    assert all(r() not in api._CACHE for r in refs)


# ---------------------------------------------------------------- temporary files

@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """Point tempfile at an empty folder so that every file made there is ours."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


class Trip:
    """A black box (with a registered adjoint) that raises on its k-th call."""
    calls = 0
    limit = None
    error = KeyboardInterrupt


def tripwire(x):
    Trip.calls += 1
    if Trip.limit is not None and Trip.calls == Trip.limit:
        raise Trip.error(f"call {Trip.calls}")
    return x * 1.0


tc.register_adjoint(tripwire, lambda g, ans, x: (g,))


def tripping(x, W, n):
    for t in range(n):
        x = np.tanh(tripwire(x) @ W)
    y = tripwire(x)
    return np.sum(y)


def tripping_while(x, W, n):
    k = 0
    while k < n:
        x = np.tanh(tripwire(x) @ W)
        k = k + 1
    return np.sum(x)


N = 10


def _run(fn, limit, error=KeyboardInterrupt, **options):
    Trip.calls, Trip.limit, Trip.error = 0, limit, error
    x, W = np.full(3, 0.2), np.eye(3) * 0.5
    try:
        return tc.grad(fn, wrt=(0, 1), checkpoint=True, disk_snapshots=2, **options)(x, W, N)
    finally:
        Trip.limit = None


DISK_OPTIONS = [dict(snapshots=1), dict(snapshots=2, schedule="online"),
                dict(snapshots=1, verify=True)]


@pytest.mark.parametrize("options", DISK_OPTIONS)
def test_no_temporary_files_after_success(private_tmp, options):
    for fn in (tripping, tripping_while):
        _run(fn, None, **options)
        assert Trip.calls > N  # the reverse sweep ran
        assert list(private_tmp.iterdir()) == []


def _total_calls(fn, options):
    _run(fn, None, **options)
    return Trip.calls


@pytest.mark.parametrize("error", [KeyboardInterrupt, ValueError])
@pytest.mark.parametrize("options", DISK_OPTIONS)
@pytest.mark.parametrize("fn", [tripping, tripping_while])
def test_no_temporary_files_after_an_exception_anywhere(private_tmp, error, options, fn):
    """The step raises on call k for every k: in the forward sweep, between the
    loop's forward() and reverse() (the call after the loop), and in the middle
    of the reverse sweep.  The snapshot folder is gone as soon as the exception
    leaves the gradient, while its traceback is still alive."""
    total = _total_calls(fn, options)
    assert list(private_tmp.iterdir()) == []
    for limit in range(1, total + 1):
        with pytest.raises(error) as info:
            _run(fn, limit, error, **options)
        assert f"call {limit}" in str(info.value)
        assert info.traceback  # still alive here
        assert list(private_tmp.iterdir()) == [], f"files left after a {error.__name__} at call {limit}"


def test_gradient_works_again_after_keyboard_interrupt(private_tmp):
    with pytest.raises(KeyboardInterrupt):
        _run(tripping, 2 * N, snapshots=1)
    got = _run(tripping, None, snapshots=1)
    Trip.calls = 0
    want = tc.grad(tripping, wrt=(0, 1))(np.full(3, 0.2), np.eye(3) * 0.5, N)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    assert list(private_tmp.iterdir()) == []


# ---------------------------------------------------------------- inputs never mutated

@pytest.mark.parametrize("name", sorted(REGRESSIONS))
def test_regression_corpus_never_mutates_inputs(name):
    source, seed, n, wrt, options = REGRESSIONS[name]
    for opts in (options, dict(options, schedule="online", snapshots=1)):
        check_program(source, seed, n, wrt, opts, fd=False)  # hashes inputs before/after


@settings(max_examples=40, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs(), checkpoint_options())
def test_fuzz_corpus_never_mutates_inputs(prog, options):
    """Hash every input before and after the function, the taped and the
    checkpointed gradient (programs with `v[i] = ...` and `v += ...`, loops)."""
    inputs = make_inputs(prog.seed, prog.n)
    before = digest(inputs)
    check_program(prog.source, prog.seed, prog.n, prog.wrt, options, fd=False)
    assert digest(make_inputs(prog.seed, prog.n)) == before
