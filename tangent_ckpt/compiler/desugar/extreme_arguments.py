"""Desugar: ``max(a, b, c)`` and ``max([a, b, c])`` (``min`` likewise) as the
pairs ``max(max(a, b), c)``, which the registry's rule of two numbers follows.

Python's ``max`` of several values keeps the first largest, comparing left to
right; ``max(max(a, b), c)`` keeps the same one and evaluates the values in the
same order.  A list or tuple display given alone is its items given as
arguments.  Only where the name surely means the builtin, with no keywords
(``key=``, ``default=``) and no ``*`` spread: anything else is left to the
lowering, which refuses it saying what to write instead."""

import gast

from tangent_ckpt.compiler.desugar.local_bindings import builtins_meant

_BUILTINS = ("max", "min")


def write_extreme_arguments(parsed, fnode=None):
    """Rewrite, in ``fnode`` (default ``parsed.node``, whose names ``parsed``
    resolves), each ``max``/``min`` of several values as nested pairs."""
    fnode = parsed.node if fnode is None else fnode
    if not any(isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and
               n.func.id in _BUILTINS for n in gast.walk(fnode)):
        return
    builtin = builtins_meant(_BUILTINS, fnode, parsed.resolve)
    if builtin:
        _Pairs(builtin).visit(fnode)


def _values(node):
    """The values ``max(...)`` compares, as written in the call, or None."""
    if node.keywords or any(isinstance(a, gast.Starred) for a in node.args):
        return None
    if len(node.args) >= 3:
        return list(node.args)
    if len(node.args) == 1 and isinstance(node.args[0], (gast.List, gast.Tuple)):
        items = node.args[0].elts
        if len(items) >= 1 and not any(isinstance(e, gast.Starred) for e in items):
            return list(items)
    return None


class _Pairs(gast.NodeTransformer):
    def __init__(self, builtin):
        self.builtin = builtin

    def visit_Call(self, node):
        self.generic_visit(node)
        if not (isinstance(node.func, gast.Name) and node.func.id in self.builtin):
            return node
        values = _values(node)
        if values is None:
            return node
        acc = values[0]
        for value in values[1:]:
            acc = gast.copy_location(gast.Call(
                func=gast.Name(id=node.func.id, ctx=gast.Load(), annotation=None,
                               type_comment=None),
                args=[acc, value], keywords=[]), node)
        return acc
