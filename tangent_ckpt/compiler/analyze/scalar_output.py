"""Analyze: is the function's output a scalar on every path?

The adjoint of the output (the gradient's seed, 1.0 by default) must have the
output's shape: the rules take ``g`` of their output's shape, and a scalar ``g``
reaching an array's rule is the symbolic zero or a number's adjoint, not "every
element's adjoint is g" (``np.stack``'s rule indexes it, ``np.convolve``'s
correlates it, ``rt.unbroadcast`` of a scalar input keeps it instead of summing
it).  So the reverse sweep starts with ``bf = rt.output_adjoint(bf, f)``, which
spreads a scalar seed over an array output -- unless this analysis proves the
output a scalar, as in the usual ``return np.sum(...)``, where the line would
only cost a read.

The proof is deliberately simple: a name is a scalar when every assignment to
it (in any branch or loop) is a number, a whole-array reduction (``np.sum(x)``,
``x.mean()``, ``np.linalg.norm(x)``: no ``axis``, ``keepdims`` or ``out``), a
``float()``, an elementwise function of scalars, a copy of a scalar, a
``range`` loop's index, or a parameter this call passes a number.  The largest set of names with that property is found
by removing names until none is left that an assignment disproves.
"""

import numbers

import numpy as np

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler.analyze.known_shapes import INT

#: functions whose result is one number when called on one array with no other argument
_FULL_REDUCTIONS = frozenset(map(id, (
    np.sum, np.mean, np.prod, np.max, np.min, np.amax, np.amin, np.std, np.var,
    np.median, np.nansum, np.nanmean, np.nanmax, np.nanmin, np.nanprod, np.nanstd,
    np.nanvar, np.ptp, np.average, np.vdot, np.linalg.norm, float,
)))


def output_is_scalar(function, shapes=None):
    """Analyze.  Takes the lowered ``ir.Function`` (and the shapes of this call's
    arguments when known, :mod:`known_shapes`: a parameter given a number is a
    scalar); True when what it returns to differentiate is a scalar on every
    path (its adjoint needs no spreading)."""
    if function.outputs is not None:
        return False
    assignments = {}
    for stmt in ir.walk(function.body):
        if isinstance(stmt, ir.Assign):
            assignments.setdefault(stmt.target, []).append(stmt.expr)
        elif isinstance(stmt, ir.SetItem):
            assignments.setdefault(stmt.target, []).append(None)  # a written array
        elif isinstance(stmt, ir.For):
            assignments.setdefault(stmt.target, []).append(_NUMBER)
    numbers_given = {p for p in function.params
                     if shapes and (shapes.get(p) == () or shapes.get(p) == INT)}
    for p in function.params:
        assignments.setdefault(p, []).append(_NUMBER if p in numbers_given else None)
    scalars = set(assignments)
    changed = True
    while changed:
        changed = False
        for name in list(scalars):
            if not all(_is_scalar(expr, scalars) for expr in assignments[name]):
                scalars.discard(name)
                changed = True
    return function.result in scalars


_NUMBER = object()  # a range loop's index, a number given for a parameter


def _is_scalar(expr, scalars):
    if expr is _NUMBER:
        return True
    if isinstance(expr, ir.Copy):
        return _scalar_operand(expr.value, scalars)
    if not isinstance(expr, ir.Prim):
        return False
    if id(expr.fn) in _FULL_REDUCTIONS:
        return len(expr.args) == 1 and not expr.kwargs
    if isinstance(expr.fn, np.ufunc) and expr.fn.signature is None and expr.fn.nout == 1 \
            and expr.fn.nin == len(expr.args) and not expr.kwargs:
        return all(_scalar_operand(a, scalars) for a in expr.args)
    return False


def _scalar_operand(op, scalars):
    if isinstance(op, ir.Name):
        return op.id in scalars
    return isinstance(op, ir.Const) and isinstance(op.value, numbers.Number)
