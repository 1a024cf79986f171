"""runtime/jit/numba_sweep.py and the compiled sweeps of backend="numba": the schedule as
an integer array (exactly Revolve's actions and counts), snapshot buffers, and
the whole sweep run compiled -- the NumPy backend's gradient and profiler counts,
or the Python driver where the compiled sweep does not apply."""

import importlib.util
import os
import tempfile
import warnings

import numpy as np
import pytest

import tangent_ckpt as tc
from tangent_ckpt.runtime.jit import numba_sweep
from tangent_ckpt.runtime.jit.numba_backend import NumbaFallbackWarning
from tests import numba_problems
from tests.numba_problems import private_cache  # noqa: F401  (autouse fixture)
from tangent_ckpt.runtime.scheduling.schedules import revolve_cost, revolve_peak

COUNTED = ("forward_steps", "recorded_steps", "snapshots_stored", "peak_snapshots",
           "peak_snapshot_bytes")


@pytest.mark.parametrize("n, s", [(2, 1), (7, 3), (100, 4), (1000, 10), (333, 40)])
def test_a_plan_counts_revolves_optimal_plain_steps_and_its_peak(n, s):
    plan = numba_sweep.sweep_plan("revolve", n, s)
    assert plan.forward["forward_steps"] + plan.reverse["forward_steps"] == \
        revolve_cost(n, s)[1] + 1
    assert plan.peak == revolve_peak(n, s) and plan.slots <= s
    assert plan.codes[plan.turn, 0] == numba_sweep.CODES["first_turn"]
    assert (plan.codes[:, 0] == numba_sweep.CODES["reverse"]).sum() == n - 1
    assert plan is numba_sweep.sweep_plan("revolve", n, s)  # made once


@pytest.mark.parametrize("state, fits", [
    (np.zeros(3), True), (1.5, True), ((np.zeros(3), 2.0, np.ones((2, 2))), True),
    (np.zeros(3, dtype=np.int64), False), (((np.zeros(3),),), False), ([np.zeros(3)], False),
    (np.float64(2.0), True), (3, False), ((), False)])
def test_only_float_arrays_floats_and_flat_tuples_of_them_fit_the_buffers(state, fits):
    assert numba_sweep.fits(state) is fits


def test_buffers_keep_copies_and_restore_fresh_ones():
    state = (np.arange(3.0), 2.5)
    buffers = numba_sweep.snapshot_buffers(state, 2)
    numba_sweep.store_snapshot(buffers, 1, state)
    state[0][0] = 99.0
    back = numba_sweep.restore_snapshot(buffers, 1, state)
    assert back[0].tolist() == [0.0, 1.0, 2.0] and back[1] == 2.5
    back[0][1] = -1.0
    assert numba_sweep.restore_snapshot(buffers, 1, state)[0][1] == 1.0
    single = numba_sweep.snapshot_buffers(np.ones(2), 1)
    numba_sweep.store_snapshot(single, 0, np.ones(2))
    assert isinstance(numba_sweep.restore_snapshot(single, 0, np.ones(2)), np.ndarray)


# ----------------------------------------------------------------- compiled (needs Numba)

needs_numba = pytest.mark.skipif(importlib.util.find_spec("numba") is None,
                                 reason="the numba extra is not installed")

CASES = numba_problems.cases(np.random.default_rng(0))
_close = numba_problems.close


def _run(fn, args, wrt, **options):
    with tc.profile() as prof:
        grads = tc.grad(fn, wrt=wrt, checkpoint=True, **options)(*args)
    return grads, {k: getattr(prof, k) for k in COUNTED}


def _sweeps_compiled(df):
    sweeps = [f for n, f in df.backend_report.functions.items() if n.endswith("_sweep")]
    return bool(sweeps) and all(f.fallback is None and f.dispatcher.overloads for f in sweeps)


