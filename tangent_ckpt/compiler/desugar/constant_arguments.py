"""Desugar: a string (or ``None``) argument the gradient is compiled for, read
as the constant it is.

    def advect(u, n, limiter="vanleer"):          (called with limiter="minmod")
        lm = LIMITERS[limiter]              ->    lm = LIMITERS["minmod"]
        if limiter == "superbee": ...       ->    if "minmod" == "superbee": ...

A string cannot be differentiated, and code that chooses a function by one (a
flux limiter, an activation, an integrator named by the caller) cannot be
lowered while the choice is a value of the run.  Where the gradient is refused
so, the API compiles it again for the strings (and ``None`` values) the call gives,
keyed by their values (``api.GradientFunction``, as for numbers), and this pass
reads each such parameter as its constant; ``constant_flags.py`` then keeps the
branch that runs and ``function_names.py`` resolves the function chosen.

The function's straight code (its top-level statements, and the branch that
runs of an ``if`` there whose test these constants decide) is followed
statement by statement, as it runs: a read sees the value the parameter has
there.  Options are often normalised first, and those statements are followed
too -- ``name = name.lower()``, ``key = prefix + "_" + name`` (``str`` methods
that give a string from constants, and ``+``), ``if method is None: method =
"rk4"`` -- and then go (nothing reads them).  A parameter bound any other way
(in a loop, in a branch not decided, to a value of the run, by ``global`` /
``nonlocal``) keeps every read as written, and so does one that a nested
function, lambda, class or comprehension mentions (the constant is then not
used at all).
"""

import gast

from tangent_ckpt.compiler.desugar.local_bindings import (COMPREHENSIONS, SCOPES,
                                                         names_in_nested_scopes)
from tangent_ckpt.compiler.desugar.view_shape import ReplacedNodes


def read_constant_arguments(parsed, constants):
    """Rewrite, in ``parsed.node``, each read of a parameter named in
    ``constants`` ({parameter: str or None}) as its constant, where the module's
    docstring allows; returns the names rewritten."""
    fnode = parsed.node
    if not constants:
        return set()
    seen_outside = names_in_nested_scopes(fnode, SCOPES + COMPREHENSIONS)
    names = {name for name, value in constants.items()
             if (isinstance(value, str) or value is None) and name not in seen_outside}
    while names:  # a name bound where it cannot be followed is left out, and all again
        straight = _StraightCode(constants, names)
        body = straight.run(fnode.body)
        if not straight.lost:
            break
        names -= straight.lost
    if not names:
        return set()
    fnode.body = [ReplacedNodes(straight.reads).visit(stmt) for stmt in body]
    return names


#: the methods of ``str`` that give a string from a string and constants, and
#: nothing else (no lookup of the run's state)
_STRING_METHODS = frozenset({
    "lower", "upper", "casefold", "strip", "lstrip", "rstrip", "title", "capitalize",
    "replace", "removeprefix", "removesuffix", "swapcase",
})

_COMPARISONS = {gast.Eq: lambda a, b: a == b, gast.NotEq: lambda a, b: a != b,
                gast.In: lambda a, b: a in b, gast.NotIn: lambda a, b: a not in b}


