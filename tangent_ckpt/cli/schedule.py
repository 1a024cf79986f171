"""``tangent-ckpt schedule N S [--disk D --write-cost W --read-cost R] [--online] [--json] [--plot]``.

``schedule_summary`` returns the figures as a dict (the ``--json`` output),
``schedule_text`` renders them, ``plot_schedule`` draws the schedule with RAM
and disk snapshots in two colours (matplotlib, optional: ``pip install
matplotlib``).  Costs are in units of one forward step:
``total_cost = total_forward_steps + W * disk_writes + R * disk_reads`` (the n
adjoint steps are the same for every schedule and are left out).
"""

import json
import sys

from tangent_ckpt.cli.commands import CliError, positive_int, register

from tangent_ckpt.runtime.scheduling.hrevolve import plan_two_level
from tangent_ckpt.runtime.scheduling.online import exact_online_limit, online_actions
from tangent_ckpt.runtime.scheduling.savings import get_memory_savings
from tangent_ckpt.runtime.scheduling.schedules import (
    ADVANCE, DISK, FIRST_TURN, RESTORE, REVERSE, STORE, action_counts, label_levels, revolve_cost,
    uniform_cost,
)

__all__ = ["schedule_summary", "schedule_text", "plot_schedule", "run", "PLOT_MAX_STEPS"]

#: --plot draws every step
PLOT_MAX_STEPS = 20000


