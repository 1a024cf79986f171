"""Values a loop's reverse sweep derives from its invariants, computed once.

Today one: the adjoint of ``x1`` in ``x1 @ W`` is ``g @ W.T``; when ``W`` is a
loop invariant, every step multiplies by the same transposed matrix, and
OpenBLAS multiplies by a row-ordered copy of ``W.T`` about 8 % faster than by
the transposed view.  The copy is made once before the loop
(``W_T = rt.transposed(W)``) and handed to each step's adjoint
(``rt.matmul_adjoint_x1(g, h, W, W_T)``).
"""

import ast

from tangent_ckpt import runtime
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.code import Block, Line, flat_lines


def transpose_invariants(items, invariants, names, fresh, grow=True):
    """Rewrite ``rt.matmul_adjoint_x1(g, x, W)`` in ``items`` to take ``W_T`` when
    ``W`` is one of ``invariants``.  ``names`` ({W: W_T}) is shared by the
    functions of one loop; new entries are named with ``fresh`` when ``grow``,
    else only the names already there are used.  Returns the new items; the
    caller defines each ``W_T = rt.transposed(W)`` before the loop."""
    invariants = set(invariants)
    for line in flat_lines(items):
        for call in _calls(line.stmt):
            w = call.args[2]
            if isinstance(w, ast.Name) and w.id in invariants and w.id not in names and grow:
                names[w.id] = fresh(f"{w.id}_T")
    return _rewrite(items, names) if names else items


def _calls(tree):
    """The ``rt.matmul_adjoint_x1(g, x, W)`` calls in ``tree`` (known by the helper they call)."""
    if tree is None:
        return
    for node in ast.walk(tree):
        if sx.calls_helper(node, runtime.matmul_adjoint_x1) and len(node.args) == 3 and \
                not node.keywords:
            yield node


def _rewrite(items, names):
    out = []
    for item in items:
        if isinstance(item, Line) and item.stmt is not None:
            stmt = sx.copy_tree(item.stmt)
            for call in list(_calls(stmt)):
                w = call.args[2]
                if isinstance(w, ast.Name) and w.id in names:
                    call.args.append(sx.name(names[w.id]))
            out.append(Line(stmt, item.line, item.adjoint, item.comment))
        elif isinstance(item, Block):
            out.append(item.with_body(_rewrite(item.body, names)))
        else:
            out.append(item)
    return out
