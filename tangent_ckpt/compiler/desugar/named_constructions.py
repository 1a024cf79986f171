"""Desugar: an object made and used at once, bound to a name first.

``return Model(W).loss(x)`` or ``np.sum(_Both(x).total)``: the object is made,
read once and dropped.  Bound to a name of its own just before the statement::

    return TwoLayerNet(W1, b1).loss(X)    ->    twolayernet = TwoLayerNet(W1, b1)
                                                return twolayernet.loss(X)

it is an object ``name = Cls(...)`` like any other, which ``inline_functions.py``
(run after this pass) inlines and ``scalar_objects.py`` writes as one name per
attribute.

That is the same program exactly when the construction, the receiver of an
attribute (``Cls(...).attr``), is a class desugar makes objects of, and it runs
first in its statement (an assignment to names or subscripts, a ``return`` or
an expression statement): what Python evaluates before it there reads only
names, constants and modules' attributes (``np.sum``), and it sits in no branch
of the statement (``and``, ``or``, ``if ... else``, a comparison, a
comprehension or lambda).  Any other construction stays where it is.
"""

import types

import gast

from tangent_ckpt.compiler.desugar import records
from tangent_ckpt.compiler.desugar.local_bindings import local_names
from tangent_ckpt.compiler.desugar.scalar_objects import replaceable_class
from tangent_ckpt.compiler.desugar.view_facts import resolve_dotted
from tangent_ckpt.compiler.desugar.view_shape import (
    fresh_name, located, name_node, names_taken, statement_lists, store_node,
)

#: the expressions that evaluate every child, in the order of their fields
_IN_ORDER = (gast.Call, gast.Attribute, gast.Subscript, gast.BinOp, gast.UnaryOp,
             gast.Tuple, gast.List, gast.keyword)
#: those of them that run nothing of their own once their children are evaluated
_INERT = (gast.Tuple, gast.List, gast.keyword)


def name_constructions(parsed):
    """Bind each such construction of ``parsed.node`` to a fresh name, in place."""
    fnode = parsed.node
    local = local_names(fnode)
    taken = names_taken(fnode) | set(parsed.globals) | set(parsed.closure)
    for block in statement_lists(fnode):
        k = 0
        while k < len(block):
            stmt = block[k]
            found = _first_construction(stmt, parsed, local)
            if found is None:
                k += 1
                continue
            call, cls = found
            name = fresh_name(cls.__name__.lower(), taken)
            bind = located(gast.Assign(targets=[store_node(name)], value=None,
                                       type_comment=None), stmt)
            bind.value = call  # (the construction keeps its own place)
            _Swap(call, gast.copy_location(name_node(name), call)).visit(stmt)
            block[k:k] = [bind]
            k += 1  # (the statement again: another construction may come next)


def _first_construction(stmt, parsed, local):
    """``(call, cls)`` of the construction ``stmt`` runs
    first, where it is the receiver of an attribute and only pure reads come
    before it (see the module's docstring); else None."""
    if isinstance(stmt, gast.Assign):
        root = stmt.value
    elif isinstance(stmt, (gast.Return, gast.Expr)) and stmt.value is not None:
        root = stmt.value
    else:
        return None
    path = []  # (parent, field, index) from the statement down

    def visit(node):
        """The construction found under ``node``; None where none; False where
        something else runs first."""
        if isinstance(node, gast.Call) and _receiver(path) and _made(node, parsed, local):
            return node
        if isinstance(node, (gast.Name, gast.Constant)) or \
                _module_attribute(node, parsed, local):
            return None
        if not isinstance(node, _IN_ORDER):
            return False
        for field in node._fields:
            value = getattr(node, field)
            items = list(enumerate(value)) if isinstance(value, list) else [(None, value)]
            for index, child in items:
                if not isinstance(child, gast.AST) or isinstance(
                        child, (gast.expr_context, gast.operator, gast.unaryop)):
                    continue
                path.append((node, field, index))
                found = visit(child)
                if found is not None:
                    return found
                path.pop()
        return None if isinstance(node, _INERT) else False  # (a call, an operator runs)

    path.append((stmt, "value", None))
    found = visit(root)
    if not found:
        return None
    return found, resolve_dotted(found.func, parsed.resolve, local)


class _Swap(gast.NodeTransformer):
    """The node ``old`` replaced by ``new``."""

    def __init__(self, old, new):
        self.old, self.new = old, new

    def visit(self, node):
        return self.new if node is self.old else super().visit(node)


def _receiver(path):
    """Is the node at the end of ``path`` the value of an attribute read?"""
    parent, field, _ = path[-1]
    return isinstance(parent, gast.Attribute) and field == "value"


def _made(call, parsed, local):
    """Is ``call`` a construction ``Cls(...)`` of a class desugar writes as names?"""
    if any(isinstance(a, gast.Starred) for a in call.args) or \
            any(k.arg is None for k in call.keywords):
        return False
    cls = resolve_dotted(call.func, parsed.resolve, local)
    return replaceable_class(cls) or records.record_class(cls)


def _module_attribute(node, parsed, local):
    """``np.sum``, ``np.linalg.norm``: an attribute of a module (read, nothing runs)."""
    if not isinstance(node, gast.Attribute):
        return False
    root = node
    while isinstance(root, gast.Attribute):
        root = root.value
    if not isinstance(root, gast.Name):
        return False
    return root.id not in local and isinstance(parsed.resolve(root.id), types.ModuleType)
