"""Put single-use elementwise temporaries back into the expression that reads them,
so that Numba fuses a line of array arithmetic into one loop.

The generated code has one operation per line (``u_mul = 2.0 * u_item_4``,
``u_sub = u_item_3 - u_mul``, ...).  Numba fuses array expressions only
within one statement, so compiled line by line each operation allocates a
full-size result.  :func:`fusion_plan` finds each temporary that is assigned
once, read once, later in the same block, and made only of arithmetic, NumPy
ufunc calls and subscript reads; and substitutes it into its reader when no
statement in between could change what it reads (rebinds one of its names, or
writes into an array: a subscript store, ``+=``, an ``rt.accumulate*`` call,
a method call).  Elementwise, the same operations run in the same order on
each element, so the values are bit-identical.

Used by :mod:`tangent_ckpt.runtime.numba_backend` on the functions it compiles.
"""

import ast
import copy

import numpy as np

__all__ = ["fusion_plan"]

_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.USub, ast.UAdd)


def _is_ufunc_call(node):
    f = node.func
    return isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and \
        f.value.id == "np" and isinstance(getattr(np, f.attr, None), np.ufunc) and \
        not node.keywords


def _elementwise(node):
    """True when ``node`` is arithmetic on names, numbers, subscript reads and ufuncs."""
    if isinstance(node, ast.Name):
        return True
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    if isinstance(node, ast.BinOp):
        return isinstance(node.op, _OPS) and _elementwise(node.left) and _elementwise(node.right)
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, _OPS) and _elementwise(node.operand)
    if isinstance(node, ast.Subscript):
        return isinstance(node.value, ast.Name) and _index(node.slice)
    if isinstance(node, ast.Call):
        return _is_ufunc_call(node) and all(_elementwise(a) for a in node.args)
    return False


def _index(node):
    if isinstance(node, ast.Tuple):
        return all(_index(e) for e in node.elts)
    if isinstance(node, ast.Slice):
        return all(b is None or _simple(b) for b in (node.lower, node.upper, node.step))
    return _simple(node)


def _simple(node):
    return all(isinstance(n, (ast.Name, ast.Constant, ast.UnaryOp, ast.BinOp, ast.USub,
                              ast.Add, ast.Sub, ast.Load)) for n in ast.walk(node))


def _names(node, ctx):
    return [n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ctx)]


def _harmless(stmt, reads):
    """True when running ``stmt`` cannot change the value of an expression reading
    the names ``reads``: it binds other names and writes into no array."""
    if not isinstance(stmt, ast.Assign):
        return False
    for target in stmt.targets:
        elts = target.elts if isinstance(target, ast.Tuple) else [target]
        if not all(isinstance(e, ast.Name) and e.id not in reads for e in elts):
            return False
    for node in ast.walk(stmt.value):
        if isinstance(node, ast.Call):
            f = node.func
            if not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and
                    f.value.id in ("np", "rt") and not f.attr.startswith("accumulate")):
                return False
        elif isinstance(node, (ast.Lambda, ast.NamedExpr)):
            return False
    return True


class _Substitute(ast.NodeTransformer):
    def __init__(self, name, value):
        self.name, self.value = name, value

    def visit_Name(self, node):
        if node.id == self.name and isinstance(node.ctx, ast.Load):
            return copy.deepcopy(self.value)
        return node


def fusion_plan(func):
    """(statements to delete, {statement: its rewritten copy}) for ``func``."""
    stores, loads = {}, {}
    for node in ast.walk(func):
        if isinstance(node, ast.Name):
            table = stores if isinstance(node.ctx, ast.Store) else loads
            table[node.id] = table.get(node.id, 0) + 1
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            loads[node.target.id] = loads.get(node.target.id, 0) + 1
    params = {a.arg for a in func.args.args}
    deleted, rewritten = set(), {}
    for block in _blocks(func):
        for i, stmt in enumerate(block):
            tree = rewritten.get(id(stmt), stmt)
            if not (isinstance(tree, ast.Assign) and len(tree.targets) == 1 and
                    isinstance(tree.targets[0], ast.Name)):
                continue
            name = tree.targets[0].id
            if name in params or stores.get(name) != 1 or loads.get(name) != 1 or \
                    not _elementwise(tree.value):
                continue
            reads = set(_names(tree.value, ast.Load))
            for later in block[i + 1:]:
                later_tree = rewritten.get(id(later), later)
                if name in _names(later_tree, ast.Load):
                    if isinstance(later_tree, (ast.Assign, ast.Return, ast.Expr)):
                        new = _Substitute(name, tree.value).visit(copy.deepcopy(later_tree))
                        rewritten[id(later)] = new
                        deleted.add(id(stmt))
                        rewritten.pop(id(stmt), None)
                    break
                if not _harmless(later_tree, reads):
                    break
    return deleted, rewritten


def _blocks(func):
    """Every statement list of ``func`` (its body, and the bodies of its if/for/while)."""
    found = [func.body]
    for node in ast.walk(func):
        if node is func:
            continue
        for field in ("body", "orelse"):
            body = getattr(node, field, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt) and \
                    isinstance(node, (ast.If, ast.For, ast.While)):
                found.append(body)
    return found
