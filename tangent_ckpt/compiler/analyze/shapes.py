"""Analyze: which operands of an elementwise primitive have its result's shape.

The adjoint of ``x`` in ``t = x * y`` is ``rt.unbroadcast(g * y, x)``: the sum
over the axes along which ``x`` was broadcast.  Where the compiler can prove
that ``x`` has the shape of ``t``, that sum is the identity and the generated
code leaves it out.  Proofs are deliberately simple: a name's shape is known
equal to another's when

- one comes from the other through an elementwise function (``np.tanh(x)``,
  ``-x``, ``2.0 * x``: a Python number never widens a shape), or through an
  elementwise binary function of two operands of equal shape;
- both are the same array (unchanged in between) indexed by constant slices
  that select the same number of elements for every length of the axis
  (``u[1:-1]``, ``u[2:]`` and ``u[:-2]``).  Integer indices are not compared:
  the elements of a list of arrays may differ in shape.

An elementwise result of operands of different shapes has the shape of their
broadcast, recorded as the set of its operands' keys.  A subscript write
``x[i] = v`` then teaches one more fact: the write succeeded, so ``v``'s shape
broadcasts to ``x[i]``'s; when ``x[i]`` (the same read) is among the operands
whose broadcast ``v`` is, ``v`` has exactly ``x[i]``'s shape, and so does the
broadcast of any part of those operands that contains ``x[i]``.  In the heat
equation's ``u[1:-1] = u[1:-1] + k[1:-1] * (u[2:] - 2 * u[1:-1] + u[:-2])``
every temporary then has the shape of ``u[1:-1]``; only ``k[1:-1]``'s adjoint
keeps its ``rt.unbroadcast``.  Such a fact holds in the straight run of
statements around the write (no branch, loop or break between), where it is used.

Anything else — a variable index, a name assigned in a loop or a branch, an
array whose shape may differ — is "unknown", and the ``rt.unbroadcast`` stays.
The result is recorded on each ``ir.Assign`` (``same_shape``).
"""

import itertools
import numbers

import numpy as np

from tangent_ckpt.compiler import ir


# the shape key of a Python float the code reads from a global (a module-level
# float, read when the code runs: lower/expressions.py call_time_value)
SCALAR = ("scalar",)


def shape_facts(function, scalars=frozenset()):
    """Analyze.  Takes the lowered ``ir.Function`` and the global names it reads
    that hold Python floats (``scalars``); sets ``same_shape`` on its
    elementwise assignments (the operands known to have the result's shape)."""
    _walk(function.body, dict.fromkeys(scalars, SCALAR), itertools.count())


def _walk(body, env, fresh):
    """``env``: name -> shape key (equal keys: equal shapes) at this point."""
    run = []  # the straight run of assignments and writes being read
    for stmt in body:
        if isinstance(stmt, (ir.Assign, ir.SetItem)):
            run.append(stmt)
            continue
        _straight(run, env, fresh)
        run = []
        if isinstance(stmt, ir.If):
            _walk(stmt.body, dict(env), fresh)
            _walk(stmt.orelse, dict(env), fresh)
            _forget(ir.assigned_names(stmt.body + stmt.orelse), env, fresh)
        elif isinstance(stmt, (ir.For, ir.While)):
            # a name the body assigns holds another iteration's value when read before
            # its assignment: unknown at the top of the body and after the loop
            assigned = ir.assigned_names(stmt.body) + \
                ([stmt.target] if isinstance(stmt, ir.For) else [])
            _forget(assigned, env, fresh)
            _walk(stmt.body, dict(env), fresh)
            _forget(assigned, env, fresh)
        elif isinstance(stmt, ir.Segment):
            _walk(stmt.body, env, fresh)
    _straight(run, env, fresh)


def _straight(run, env, fresh):
    """Keys and ``same_shape`` for a straight run of statements: once to find
    what its writes teach (see the module docstring), again with it if anything."""
    start = dict(env)
    facts = _run_keys(run, env, fresh, {})
    if facts:
        env.clear()
        env.update(start)
        _run_keys(run, env, fresh, facts)


