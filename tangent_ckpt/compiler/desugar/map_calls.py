"""Desugar: ``map(f, xs)`` as the comprehension, loop or generator expression it is.

``map`` is lazy: it evaluates ``f`` and ``xs`` where it is called, and calls
``f`` on each item only when asked for the next one.  Where the map is consumed
whole right away, the calls happen in the same order, before anything else
runs, as in a list comprehension; in a ``for`` loop each call is made just
before its trip::

    a, b = map(np.sin, (x, y))        ->   a, b = [np.sin(item) for item in (x, y)]
    list(map(f, xs, ys))              ->   [f(item, item_2) for item, item_2 in zip(xs, ys)]
    tuple(map(f, xs)), sum(map(f, xs))->   tuple([f(item) for item in xs]), sum([...])
    for h in map(f, xs):              ->   for item in xs:
        body                                   h = f(item)
                                               body

(``zip`` stops at the shortest sequence, as ``map`` does.)  ``f`` is a name,
a dotted name of a module (``np.tanh``), or, in a comprehension, a ``lambda``
of plain parameters, one per sequence, whose body becomes the item's value
(``map(lambda v: v * 2.0, xs)`` is ``[v * 2.0 for v in xs]``).  In a ``for``
loop ``f`` is read at each trip, so it must be a name nothing rebinds (a
parameter the function never assigns, a name of its module).

Consumed at once means: the unpacked value of an assignment (``a, b = map(...)``),
or the only argument of ``list``, ``tuple`` or ``sum`` (``sum``'s start too, a
constant or a name).  A map bound to a name, handed on, or read by anything
else is the generator expression it is, ``m = (f(item) for item in xs)``
(``comprehension_loops.py`` writes it as the loop before the statement that
reads it), where ``f`` is a lambda or a name that holds one function wherever
the generator may call it: one nothing rebinds, or one bound once, at the top
of the function (``def sq(v)``; ``m, n = map(f, xs), map(g, ys)`` first as one
binding per map).  An object's method (``map(d.apply, xs)``, the map an
assignment's whole value) is read where the map is made, into a name of its
own (``fn = d.apply``).  What is left (a map of a ``def`` made in a loop, of a
computed function) the lowering refuses.
"""

import builtins

import gast

from tangent_ckpt.compiler.desugar.view_facts import read_names_denote, resolve_dotted
from tangent_ckpt.compiler.desugar.view_shape import (
    fresh_name, name_node, names_taken, statement_lists, store_node,
)

#: the builtins that consume a map whole at once
_CONSUMERS = (list, tuple, sum)


def write_map_calls(fnode, resolve):
    """Rewrite, in ``fnode`` (in place), every map consumed at once.  ``resolve``:
    a name of the function's module -> its object.  Returns whether any was."""
    if not read_names_denote(fnode, resolve, (builtins.map,)):
        return False
    rewritten = []
    bindings = _bindings(fnode)
    local = set(bindings)
    taken = None

    def is_map(node):  # (of several sequences only where zip is the builtin)
        return isinstance(node, gast.Call) and len(node.args) >= 2 and not node.keywords \
            and not any(isinstance(a, gast.Starred) for a in node.args) and \
            resolve_dotted(node.func, resolve, local) is builtins.map and \
            (len(node.args) == 2 or "zip" not in local and resolve("zip") is builtins.zip)

    for block in statement_lists(fnode):
        hoisted = [(k, _function_first(stmt, block is fnode.body, is_map, resolve, local, fnode))
                   for k, stmt in enumerate(block)]
        for k, bind in reversed(hoisted):
            if bind is not None:
                block.insert(k, bind)
                rewritten.append(bind)
    if rewritten:
        bindings = _bindings(fnode)
        local = set(bindings)
    consumed = _Consumed(resolve, local, is_map, fnode)
    consumed.visit(fnode)
    rewritten.extend(consumed.rewritten)
    taken = consumed.taken
    for node in list(gast.walk(fnode)):
        if isinstance(node, gast.Assign) and isinstance(node.targets[-1], (gast.Tuple, gast.List)) \
                and is_map(node.value):
            taken = taken if taken is not None else names_taken(fnode)
            comprehension = _comprehension(node.value, taken, resolve, local)
            if comprehension is not None:
                node.value = comprehension
                rewritten.append(node)
    for block in statement_lists(fnode):
        for s in block:
            if isinstance(s, gast.For) and is_map(s.iter) and \
                    _unchanging(s.iter.args[0], bindings, fnode, resolve, local):
                taken = taken if taken is not None else names_taken(fnode)
                _loop(s, taken)
                rewritten.append(s)
    kept = _Kept(resolve, local, is_map, fnode, bindings)
    kept.visit(fnode)
    rewritten.extend(kept.rewritten)
    return bool(rewritten)


