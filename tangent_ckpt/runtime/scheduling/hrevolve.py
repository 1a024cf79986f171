"""RAM + disk schedules planned for what disk costs (two-level H-Revolve).

The cost of reversing n steps is ``T + write * W + read * R``: T forward steps
(the plain advances A plus the n re-recorded steps), W disk writes and R disk
reads, each in units of one forward step (``Costs.relative``).  RAM snapshots
are free to store and restore; there are ``ram`` of them and ``disk`` disk
slots.  The plan is the cheapest of three candidates:

* RAM alone: Revolve with ``ram`` snapshots (the disk is not touched);
* the two-level dynamic program of H-Revolve (Herrmann & Pallez, ACM TOMS 46(2),
  2020), with uf = ub = 1: a range whose start is on disk either copies its
  start into RAM and is reversed by Revolve in RAM, or advances m steps, stores
  the state there (in RAM, reversed by Revolve, or on disk, planned the same
  way with one disk slot fewer), reverses that right part, reads its start
  back from disk and plans the left m steps the same way.  Ranges whose start
  is in RAM stay in RAM.  For small n and few slots this is the optimum over
  every placement of RAM and disk snapshots (``tests/test_hrevolve.py`` checks
  it against a dynamic program that also lets RAM-started ranges use the disk);
  it costs O(n^2 * disk) operations, so beyond ``EXACT_WORK`` the same program
  runs on a grid: ranges start at multiples of a unit u (u = 1 is the exact
  program);
* multistage: Revolve with ram + disk snapshots where the stack depths that
  are written and read the most (weighted by the two costs) live in RAM and
  the others on disk (Stumm & Walther, SISC 31(3), 2009; the allocation
  checkpoint_schedules' ``MultistageCheckpointSchedule`` makes).

So the plan is never worse than RAM alone nor than multistage.  Slots: disk
slots are 0..disk-1 and RAM slots disk..disk+ram-1 (``snapshots.TwoLevelStore``).
"""

from collections import namedtuple
import numpy as np

from tangent_ckpt.runtime.scheduling.schedules import (
    Action, ADVANCE, DISK, FIRST_TURN, FREE, RAM, RESTORE, REVERSE, STORE, _check_int,
    _revolve_core, beta, revolve, revolve_cost, revolve_split,
)

__all__ = ["TwoLevelPlan", "plan_two_level", "ram_costs", "multistage_depth_counts",
           "EXACT_WORK", "GRID_WORK"]

#: element operations the exact program may take (n^2 / 2 * disk layers); beyond
#: it the grid program runs with as fine a unit as GRID_WORK allows
EXACT_WORK = 2 * 10**8
GRID_WORK = 10**8
#: what planning one range length costs beside its elements (NumPy call overhead)
STEP_WORK = 20_000

TwoLevelCounts = namedtuple("TwoLevelCounts", "advances disk_writes disk_reads")


class TwoLevelPlan:
    """A RAM + disk schedule chosen for its cost, and its exact figures.

    ``method``: "ram" (Revolve in RAM, disk unused), "hrevolve" (the two-level
    program; ``unit`` 1 = exact, > 1 = grid) or "multistage".
    ``advances`` (A), ``total_forward_steps`` (T = A + n), ``disk_writes``,
    ``disk_reads`` and ``cost`` = T + write * W + read * R.  ``actions()``
    yields the schedule (actions name the level of every snapshot).
    """

    def __init__(self, n, ram, disk, write, read, method, counts, build, unit=1):
        self.n, self.ram, self.disk = n, ram, disk
        self.write, self.read = write, read
        self.method, self.unit = method, unit
        self.advances, self.disk_writes, self.disk_reads = counts
        self._build = build

    @property
    def total_forward_steps(self):
        return self.advances + self.n

    @property
    def cost(self):
        return self.total_forward_steps + self.write * self.disk_writes + self.read * self.disk_reads

    def actions(self):
        """The schedule, lazily (call again for a fresh stream)."""
        return self._build()

    def __repr__(self):
        return (f"TwoLevelPlan(n={self.n}, ram={self.ram}, disk={self.disk}, method={self.method!r}, "
                f"unit={self.unit}, T={self.total_forward_steps}, writes={self.disk_writes}, "
                f"reads={self.disk_reads}, cost={self.cost:g})")


