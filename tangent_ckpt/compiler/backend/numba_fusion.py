"""Put single-use elementwise temporaries back into the expression that reads them,
so that Numba computes a line of array arithmetic in one loop.

The generated code has one operation per line (``u_mul = 2.0 * u_item_4``,
``u_sub = u_item_3 - u_mul``, ...); compiled line by line, each operation
allocates a full-size result.  :func:`fuse` finds each temporary that is
assigned once, read once, later in the same block, and made only of
arithmetic, NumPy ufunc calls and subscript reads; and substitutes it into its
reader when no statement in between could change what it reads (rebinds one of
its names, or writes into an array: a subscript store, ``+=``, an
``rt.accumulate*`` call, a method call).  Elementwise, the same operations run
in the same order on each element, so the values are bit-identical.
:func:`kernel_of` then finds the elementwise operations that an elementwise
kernel computes (numba_code.py).

Works on code items (``code.Line``, ``code.Block``) before emit; used by
:mod:`tangent_ckpt.compiler.backend.numba_code` for the functions it compiles.
"""

import ast
import dataclasses

import numpy as np

from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.code import Block, Line
from tangent_ckpt.compiler.naming import NUMPY, RUNTIME

__all__ = ["fuse", "kernel_of"]

_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.USub, ast.UAdd)
def _is_ufunc_call(node):
    f = node.func
    return isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and \
        f.value.id == NUMPY and isinstance(getattr(np, f.attr, None), np.ufunc) and \
        not node.keywords


def _elementwise(node):
    """True when ``node`` is arithmetic on names, numbers, subscript reads and ufuncs."""
    if isinstance(node, ast.Name):
        return not node.id.startswith("<")
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
    return all(isinstance(n, (ast.Name, ast.Constant, ast.UnaryOp, ast.BinOp))
               for n in sx.walk(node))


def _names(node, ctx):
    return [n.id for n in sx.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ctx)]


def _harmless(item, reads):
    """True when running ``item`` cannot change the value of an expression reading
    the names ``reads``: it binds other names and writes into no array."""
    if not isinstance(item, Line):
        return not isinstance(item, Block)  # comments and blanks
    stmt = item.stmt
    if stmt is None:
        return True
    if not isinstance(stmt, ast.Assign):
        return False
    for target in stmt.targets:
        elts = target.elts if isinstance(target, ast.Tuple) else [target]
        if not all(isinstance(e, ast.Name) and e.id not in reads for e in elts):
            return False
    for node in sx.walk(stmt.value):
        if isinstance(node, ast.Call):
            f = node.func
            if not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and
                    f.value.id in (NUMPY, RUNTIME) and not f.attr.startswith("accumulate")):
                return False
        elif isinstance(node, (ast.Lambda, ast.NamedExpr)):
            return False
    return True


def _count(items, stores, loads):
    for item in items:
        if isinstance(item, Block):
            if item.head is not None:
                for name in sx.loads(item.head):
                    loads[name] = loads.get(name, 0) + 1
                if isinstance(item.head, ast.For):
                    for name in _names(item.head.target, ast.Store):
                        stores[name] = stores.get(name, 0) + 1
            _count(item.body, stores, loads)
        elif isinstance(item, Line) and item.stmt is not None:
            for node in sx.walk(item.stmt):
                if isinstance(node, ast.Name):
                    table = stores if isinstance(node.ctx, ast.Store) else loads
                    table[node.id] = table.get(node.id, 0) + 1
                elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                    loads[node.target.id] = loads.get(node.target.id, 0) + 1


def fuse(items, params):
    """``items`` (a function's body) with each single-use elementwise temporary
    substituted into its reader (see the module docstring); ``params``: the
    function's parameters, never substituted."""
    stores, loads = {}, {}
    _count(items, stores, loads)
    return _fused_block(list(items), params, stores, loads)


def _fused_block(items, params, stores, loads):
    items = [item.with_body(_fused_block(item.body, params, stores, loads))
             if isinstance(item, Block) else item for item in items]
    deleted = set()
    for i, item in enumerate(items):
        if not isinstance(item, Line):
            continue
        name = sx.single_target(item.stmt)
        if name is None or name in params or stores.get(name) != 1 or \
                loads.get(name) != 1 or not _elementwise(item.stmt.value):
            continue
        reads = set(_names(item.stmt.value, ast.Load))
        for j in range(i + 1, len(items)):
            later = items[j]
            if isinstance(later, Line) and later.stmt is not None and \
                    name in _names(later.stmt, ast.Load):
                if isinstance(later.stmt, (ast.Assign, ast.Return, ast.Expr)):
                    items[j] = dataclasses.replace(
                        later, stmt=sx.substituted(later.stmt, {name: item.stmt.value}))
                    deleted.add(i)
                break
            if isinstance(later, Block) and name in _block_reads(later):
                break
            if not _harmless(later, reads):
                break
    return [item for i, item in enumerate(items) if i not in deleted]


def _block_reads(block):
    names = set(sx.loads(block.head)) if block.head is not None else set()
    for item in block.body:
        if isinstance(item, Line) and item.stmt is not None:
            names |= sx.loads(item.stmt)
        elif isinstance(item, Block):
            names |= _block_reads(item)
    return names


def _operation(node):
    """True for an elementwise operation: arithmetic or a NumPy ufunc call."""
    if isinstance(node, (ast.BinOp, ast.UnaryOp)):
        return isinstance(node.op, _OPS)
    return isinstance(node, ast.Call) and _is_ufunc_call(node)


def _stem(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        return node.value.id
    if isinstance(node, ast.Call):
        f = node.func
        return f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "x").strip("<>")
    return "x"


def kernel_of(node):
    """For an elementwise operation ``node`` (arithmetic and ufuncs over operands):
    (the kernel's parameters, its operands -- each maximal part that is not an
    operation, numbers excepted, in the order Python evaluates them -- the
    expression on the parameters, and a key equal for kernels that compute the
    same thing); None when ``node`` is no operation or has no operand."""
    if not _operation(node):
        return None
    operands, params, mapping = [], [], {}
    taken = {n.id for n in sx.walk(node) if isinstance(n, ast.Name)}

    def element(n):
        if isinstance(n, ast.Constant) and isinstance(n.value, (int, float)) and \
                not isinstance(n.value, bool):
            return n
        if isinstance(n, ast.BinOp) and _operation(n):
            return ast.BinOp(left=element(n.left), op=n.op, right=element(n.right))
        if isinstance(n, ast.UnaryOp) and _operation(n):
            return ast.UnaryOp(op=n.op, operand=element(n.operand))
        if isinstance(n, ast.Call) and _operation(n):
            return ast.Call(func=n.func, args=[element(a) for a in n.args], keywords=[])
        key = ast.dump(n)
        if key not in mapping:
            stem = _stem(n)
            param = stem if isinstance(n, ast.Name) and stem not in params else \
                _fresh(stem, taken)
            mapping[key] = param
            params.append(param)
            operands.append(n)
        return sx.name(mapping[key])

    body = element(node)
    if not operands:
        return None
    positional = sx.renamed(body, {p: f"p{i}" for i, p in enumerate(params)})
    return params, operands, body, ast.dump(positional)


def _fresh(stem, taken):
    k = 1
    while f"{stem}_{k}" in taken:
        k += 1
    taken.add(f"{stem}_{k}")
    return f"{stem}_{k}"
