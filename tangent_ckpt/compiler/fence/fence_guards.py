"""Sharing only the call can decide: guards the aliasing fence (``aliasing.py``)
hands to the lowering.

The fence follows every name of a function back to its memory origins.  Two
parameters are two origins, and so are a parameter and a module-level array:
the compiler differentiates them as separate arrays, and nothing in the
function can say whether the caller passed the same array twice (``f(a, a)``)
or a view of the other (``f(W[0], W)``).  Where that matters -- a write into
a parameter's memory while another parameter (or a module-level array, or a
name holding one) is read afterwards -- the fence notes a :class:`Guard`; the
lowering puts ``rt.distinct_arrays(W, b, names=('W', 'b'), line=6)`` at the
top of the generated function, once per pair (a parameter's memory is fixed
for the whole call, loops included).  A call whose two arrays share no memory
runs the gradient compiled for separate arrays, exactly; one whose arrays do
share memory stops with an error naming both names and the write's line.
"""

from typing import NamedTuple

import gast
import numpy as np


class Guard(NamedTuple):
    """A write into parameter ``written`` (at the user's ``line``) would change
    ``other`` (a parameter or module-level array read afterwards) if the caller
    gave the two the same memory."""
    written: str
    other: str
    line: int


class DistinctItems(NamedTuple):
    """An in-place update of an item of parameter ``param`` (at the user's
    ``line``: ``ws[k] -= v``) would change another of its places, read
    afterwards, if the caller's list held one array at two places."""
    param: str
    line: int


class FenceFindings(NamedTuple):
    """What the fence hands on about one function: its guards; the line of the
    first in-place write into each parameter's memory (a helper's caller gives
    that memory: lower/guards.py checks what it gives); and, for each call that
    writes into its arguments, the arguments proved to share no memory with any
    other (new arrays made in the function: its calls need no check of them)."""
    guards: tuple
    written: dict
    separate: dict  # id(call) -> (call, names of its arguments proved separate)
    local: dict  # id(def) -> (def, its FenceFindings): the functions defined inside
    # id(statement) -> (statement, ((written name, other name, line), ...)): the
    # checks made right before a write (a black box's result and its argument)
    before: dict
    # the parameters whose calls the fence took to return new objects (only where it
    # refused otherwise: fence_once.py): each call site must give such functions
    assumed_new: frozenset = frozenset()
    # (DistinctItems, ...): the parameters one of whose items is updated in place
    # (ws[k] -= v) while a place of theirs is read afterwards: the caller's list may
    # hold one array at two places (rt.distinct_items)
    repeated_items: tuple = ()


class FenceIndex:
    """What the fences of one compilation found, for the lowering to look up by
    node (the differentiated function's, its helpers', their local functions')."""

    def __init__(self):
        self.separate = {}
        self.local = {}
        self.before = {}

    def add(self, found):
        self.separate.update(found.separate)
        self.local.update(found.local)
        self.before.update(found.before)
        for _, inner in found.local.values():
            self.add(inner)

    def get(self, table, node):
        """``node``'s entry of ``table`` (one of the dicts above), or None."""
        entry = getattr(self, table).get(id(node))
        return entry[1] if entry is not None and entry[0] is node else None