def ram_costs(lengths, s):
    """Revolve's plain advances A(L, s) for an integer array of lengths (closed form)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    out = np.zeros(lengths.shape, dtype=np.int64)
    if s == 1:
        return np.where(lengths > 1, lengths * (lengths - 1) // 2, 0)
    top = int(lengths.max(initial=0))
    r, lo = 1, 1  # lengths in (beta(s, r-1), beta(s, r)] replay each step at most r times
    while lo < top:
        hi = beta(s, r)
        band = (lengths > lo) & (lengths <= hi)
        out[band] = r * lengths[band] - beta(s + 1, r - 1)
        lo, r = hi, r + 1
    return out


# ----------------------------------------------------------------------------- H-Revolve

def _grid_lengths(n, unit):
    """Range lengths the grid program plans: multiples of `unit` (family 0) and,
    when unit does not divide n, rest + multiples (family 1, rest = n % unit)."""
    k = n // unit
    rest = n - k * unit
    fams = [np.arange(k + 1, dtype=np.int64) * unit]
    if rest:
        fams.append(rest + np.arange(k + 1, dtype=np.int64) * unit)
    return fams


def _solve(n, ram, layers, write, read, unit):
    """The two-level program on the grid of `unit`.

    Returns (lengths, F, C, arg, aram) per family: F[d, k] is the least cost
    (plain advances + weighted disk operations) of reversing a range of
    lengths[k] steps whose start is on disk, with d further disk slots and all
    RAM free; C[d, k] the same range's cost as the right part of a split (kept in
    RAM, or on disk when that is cheaper); arg[d, k] is -1 (copy the start into
    RAM, Revolve there) or j (advance j * unit steps, keep the state, ...);
    aram[k] is Revolve's cost in RAM alone.
    """
    fams = _grid_lengths(n, unit)
    out = []
    F0 = None
    rows = np.arange(layers + 1)
    advance_and_read = np.arange(1, n // unit + 2, dtype=np.float64) * unit + read  # split j
    for f, lens in enumerate(fams):
        size = len(lens)
        aram = ram_costs(lens, ram).astype(np.float64)
        F = np.zeros((layers + 1, size))
        C = np.zeros((layers + 1, size))  # cost of the right part, stored at its start
        arg = np.full((layers + 1, size), -1, dtype=np.int32)
        for k in range(size):
            L = int(lens[k])
            best = np.full(layers + 1, aram[k])
            if f == 0:
                js = k - 1  # left j*unit and right (k-j)*unit, j = 1..k-1
            else:
                js = k      # left j*unit (family 0) and right rest + (k-j)*unit
            if js >= 1 and L >= 2:
                right = C[:, k - 1:k - js - 1 if k - js - 1 >= 0 else None:-1]
                left = (F0 if f else F)[:, 1:js + 1]
                cand = np.add(right, left)  # one temporary: these arrays are the work
                cand += advance_and_read[:js]
                j = np.argmin(cand, axis=1)
                val = cand[rows, j]
                better = val < best
                best = np.where(better, val, best)
                arg[:, k] = np.where(better, j + 1, -1)
            F[:, k] = best
            if L <= 1:
                C[:, k] = 0.0
            else:
                C[:, k] = aram[k]
                if layers:
                    C[1:, k] = np.minimum(aram[k], write + F[:-1, k])
        if f == 0:
            F0 = F
        out.append((lens, F, C, arg, aram))
    return out


def _counts_table(solved, unit, layers):
    """(advances, writes, reads) of every planned range, from the program's choices.

    cnt[:, d, k]: the figures of a range of family f, index k, d further disk slots;
    right[:, d, k]: the same range as the right part of a split (stored at its start).
    """
    tables = []
    ds = np.arange(layers + 1)
    for f, (lens, F, C, arg, aram) in enumerate(solved):
        size = len(lens)
        cnt = np.zeros((3, layers + 1, size), dtype=np.int64)
        right = np.zeros((3, layers + 1, size), dtype=np.int64)
        left_of = tables[0] if f else cnt
        for k in range(size):
            j = arg[:, k].astype(np.int64)
            split = j >= 0
            if split.any():
                jj = np.where(split, j, 1)
                both = right[:, ds, k - jj] + left_of[:, ds, jj]
                both[0] += jj * unit
                both[2] += 1  # the start is read back from disk
                cnt[:, :, k] = np.where(split, both, 0)
            cnt[0, ~split, k] = aram[k]
            if lens[k] >= 2:
                right[0, :, k] = aram[k]
                on_disk = C[1:, k] < aram[k]
                if on_disk.any():
                    via_disk = cnt[:, :-1, k].copy()
                    via_disk[1] += 1
                    right[:, 1:, k] = np.where(on_disk, via_disk, right[:, 1:, k])
        tables.append(cnt)
    return tables


def _right_on_disk(fam, d, k):
    """Is range k of this family, as the right part of a split with d disk slots
    free, kept on disk (cheaper than Revolve in RAM)?"""
    lens, F, C, arg, aram = fam
    return d >= 1 and C[d, k] < aram[k]


def _hrevolve_actions(n, ram, disk, solved, unit, top_layer):
    """The two-level program's schedule: position 0 on disk slot 0."""
    ram_free = list(range(disk + ram - 1, disk - 1, -1))  # pop() hands out disk, disk+1, ...
    disk_free = list(range(disk - 1, 0, -1))
    fam = len(solved) - 1 if n % unit else 0
    k0 = n // unit
    yield Action(STORE, 0, 0, 0, DISK)
    # tasks: ("disk", start, family, k, d, slot) | ("ram", start, length, slot)
    #        ("free", slot, pos, level) | ("restore", slot, pos) | ("reverse", pos)
    stack = [("free", 0, 0, DISK), ("disk", 0, fam, k0, top_layer, 0)]
    while stack:
        task = stack.pop()
        kind = task[0]
        if kind == "disk":
            _, a, f, k, d, slot = task
            lens, F, C, arg, aram = solved[f]
            L = int(lens[k])
            if L == 1:
                yield Action(REVERSE, 0, -1, a)
                continue
            j = int(arg[d, k])
            if j < 0:  # copy the start into RAM, then Revolve in RAM
                r = ram_free.pop()
                yield Action(STORE, 0, r, a, RAM)
                stack.append(("free", r, a, RAM))
                stack.append(("ram", a, L, r))
                continue
            m = j * unit
            yield Action(ADVANCE, m, -1, a)
            stack.append(("disk", a, 0, j, d, slot))
            stack.append(("restore", slot, a))
            rk = k - j
            rlen = L - m
            if rlen == 1:
                stack.append(("reverse", a + m))
            elif _right_on_disk(solved[f], d, rk):
                ds = disk_free.pop()
                yield Action(STORE, 0, ds, a + m, DISK)
                stack.append(("free", ds, a + m, DISK))
                stack.append(("disk", a + m, f, rk, d - 1, ds))
            else:
                r = ram_free.pop()
                yield Action(STORE, 0, r, a + m, RAM)
                stack.append(("free", r, a + m, RAM))
                stack.append(("ram", a + m, rlen, r))
        elif kind == "ram":
            _, a, L, r = task
            yield from _revolve_core(a, L, r, ram_free)
        elif kind == "free":
            _, slot, pos, level = task
            (disk_free if level is DISK else ram_free).append(slot)
            yield Action(FREE, 0, slot, pos, level)
        elif kind == "restore":
            yield Action(RESTORE, 0, task[1], task[2], DISK)
        else:
            yield Action(REVERSE, 0, -1, task[1])


