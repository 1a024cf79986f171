"""Desugar: ``getattr(obj, "name")`` and the statement ``setattr(obj, "name", v)``,
with a constant name, as the attribute read ``obj.name`` and the store
``obj.name = v`` they are.

Written as calls of a builtin, they hid the attribute from every pass that
follows attributes: ``getattr(CELLS[0], "h")`` after ``CELL.h = x * 3`` read the
object's old ``h`` (a wrong gradient), and ``setattr(CELL, "h", v)`` was refused
as a call made for its effect.  Only where the name surely means the builtin (no
local or global of that name), the name is a plain identifier that Python would
not mangle inside a class (no leading ``__``), ``getattr`` has no default, and
``setattr``'s object is a name or a dotted name (evaluating it has no effect, so
the store's order of evaluation is the call's)."""

import keyword

import gast

from tangent_ckpt.compiler.desugar.local_bindings import builtins_meant

_BUILTINS = ("getattr", "setattr")


def write_attribute_calls(parsed, fnode=None):
    """Rewrite, in ``fnode`` (default ``parsed.node``, whose names ``parsed``
    resolves), each such ``getattr``/``setattr`` as the attribute it reads or stores."""
    fnode = parsed.node if fnode is None else fnode
    calls = [n for n in gast.walk(fnode)
             if isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and
             n.func.id in _BUILTINS]
    if not calls:
        return
    builtin = builtins_meant(_BUILTINS, fnode, parsed.resolve)
    if builtin:
        _Attributes(builtin).visit(fnode)


def _constant_name(node):
    """The attribute name ``node`` spells, or None."""
    if isinstance(node, gast.Constant) and isinstance(node.value, str) and \
            node.value.isidentifier() and not keyword.iskeyword(node.value) and \
            not node.value.startswith("__"):
        return node.value
    return None


def _dotted(node):
    while isinstance(node, gast.Attribute):
        node = node.value
    return isinstance(node, gast.Name)


class _Attributes(gast.NodeTransformer):
    def __init__(self, builtin):
        self.builtin = builtin

    def _call(self, node, name, count):
        return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and \
            node.func.id == name and name in self.builtin and len(node.args) == count \
            and not node.keywords and \
            not any(isinstance(a, gast.Starred) for a in node.args) and \
            _constant_name(node.args[1]) is not None

    def visit_Call(self, node):
        self.generic_visit(node)
        if self._call(node, "getattr", 2):
            attr = gast.Attribute(value=node.args[0], attr=_constant_name(node.args[1]),
                                  ctx=gast.Load())
            return gast.copy_location(attr, node)
        return node

    def visit_Expr(self, node):
        self.generic_visit(node)
        call = node.value
        if self._call(call, "setattr", 3) and _dotted(call.args[0]):
            target = gast.Attribute(value=call.args[0], attr=_constant_name(call.args[1]),
                                    ctx=gast.Store())
            _store_context(target.value)
            gast.copy_location(target, call)
            return gast.copy_location(
                gast.Assign(targets=[target], value=call.args[2], type_comment=None), node)
        return node


def _store_context(node):
    """The object part of a store target reads its names (``a.b`` in ``a.b.c = v``)."""
    for n in gast.walk(node):
        if hasattr(n, "ctx"):
            n.ctx = gast.Load()
