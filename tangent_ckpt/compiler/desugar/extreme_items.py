"""Desugar: Python's ``max(values)``, ``min(values)`` of one iterable, and ``ys =
sorted(xs)``.  Of a list or tuple whose items are known when compiling
(``known_items.py``: a display, a name bound to one and grown by appends, a list
the call gives), written with its items::

    m = max(xs)                ->  m = max(max(xs[0], xs[1]), xs[2])
    ys = sorted(xs, reverse=r) ->  ys_order = sorted_order(xs, reverse=r)
                                   ys = [item_at(ys_order, 0, xs[0], xs[1], xs[2]),
                                         item_at(ys_order, 1, xs[0], xs[1], xs[2]), ...]

``max(max(a, b), c)`` keeps the first largest, as Python's ``max`` of an
iterable does (``extreme_arguments.py`` writes a display's items so).  The
order is Python's own sort of the items (``rt.sorted_order``: ties and NaN where
``sorted`` leaves them), found when the code runs, without a derivative; item
``k`` of the new list is the item at position ``k`` (``rt.item_at``, whose
adjoint goes to that item).  A display given to ``sorted`` whose items are
not all names and constants is bound to the target first (``ys = [a * 2, b,
c]``), so that its items are evaluated once; one of constants is left as
written (no derivative to follow).

Only where the names mean the builtins, with items that are no lists or
tuples, ``sorted`` the whole value of an assignment to a name (or of a name,
inside an expression, bound to a new name just before), and nothing else in the
statement (or in a ``while`` loop whose test it is) that may change the list.

``max(u)`` of anything else (an array, a list built at run time) is the item
at the position Python's ``max`` returns (``rt.max_position``, found when the
code runs, without a derivative), ``u[max_position(u)]``, whose adjoint is an
index's; a value that is no name (``max(abs(u))``) is first bound to a name just
before its statement (``dt_abs = abs(u)``), where nothing the statement
evaluates changes anything and Python surely evaluates it (not in a branch of
``a if c else b``, an ``and``/``or``, a ``while`` test); elsewhere one that only
computes (no draw, no call of the user's) is computed twice, the same numbers
(``abs(u)[max_position(abs(u))]``).  Refused with the line:
``key=``, ``default=``, an empty list or tuple (Python's ValueError), a dict, a
list of lists; a ``max(e)`` left as written is the lowering's refusal.
"""

import copy

import gast

from tangent_ckpt.compiler.desugar.known_items import KnownItems
from tangent_ckpt.compiler.desugar.local_bindings import (
    COMPREHENSIONS, SCOPES, builtins_meant, local_names,
)
from tangent_ckpt.compiler.desugar.pure_values import only_computes
from tangent_ckpt.compiler.desugar.view_facts import resolve_dotted
from tangent_ckpt.compiler.desugar.view_shape import (
    DenotedObject, fresh_name, located, name_node, names_taken, statement_blocks, store_node,
)
from tangent_ckpt.errors import UnsupportedFunctionError
from tangent_ckpt.runtime.primitive_adjoints.extreme_positions import (
    item_at, max_position, min_position, sorted_order,
)

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


