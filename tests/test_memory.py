"""Measured working memory (runtime/memory.py) and the promise it keeps: under
``memory_budget=B`` the tracemalloc peak of a gradient call never exceeds B, for
every step shape, or the call is refused before its sweep starts."""

import gc
import os
import sys
import tracemalloc

import numpy as np
import pytest

import tangent_ckpt as tc
from tangent_ckpt.runtime.memory import peak_of

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir))
from examples import heat_equation, lorenz96, lstm, rnn  # noqa: E402


def test_peak_of_measures_a_call():
    result, peak = peak_of(lambda: np.ones(100_000).sum())
    assert result == 100_000.0
    assert 800_000 <= peak < 900_000
    assert not tracemalloc.is_tracing()


def test_peak_of_under_a_callers_tracing_keeps_its_peak():
    tracemalloc.start()
    try:
        big = np.ones(500_000)  # raises the caller's peak to 4 MB
        del big
        _, peak = peak_of(lambda: np.ones(1000))
        # the caller's peak is not reset, and the call's peak is bounded above
        assert tracemalloc.get_traced_memory()[1] >= 4_000_000
        assert 8000 <= peak
        _, peak = peak_of(lambda: np.ones(1_000_000))
        assert 8_000_000 <= peak < 8_100_000  # exact once the call raises the peak
    finally:
        tracemalloc.stop()


def _peak(df, args):
    gc.collect()
    tracemalloc.start()
    try:
        result = df(*args)
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def containers(h, W, n):
    """A list as the loop state."""
    s = [h, 0.5 * h, h]
    for t in range(n):
        a = np.tanh(s[0] @ W)
        s = [a, s[1] + a, 0.9 * s[2]]
    return np.sum(s[0]) + np.sum(s[1] * s[2])


RNG = np.random.default_rng(0)
SHAPES = {
    # slice updates: u[1:-1] = ...
    "heat": (heat_equation.misfit, (0, 1), heat_equation.make_inputs(20_000, 60)),
    # np.roll inside RK4 helpers
    "lorenz96": (lorenz96.loss, (0, 1), lorenz96.make_inputs(8_000, 60, 0.004)),
    # matmul
    "rnn": (rnn.loss, (1, 2), (RNG.standard_normal((32, 128)),
                               RNG.standard_normal((128, 128)) / 12,
                               RNG.standard_normal(128), 60)),
    # a tuple state (h, c)
    "lstm": (lstm.loss, (1, 2), lstm.make_inputs(60, 32, 16, 32)),
    # a container (list) state
    "containers": (containers, (1,), (RNG.standard_normal((64, 128)),
                                      RNG.standard_normal((128, 128)) / 12, 60)),
}
BUDGETS = ["1MB", "2MB", "5MB", "6MB", "8MB"]


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_memory_budget_holds_for_every_step_shape(shape):
    fn, wrt, args = SHAPES[shape]
    taped = tc.grad(fn, wrt=wrt)(*args)
    ran, replayed = [], []
    for budget in BUDGETS:
        df = tc.grad_with_checkpointing(fn, wrt=wrt, memory_budget=budget)
        df.compile()
        try:
            with tc.profile() as prof:
                got, peak = _peak(df, args)
        except tc.CheckpointError as e:
            assert "cannot hold one snapshot" in str(e)
            continue
        if prof.peak_snapshots < prof.steps:  # not every state fit: steps were replayed
            replayed.append(budget)
        assert peak <= tc.runtime.parse_memory(budget), (shape, budget, peak)
        for g, t in zip(got, taped):  # wrt is a tuple: so are the gradients
            np.testing.assert_allclose(g, t, rtol=1e-10, atol=1e-12)
        ran.append(budget)
    assert ran and replayed, f"{shape}: ran under {ran}, replayed steps under {replayed}"
