"""Values a loop's reverse sweep derives from its invariants, computed once.

Today one: the adjoint of ``x1`` in ``x1 @ W`` is ``g @ W.T``; when ``W`` is a
loop invariant, every step multiplies by the same transposed matrix, and
OpenBLAS multiplies by a row-ordered copy of ``W.T`` about 8 % faster than by
the transposed view.  The copy is made once before the loop
(``W_T = rt.transposed(W)``) and handed to each step's adjoint
(``rt.matmul_adjoint_x1(g, h, W, W_T)``).
"""

import ast

from tangent_ckpt.compiler.code import Block, Line, _flat_lines

_ADJOINT_X1 = "rt.matmul_adjoint_x1"


def transpose_invariants(items, invariants, names, fresh, grow=True):
    """Rewrite ``rt.matmul_adjoint_x1(g, x, W)`` in ``items`` to take ``W_T`` when
    ``W`` is one of ``invariants``.  ``names`` ({W: W_T}) is shared by the
    functions of one loop; new entries are named with ``fresh`` when ``grow``,
    else only the names already there are used.  Returns the new items; the
    caller defines each ``W_T = rt.transposed(W)`` before the loop."""
    invariants = set(invariants)
    for line in _flat_lines(items):
        for name in _operands(line.text, invariants):
            if name not in names and grow:
                names[name] = fresh(f"{name}_T")
    return _rewrite(items, names) if names else items


def _calls(text):
    try:
        tree = ast.parse(text.strip())
    except SyntaxError:
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func) == _ADJOINT_X1 and \
                len(node.args) == 3 and not node.keywords:
            yield node


def _operands(text, invariants):
    for call in _calls(text):
        w = call.args[2]
        if isinstance(w, ast.Name) and w.id in invariants:
            yield w.id


def _rewrite(items, names):
    out = []
    for item in items:
        if isinstance(item, Line):
            text = item.text
            for call in _calls(text):
                w = call.args[2]
                if isinstance(w, ast.Name) and w.id in names:
                    old = ast.unparse(call)
                    new = old[:-1] + f", {names[w.id]})"
                    text = text.replace(old, new)
            out.append(Line(text, item.line, item.adjoint))
        elif isinstance(item, Block):
            out.append(Block(item.header, _rewrite(item.body, names), item.line, item.adjoint))
        else:
            out.append(item)
    return out
