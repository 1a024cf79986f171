"""The RAM + disk planner (runtime/scheduling/hrevolve.py): its cost is the optimum of an
independent dynamic program over every placement of RAM and disk snapshots, its
action streams do what its figures say, and it is never worse than RAM alone
or than multistage."""

import functools
import random

import numpy as np
import pytest

from tangent_ckpt.runtime.scheduling.hrevolve import multistage_depth_counts, plan_two_level
from tangent_ckpt.runtime.scheduling.schedules import (
    ADVANCE, DISK, FIRST_TURN, FREE, RAM, RESTORE, STORE, revolve, revolve_cost,
)

COSTS = [(0.5, 0.5), (2.0, 2.0), (10.0, 10.0), (1.0, 3.0)]


def brute_force(S, D, wd, rd):
    """best(n): least T + wd*W + rd*R over schedules that reverse n steps with S RAM and
    D disk slots, any snapshot on either level.  A range whose start is held at level
    L (RAM reads are free) with s free RAM and d free disk slots either is one step,
    or advances m steps, keeps the state there (unless one step is left) in a free
    slot of either level, reverses that right part, reads its start back and reverses
    the left part; a start on disk may also be copied to a free RAM slot first."""
    INF = float("inf")

    @functools.lru_cache(maxsize=None)
    def F(level, n, s, d):
        if n == 1:
            return 0.0
        best = F("ram", n, s - 1, d) if level == "disk" and s >= 1 else INF
        back = rd if level == "disk" else 0.0
        for m in range(1, n):
            k = n - m
            right = 0.0 if k == 1 else min(F("ram", k, s - 1, d) if s >= 1 else INF,
                                           wd + F("disk", k, s, d - 1) if d >= 1 else INF)
            best = min(best, m + right + back + F(level, m, s, d))
        return best

    def best(n):
        if n <= 1:
            return n
        top = min(F("ram", n, S - 1, D), wd + F("disk", n, S, D - 1) if D else INF)
        return top + n
    return best


def run(actions, n, S, D):
    """Execute a two-level stream; return (advances, disk writes, disk reads, peak RAM, peak disk)."""
    pos, snaps, adv, writes, reads, expected = 0, {}, 0, 0, 0, n - 1
    peak = {RAM: 0, DISK: 0}
    first = True
    for a in actions:
        if a.kind == ADVANCE:
            assert a.pos == pos and a.n >= 1
            pos += a.n
            adv += a.n
            assert pos <= n - 1
        elif a.kind == STORE:
            assert a.pos == pos and a.slot not in snaps
            assert (a.slot < D) == (a.level == DISK), "slot numbers and levels disagree"
            snaps[a.slot] = (a.pos, a.level)
            writes += a.level == DISK
            peak[a.level] = max(peak[a.level], sum(lv == a.level for _, lv in snaps.values()))
        elif a.kind == RESTORE:
            assert snaps[a.slot] == (a.pos, a.level)
            pos = a.pos
            reads += a.level == DISK
        elif a.kind == FREE:
            assert snaps.pop(a.slot) == (a.pos, a.level)
        else:
            assert (a.kind == FIRST_TURN) == first
            first = False
            assert pos == a.pos == expected
            expected -= 1
            pos = None
    assert expected == -1 and not snaps
    assert peak[RAM] <= S and peak[DISK] <= D
    return adv, writes, reads


@pytest.mark.parametrize("wd,rd", COSTS)
def test_cost_is_the_brute_force_optimum(wd, rd):
    for S in range(1, 5):
        for D in range(0, 5):
            best = brute_force(S, D, wd, rd)
            for n in range(1, 41):
                exact = plan_two_level(n, S, D, wd, rd, methods=("ram", "hrevolve"))
                assert exact.cost == pytest.approx(best(n)), (n, S, D, exact)
                if n % 4 == 0:  # with multistage among the candidates: still the optimum
                    assert plan_two_level(n, S, D, wd, rd).cost == pytest.approx(best(n))


