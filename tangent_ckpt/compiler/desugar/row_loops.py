"""Desugar: a loop over the rows of an array that writes into each row, as a
loop over their indices.

``for row in X: row *= s`` changes ``X``: each ``row`` is a view of one row.
Written ``for k in range(len(X)): row = X[k]; row *= s`` it is a view the view
pass follows like any other (``X[k] *= s``), where before the fence refused the
write through the loop's own variable.  ``for i, row in enumerate(X)`` becomes
``for i in range(len(X)): row = X[i]``.

The two loops are the same: iterating an array (a list, a tuple) yields
``X[0]``, ``X[1]``, ... in turn, its length taken when the loop starts, and the
loop's ``else``, ``break`` and ``continue`` keep their meaning.  Only where the
body writes into the row in place (``row *= s``, ``row[...] = v``), ``X`` is a
name the body never rebinds (the iterator would keep the old object, an index
the new) and surely no dict (iterating one yields its keys: the value reaching
the loop is arithmetic, a NumPy call's result or a slice), and the loop variable
is one name (the row) or ``i, row`` of ``enumerate(X)`` with no start; any other
loop is left as written.
"""

import gast

from tangent_ckpt.compiler.desugar.view_facts import numpy_function
from tangent_ckpt.compiler.desugar.view_shape import (
    fresh_name, located, name_node, names_taken, statement_blocks, store_node,
)


def index_row_loops(parsed):
    """Rewrite, in ``parsed.node``, each loop over the rows of a name whose body
    writes into the row (see the module's docstring)."""
    taken = None
    rebound = {n.id for n in gast.walk(parsed.node) if isinstance(n, gast.Name) and
               not isinstance(n.ctx, gast.Load) and n.id in ("len", "range", "enumerate")}
    if rebound:
        return  # len, range or enumerate a local: not the builtins
    for loop, ancestors in _loops(parsed.node.body, ()):
        found = _rows_of(loop, parsed.resolve)
        if found is None or not _never_a_dict_at(found[2], ancestors, parsed.resolve):
            continue
        counter, row, rows = found
        if taken is None:
            taken = names_taken(parsed.node)
        index = counter or fresh_name(f"{row}_index", taken)
        length = gast.Call(func=name_node("len"), args=[name_node(rows)], keywords=[])
        loop.iter = located(gast.Call(func=name_node("range"), args=[length], keywords=[]),
                            loop.iter)
        loop.target = located(store_node(index), loop.target)
        take = gast.Assign(targets=[store_node(row)], value=gast.Subscript(
            value=name_node(rows), slice=name_node(index), ctx=gast.Load()),
            type_comment=None)
        loop.body.insert(0, located(take, loop))


def _rows_of(loop, resolve):
    """``(counter or None, row, array)`` of ``for row in X`` / ``for i, row in
    enumerate(X)`` whose body writes into ``row`` and never rebinds ``X`` (nor
    the names ``len``, ``range``), else None."""
    target, it = loop.target, loop.iter
    counter = None
    if isinstance(it, gast.Call) and resolve("enumerate") is enumerate and \
            isinstance(it.func, gast.Name) and it.func.id == "enumerate" and \
            len(it.args) == 1 and not it.keywords and isinstance(target, gast.Tuple) and \
            len(target.elts) == 2 and all(isinstance(e, gast.Name) for e in target.elts):
        counter, target, it = target.elts[0].id, target.elts[1], it.args[0]
    if not (isinstance(target, gast.Name) and isinstance(it, gast.Name)):
        return None
    row, rows = target.id, it.id
    bound = {n.id for s in loop.body for n in gast.walk(s)
             if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)}
    if rows in bound or row == rows or counter in (row, rows) or \
            resolve("len") is not len or resolve("range") is not range or \
            not _writes_into(loop.body, row):
        return None
    return counter, row, rows


def _writes_into(body, name):
    """Does a statement of ``body`` write into ``name``'s memory in place
    (``name op= v``, ``name[...] = v``, ``name[...] op= v``)?"""
    for stmt in body:
        for node in gast.walk(stmt):
            targets = node.targets if isinstance(node, gast.Assign) else \
                [node.target] if isinstance(node, gast.AugAssign) else []
            for t in targets:
                if isinstance(node, gast.AugAssign) and isinstance(t, gast.Name) and \
                        t.id == name:
                    return True
                while isinstance(t, gast.Subscript):
                    t = t.value
                    if isinstance(t, gast.Name) and t.id == name:
                        return True
    return False


def _loops(block, ancestors):
    """``(loop, ancestors)`` for each ``for`` of ``block`` and the blocks inside it
    (not in nested functions); ``ancestors``: ``(block, position)`` pairs from the
    loop's own block outwards."""
    for k, stmt in enumerate(block):
        here = ((block, k),) + ancestors
        if isinstance(stmt, gast.For):
            yield stmt, here
        if isinstance(stmt, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            continue
        for inner in statement_blocks(stmt):
            yield from _loops(inner, here)


def _never_a_dict_at(name, ancestors, resolve):
    """Is ``name`` surely no dict where the loop starts?  (Iterating a dict yields
    its keys, not ``d[k]``.)  The assignment that reaches the loop, found by
    walking back through the statements before it (out of an ``if``, never back
    around a loop that binds ``name``), makes an arithmetic result, a NumPy
    call's result or a slice of something: no dict.  A parameter, or any other
    value, may be one."""
    for level, (block, k) in enumerate(ancestors):
        if level and isinstance(block[k], (gast.For, gast.While)) and _binds(block[k], name):
            return False  # a value bound later in an enclosing loop comes round again
        for stmt in reversed(block[:k]):
            if _binds(stmt, name):
                return isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
                    isinstance(stmt.targets[0], gast.Name) and \
                    stmt.targets[0].id == name and _no_dict(stmt.value, resolve)
    return False


def _binds(stmt, name):
    return any(isinstance(n, gast.Name) and n.id == name and not isinstance(n.ctx, gast.Load)
               for n in gast.walk(stmt))


def _no_dict(value, resolve):
    """Does ``value`` surely make no dict: arithmetic (not ``|``, a dict union), a
    NumPy function's result, or a subscript with a slice (no dict has one)?"""
    if isinstance(value, gast.BinOp):
        return not isinstance(value.op, gast.BitOr)
    if isinstance(value, gast.UnaryOp):
        return True
    if isinstance(value, gast.Call):
        return numpy_function(value.func, resolve, frozenset()) is not None
    if isinstance(value, gast.Subscript):
        parts = value.slice.elts if isinstance(value.slice, gast.Tuple) else [value.slice]
        return any(isinstance(p, gast.Slice) for p in parts)
    return False
