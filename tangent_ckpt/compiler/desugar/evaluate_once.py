"""Desugar: statements that name a value twice but that Python evaluates once.

Two statement forms read as if a part were written twice, though Python
evaluates it once:

- ``a = b = x * rng.normal(size=3)``: the value is computed once and both names
  are bound to that one object;
- ``v[rng.integers(4)] += x``: the index is computed once, the item read there and
  written back there.

The lowering takes each target with the statement's value (``a = <value>``,
``b = <value>``) and an augmented assignment as ``v[i] = v[i] + x``, so a part
that draws a random number, or calls anything, would run twice: two draws, two
arrays where Python has one.  This pass, run first by the view lowering
(``views.py``), writes such a statement so that every part of it that Python
evaluates once is evaluated once::

    a = b = e          ->   a = e               (the first target a plain name
                            b = a                that no other target names)
    x[0] = y[0] = e    ->   x_value = e
                            x[0] = x_value
                            y[0] = x_value
    v[f(t):] += x      ->   v_start = f(t)
                            v[v_start:] += x
    v[f(t)] = e        ->   v_value = e         (Python computes the value first,
                            v_index = f(t)       then the place it goes)
                            v[v_index] = v_value

A part of a target is taken out only where it holds a call (or another
expression that may act: ``:=``, ``yield``, ``await``), in the order Python
evaluates it; names and arithmetic of names stay where they are.  ``b = a``
then tells the view lowering that both names share one object, as Python has
it.  The added names are new to the function and carry the user's line.
"""

import gast

from tangent_ckpt.compiler.desugar.view_shape import (
    fresh_name, located, name_node, names_taken, store_node,
)

_ACTING = (gast.Call, gast.NamedExpr, gast.Yield, gast.YieldFrom, gast.Await)
_BLOCKS = ("body", "orelse", "finalbody")
_PLACES = (gast.Subscript, gast.Attribute)


def evaluate_once(fnode):
    """Rewrite, in place, every such statement of ``fnode`` (nested blocks and
    nested functions included)."""
    taken = names_taken(fnode)
    _block(fnode.body, taken)


def _block(stmts, taken):
    k = 0
    while k < len(stmts):
        s = stmts[k]
        for field in _BLOCKS:
            block = getattr(s, field, None)
            if isinstance(block, list) and block and isinstance(block[0], gast.stmt):
                _block(block, taken)
        for handler in getattr(s, "handlers", []):
            _block(handler.body, taken)
        written = _once(s, taken)
        if written is None:
            k += 1
            continue
        stmts[k:k + 1] = written  # looked at again: a = v[f()] = e is split, then pinned


def _once(s, taken):
    """The statements replacing ``s``, or None when it stays as it is."""
    if isinstance(s, gast.Assign) and len(s.targets) > 1:
        return _one_value(s, taken)
    if isinstance(s, gast.Assign) and isinstance(s.targets[0], _PLACES) and \
            _acts(s.targets[0]):
        return _value_then_place(s, taken)
    if isinstance(s, gast.Assign) and _stores_what_it_reads(s):
        return _items_then_stores(s, taken)
    if isinstance(s, gast.AugAssign) and _acts(s.target):
        before = []
        target = _pinned_place(s.target, before, taken)
        return before + [gast.copy_location(gast.AugAssign(target=target, op=s.op,
                                                           value=s.value), s)]
    return None


def _one_value(s, taken):
    """``a = b = e``: ``e`` once, every target bound to it, left to right."""
    first, rest = s.targets[0], s.targets[1:]
    if isinstance(first, gast.Name) and not any(
            isinstance(n, gast.Name) and n.id == first.id
            for t in rest for n in gast.walk(t)):
        held, out = first.id, [_assign(first, s.value, s)]
    else:
        held = fresh_name(f"{_root_name(first)}_value", taken)
        out = [_assign(store_node(held), s.value, s)]
        rest = s.targets
    out.extend(_assign(t, name_node(held), s) for t in rest)
    return [located(stmt, s) if stmt is not out[0] else stmt for stmt in out]


