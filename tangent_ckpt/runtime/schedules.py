"""Checkpointing schedules: lazy streams of actions for reversing an n-step loop.

Positions are the states between steps: position ``p`` is the state before step
``p`` (position 0 is the loop's input, position n its result).  A schedule is a
generator of :class:`Action` records; the driver (or a simulator) executes them
against a *working state* whose position it tracks:

``ADVANCE k``     run k plain (untaped) steps: position p -> p + k
``STORE slot``    copy the working state into snapshot ``slot`` (``pos`` = its position)
``RESTORE slot``  working state := copy of snapshot ``slot``; position := its position
``FREE slot``     the snapshot in ``slot`` is no longer needed
``FIRST_TURN``    record and reverse step ``pos`` (= n - 1), the first reversal
``REVERSE``       record and reverse step ``pos`` (the working state's position)

Conventions (Griewank & Walther, Algorithm 799): the snapshot of position 0 counts
against the ``snapshots`` budget; the working state and the one-step tape do not.
After a reversal the working state is dead until the next RESTORE.

Every generator keeps O(snapshots) memory (an explicit stack), never O(n) lists.
"""

from collections import namedtuple
from functools import lru_cache
from math import comb

__all__ = [
    "Action", "ADVANCE", "STORE", "RESTORE", "FREE", "FIRST_TURN", "REVERSE",
    "beta", "repetition_number", "revolve_cost", "revolve_split", "revolve_peak",
    "default_snapshots", "revolve", "uniform", "uniform_cost", "online",
    "OnlineSchedule", "online_actions", "online_cost",
]

ADVANCE = "advance"
STORE = "store"
RESTORE = "restore"
FREE = "free"
FIRST_TURN = "first_turn"
REVERSE = "reverse"

Action = namedtuple("Action", "kind n slot pos")
Action.__doc__ = """One schedule action.

``kind``: one of ADVANCE, STORE, RESTORE, FREE, FIRST_TURN, REVERSE.
``n``: number of steps (ADVANCE), else 0.  ``slot``: snapshot slot (STORE,
RESTORE, FREE), else -1.  ``pos``: the position the action starts at (for
ADVANCE), the snapshot's position (STORE/RESTORE/FREE) or the step reversed.
"""


def _check_int(name, value, minimum):
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            import numpy as np
            if isinstance(value, np.integer):
                value = int(value)
            else:
                raise TypeError
        except TypeError:
            raise ValueError(f"{name} must be an integer, got {value!r}") from None
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def beta(s, r):
    """beta(s, r) = C(s + r, s): the most steps s snapshots reverse with r replays per step."""
    if s < 0 or r < 0:
        return 0
    return comb(s + r, s)


def repetition_number(n, s, start=None):
    """The least r >= 0 with beta(s, r) >= n (r = 0 for n <= 1).

    ``start`` is an upper bound to search down from (used inside revolve so that
    each split costs O(1) amortised work).
    """
    if n <= 1:
        return 0
    if s == 1:
        return n - 1
    if start is None:
        r = 1
        while beta(s, r) < n:
            r *= 2
        lo = r // 2 if r > 1 else 0  # beta(s, lo) < n <= beta(s, r)
        while r - lo > 1:
            mid = (lo + r) // 2
            if beta(s, mid) >= n:
                r = mid
            else:
                lo = mid
        return r
    r = start
    while r > 1 and beta(s, r - 1) >= n:
        r -= 1
    while beta(s, r) < n:
        r += 1
    return r


def revolve_cost(n, s):
    """(r, A, T) for reversing n steps with s snapshots, from the closed form.

    r: repetition number (least r with beta(s, r) >= n); A = r*n - beta(s+1, r-1):
    the minimal number of plain forward steps (ADVANCE); T = A + n: total forward
    evaluations including the n re-recorded steps.  n = 0 gives (0, 0, 0); n = 1
    gives (0, 0, 1).
    """
    n = _check_int("n", n, 0)
    s = _check_int("snapshots", s, 1)
    if n <= 1:
        return (0, 0, n)
    r = repetition_number(n, s)
    a = r * n - beta(s + 1, r - 1)
    return (r, a, a + n)


