"""Desugar: a ``for`` loop over a tuple or list display written in its header,
unrolled.

``for k, v in enumerate([a, b]):``, ``for name in ("enc", "dec"):`` and
``for k, w in zip("abc", [1.0, 2.0, 3.0]):`` run their body once per item of a
row fixed when compiling, and the items may differ in shape (the layers of a
network), which one run-time loop could not carry.  The loop becomes its body
once per item, each copy first binding the loop's variables to that item::

    for k, v in enumerate([a, b]):      ->      v = a
        if k == 0:                              if 0 == 0:
            s = s + np.sum(v)                       s = s + np.sum(v)
        else:                                   else:
            s = s * np.sum(v)                       s = s * np.sum(v)
                                                v = b
                                                if 1 == 0: ...

A variable bound to a constant (a key, a counter) that the body does not bind
again is that constant in its copy, so that ``d[k]`` reads a known key and the
lowering keeps only the path of ``if k == 0:`` that runs; after the loop it is
bound to the last constant where a later statement may read it (``liveness.py``),
as in Python.  Python makes the display before the loop: an item that is a name the
body (or the loop's own variables) binds again is read from a name bound to it
before the loop (``b_item = b``), so a later copy sees the object ``b`` held when
the loop started, not what the body bound to ``b`` since.

The loops ``comprehension_loops.py`` wrote for a comprehension over a ``range``
of constants (``[f(k) for k in range(3)]``) are unrolled the same way: outer
loops first, so that an inner ``range(i)`` is one of constants in each copy.

That is the same program exactly when the display's items are names and
constants (tuples of them, for a tuple target), or the ``enumerate`` (with a
constant start) or ``zip`` of such displays, strings and ranges of
constants (the builtins meant); the body does not leave the loop early
(``break``, ``continue``, ``return``), changes no item's name in place
(``b += v`` may rebind a number or write into an array), calls none of the
loop's variables, holds no ``def``, ``lambda``, class, comprehension, ``yield``,
``global`` or ``nonlocal``, and holds no condition of a comprehension's loop
(``comprehension_loops.py``: a condition known only at run time there is the
lowering's to judge); the loop has no ``else``.  Any other loop stays, for the
lowering (``lower/container_loops.py``).
"""

import copy

import gast

from tangent_ckpt.compiler.desugar.liveness import NameLiveness, read_names
from tangent_ckpt.compiler.desugar.local_bindings import SCOPES, builtins_meant
from tangent_ckpt.compiler.desugar.view_shape import (
    fresh_name, located, name_node, names_taken, statement_blocks, store_node,
)

_CONSTANTS = (int, float, complex, str, bool, type(None))
# what a body unrolled here may not hold (see the module's docstring)
_OPAQUE = SCOPES + (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp,
                    gast.Return, gast.Yield, gast.YieldFrom, gast.Global, gast.Nonlocal)
_LOOPS = (gast.For, gast.While)


class _Constant:
    """An item that is a constant of the display (``value``)."""

    def __init__(self, value):
        self.value = value


def unroll_display_loops(parsed):
    """Rewrite every such loop of ``parsed.node`` (nested blocks too), in place:
    outer loops first, each copy looked at again (an inner ``range(i)`` is one of
    constants once the outer copy folded ``i``)."""
    fnode = parsed.node
    meant = builtins_meant(("enumerate", "zip", "range"), fnode, parsed.resolve)
    _block(parsed, fnode.body, meant, names_taken(fnode))


def _block(parsed, stmts, meant, taken):
    k = 0
    while k < len(stmts):
        unrolled = _Unrolling(parsed, stmts[k], meant, taken).statements()
        if unrolled is not None:
            stmts[k:k + 1] = unrolled  # and the copies are looked at in turn
            continue
        for block in statement_blocks(stmts[k]):
            _block(parsed, block, meant, taken)
        k += 1


