"""Every schedule is executed by a small simulator that checks it reverses each step
exactly once in reverse order, never holds more snapshots than allowed, and runs the
number of plain forward steps of the closed form AND of an independent DP oracle."""

import itertools
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tangent_ckpt.runtime.scheduling.schedules import (
    ADVANCE, FIRST_TURN, FREE, RESTORE, REVERSE, STORE, FreeSlots, beta, default_snapshots,
    repetition_number, revolve, revolve_cost, revolve_peak, uniform, uniform_cost,
)


def simulate(actions, n, max_slots=None):
    """Execute an action stream; return (plain forward steps, peak snapshots, first-sweep stores)."""
    pos, snaps, adv, peak, expected = 0, {}, 0, 0, n - 1
    first_turn_seen = False
    for a in actions:
        if a.kind == ADVANCE:
            assert pos is not None and a.pos == pos and a.n >= 1
            pos += a.n
            adv += a.n
            assert pos <= n - 1, "advanced past the last step"
        elif a.kind == STORE:
            assert pos == a.pos and a.slot not in snaps
            if max_slots is not None:
                assert 0 <= a.slot < max_slots
            snaps[a.slot] = pos
            peak = max(peak, len(snaps))
        elif a.kind == RESTORE:
            assert snaps[a.slot] == a.pos
            pos = a.pos
        elif a.kind == FREE:
            assert snaps.pop(a.slot) == a.pos
        else:
            assert a.kind in (FIRST_TURN, REVERSE)
            assert (a.kind == FIRST_TURN) == (not first_turn_seen), "FIRST_TURN must come first, once"
            first_turn_seen = True
            assert pos == a.pos == expected, f"reversed {a.pos}, expected {expected}"
            expected -= 1
            pos = None  # the working state is consumed by the reversal
    assert expected == -1, "not every step was reversed"
    assert not snaps, "snapshots left behind"
    if max_slots is not None:
        assert peak <= max_slots
    return adv, peak


N_MAX, S_MAX = 300, 12


@pytest.fixture(scope="module")
def dp():
    """F[n, s]: least plain forward steps to reverse n steps with s snapshots (one of them
    holding the start).  To reverse n >= 2 steps: advance m steps (cost m), keep a
    snapshot there and reverse the last n - m steps with the s - 1 other snapshots,
    then restore the start and reverse the first m steps with all s.  A range of one
    step is reversed from the working state (F[1, s] = 0, even for s = 0)."""
    INF = 10**15
    F = np.full((N_MAX + 1, S_MAX + 1), INF, dtype=np.int64)
    F[1, :] = 0
    for s in range(1, S_MAX + 1):
        for n in range(2, N_MAX + 1):
            m = np.arange(1, n)
            F[n, s] = (m + F[n - m, s - 1] + F[m, s]).min()
    return F


def test_dp_matches_closed_form(dp):
    for n in range(1, N_MAX + 1):
        for s in range(1, S_MAX + 1):
            assert dp[n, s] == revolve_cost(n, s)[1], (n, s)


def test_closed_form_corner_cases():
    for n in range(2, 60):
        assert revolve_cost(n, 1)[1] == n * (n - 1) // 2
        for s in range(n - 1, n + 3):
            assert revolve_cost(n, s) == (1, n - 1, 2 * n - 1)
    assert revolve_cost(0, 3) == (0, 0, 0) and revolve_cost(1, 3) == (0, 0, 1)


def test_revolve_exhaustive(dp):
    # every (n, s) with n <= 300, s <= 12, simulated action by action
    for n in range(0, N_MAX + 1):
        for s in range(1, S_MAX + 1):
            adv, peak = simulate(revolve(n, s), n, max_slots=s)
            if n:
                assert adv == revolve_cost(n, s)[1] == dp[n, s], (n, s)
            assert peak == revolve_peak(n, s)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 100_000), s=st.integers(1, 64))
