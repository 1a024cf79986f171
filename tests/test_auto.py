"""grad(f, checkpoint="auto", memory_budget=...): the budget shared at run time."""

import tracemalloc

import numpy as np
import pytest

import tangent_ckpt as tc

RNG = np.random.default_rng(5)
H = RNG.standard_normal((64, 64))
W = RNG.standard_normal((64, 64)) * 0.1
B = RNG.standard_normal(64) * 0.1


def close(a, b, tol=1e-12):
    for x, y in zip(a, b):
        np.testing.assert_allclose(x, y, rtol=tol, atol=tol)


def two_loops(h, W, b, n):
    for t in range(n):
        h = np.tanh(h @ W + b)
    g = h
    for t in range(n):
        g = np.sin(g @ W) + g
    return np.sum(g)


def block(x, W):
    for k in range(8):
        x = np.tanh(x @ W) + x
    return x


def with_segment(h, W, b, n):
    h = tc.checkpoint(block, h, W)
    for t in range(n):
        h = np.tanh(h @ W + b)
    return np.sum(h)


def _peak(df, *args):
    df(*args)
    tracemalloc.start()
    try:
        df(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("budget", ["900kB", "1MB", "4MB"])
def test_auto_matches_and_stays_under_budget(budget):
    want = tc.grad(two_loops, wrt=(1, 2))(H, W, B, 60)
    df = tc.grad(two_loops, wrt=(1, 2), checkpoint="auto", memory_budget=budget)
    close(df(H, W, B, 60), want)
    from tangent_ckpt.runtime.loops.driver import parse_memory
    assert _peak(df, H, W, B, 60) <= parse_memory(budget)


def test_auto_keeps_every_state_when_they_fit():
    df = tc.grad(two_loops, wrt=(1,), checkpoint="auto", memory_budget="100MB")
    with tc.profile() as prof:
        df(H, W, B, 30)
    for st in prof.loops.values():
        assert st.forward_steps == 30  # no replays: the sweep only
    assert len(prof.notes) == 2 and all("keeps every state" in n for n in prof.notes)


def test_auto_with_small_budget_recomputes_and_reports():
    df = tc.grad(two_loops, wrt=(1,), checkpoint="auto", memory_budget="900kB")
    with tc.profile() as prof:
        df(H, W, B, 60)
    # each loop's reverse sweep replays steps from its snapshots
    assert all(st.steps_recomputed == st.forward_steps - st.steps > 0
               for st in prof.loops.values())
    assert "auto: loop" in prof.report()


def test_choice_is_written_in_the_source():
    src = tc.grad(two_loops, wrt=(1,), checkpoint="auto", memory_budget="1MB").source
    assert "# auto: memory_budget 1000000 bytes" in src
    assert "rt.MemoryPlan(1000000, loops=2)" in src and "plan=plan" in src


def test_segments_in_auto_mode():
    want = tc.grad(with_segment, wrt=(0, 1))(H, W, B, 10)
    for budget, recomputed in (("100MB", 0), ("900kB", 1)):
        df = tc.grad(with_segment, wrt=(0, 1), checkpoint="auto", memory_budget=budget)
        with tc.profile() as prof:
            close(df(H, W, B, 10), want)
        seg = [st for name, st in prof.loops.items() if name.startswith("segment")][0]
        assert seg.steps_recomputed == recomputed, prof.notes


def test_budget_that_cannot_be_met_is_a_clear_error():
    df = tc.grad(two_loops, wrt=(1,), checkpoint="auto", memory_budget="10kB")
    with tc.profile() as prof:
        with pytest.raises(tc.CheckpointError, match="raise the budget"):
            df(H, W, B, 60)
    assert prof.forward_steps == 0  # raised before any step ran


def test_auto_needs_a_budget():
    with pytest.raises(tc.CheckpointError, match="memory_budget"):
        tc.grad(two_loops, checkpoint="auto")(H, W, B, 3)