@pytest.mark.parametrize("wd,rd", COSTS[1:3])
def test_actions_do_what_the_figures_say(wd, rd):
    for S in range(1, 5):
        for D in range(0, 5):
            for n in range(1, 41, 3):
                for method in ("ram", "hrevolve", "multistage"):
                    plan = plan_two_level(n, S, D, wd, rd, methods=(method,))
                    assert run(plan.actions(), n, S, D) == (
                        plan.advances, plan.disk_writes, plan.disk_reads), (n, S, D, plan)


def test_grid_planner_for_long_loops():
    # a small work bound forces the grid program; its plans stay exact in their figures
    for n, S, D, w in [(997, 3, 6, 2.0), (1000, 5, 20, 0.5), (1201, 4, 9, 10.0)]:
        exact = plan_two_level(n, S, D, w, w, methods=("hrevolve",))
        grid = plan_two_level(n, S, D, w, w, methods=("hrevolve",), work=3_000_000)
        assert exact.unit == 1 and grid.unit > 1
        assert run(grid.actions(), n, S, D) == (grid.advances, grid.disk_writes, grid.disk_reads)
        assert exact.cost <= grid.cost <= 1.05 * exact.cost


def test_never_worse_than_ram_alone_or_multistage():
    rng = random.Random(7)
    for _ in range(15):
        n, S, D = rng.randint(2, 3000), rng.randint(1, 12), rng.randint(0, 40)
        wd, rd = rng.choice([0.1, 0.5, 2, 10, 50]), rng.choice([0.1, 0.5, 2, 10, 50])
        plan = plan_two_level(n, S, D, wd, rd, work=10**6)
        assert plan.cost <= revolve_cost(n, S)[2]
        assert plan.cost <= plan_two_level(n, S, D, wd, rd, methods=("multistage",)).cost


def test_disk_is_left_alone_when_it_does_not_pay():
    plan = plan_two_level(1000, 10, 100, 1000.0, 1000.0)
    assert plan.method == "ram" and plan.disk_writes == plan.disk_reads == 0
    assert plan.total_forward_steps == revolve_cost(1000, 10)[2]


def test_multistage_depth_counts_match_the_schedule():
    for n, s in [(2, 1), (10, 3), (57, 5), (300, 4), (1000, 10), (40, 39)]:
        writes, reads = multistage_depth_counts(n, s)
        w, r = np.zeros(s, int), np.zeros(s, int)
        for a in revolve(n, s):
            if a.kind == STORE:
                w[a.slot] += 1
            elif a.kind == RESTORE:
                r[a.slot] += 1
        assert list(writes) == list(w) and list(reads) == list(r), (n, s)


def test_h_revolve_of_checkpoint_schedules_agrees():
    hrevolve = pytest.importorskip("checkpoint_schedules.hrevolve_sequences.hrevolve")
    for S, D, w in [(2, 2, 0.5), (3, 4, 2.0), (4, 3, 10.0)]:
        optp, opt = hrevolve.get_hopt_table(60, (S, D), (0, w), (0, w), 1, 1)
        for n in range(2, 61):
            assert plan_two_level(n, S, D, w, w).cost == pytest.approx(opt[1][n - 1][D]), (n, S, D, w)


def test_bad_arguments():
    with pytest.raises(ValueError):
        plan_two_level(10, 0, 2, 1, 1)
    with pytest.raises(ValueError):
        plan_two_level(10, 2, -1, 1, 1)
    with pytest.raises(ValueError):
        plan_two_level(10, 2, 2, -1, 1)


def test_never_worse_than_checkpoint_schedules_multistage():
    cs = pytest.importorskip("checkpoint_schedules")
    disk = cs.StorageType.DISK
    for n, S, D, w in [(200, 3, 5, 0.5), (500, 4, 10, 2.0), (1000, 5, 20, 10.0)]:
        steps = io = 0
        for action in cs.MultistageCheckpointSchedule(n, S, D):
            if isinstance(action, cs.EndReverse):
                break
            if isinstance(action, cs.Forward):
                steps += action.n1 - action.n0
                io += bool(action.write_ics and action.storage == disk)
            elif isinstance(action, (cs.Copy, cs.Move)):
                io += (action.from_storage == disk) + (action.to_storage == disk)
        assert plan_two_level(n, S, D, w, w).cost <= steps + w * io, (n, S, D, w)