def _function_first(stmt, top, is_map, resolve, local, fnode):
    """``m = map(obj.f, xs)``, ``a, b = map(obj.f, xs)``, ``ys = list(map(obj.f, xs))``:
    the map's function, which Python evaluates first in the statement (an
    attribute of no module), bound to a name of its own before it (``fn =
    obj.f``: ``function_names.py`` calls it as the method), the map then of that
    name; None where the map is not the statement's whole value (or its
    consumer's only argument), or is bound to a name in a loop or branch (the
    generator reads ``fn`` when called)."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1):
        return None
    call, kept = stmt.value, isinstance(stmt.targets[0], gast.Name)
    if isinstance(call, gast.Call) and len(call.args) == 1 and not call.keywords and \
            resolve_dotted(call.func, resolve, local) in _CONSUMERS:
        call, kept = call.args[0], False
    if not is_map(call) or kept and not top:
        return None
    f = call.args[0]
    if not isinstance(f, gast.Attribute) or resolve_dotted(f, resolve, local) is not None:
        return None
    name = fresh_name("fn", names_taken(fnode))
    bind = gast.Assign(targets=[store_node(name)], value=f, type_comment=None)
    call.args[0] = gast.copy_location(name_node(name), f)
    for n in gast.walk(bind):
        gast.copy_location(n, stmt)
    return bind


class _Consumed(gast.NodeTransformer):
    """``list(map(...))``, ``tuple(map(...))``, ``sum(map(...))`` as
    ``[...]``, ``tuple([...])``, ``sum([...])``."""

    def __init__(self, resolve, local, is_map, fnode):
        self.resolve, self.local, self.is_map, self.fnode = resolve, local, is_map, fnode
        self.taken, self.rewritten = None, []

    def visit_Call(self, node):
        self.generic_visit(node)
        consumer = resolve_dotted(node.func, self.resolve, self.local)
        if consumer not in _CONSUMERS or node.keywords or not node.args or \
                not self.is_map(node.args[0]) or \
                len(node.args) > (2 if consumer is sum else 1) or \
                not all(_plain(a) for a in node.args[1:]):
            return node
        if self.taken is None:
            self.taken = names_taken(self.fnode)
        comprehension = _comprehension(node.args[0], self.taken, self.resolve, self.local)
        if comprehension is None:
            return node
        self.rewritten.append(node)
        if consumer is list:  # list([...]) is the list the comprehension makes
            return comprehension
        node.args[0] = comprehension
        return node


class _Kept(gast.NodeTransformer):
    """Every other ``map(f, xs)`` (bound to a name, handed on, a map's sequence)
    as the generator expression it is, ``(f(item) for item in xs)``: both
    evaluate ``xs`` (its iterator) where they are made and call ``f`` on an item
    only when asked for the next one; ``f`` is read at each item, so it must be a
    name nothing rebinds (or a dotted name of a module), or a plain lambda, whose
    body is the item's value (it reads its free names when called in both)."""

    def __init__(self, resolve, local, is_map, fnode, bindings):
        self.resolve, self.local, self.is_map, self.fnode = resolve, local, is_map, fnode
        self.bindings, self.taken, self.rewritten = bindings, None, []

    def visit_Assign(self, node):
        """``m, n = map(f, xs), map(g, ys)``: one binding per map (the names it
        binds read by neither, nor by a nested ``def`` or ``lambda`` one may
        call), each map then a generator bound to its name."""
        target = node.targets[0]
        if len(node.targets) == 1 and isinstance(target, gast.Tuple) and \
                isinstance(node.value, gast.Tuple) and \
                len(target.elts) == len(node.value.elts) and \
                all(isinstance(t, gast.Name) for t in target.elts) and \
                len({t.id for t in target.elts}) == len(target.elts) and \
                any(self.is_map(v) for v in node.value.elts) and \
                not any(isinstance(v, gast.Starred) for v in node.value.elts) and \
                not {t.id for t in target.elts} & (_read_names(node.value) |
                                                   self._read_in_nested_scopes()):
            split = [gast.copy_location(gast.Assign(targets=[t], value=v, type_comment=None),
                                        node) for t, v in zip(target.elts, node.value.elts)]
            return [self.visit(s) for s in split]
        self.generic_visit(node)
        return node

    def _read_in_nested_scopes(self):
        return {name for n in gast.walk(self.fnode)
                if isinstance(n, (gast.FunctionDef, gast.Lambda)) and n is not self.fnode
                for name in _read_names(n)}

    def visit_For(self, node):
        return self._interleaved(node)

    def visit_comprehension(self, node):
        return self._interleaved(node)

    def _interleaved(self, node):
        """A map that is a loop's (or a comprehension's) iterable stays one: each
        item is computed at its trip, which the generator would not keep once
        ``comprehension_loops.py`` writes it out before the loop (``_loop`` writes
        the loops it can; the lowering refuses the others, as before)."""
        iterable = node.iter
        if not self.is_map(iterable):
            self.generic_visit(node)
            return node
        node.iter = gast.Constant(value=None, kind=None)
        self.generic_visit(node)
        node.iter = iterable
        return node

    def visit_Call(self, node):
        self.generic_visit(node)  # map(f, map(g, xs)): the inner one first
        f = node.args[0] if self.is_map(node) else None
        if f is None or not isinstance(f, gast.Lambda) and \
                not _unchanging(f, self.bindings, self.fnode, self.resolve, self.local) and \
                not _bound_once_at_the_top(f, self.bindings, self.fnode):
            return node
        if self.taken is None:
            self.taken = names_taken(self.fnode)
        comprehension = _comprehension(node, self.taken, self.resolve, self.local)
        if comprehension is None:
            return node
        self.rewritten.append(node)
        generator = gast.GeneratorExp(elt=comprehension.elt, generators=comprehension.generators)
        return gast.copy_location(generator, node)


def _read_names(node):
    return {n.id for n in gast.walk(node) if isinstance(n, gast.Name) and
            isinstance(n.ctx, gast.Load)}


def _plain(node):
    return isinstance(node, (gast.Constant, gast.Name))


def _bindings(fnode):
    """{name: how many times ``fnode``'s tree binds it}."""
    counts = {}
    for n in gast.walk(fnode):
        name = n.id if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load) else \
            n.name if isinstance(n, (gast.FunctionDef, gast.ClassDef)) and n is not fnode else \
            None
        if name is not None:
            counts[name] = counts.get(name, 0) + 1
        if isinstance(n, (gast.Global, gast.Nonlocal, gast.Import, gast.ImportFrom)):
            for name in getattr(n, "names", ()):
                name = name if isinstance(name, str) else (name.asname or name.name)
                counts[name.split(".")[0]] = counts.get(name.split(".")[0], 0) + 2
    return counts


