"""Desugar: the items of a list or tuple whose length is known when compiling,
where a statement reads it whole (``starred_targets.py``, ``extreme_items.py``).

The items are known, as expressions that read them, where the value is

- a list or tuple display without ``*`` items: its items;
- a name an earlier statement bound to such a display, then grew by
  ``xs.append(v)`` statements (what ``comprehension_loops.py`` writes for
  ``[f(k) for k in range(3)]``, unrolled): ``xs[0]``, ``xs[1]``, ...  The binding
  is in the same block, or before a compound statement holding the read; nothing
  between, and nothing in a loop holding the read, mentions the name but to read
  or store an item (``xs[k]``, ``xs[k] = v``: the length stays); no nested
  function or class mentions it, no ``global`` / ``nonlocal`` names it (then
  nothing else can hold that list and change it);
- a name every binding of which binds a display of one length, every other
  mention of which reads or stores an item or reads it whole (``xs = (a, b)``,
  ``if c: xs = (b, a)``): ``xs[0]``, ``xs[1]``;
- a list or tuple the call gives (``passes.given_containers``) that the
  function only reads (``static_loops.only_read``): ``params[0]``, ...
"""

import gast

from tangent_ckpt.compiler.desugar.local_bindings import SCOPES, builtins_meant
from tangent_ckpt.compiler.desugar.static_loops import only_read
from tangent_ckpt.compiler.desugar.view_shape import statement_blocks


class KnownItems:
    """The items of the lists and tuples one function reads whole, as known at
    each statement.  ``reads``: the ids of the nodes that read a list whole
    and keep nothing of it (the value of a starred assignment, the argument of
    ``max``): no change of the list, and a read of a given container;
    ``structures``: {parameter: structure} of the containers the call gives."""

    def __init__(self, parsed, structures=None, reads=()):
        self.fnode = fnode = parsed.node
        meant = builtins_meant(("enumerate", "zip", "len"), fnode, parsed.resolve)
        self.reads = set(reads)
        self.structures = structures or {}
        self.given = {name: len(structure[1]) for name, structure in self.structures.items()
                      if structure[0] in ("list", "tuple") and
                      only_read(fnode, name, meant, also=reads)}
        # names some statement binds to a container display or comprehension, and
        # the containers the call gives
        self.holding = {t.id for n in gast.walk(fnode) if isinstance(n, gast.Assign)
                        and _container(n.value) for t in n.targets if isinstance(t, gast.Name)} | \
            {name for name, structure in self.structures.items() if structure != "leaf"}
        self.closed = {n.id for scope in gast.walk(fnode) if isinstance(scope, SCOPES)
                       and scope is not fnode for n in gast.walk(scope)
                       if isinstance(n, gast.Name)} | \
            {name for n in gast.walk(fnode) if isinstance(n, (gast.Global, gast.Nonlocal))
             for name in n.names}

    def items(self, value, around):
        """The item expressions of ``value`` (a display's own items, fresh nodes
        reading a name's), or None where its length is not known.  ``around``:
        (statements before, statement) of the reading statement and of each
        compound statement holding it, outermost first (:func:`statements`)."""
        found = self._found(value, around)
        return None if found is None else found[0]

    def flat(self, value, around):
        """Is each item of ``value`` (whose items are known) surely no list,
        tuple, dict or set: made by an expression that is no display or
        comprehension, nor a name the function ever binds to one (a number or
        an array, which ``max`` and ``sorted`` compare as such)?"""
        found = self._found(value, around)
        if found is None:
            return False
        if found[1] is None:  # a container the call gives: its structure says
            return all(leaf == "leaf" for leaf in self.structures[value.id][1])
        return not any(_container(n) or isinstance(n, gast.Name) and n.id in self.holding
                       for n in found[1])

    def constants(self, value, around):
        """Is every item of ``value`` (whose items are known) made by a constant?"""
        found = self._found(value, around)
        return found is not None and found[1] is not None and \
            all(isinstance(n, gast.Constant) for n in found[1])

    def _found(self, value, around):
        """(the item expressions, the expressions that made them or None) of
        ``value``, or None."""
        if display(value):
            return list(value.elts), list(value.elts)
        if not isinstance(value, gast.Name) or value.id in self.closed:
            return None
        name = value.id
        if name in self.given:
            return _items_of(name, self.given[name]), None
        found = self._scanned(value, around)
        return found if found is not None else self._always(value)

    def _scanned(self, value, around):
        """What the statements before the read say of the name ``value``."""
        name, appended = value.id, []
        for depth in range(len(around) - 1, -1, -1):
            before, holder = around[depth]
            if depth < len(around) - 1 and self.changes(holder, value):
                return None  # (a loop may change it on an earlier trip)
            for s in reversed(before):
                if isinstance(s, gast.Assign) and len(s.targets) == 1 and \
                        isinstance(s.targets[0], gast.Name) and s.targets[0].id == name:
                    if display(s.value) and not _mentions(s.value, name):
                        made = list(s.value.elts) + appended[::-1]
                        return _items_of(name, len(made)), made
                    return None
                if _append(s, name):
                    appended.append(s.value.args[0])
                elif self.changes(s, value):
                    return None
        return None

    def _always(self, value):
        """The items of the name ``value`` where every binding of it in the
        function binds a display of one length and every other mention reads or
        stores an item, or reads it whole (``reads``)."""
        bindings = [n for n in gast.walk(self.fnode) if isinstance(n, gast.Assign) and
                    any(isinstance(t, gast.Name) and t.id == value.id for t in n.targets)]
        if not bindings or any(len(b.targets) != 1 or not display(b.value) or
                               len(b.value.elts) != len(bindings[0].value.elts) or
                               _mentions(b.value, value.id) for b in bindings):
            return None
        stores = {id(b.targets[0]) for b in bindings}
        fine = self._fine(self.fnode, value.id, stores)
        if any(isinstance(n, gast.Name) and n.id == value.id and id(n) not in fine
               for n in gast.walk(self.fnode)):
            return None
        return (_items_of(value.id, len(bindings[0].value.elts)),
                [e for b in bindings for e in b.value.elts])

    def _fine(self, node, name, also):
        """The ids of the mentions of ``name`` in ``node`` that change neither
        what it holds nor its length: ``also``, the whole reads, and item reads and
        stores (no slice)."""
        fine = self.reads | set(also)
        for n in gast.walk(node):
            if isinstance(n, gast.Subscript) and isinstance(n.value, gast.Name) and \
                    n.value.id == name and (isinstance(n.ctx, gast.Load) or isinstance(
                        n.ctx, gast.Store) and not isinstance(n.slice, gast.Slice)):
                fine.add(id(n.value))
        return fine

    def changes(self, node, value):
        """May ``node`` change what the name ``value`` holds or how long it is:
        does it mention the name (other than ``value`` and the other whole reads
        ``reads``) anywhere but in an item read ``name[k]`` or an item store
        ``name[k] = v`` (no slice)?"""
        name = value.id
        fine = self._fine(node, name, {id(value)})
        return any(isinstance(n, gast.Name) and n.id == name and id(n) not in fine
                   for n in gast.walk(node))