class _Unrolling:
    """The statements replacing one loop ``s``, if it is such a loop."""

    def __init__(self, parsed, s, meant, taken):
        self.parsed, self.s, self.meant, self.taken = parsed, s, meant, taken

    def statements(self):
        """The loop's copies (after the items held before it), or None."""
        s = self.s
        if not isinstance(s, gast.For) or s.orelse or not self._plain_body():
            return None
        rows = self._rows(s.iter)
        if not rows:
            return None
        targets = _target_names(s.target)
        if targets is None:
            return None
        stored = _stored(s.body)
        items = [_leaf for row in rows for _leaf in _leaves(row)]
        if any(isinstance(i, gast.Name) and i.id in stored[1] for i in items):
            return None  # b += v: a number rebound or an array written, not known here
        if any(isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and
               n.func.id in targets for st in s.body for n in gast.walk(st)):
            return None  # a call of the loop's variable: function_loops.py's, or the lowering's
        # the items whose names the loop binds again: held before it
        rebound = stored[0] | targets
        held, before = {}, []
        for item in items:
            if isinstance(item, gast.Name) and item.id in rebound and item.id not in held:
                held[item.id] = fresh_name(f"{item.id}_item", self.taken)
                before.append(located(gast.Assign(targets=[store_node(held[item.id])],
                                                  value=name_node(item.id), type_comment=None),
                                      s))
        folded = {name for name in targets if name not in stored[0] | stored[1]}
        out = list(before)
        last = {}
        for row in rows:
            constants = {}
            bindings = []
            if not self._bind(s.target, row, folded, held, constants, bindings):
                return None
            last.update(constants)
            out.extend(bindings)
            out.extend(self._copy(st, constants) for st in s.body)
        for name in sorted(last):
            if id(s) in NameLiveness(self.parsed.node, name, read_names).after:
                out.append(located(gast.Assign(targets=[store_node(name)],
                                               value=_constant_node(last[name]),
                                               type_comment=None), s))
        return out

    def _plain_body(self):
        """Does the body hold nothing that stops the unrolling (the module's
        docstring)?"""
        conditions = self.parsed.comprehension_conditions
        for st in self.s.body:
            for n in _walk_exits(st):
                if isinstance(n, (gast.Break, gast.Continue)):
                    return False
            for n in gast.walk(st):
                if isinstance(n, _OPAQUE) or n in conditions:
                    return False
        return True

    def _rows(self, it):
        """The items of each trip: a list of rows, each a display's item (a node)
        or a tuple of them (``enumerate``, ``zip``); None where ``it`` is no such
        row."""
        if isinstance(it, (gast.Tuple, gast.List)):
            return _display(it)
        if self.s in self.parsed.comprehension_loops:  # [f(k) for k in range(3)]
            return self._range(it)
        if not (isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and
                it.func.id in self.meant and it.func.id in ("enumerate", "zip")):
            return None
        if it.func.id == "enumerate":
            start = 0
            if it.keywords or not 1 <= len(it.args) <= 2:
                return None
            if len(it.args) == 2:
                c = it.args[1]
                if not (isinstance(c, gast.Constant) and type(c.value) is int):
                    return None
                start = c.value
            items = _display(it.args[0])
            if items is None:
                return None
            return [(_Constant(start + k), item) for k, item in enumerate(items)]
        if it.keywords or not it.args:
            return None
        columns = [self._column(a) for a in it.args]
        if any(c is None for c in columns):
            return None
        return [tuple(row) for row in zip(*columns)]

    def _column(self, node):
        """The items of one of ``zip``'s arguments: a display, a string, a range
        of constants; else None."""
        if isinstance(node, gast.Constant) and isinstance(node.value, str):
            return [_Constant(c) for c in node.value]
        return self._range(node) or _display(node)

    def _range(self, node):
        """The items of ``range(...)`` of constants (the builtin), else None."""
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and \
                node.func.id == "range" and "range" in self.meant and not node.keywords and \
                1 <= len(node.args) <= 3 and all(isinstance(a, gast.Constant) and
                                                 type(a.value) is int for a in node.args):
            return [_Constant(k) for k in range(*(a.value for a in node.args))]
        return None

    def _bind(self, target, item, folded, held, constants, out):
        """Bind ``target`` to ``item`` for one copy: a folded name to a constant
        goes into ``constants``, every other binding into ``out``; False where
        the shapes do not match."""
        if isinstance(target, gast.Name):
            if isinstance(item, _Constant) and target.id in folded:
                constants[target.id] = item.value
                return True
            out.append(located(gast.Assign(targets=[store_node(target.id)],
                                           value=self._value(item, held),
                                           type_comment=None), self.s))
            return True
        parts = item if isinstance(item, tuple) else \
            tuple(item.elts) if isinstance(item, gast.Tuple) else None
        if parts is None or len(parts) != len(target.elts):
            return False
        return all(self._bind(t, p, folded, held, constants, out)
                   for t, p in zip(target.elts, parts))

    def _value(self, item, held):
        if isinstance(item, _Constant):
            return _constant_node(item.value)
        if isinstance(item, gast.Name):
            return name_node(held.get(item.id, item.id))
        return gast.Tuple(elts=[self._value(i, held) for i in item.elts], ctx=gast.Load())

    def _copy(self, st, constants):
        """A copy of the body's statement ``st`` (keeping the facts the earlier
        passes declared on its nodes), each read of a folded name its constant."""
        memo = {}
        out = copy.deepcopy(st, memo)
        p = self.parsed
        for table in (p.origins, p.call_sites, p.comprehension_loops,
                      p.comprehension_appends):
            for n in gast.walk(st):
                fact = table.get(n)
                if fact is not None and id(n) in memo:
                    table[memo[id(n)]] = fact
        if constants:
            for n in gast.walk(out):
                for field, value in gast.iter_fields(n):
                    if isinstance(value, gast.Name) and value.id in constants:
                        setattr(n, field, gast.copy_location(
                            _constant_node(constants[value.id]), value))
                    elif isinstance(value, list):
                        value[:] = [gast.copy_location(_constant_node(constants[v.id]), v)
                                    if isinstance(v, gast.Name) and v.id in constants else v
                                    for v in value]
        return out


