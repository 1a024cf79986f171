"""Benchmark: the cost of RAM + disk schedules and of the online schedule.

    python benchmarks/schedules.py           # n = 1000 grid and n = 10 000 (~5 minutes)
    python benchmarks/schedules.py --quick   # without the H-Revolve column (seconds)

Cost = T + wd * W + rd * R in units of one forward step: T forward steps (the plain
advances plus the n re-recorded steps), W disk writes, R disk reads (wd = rd).
Columns, all computed in this process:

* ours: ``runtime.hrevolve.plan_two_level`` (the cheapest of RAM alone, the
  two-level H-Revolve program -- exact, or on a grid of unit u for long loops --
  and multistage), with its writes and reads and its planning time (median of 3);
* H-Revolve: checkpoint_schedules' own dynamic program (``get_hopt_table``,
  uf = ub = 1: its value is T + wd W + rd R); O(n^2) in pure Python, so only
  for n = 1000.  For n = 10 000 the column shows (marked *) our exact program
  (unit 1, no grid), which equals that table wherever both run
  (tests/test_hrevolve.py); it takes seconds to a minute per cell;
* multistage: checkpoint_schedules' ``MultistageCheckpointSchedule`` run action by
  action and counted;
* RAM only: Revolve with the S RAM snapshots (T);
* before: what tangent_ckpt did before issue 19 (Revolve with S + D slots, the
  bottom D on disk).

checkpoint_schedules is optional (``pip install -e '.[peers]'``); without it
those columns print "-".  The second table compares the online schedule
(unknown trip count) with the offline optimum.
"""

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402,F401  (pins BLAS threads before NumPy loads)

from tangent_ckpt.runtime.scheduling.hrevolve import plan_two_level  # noqa: E402
from tangent_ckpt.runtime.scheduling.online import exact_online_limit, online_cost  # noqa: E402
from tangent_ckpt.runtime.scheduling.schedules import (  # noqa: E402
    action_counts, label_levels, revolve, revolve_cost,
)

try:  # optional peer, never needed by the tests
    import checkpoint_schedules as cs  # noqa: E402
    from checkpoint_schedules.hrevolve_sequences.hrevolve import get_hopt_table  # noqa: E402
except ImportError:  # pragma: no cover
    cs = get_hopt_table = None

GRID = [(1000, 5, 20), (1000, 10, 100), (10_000, 5, 20), (10_000, 10, 100)]
COSTS = [0.5, 2.0, 10.0]


def before_issue_19(n, s, d, w):
    """Revolve with s + d slots, slots below d on disk: T + w (W + R)."""
    adv, writes, reads = action_counts(label_levels(revolve(n, s + d), d))
    return adv + n + w * (writes + reads)


def multistage_cost(n, s, d, w):
    """checkpoint_schedules' multistage schedule, run and counted: T + w (W + R)."""
    sched = cs.MultistageCheckpointSchedule(n, s, d)
    disk = cs.StorageType.DISK
    steps = writes = reads = 0
    for action in sched:
        if isinstance(action, cs.Forward):
            steps += action.n1 - action.n0
            writes += bool(action.write_ics and action.storage == disk)
        elif isinstance(action, (cs.Copy, cs.Move)):
            reads += action.from_storage == disk
            writes += action.to_storage == disk
        elif isinstance(action, cs.EndReverse):
            break
    return steps + w * (writes + reads)


def hrevolve_cost(n, s, d, w):
    optp, opt = get_hopt_table(n - 1, (s, d), (0, w), (0, w), 1, 1)
    return opt[1][n - 1][d]


def plan_timed(n, s, d, w):
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        plan = plan_two_level(n, s, d, w, w)
        times.append(time.perf_counter() - t0)
    return plan, statistics.median(times)


def pct(ours, theirs):
    return "-" if theirs is None else f"{100 * (ours / theirs - 1):+.1f}%"


def cost_table(quick):
    headers = ["n, RAM + disk", "wd=rd", "ours T", "W", "R", "ours cost", "plan", "plan time",
               "H-Revolve", "vs H-Rev", "multistage", "RAM only", "before"]
    rows = []
    for n, s, d in GRID:
        for w in COSTS:
            plan, secs = plan_timed(n, s, d, w)
            hrev, mark = None, ""
            if not quick and n <= 1000 and get_hopt_table:
                hrev = hrevolve_cost(n, s, d, w)
            elif not quick and n > 1000:
                hrev = plan_two_level(n, s, d, w, w, methods=("hrevolve",), work=10**13).cost
                mark = "*"
            multi = multistage_cost(n, s, d, w) if cs else None
            rows.append([f"{n}, {s} + {d}", f"{w:g}", plan.total_forward_steps, plan.disk_writes,
                         plan.disk_reads, f"{plan.cost:g}",
                         plan.method + (f" u={plan.unit}" if plan.unit > 1 else ""),
                         common.fmt_seconds(secs), "-" if hrev is None else f"{hrev:g}{mark}",
                         pct(plan.cost, hrev), "-" if multi is None else f"{multi:g}",
                         revolve_cost(n, s)[2], f"{before_issue_19(n, s, d, w):g}"])
            print(".", end="", flush=True, file=sys.stderr)
    print(file=sys.stderr)
    return common.table(headers, rows)


def online_table():
    headers = ["n", "s", "online T", "offline T", "online / offline", "exact up to"]
    rows = []
    for n, s in [(60, 10), (67, 10), (200, 10), (1000, 10), (1000, 31), (10_000, 20),
                 (100_000, 20), (100_000, 100)]:
        t_on, t_off = online_cost(n, s)[1], revolve_cost(n, s)[2]
        rows.append([n, s, t_on, t_off, f"{t_on / t_off:.4f}", exact_online_limit(s)])
    return common.table(headers, rows)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="skip checkpoint_schedules' H-Revolve tables")
    args = ap.parse_args(argv)
    print("RAM + disk: cost = T + wd*W + rd*R (forward steps), wd = rd")
    if cs is None:
        print("(checkpoint_schedules not installed: peer columns print '-'; pip install -e '.[peers]')")
    print(cost_table(args.quick))
    print()
    print("Online (trip count unknown until the loop ends) against the offline optimum")
    print(online_table())
    # the planner at n = 100 000, the issue's bound of one second
    for s, d in [(5, 20), (10, 100)]:
        plan, secs = plan_timed(100_000, s, d, 2.0)
        print(f"n = 100 000, {s} + {d}, wd = rd = 2: planned in {common.fmt_seconds(secs)} "
              f"({plan.method}, u = {plan.unit}), cost {plan.cost:g} "
              f"against {revolve_cost(100_000, s)[2]} in RAM alone")


if __name__ == "__main__":
    main()
