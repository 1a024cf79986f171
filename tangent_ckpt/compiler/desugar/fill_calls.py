"""Desugar: ``a.fill(v)`` on a NumPy array as the write it is, ``a[...] = v``.

``ndarray.fill`` sets every element of the array to ``v`` cast to its dtype,
which is what ``a[...] = v`` does when ``v`` is one number: the view lowering,
the fence and the dtype analysis already follow that write.  ``fill`` takes one
number only (a 0-d array too) and raises for anything else, where ``a[...] =
v`` would broadcast an array: a value that is not a number written as a
constant (``0.0``, ``-1``, ``np.nan``) is written ``a[...] = np.full((), v)``,
a 0-d array that raises as ``fill`` does for an array of other shape.

Only a call that is a statement, on a name that surely holds a NumPy array
(:class:`~.view_facts.ArrayFacts`: a user object may have a ``fill`` method of
its own), or on a view of one that ``chained_subscripts.py`` joins into one
subscript (``U[1].fill(v)`` is ``U[1, ...] = v``; ``U[[0, 2]].fill(v)`` fills
a copy, and is left as written, refused by the lowering).
"""

import numbers
import types

import gast

from tangent_ckpt.compiler.desugar.chained_subscripts import joined_subscript
from tangent_ckpt.compiler.desugar.local_bindings import LocalBindings
from tangent_ckpt.compiler.desugar.view_facts import number_constant
from tangent_ckpt.compiler.desugar.view_shape import (
    copy_node, located, method_statement, name_node,
)


def rewrite_fill_calls(parsed, bindings=None):
    """Rewrite, in ``parsed.node``, every ``a.fill(v)`` statement on an array as
    ``a[...] = v``; returns the function's :class:`LocalBindings` when it read
    them (they still hold for the rewritten tree: a subscript write binds no
    name)."""
    calls = [(block, k) for block, k in _statements(parsed.node.body)
             if method_statement(block[k], "fill") is not None]
    if not calls:
        return bindings
    bindings = bindings or LocalBindings(parsed.node, parsed.resolve)
    numpy = next((k for k, v in parsed.globals.items()
                  if isinstance(v, types.ModuleType) and v.__name__ == "numpy"), None)
    for block, k in calls:
        stmt = block[k]
        receiver, value = method_statement(stmt, "fill")
        target = gast.Subscript(value=copy_node(receiver), slice=gast.Constant(
            value=Ellipsis, kind=None), ctx=gast.Store())
        if not _surely_array(target, bindings):
            continue
        if not _number(value, bindings):
            if numpy is None:
                continue
            full = gast.Attribute(value=name_node(numpy), attr="full", ctx=gast.Load())
            value = gast.Call(func=full, args=[gast.Tuple(elts=[], ctx=gast.Load()), value],
                              keywords=[])
        block[k] = located(gast.Assign(targets=[target], value=value, type_comment=None), stmt)


def _surely_array(target, bindings):
    """Whether ``target`` (``receiver[...]``) writes into an array's memory: the
    receiver a name that surely holds an array, or a chain of subscripts of one
    that is one subscript write."""
    receiver = target.value
    if isinstance(receiver, gast.Name):
        return bindings.facts().array(receiver.id) is not None
    return joined_subscript(target, bindings.facts(), bindings.integer_names(),
                            bindings.resolve) is not None


def _number(value, bindings):
    """A number written as a constant, or a module-level name bound to one."""
    if number_constant(value):
        return True
    if isinstance(value, (gast.Name, gast.Attribute)):
        return isinstance(bindings.resolve(value), numbers.Number)
    return False


def _statements(stmts):
    """(block, position) of every statement, outside nested functions."""
    for k, s in enumerate(stmts):
        yield stmts, k
        if isinstance(s, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            block = getattr(s, field, None)
            if isinstance(block, list) and block and isinstance(block[0], gast.stmt):
                yield from _statements(block)
        for handler in getattr(s, "handlers", []):
            yield from _statements(handler.body)
