"""Analyze: which local names surely hold floating-point (or complex) values.

A subscript write ``y[i] = v`` stores ``v`` converted to ``y``'s dtype: into an
integer or boolean array NumPy truncates it (``y = np.zeros_like(np.arange(4));
y[1] = 0.7 * x`` stores 0), so no derivative flows from ``v`` through the write.
The transforms give such a write a derivative that checks ``y``'s dtype at run
time (``rt.setitem_adjoint_value(..., y)``, ``rt.stored_tangent``) unless ``y``
surely holds floats, which this analysis proves for the usual cases: arrays made
by ``np.zeros((n, 3))``, arithmetic with a float, transcendental functions, and
copies, slices and reductions of such arrays.

It is a must-analysis: a name is in the set only when every assignment to it
gives an inexact value.  A parameter is when the call gives it a float array or
number (the gradient is compiled per argument dtype kind, ``function.inexact_params``);
``u = u0.copy()`` then holds floats too.
"""

import builtins
import operator

import numpy as np

from tangent_ckpt.compiler import ir


def _ids(*objects):
    return frozenset(id(obj) for obj in objects)


#: a floating-point result whatever the operands (integers are promoted)
ALWAYS_INEXACT = _ids(
    np.true_divide, operator.truediv, np.sqrt, np.cbrt, np.exp, np.exp2, np.expm1, np.log,
    np.log1p, np.log2, np.log10, np.sin, np.cos, np.tan, np.arcsin, np.arccos, np.arctan,
    np.arctan2, np.sinh, np.cosh, np.tanh, np.arcsinh, np.arccosh, np.arctanh, np.hypot,
    np.mean, np.average, np.var, np.std, np.linspace, np.logspace, np.deg2rad, np.rad2deg,
    np.radians, np.degrees, np.random.rand, np.random.randn, np.random.random,
    np.random.uniform, np.random.normal, np.random.standard_normal)

#: floats unless a dtype is given (``np.zeros((n, 3))``; ``np.zeros(n, int)``)
MADE_AS_FLOATS = {id(np.zeros): 1, id(np.ones): 1, id(np.empty): 1, id(np.eye): 3,
                  id(np.identity): 1}

#: the dtype of their first operand unless a dtype is given (``np.zeros_like(h)``)
MADE_LIKE = {id(np.zeros_like): 1, id(np.ones_like): 1, id(np.empty_like): 1,
             id(np.full_like): 2, id(np.copy): 99, id(np.array): 1, id(np.asarray): 1,
             id(np.ascontiguousarray): 1}

#: the dtype of their first operand (``a[1:]``, ``np.sum(a, axis=0)``)
FIRST_OPERAND = _ids(
    operator.getitem, np.sum, np.cumsum, np.prod, np.cumprod, np.max, np.min, np.amax, np.amin,
    np.reshape, np.ravel, np.transpose, np.swapaxes, np.moveaxis, np.squeeze, np.expand_dims,
    np.broadcast_to, np.flip, np.roll, np.tile, np.repeat, np.diff, np.atleast_1d,
    np.atleast_2d, np.real, np.imag, np.conjugate, np.abs, np.absolute, np.negative,
    np.positive, operator.neg, operator.pos, np.square, np.floor, np.ceil, np.round,
    np.around, np.rint, np.trunc, np.sign, np.diagonal, np.diag, np.tril, np.triu, np.trace,
    builtins.abs)

#: promoted: a floating-point result when any operand is one (``a * 1.5``)
PROMOTING = _ids(
    np.add, np.subtract, np.multiply, np.power, np.maximum, np.minimum, np.fmax, np.fmin,
    np.matmul, np.dot, np.outer, np.inner, np.tensordot, np.einsum, np.kron, np.cross,
    np.where, np.clip, np.concatenate, np.stack, np.vstack, np.hstack, np.column_stack,
    np.append, operator.add, operator.sub, operator.mul, operator.pow, operator.matmul,
    np.floor_divide, np.mod, np.remainder, operator.floordiv, operator.mod, builtins.sum,
    builtins.max, builtins.min)


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
    fn = id(expr.fn)
    args = list(expr.args)
    if fn in ALWAYS_INEXACT:
        return True
    if fn in MADE_AS_FLOATS:
        dtype = expr.kwargs.get("dtype", args[MADE_AS_FLOATS[fn]]
                                if len(args) > MADE_AS_FLOATS[fn] else None)
        return dtype is None or _inexact_dtype(dtype, bindings)
    if fn in MADE_LIKE:
        position = MADE_LIKE[fn]
        dtype = expr.kwargs.get("dtype", args[position] if len(args) > position else None)
        if dtype is not None:
            return _inexact_dtype(dtype, bindings)
        return bool(args) and _inexact_operand(args[0], names, bindings)
    if fn in FIRST_OPERAND:
        return bool(args) and _inexact_operand(args[0], names, bindings)
    if fn in PROMOTING:
        return any(_inexact_operand(a, names, bindings) for a in args)
    return False


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
    return isinstance(value, np.ndarray) and value.dtype.kind in "fc"


def _inexact_dtype(op, bindings):
    """Does the dtype operand name a floating-point or complex type?"""
    if isinstance(op, ir.Const):
        value = op.value
    elif isinstance(op, ir.Name):
        value = bindings.get(op.id, getattr(builtins, op.id, None))
    else:
        return False
    try:
        return value is not None and np.dtype(value).kind in "fc"
    except TypeError:
        return False