@needs_numba
@pytest.mark.parametrize("name, fn, args, wrt, options", CASES, ids=[c[0] for c in CASES])
def test_compiled_sweep_gives_the_numpy_backends_gradient_and_counts(name, fn, args, wrt,
                                                                     options):
    want, want_counts = _run(fn, args, wrt, **options)
    df = tc.grad(fn, wrt=wrt, checkpoint=True, backend="numba", **options)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumbaFallbackWarning)
        with tc.profile() as prof:
            got = df(*args)
    _close(got, want)
    assert {k: getattr(prof, k) for k in COUNTED} == want_counts
    if name != "branchy":  # a loop with break runs the online schedule: the Python driver
        assert _sweeps_compiled(df)
        steps = args[-1] if name != "lorenz96" else args[2]
        assert prof.forward_steps == revolve_cost(steps, options["snapshots"])[1] + 1


@needs_numba
def test_the_sweep_replays_exactly_revolves_optimum_on_a_long_loop():
    fn = numba_problems.heat_loss
    u0 = np.linspace(0.0, 1.0, 16)
    args = (u0, np.full(16, 0.2), 0.5 * u0, 1000)
    want, counts = _run(fn, args, (0, 1), snapshots=7)
    got, got_counts = _run(fn, args, (0, 1), snapshots=7, backend="numba")
    _close(got, want)
    assert got_counts == counts
    assert got_counts["forward_steps"] == revolve_cost(1000, 7)[1] + 1
    assert got_counts["recorded_steps"] == 1000


@needs_numba
def test_the_uniform_schedule_runs_compiled_with_the_numpy_backends_counts():
    name, fn, args, wrt, options = CASES[0]
    want, counts = _run(fn, args, wrt, schedule="uniform", snapshots=30)
    df = tc.grad(fn, wrt=wrt, checkpoint=True, backend="numba", schedule="uniform",
                 snapshots=30)
    with tc.profile() as prof:
        got = df(*args)
    _close(got, want)
    assert {k: getattr(prof, k) for k in COUNTED} == counts
    assert _sweeps_compiled(df)


@needs_numba
@pytest.mark.parametrize("options", [dict(memory_budget="50MB"), dict(schedule="online"),
                                     dict(snapshots=5, verify=True)],
                         ids=["memory_budget", "online", "verify"])
def test_where_the_compiled_sweep_does_not_apply_the_python_driver_runs_silently(options):
    name, fn, args, wrt, _ = CASES[0]
    want, counts = _run(fn, args, wrt, **options)
    df = tc.grad(fn, wrt=wrt, checkpoint=True, backend="numba", **options)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumbaFallbackWarning)
        got = df(*args)
    _close(got, want)
    assert not _sweeps_compiled(df)


@needs_numba
def test_an_adjoint_step_without_a_sweep_reverses_in_python_from_the_buffers():
    name, fn, args, wrt, options = CASES[0]
    want, counts = _run(fn, args, wrt, **options)
    df = tc.grad(fn, wrt=wrt, checkpoint=True, backend="numba", **options)
    namespace = df.compile().namespace
    adjoint = next(v for k, v in namespace.items() if k.endswith("_adjoint"))
    sweep = adjoint.sweep
    del adjoint.sweep
    try:
        with tc.profile() as prof:
            got = df(*args)
    finally:
        adjoint.sweep = sweep
    _close(got, want)
    assert {k: getattr(prof, k) for k in COUNTED} == counts


@needs_numba
def test_a_state_the_buffers_cannot_hold_runs_the_python_driver():
    def counting(x, n):
        c = np.zeros(2, dtype=np.int64)
        for t in range(n):
            x = np.sin(x) * 1.01
            c = c + 1
        return np.sum(x) + np.sum(c)
    x = np.linspace(0.1, 0.9, 5)
    want, counts = _run(counting, (x, 50), 0, snapshots=4)
    got, got_counts = _run(counting, (x, 50), 0, snapshots=4, backend="numba")
    _close(got, want)
    assert got_counts == counts


@needs_numba
def test_the_compiled_sweep_leaves_no_files_behind():
    before = set(os.listdir(tempfile.gettempdir()))
    name, fn, args, wrt, options = CASES[0]
    tc.grad(fn, wrt=wrt, checkpoint=True, backend="numba", **options)(*args)
    assert {f for f in set(os.listdir(tempfile.gettempdir())) - before
            if f.startswith("tangent_ckpt")} == set()
