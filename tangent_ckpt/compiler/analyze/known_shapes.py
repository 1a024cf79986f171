"""Analyze: the shapes of one call's arguments, followed through the function.

A gradient called with arrays is compiled for the shapes of that call (the
cache key holds them, ``api.py``): with ``T`` of shape ``(4,)`` and ``UA`` of
shape ``(4,)``, ``UA * (T_out[t] - T)`` has shape ``(4,)``, so neither
operand's adjoint needs ``rt.unbroadcast``.  Followed here:

- elementwise NumPy functions (ufuncs): the broadcast of their operands'
  shapes (a Python number has shape ``()``);
- ``@`` (``np.matmul``); the functions whose row in the rule registry says
  ``keeps_shape=`` (``np.roll``, ``np.copy``: the shape of their array) or
  ``reduces=`` (full or constant-axis reductions: ``np.sum(x)``,
  ``x.mean(axis=0)``);
- subscripts by constant slices, constant integers, ``None``, ``...`` and the
  loop index (an ``int``);
- a loop: the shapes at the top of its body are joined with those at its end
  until they no longer change (a carried ``T`` that keeps its shape stays
  known; one that grows becomes unknown); a branch joins its two arms.  The
  names to which every assignment of the body gives the one shape they have
  at its top are the loop's ``steady_shapes`` (a taped loop then zeroes
  their adjoints like the step's own value, ``transform/taped_loops.py``).

Anything else (a computed index, a call this module does not know, a global
array, a container) is unknown, and what depends on it keeps the general code.
The result is added to ``ir.Assign.same_shape`` and ``ir.SetItem.value_fits``,
next to what :mod:`~tangent_ckpt.compiler.analyze.shapes` proves for every shape; the
parameters passed as arrays that the body never rebinds are recorded in
``ir.Function.array_params`` (their adjoints are arrays too: a private one is
added to in place, ``bk[1:-1] += g``).
"""

import numpy as np

from tangent_ckpt.adjoints import registry
from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler.analyze.shapes import _constant_part, _number

INT = "int"  # a Python int (the loop index): shape (), and usable as an index
_UNSET = "unset"  # not yet bound (a name first assigned inside a loop body)

_MAX_PASSES = 8


def _facts(fn):
    """The row of ``fn`` in the rule registry (``keeps_shape=``, ``reduces=``),
    or a row that knows nothing."""
    return registry.facts(fn) or _NO_FACTS


_NO_FACTS = registry.PrimitiveFacts(None, "no row")


def argument_shapes(function, shapes, scalars=frozenset()):
    """Analyze.  Takes the lowered ``ir.Function`` and ``shapes`` ({parameter
    name: shape tuple, ``INT``, or None when unknown}); adds to the
    ``same_shape`` of each elementwise assignment the operands whose shape, for
    these arguments, is the result's, marks the subscript writes whose value has
    the shape of the region written (``value_fits``) and sets ``array_params``.
    ``scalars``: the global names the code reads that hold Python floats."""
    env = dict.fromkeys(scalars, ())
    env.update({p: shapes.get(p) for p in function.params})
    proved = {}  # id(stmt) -> (stmt, finding): the last pass over a loop body wins
    _body(function.body, env, proved, {})
    for stmt, found in proved.values():
        if isinstance(stmt, ir.SetItem):
            stmt.value_fits = stmt.value_fits or found
        else:
            stmt.same_shape = tuple(dict.fromkeys(stmt.same_shape + found))
    rebound = {s.target for s in ir.walk(function.body) if isinstance(s, (ir.Assign, ir.For))}
    function.array_params = frozenset(
        p for p in function.params if isinstance(shapes.get(p), tuple) and shapes[p]
        and p not in rebound)


def _shape(value):
    return () if value == INT else value


def _join(a, b):
    if a == _UNSET:
        return b
    if b == _UNSET:
        return a
    return a if a == b else None


def _get(env, name):
    value = env.get(name)
    return None if value == _UNSET else value


def _body(body, env, proved, made):
    """``made``: id(assignment) -> the shape of its value (the last pass wins)."""
    for stmt in body:
        if isinstance(stmt, ir.Assign):
            env[stmt.target] = made[id(stmt)] = _assign(stmt, env, proved)
        elif isinstance(stmt, ir.SetItem):  # a write into x[i] leaves x's shape (or fails)
            value = _operand(stmt.value, env) if isinstance(stmt.value, ir.Name) else None
            item = _item(_shape(_get(env, stmt.target)), stmt.index, env)
            proved[id(stmt)] = (stmt, value is not None and _shape(value) == item)
        elif isinstance(stmt, ir.If):
            then, orelse = dict(env), dict(env)
            _body(stmt.body, then, proved, made)
            _body(stmt.orelse, orelse, proved, made)
            for name in set(then) | set(orelse):
                env[name] = _join(then.get(name, _UNSET), orelse.get(name, _UNSET))
        elif isinstance(stmt, (ir.For, ir.While)):
            _loop(stmt, env, proved, made)
        elif isinstance(stmt, ir.Segment):
            _body(stmt.body, env, proved, made)
        else:  # Break reads a flag; anything new assigns nothing we could know
            for name in ir.assigned_names([stmt]):
                env[name] = None


