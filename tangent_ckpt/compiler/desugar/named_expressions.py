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
        before = []
        while True:
            named = _first_evaluated(stmt)
            if named is None:
                break
            holder, node = named
            before.append(gast.copy_location(gast.Assign(
                targets=[store_node(node.target.id)], value=node.value, type_comment=None),
                node))
            _put(holder, gast.copy_location(name_node(node.target.id), node))
        if before and isinstance(stmt, gast.While):
            again = [copy.deepcopy(s) for s in before]
            stmt.body = _before_continues(stmt.body, again) + [copy.deepcopy(s) for s in again]
        stmts[k:k] = before
        k += len(before) + 1


def _first_evaluated(stmt):
    """``(holder, node)``: the ``:=`` Python evaluates first in ``stmt``'s test or
    value, and the node holding it; or None."""
    if isinstance(stmt, (gast.If, gast.While)):
        node = stmt.test
    elif isinstance(stmt, (gast.Assign, gast.Expr, gast.Return)) and stmt.value is not None:
        node = stmt.value
    else:
        return None
    holder = stmt
    while not isinstance(node, gast.NamedExpr):
        holder = node
        if isinstance(node, (gast.Compare, gast.BinOp)):
            node = node.left
        elif isinstance(node, gast.BoolOp):
            node = node.values[0]
        elif isinstance(node, gast.UnaryOp):
            node = node.operand
        else:
            return None
    return (holder, node) if isinstance(node.target, gast.Name) else None


def _put(holder, new):
    """``new`` where :func:`_first_evaluated` found the ``:=`` in ``holder``."""
    if isinstance(holder, (gast.If, gast.While)):
        holder.test = new
    elif isinstance(holder, (gast.Assign, gast.Expr, gast.Return)):
        holder.value = new
    elif isinstance(holder, (gast.Compare, gast.BinOp)):
        holder.left = new
    elif isinstance(holder, gast.BoolOp):
        holder.values[0] = new
    else:
        holder.operand = new


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
