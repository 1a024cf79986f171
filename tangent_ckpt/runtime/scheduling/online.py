"""Online checkpointing: schedules for loops whose trip count is unknown until they end.

Driven step by step (``OnlineSchedule.before_step``), then ``reverse(n)`` once the
loop has stopped after n steps.  Two phases:

* **Exact** while n <= beta(s, 2) + 1 (about s^2 / 2 steps).  Before step p the
  driver still holds the state before step p - 1 (it keeps it for the first
  reversal anyway), so the schedule may snapshot position p - 1 knowing that
  the loop runs at least p + 1 steps.  For n in that range the offline optimum
  reverses n steps from s snapshots at positions 0 = q_0 < ... < q_{s-1} <= n - 2
  whose gaps (q_s = n - 1) satisfy q_{t+1} - q_t <= s + 1 - t: every range is
  then reversed with each step replayed once more.  The placement keeps that
  true for every n: before each step it stores the held position p - 1 and
  drops the leftmost snapshot whose two gaps, joined, still fit their bound;
  when no snapshot can go, it stores nothing.  In the spirit of Stumm and Walther
  ("New algorithms for optimal online checkpointing", SISC 32(2), 2010), whose
  r = 2 algorithm is optimal in this range; ``tests/test_online.py`` checks
  equality with the offline optimum for every n in it.  No online placement is
  optimal for every n much beyond: an exhaustive search (s <= 6) finds none
  past beta(s, 2) + 1, even with the held state (docs/schedules.md).
* **Doubling stride** beyond: snapshots at multiples of a stride d (1, 2, 4, ...).
  When all slots are full and a multiple of d is due, the snapshot whose
  neighbours are closest is freed, if they are at most 2d apart; otherwise d
  doubles.  For snapshots that sit on a stride this is the classic scheme
  (the odd multiples go as d doubles), freeing them one at a time as new ones
  are due; the snapshots of the exact phase stay until each is the cheapest to
  drop, so the switch loses none.

Reversal: step n-1 first (FIRST_TURN, from the state the driver holds), then the
ranges between retained snapshots, last first, each with revolve, using the slots
the later ranges freed; a small DP first drops retained snapshots whose ranges
would be reversed with too few slots (``_online_plan``).  Exact cost:
``online_cost(n, s)``.
"""

import sys

from tangent_ckpt.runtime.scheduling.schedules import (
    Action, ADVANCE, FIRST_TURN, FREE, RESTORE, STORE, FreeSlots, _check_int, _revolve_core, beta,
    revolve_cost, revolve_peak,
)

#: the most snapshot slots an online schedule plans with (a count of slots that
#: ``len()`` can still report)
MOST_SLOTS = sys.maxsize // 2

__all__ = ["OnlineSchedule", "online", "online_actions", "online_cost", "exact_online_limit"]


def exact_online_limit(snapshots):
    """The largest n for which the online schedule's cost equals the offline optimum
    for every trip count up to it: beta(s, 2) + 1 (every n for s = 1)."""
    s = _check_int("snapshots", snapshots, 1)
    return None if s == 1 else beta(s, 2) + 1