def _loop(stmt, env, proved, made):
    """Join the shapes at the top of the body with those at its end until they
    agree (at most a few passes, then every name the body assigns is unknown);
    the last pass, the one whose shapes hold, decides ``same_shape`` and the
    loop's ``steady_shapes``: the names every assignment of the body gives the
    shape they have at its top (the previous step's, or the one from before
    the loop)."""
    assigned = set(ir.assigned_names(stmt.body))
    top = dict(env)
    for name in assigned:
        top.setdefault(name, _UNSET)
    if isinstance(stmt, ir.For):
        top[stmt.target] = INT
    for _ in range(_MAX_PASSES):
        end = dict(top)
        _body(stmt.body, end, proved, made)
        joined = {name: _join(top[name], end.get(name, _UNSET)) for name in assigned}
        if all(joined[name] == top[name] for name in assigned):
            break
        top.update(joined)
    else:
        top.update(dict.fromkeys(assigned))
        _body(stmt.body, dict(top), proved, made)
    writes = {}  # name -> the shapes the body's assignments give it (None: another binding)
    for inner in ir.walk(stmt.body):
        if isinstance(inner, ir.Assign):
            writes.setdefault(inner.target, set()).add(made.get(id(inner)))
        elif isinstance(inner, ir.For):
            writes.setdefault(inner.target, set()).add(None)
    stmt.steady_shapes = frozenset(
        name for name in assigned
        if top[name] not in (None, _UNSET) and writes.get(name, set()) <= {top[name]})
    env.update(top)


def _assign(stmt, env, proved):
    """The shape of ``stmt``'s value; records in ``proved`` the operands that
    have it (this pass's finding replaces an earlier pass's)."""
    proved[id(stmt)] = (stmt, ())
    expr = stmt.expr
    if isinstance(expr, ir.Copy):
        return _operand(expr.value, env)
    if not isinstance(expr, ir.Prim):
        return None
    if expr.fn is np.matmul and len(expr.args) == 2 and not expr.kwargs:
        return _matmul(*[_shape(_operand(a, env)) for a in expr.args])
    if expr.render == "getitem" and isinstance(expr.args[0], ir.Name):
        return _item(_shape(_get(env, expr.args[0].id)), expr.args[1], env)
    if _facts(expr.fn).keeps_shape and expr.args and isinstance(expr.args[0], ir.Name):
        return _shape(_get(env, expr.args[0].id))
    if _facts(expr.fn).reduces and len(expr.args) == 1:
        return _reduced(_shape(_get(env, expr.args[0].id)) if isinstance(expr.args[0], ir.Name)
                        else None, expr.kwargs)
    if not isinstance(expr.fn, np.ufunc) or expr.fn.signature is not None or \
            expr.fn.nout != 1 or expr.fn.nin != len(expr.args) or expr.kwargs:
        return None
    shapes = [_shape(_operand(a, env)) for a in expr.args]
    if any(s is None for s in shapes):
        return None
    try:
        result = tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        return None   # fails at run time, with NumPy's message
    same = tuple(a.id for a, s in zip(expr.args, shapes)
                 if isinstance(a, ir.Name) and s == result)
    proved[id(stmt)] = (stmt, same)
    return result


def _operand(op, env):
    if isinstance(op, ir.Name):
        return _get(env, op.id)
    if _number(op):
        return INT if isinstance(op.value, int) else ()
    return None


def _matmul(a, b):
    if a is None or b is None or not a or not b:
        return None
    a2, b2 = (a if len(a) > 1 else (1,) + a), (b if len(b) > 1 else b + (1,))
    if a2[-1] != b2[-2]:
        return None
    try:
        batch = tuple(np.broadcast_shapes(a2[:-2], b2[:-2]))
    except ValueError:
        return None
    return batch + (a2[-2],) * (len(a) > 1) + (b2[-1],) * (len(b) > 1)


def _reduced(shape, kwargs):
    if shape is None or set(kwargs) - {"axis", "keepdims"}:
        return None
    axis, keepdims = kwargs.get("axis", ir.Const(None)), kwargs.get("keepdims", ir.Const(False))
    if not isinstance(axis, ir.Const) or not isinstance(keepdims, ir.Const) or \
            not isinstance(keepdims.value, bool):
        return None
    axes = axis.value
    if axes is None:
        axes = tuple(range(len(shape)))
    elif isinstance(axes, int) and not isinstance(axes, bool):
        axes = (axes,)
    if not isinstance(axes, tuple) or not all(type(k) is int for k in axes) or \
            not all(-len(shape) <= k < len(shape) for k in axes):
        return None
    axes = {k % len(shape) for k in axes}
    if keepdims.value:
        return tuple(1 if k in axes else n for k, n in enumerate(shape))
    return tuple(n for k, n in enumerate(shape) if k not in axes)


def _item(shape, index, env):
    """The shape of ``x[index]`` for ``x`` of ``shape``: the index applied to a
    stand-in array of that shape that holds no memory (stride 0)."""
    if shape is None or not isinstance(index, ir.Index):
        return None
    node = index.node
    parts = node.elts if type(node).__name__ == "Tuple" else [node]
    key = []
    for part in parts:
        kind = type(part).__name__
        if kind == "Name" and env.get(part.id) == INT:
            key.append(0)  # any integer in range selects the same shape
        elif kind == "Constant" and (part.value is None or part.value is Ellipsis):
            key.append(part.value)
        else:
            value = _constant_part(part)
            if value is None:
                return None
            key.append(value)
    try:
        return np.broadcast_to(np.zeros((), np.int8), shape)[tuple(key)].shape
    except IndexError:
        return None