def _first_turn(actions):
    """Mark the first reversal as FIRST_TURN (the driver's forward sweep ends there)."""
    it = iter(actions)
    for a in it:
        if a.kind is REVERSE:
            yield Action(FIRST_TURN, 0, -1, a.pos)
            break
        yield a
    yield from it


def _ram_slots(actions, offset):
    """Revolve's slots 0..s-1 renumbered offset.. (RAM slots follow the disk slots)."""
    for a in actions:
        if a.slot >= 0:
            a = a._replace(slot=a.slot + offset)
        yield a


# ----------------------------------------------------------------------------- multistage

def multistage_depth_counts(n, s):
    """Writes and reads of each stack depth of revolve(n, s): two int arrays of length s.

    Revolve's snapshots form a stack (slot i is always depth i), so the level a
    depth lives on can be chosen once for the whole schedule.  Counted from the
    split structure (each distinct (length, snapshots) range once), not by
    running the schedule.
    """
    n = _check_int("n", n, 0)
    s = _check_int("snapshots", s, 1)
    writes = np.zeros(s, dtype=np.int64)
    reads = np.zeros(s, dtype=np.int64)
    if n <= 1:  # nothing is stored: the one step is reversed from the input
        return writes, reads
    memo = {}  # (length, slots) -> (writes, reads) relative to the range's own depth
    stack = [(n, s, False)]
    while stack:
        L, t, ready = stack.pop()
        if (L, t) in memo:
            continue
        if L <= 1 or t < 1:
            memo[(L, t)] = (np.zeros(t, np.int64), np.zeros(t, np.int64))
            continue
        m = revolve_split(L, t)
        parts = [(m, t)] + ([(L - m, t - 1)] if L - m >= 2 else [])
        missing = [p for p in parts if p not in memo]
        if missing and not ready:
            stack.append((L, t, True))
            stack.extend((pl, pt, False) for pl, pt in missing)
            continue
        w = np.zeros(t, np.int64)
        r = np.zeros(t, np.int64)
        r[0] += 1  # the start is restored once for the left part
        lw, lr = memo[(m, t)]
        w += lw
        r += lr
        if L - m >= 2:
            rw, rr = memo[(L - m, t - 1)]
            w[1] += 1
            w[1:] += rw
            r[1:] += rr
        memo[(L, t)] = (w, r)
    w, r = memo[(n, s)]
    writes[:] = w
    writes[0] += 1  # position 0 is stored before the sweep
    reads[:] = r
    return writes, reads