def _run_keys(run, env, fresh, facts):
    """One pass over a straight run; returns the facts its writes teach:
    {operand-key set S: the key of the item written}, meaning a broadcast of any
    part of S that contains that item has the item's shape."""
    learned = {}
    for stmt in run:
        if isinstance(stmt, ir.Assign):
            key, same = _assign_key(stmt.expr, env, facts)
            stmt.same_shape = same
            env[stmt.target] = key if key is not None else ("value", next(fresh))
        elif isinstance(stmt.value, ir.Name):  # SetItem: x[i] = v leaves x's shape
            item = _item_key(stmt.target, stmt.index, env)
            value = env.get(stmt.value.id)
            if item is not None and isinstance(value, tuple) and value[0] == "broadcast" \
                    and item in value[1]:
                learned[value[1]] = item
            stmt.value_fits = item is not None and value == item
    return learned


def _item_key(name, index, env):
    signature = _index_signature(index)
    return None if signature is None else ("item", _key(name, env), signature)


def _broadcast_key(keys, facts):
    """The key of an elementwise result of operands with ``keys`` (a set)."""
    parts = frozenset(p for k in keys for p in
                      (k[1] if isinstance(k, tuple) and k[0] == "broadcast" else (k,)))
    if len(parts) > 1:
        parts = parts - {SCALAR}  # a float broadcasts to the other operands' shape
    if len(parts) == 1:
        return next(iter(parts))
    for whole, item in facts.items():
        if item in parts and parts <= whole:
            return item
    return ("broadcast", parts)


def _forget(names, env, fresh):
    for name in names:
        env[name] = ("value", next(fresh))


def _key(name, env):
    return env.get(name, ("input", name))


def _number(op):
    return isinstance(op, ir.Const) and isinstance(op.value, numbers.Number) and \
        not isinstance(op.value, (bool, complex))


def _assign_key(expr, env, facts):
    """(shape key of the value or None, operand names with that shape)."""
    if isinstance(expr, ir.Copy) and isinstance(expr.value, ir.Name):
        return _key(expr.value.id, env), ()
    if not isinstance(expr, ir.Prim) or expr.kwargs:
        return None, ()
    args = expr.args
    if expr.render == "getitem" and isinstance(args[0], ir.Name):
        return _item_key(args[0].id, args[1], env), ()
    if not isinstance(expr.fn, np.ufunc) or expr.fn.signature is not None or \
            expr.fn.nout != 1 or expr.fn.nin != len(args):  # elementwise only (not matmul)
        return None, ()
    names = [a for a in args if isinstance(a, ir.Name)]
    if len(names) + sum(_number(a) for a in args) != len(args) or not names:
        return None, ()
    key = _broadcast_key({_key(a.id, env) for a in names}, facts)
    return key, tuple(dict.fromkeys(a.id for a in names if _key(a.id, env) == key))


def _index_signature(index):
    """How a constant index shapes what it selects, comparable between indices:
    per axis, the selected length for every length of the axis up to a bound past
    which both are linear (slices with constant bounds).  None when not only
    constant slices."""
    node = index.node
    parts = node.elts if type(node).__name__ == "Tuple" else [node]
    signature = []
    for part in parts:
        value = _constant_part(part)
        if value is None:
            return None
        if isinstance(value, int):  # x[0] and x[1] differ in a list of arrays
            return None
        bounds = [abs(b) for b in (value.start, value.stop, value.step) if b is not None]
        if max(bounds, default=0) > _BOUND:
            return None
        # past 2 * _BOUND both lengths are ceil((n - c) / step): equal on the
        # next _BOUND lengths (>= step), equal for every n
        signature.append((value.step or 1, tuple(len(range(n)[value]) for n in range(_LENGTHS))))
    return tuple(signature)


_BOUND = 16  # slice bounds compared up to this size (larger: unknown)
_LENGTHS = 3 * _BOUND + 2


def _constant_part(node):
    """An int or a slice of ints / None written in ``node``, else None."""
    kind = type(node).__name__
    if kind == "Constant" and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if kind == "UnaryOp" and type(node.op).__name__ == "USub":
        inner = _constant_part(node.operand)
        return -inner if isinstance(inner, int) else None
    if kind == "Slice":
        bounds = []
        for b in (node.lower, node.upper, node.step):
            if b is None:
                bounds.append(None)
                continue
            value = _constant_part(b)
            if not isinstance(value, int):
                return None
            bounds.append(value)
        if bounds[2] == 0:
            return None
        return slice(*bounds)
    return None
