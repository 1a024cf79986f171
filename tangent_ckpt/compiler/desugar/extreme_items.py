"""Desugar: ``max(xs)``, ``min(xs)`` and ``ys = sorted(xs)`` of a list or tuple
whose items are known when compiling (``known_items.py``: a display, a name
bound to one and grown by appends, a list the call gives), written with its
items::

    m = max(xs)                ->  m = max(max(xs[0], xs[1]), xs[2])
    ys = sorted(xs, reverse=r) ->  ys_order = sorted_order(xs, reverse=r)
                                   ys = [item_at(ys_order, 0, xs[0], xs[1], xs[2]),
                                         item_at(ys_order, 1, xs[0], xs[1], xs[2]), ...]

``max(max(a, b), c)`` keeps the first largest, as Python's ``max`` of an
iterable does (``extreme_arguments.py`` writes a display's items so).  The
order is Python's own sort of the items (``rt.sorted_order``: ties and NaN where
``sorted`` leaves them), found when the code runs, without a derivative; item
``k`` of the new list is the item at position ``k`` (``rt.item_at``, whose
adjoint goes to that item).  A display given to ``sorted`` is bound to the
target first (``ys = [a, b, c]``), so that its items are evaluated once; one
of constants is left as written (no derivative to follow).

Only where the names mean the builtins, with no ``key=`` or ``default=``, with
items that are no lists or tuples, ``sorted`` the whole value of an assignment
to a name, and nothing else in the statement (or in a ``while`` loop whose test
it is) that may change the list.  ``max()`` of an empty list or tuple is
Python's ValueError, refused when compiling.  Anything else is left as written,
for the lowering (``max(abs(u))`` of an array: ``lower/builtin_extremes.py``).
"""

import copy

import gast

from tangent_ckpt.compiler.desugar.known_items import KnownItems
from tangent_ckpt.compiler.desugar.local_bindings import COMPREHENSIONS, SCOPES, builtins_meant
from tangent_ckpt.compiler.desugar.view_shape import (
    DenotedObject, fresh_name, located, name_node, names_taken, statement_blocks, store_node,
)
from tangent_ckpt.errors import UnsupportedFunctionError
from tangent_ckpt.runtime.primitive_adjoints.extreme_positions import item_at, sorted_order

_BUILTINS = ("max", "min", "sorted")
# the fields of a compound statement evaluated where it stands (its blocks are
# statements of their own)
_HEADERS = {gast.If: ("test",), gast.While: ("test",), gast.For: ("iter",),
            gast.With: ("items",)}


def write_extreme_items(parsed, structures=None):
    """Rewrite each such call of ``parsed.node`` (its nested functions' too), in
    place.  ``structures``: {parameter: structure} of the containers the call
    gives (:func:`~.passes.given_containers`)."""
    fnode = parsed.node
    if not any(_one_iterable(n, _BUILTINS) for n in gast.walk(fnode)):
        return
    meant = builtins_meant(_BUILTINS, fnode, parsed.resolve)
    reads = {id(n.args[0]) for n in gast.walk(fnode) if _one_iterable(n, meant)}
    if reads:
        _Items(parsed, meant, KnownItems(parsed, structures, reads)).block(fnode.body)


def _one_iterable(node, names):
    """``max(xs)``, ``sorted(xs, ...)``: a call of one of ``names`` with one
    positional argument and no ``*`` / ``**``."""
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and \
        node.func.id in names and len(node.args) == 1 and \
        not isinstance(node.args[0], gast.Starred) and all(k.arg for k in node.keywords)


def _reverse(call):
    """The keywords of ``sorted(xs, reverse=True)`` (a constant), or None for
    any other keyword."""
    reverse = []
    for k in call.keywords:
        if k.arg != "reverse" or not (isinstance(k.value, gast.Constant) and
                                      isinstance(k.value.value, bool)):
            return None
        reverse = [gast.keyword(arg="reverse", value=gast.Constant(value=k.value.value,
                                                                  kind=None))]
    return reverse


