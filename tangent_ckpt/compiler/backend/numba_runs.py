"""Backend numba: runs of elementwise statements put into functions computed as a
few loops over the elements (runtime/jit/numba_passes.py).

In a compiled step, each NumPy statement allocates its result: on a short
state (Lorenz-96's 40 variables) the step is its allocations, and on a long
one (the heat equation's 1022-element slices) a slice store costs a temporary
and a copy.  :func:`fused_runs` finds each run of consecutive statements the
runtime can fuse -- arithmetic and ufuncs over names and numbers, constant
slices ``u[1:-1]``, ``np.roll(x, 3)``, ``np.copy``, stores and ``+=`` / ``-=``
into slices (``u[1:-1] = v``, ``rt.assign_at``, ``rt.accumulate_at``,
``bu[2:] += g``), ``rt.setitem_adjoint_array`` / ``rt.setitem_adjoint_value``,
``rt.unbroadcast`` and the shape helpers -- and moves it into a function of its
own, ``<owner>_passes<k>``, whose body is the statements unchanged (NumPy runs
it, and so does Numba when the arguments are not 1-D float64 arrays and
numbers) and whose decorator carries their description for the runtime, built
here from the same trees.  The caller reads back what the rest of the function
reads: ``k1, x_add = loop9_step_passes1(x, F, h)``.

Works on code items before emit; used by :mod:`numba_code` for the functions
it compiles, before its single-line fusion and kernels.
"""

import ast

import numpy as np

from tangent_ckpt.adjoints import registry
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.code import Block, Comment, Line
from tangent_ckpt.compiler.naming import NUMPY, RUNTIME


def _fusable_ufunc(name):
    """True when ``np.<name>`` is a ufunc whose row says ``fusable=`` (the
    runtime's passes compute it element by element, real in, real out)."""
    facts = registry.facts(getattr(np, name, None))
    return facts is not None and facts.fusable

__all__ = ["fused_runs"]

_SYMBOLS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}
_AUGMENTED = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}
#: statements that do work (not only a name, a view or a shape)
_WORK = ("aug", "store", "augstore", "acc", "zeroed")


class _No(Exception):
    """A statement the runtime cannot fuse."""


def fused_runs(items, owner, taken, emitted):
    """``items`` (a function's body) with each run of fusable statements replaced
    by a call of a new function; ``emitted`` collects those functions' blocks
    (decorated), ``taken`` the names in use."""
    loads = _load_counts(items)
    return _runs(items, owner, taken, emitted, loads, in_loop=False)


def _runs(items, owner, taken, emitted, loads, in_loop):
    out, run = [], []

    def close():
        while run and not (isinstance(run[0], Line) and run[0].stmt is not None):
            out.append(run.pop(0))  # comments before the run stay in the caller
        statements = [i for i in run if isinstance(i, Line) and i.stmt is not None]
        work = sum(1 for i in statements if _describe(i.stmt)[0] in _WORK or
                   _computes(i.stmt))
        if len(statements) >= 2 and work >= 2:
            out.extend(_call(run, owner, taken, emitted, loads, in_loop))
        else:
            out.extend(run)
        run.clear()

    for item in items:
        if isinstance(item, Comment) or (isinstance(item, Line) and item.stmt is None):
            run.append(item)
            continue
        if isinstance(item, Line) and _fusable(item.stmt):
            run.append(item)
            continue
        close()
        if isinstance(item, Block):
            loop = in_loop or isinstance(item.head, (ast.For, ast.While))
            item = item.with_body(_runs(item.body, owner, taken, emitted, loads, loop))
        out.append(item)
    close()
    return out


def _fusable(stmt):
    try:
        _describe(stmt)
    except _No:
        return False
    return True


def _computes(stmt):
    """True for a ``name = <arithmetic, ufunc, roll or copy>`` statement."""
    value = stmt.value if isinstance(stmt, ast.Assign) else None
    return isinstance(value, (ast.BinOp, ast.UnaryOp)) or \
        (isinstance(value, ast.Call) and _np_function(value) is not None)