class _StraightCode:
    """The function's straight code followed with the parameters ``names`` as
    their constants: ``run`` gives its statements with each binding it follows
    dropped and each ``if`` it decides replaced by the branch that runs;
    ``reads`` ({id(read): constant}) are the reads to replace; ``lost``, the
    names bound where they cannot be followed."""

    def __init__(self, constants, names):
        self.value = {name: constants[name] for name in names}
        self.reads = {}
        self.lost = set()
        self.ended = False  # a return or raise of the straight code met

    def run(self, stmts):
        body = []
        for stmt in stmts:
            if isinstance(stmt, gast.If):
                test = self._folded(stmt.test)
                if test is not _UNKNOWN:  # the branch that runs, followed in turn
                    body.extend(self.run(stmt.body if test else stmt.orelse))
                    if self.ended:
                        return body
                    continue
            if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
                    isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id in self.value:
                new = self._folded(stmt.value)
                if isinstance(new, str) or new is None:
                    self._read_in(stmt.value)
                    self.value[stmt.targets[0].id] = new
                    continue  # (the binding: nothing reads it now)
            bound = {node.id for node in _own_nodes(stmt)
                     if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load)}
            bound |= {name for node in _own_nodes(stmt)
                      if isinstance(node, (gast.Global, gast.Nonlocal)) for name in node.names}
            bound |= {node.name for node in _own_nodes(stmt) if isinstance(node, SCOPES[:3])}
            self.lost |= bound & set(self.value)
            self._read_in(stmt)
            body.append(stmt)
            if isinstance(stmt, (gast.Return, gast.Raise)):
                self.ended = True  # (what follows never runs)
                return body
        return body

    def _read_in(self, node):
        for n in _own_nodes(node):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id in self.value:
                self.reads[id(n)] = gast.copy_location(
                    gast.Constant(value=self.value[n.id], kind=None), n)

    def _folded(self, node):
        """The string, ``None``, bool or tuple of constants ``node`` gives, read
        with the constants followed; ``_UNKNOWN`` where it is anything else."""
        if isinstance(node, gast.Constant):
            return node.value if isinstance(node.value, (str, int, type(None))) else _UNKNOWN
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
            return self.value.get(node.id, _UNKNOWN)
        if isinstance(node, (gast.Tuple, gast.List)):
            items = tuple(self._folded(item) for item in node.elts)
            return _UNKNOWN if _UNKNOWN in items else items
        if isinstance(node, gast.BinOp) and isinstance(node.op, gast.Add):
            left, right = self._folded(node.left), self._folded(node.right)
            return left + right if isinstance(left, str) and isinstance(right, str) \
                else _UNKNOWN
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
                node.func.attr in _STRING_METHODS and not node.keywords:
            receiver = self._folded(node.func.value)
            args = [self._folded(a) for a in node.args]
            if isinstance(receiver, str) and _UNKNOWN not in args:
                try:
                    result = getattr(receiver, node.func.attr)(*args)
                except (TypeError, ValueError):
                    return _UNKNOWN
                return result if isinstance(result, str) else _UNKNOWN
            return _UNKNOWN
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.Not):
            operand = self._folded(node.operand)
            return not operand if operand is not _UNKNOWN else _UNKNOWN
        if isinstance(node, gast.BoolOp):  # act or "tanh": every side a constant
            sides = [self._folded(v) for v in node.values]
            if _UNKNOWN in sides:
                return _UNKNOWN
            for side in sides[:-1]:  # Python's value: the first that decides
                if bool(side) == isinstance(node.op, gast.Or):
                    return side
            return sides[-1]
        if isinstance(node, gast.Compare) and len(node.ops) == 1:
            left, right = self._folded(node.left), self._folded(node.comparators[0])
            if _UNKNOWN in (left, right) or isinstance(left, bool) or isinstance(right, bool):
                return _UNKNOWN
            op = type(node.ops[0])
            if op in (gast.Is, gast.IsNot) and (left is None or right is None):
                return (left is right) == (op is gast.Is)  # (only None: strings by ==)
            if op in _COMPARISONS and not (op in (gast.In, gast.NotIn) and
                                           not isinstance(right, (str, tuple))):
                try:
                    return bool(_COMPARISONS[op](left, right))
                except TypeError:
                    return _UNKNOWN
        return _UNKNOWN


_UNKNOWN = object()


def _own_nodes(node):
    """``node`` and its nodes in the function's own scope (not those of a nested
    ``def``, ``lambda``, ``class`` or comprehension)."""
    stack = [node]
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, SCOPES + COMPREHENSIONS):
            stack.extend(gast.iter_child_nodes(node))
