"""Desugar: the method a call on an object the function makes surely runs.

``opt.update(params, grads)`` with ``opt = Adam(lr)`` bound once in the
function runs ``Adam.update``: the view lowering then treats the call like a
helper's (its writes into ``params`` are written back), with the object as
``self``.  Only where nothing can put another callable in the object's place:
the name is bound only by the constructor, used only as ``opt.attr`` (never
handed on, stored or returned), and neither the class's methods nor the
function store an attribute of that name (``self.update = f`` would hide the
method); a class that makes its own attribute lookup is not followed.
"""

import dis
import functools
import types

import gast

from tangent_ckpt.compiler.desugar.method_writes import constructed_classes, method_of


class MethodCalls:
    """The methods the calls of one function's constructed objects run."""

    def __init__(self, fnode, resolve, local):
        self.objects = constructed_classes(fnode, resolve, local)
        handed_on, stored = set(), set()
        receivers = set()
        for node in gast.walk(fnode):
            if isinstance(node, gast.Attribute) and isinstance(node.value, gast.Name):
                receivers.add(id(node.value))
                if not isinstance(node.ctx, gast.Load):
                    stored.add(node.attr)  # opt.update = f
        for node in gast.walk(fnode):
            if isinstance(node, gast.Name) and node.id in self.objects and \
                    isinstance(node.ctx, gast.Load) and id(node) not in receivers:
                handed_on.add(node.id)
        self.objects = {name: classes for name, classes in self.objects.items()
                        if name not in handed_on}
        self.stored = stored

    def method(self, func):
        """The function ``func`` (a call's ``func``) surely runs, or None."""
        if not (isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name)):
            return None
        classes = self.objects.get(func.value.id)
        if not classes or len(classes) != 1 or func.attr in self.stored:
            return None
        cls = next(iter(classes))
        stored = _stored_attributes(cls)
        if _own_lookup(cls) or func.attr in stored or _EVERY in stored:
            return None
        fns = method_of(classes, func.attr)
        return fns[0] if fns else None


def _own_lookup(cls):
    return any(name in vars(klass) for klass in cls.__mro__ if klass is not object
               for name in ("__getattribute__", "__getattr__", "__setattr__", "__slots__"))


@functools.lru_cache(maxsize=256)  # read once per class (its methods' bytecode)
def _stored_attributes(cls):
    """The attribute names any function of ``cls`` stores (``self.x = ...``);
    ``_EVERY`` among them where one stores by a computed name (``setattr``)."""
    names = set()
    for klass in cls.__mro__:
        if klass is object:
            continue
        for raw in vars(klass).values():
            if isinstance(raw, (staticmethod, classmethod)):
                raw = raw.__func__
            parts = (raw.fget, raw.fset, raw.fdel) if isinstance(raw, property) else (raw,)
            for fn in parts:
                if isinstance(fn, types.FunctionType):
                    names |= _stores(fn.__code__)
    return frozenset(names)


def _stores(code):
    names = set()
    for ins in dis.get_instructions(code):
        if ins.opname in ("STORE_ATTR", "DELETE_ATTR"):
            names.add(ins.argval)
        elif ins.opname.startswith("LOAD") and ins.argval in ("setattr", "__dict__", "vars"):
            names.add(_EVERY)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _stores(const)
    return frozenset(names)


_EVERY = object()  # the code stores attributes by a computed name: any of them