def statements(stmts, outer=()):
    """Each statement of ``stmts`` and the blocks inside it (nested functions'
    too), in order, with its ``around`` for :meth:`KnownItems.items`; a statement
    yielded may be edited in place before the walk goes into it."""
    for k, s in enumerate(stmts):
        around = outer + ((stmts[:k], s),)
        yield s, around
        for body in statement_blocks(s, into_defs=True):
            yield from statements(body, () if isinstance(s, SCOPES) else around)


def display(node):
    """Is ``node`` a list or tuple display without ``*`` items?"""
    return isinstance(node, (gast.List, gast.Tuple)) and \
        not any(isinstance(e, gast.Starred) for e in node.elts)


def _container(node):
    """Is ``node`` a list, tuple, dict or set display or comprehension?"""
    return isinstance(node, (gast.List, gast.Tuple, gast.Dict, gast.Set, gast.ListComp,
                             gast.SetComp, gast.DictComp, gast.GeneratorExp))


def _append(s, name):
    """Is ``s`` the statement ``name.append(v)``, ``v`` not mentioning ``name``?"""
    call = s.value if isinstance(s, gast.Expr) else None
    return isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and \
        call.func.attr == "append" and isinstance(call.func.value, gast.Name) and \
        call.func.value.id == name and len(call.args) == 1 and not call.keywords and \
        not isinstance(call.args[0], gast.Starred) and not _mentions(call.args[0], name)


def _mentions(node, name):
    return any(isinstance(n, gast.Name) and n.id == name for n in gast.walk(node))


def _items_of(name, length):
    """``name[0]``, ``name[1]``, ...: the items of ``name``, read from it."""
    return [gast.Subscript(
        value=gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None),
        slice=gast.Constant(value=k, kind=None), ctx=gast.Load()) for k in range(length)]
