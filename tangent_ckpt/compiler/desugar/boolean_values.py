"""Desugar: ``x = a or b`` and ``x = a and b``, an operand chosen by its truth,
as the ``if`` statement it is.

Python evaluates ``a``, tests its truth once, and gives ``a`` itself (``or``: when
it is true; ``and``: when it is false) or else evaluates ``b`` and gives it.  So

    rng = rng or np.random.default_rng(0)   ->   if not rng:
                                                     rng = np.random.default_rng(0)
    s = scale or 2.0                         ->   if scale:
                                                     s = scale
                                                 else:
                                                     s = 2.0
    y = f(x) and g(x)                        ->   operand = f(x)
                                                 if operand:
                                                     y = g(x)
                                                 else:
                                                     y = operand

(``a`` not a plain name is evaluated once, into a fresh name; ``a or b or c`` is
``a or (b or c)``).  The rest of the compiler then sees an ``if`` of a run-time
(or constant) condition, with each path binding ``x``: the operand not chosen is
never evaluated, as in Python.

Only the whole value of an assignment to one name; an ``and``/``or`` inside a
larger expression stays, and the lowering refuses it as a value.  An ``and``/``or``
of operands that are surely bools (comparisons, ``not``, ``isinstance``:
``pure_values.is_boolean``) is a bool the lowering computes as it is, and stays too.
"""

import gast

from tangent_ckpt.compiler.desugar.pure_values import is_boolean
from tangent_ckpt.compiler.desugar.view_shape import (
    fresh_name, name_node, names_taken, statement_lists, store_node,
)


def write_boolean_values(fnode):
    """Rewrite, in place, each ``x = a or b`` / ``x = a and b`` of ``fnode`` and of
    the functions nested in it as an ``if`` (see the module's docstring)."""
    taken = None  # the names of the function, found at the first rewrite
    for scope in [fnode] + [n for n in gast.walk(fnode)
                            if isinstance(n, gast.FunctionDef) and n is not fnode]:
        for block in statement_lists(scope):
            k = 0
            while k < len(block):
                stmt = block[k]
                if not _chosen_by_truth(stmt):
                    k += 1
                    continue
                taken = names_taken(fnode) if taken is None else taken
                written = _as_if(stmt.targets[0].id, stmt.value, stmt, taken)
                block[k:k + 1] = written
                k += len(written)


def _chosen_by_truth(stmt):
    return isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
        isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.BoolOp) and \
        not all(is_boolean(v) for v in stmt.value.values)


def _as_if(target, value, where, taken):
    """The statements binding ``target`` to ``value`` (an ``and``/``or``)."""
    first, rest = value.values[0], value.values[1:]
    other = rest[0] if len(rest) == 1 else gast.copy_location(
        gast.BoolOp(op=value.op, values=rest), rest[0])
    is_or = isinstance(value.op, gast.Or)

    def bind(node):
        stmt = gast.copy_location(gast.Assign(targets=[store_node(target)], value=node,
                                              type_comment=None), where)
        return _as_if(target, node, where, taken) if _chosen_by_truth(stmt) else [stmt]

    if isinstance(first, gast.Name) and first.id == target:
        # x = x or b: x stays where it is true (and: where it is false)
        test = gast.copy_location(name_node(target), first)
        if is_or:
            test = gast.copy_location(gast.UnaryOp(op=gast.Not(), operand=test), first)
        return [gast.copy_location(gast.If(test=test, body=bind(other), orelse=[]), where)]
    before = []
    if not isinstance(first, gast.Name):  # evaluated once, tested and given
        operand = fresh_name("operand", taken)
        before.append(gast.copy_location(gast.Assign(
            targets=[store_node(operand)], value=first, type_comment=None), first))
        first = gast.copy_location(name_node(operand), first)
    kept = bind(gast.copy_location(name_node(first.id), first))
    chosen = bind(other)
    return before + [gast.copy_location(gast.If(
        test=gast.copy_location(name_node(first.id), first),
        body=kept if is_or else chosen, orelse=chosen if is_or else kept), where)]
