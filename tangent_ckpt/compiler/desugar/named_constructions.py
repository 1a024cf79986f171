"""Desugar: an object made and used at once, bound to a name first.

``return Model(W).loss(x)`` or ``np.sum(_Both(x).total)``: the object is made,
read once and dropped.  Bound to a name of its own just before the statement::

    return TwoLayerNet(W1, b1).loss(X)    ->    twolayernet = TwoLayerNet(W1, b1)
                                                return twolayernet.loss(X)

it is an object ``name = Cls(...)`` like any other, which ``inline_functions.py``
(run after this pass) inlines and ``scalar_objects.py`` writes as one name per
attribute.

Where something runs before it in its statement (``reg * np.sum(W ** 2) +
Model(W).loss(x)``), each whole operand Python evaluates before it is bound to
a name first, in Python's order (``operand = reg * np.sum(W ** 2)``), then the
object.

That is the same program exactly when the construction, the receiver of an
attribute (``Cls(...).attr``), is a class desugar makes objects of, in an
assignment to names or subscripts, a ``return`` or an expression statement,
reached through operators, items, subscripts and the arguments of calls whose
function is a name or a module's attribute (``np.sum``): what Python evaluates
before it there is names, constants and modules' attributes, read as before,
and whole operands, items and positional arguments (none a ``lambda``, a
comprehension, a ``*`` spread or a ``:=``), each evaluated once, in order,
before it; and it sits in no branch of the statement (``and``, ``or``, ``if ...
else``, a comparison, a comprehension or lambda).  Any other construction stays
where it is.
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


#: what an operand evaluated before the construction may not hold to be bound to a
#: name of its own first (a function or a generator made there, a binding)
_NOT_HOISTED = (gast.Lambda, gast.GeneratorExp, gast.ListComp, gast.SetComp, gast.DictComp,
                gast.NamedExpr, gast.Yield, gast.YieldFrom, gast.Await, gast.Starred)


def name_constructions(parsed):
    """Bind each such construction of ``parsed.node`` to a fresh name, in place
    (and each operand Python evaluates before it, to a name before that)."""
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
            call, cls, before = found
            binds = []
            for operand in before:  # reg * np.sum(W ** 2) + Model(W).loss(x)
                held = fresh_name("operand", taken)
                binds.append(located(gast.Assign(targets=[store_node(held)], value=None,
                                                 type_comment=None), stmt))
                binds[-1].value = operand  # (the operand keeps its own places)
                _Swap(operand, gast.copy_location(name_node(held), operand)).visit(stmt)
            name = fresh_name(cls.__name__.lower(), taken)
            bind = located(gast.Assign(targets=[store_node(name)], value=None,
                                       type_comment=None), stmt)
            bind.value = call  # (the construction keeps its own place)
            _Swap(call, gast.copy_location(name_node(name), call)).visit(stmt)
            block[k:k] = binds + [bind]
            k += len(binds) + 1  # (the statement again: another construction may come next)


def _first_construction(stmt, parsed, local):
    """``(call, cls, before)`` of the construction ``stmt`` runs first, where it
    is the receiver of an attribute, with the operands that run before it (in
    the order Python evaluates them:
    each a whole operand of an operator, an item or an argument of a call whose
    function is a name or a module's attribute); else None."""
    if isinstance(stmt, gast.Assign):
        root = stmt.value
    elif isinstance(stmt, (gast.Return, gast.Expr)) and stmt.value is not None:
        root = stmt.value
    else:
        return None
    path = []  # (parent, field, index) from the statement down
    before = []

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
        ran = []  # the operands before, in which something runs
        for field in node._fields:
            value = getattr(node, field)
            items = list(enumerate(value)) if isinstance(value, list) else [(None, value)]
            for index, child in items:
                if not isinstance(child, gast.AST) or isinstance(
                        child, (gast.expr_context, gast.operator, gast.unaryop)):
                    continue
                path.append((node, field, index))
                found = visit(child)
                path.pop()
                if found is False:
                    if isinstance(node, gast.Attribute) or \
                            isinstance(node, gast.Call) and field == "func" or \
                            isinstance(child, gast.keyword) or \
                            any(isinstance(n, _NOT_HOISTED) for n in gast.walk(child)):
                        return False  # (obj.method(...), a lambda: not a value to name)
                    ran.append(child)
                elif found is not None:
                    before[:0] = ran  # (an outer operand runs before an inner one)
                    return found
        return None if isinstance(node, _INERT) and not ran else False

    path.append((stmt, "value", None))
    found = visit(root)
    if not found:
        return None
    return found, resolve_dotted(found.func, parsed.resolve, local), before


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