def _stores_what_it_reads(s):
    """``a[0], a[1] = a[1], a[0]``: a tuple of places stored from a tuple of values,
    some value reading, other than by its bare name, an array a place writes into
    (``a[1]`` may be a view of ``a``: NumPy stores ``a[1]`` into ``a[0]`` first, and
    the second item, a view of ``a[0]``, then holds the new row)."""
    target, value = s.targets[0], s.value
    if not (isinstance(target, (gast.Tuple, gast.List)) and
            isinstance(value, (gast.Tuple, gast.List)) and
            len(target.elts) == len(value.elts) and
            not any(isinstance(e, gast.Starred) for e in target.elts + value.elts)):
        return False
    written = {_root_name(t) for t in target.elts if isinstance(t, _PLACES)}
    return any(isinstance(n, gast.Name) and n.id in written
               for item in value.elts if not isinstance(item, gast.Name)
               for n in gast.walk(item))


def _items_then_stores(s, taken):
    """The items first, each into a name of its own (a name no target rebinds stays
    as it is), then each store, left to right, as Python runs the statement."""
    target, value = s.targets[0], s.value
    rebound = {n.id for t in target.elts for n in gast.walk(t)
               if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
    out, items = [], []
    for place, item in zip(target.elts, value.elts):
        if isinstance(item, gast.Constant) or (isinstance(item, gast.Name) and
                                                item.id not in rebound):
            items.append(item)
            continue
        name = fresh_name(f"{_root_name(place)}_item", taken)
        out.append(located(_assign(store_node(name), item, s), s))
        items.append(located(name_node(name), s))
    out.extend(located(_assign(place, item, s), s) for place, item in zip(target.elts, items))
    return out


def _value_then_place(s, taken):
    """``v[f()] = e``: Python computes ``e`` first, then the place it stores into."""
    target, before = s.targets[0], []
    value = s.value
    if not isinstance(value, (gast.Name, gast.Constant)):
        name = fresh_name(f"{_root_name(target)}_value", taken)
        before.append(_assign(store_node(name), value, s))
        value = located(name_node(name), s)
    place = _pinned_place(target, before, taken)
    return before + [located(_assign(place, value, s), s)]


def _assign(target, value, where):
    return gast.copy_location(gast.Assign(targets=[target], value=value, type_comment=None),
                              where)


def _root_name(target):
    while isinstance(target, (gast.Subscript, gast.Attribute)):
        target = target.value
    if isinstance(target, gast.Name):
        return target.id
    return "value"


def _acts(node):
    return any(isinstance(n, _ACTING) for n in gast.walk(node))


def _pinned_place(target, before, taken):
    """``target`` (a subscript or attribute place) with each part that acts
    computed first, into a new name, in Python's order: the object, then the
    index."""
    if not _acts(target):
        return target
    if isinstance(target, gast.Subscript):
        value = _pinned_place(target.value, before, taken) \
            if isinstance(target.value, (gast.Subscript, gast.Attribute)) else \
            _pinned(target.value, "array", before, taken, target)
        index = _pinned_index(target.slice, _root_name(target), before, taken, target)
        return gast.copy_location(gast.Subscript(value=value, slice=index, ctx=target.ctx),
                                  target)
    if isinstance(target, gast.Attribute):
        value = _pinned_place(target.value, before, taken) \
            if isinstance(target.value, (gast.Subscript, gast.Attribute)) else \
            _pinned(target.value, "owner", before, taken, target)
        return gast.copy_location(gast.Attribute(value=value, attr=target.attr,
                                                 ctx=target.ctx), target)
    return target


def _pinned_index(index, root, before, taken, where):
    if isinstance(index, gast.Tuple):
        return gast.copy_location(gast.Tuple(
            elts=[_pinned_index(e, root, before, taken, where) for e in index.elts],
            ctx=index.ctx), index)
    if isinstance(index, gast.Slice):
        parts = {field: _pinned(getattr(index, field), f"{root}_{word}", before, taken, where)
                 for field, word in (("lower", "start"), ("upper", "stop"), ("step", "step"))}
        return gast.copy_location(gast.Slice(**parts), index)
    return _pinned(index, f"{root}_index", before, taken, where)


def _pinned(expr, stem, before, taken, where):
    """``expr`` itself when it does not act, else a new name bound to it first."""
    if expr is None or not _acts(expr):
        return expr
    name = fresh_name(stem, taken)
    before.append(located(_assign(store_node(name), expr, where), where))
    return gast.copy_location(name_node(name), expr)
