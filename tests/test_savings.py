"""Savings figures are checked against schedule simulations, not against constants."""

import numpy as np
import pytest

import tangent_ckpt as tc
from tangent_ckpt.runtime.scheduling.schedules import ADVANCE, FIRST_TURN, REVERSE, STORE, FREE, revolve, uniform


def simulate_memory(actions, n):
    """(plain steps, peak snapshots) by running the action stream."""
    held, peak, adv = 0, 0, 0
    for a in actions:
        if a.kind == ADVANCE:
            adv += a.n
        elif a.kind == STORE:
            held += 1
            peak = max(peak, held)
        elif a.kind == FREE:
            held -= 1
    return adv, peak


@pytest.mark.parametrize("n,s", [(1000, 31), (100, 5), (37, 36), (500, 1), (2, 1), (10_000, 20)])
def test_revolve_savings_match_simulation(n, s):
    d = tc.get_memory_savings(n, s)
    adv, peak = simulate_memory(revolve(n, s), n)
    assert d["num_checkpoints"] == s
    assert d["without_checkpointing"] == n
    assert d["with_checkpointing"] == peak + 1
    assert d["recomputation_factor"] == pytest.approx((adv + n) / n)
    assert d["savings_percent"] == pytest.approx(100 * (1 - (peak + 1) / n))
    assert d["savings_ratio"] == pytest.approx(n / (peak + 1))


@pytest.mark.parametrize("n,s", [(1000, 31), (100, 10), (64, 8)])
def test_uniform_savings_match_simulation(n, s):
    d = tc.get_memory_savings(n, s, schedule="uniform")
    every = -(-n // s)
    adv, peak = simulate_memory(uniform(n, every), n)
    assert d["with_checkpointing"] == peak + 1
    assert d["recomputation_factor"] == pytest.approx((adv + n) / n)


def test_the_popular_guide_is_wrong_for_1000_steps_31_checkpoints():
    rev, uni = (tc.estimate_checkpoint_savings(1000, 31)[k] for k in ("revolve", "uniform"))
    # recomputation is nowhere near 32x with either scheme
    assert rev["recomputation_factor"] < 4 and uni["recomputation_factor"] < 3
    # the sqrt(n) scheme also holds a segment tape: about twice the memory of 31 snapshots
    assert uni["with_checkpointing"] > 1.8 * rev["with_checkpointing"]


def test_tape_size_parameter():
    d = tc.get_memory_savings(100, 5, tape_size=3.0)
    adv, peak = simulate_memory(revolve(100, 5), 100)
    assert d["without_checkpointing"] == 300 and d["with_checkpointing"] == peak + 3


def test_checkpoint_positions_and_loop():
    n, s = 200, 6
    pos = tc.compute_checkpoint_positions(n, s)
    stores = []
    for a in revolve(n, s):
        if a.kind == FIRST_TURN:
            break
        if a.kind == STORE:
            stores.append(a.pos)
    assert pos == stores and pos[0] == 0 and len(pos) <= s
    calls = []

    def f(x):
        calls.append(1)
        return x * 1.01 + 1.0

    x0 = np.ones(3)
    final, ckpts = tc.checkpointed_loop(f, x0, n, s)
    ref = x0.copy()
    states = [ref]
    for _ in range(n):
        ref = f(ref)
        states.append(ref)
    assert len(calls) == 2 * n
    assert np.array_equal(final, states[-1])
    assert sorted(ckpts) == pos
    for p, st in ckpts.items():
        assert np.array_equal(st, states[p])


def test_defaults_and_should_checkpoint():
    d = tc.get_memory_savings(1000)
    assert d["num_checkpoints"] == tc.runtime.schedules.default_snapshots(1000)
    assert d["recomputation_factor"] <= 4
    assert tc.should_checkpoint(1000) is True
    assert tc.should_checkpoint(2) is False
    assert tc.get_memory_savings(0)["with_checkpointing"] == 0


def test_snapshots_close_to_steps_do_not_recurse():
    # issue 11: get_memory_savings(500, 499) died with RecursionError
    d = tc.get_memory_savings(500, 499)
    assert d["peak_snapshots"] == 499 and d["forward_steps"] == 499
    assert tc.get_memory_savings(50_000, 49_999)["peak_snapshots"] == 49_999
