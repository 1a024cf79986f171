"""The online schedule (runtime/scheduling/online.py): equal to the offline optimum for every
trip count up to exact_online_limit(s), valid and bounded beyond, and its switch
to the doubling stride never frees more than it stores."""

import functools
import tracemalloc

import pytest
from hypothesis import given, settings, strategies as st

from test_schedules import simulate
from tangent_ckpt.runtime.scheduling.online import (
    OnlineSchedule, exact_online_limit, online_actions, online_cost,
)
from tangent_ckpt.runtime.scheduling.schedules import FREE, STORE, beta, revolve_cost


def test_online_equals_offline_optimum_up_to_the_limit():
    for s in range(1, 13):
        limit = exact_online_limit(s) or 400
        assert limit == (400 if s == 1 else beta(s, 2) + 1)
        for n in range(1, limit + 1):
            adv, peak = simulate(online_actions(n, s), n, max_slots=s)
            assert adv == revolve_cost(n, s)[1] == online_cost(n, s)[0], (n, s)
    for s in (16, 20, 31):  # larger s from the figures alone (they equal the simulation above)
        for n in range(2, exact_online_limit(s) + 1):
            assert online_cost(n, s)[0] == revolve_cost(n, s)[1], (n, s)


def test_online_exhaustive():
    for n in range(0, 200):
        for s in range(1, 9):
            adv, peak = simulate(online_actions(n, s), n, max_slots=s)
            assert (adv, adv + n, peak) == online_cost(n, s), (n, s)
            if n:
                assert adv >= revolve_cost(n, s)[1]  # never better than offline optimum


@settings(max_examples=10, deadline=None)
@given(n=st.integers(1, 20_000), s=st.integers(2, 40))
def test_online_random(n, s):
    adv, peak = simulate(online_actions(n, s), n, max_slots=s)
    assert adv == online_cost(n, s)[0]


@pytest.mark.parametrize("s", [2, 5, 10, 31])
def test_switch_to_the_stride_loses_no_snapshot(s):
    # no step frees more snapshots than it stores, and the slots stay full once full
    sched = OnlineSchedule(s)
    for p in range(3 * exact_online_limit(s) + 50):
        acts = list(sched.before_step(p))
        frees = sum(a.kind == FREE for a in acts)
        stores = sum(a.kind == STORE for a in acts)
        assert frees <= stores <= 1
        assert all(a.pos in (p - 1, p) for a in acts if a.kind == STORE)
        if p > s:
            assert len(sched.kept) == s


def test_beyond_the_limit_close_to_the_offline_optimum():
    # measured, not promised: within 12% of offline up to 20 000 steps (docs/schedules.md)
    for s in (4, 10, 16, 31):
        for n in (exact_online_limit(s) + 1, 2 * beta(s, 2), beta(s, 3), 20_000):
            assert online_cost(n, s)[1] <= 1.12 * revolve_cost(n, s)[2], (n, s)


def _best_reversal(kept, n, s):
    """Least plain steps to reverse n steps from snapshots `kept` (any subset with 0)."""
    pos = sorted(q for q in kept if q < n - 1)
    if not pos:
        return 0  # one step: reversed from the state the driver holds
    best = None
    for mask in range(1 << (len(pos) - 1)):
        chosen = [0] + [q for i, q in enumerate(pos[1:]) if mask >> i & 1]
        if len(chosen) > s:
            continue
        ends = chosen[1:] + [n - 1]
        cost = sum(revolve_cost(b - a, s - t)[1] for t, (a, b) in enumerate(zip(chosen, ends)))
        best = cost if best is None else min(best, cost)
    return best


def _online_optimal_exists(s, N):
    """Is there a placement (before step p: keep or drop snapshots, store the held
    position p - 1) that reverses every n <= N with the offline optimum?"""
    @functools.lru_cache(maxsize=None)
    def ok(p, kept):
        if p == N:
            return True
        if p == 0:
            options = [frozenset({0})]
        else:
            options = [kept]
            if p - 1 not in kept:
                options += [kept | {p - 1}] if len(kept) < s else \
                    [(kept - {x}) | {p - 1} for x in kept if x]
        n = p + 1
        want = revolve_cost(n, s)[1] - (n - 1)
        return any(_best_reversal(k, n, s) == want and ok(p + 1, k) for k in options)
    return ok(0, frozenset())


@pytest.mark.parametrize("s", [2, 3])
def test_no_online_placement_is_optimal_beyond_the_limit(s):
    # why the exact phase stops at beta(s, 2) + 1, well short of C(s + 3, 3)
    limit = exact_online_limit(s)
    assert _online_optimal_exists(s, limit)
    assert not _online_optimal_exists(s, limit + 1)
    assert limit + 1 <= beta(s, 3)


def test_without_lookahead_only_the_working_state_is_stored():
    # for drivers that cannot snapshot the state before the previous step
    for s in (1, 3, 10):
        sched = OnlineSchedule(s, lookahead=False)
        for p in range(500):
            assert all(a.pos == p for a in sched.before_step(p) if a.kind == STORE)
        assert len(sched.kept) <= s


def test_more_slots_than_steps_plan_as_many_as_needed_and_list_none_unused():
    """An online schedule given far more slots than the loop has steps plans the
    schedule of enough slots, without a list of them (snapshots=10**9 on a while
    loop allocated 10**9 slots)."""
    for n in range(0, 25):
        assert list(online_actions(n, 10**9)) == list(online_actions(n, n + 2))
    tracemalloc.start()
    try:
        list(online_actions(6, 10**30))
        assert tracemalloc.get_traced_memory()[1] < 10**6
    finally:
        tracemalloc.stop()
