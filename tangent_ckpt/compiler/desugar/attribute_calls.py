"""Desugar: ``getattr(obj, "name")`` and the statement ``setattr(obj, "name", v)``,
with a constant name (or a local bound once, by an earlier statement of the body,
to one: ``key = "h"; getattr(obj, key)``), as the attribute read ``obj.name`` and
the store ``obj.name = v`` they are.

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
    if not builtin:
        return
    once = _named_constants(fnode)
    rewrite = _Attributes(builtin)
    for k, s in enumerate(fnode.body):
        # a name bound to its constant by an earlier statement of the body
        rewrite.names = {n: value for n, (at, value) in once.items() if at < k}
        fnode.body[k] = rewrite.visit(s)


def _named_constants(fnode):
    """{name: (position, text)} for each local bound once in the function, by the
    statement ``name = "text"`` of its body at ``position`` (a plain identifier),
    and never bound or deleted anywhere else (nested functions included): the
    name means that text in every statement after it, as the constant itself."""
    found = {}
    for k, s in enumerate(fnode.body):
        if isinstance(s, gast.Assign) and len(s.targets) == 1 and \
                isinstance(s.targets[0], gast.Name) and _constant_name(s.value) is not None:
            found.setdefault(s.targets[0].id, []).append((k, s.value.value))
    if not found:
        return {}
    stores = {}
    for n in gast.walk(fnode):
        if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del)) or \
                isinstance(n, gast.Name) and isinstance(n.ctx, gast.Param):
            stores[n.id] = stores.get(n.id, 0) + 1
        elif isinstance(n, (gast.Global, gast.Nonlocal)):
            for name in n.names:
                stores[name] = stores.get(name, 0) + 2
    return {name: bound[0] for name, bound in found.items()
            if len(bound) == 1 and stores.get(name) == 1}


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
        self.names = {}  # a local bound once to a constant before: name -> its text

    def _attribute(self, node):
        """The attribute name the argument ``node`` spells (a constant, or a name
        bound once to one), or None."""
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
            return self.names.get(node.id)
        return _constant_name(node)

    def _call(self, node, name, count):
        return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and \
            node.func.id == name and name in self.builtin and len(node.args) == count \
            and not node.keywords and \
            not any(isinstance(a, gast.Starred) for a in node.args) and \
            self._attribute(node.args[1]) is not None

    def visit_Call(self, node):
        self.generic_visit(node)
        if self._call(node, "getattr", 2):
            attr = gast.Attribute(value=node.args[0], attr=self._attribute(node.args[1]),
                                  ctx=gast.Load())
            return gast.copy_location(attr, node)
        return node

    def visit_Expr(self, node):
        self.generic_visit(node)
        call = node.value
        if self._call(call, "setattr", 3) and _dotted(call.args[0]):
            target = gast.Attribute(value=call.args[0], attr=self._attribute(call.args[1]),
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