def _display(node):
    """The items of a tuple or list display of names and constants (tuple
    displays of them too), or None."""
    if not isinstance(node, (gast.Tuple, gast.List)) or not node.elts:
        return None
    items = []
    for e in node.elts:
        if isinstance(e, gast.Constant) and type(e.value) in _CONSTANTS:
            items.append(_Constant(e.value))
        elif isinstance(e, gast.Name):
            items.append(e)
        elif isinstance(e, gast.Tuple) and e.elts and _display(e) is not None:
            items.append(gast.Tuple(elts=_display(e), ctx=gast.Load()))
        else:
            return None
    return items


def _leaves(item):
    if isinstance(item, tuple):
        return [leaf for i in item for leaf in _leaves(i)]
    if isinstance(item, gast.Tuple):
        return [leaf for i in item.elts for leaf in _leaves(i)]
    return [item]


def _target_names(target):
    """The names a loop target of names (nested tuples of them) binds, or None."""
    if isinstance(target, gast.Name):
        return {target.id}
    if isinstance(target, (gast.Tuple, gast.List)) and target.elts:
        names = set()
        for t in target.elts:
            sub = _target_names(t)
            if sub is None:
                return None
            names |= sub
        return names
    return None


def _stored(body):
    """(the names ``body`` binds, the names it changes by ``+=`` and friends)."""
    bound, changed = set(), set()
    for st in body:
        for n in gast.walk(st):
            if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del)):
                bound.add(n.id)
            if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name):
                changed.add(n.target.id)
    return bound, changed


def _walk_exits(st):
    """The nodes of ``st`` outside the loops nested in it (where a ``break`` or
    ``continue`` is this loop's)."""
    stack = [st]
    while stack:
        n = stack.pop()
        yield n
        if isinstance(n, _LOOPS):
            stack.extend(n.orelse)  # (an inner loop's else belongs to the outer one)
            continue
        stack.extend(gast.iter_child_nodes(n))


def _constant_node(value):
    return gast.Constant(value=value, kind=None)