def _unchanging(f, bindings, fnode, resolve, local):
    """Is ``f`` (a map's function) a name, or dotted name of a module, that
    nothing in ``fnode`` rebinds?"""
    root = f
    while isinstance(root, gast.Attribute):
        root = root.value
    if not isinstance(root, gast.Name):
        return False
    own = {a.id for a in fnode.args.posonlyargs + fnode.args.args + fnode.args.kwonlyargs}
    times = bindings.get(root.id, 0)
    if not (times == 0 or times == 1 and root.id in own):
        return False
    return isinstance(f, gast.Name) or resolve_dotted(f, resolve, local) is not None


def _bound_once_at_the_top(f, bindings, fnode):
    """Is ``f`` a name ``fnode`` binds once, by a statement of its body's top
    level (``def sq(v): ...``, ``act = make_act()``): where a map of it is made,
    it holds the one value it ever holds there."""
    if not isinstance(f, gast.Name) or bindings.get(f.id, 0) != 1:
        return False
    return any(isinstance(s, gast.FunctionDef) and s.name == f.id or
               isinstance(s, gast.Assign) and len(s.targets) == 1 and
               isinstance(s.targets[0], gast.Name) and s.targets[0].id == f.id
               for s in fnode.body)


def _sequences(call, items):
    """The iterable a comprehension or loop over ``call``'s sequences visits, and
    its target (``items``: one fresh name per sequence)."""
    sequences = call.args[1:]
    if len(sequences) == 1:
        return sequences[0], store_node(items[0])
    zipped = gast.Call(func=name_node("zip"), args=list(sequences), keywords=[])
    target = gast.Tuple(elts=[store_node(n) for n in items], ctx=gast.Store())
    return gast.copy_location(zipped, call), target