def revolve_split(n, s, r=None):
    """The first advance m (1 <= m < n) of an optimal schedule for (n, s).

    With r = repetition_number(n, s), any m with
    max(beta(s, r-2), n - beta(s-1, r)) <= m <= min(beta(s, r-1), n - beta(s-1, r-1))
    keeps both halves on their optimal slope (left: r-1 replays with s snapshots,
    right: r replays with s-1 snapshots), so m + A(m, s) + A(n-m, s-1) = A(n, s).
    We take the largest such m.
    """
    if r is None:
        r = repetition_number(n, s)
    hi = min(beta(s, r - 1), n - beta(s - 1, r - 1))
    return max(1, min(hi, n - 1))


def default_snapshots(n):
    """Snapshots used when none are given: the least s >= 1 with beta(s, 3) >= n, capped at n.

    With this many snapshots every step is replayed at most 3 times (r <= 3), so the
    total forward evaluations stay below 4n; s grows like (6n)^(1/3).
    """
    n = _check_int("n", n, 0)
    if n <= 1:
        return 1
    s = 1
    while beta(s, 3) < n:
        s += 1
    return max(1, min(s, n))


def _revolve_core(start, length, slot, free, r_hint=None, first=False):
    """Reverse steps [start, start+length) given the working state at `start` and a
    snapshot of `start` in `slot`; `free` is a LIFO list of free slots (shared).

    Yields actions; restores `free` to its original content when done.  The number
    of snapshots available to a sub-problem is 1 + len(free) when it starts.
    """
    # task tuples: (0, a, b, slot, r_hint) solve; (1, slot) release; (2, slot, pos) restore
    stack = [(0, start, start + length, slot, r_hint)]
    first_pending = first
    while stack:
        task = stack.pop()
        if task[0] == 0:
            _, a, b, sa, rh = task
            n = b - a
            if n == 1:
                if first_pending:
                    first_pending = False
                    yield Action(FIRST_TURN, 0, -1, a)
                else:
                    yield Action(REVERSE, 0, -1, a)
                continue
            s = 1 + len(free)
            r = repetition_number(n, s, rh)
            m = revolve_split(n, s, r)
            yield Action(ADVANCE, m, -1, a)
            stack.append((0, a, a + m, sa, max(r - 1, 1)))
            stack.append((2, sa, a))
            if n - m >= 2:
                new = free.pop()
                yield Action(STORE, 0, new, a + m)
                stack.append((1, new, a + m))
                stack.append((0, a + m, b, new, r))
            else:
                stack.append((0, a + m, b, -1, r))
        elif task[0] == 1:
            free.append(task[1])
            yield Action(FREE, 0, task[1], task[2])
        else:
            yield Action(RESTORE, 0, task[1], task[2])


def revolve(n, snapshots):
    """Offline binomial checkpointing (Griewank & Walther, Alg. 799): exactly optimal.

    Reverses steps n-1..0 with at most `snapshots` snapshots (slots 0..s-1, slot 0
    holds position 0) using exactly A = revolve_cost(n, s)[1] plain forward steps.
    The forward sweep is every action before FIRST_TURN.
    """
    n = _check_int("n", n, 0)
    s = _check_int("snapshots", snapshots, 1)
    if n == 0:
        return
    if n == 1:
        yield Action(FIRST_TURN, 0, -1, 0)
        return
    free = list(range(s - 1, 0, -1))  # pop() hands out 1, 2, 3, ...
    yield Action(STORE, 0, 0, 0)
    yield from _revolve_core(0, n, 0, free, None, first=True)
    yield Action(FREE, 0, 0, 0)


@lru_cache(maxsize=65536)
def _peak(n, s):
    # slots in use at once by _revolve_core on length n with s available (own slot counted)
    if n <= 1:
        return 1
    if s == 1:
        return 1
    m = revolve_split(n, s)
    right = (1 + _peak(n - m, s - 1)) if n - m >= 2 else 1
    return max(right, _peak(m, s))


def revolve_peak(n, s):
    """Most snapshots revolve(n, s) holds at once (0 for n <= 1)."""
    n = _check_int("n", n, 0)
    s = _check_int("snapshots", s, 1)
    if n <= 1:
        return 0
    return _peak(n, s)


# ----------------------------------------------------------------------------- uniform

