"""The vocabulary of generated code: small builders of stdlib ``ast`` nodes.

Every statement the compiler generates is built here as a syntax tree and stays
one until :mod:`~tangent_ckpt.compiler.emit.rendering` prints it, once.  A string
passed where an expression is expected must be a name or a dotted path
(``"h"``, ``"np.tanh"``, ``"rt.zeros_like"``): never a piece of code.

A call of a runtime helper is a :class:`HelperCall`, which keeps the helper
itself (the function object of :mod:`tangent_ckpt.runtime`) so that later
stages recognise it by identity, not by its printed name.
"""

import ast
import math
import numbers

from tangent_ckpt import runtime
from tangent_ckpt.compiler.naming import NUMPY, RUNTIME, builtin

# the head of a dotted path that means a module: "np.tanh", "rt.unbroadcast"
_MODULE_HEADS = {"np": NUMPY, "rt": RUNTIME}


class HelperCall(ast.Call):
    """``rt.<helper>(...)``: a call that knows which runtime helper it calls."""

    _fields = ast.Call._fields + ("helper",)


def name(identifier):
    return ast.Name(id=identifier, ctx=ast.Load())


def store(identifier):
    return ast.Name(id=identifier, ctx=ast.Store())


def dotted(path):
    """``"np.linalg.norm"`` -> the attribute chain that reads it.  A path of
    several parts that starts with ``np`` or ``rt`` reads NumPy or the runtime
    (:data:`~tangent_ckpt.compiler.naming.NUMPY`), whatever names emit prints
    for them; a single name is always a variable."""
    parts = path.split(".")
    if not all(p.isidentifier() for p in parts):
        raise ValueError(f"not a name or dotted path: {path!r}")
    head = _MODULE_HEADS.get(parts[0]) if len(parts) > 1 else None
    node = name(head or parts[0])
    for part in parts[1:]:
        node = ast.Attribute(value=node, attr=part, ctx=ast.Load())
    return node


def const(value):
    """A constant; a negative number is a negation, so that printing keeps its
    precedence (``(-0.7) ** 2`` is 0.49, ``-0.7 ** 2`` is -0.49); infinity and
    NaN are ``np.inf`` and ``np.nan``, as a person writes them."""
    if isinstance(value, tuple):
        return ast.Tuple(elts=[const(v) for v in value], ctx=ast.Load())
    if isinstance(value, list):
        return ast.List(elts=[const(v) for v in value], ctx=ast.Load())
    if isinstance(value, float) and not math.isfinite(value):
        return dotted("np.nan") if math.isnan(value) else \
            (dotted("np.inf") if value > 0 else neg(dotted("np.inf")))
    if isinstance(value, numbers.Real) and not isinstance(value, bool) and \
            (value < 0 or (value == 0 and str(value).startswith("-"))):
        return ast.UnaryOp(op=ast.USub(), operand=ast.Constant(value=-value))
    return ast.Constant(value=value)


def expr(value):
    """An expression node from a node, or from a name / dotted path."""
    if isinstance(value, ast.AST):
        return value
    if isinstance(value, str):
        return dotted(value)
    raise TypeError(f"not an expression: {value!r}")


def call(func, *args, **kwargs):
    return ast.Call(func=expr(func), args=[expr(a) for a in args],
                    keywords=[ast.keyword(arg=k, value=expr(v)) for k, v in kwargs.items()])


def rt(helper, *args, **kwargs):
    """``rt.helper(args...)``, carrying the helper object."""
    fn = getattr(runtime, helper)
    return HelperCall(func=dotted(f"rt.{helper}"), args=[expr(a) for a in args],
                      keywords=[ast.keyword(arg=k, value=expr(v)) for k, v in kwargs.items()],
                      helper=fn)


def numpy_module():
    """NumPy itself, as a value."""
    return name(NUMPY)


def builtin_call(function, *args, **kwargs):
    """``reversed(...)``, ``len(...)``: a call of a builtin, whatever user names
    shadow it (emit prints it under a name nothing else uses)."""
    return call(name(builtin(function)), *args, **kwargs)


def calls_helper(node, fn):
    """True when ``node`` is a call of the runtime helper ``fn``."""
    return isinstance(node, HelperCall) and node.helper is fn


def attr(value, attribute):
    return ast.Attribute(value=expr(value), attr=attribute, ctx=ast.Load())


def method(value, attribute, *args):
    return call(attr(value, attribute), *args)


def list_comp(element, target, iterable):
    """``[element for target in iterable]``."""
    return ast.ListComp(elt=expr(element), generators=[ast.comprehension(
        target=store(target), iter=expr(iterable), ifs=[], is_async=0)])


def subscript(value, index):
    return ast.Subscript(value=expr(value), slice=expr(index), ctx=ast.Load())


def tuple_(items):
    return ast.Tuple(elts=[expr(i) for i in items], ctx=ast.Load())


def pack(items):
    """One name as itself, several as a tuple."""
    items = list(items)
    return expr(items[0]) if len(items) == 1 else tuple_(items)


_BINOPS = {"+": ast.Add, "-": ast.Sub, "*": ast.Mult, "/": ast.Div, "**": ast.Pow,
           "@": ast.MatMult, "%": ast.Mod}