def _comprehension(call, taken, resolve, local):
    """``[f(item) for item in xs]`` for ``map(f, xs)``, or None where ``f`` is
    neither a name, a dotted name nor a plain lambda of one parameter per
    sequence."""
    f, count = call.args[0], len(call.args) - 1
    if any(isinstance(a, gast.Call) and resolve_dotted(a.func, resolve, local) is builtins.map
           for a in call.args[1:]):
        return None  # map(f, map(g, xs)): the inner map a generator first (_Kept)
    if isinstance(f, gast.Lambda):
        args = f.args
        if args.posonlyargs or args.vararg or args.kwonlyargs or args.kwarg or \
                args.defaults or len(args.args) != count or \
                any(isinstance(n, (gast.NamedExpr, gast.Yield, gast.YieldFrom, gast.Await))
                    for n in gast.walk(f.body)):
            return None
        items = [a.id for a in args.args]
        element = f.body
    else:
        root = f
        while isinstance(root, gast.Attribute):
            root = root.value
        if not isinstance(root, gast.Name) or \
                isinstance(f, gast.Attribute) and resolve_dotted(f, resolve, local) is None:
            return None
        own = set(taken)  # (a comprehension's variable is its own: item in each)
        items = [fresh_name("item", own) for _ in range(count)]
        element = gast.Call(func=f, args=[name_node(n) for n in items], keywords=[])
    iterable, target = _sequences(call, items)
    comprehension = gast.ListComp(elt=element, generators=[gast.comprehension(
        target=target, iter=iterable, ifs=[], is_async=0)])
    for n in gast.walk(comprehension):
        if not hasattr(n, "lineno") or n.lineno is None:
            gast.copy_location(n, call)
    return gast.copy_location(comprehension, call)


def _loop(s, taken):
    """``for t in map(f, xs): body`` as ``for item in xs: t = f(item); body``."""
    call = s.iter
    items = [fresh_name("item", taken) for _ in range(len(call.args) - 1)]
    iterable, target = _sequences(call, items)
    value = gast.Call(func=call.args[0], args=[name_node(n) for n in items], keywords=[])
    bind = gast.Assign(targets=[s.target], value=value, type_comment=None)
    for n in gast.walk(bind):
        gast.copy_location(n, s)
    for n in gast.walk(target):
        gast.copy_location(n, s)
    s.iter, s.target = iterable, target
    s.body.insert(0, bind)
