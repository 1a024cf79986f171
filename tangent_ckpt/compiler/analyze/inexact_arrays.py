"""Analyze: which local names surely hold floating-point (or complex) values.

A subscript write ``y[i] = v`` stores ``v`` converted to ``y``'s dtype: into an
integer or boolean array NumPy truncates it (``y = np.zeros_like(np.arange(4));
y[1] = 0.7 * x`` stores 0), so no derivative flows from ``v`` through the write.
The transforms give such a write a derivative that checks ``y``'s dtype at run
time (``rt.setitem_adjoint_value(..., y)``, ``rt.stored_tangent``) unless ``y``
surely holds floats, which this analysis proves from what NumPy and the registry
rows say: a ufunc's own loops (``np.sqrt`` has no integer output, ``np.add``
gives floats for floats), ``result_dtype=`` of a constructor's row
(``np.zeros((n, 3))``), a ``dtype=`` given, and for any other row with a
derivative the dtype of its first differentiated argument (``a[1:]``,
``np.sum(a)``, ``a.copy()``).

It is a must-analysis: a name is in the set only when every assignment to it
gives an inexact value.  A parameter is when the call gives it a float array or
number (the gradient is compiled per argument dtype kind, ``function.inexact_params``);
``u = u0.copy()`` then holds floats too.
"""

import builtins
import functools

import numpy as np

from tangent_ckpt.adjoints import registry
from tangent_ckpt.compiler import ir

_INEXACT_KINDS = "fc"


def _output_kind(code):
    return np.dtype(code.split("->")[1][0]).kind


@functools.lru_cache(maxsize=None)
def _ufunc_facts(ufunc):
    """(always inexact, inexact on float input) from the ufunc's own loops: np.sqrt
    has no integer output at all; np.add gives floats for floats; np.greater
    gives booleans."""
    kinds = [_output_kind(code) for code in ufunc.types  # objects, dates: not ours
             if not set(code) & set("OmM")]
    always = bool(kinds) and all(kind in _INEXACT_KINDS for kind in kinds)
    float_loop = "d" * ufunc.nin + "->"
    on_floats = any(code.startswith(float_loop) and _output_kind(code) in _INEXACT_KINDS
                    for code in ufunc.types)
    return always, on_floats


def surely_inexact(function, bindings):
    """The local names of ``function`` that hold floating-point or complex values
    wherever they are bound (a greatest fixed point over its assignments)."""
    assigned = {}
    for stmt in ir.walk(function.body):
        if isinstance(stmt, ir.Assign):
            assigned.setdefault(stmt.target, []).append(stmt.expr)
    for loop in ir.walk(function.body):  # a loop's counter is an integer
        if isinstance(loop, ir.For):
            assigned.setdefault(loop.target, []).append(None)
    given = function.inexact_params  # the call's float arguments
    for param in given:
        assigned.setdefault(param, []).append(ir.Copy(ir.Const(0.0)))
    names = set(assigned) - (set(function.params) - given)
    changed = True
    while changed:                         # remove names with one assignment not proved
        changed = False
        for name in sorted(names):
            if not all(_inexact_expr(expr, names, bindings) for expr in assigned[name]):
                names.discard(name)
                changed = True
    return frozenset(names)


def _inexact_expr(expr, names, bindings):
    if isinstance(expr, ir.Copy):
        return _inexact_operand(expr.value, names, bindings)
    if not isinstance(expr, ir.Prim):
        return False  # NonDiff (int(x), comparisons), or unknown
    args = list(expr.args)
    known = lambda op: _inexact_operand(op, names, bindings)  # noqa: E731
    if "dtype" in expr.kwargs:                       # np.sum(x, dtype=int)
        return _inexact_dtype(expr.kwargs["dtype"], bindings)
    if isinstance(expr.fn, np.ufunc):                # its loops say
        always, on_floats = _ufunc_facts(expr.fn)
        return always or (on_floats and any(known(a) for a in args))
    facts = registry.facts(expr.fn)
    made = facts.result_dtype if facts is not None else None
    if made == "float64":                            # np.zeros((n, 3)); not np.zeros(n, int)
        return len(args) <= 1
    if made == "like":                               # np.zeros_like(h)
        return len(args) == 1 and known(args[0])
    rule = registry.lookup(expr.fn)
    if rule is None or not rule.templates:
        return False
    if any(name == "dtype" for name, _, _ in rule.params[:len(args)]):
        return False                                 # a dtype given by position
    operand = _first_differentiated(rule, args, expr.kwargs)
    return operand is not None and known(operand)


def _first_differentiated(rule, args, kwargs):
    """The operand of the first parameter the row differentiates (``a`` of
    ``np.sum``, ``x`` of ``np.where``): promotion never turns its floats into
    integers, and a row that stores into it (``rt.add_at``) keeps its dtype."""
    for position, (name, _, kind) in enumerate(rule.params):
        if name not in rule.templates:
            continue
        if kind == "varargs":
            return ir.Seq(tuple(args[position:])) if len(args) > position else None
        if kind == "positional" and position < len(args):
            return args[position]
        return kwargs.get(name)
    return None


def _inexact_operand(op, names, bindings):
    if isinstance(op, ir.Const):
        return _inexact_value(op.value)
    if isinstance(op, ir.Seq):
        return any(_inexact_operand(item, names, bindings) for item in op.items)
    if isinstance(op, ir.Name):
        if op.id in bindings:
            return _inexact_value(bindings[op.id])
        return op.id in names
    return False


def _inexact_value(value):
    if isinstance(value, (float, complex, np.floating, np.complexfloating)):
        return True
    return isinstance(value, np.ndarray) and value.dtype.kind in _INEXACT_KINDS


def _inexact_dtype(op, bindings):
    """Does the dtype operand name a floating-point or complex type?"""
    if isinstance(op, ir.Const):
        value = op.value
    elif isinstance(op, ir.Name):
        value = bindings.get(op.id, getattr(builtins, op.id, None))
    else:
        return False
    try:
        return value is not None and np.dtype(value).kind in _INEXACT_KINDS
    except TypeError:
        return False
