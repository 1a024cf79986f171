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

STORE, RESTORE and FREE name the storage level of their snapshot: ``level`` is
RAM (the default) or DISK.  Schedules for RAM + disk (``tangent_ckpt.runtime.scheduling.hrevolve``)
number disk slots 0..D-1 and RAM slots from D up, the convention of
``snapshots.TwoLevelStore``, so a slot's number and its level always agree.

Conventions (Griewank & Walther, Algorithm 799): the snapshot of position 0 counts
against the ``snapshots`` budget; the working state and the one-step tape do not.
After a reversal the working state is dead until the next RESTORE.

Every generator keeps O(snapshots) memory (an explicit stack), never O(n) lists.
"""

from collections import namedtuple
from math import comb

__all__ = [
    "NAMES", "Action", "ADVANCE", "STORE", "RESTORE", "FREE", "FIRST_TURN", "REVERSE", "RAM", "DISK",
    "beta", "repetition_number", "revolve_cost", "revolve_split", "revolve_peak",
    "default_snapshots", "revolve", "uniform", "uniform_cost", "label_levels", "action_counts",
]

# the schedules a checkpointed loop can run (``schedule=``): the driver dispatches on
# these, the options check them; a new schedule adds its name here
NAMES = ("revolve", "uniform", "online")

ADVANCE = "advance"
STORE = "store"
RESTORE = "restore"
FREE = "free"
FIRST_TURN = "first_turn"
REVERSE = "reverse"

#: storage levels of a snapshot
RAM = "ram"
DISK = "disk"

Action = namedtuple("Action", "kind n slot pos level", defaults=(RAM,))
Action.__doc__ = """One schedule action.

``kind``: one of ADVANCE, STORE, RESTORE, FREE, FIRST_TURN, REVERSE.
``n``: number of steps (ADVANCE), else 0.  ``slot``: snapshot slot (STORE,
RESTORE, FREE), else -1.  ``pos``: the position the action starts at (for
ADVANCE), the snapshot's position (STORE/RESTORE/FREE) or the step reversed.
``level``: where the snapshot of a STORE, RESTORE or FREE lives, RAM or DISK
(RAM for the other kinds).
"""
# Action((kind, n, slot, pos, level)) without the namedtuple's keyword-handling
# constructor: revolve makes about four actions per step reversed
_action = tuple.__new__


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


class FreeSlots:
    """The free snapshot slots of ``count`` (0 .. count - 1) as a LIFO pool, the
    list ``[count - 1, ..., 1, 0]`` without its memory: only the slots handed out
    and given back are listed, so that a loop of unknown length may be given
    more slots than it will ever use (``snapshots=10**9`` on a 4-step loop).
    ``pop`` hands out slots given back first, then 0, 1, 2, ... as the list would."""

    def __init__(self, count):
        self._count = count
        self._next = 0  # the slots below it were handed out once
        self._returned = []

    def pop(self):
        if self._returned:
            return self._returned.pop()
        if self._next >= self._count:
            raise IndexError("no free snapshot slot")
        self._next += 1
        return self._next - 1

    def append(self, slot):
        self._returned.append(slot)

    def __len__(self):
        return len(self._returned) + self._count - self._next


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
                    yield _action(Action, (FIRST_TURN, 0, -1, a, RAM))
                else:
                    yield _action(Action, (REVERSE, 0, -1, a, RAM))
                continue
            s = 1 + len(free)
            r = repetition_number(n, s, rh)
            m = revolve_split(n, s, r)
            yield _action(Action, (ADVANCE, m, -1, a, RAM))
            stack.append((0, a, a + m, sa, max(r - 1, 1)))
            stack.append((2, sa, a))
            if n - m >= 2:
                new = free.pop()
                yield _action(Action, (STORE, 0, new, a + m, RAM))
                stack.append((1, new, a + m))
                stack.append((0, a + m, b, new, r))
            else:
                stack.append((0, a + m, b, -1, r))
        elif task[0] == 1:
            free.append(task[1])
            yield _action(Action, (FREE, 0, task[1], task[2], RAM))
        else:
            yield _action(Action, (RESTORE, 0, task[1], task[2], RAM))


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
    # pop() hands out 1, 2, 3, ...; more than n slots change nothing (the schedule
    # of revolve(n, s) is that of revolve(n, n) for every s >= n): none is listed
    free = list(range(min(s, n) - 1, 0, -1))
    yield Action(STORE, 0, 0, 0)
    yield from _revolve_core(0, n, 0, free, None, first=True)
    yield Action(FREE, 0, 0, 0)


def revolve_peak(n, s):
    """Most snapshots revolve(n, s) holds at once: min(s, n - 1) (0 for n <= 1).

    The forward sweep stores a snapshot at every split until either all s are
    held or the range left is one step (s >= n - 1: a snapshot before each of
    the first n - 1 steps); the reversal never holds more than that sweep did.
    The tests check this against every simulated schedule with n <= 300, s <= 12.
    """
    n = _check_int("n", n, 0)
    s = _check_int("snapshots", s, 1)
    if n <= 1:
        return 0
    return min(s, n - 1)


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


def label_levels(actions, disk_slots):
    """Actions of a schedule planned for one level, with slots below `disk_slots` on
    DISK (the bottom slots: the outermost, longest-lived snapshots)."""
    if not disk_slots:
        yield from actions
        return
    for a in actions:
        if 0 <= a.slot < disk_slots:
            a = a._replace(level=DISK)
        yield a


def action_counts(actions):
    """(plain advances, disk writes, disk reads) of an action stream, by running through it."""
    adv = writes = reads = 0
    for a in actions:
        if a.kind is ADVANCE:
            adv += a.n
        elif a.level is DISK:
            writes += a.kind is STORE
            reads += a.kind is RESTORE
    return adv, writes, reads
