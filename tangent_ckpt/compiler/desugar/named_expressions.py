"""Desugar: an assignment expression ``(name := value)`` that Python evaluates
first in its statement, written as the assignment it is, before the statement.

    while (k := k + 1) < n:      ->   k = k + 1
        body                          while k < n:
                                          body
                                          k = k + 1

    if (m := np.max(x)) > 1:     ->   m = np.max(x)
        x = x / m                     if m > 1:
                                          x = x / m

Python evaluates a ``while`` test before each trip: the assignment is made before
the loop, at the end of the body and before each ``continue`` of the loop (after a
``break`` the test is not evaluated again, nor is it here).  The ``:=`` must be the
first thing the statement evaluates (the test itself, the left side of a
comparison, of an operator or of ``and``/``or``, the operand of ``not``), so that
nothing Python evaluates before it moves after it, and nothing the ``and``/``or``
may skip is evaluated: ``x = f(y) + (n := 3)`` and a ``:=`` in a comprehension
stay as they are, refused by the lowering.  Statements: ``if``/``while`` tests, the
value of an assignment, an expression statement, ``return``.
"""

import copy

import gast

from tangent_ckpt.compiler.desugar.view_shape import name_node, statement_blocks, store_node


def write_named_expressions(fnode):
    """Rewrite, in place, each such statement of ``fnode`` (nested blocks and the
    functions nested in it included)."""
    for scope in [fnode] + [n for n in gast.walk(fnode)
                            if isinstance(n, gast.FunctionDef) and n is not fnode]:
        _block(scope.body)


def _block(stmts):
    k = 0
    while k < len(stmts):
        stmt = stmts[k]
        for block in statement_blocks(stmt):
            _block(block)
        field = "test" if isinstance(stmt, (gast.If, gast.While)) else "value" \
            if isinstance(stmt, (gast.Assign, gast.Expr, gast.Return)) else None
        before = []
        while field is not None and getattr(stmt, field) is not None:
            named = _first_evaluated(stmt, field)
            if named is None:
                break
            before.append(gast.copy_location(gast.Assign(
                targets=[store_node(named[1].target.id)], value=named[1].value,
                type_comment=None), named[1]))
            _replace(named[0], named[1], gast.copy_location(
                name_node(named[1].target.id), named[1]))
        if before and isinstance(stmt, gast.While):
            again = [copy.deepcopy(s) for s in before]
            stmt.body = _before_continues(stmt.body, again) + [copy.deepcopy(s) for s in again]
        stmts[k:k] = before
        k += len(before) + 1


def _first_evaluated(stmt, field):
    """``(parent, node)``: the ``:=`` Python evaluates first in ``stmt``'s ``field``
    (``parent`` the node holding it), or None."""
    parent, node = stmt, getattr(stmt, field)
    while True:
        if isinstance(node, gast.NamedExpr):
            return (parent, node) if isinstance(node.target, gast.Name) else None
        if isinstance(node, gast.Compare):
            parent, node = node, node.left
        elif isinstance(node, gast.BoolOp):
            parent, node = node, node.values[0]
        elif isinstance(node, gast.UnaryOp):
            parent, node = node, node.operand
        elif isinstance(node, gast.BinOp):
            parent, node = node, node.left
        else:
            return None


def _replace(parent, old, new):
    for field, value in gast.iter_fields(parent):
        if value is old:
            setattr(parent, field, new)
            return
        if isinstance(value, list):
            for k, item in enumerate(value):
                if item is old:
                    value[k] = new
                    return


def _before_continues(stmts, again):
    """``stmts`` (a loop's body) with ``again`` before each ``continue`` of that
    loop (not of a loop nested in it, whose ``else`` is the loop's own)."""
    out = []
    for s in stmts:
        if isinstance(s, gast.Continue):
            out.extend(copy.deepcopy(a) for a in again)
        elif isinstance(s, (gast.For, gast.While, gast.AsyncFor)):
            s.orelse = _before_continues(s.orelse, again)
        elif not isinstance(s, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            for block in statement_blocks(s):
                block[:] = _before_continues(block, again)
        out.append(s)
    return out
