"""Desugar: the lists a function makes and holds under one name, and what may
become their items.

A list is *held* by the name ``ws`` when ``ws`` is a local (not a parameter,
global, nonlocal, or a name a nested function or lambda reads), every binding
of which makes a list (a display, a list comprehension, ``list(...)``, a slice
of itself, a sum of those; or the display at its place in ``ws, gs = [], []``),
and every read of which looks at the list without
keeping it: an item or slice read or store, one of a list's methods, an
iteration, a test, ``len`` and other builtins or NumPy functions that read it,
a concatenation.  No other name, container or closure then holds that list, so

- ``list_methods.py`` may rebind ``ws`` to the list a method leaves
  (``ws.pop(0)`` as ``ws = ws[1:]``), and
- the values that may ever be its items are the ones written where it is made,
  appended, inserted, extended by a display or stored at an index
  (:func:`held_lists`): the view facts read a loop variable ``for w in ws`` as
  one of them (``view_facts.ItemOf``), so ``2 * w`` of a list of arrays is
  NumPy arithmetic, not a list repeated.
"""

import gast

from tangent_ckpt.compiler.desugar.local_bindings import (builtins_meant, local_names,
                                                          parameter_names)
from tangent_ckpt.compiler.desugar.view_facts import numpy_function

# methods of a list that read it or change it where it is
LIST_METHODS = frozenset(("append", "extend", "pop", "insert", "reverse", "clear", "index",
                          "count", "copy", "remove", "sort"))
# builtins that read a list given to them at once and keep no reference to it
READING_BUILTINS = ("len", "sum", "max", "min", "list", "tuple", "sorted", "any", "all",
                    "print")
# builtins whose iterator keeps the list and reads it as it is consumed: a read only
# where it is consumed at once (the iterable of a loop, given to a builtin above)
ITERATING_BUILTINS = ("enumerate", "zip", "reversed", "map")


def held_lists(fnode, resolve, kept=None):
    """{name: the values that may become its items (None: one not known)} of
    the lists ``fnode`` makes and holds under one name.  ``kept(read)``, where
    given, says a read that keeps the list (``other = ws``, ``return ws``) is one
    the caller may let by (``concatenated_lists.py``: after the list stops
    growing); its items are then not known (None)."""
    candidates = {t.id for s in gast.walk(fnode) if isinstance(s, gast.Assign)
                  for t, v in _bound_pairs(s) if isinstance(v, (gast.List, gast.ListComp))}
    if not candidates:
        return {}
    reads = _Reads(fnode, resolve)
    held = {}
    for name in sorted(candidates):
        items = reads.held(name, kept)
        if items is not None:
            held[name] = items
    return held


def mentions(node, name):
    """Whether ``node`` reads or binds the name ``name``."""
    return any(isinstance(n, gast.Name) and n.id == name for n in gast.walk(node))