class _Items:
    def __init__(self, parsed, meant, known):
        self.parsed, self.meant, self.known = parsed, meant, known
        self.taken = names_taken(parsed.node) | set(parsed.globals) | set(parsed.closure)
        self.names = {}  # runtime function -> the name denoting it here

    def block(self, stmts, outer=()):
        k = 0
        while k < len(stmts):
            s = stmts[k]
            around = outer + ((stmts[:k], s),)
            hoisted = self.hoisted_sorts(s, around)
            if hoisted:  # looked at first: ys = sorted(xs) each
                stmts[k:k] = hoisted
                continue
            written = self.sorted_items(s, around)
            if written is not None:
                stmts[k:k + 1] = written
                k += len(written)
                continue
            if type(s) in _HEADERS:  # a while loop's test: after each trip of its body too
                for field in _HEADERS[type(s)]:
                    self.extremes(getattr(s, field), s if isinstance(s, gast.While)
                                  else getattr(s, field), around)
            elif not statement_blocks(s, into_defs=True):
                self.extremes(s, s, around)
            for body in statement_blocks(s, into_defs=True):
                self.block(body, () if isinstance(s, SCOPES) else around)
            k += 1

    def extremes(self, node, s, around):
        """Write each ``max(xs)`` / ``min(xs)`` in ``node`` (a part of a statement
        evaluated where it stands; ``s``: what runs with it, which must not
        change ``xs``) as pairs of its items."""
        outer = self

        class Pairs(gast.NodeTransformer):
            def generic_visit(inner, n):  # noqa: N805
                if isinstance(n, SCOPES + COMPREHENSIONS):
                    return n  # (evaluated elsewhere, or with names of its own)
                return super().generic_visit(n)

            def visit_Call(inner, n):  # noqa: N805
                inner.generic_visit(n)
                if not (_one_iterable(n, {"max", "min"} & outer.meant) and not n.keywords):
                    return n
                pairs = outer.pairs(n, s, around)
                return n if pairs is None else pairs

        if isinstance(node, list):
            node[:] = [Pairs().visit(n) for n in node]
        else:
            Pairs().visit(node)

    def pairs(self, call, s, around):
        arg = call.args[0]
        if isinstance(arg, gast.Name) and self.known.changes(s, arg):
            return None
        items = self.known.items(arg, around)
        if items is None:
            return None
        if not items:
            raise self.parsed.located(
                UnsupportedFunctionError, f"{call.func.id}() of an empty list or tuple "
                "(Python raises ValueError)", call, construct=f"{call.func.id}()",
                hint=f"give {call.func.id}() at least one value")
        if not self.known.flat(arg, around):
            return None
        result = items[0]
        for item in items[1:]:
            result = gast.copy_location(gast.Call(func=name_node(call.func.id),
                                                  args=[result, item], keywords=[]), call)
        return located(result, call)

    def hoisted_sorts(self, s, around):
        """``return sorted(xs)[0]``: each ``sorted`` of a name (a display stays:
        its items are evaluated in their place) that ``s`` evaluates where it
        stands, unconditionally, and in no ``while`` test, replaced by a new name
        bound to it just before (``xs_sorted = sorted(xs)``: it only reads ``xs``,
        which nothing in ``s`` changes); the new bindings."""
        if isinstance(s, gast.Assign) and len(s.targets) == 1 and \
                isinstance(s.targets[0], gast.Name) and \
                _one_iterable(s.value, {"sorted"} & self.meant):
            return []  # (the form sorted_items writes)
        fields = [f for f in _HEADERS[type(s)] if type(s) is not gast.While] \
            if type(s) in _HEADERS else [] if statement_blocks(s, into_defs=True) else \
            ["value"] if isinstance(s, gast.Assign) else None  # None: all of it
        parts = [s] if fields is None else [getattr(s, f) for f in fields]
        hoisted = []
        outer = self

        class Hoist(gast.NodeTransformer):
            def generic_visit(inner, n):  # noqa: N805
                if isinstance(n, SCOPES + COMPREHENSIONS + (gast.IfExp, gast.BoolOp)):
                    return n  # (evaluated elsewhere, or maybe not at all)
                return super().generic_visit(n)

            def visit_Call(inner, n):  # noqa: N805
                inner.generic_visit(n)
                if not (_one_iterable(n, {"sorted"} & outer.meant) and
                        isinstance(n.args[0], gast.Name) and
                        _reverse(n) is not None and outer.sortable(n.args[0], around) and
                        not any(outer.known.changes(p, n.args[0]) for p in parts)):
                    return n
                name = fresh_name(f"{n.args[0].id}_sorted", outer.taken)
                hoisted.append(located(gast.Assign(targets=[store_node(name)], value=n,
                                                   type_comment=None), s))
                return gast.copy_location(name_node(name), n)

        if fields is None:
            Hoist().visit(s)
        elif isinstance(s, gast.Assign):
            s.value = Hoist().visit(s.value)
        elif isinstance(s, (gast.If, gast.For)) and fields:
            if isinstance(s, gast.If):
                s.test = Hoist().visit(s.test)
            else:
                s.iter = Hoist().visit(s.iter)
        elif isinstance(s, gast.With):
            s.items = [Hoist().visit(item) for item in s.items]
        return hoisted

    def sorted_items(self, s, around):
        """The statements writing ``ys = sorted(xs)`` (see the module), or None."""
        if not (isinstance(s, gast.Assign) and len(s.targets) == 1 and
                isinstance(s.targets[0], gast.Name) and
                _one_iterable(s.value, {"sorted"} & self.meant)):
            return None
        target, arg, reverse = s.targets[0].id, s.value.args[0], _reverse(s.value)
        if reverse is None or not self.sortable(arg, around):  # (nothing else runs in s)
            return None
        items = self.known.items(arg, around)
        out = []
        if not isinstance(arg, gast.Name):  # ys = [a, b, c] first: each evaluated once
            out.append(gast.Assign(targets=[store_node(target)],
                                   value=gast.List(elts=items, ctx=gast.Load()),
                                   type_comment=None))
            arg = name_node(target)
            items = [gast.Subscript(value=name_node(target), slice=gast.Constant(
                value=k, kind=None), ctx=gast.Load()) for k in range(len(items))]
        order = fresh_name(f"{target}_order", self.taken)
        out.append(gast.Assign(targets=[store_node(order)], value=gast.Call(
            func=name_node(self.name_of(sorted_order)), args=[arg], keywords=reverse),
            type_comment=None))
        picks = [gast.Call(func=name_node(self.name_of(item_at)),
                           args=[name_node(order), gast.Constant(value=k, kind=None),
                                 *[copy.deepcopy(i) for i in items]], keywords=[])
                 for k in range(len(items))]
        out.append(gast.Assign(targets=[store_node(target)],
                               value=gast.List(elts=picks, ctx=gast.Load()), type_comment=None))
        return [located(st, s) for st in out]

    def sortable(self, arg, around):
        """Are the items of ``arg`` known, no lists or tuples, and not all
        constants (``sorted((2.0, 1.0))`` is left as written: nothing to follow)?"""
        items = self.known.items(arg, around)
        return bool(items) and self.known.flat(arg, around) and \
            not all(isinstance(i, gast.Constant) for i in items) and \
            not (isinstance(arg, gast.Name) and self.known.constants(arg, around))

    def name_of(self, fn):
        """A name denoting the runtime function ``fn`` in this function
        (``ParsedFunction.inlined_names``)."""
        if fn not in self.names:
            name = fresh_name(fn.__name__, self.taken)
            self.parsed.inlined_names[name] = (DenotedObject(fn), name)
            self.names[fn] = name
        return self.names[fn]