def test_revolve_random_large(n, s):
    r, a, t = revolve_cost(n, s)
    if a > 3_000_000:  # keep the suite fast: tiny s with huge n is quadratic
        return
    adv, peak = simulate(revolve(n, s), n, max_slots=s)
    assert adv == a and t == a + n
    assert beta(s, r) >= n and (r == 0 or beta(s, r - 1) < n)


def test_each_step_replayed_at_most_r_times():
    for n, s in [(100, 3), (57, 5), (300, 2), (1000, 10)]:
        r = revolve_cost(n, s)[0]
        count = np.zeros(n, dtype=int)
        for a in revolve(n, s):
            if a.kind == ADVANCE:
                count[a.pos:a.pos + a.n] += 1
        assert count.max() <= r


def test_repetition_number_search():
    for n, s in itertools.product(range(1, 200), range(1, 8)):
        r = repetition_number(n, s)
        assert beta(s, r) >= n and (r == 0 or beta(s, r - 1) < n)
        assert repetition_number(n, s, start=r + 5) == r


def test_revolve_million_steps_lazily():
    it = revolve(10**6, 20)
    first = [next(it) for _ in range(5)]
    assert first[0].kind == STORE and first[1].kind == ADVANCE
    assert revolve_cost(10**6, 20)[0] == repetition_number(10**6, 20)


def test_more_snapshots_than_steps_plan_the_schedule_of_n_and_list_no_more_slots():
    """revolve(n, s) for s >= n is revolve(n, n); it never lists s slots (snapshots=10**9
    on a 4-step loop allocated a free list of 10**9 slots)."""
    for n in range(0, 30):
        for s in (max(1, n), n + 1, n + 7, 10**9, 10**30):
            assert list(revolve(n, s)) == list(revolve(n, max(1, n)))
    tracemalloc.start()
    try:
        list(revolve(4, 10**12))
        assert tracemalloc.get_traced_memory()[1] < 10**6
    finally:
        tracemalloc.stop()


def test_free_slots_hand_out_slots_as_the_full_list_would():
    rng = np.random.default_rng(0)
    for count in (1, 2, 5, 9):
        listed, pool, held = list(range(count - 1, -1, -1)), FreeSlots(count), []
        for _ in range(60):
            assert len(pool) == len(listed) and bool(pool) == bool(listed)
            if listed and (not held or rng.random() < 0.6):
                slot = listed.pop()
                assert pool.pop() == slot
                held.append(slot)
            elif held:
                slot = held.pop(int(rng.integers(len(held))))
                listed.append(slot)
                pool.append(slot)
    assert len(FreeSlots(10**18)) == 10**18


def test_default_snapshots():
    for n in range(0, 3000, 7):
        s = default_snapshots(n)
        assert 1 <= s <= max(n, 1)
        if n > 1:
            assert revolve_cost(n, s)[0] <= 3
            assert s == 1 or beta(s - 1, 3) < n


def test_uniform_exhaustive():
    for n in range(0, 80):
        for k in range(1, n + 2):
            adv, peak = simulate(uniform(n, k), n)
            assert (adv, adv + n, peak) == uniform_cost(n, k)
    a, t, peak = uniform_cost(10_000, 100)
    adv, p2 = simulate(uniform(10_000, 100), 10_000)
    assert (adv, p2) == (a, peak)
    assert a <= 2 * 10_000 and peak <= 100 + 100


def test_revolve_peak_without_recursion():
    # issue 11: s close to n used to recurse once per step
    assert revolve_peak(500, 499) == 499
    assert revolve_peak(100_000, 99_999) == 99_999
    assert revolve_peak(100_000, 10**6) == 99_999


def test_bad_arguments():
    with pytest.raises(ValueError):
        list(revolve(10, 0))
    with pytest.raises(ValueError):
        list(revolve(-1, 2))
    with pytest.raises(ValueError):
        list(uniform(10, 0))
    with pytest.raises(ValueError):
        revolve_cost(5, 0)