def _uniform_same_memory(n, s):
    """The sqrt(n) scheme with at most the same peak (snapshots + segment tape <= s)."""
    lo = max(1, -(-n // s))
    for k in range(lo, min(n, s + 2) + 1):
        ua, ut, upeak = uniform_cost(n, k)
        if upeak <= s:  # A only grows with k, so the first fit is the cheapest
            return {"fits": True, "segment_length": k, "plain_forward_steps": ua,
                    "total_forward_steps": ut, "recomputation_factor": round(ut / n, 6),
                    "peak_snapshots": upeak, "peak_memory_states": upeak + 1}
    k0 = max(1, round(n ** 0.5))
    need = min(uniform_cost(n, k)[2] for k in range(max(1, k0 - 2), k0 + 3))
    k = max(1, -(-n // s))  # the usual reading: s segment snapshots, then a segment tape
    ua, ut, upeak = uniform_cost(n, k)
    return {"fits": False, "snapshots_needed": need, "segment_length": k,
            "total_forward_steps": ut, "recomputation_factor": round(ut / n, 6),
            "peak_snapshots": upeak, "peak_memory_states": upeak + 1}


def schedule_summary(n, s, disk=0, write_cost=1.0, read_cost=1.0, online=False):
    """The figures `tangent-ckpt schedule` prints, as a dict.

    Keys: n, snapshots, disk_snapshots, write_cost, read_cost, schedule ("revolve",
    "ram+disk" or "online"), repetition_number (of Revolve in RAM),
    plain_forward_steps, total_forward_steps, disk_writes, disk_reads, total_cost,
    recomputation_factor, peak_memory_states, taped_memory_states; "ram_only"
    (Revolve in the S RAM snapshots: the offline optimum for --online) when disk > 0 or online; "plan" (which
    candidate won, see runtime.hrevolve) with disk > 0 offline; "exact_up_to" with
    --online; "uniform" (the sqrt(n) scheme in the same memory) otherwise.
    """
    r, a_ram, t_ram = revolve_cost(n, s)
    out = {"n": n, "snapshots": s, "disk_snapshots": disk,
           "write_cost": write_cost, "read_cost": read_cost, "repetition_number": r}
    if online:
        adv, writes, reads = action_counts(label_levels(online_actions(n, s + disk), disk))
        out.update(schedule="online", exact_up_to=exact_online_limit(s + disk))
    elif disk:
        plan = plan_two_level(n, s, disk, write_cost, read_cost)
        adv, writes, reads = plan.advances, plan.disk_writes, plan.disk_reads
        out.update(schedule="ram+disk", plan=plan.method, grid_unit=plan.unit)
    else:
        adv, writes, reads = a_ram, 0, 0
        out.update(schedule="revolve")
    t = adv + n
    out.update(
        plain_forward_steps=adv, total_forward_steps=t, disk_writes=writes, disk_reads=reads,
        total_cost=t + write_cost * writes + read_cost * reads,
        recomputation_factor=round(t / n, 6),
        peak_memory_states=get_memory_savings(n, s)["with_checkpointing"],
        taped_memory_states=n,
    )
    if online or disk:
        out["ram_only"] = {"total_forward_steps": t_ram, "total_cost": t_ram}
    else:
        out["uniform"] = _uniform_same_memory(n, s)
    return out


def schedule_text(d):
    """The text report of a :func:`schedule_summary` dict."""
    n, s, disk = d["n"], d["snapshots"], d["disk_snapshots"]
    where = f"s = {s} RAM" + (f" + {disk} disk" if disk else "") + " snapshots"
    title = {"revolve": "Revolve", "ram+disk": f"RAM + disk ({d.get('plan')})",
             "online": "Online (trip count unknown until the end)"}[d["schedule"]]
    lines = [f"{title}: n = {n} steps, {where}"]
    if d["schedule"] == "revolve":
        lines.append(f"  repetition number r      {d['repetition_number']}")
    lines += [
        f"  plain forward steps  A   {d['plain_forward_steps']}",
        f"  total forward steps  T   {d['total_forward_steps']}  (A + n re-recorded)",
        f"  recomputation factor     {d['recomputation_factor']:.4g}  (T / n)",
    ]
    if disk or d["schedule"] != "revolve":
        lines += [
            f"  disk writes              {d['disk_writes']}  (cost {d['write_cost']:g} each)",
            f"  disk reads               {d['disk_reads']}  (cost {d['read_cost']:g} each)",
            f"  total cost               {d['total_cost']:g}  (T + writes + reads, in forward steps)",
        ]
        label = "offline optimum (Revolve)" if d["schedule"] == "online" else f"RAM alone ({s} snapshots)"
        lines.append(f"  {label}: T = {d['ram_only']['total_forward_steps']}")
        if d["schedule"] == "online":
            lines.append(f"  equal to the offline optimum for every n <= {d['exact_up_to']}"
                         if d["exact_up_to"] else "  (one snapshot: the offline optimum for every n)")
        return "\n".join(lines)
    lines.append(f"  peak memory              {d['peak_memory_states']:g} states "
                 f"(snapshots + one step's tape; taping every step: {d['taped_memory_states']})")
    u = d["uniform"]
    if u["fits"]:
        lines += [
            f"sqrt(n) scheme in the same memory: segments of {u['segment_length']} steps",
            f"  total forward steps  T   {u['total_forward_steps']}",
            f"  recomputation factor     {u['recomputation_factor']:.4g}",
            f"  peak memory              {u['peak_memory_states']} states "
            "(segment snapshots + segment tape + one step's tape)",
        ]
    else:
        lines += [
            f"sqrt(n) scheme: does not fit in {s} snapshots "
            f"(needs at least {u['snapshots_needed']} for {n} steps);",
            f"  with segments of {u['segment_length']} steps it runs T = {u['total_forward_steps']} "
            f"(factor {u['recomputation_factor']:.4g}) but peaks at {u['peak_memory_states']} states "
            "(segment snapshots + segment tape + one step's tape)",
        ]
    return "\n".join(lines)


def _actions(n, s, disk, write_cost, read_cost, online):
    if online:
        return label_levels(online_actions(n, s + disk), disk)
    return plan_two_level(n, s, disk, write_cost, read_cost).actions()


def plot_schedule(path, n, s, disk=0, write_cost=1.0, read_cost=1.0, online=False):
    """Draw the schedule (time against step) into `path`; RAM and disk snapshots in two colours.

    Raises ImportError without matplotlib, CliError for n > PLOT_MAX_STEPS.
    """
    if n > PLOT_MAX_STEPS:
        raise CliError(f"--plot draws every step; use N <= {PLOT_MAX_STEPS} (got {n})")
    import matplotlib  # optional dependency: the [plot] extra
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t, runs, rev, stores, reads = 0, [], ([], []), {"ram": ([], []), "disk": ([], [])}, ([], [])
    for a in _actions(n, s, disk, write_cost, read_cost, online):
        if a.kind is ADVANCE:
            runs.append(((t, t + a.n), (a.pos, a.pos + a.n)))
            t += a.n
        elif a.kind is STORE:
            stores[a.level][0].append(t)
            stores[a.level][1].append(a.pos)
        elif a.kind is RESTORE and a.level is DISK:
            reads[0].append(t)
            reads[1].append(a.pos)
        elif a.kind in (FIRST_TURN, REVERSE):
            rev[0].append(t)
            rev[1].append(a.pos)
            t += 1
    fig, ax = plt.subplots(figsize=(8, 5))
    for x, y in runs:
        ax.plot(x, y, color="tab:blue", lw=1)
    ax.scatter(*rev, s=4, color="tab:red", label="reverse (recorded step)")
    ax.scatter(*stores["ram"], s=12, marker="s", color="tab:green", label="store in RAM")
    if disk:
        ax.scatter(*stores["disk"], s=16, marker="D", color="tab:orange", label="write to disk")
        ax.scatter(*reads, s=10, marker="x", color="tab:brown", label="read from disk")
    ax.set_xlabel("time (step evaluations)")
    ax.set_ylabel("step index")
    kind = "online" if online else ("RAM + disk" if disk else "Revolve")
    ax.set_title(f"{kind} schedule, n={n}, s={s}" + (f", disk={disk}" if disk else ""))
    ax.legend(loc="upper right")
    fig.savefig(path, dpi=120)
    plt.close(fig)


def run(args):
    """The `schedule` subcommand: print (and plot) the figures; returns the exit status."""
    opts = dict(disk=args.disk, write_cost=args.write_cost, read_cost=args.read_cost,
                online=args.online)
    if args.plot:
        try:
            plot_schedule(args.plot, args.n, args.s, **opts)
        except ImportError:
            print("--plot needs matplotlib: pip install matplotlib (or, in the checkout, "
                  "pip install -e .[plot])", file=sys.stderr)
            return 2
    d = schedule_summary(args.n, args.s, **opts)
    print(json.dumps(d, indent=2) if args.json else schedule_text(d))
    return 0


def _schedule_args(p):
    p.add_argument("n", type=positive_int, metavar="N", help="number of loop steps")
    p.add_argument("s", type=positive_int, metavar="S", help="number of snapshots")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.add_argument("--plot", metavar="FILE.png", help="draw the schedule (needs matplotlib)")
    p.add_argument("--disk", type=int, default=0, metavar="D",
                   help="disk snapshots beside the S in RAM: plan RAM + disk for the costs below")
    p.add_argument("--write-cost", type=float, default=1.0, metavar="W",
                   help="cost of one disk write, in forward steps (default 1)")
    p.add_argument("--read-cost", type=float, default=1.0, metavar="R",
                   help="cost of one disk read, in forward steps (default 1)")
    p.add_argument("--online", action="store_true",
                   help="the online schedule's figures (trip count unknown until the loop ends)")


register("schedule", _schedule_args, run,
         "print (and optionally plot) a schedule's cost for N steps and S snapshots "
         "(RAM + disk with --disk, unknown trip count with --online)")