def uniform(n, every):
    """The sqrt(n) scheme: a snapshot every `every` steps, each segment re-taped in reverse.

    Forward sweep: advance to n-1, storing segment starts 0, k, 2k, ... (k = every).
    Reverse: FIRST_TURN at n-1; then for each segment from last to first: restore its
    start, advance through it storing every intermediate state (the segment's tape,
    held in extra slots), reverse its last step from the working state, then restore
    and reverse the stored states one by one, freeing each.

    Cost (see uniform_cost): about 2n plain steps and ceil(n/k) + k - 2 snapshots at peak
    -- the segment tape is real memory and is counted.
    """
    n = _check_int("n", n, 0)
    k = _check_int("every", every, 1)
    if n == 0:
        return
    if n == 1:
        yield Action(FIRST_TURN, 0, -1, 0)
        return
    nseg = -(-n // k)
    # slots: segment j -> slot j ; tape slots nseg, nseg+1, ...
    pos = 0
    for j in range(nseg):
        c = j * k
        end = min(c + k, n)
        needed = (end - c >= 2) if j == nseg - 1 else True
        if c > pos:
            yield Action(ADVANCE, c - pos, -1, pos)
            pos = c
        if needed:
            yield Action(STORE, 0, j, c)
    if n - 1 > pos:
        yield Action(ADVANCE, n - 1 - pos, -1, pos)
    yield Action(FIRST_TURN, 0, -1, n - 1)
    for j in range(nseg - 1, -1, -1):
        c = j * k
        last = min(c + k, n) - 1
        if j == nseg - 1:
            last -= 1  # step n-1 already reversed
            if last < c:
                continue
        yield Action(RESTORE, 0, j, c)
        p = c
        tape = []
        while p < last:
            if p > c:
                t = nseg + len(tape)
                tape.append((t, p))
                yield Action(STORE, 0, t, p)
            yield Action(ADVANCE, 1, -1, p)
            p += 1
        yield Action(REVERSE, 0, -1, last)
        while tape:
            t, q = tape.pop()
            yield Action(RESTORE, 0, t, q)
            yield Action(REVERSE, 0, -1, q)
            yield Action(FREE, 0, t, q)
        if last > c:
            yield Action(RESTORE, 0, j, c)
            yield Action(REVERSE, 0, -1, c)
        yield Action(FREE, 0, j, c)


def uniform_cost(n, every):
    """(A, T, peak_snapshots) of uniform(n, every): plain steps, total evaluations, peak slots.

    Segments of length L_j (last one L): A = (n - 1) + sum over full reversals of
    (L_j - 1) + max(L - 2, 0); the peak is (segments alive) + (segment tape - 1).
    """
    n = _check_int("n", n, 0)
    k = _check_int("every", every, 1)
    if n <= 1:
        return (0, n, 0)
    nseg = -(-n // k)
    lens = [min(k, n - j * k) for j in range(nseg)]
    a = n - 1
    peak = 0
    for j in range(nseg - 1, -1, -1):
        L = lens[j] if j < nseg - 1 else lens[j] - 1
        if L <= 0:
            continue
        a += L - 1
        seg_alive = j + 1
        peak = max(peak, seg_alive + max(L - 2, 0))
    if nseg >= 1:
        stored = nseg if lens[-1] >= 2 else nseg - 1
        peak = max(peak, stored)
    return (a, a + n, peak)


# ----------------------------------------------------------------------------- online

class OnlineSchedule:
    """Checkpointing for a loop whose trip count is unknown until it ends (``while``).

    Driven step by step.  Forward phase: call ``before_step(p)`` before running step p
    (it yields STORE/FREE actions for position p).  Snapshots sit at multiples of a
    stride d (d = 1, 2, 4, ...): when all `snapshots` slots are full and position p
    is due, d doubles and the snapshots at odd multiples of the old stride are freed.
    Position 0 is always kept.  Once the loop has stopped after n steps, ``reverse(n)``
    yields FIRST_TURN for step n-1 (the driver holds the state before the last step),
    then reverses each range between retained snapshots, last first, with revolve,
    using the slots freed by the later ranges (a small DP first drops retained
    snapshots whose ranges would be reversed with too few slots; see _online_plan).
    Exact cost: ``online_cost(n, s)``.
    """

    def __init__(self, snapshots):
        self.snapshots = _check_int("snapshots", snapshots, 1)
        self.stride = 1
        self.kept = []  # list of (pos, slot), increasing pos
        self.free = list(range(self.snapshots - 1, -1, -1))

    def before_step(self, p):
        if p % self.stride:
            return
        if self.kept and self.kept[-1][0] == p:
            return
        if not self.free:
            if self.snapshots == 1:
                return
            while not self.free:
                self.stride *= 2
                keep = []
                for q, slot in self.kept:
                    if q % self.stride:
                        self.free.append(slot)
                        yield Action(FREE, 0, slot, q)
                    else:
                        keep.append((q, slot))
                self.kept = keep
                self.free.sort(reverse=True)
            if p % self.stride:
                return
        slot = self.free.pop()
        self.kept.append((p, slot))
        yield Action(STORE, 0, slot, p)

    def reverse(self, n):
        n = _check_int("n", n, 0)
        if n == 0:
            for q, slot in self.kept:
                yield Action(FREE, 0, slot, q)
            self.kept = []
            return
        yield Action(FIRST_TURN, 0, -1, n - 1)
        free = self.free
        chosen = set(_online_plan([q for q, _ in self.kept], n, self.snapshots))
        kept = []
        for q, slot in self.kept:  # free what the plan drops before reversing
            if q in chosen:
                kept.append((q, slot))
            else:
                free.append(slot)
                yield Action(FREE, 0, slot, q)
        end = n - 1
        while kept:
            q, slot = kept.pop()
            if end > q:
                yield Action(RESTORE, 0, slot, q)
                yield from _revolve_core(q, end - q, slot, free)
            free.append(slot)
            yield Action(FREE, 0, slot, q)
            end = q
        self.kept = []
        if end != 0:  # pragma: no cover - position 0 is always kept when n >= 2
            raise AssertionError("online schedule lost position 0")


_PLAN_MAX = 24


def _online_plan(positions, n, s):
    """Which retained positions to keep for the reversal of an n-step loop.

    Range t (from the t-th kept snapshot, 0-based) is reversed while t earlier
    snapshots are still held, so with s - t snapshots.  A small DP over the retained
    positions picks the subset (always containing 0) minimising
    sum_t A(range_t, s - t); with more than _PLAN_MAX candidates, every other one is
    dropped first.
    """
    pos = [q for q in positions if q < n - 1]
    if not pos:
        return []
    while len(pos) > _PLAN_MAX:
        pos = pos[::2]
    k = len(pos)
    INF = float("inf")
    # f[t][i]: least cost of reversing [pos[i], n-1) when pos[i] is the t-th kept snapshot
    f = [[INF] * k for _ in range(k + 1)]
    nxt = [[None] * k for _ in range(k + 1)]
    for t in range(k - 1, -1, -1):
        for i in range(t, k):
            avail = s - t
            if avail < 1:
                continue
            best, arg = revolve_cost(n - 1 - pos[i], avail)[1], None
            for j in range(i + 1, k):
                if s - t - 1 < 1 or f[t + 1][j] == INF:
                    continue
                c = revolve_cost(pos[j] - pos[i], avail)[1] + f[t + 1][j]
                if c < best:
                    best, arg = c, j
            f[t][i], nxt[t][i] = best, arg
    out, t, i = [], 0, 0
    while i is not None:
        out.append(pos[i])
        i = nxt[t][i]
        t += 1
    return out


def online(snapshots):
    """An :class:`OnlineSchedule` with `snapshots` slots (for loops of unknown length)."""
    return OnlineSchedule(snapshots)


def online_actions(n, snapshots):
    """The whole action stream the online schedule produces for a loop that stops after n steps."""
    sched = OnlineSchedule(snapshots)
    if n == 0:
        yield from sched.reverse(0)
        return
    for p in range(n):
        yield from sched.before_step(p)
        if p < n - 1:
            yield Action(ADVANCE, 1, -1, p)
    yield from sched.reverse(n)


def online_cost(n, snapshots):
    """(A, T, peak) of the online schedule for a loop of n steps, computed without running it.

    A = (n - 1) + sum over the kept ranges t of revolve A(len_t, s - t).  It is never below
    the offline optimum A(n, s); measured ratios are in docs/schedules.md.
    """
    s = _check_int("snapshots", snapshots, 1)
    n = _check_int("n", n, 0)
    if n <= 1:
        return (0, n, n)  # n == 1: position 0 was stored before the end was known
    sched = OnlineSchedule(s)
    peak = 0
    # simulate positions only where stores can happen (multiples of the stride)
    p = 0
    while p < n:
        for _ in sched.before_step(p):
            pass
        peak = max(peak, len(sched.kept))
        p += sched.stride - (p % sched.stride) if p % sched.stride else sched.stride
    kept = _online_plan([q for q, _ in sched.kept], n, s)
    a = n - 1
    end = n - 1
    for t in range(len(kept) - 1, -1, -1):
        length = end - kept[t]
        if length >= 2:
            peak = max(peak, t + revolve_peak(length, s - t))
        a += revolve_cost(length, s - t)[1]
        end = kept[t]
    return (a, a + n, peak)