def _call(run, owner, taken, emitted, loads, in_loop):
    """The items replacing ``run``: a comment and the call of its new function
    (whose block goes to ``emitted``).  It returns each name it binds that is
    read outside it (more loads in the function than in the run) and, when
    ``in_loop``, each name it binds after reading it: the run of the next
    iteration reads that value."""
    statements = [i.stmt for i in run if isinstance(i, Line) and i.stmt is not None]
    params, assigned, inside = [], [], {}
    for stmt in statements:
        for name in _reads(stmt):
            if name not in assigned and name not in params:
                params.append(name)
        for name in _writes(stmt):
            if name not in assigned:
                assigned.append(name)
        for name in sx.loads(stmt):
            inside[name] = inside.get(name, 0) + 1
    outs = [n for n in assigned if loads.get(n, 0) > inside.get(n, 0) or
            (in_loop and n in params)]
    k = 1
    while f"{owner}_passes{k}" in taken:
        k += 1
    name = f"{owner}_passes{k}"
    taken.add(name)
    description = (tuple(params), tuple(_describe(s) for s in statements), tuple(outs))
    head = sx.def_(name, params)
    head.decorator_list = [sx.call(sx.name("njit"), cache=ast.Constant(True),
                                   passes=_literal(description))]
    lines = [i.line for i in run if getattr(i, "line", None)]
    where = f"line {min(lines)}" if lines and min(lines) == max(lines) else \
        f"lines {min(lines)}-{max(lines)}" if lines else "statements"
    body = [Comment(f"{where} of {owner}(): compiled as a few loops over the elements "
                    "(runtime/jit/numba_passes.py)")] + list(run)
    if outs:
        body.append(Line(sx.return_([sx.name(n) for n in outs])))
    emitted[("passes", name)] = (name, Block(head, body))
    call = sx.call(sx.name(name), *[sx.name(p) for p in params])
    if not outs:
        stmt = sx.statement(call)
    else:
        target = sx.store(outs[0]) if len(outs) == 1 else \
            ast.Tuple(elts=[sx.store(n) for n in outs], ctx=ast.Store())
        stmt = ast.Assign(targets=[target], value=call, lineno=0)
    return [Comment(f"{where}: {name}()"), Line(stmt, run_line(run))]


def run_line(run):
    for item in run:
        if getattr(item, "line", None):
            return item.line
    return None


def _literal(value):
    if isinstance(value, tuple):
        return ast.Tuple(elts=[_literal(v) for v in value], ctx=ast.Load())
    return ast.Constant(value)


def _load_counts(items):
    counts = {}
    for item in items:
        trees = []
        if isinstance(item, Line) and item.stmt is not None:
            trees.append(item.stmt)
        elif isinstance(item, Block):
            if item.head is not None and not isinstance(item.head, ast.FunctionDef):
                trees.append(item.head)
            for name, n in _load_counts(item.body).items():
                counts[name] = counts.get(name, 0) + n
        for tree in trees:
            for node in sx.walk(tree):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                    counts[node.id] = counts.get(node.id, 0) + 1
                elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                    counts[node.target.id] = counts.get(node.target.id, 0) + 1
    return counts


def _reads(stmt):
    names = [n.id for n in _ordered(stmt) if isinstance(n, ast.Name) and
             isinstance(n.ctx, ast.Load) and not n.id.startswith("<")]
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
        names.insert(0, stmt.target.id)
    return names


def _writes(stmt):
    if isinstance(stmt, ast.Assign):
        return [t.id for t in stmt.targets if isinstance(t, ast.Name)]
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
        return [stmt.target.id]
    return []


def _ordered(node):
    """The nodes of ``node`` in the order Python evaluates them (near enough:
    the order of parameters only)."""
    if isinstance(node, ast.Assign):
        yield from _ordered(node.value)
        for t in node.targets:
            yield from _ordered(t)
        return
    yield node
    for child in ast.iter_child_nodes(node):
        yield from _ordered(child)


# ----------------------------------------------------------------- descriptions