class _Reads:
    """How ``fnode`` reads its lists: the parent of each node, the builtins its
    names surely mean, and which calls are NumPy functions."""

    def __init__(self, fnode, resolve):
        self.fnode = fnode
        self.parents = _parents(fnode)
        self.builtin = builtins_meant(READING_BUILTINS + ITERATING_BUILTINS, fnode, resolve)
        self.resolve, self.local = resolve, local_names(fnode)

    def numpy_function(self, func):
        """``np.mean``, ``np.stack``: a NumPy function, which copies what a list holds."""
        return numpy_function(func, self.resolve, self.local) is not None

    def held(self, name, kept=None):
        """The values that may become items of the list ``name``, or None where
        it is not a list held under that name only (or, with ``kept``, only where
        ``kept`` lets its reads by)."""
        fnode, parents, builtin = self.fnode, self.parents, self.builtin
        if name in parameter_names(fnode):
            return None
        for n in gast.walk(fnode):
            if isinstance(n, (gast.Global, gast.Nonlocal)) and name in n.names:
                return None
            if n is not fnode and isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef,
                                                 gast.Lambda, gast.ClassDef)) and \
                    mentions(n, name):
                return None  # a closure may hold the list itself
        items = []
        for n in gast.walk(fnode):
            if not (isinstance(n, gast.Name) and n.id == name):
                continue
            parent = parents.get(id(n))
            if isinstance(n.ctx, gast.Store):
                made = _made_items(parent.value, name, builtin) if \
                    isinstance(parent, gast.Assign) and parent.targets == [n] or \
                    isinstance(parent, gast.AugAssign) and isinstance(parent.op, gast.Add) \
                    else self.made_by_a_display(n, parent)
                if made is None:
                    return None
                items += made
            elif isinstance(n.ctx, gast.Del):
                return None
            else:
                added = self.read_adds(n, parent)
                if added is None and kept is not None and kept(n):
                    added = [None]
                if added is None:
                    return None
                items += added
        return items

    def made_by_a_display(self, n, parent):
        """The items the value bound to ``n`` by ``a, b = [], []`` makes (None where
        ``n`` is bound otherwise): the display's item at ``n``'s place, evaluated
        before any target is bound."""
        stmt = self.parents.get(id(parent))
        if not isinstance(stmt, gast.Assign):
            return None
        value = dict((id(t), v) for t, v in _bound_pairs(stmt)).get(id(n))
        return None if value is None else _made_items(value, n.id, self.builtin)

    def read_adds(self, n, parent):
        """What the read ``n`` of the list may make its items (a list), or None
        where the read may keep the list itself somewhere else."""
        parents, builtin = self.parents, self.builtin
        if isinstance(parent, gast.Subscript) and parent.value is n:
            if isinstance(parent.ctx, gast.Store):
                stmt = parents.get(id(parent))
                if isinstance(stmt, gast.Assign) and stmt.targets == [parent] and \
                        not isinstance(parent.slice, gast.Slice):
                    return [stmt.value]  # ws[k] = v
                if isinstance(stmt, gast.AugAssign) and stmt.target is parent:
                    return []  # ws[k] += v: an array item stays that array, in place
                return [None]  # ws[1:3] = other, or a target among several
            return []  # an item or slice read, an item updated in place, deleted
        if isinstance(parent, gast.Attribute) and parent.value is n:
            call = parents.get(id(parent))
            if parent.attr not in LIST_METHODS or not isinstance(call, gast.Call) or \
                    call.func is not parent:
                return None
            if call.keywords or any(isinstance(a, gast.Starred) for a in call.args):
                return [None]
            if parent.attr == "append" and len(call.args) == 1:
                return [call.args[0]]
            if parent.attr == "insert" and len(call.args) == 2:
                return [call.args[1]]
            if parent.attr == "extend":
                arg = call.args[0] if call.args else None
                return [e for e in arg.elts] if isinstance(arg, gast.List) and \
                    not any(isinstance(e, gast.Starred) for e in arg.elts) else [None]
            return []
        if isinstance(parent, gast.For) and parent.iter is n:
            return []
        if isinstance(parent, gast.comprehension) and parent.iter is n:
            made = parents.get(id(parent))  # a generator expression reads the list lazily
            looks = not isinstance(made, gast.GeneratorExp) or \
                self.consumed_at_once(made)
            return [] if looks else None
        if isinstance(parent, (gast.If, gast.While, gast.IfExp, gast.Assert)) and parent.test is n:
            return []
        if isinstance(parent, (gast.BoolOp, gast.UnaryOp)):
            looks = isinstance(parent, gast.UnaryOp) and isinstance(parent.op, gast.Not) or \
                _in_a_test(parent, parents)
            return [] if looks else None
        if isinstance(parent, gast.Compare):
            return []  # len(buf) > 3 reads len's value; x in buf, buf == [] compare items
        if isinstance(parent, gast.BinOp) and isinstance(parent.op, gast.Add):
            return []  # buf + [v]: a new list
        if isinstance(parent, gast.Call) and n in parent.args:
            func = parent.func
            if isinstance(func, gast.Name) and func.id in ITERATING_BUILTINS and \
                    func.id in builtin:
                return [] if self.consumed_at_once(parent) else None
            if isinstance(func, gast.Name) and func.id in builtin or \
                    self.numpy_function(func):
                return []
        return None


    def consumed_at_once(self, node):
        """Whether the iterator ``node`` makes (``enumerate(ws)``, a generator
        expression) is used up where it is made: the iterable of a loop or a
        comprehension, or given to a builtin or NumPy function that reads it whole
        (``sum(w for w in ws)``, ``enumerate(zip(ws, gs))`` in a loop) -- never kept
        under a name to be read after the list changes."""
        parents, builtin = self.parents, self.builtin
        parent = parents.get(id(node))
        if isinstance(parent, (gast.For, gast.comprehension)) and parent.iter is node:
            return not isinstance(parent, gast.comprehension) or \
                not isinstance(parents.get(id(parent)), gast.GeneratorExp) or \
                self.consumed_at_once(parents.get(id(parent)))
        if isinstance(parent, gast.Call) and node in parent.args:
            func = parent.func
            if isinstance(func, gast.Name) and func.id in ITERATING_BUILTINS and \
                    func.id in builtin:
                return self.consumed_at_once(parent)
            return isinstance(func, gast.Name) and func.id in READING_BUILTINS and \
                func.id in builtin or self.numpy_function(func)
        return False