def _multistage(n, ram, disk, write, read):
    """Revolve with ram + disk slots; the least used depths on disk."""
    total = min(ram + disk, max(n - 1, 1))
    writes, reads = multistage_depth_counts(n, total)
    weight = write * writes + read * reads
    order = sorted(range(total), key=lambda i: (-weight[i], i))
    in_ram = set(order[:min(ram, total)])
    on_disk = [i for i in range(total) if i not in in_ram]
    level = {}
    for k, depth in enumerate(on_disk):
        level[depth] = (DISK, k)
    for k, depth in enumerate(sorted(in_ram)):
        level[depth] = (RAM, disk + k)
    A = revolve_cost(n, total)[1]
    W = int(sum(writes[i] for i in on_disk))
    R = int(sum(reads[i] for i in on_disk))

    def build():
        for a in revolve(n, total):
            if a.slot >= 0:
                lv, slot = level[a.slot]
                a = a._replace(slot=slot, level=lv)
            yield a
    return TwoLevelCounts(A, W, R), build


# ----------------------------------------------------------------------------- planner

def _program_work(n, unit, layers):
    """Element operations of the program on the grid of `unit` (one or two families
    of lengths; each length also costs a few NumPy calls, counted as STEP_WORK)."""
    size = n // unit + 1
    families = 2 if n % unit else 1
    return families * (size * size // 2 * (layers + 1) + STEP_WORK * size)


def _grid_unit(n, layers, work):
    """The finest unit whose program fits in `work` (1: the exact program); a unit
    that divides n (one family of lengths) is preferred when one is near."""
    unit = 1
    if _program_work(n, unit, layers) <= work:
        return unit
    work = min(work, GRID_WORK)
    while _program_work(n, unit, min(layers, n // unit + 1)) > work:
        unit = max(unit + 1, int(unit * 1.1))
        unit = next((u for u in range(unit, unit + unit // 4 + 1) if n % u == 0), unit)
    return unit


def _hrevolve(n, ram, disk, write, read, work):
    layers = min(disk - 1, n)
    unit = _grid_unit(n, layers, work)
    layers = min(layers, n // unit + 1)
    solved = _solve(n, ram, layers, write, read, unit)
    tables = _counts_table(solved, unit, layers)
    fam = len(solved) - 1 if n % unit else 0
    a, w, r = (int(x) for x in tables[fam][:, layers, n // unit])
    counts = TwoLevelCounts(a, w + 1, r)  # + the write of position 0

    def build():
        return _first_turn(_hrevolve_actions(n, ram, disk, solved, unit, layers))
    return counts, build, unit


def plan_two_level(n, ram, disk, write, read, methods=("ram", "hrevolve", "multistage"),
                   work=EXACT_WORK):
    """The cheapest RAM + disk schedule for n steps (see the module docstring).

    ram >= 1 RAM snapshots, disk >= 0 disk slots; write, read: the cost of one disk
    write / read in forward steps.  ``methods`` limits the candidates (tests and
    benchmarks); ``work`` bounds the exact program's size before it goes to a grid.
    """
    n = _check_int("n", n, 0)
    ram = _check_int("ram snapshots", ram, 1)
    disk = _check_int("disk snapshots", disk, 0)
    write, read = float(write), float(read)
    if write < 0 or read < 0:
        raise ValueError(f"disk costs must be >= 0, got write={write}, read={read}")
    plans = []
    if "ram" in methods or disk == 0 or n <= 1:
        counts = TwoLevelCounts(revolve_cost(n, ram)[1], 0, 0)
        plans.append(TwoLevelPlan(n, ram, disk, write, read, "ram", counts,
                                  lambda: _ram_slots(revolve(n, ram), disk)))
    if disk and n >= 2:
        if "hrevolve" in methods:
            counts, build, unit = _hrevolve(n, ram, disk, write, read, work)
            plans.append(TwoLevelPlan(n, ram, disk, write, read, "hrevolve", counts, build, unit))
        if "multistage" in methods:
            counts, build = _multistage(n, ram, disk, write, read)
            plans.append(TwoLevelPlan(n, ram, disk, write, read, "multistage", counts, build))
    return min(plans, key=lambda p: p.cost)
