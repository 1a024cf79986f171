"""Which carried arrays of a checkpointed loop its steps may write in place.

A carried array the function owns (``fresh_arrays.py``) that the loop body
changes only by subscript writes is written in place by the steps, each write
first telling the driver's journal what it overwrites (``writes.keep(S, t)``);
snapshots then keep the array by reference and restore it by undoing the
journal (``runtime/stores/snapshots.py``, ``WriteJournal``).  That is exact for any
write pattern, but the journal holds every region written since the first
snapshot, so it is chosen only where that is at most the array once: one write
per step, at a position that moves with the loop counter (``S[t]``,
``S[:, t + 1]``, ``S[t - 1, 2:]``), so no element is written twice.  Other
arrays keep whole snapshots (the steps copy them before writing).
"""

import ast

import numpy as np

from tangent_ckpt.compiler import ir


def rows_written_once(loop, carried, owned):
    """The names of ``carried`` whose steps may write them in place (see above)."""
    if not isinstance(loop, ir.For) or loop.break_flag:
        return []
    rebound = {s.target for s in ir.walk(loop.body) if isinstance(s, ir.Assign)}
    inner = {id(s) for n in ir.walk(loop.body) if isinstance(n, (ir.For, ir.While))
             for s in ir.walk(n.body)}
    moving = _counter_names(loop)
    found = []
    for name in carried:
        if name not in owned or name in rebound:
            continue
        writes = [s for s in ir.walk(loop.body) if isinstance(s, ir.SetItem) and s.target == name]
        if len(writes) == 1 and id(writes[0]) not in inner and \
                _moves_with_counter(writes[0].index.node, moving):
            found.append(name)
    return found


def _counter_names(loop):
    """The loop counter and names the body sets once to ``counter +/- constant``."""
    counts = {}
    for s in ir.walk(loop.body):
        if isinstance(s, (ir.Assign, ir.SetItem)):
            counts[s.target] = counts.get(s.target, 0) + 1
    moving = {loop.target}
    for s in ir.walk(loop.body):
        if isinstance(s, ir.Assign) and counts[s.target] == 1 and isinstance(s.expr, ir.Prim) \
                and s.expr.fn in (np.add, np.subtract) and not s.expr.kwargs:
            a, b = s.expr.args
            if isinstance(a, ir.Name) and a.id in moving and _int_const(b) or \
                    s.expr.fn is np.add and isinstance(b, ir.Name) and b.id in moving \
                    and _int_const(a):
                moving.add(s.target)
    return moving


def _int_const(op):
    return isinstance(op, ir.Const) and isinstance(op.value, int) and \
        not isinstance(op.value, bool)


def _moves_with_counter(node, moving):
    parts = node.elts if isinstance(node, ast.Tuple) else [node]
    counters = [p for p in parts if isinstance(p, ast.Name) and p.id in moving]
    fixed = [p for p in parts if not any(p is c for c in counters)]
    return len(counters) == 1 and all(_fixed_part(p) for p in fixed)


def _fixed_part(p):
    if isinstance(p, ast.Constant):
        return p.value is Ellipsis or (isinstance(p.value, int) and not isinstance(p.value, bool))
    if isinstance(p, ast.Slice):
        return all(b is None or isinstance(b, ast.Constant) for b in (p.lower, p.upper, p.step))
    return False
