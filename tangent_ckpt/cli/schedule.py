"""``tangent-ckpt schedule N S``: the Revolve schedule's cost, as text, JSON or a plot."""

import json
import sys

from tangent_ckpt.cli.commands import CliError, positive_int, register
from tangent_ckpt.runtime.savings import get_memory_savings
from tangent_ckpt.runtime.schedules import (
    ADVANCE, FIRST_TURN, REVERSE, STORE, revolve, revolve_cost, uniform_cost,
)


def _schedule_args(p):
    p.add_argument("n", type=positive_int, metavar="N", help="number of loop steps")
    p.add_argument("s", type=positive_int, metavar="S", help="number of snapshots")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.add_argument("--plot", metavar="FILE.png", help="draw the schedule (needs matplotlib)")


def schedule_summary(n, s):
    """The figures `tangent-ckpt schedule N S` prints, as a dict."""

    r, a, t = revolve_cost(n, s)
    rev = get_memory_savings(n, s)
    out = {
        "n": n, "snapshots": s, "repetition_number": r,
        "plain_forward_steps": a, "total_forward_steps": t,
        "recomputation_factor": round(t / n, 6),
        "peak_memory_states": rev["with_checkpointing"],
        "taped_memory_states": n,
    }
    # the sqrt(n) scheme with at most the same peak (snapshots + segment tape <= s)
    best = None
    lo = max(1, -(-n // s))
    for k in range(lo, min(n, s + 2) + 1):
        ua, ut, upeak = uniform_cost(n, k)
        if upeak <= s:  # A only grows with k, so the first fit is the cheapest
            best = (k, ua, ut, upeak)
            break
    if best is None:
        need = None
        k0 = max(1, round(n ** 0.5))
        for k in range(max(1, k0 - 2), k0 + 3):
            p = uniform_cost(n, k)[2]
            need = p if need is None else min(need, p)
        k = max(1, -(-n // s))  # the usual reading: s segment snapshots, then a segment tape
        ua, ut, upeak = uniform_cost(n, k)
        out["uniform"] = {"fits": False, "snapshots_needed": need, "segment_length": k,
                          "total_forward_steps": ut, "recomputation_factor": round(ut / n, 6),
                          "peak_snapshots": upeak, "peak_memory_states": upeak + 1}
    else:
        k, ua, ut, upeak = best
        out["uniform"] = {"fits": True, "segment_length": k, "plain_forward_steps": ua,
                          "total_forward_steps": ut, "recomputation_factor": round(ut / n, 6),
                          "peak_snapshots": upeak, "peak_memory_states": upeak + 1}
    return out


def _schedule_text(d):
    lines = [
        f"Revolve: n = {d['n']} steps, s = {d['snapshots']} snapshots",
        f"  repetition number r      {d['repetition_number']}",
        f"  plain forward steps  A   {d['plain_forward_steps']}",
        f"  total forward steps  T   {d['total_forward_steps']}  (A + n re-recorded)",
        f"  recomputation factor     {d['recomputation_factor']:.4g}  (T / n)",
        f"  peak memory              {d['peak_memory_states']:g} states "
        f"(snapshots + one step's tape; taping every step: {d['taped_memory_states']})",
    ]
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
            f"sqrt(n) scheme: does not fit in {d['snapshots']} snapshots "
            f"(needs at least {u['snapshots_needed']} for {d['n']} steps);",
            f"  with segments of {u['segment_length']} steps it runs T = {u['total_forward_steps']} "
            f"(factor {u['recomputation_factor']:.4g}) but peaks at {u['peak_memory_states']} states "
            "(segment snapshots + segment tape + one step's tape)",
        ]
    return "\n".join(lines)


def _plot(n, s, path):
    try:  # an optional dependency (pip install tangent-ckpt[plot])
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("--plot needs matplotlib: pip install tangent-ckpt[plot]", file=sys.stderr)
        return 2
    if n > 20000:
        raise CliError(f"--plot draws every step; use N <= 20000 (got {n})")
    t, xs, ys, rx, ry, sx, sy = 0, [], [], [], [], [], []
    pos = 0
    for a in revolve(n, s):
        if a.kind == ADVANCE:
            xs.append([t, t + a.n])
            ys.append([a.pos, a.pos + a.n])
            t += a.n
        elif a.kind == STORE:
            sx.append(t)
            sy.append(a.pos)
        elif a.kind in (FIRST_TURN, REVERSE):
            rx.append(t)
            ry.append(a.pos)
            t += 1
    fig, ax = plt.subplots(figsize=(8, 5))
    for x, y in zip(xs, ys):
        ax.plot(x, y, color="tab:blue", lw=1)
    ax.scatter(rx, ry, s=4, color="tab:red", label="reverse (recorded step)")
    ax.scatter(sx, sy, s=12, marker="s", color="tab:green", label="store snapshot")
    ax.set_xlabel("time (step evaluations)")
    ax.set_ylabel("step index")
    ax.set_title(f"Revolve schedule, n={n}, s={s}")
    ax.legend(loc="upper right")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return 0


def _schedule_run(args):
    d = schedule_summary(args.n, args.s)
    if args.plot:
        status = _plot(args.n, args.s, args.plot)
        if status:
            return status
    print(json.dumps(d, indent=2) if args.json else _schedule_text(d))
    return 0


register("schedule", _schedule_args, _schedule_run,
         "print (and optionally plot) the Revolve schedule's cost for N steps and S snapshots")
