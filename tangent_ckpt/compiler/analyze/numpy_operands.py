"""Analyze: the run-time checks of lists read as NumPy arrays that cannot fail.

``a[0] = (5, 5, 5)`` and ``a + [x, y]`` read the list as ``np.asarray`` of it,
which is what Python does when ``a`` is a NumPy array; the lowering checks that
when the code runs (``rt.require_numpy_operand``, lower/containers.py).  The
check is left out where the function itself proves it:

- every assignment of the name makes a NumPy value (``np.zeros``, arithmetic,
  ``x.copy()``: :func:`~tangent_ckpt.compiler.analyze.fresh_arrays.owned_arrays`),
  or it is a parameter the call gives an array of one or more dimensions
  (``function.array_params``, :mod:`known_shapes`): for ``=`` and every operator
  but ``*`` a NumPy scalar reads the list as NumPy does too;
- every assignment of it reads an element or a part of such a name (``a[i]``,
  ``a[i] += [...]``): an array or a NumPy scalar;
- for ``*`` (``np.int64(2) * [x, y]`` repeats the list) only a name every
  assignment of which is a call whose row in the rule registry says
  ``returns="array"``, such a parameter, or a ufunc of one (``np.tanh(w)``:
  an array of as many dimensions, never a NumPy scalar).
"""

import operator

import numpy as np

from tangent_ckpt.adjoints import registry
from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler.analyze.fresh_arrays import owned_arrays


def drop_proved_checks(function):
    """Remove from ``function`` (an ``ir.Function``, after ``argument_shapes``)
    the ``rt.require_numpy_operand`` observations that surely pass."""
    if not any(isinstance(s, ir.Assign) and s.numpy_operand for s in ir.walk(function.body)):
        return
    assignments = {}
    for stmt in ir.walk(function.body):
        if isinstance(stmt, (ir.Assign, ir.For)):
            assignments.setdefault(stmt.target, []).append(
                stmt.expr if isinstance(stmt, ir.Assign) else None)
    numpy_values = _numpy_values(assignments, owned_arrays(function), function.array_params)
    arrays = {name for name, exprs in assignments.items()
              if all(_returns_an_array(e) for e in exprs)}
    arrays |= _elementwise_of_arguments(assignments, function.array_params)
    parts = {name for name, exprs in assignments.items()
             if all(_part_of(e, numpy_values) for e in exprs)}

    def proved(name, op):
        if op == "*":
            return name in arrays
        return name in numpy_values or name in parts

    _remove(function.body, lambda s: isinstance(s, ir.Assign) and s.numpy_operand and
            proved(*s.numpy_operand))


def _elementwise_of_arguments(assignments, params):
    """The parameters given arrays of one or more dimensions and the names every
    assignment of which is a ufunc of one of them (``np.tanh(w)``, ``w * s``):
    arrays of one or more dimensions too."""
    found, grown = set(params), True
    while grown:
        grown = False
        for name, exprs in assignments.items():
            if name not in found and all(
                    isinstance(e, ir.Prim) and isinstance(e.fn, np.ufunc) and
                    "out" not in e.kwargs and
                    any(isinstance(a, ir.Name) and a.id in found for a in e.args)
                    for e in exprs):
                found.add(name)
                grown = True
    return found


def _numpy_values(assignments, owned, params):
    """The parameters given arrays and the owned names every assignment of which
    makes a NumPy value: a row saying ``returns="array"`` or ``"array or
    scalar"``, a ufunc called by name, or an operator with such a name as an
    operand.  Owned alone is not enough: ``np.shape(x)`` is new, and a tuple."""
    found, grown = set(params), True
    while grown:
        grown = False
        for name, exprs in assignments.items():
            if name in owned and name not in found and \
                    all(_makes_numpy_value(e, found) for e in exprs):
                found.add(name)
                grown = True
    return found


def _makes_numpy_value(expr, found):
    if not isinstance(expr, ir.Prim) or "out" in expr.kwargs:
        return False
    if isinstance(expr.fn, np.ufunc) and expr.render == "call":
        return True  # np.tanh(w), np.add(a, b): NumPy's result, whatever the operands
    if isinstance(expr.fn, np.ufunc):  # a + b: Python's operator on what a and b hold
        return any(isinstance(a, ir.Name) and a.id in found for a in expr.args)
    facts = registry.facts(expr.fn)
    return facts is not None and facts.returns in ("array", "array or scalar")


def _returns_an_array(expr):
    if not isinstance(expr, ir.Prim) or "out" in expr.kwargs:
        return False
    facts = registry.facts(expr.fn)
    return facts is not None and facts.returns == "array"


def _part_of(expr, names):
    return isinstance(expr, ir.Prim) and expr.fn is operator.getitem and \
        isinstance(expr.args[0], ir.Name) and expr.args[0].id in names


def _remove(body, drop):
    body[:] = [s for s in body if not drop(s)]
    for stmt in body:
        if isinstance(stmt, ir.If):
            _remove(stmt.body, drop)
            _remove(stmt.orelse, drop)
        elif isinstance(stmt, (ir.For, ir.While, ir.Segment)):
            _remove(stmt.body, drop)