def _parents(root):
    parents = {}
    for parent in gast.walk(root):
        for child in gast.iter_child_nodes(parent):
            parents[id(child)] = parent
    return parents


def _bound_pairs(stmt):
    """``(target, value)`` of each name ``stmt`` binds: ``ws = [...]``, or each
    name of ``ws, gs = [...], [...]`` with the display's item at its place (a
    tuple or list display of as many items, none starred, as one target)."""
    if len(stmt.targets) != 1:
        return []
    target, value = stmt.targets[0], stmt.value
    if isinstance(target, gast.Name):
        return [(target, value)]
    if isinstance(target, (gast.Tuple, gast.List)) and \
            isinstance(value, (gast.Tuple, gast.List)) and \
            len(target.elts) == len(value.elts) and \
            not any(isinstance(e, gast.Starred) for e in target.elts + value.elts):
        return [(t, v) for t, v in zip(target.elts, value.elts) if isinstance(t, gast.Name)]
    return []


def _made_items(value, name, builtin):
    """The items of the list ``value`` makes (None in place of one not known), or
    None where ``value`` may make something else than a list."""
    if isinstance(value, gast.List):
        return [None if isinstance(e, gast.Starred) else e for e in value.elts]
    if isinstance(value, gast.ListComp):
        return [value.elt]
    if isinstance(value, gast.Call) and isinstance(value.func, gast.Name) and \
            value.func.id == "list" and "list" in builtin:
        return [None]  # the items of what it is given
    if isinstance(value, gast.Subscript) and isinstance(value.slice, gast.Slice) and \
            isinstance(value.value, gast.Name) and value.value.id == name:
        return []  # some of its own items
    if isinstance(value, gast.BinOp) and isinstance(value.op, gast.Add):
        sides = [[] if isinstance(side, gast.Name) and side.id == name else
                 _made_items(side, name, builtin) for side in (value.left, value.right)]
        if None in sides or not any(_made_items(side, name, builtin) is not None
                                    for side in (value.left, value.right)):
            return None
        return sides[0] + sides[1]
    return None


def _in_a_test(node, parents):
    """``buf and ...`` whose value is only tested (an ``if``/``while`` test)."""
    while isinstance(node, (gast.BoolOp, gast.UnaryOp)):
        parent = parents.get(id(node))
        if isinstance(parent, (gast.If, gast.While, gast.IfExp, gast.Assert)) and \
                parent.test is node:
            return True
        node = parent
    return False
