"""Package: a negation the adjoint makes and uses once is subtracted instead.

The adjoint of ``u_sub = a - u_mul`` is ``bu_mul = -bu_sub``; when the next
line is the only reader (``bu_item_4 = bu_mul * 2.0``), the negation moves
into it (``bu_item_4 = -bu_sub * 2.0``), and so on down the chain until it
reaches an accumulation, which subtracts (``bu[1:-1] -= bu_sub * 2.0``,
``bx = bx - g``): one NumPy call and one temporary array less, the same bits
(negation is exact and commutes with rounded products and quotients,
``rules.negated``).

Only adjoint lines are rewritten, and only a temporary assigned once and read
once in the whole generated function, by the line right after it: nothing runs
between its assignment and its one read, so the names it reads hold the same
arrays there.  ``b -= x`` is made only for a subscript target (``b[i] += ...``
is only generated for a plain private array) and ``b = b + x``; never for
``b += x``, whose ``b`` may be an ``rt.ProductSum``.
"""

import ast

from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.code import Block, Line, trees
from tangent_ckpt.compiler.transform.rules import negated


def fold_negations(definition):
    """``definition`` (a ``Block`` whose head is a ``def``) with its single-use
    negations moved into their readers; changed in place, and returned."""
    stores, loads = {}, {}
    for tree in trees([definition]):
        for node in sx.walk(tree):
            if isinstance(node, ast.Name):
                table = loads if isinstance(node.ctx, ast.Load) else stores
                table[node.id] = table.get(node.id, 0) + 1
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                loads[node.target.id] = loads.get(node.target.id, 0) + 1
    params = {a.arg for a in definition.head.args.args} if \
        isinstance(definition.head, ast.FunctionDef) else set()
    _fold(definition.body, stores, loads, params)
    return definition


def _fold(items, stores, loads, params):
    k = 0
    while k < len(items):
        item = items[k]
        if isinstance(item, Block):
            _fold(item.body, stores, loads, params)
        elif k + 1 < len(items) and _moves_into(item, items[k + 1], stores, loads, params):
            items[k + 1] = _substituted(items[k + 1], sx.single_target(item.stmt),
                                        item.stmt.value)
            del items[k]
            continue  # the reader may now be a single-use negation itself
        k += 1


def _moves_into(item, reader, stores, loads, params):
    if not (isinstance(item, Line) and item.adjoint and isinstance(reader, Line)
            and reader.adjoint and reader.stmt is not None):
        return False
    target = sx.single_target(item.stmt)
    if target is None or target in params or stores.get(target) != 1 or \
            loads.get(target) != 1 or negated(item.stmt.value) is None:
        return False
    return any(isinstance(n, ast.Name) and n.id == target for n in sx.walk(reader.stmt))


def _substituted(reader, name, value):
    stmt = _replace(reader.stmt, name, value)
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add) and \
            isinstance(stmt.target, ast.Subscript) and negated(stmt.value) is not None:
        stmt = sx.subtract_from(stmt.target, negated(stmt.value))      # b[i] -= x
    elif isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.BinOp) and \
            isinstance(stmt.value.op, ast.Add) and sx.single_target(stmt) is not None and \
            isinstance(stmt.value.left, ast.Name) and \
            stmt.value.left.id == sx.single_target(stmt) and \
            negated(stmt.value.right) is not None:                     # b = b - x
        stmt.value = sx.binop(stmt.value.left, "-", negated(stmt.value.right))
    return Line(stmt, reader.line, reader.adjoint, reader.comment)


def _replace(stmt, name, value):
    class Substitute(ast.NodeTransformer):
        def visit_Name(self, node):  # noqa: N802
            return sx.copy_tree(value) if node.id == name else node
    return Substitute().visit(stmt)