def _stem(node):
    """A word for the value ``node`` computes (``abs`` of ``abs(u)``, ``pow`` of
    ``u ** 2``), which the name bound to it carries."""
    if isinstance(node, gast.Call):
        func = node.func
        return func.attr if isinstance(func, gast.Attribute) else \
            func.id if isinstance(func, gast.Name) else "values"
    if isinstance(node, gast.BinOp):
        return {gast.Add: "add", gast.Sub: "sub", gast.Mult: "mul", gast.Div: "div",
                gast.Pow: "pow", gast.MatMult: "matmul"}.get(type(node.op), "values")
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        return "neg"
    return "values"


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
        local = local_names(parsed.node)
        self.static_value = lambda node: resolve_dotted(node, parsed.resolve, local)
        # names some statement binds to a dict (max of a dict: its keys)
        self.dicts = {t.id for n in gast.walk(parsed.node) if isinstance(n, gast.Assign) and
                      isinstance(n.value, (gast.Dict, gast.DictComp)) for t in n.targets
                      if isinstance(t, gast.Name)}

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
            before = []
            if type(s) in _HEADERS:  # a while loop's test: after each trip of its body too
                for field in _HEADERS[type(s)]:
                    before += self.extremes(getattr(s, field), s if isinstance(s, gast.While)
                                            else getattr(s, field), around,
                                            hoist=not isinstance(s, gast.While))
            elif not statement_blocks(s, into_defs=True):
                before = self.extremes(s, s, around, hoist=True)
            if before:
                stmts[k:k] = before
                k += len(before)
            for body in statement_blocks(s, into_defs=True):
                self.block(body, () if isinstance(s, SCOPES) else around)
            k += 1

    def extremes(self, node, s, around, hoist):
        """Write each ``max(xs)`` / ``min(xs)`` in ``node`` (a part of a statement
        evaluated where it stands; ``s``: what runs with it, which must not
        change ``xs``): pairs of its items where they are known, else the item at
        the position Python's ``max`` returns, ``u[max_position(u)]`` (an array,
        a list built at run time), a value that is no name bound first to one
        just before the statement where ``hoist`` and nothing the statement
        evaluates changes anything (``dt_abs = abs(u)``); the statements to put
        before ``s``."""
        outer, before = self, []

        class Pairs(gast.NodeTransformer):
            conditional = 0  # inside a part Python may not evaluate

            def generic_visit(inner, n):  # noqa: N805
                if isinstance(n, SCOPES + COMPREHENSIONS):
                    return n  # (evaluated elsewhere, or with names of its own)
                if isinstance(n, (gast.IfExp, gast.BoolOp)):
                    inner.conditional += 1
                    n = super().generic_visit(n)
                    inner.conditional -= 1
                    return n
                return super().generic_visit(n)

            def visit_Call(inner, n):  # noqa: N805
                inner.generic_visit(n)
                if not _one_iterable(n, {"max", "min"} & outer.meant):
                    return n
                if n.keywords:
                    raise outer.parsed.located(
                        UnsupportedFunctionError, f"{n.func.id}() with " + ", ".join(
                            k.arg + "=" for k in n.keywords), n, construct=f"{n.func.id}()",
                        hint=f"write the choice out: np.arg{n.func.id}(...) and an index")
                pairs = outer.pairs(n, s, around)
                if pairs is not None:
                    return pairs
                return outer.item_at_position(n, s, before, hoist and not inner.conditional)

        if isinstance(node, list):
            node[:] = [Pairs().visit(n) for n in node]
        else:
            Pairs().visit(node)
        return before

    def item_at_position(self, call, s, before, hoist):
        """``u[max_position(u)]`` for ``max(u)`` (``min_position``), ``u`` a name
        or bound to one first (``before``), else a value that only computes,
        computed twice; the call as it is where none of these (the lowering
        refuses it, naming the line)."""
        arg = call.args[0]
        if isinstance(arg, gast.Name):
            if arg.id in self.dicts:
                raise self.parsed.located(
                    UnsupportedFunctionError, f"{call.func.id}() of a dict (its keys)", call,
                    construct=f"{call.func.id}()", hint=f"pass the values as arguments "
                    f"({call.func.id}(a, b) of two numbers), or as an array: "
                    f"np.{call.func.id}(np.array([...]))")
            values = arg.id  # (read twice at one moment: u[max_position(u)])
        elif hoist and only_computes(s, self.static_value) and \
                not isinstance(arg, (gast.List, gast.Tuple, gast.Dict, gast.Set)):
            values = fresh_name(f"{self.hint(s)}_{_stem(arg)}", self.taken)
            before.append(located(gast.Assign(targets=[store_node(values)], value=arg,
                                              type_comment=None), s))
        elif only_computes(arg, self.static_value) and \
                not isinstance(arg, (gast.List, gast.Tuple, gast.Dict, gast.Set)):
            values = None  # computed twice, the same numbers: abs(x)[max_position(abs(x))]
        else:
            return call
        position = gast.Call(func=name_node(self.name_of(
            max_position if call.func.id == "max" else min_position)),
            args=[copy.deepcopy(arg) if values is None else name_node(values)], keywords=[])
        return located(gast.Subscript(value=arg if values is None else name_node(values),
                                      slice=position, ctx=gast.Load()), call)

    def hint(self, s):
        """The stem of a name the statement ``s`` binds for its operand."""
        target = s.targets[0] if isinstance(s, gast.Assign) and len(s.targets) == 1 else \
            s.target if isinstance(s, gast.AugAssign) else None
        return target.id if isinstance(target, gast.Name) else self.parsed.node.name

    def pairs(self, call, s, around):
        arg = call.args[0]
        if isinstance(arg, gast.Name) and self.known.changes(s, arg):
            return None
        items = self.known.items(arg, around)
        if items is None:
            return None
        name = call.func.id
        if not items:
            raise self.parsed.located(
                UnsupportedFunctionError, f"{name}() of an empty list or tuple "
                "(Python raises ValueError)", call, construct=f"{name}()",
                hint=f"give {name}() at least one value")
        if not self.known.flat(arg, around):
            raise self.parsed.located(
                UnsupportedFunctionError, f"{name}() of a list of lists or tuples", call,
                construct=f"{name}()", hint=f"pass the values as arguments ({name}(a, b) "
                f"of two numbers), or as an array: np.{name}(np.array([...]))")
        result = items[0]
        for item in items[1:]:
            result = gast.copy_location(gast.Call(func=name_node(name),
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
        if not isinstance(arg, gast.Name) and \
                not all(isinstance(i, (gast.Name, gast.Constant)) for i in items):
            # ys = [a * 2, b, c] first: each item evaluated once (a display of names
            # and constants is read as it is: nothing else runs in the statement)
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