class GuardNotes:
    """The guards one function's fence notes, in the order of their writes."""

    def __init__(self, parsed, fnode):
        self.parsed = parsed
        self.fnode = fnode
        self.pairs = {}  # (written parameter, other) -> the write's line
        self.written = {}  # parameter written in place -> the first write's line
        self.global_arrays = None  # the module-level arrays the function reads
        self.arrays = {}  # free name -> whether it denotes a NumPy array
        self.separate = {}  # id(call) -> (call, argument names proved separate)
        # a black box's result (alias_values.py): id(call) -> what its arguments may be
        self.opaque = {}
        self.before = {}  # id(statement) -> (statement, {(written, other): line})
        self.items = {}  # parameter whose item is updated in place -> the first line

    def note(self, fence, written, env, s, node=None, name=None):
        """At the write ``s`` into the origins ``written`` of ``name`` (by the call
        ``node``, when a call writes): a guard for each parameter written and each
        other parameter or module-level array that a name live after ``s`` may
        be; a check before ``s`` where a black box's result is involved."""
        if isinstance(node, gast.Call):
            self.note_call(fence, node, env)
        if self.opaque and name is not None:
            self.note_black_box(fence, name, written, env, s)
        params = sorted(o[1] for o in written if o[0] == "param")
        if not params:
            return
        for p in params:
            self.written.setdefault(p, s.lineno)
        def unguarded(other):
            return any(p != other and (p, other) not in self.pairs and
                       (other, p) not in self.pairs for p in params)

        # origins first, liveness (a pass over the function per name) only where
        # it may add a guard
        others = set()
        for name, info in env.items():
            found = {o[1] for o in info.everything() if not name.startswith("\0") and (
                o[0] == "param" or (o[0] == "global" and self.is_array(o[1])))}
            found = {o for o in found - others if unguarded(o)}
            if found and _live_after(fence, name, s):
                others |= found
        others |= {name for name in self.arrays_read(fence)
                   if unguarded(name) and _live_after(fence, name, s)}
        for p in params:
            for other in sorted(others - {p}):
                if (p, other) not in self.pairs and (other, p) not in self.pairs:
                    self.pairs[(p, other)] = s.lineno

    def note_item_update(self, fence, current, env, s):
        """At ``s``, an in-place update of an item of a value that may be a
        parameter's list, tuple or dict (``ws[k] -= v``, ``current``: what the
        updated name may be): the caller may have put one array at two of its
        places (``[a, a]``), which only the call decides; noted for each such
        parameter where a name that may hold its items is read afterwards."""
        params = sorted(o[1] for o in current.holds if o[0] == "param*")
        for p in params:
            if p in self.items:
                continue
            if any(("param*", p) in info.everything() and not name.startswith("\0") and
                   _live_after(fence, name, s) for name, info in env.items()):
                self.items[p] = s.lineno

    def note_call(self, fence, call, env):
        """Which of the names ``call`` is given are new arrays made in the function
        (each origin an allocation site, not a view the view lowering follows) that
        no other argument may be: separate whatever the caller passed.  Over the
        rounds of a loop, what holds in every round."""
        given = [a for a in list(call.args) + [k.value for k in call.keywords]
                 if not isinstance(a, gast.Constant)]
        names = {a.id for a in given if isinstance(a, gast.Name)}
        origins = {n: env.get(n, fence.free_info(n)).everything() for n in names}

        def fresh(n):  # a followed view is a new site here, though it is its root's memory
            return bool(origins[n]) and all(o[0] == "site" and o[1] not in fence.followed
                                            for o in origins[n])

        # another argument that is no name (but a constant), or a followed view, may
        # be anything
        plain = len(names) == len({a.id if isinstance(a, gast.Name) else id(a)
                                   for a in given}) and all(
            not (o[0] == "site" and o[1] in fence.followed) for n in names for o in origins[n])
        proved = {n for n in names if plain and fresh(n) and
                  not any(origins[n] & origins[m] for m in names - {n})}
        if id(call) in self.separate:
            proved &= self.separate[id(call)][1]
        self.separate[id(call)] = (call, proved)

    def note_black_box(self, fence, name, written, env, s):
        """A write into ``name`` while a live name may share its memory only
        through what a black box returned (``w = solver(z); w += 1`` with ``z``
        read later): NumPy decides when it runs; checked right before ``s``."""
        mine = self.expanded(written)
        for other, info in env.items():
            if other == name or other.startswith("\0") or written & info.everything():
                continue
            if mine & self.expanded(info.everything()) and _live_after(fence, other, s):
                pairs = self.before.setdefault(id(s), (s, {}))[1]
                if (other, name) not in pairs:
                    pairs.setdefault((name, other), s.lineno)

    def expanded(self, origins):
        """``origins`` and, for a black box's result, what its arguments may be."""
        out, todo = set(origins), list(origins)
        while todo:
            o = todo.pop()
            if o[0] == "site" and o[1] in self.opaque:
                new = self.opaque[o[1]] - out
                out |= new
                todo.extend(new)
        return out

    def findings(self, local_fences=()):
        """The findings; ``local_fences``: the fences of the functions defined in
        this one (their calls are checked as a helper's are, lower/guards.py)."""
        guards = tuple(Guard(written, other, line)
                       for (written, other), line in self.pairs.items())
        local = {id(f.fnode): (f.fnode, f.guards.findings()) for f in local_fences}
        separate = dict(self.separate)
        before = {key: (stmt, tuple((a, b, line) for (a, b), line in pairs.items()))
                  for key, (stmt, pairs) in self.before.items()}
        return FenceFindings(guards, dict(self.written), separate, local, before,
                             repeated_items=tuple(DistinctItems(p, line)
                                                  for p, line in self.items.items()))

    def arrays_read(self, fence):
        """The module-level (or closure) NumPy arrays the function reads by name."""
        if self.global_arrays is None:
            self.global_arrays = sorted(name for name in fence.names_read(self.fnode)
                                        if name not in fence.locals and self.is_array(name))
        return self.global_arrays

    def is_array(self, name):
        if name not in self.arrays:
            self.arrays[name] = isinstance(self.parsed.resolve(name), np.ndarray)
        return self.arrays[name]


def _live_after(fence, name, s):
    return name in fence.always_live or id(s) in fence.live_after(name)