def _describe(stmt):
    """The description of one statement (runtime/jit/numba_passes.py), or _No."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target, value = stmt.targets[0], stmt.value
        if isinstance(target, ast.Name):
            if _is_rt(value, "accumulate_at") and len(value.args) == 4 and \
                    not value.keywords and isinstance(value.args[0], ast.Name):
                acc, _, index, g = value.args
                return ("acc", target.id, acc.id, _index(index), _expr(g))
            if _is_rt(value, "setitem_adjoint_array") and len(value.args) == 2 and \
                    isinstance(value.args[0], ast.Name) and not value.keywords:
                return ("zeroed", target.id, value.args[0].id, _index(value.args[1]))
            return ("let", target.id, _expr(value))
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            return ("store", target.value.id, _index(target.slice), _expr(value))
        raise _No
    if isinstance(stmt, ast.AugAssign) and type(stmt.op) in _AUGMENTED:
        symbol = _AUGMENTED[type(stmt.op)]
        if isinstance(stmt.target, ast.Name):
            return ("aug", stmt.target.id, symbol, _expr(stmt.value))
        if isinstance(stmt.target, ast.Subscript) and isinstance(stmt.target.value, ast.Name):
            return ("augstore", stmt.target.value.id, _index(stmt.target.slice), symbol,
                    _expr(stmt.value))
        raise _No
    if isinstance(stmt, ast.Expr) and _is_rt(stmt.value, "assign_at") and \
            len(stmt.value.args) == 3 and isinstance(stmt.value.args[0], ast.Name):
        x, index, value = stmt.value.args
        return ("store", x.id, _index(index), _expr(value))
    raise _No


def _expr(node):
    if isinstance(node, ast.Name):
        if node.id.startswith("<"):
            raise _No
        return node.id
    if isinstance(node, ast.Constant):
        if isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return node.value
        raise _No
    if isinstance(node, ast.BinOp) and type(node.op) in _SYMBOLS:
        return ("bin", _SYMBOLS[type(node.op)], _expr(node.left), _expr(node.right))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return ("neg" if isinstance(node.op, ast.USub) else "pos", _expr(node.operand))
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        return ("slice", node.value.id) + _index(node.slice)
    if isinstance(node, ast.Call):
        return _call_expr(node)
    raise _No


def _call_expr(node):
    if node.keywords:
        raise _No
    args = node.args
    function = _np_function(node)
    if function is not None and _fusable_ufunc(function):
        return ("ufunc", function) + tuple(_expr(a) for a in args)
    if function == "roll" and len(args) in (2, 3) and (len(args) == 2 or _is_none(args[2])):
        return ("roll", _expr(args[0]), _int(args[1]))   # of a name, or of a value computed here
    if function == "copy" and len(args) == 1 and isinstance(args[0], ast.Name):
        return ("copy", args[0].id)
    f = node.func
    if isinstance(f, ast.Attribute) and f.attr == "copy" and not args and \
            isinstance(f.value, ast.Name) and not f.value.id.startswith("<"):
        return ("copy", f.value.id)
    if isinstance(f, ast.Attribute) and f.attr == "copy" and not args and \
            isinstance(f.value, ast.Subscript):   # bu[1:-1].copy(): a slice's values
        return ("copy", _expr(f.value))
    if _is_rt(node, "unbroadcast") and len(args) == 2 and isinstance(args[1], ast.Name):
        return ("unbroadcast", _expr(args[0]), args[1].id)
    if _is_rt(node, "broadcast_shape") and len(args) == 2:
        return ("broadcast_shape",) + tuple(_name_or_number(a) for a in args)
    if _is_rt(node, "shape_of") and len(args) == 1 and isinstance(args[0], ast.Name):
        return ("shape_of", args[0].id)
    if _is_rt(node, "setitem_adjoint_value") and len(args) == 3 and \
            isinstance(args[0], ast.Name) and isinstance(args[2], ast.Name):
        return ("setitem_value", args[0].id, _index(args[1]), args[2].id)
    raise _No


def _np_function(node):
    f = node.func
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == NUMPY:
        return f.attr
    return None


def _is_rt(node, helper):
    f = getattr(node, "func", None)
    return isinstance(node, ast.Call) and isinstance(f, ast.Attribute) and \
        isinstance(f.value, ast.Name) and f.value.id == RUNTIME and f.attr == helper


def _is_none(node):
    return isinstance(node, ast.Constant) and node.value is None


def _name_or_number(node):
    value = _expr(node)
    if isinstance(value, tuple):
        raise _No
    return value


def _int(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and \
            not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_int(node.operand)
    raise _No


def _bound(node):
    return None if node is None or _is_none(node) else _int(node)


def _index(node):
    """A basic 1-D slice ``a:b`` (``slice(a, b)``) with constant bounds, as (a, b)."""
    if isinstance(node, ast.Slice) and node.step is None:
        return (_bound(node.lower), _bound(node.upper))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
            node.func.id in ("slice", "<slice>") and not node.keywords:
        args = node.args
        if len(args) == 1:
            return (None, _bound(args[0]))
        if len(args) == 2:
            return (_bound(args[0]), _bound(args[1]))
    raise _No