def binop(left, symbol, right):
    return ast.BinOp(left=expr(left), op=_BINOPS[symbol](), right=expr(right))


def neg(value):
    return ast.UnaryOp(op=ast.USub(), operand=expr(value))


def not_(value):
    return ast.UnaryOp(op=ast.Not(), operand=expr(value))


def and_(values):
    values = [expr(v) for v in values]
    return values[0] if len(values) == 1 else ast.BoolOp(op=ast.And(), values=values)


def _target(target):
    if isinstance(target, str):
        return store(target)
    if isinstance(target, (list, tuple)):
        if len(target) == 1:
            return _target(target[0])
        return ast.Tuple(elts=[_target(t) for t in target], ctx=ast.Store())
    if isinstance(target, (ast.Subscript, ast.Attribute, ast.Name, ast.Tuple)):
        target.ctx = ast.Store()
        return target
    raise TypeError(f"not an assignment target: {target!r}")


def assign(target, value):
    """``target = value``; ``target``: a name, a list of names (unpacked) or a node."""
    return ast.Assign(targets=[_target(target)], value=expr(value))


def add_to(target, value):
    """``target += value``; ``target``: a name or a node (``b[1:-1]``)."""
    return ast.AugAssign(target=_target(target), op=ast.Add(), value=expr(value))


def subtract_from(target, value):
    """``target -= value``; ``target``: a name or a node."""
    return ast.AugAssign(target=_target(target), op=ast.Sub(), value=expr(value))


def return_(values):
    """``return a`` / ``return a, b`` (several values are printed without parentheses)."""
    values = list(values)
    return ast.Return(value=expr(values[0]) if len(values) == 1 else tuple_(values))


def statement(value):
    return ast.Expr(value=expr(value))


def break_():
    return ast.Break()


def yield_(value):
    return ast.Yield(value=expr(value))


# --- block headers ---------------------------------------------------------------
def if_(test):
    return ast.If(test=expr(test), body=[], orelse=[])


def for_(target, iterable):
    return ast.For(target=_target(target), iter=expr(iterable), body=[], orelse=[])


def while_(test):
    return ast.While(test=expr(test), body=[], orelse=[])


def def_(function_name, params, defaults=()):
    """``def name(params):``; ``defaults`` (nodes) belong to the last parameters."""
    args = ast.arguments(posonlyargs=[], args=[ast.arg(arg=p) for p in params], vararg=None,
                         kwonlyargs=[], kw_defaults=[], kwarg=None,
                         defaults=[expr(d) for d in defaults])
    return ast.FunctionDef(name=function_name, args=args, body=[], decorator_list=[],
                           returns=None)


# --- reading trees ------------------------------------------------------------------
_LEAF_FIELDS = frozenset(("ctx", "op", "ops"))  # contexts and operators: no names below


def walk(node):
    """Every node of a tree but the expression contexts (``Load``) and operators
    (``Add``), in no particular order (``ast.walk`` without its generators and
    those leaves: the compiler's passes read each generated statement many times)."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        for f in n._fields:
            if f in _LEAF_FIELDS:
                continue
            v = getattr(n, f, None)
            if isinstance(v, list):
                stack.extend(x for x in v if isinstance(x, ast.AST))
            elif isinstance(v, ast.AST):
                stack.append(v)


def loads(node):
    """Names a tree reads (``b += g`` reads ``b`` too)."""
    names = set()
    if node is None:
        return names
    for n in walk(node):
        if isinstance(n, ast.Name):
            if isinstance(n.ctx, ast.Load):
                names.add(n.id)
        elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
            names.add(n.target.id)
    return names


def all_names(node):
    return {n.id for n in walk(node) if isinstance(n, ast.Name)}


def single_target(stmt):
    """The name a plain ``name = value`` statement assigns, else None."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
            isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id
    return None


def renamed(node, renames):
    """A copy of ``node`` with the names in ``renames`` ({old: new}) replaced."""
    class Rename(ast.NodeTransformer):
        def visit_Name(self, n):  # noqa: N802
            return ast.Name(id=renames.get(n.id, n.id), ctx=n.ctx)

    return Rename().visit(copy_tree(node))


def substituted(node, mapping):
    """A copy of ``node`` with each name in ``mapping`` replaced by a copy of its node."""
    class Substitute(ast.NodeTransformer):
        def visit_Name(self, n):  # noqa: N802
            if n.id in mapping and isinstance(n.ctx, ast.Load):
                return copy_tree(mapping[n.id])
            return n

    return Substitute().visit(copy_tree(node))


def copy_tree(node):
    """A deep copy of a tree (the helper objects of HelperCall are shared)."""
    if isinstance(node, list):
        return [copy_tree(n) for n in node]
    if not isinstance(node, ast.AST):
        return node
    fields = {}
    for f in node._fields:
        v = getattr(node, f, None)
        if f == "helper":
            fields[f] = v
        elif isinstance(v, list):
            fields[f] = [copy_tree(x) for x in v]
        else:
            fields[f] = copy_tree(v)
    return type(node)(**fields)
