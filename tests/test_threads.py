"""Thread safety: concurrent gradients (first compilation included) and per-thread profilers."""

import os
import sys
import threading

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))

import tangent_ckpt as tc  # noqa: E402
from tangent_ckpt import api  # noqa: E402
from gradcheck import numeric_grad  # noqa: E402


def rnn(h, W, b, n):
    for t in range(n):
        h = np.tanh(h @ W + b)
    return np.sum(h)


def heat(u, alpha, steps):
    for t in range(steps):
        u = u + alpha * (np.roll(u, 1) + np.roll(u, -1) - 2.0 * u)
    return np.sum(u * u)


def running(x, w, n):
    cost = 0.0
    k = 0
    while k < n:
        x = np.sin(x * w) + 0.1
        cost = cost + np.sum(x * x)
        k = k + 1
    return cost


def data():
    rng = np.random.default_rng(1)
    return {
        rnn: ((rng.normal(size=3) * 0.3, rng.normal(size=(3, 3)) * 0.4, rng.normal(size=3) * 0.1, 17),
              (1, 2)),
        heat: ((rng.uniform(size=6), 0.2, 13), (0, 1)),
        running: ((rng.normal(size=4) * 0.5, 0.7, 11), (0, 1)),
    }


def run_threads(workers):
    """Start every worker at once (a barrier) and re-raise the first error."""
    barrier = threading.Barrier(len(workers))
    errors = []

    def wrap(fn):
        def run():
            try:
                barrier.wait()
                fn()
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)
        return run
    threads = [threading.Thread(target=wrap(w)) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    if errors:
        raise errors[0]


def _forget(fn):
    with api._LOCK:
        api._CACHE.pop(fn, None)


OPTIONS = [dict(), dict(checkpoint=True, snapshots=2), dict(checkpoint=True, schedule="online",
                                                            snapshots=2, disk_snapshots=1),
           dict(checkpoint=True, memory_budget="1MB")]


@pytest.mark.parametrize("round_", range(3))
def test_concurrent_first_compilation_and_gradients(round_):
    """Six threads (three functions x two option sets) compile for the first time
    at the same moment, then call their gradients 30 times each, interleaved."""
    cases = data()
    expected = {fn: numeric_grad(fn, args, wrt) for fn, (args, wrt) in cases.items()}
    results = {}
    workers = []
    for fn in cases:
        _forget(fn)
        for k, opts in enumerate(OPTIONS[round_:round_ + 2]):
            def work(fn=fn, opts=opts, k=k):
                args, wrt = cases[fn]
                df = tc.grad(fn, wrt=wrt, **opts)
                results[fn, k] = [df(*args) for _ in range(30)]
            workers.append(work)
    run_threads(workers)
    for (fn, k), got in results.items():
        for g in got:
            for a, e in zip(g, expected[fn]):
                np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-7, err_msg=fn.__name__)
            for a, b in zip(g, got[0]):
                np.testing.assert_array_equal(a, b)  # every call in every thread identical


def test_same_function_compiled_by_many_threads_at_once_is_compiled_once():
    _forget(rnn)
    args, wrt = data()[rnn]
    out = []

    def work():
        df = tc.grad(rnn, wrt=wrt, checkpoint=True, snapshots=3)
        out.append((df.compile(), df(*args)))
    run_threads([work] * 8)
    compiled = {id(c) for c, _ in out}
    assert len(compiled) == 1
    for _, g in out:
        for a, b in zip(g, out[0][1]):
            np.testing.assert_array_equal(a, b)


def _profile(fn, args, wrt, **opts):
    with tc.profile() as prof:
        tc.grad(fn, wrt=wrt, checkpoint=True, **opts)(*args)
    return prof


COUNTS = ("forward_steps", "recorded_steps", "verify_steps", "snapshots_stored",
          "peak_snapshots", "runs", "steps", "disk_bytes_written")


def test_profilers_in_different_threads_do_not_mix_counts():
    cases = data()
    plans = [(rnn, dict(snapshots=2)), (heat, dict(snapshots=3, verify=True)),
             (running, dict(snapshots=2, disk_snapshots=1, schedule="online")),
             (rnn, dict(snapshots=6, schedule="uniform"))]
    serial = {}
    for k, (fn, opts) in enumerate(plans):
        args, wrt = cases[fn]
        p = _profile(fn, args, wrt, **opts)
        serial[k] = {f: getattr(p, f) for f in COUNTS}
        assert serial[k]["forward_steps"] > 0
    got = {}

    def worker(k):
        fn, opts = plans[k]
        args, wrt = cases[fn]

        def work():
            with tc.profile() as outer:  # a profiler per thread, around 20 runs
                for _ in range(20):
                    p = _profile(fn, args, wrt, **opts)
                    assert {f: getattr(p, f) for f in COUNTS} == serial[k]
            got[k] = outer
        return work
    run_threads([worker(k) for k in range(len(plans))])
    for k, outer in got.items():
        for f in ("forward_steps", "recorded_steps", "snapshots_stored", "runs"):
            assert getattr(outer, f) == 20 * serial[k][f], (k, f)
        assert set(outer.loops) == set(_profile(plans[k][0], *cases[plans[k][0]],
                                                **plans[k][1]).loops)
        tape = outer.tape_bytes_per_step
        assert tape is None or tape > 0


def test_a_profiler_in_one_thread_sees_nothing_from_another():
    args, wrt = data()[rnn]
    started, done = threading.Event(), threading.Event()
    seen = {}

    def quiet():
        with tc.profile() as prof:
            started.set()
            done.wait(30)
        seen["quiet"] = prof.forward_steps, dict(prof.loops)

    def busy():
        started.wait(30)
        for _ in range(10):
            tc.grad(rnn, wrt=wrt, checkpoint=True, snapshots=2)(*args)
        done.set()
    run_threads([quiet, busy])
    assert seen["quiet"] == (0, {})
