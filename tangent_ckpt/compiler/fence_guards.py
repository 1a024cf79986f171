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

import numpy as np


class Guard(NamedTuple):
    """A write into parameter ``written`` (at the user's ``line``) would change
    ``other`` (a parameter or module-level array read afterwards) if the caller
    gave the two the same memory."""
    written: str
    other: str
    line: int


class FenceFindings(NamedTuple):
    """What the fence hands on about one function: its guards, and the line of
    the first in-place write into each parameter's memory (a helper's caller
    gives that memory: lower/guards.py checks what it gives)."""
    guards: tuple
    written: dict


class GuardNotes:
    """The guards one function's fence notes, in the order of their writes."""

    def __init__(self, parsed, fnode):
        self.parsed = parsed
        self.fnode = fnode
        self.pairs = {}  # (written parameter, other) -> the write's line
        self.written = {}  # parameter written in place -> the first write's line
        self.global_arrays = None  # the module-level arrays the function reads
        self.arrays = {}  # free name -> whether it denotes a NumPy array

    def note(self, fence, written, env, s):
        """At the write ``s`` into the origins ``written``: a guard for each
        parameter written and each other parameter or module-level array that a
        name live after ``s`` may be."""
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

    def findings(self):
        guards = tuple(Guard(written, other, line)
                       for (written, other), line in self.pairs.items())
        return FenceFindings(guards, dict(self.written))

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