class OnlineSchedule:
    """Checkpointing for a loop whose trip count is unknown until it ends (``while``).

    Forward phase: call ``before_step(p)`` before running step p; it yields
    STORE/FREE actions.  A STORE's ``pos`` is p (the working state) or, in the
    exact phase, p - 1 (the state before the previous step, which the driver
    holds); ``lookahead=False`` never asks for p - 1 (and has no exact phase).  Once the loop has stopped after n steps, ``reverse(n)`` yields the
    reversal, FIRST_TURN first.  See the module docstring.
    """

    def __init__(self, snapshots, lookahead=True):
        # more slots than a loop can have steps are as good as unbounded
        self.snapshots = min(_check_int("snapshots", snapshots, 1), MOST_SLOTS)
        self.stride = 1
        self.kept = []  # list of (pos, slot), increasing pos
        self.free = FreeSlots(self.snapshots)  # slots 0, 1, 2, ... as they are needed
        # lookahead=False: the driver cannot snapshot the state before the previous
        # step (e.g. it would need that step's random-generator state too), so no
        # exact phase: the doubling stride from the start
        limit = exact_online_limit(self.snapshots) if lookahead else None
        # the last step before which the exact phase decides (its figures hold for n <= limit)
        self._exact_until = -1 if limit is None else limit - 1
        self._scan_from = 1  # the exact phase: no pair left of this fits (see _exact_step)

    def before_step(self, p):
        if p <= self._exact_until:
            return self._exact_step(p)
        return self._stride_step(p)

    def _exact_step(self, p):
        """Exact phase: maybe snapshot position p - 1 (held by the driver).

        With s snapshots held and q = p - 1 stored, the gaps are those between the
        snapshots, then (p - last) - 1, then 1 (the end is position p = n - 1 when
        n = p + 1).  Dropping snapshot j joins gaps j-1 and j, which must fit the
        bound s + 2 - j.  A pair left of the last dropped snapshot never changes,
        so the scan resumes where it stopped (amortised O(1) per step).
        """
        if p == 0:
            return [self._store(0)]
        q = p - 1
        kept = self.kept
        if q == 0 or kept[-1][0] == q:
            return []
        if self.free:
            return [self._store(q)]
        s = self.snapshots
        last_gap = p - kept[-1][0] - 1  # the last snapshot's gap once q is stored

        def gap(i):
            return kept[i + 1][0] - kept[i][0] if i < s - 1 else (last_gap if i == s - 1 else 1)
        j = max(1, self._scan_from)
        while j < s:
            if gap(j - 1) + gap(j) <= s + 2 - j:
                old, slot = kept.pop(j)
                self.free.append(slot)
                self._scan_from = j
                return [Action(FREE, 0, slot, old), self._store(q)]
            j += 1
        self._scan_from = max(1, s - 2)  # only the pairs at the end change until a drop
        return []

    def _store(self, q):
        slot = self.free.pop()
        self.kept.append((q, slot))
        return Action(STORE, 0, slot, q)

    def _stride_step(self, p):
        """Stride phase: store p if it is a multiple of the stride; when all slots are
        full, free the snapshot whose neighbours are closest, if they are at most two
        strides apart (else double the stride and try again)."""
        if p % self.stride or (self.kept and self.kept[-1][0] == p):
            return []
        if self.free:
            return [self._store(p)]
        kept = self.kept
        if len(kept) < 2:
            return []  # one snapshot (position 0): nothing to trade
        while True:
            # dropping kept[j] joins the ranges on both sides of it
            gap, j = min((kept[j + 1][0] - kept[j - 1][0], j) for j in range(1, len(kept) - 1)) \
                if len(kept) > 2 else (p - kept[0][0], 1)
            last = p - kept[-2][0]
            if last < gap:
                gap, j = last, len(kept) - 1
            if gap <= 2 * self.stride:
                old, slot = kept.pop(j)
                self.free.append(slot)
                return [Action(FREE, 0, slot, old), self._store(p)]
            self.stride *= 2
            if p % self.stride:
                return []

    def _reversal_positions(self, n):
        """The retained positions the reversal of an n-step loop starts from."""
        if n - 1 <= self._exact_until:  # the exact phase's snapshots are the optimum
            return [q for q, _ in self.kept if q < n - 1]
        return _online_plan([q for q, _ in self.kept], n, self.snapshots)

    def reverse(self, n):
        n = _check_int("n", n, 0)
        if n == 0:
            for q, slot in self.kept:
                yield Action(FREE, 0, slot, q)
            self.kept = []
            return
        yield Action(FIRST_TURN, 0, -1, n - 1)
        free = self.free
        chosen = set(self._reversal_positions(n))
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
    if len(pos) > _PLAN_MAX:  # too many for the DP: every snapshot, or every other one planned
        thinned = pos
        while len(thinned) > _PLAN_MAX:
            thinned = thinned[::2]
        planned = _online_plan(thinned, n, s)
        return min((pos, planned), key=lambda kept: _reversal_cost(kept, n, s))
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


def _reversal_cost(kept, n, s):
    """Plain steps of reversing from snapshots `kept` (increasing, all < n - 1)."""
    a, end = 0, n - 1
    for t in range(len(kept) - 1, -1, -1):
        a += revolve_cost(end - kept[t], s - t)[1] if s - t >= 1 else float("inf")
        end = kept[t]
    return a


def online(snapshots, lookahead=True):
    """An :class:`OnlineSchedule` with `snapshots` slots (for loops of unknown length)."""
    return OnlineSchedule(snapshots, lookahead)


def online_actions(n, snapshots):
    """The whole action stream the online schedule produces for a loop that stops after n steps.

    A snapshot of the held position p - 1 is placed before the advance of step p - 1,
    so the stream can be run by a simulator that tracks one working position.
    """
    sched = OnlineSchedule(snapshots)
    if n == 0:
        yield from sched.reverse(0)
        return
    for p in range(n):
        acts = list(sched.before_step(p))
        yield from (a for a in acts if a.pos < p)
        if p:
            yield Action(ADVANCE, 1, -1, p - 1)
        yield from (a for a in acts if a.pos == p)
    yield from sched.reverse(n)


def online_cost(n, snapshots):
    """(A, T, peak) of the online schedule for a loop of n steps, computed without running it
    step by step beyond the exact phase.

    A = (n - 1) + sum over the kept ranges t of revolve A(len_t, s - t).  It is never below
    the offline optimum A(n, s), and equal to it for n <= exact_online_limit(s).
    """
    s = _check_int("snapshots", snapshots, 1)
    n = _check_int("n", n, 0)
    if n <= 1:
        return (0, n, n)  # n == 1: position 0 was stored before the end was known
    sched = OnlineSchedule(s)
    peak = 0
    p = 0
    while p < n:  # the exact phase step by step, then only where stores can happen
        for _ in sched.before_step(p):
            pass
        peak = max(peak, len(sched.kept))
        if p <= sched._exact_until:
            p += 1
        else:
            p += sched.stride - (p % sched.stride) if p % sched.stride else sched.stride
    kept = sched._reversal_positions(n)
    a = n - 1
    end = n - 1
    for t in range(len(kept) - 1, -1, -1):
        length = end - kept[t]
        if length >= 2:
            peak = max(peak, t + revolve_peak(length, s - t))
        a += revolve_cost(length, s - t)[1]
        end = kept[t]
    return (a, a + n, peak)
