"""Desugar: starred unpacking ``a, *rest, z = xs`` of a list or tuple whose
length is known when compiling, written as the plain unpacking Python does::

    a, *rest, z = [x0, x1, x2, x3]   ->   a, rest, z = x0, [x1, x2], x3
    h, *rest = pair                  ->   h, rest = pair[0], [pair[1], pair[2]]
    for p, *q in [(a, b, c), ...]:   ->   for p, q in [(a, [b, c]), ...]:

The starred target is bound to a new list of its share of the items, as in
Python, and the right side is read whole before any target is bound
(``p, *q = q, p`` reads ``q`` first).  The length is known where the value is

- a list or tuple display (no ``*`` in it; nested targets take their share of
  nested displays), also each item of a display a ``for`` loop walks;
- a name an earlier statement bound to such a display (in the same block, or
  before a compound statement holding the unpacking), with nothing between,
  and nothing in a loop holding it, that mentions the name other than to read
  or store an item (``xs[k]``, ``xs[k] = v``: the length stays), no nested function
  or class reading it and no ``global`` / ``nonlocal`` of it (``_pair_result = (a, b, c)``, what
  inlining a helper that returns a tuple leaves);
- a list or tuple the call gives (``passes.given_containers``) that the
  function only reads (``static_loops.only_read``): ``params[0]``, ...

Too few values for the targets is Python's ValueError, refused when
compiling; a starred target whose value has any other length (an array, a
list built in a loop, a list held under a name bound elsewhere) is refused,
naming its line: the length is known only when the code runs.
"""

import gast

from tangent_ckpt.compiler.desugar.local_bindings import SCOPES, builtins_meant
from tangent_ckpt.compiler.desugar.static_loops import only_read
from tangent_ckpt.compiler.desugar.view_shape import statement_blocks
from tangent_ckpt.errors import TransformError, UnsupportedSyntaxError


def write_starred_targets(parsed, structures=None):
    """Rewrite every starred target of ``parsed.node`` (its nested functions'
    too) whose value's length is known (see the module), in place; refuse the
    others.  ``structures``: {parameter: structure} of the lists, tuples and
    dicts the call gives (:func:`~.passes.given_containers`)."""
    fnode = parsed.node
    if not any(isinstance(n, gast.Starred) and isinstance(n.ctx, gast.Store)
               for n in gast.walk(fnode)):
        return
    meant = builtins_meant(("enumerate", "zip", "len"), fnode, parsed.resolve)
    given = {name: len(structure[1]) for name, structure in (structures or {}).items()
             if structure[0] in ("list", "tuple") and
             only_read(fnode, name, meant, also=_starred_values(fnode))}
    _Starred(parsed, given).block(fnode.body)
    for n in gast.walk(fnode):  # what is left: no length known when compiling
        if isinstance(n, gast.Starred) and isinstance(n.ctx, gast.Store):
            raise parsed.located(
                UnsupportedSyntaxError, "starred assignment of a value whose length is known "
                "only when the code runs (an array, a list built in a loop), or of a list "
                "or tuple not written out where it is unpacked", n,
                construct="starred assignment",
                hint="index it instead: a, rest = x[0], x[1:]")


def _starred_values(fnode):
    """The right sides of the starred assignments (a read of a given container)."""
    return {id(s.value) for s in gast.walk(fnode)
            if isinstance(s, gast.Assign) and _has_star(s.targets)}


def _has_star(targets):
    return any(isinstance(n, gast.Starred) for t in targets for n in gast.walk(t))


def _display(node):
    """Is ``node`` a list or tuple display without ``*`` items?"""
    return isinstance(node, (gast.List, gast.Tuple)) and \
        not any(isinstance(e, gast.Starred) for e in node.elts)


class _Starred:
    def __init__(self, parsed, given):
        self.parsed, self.given = parsed, given
        self.closed = {n.id for scope in gast.walk(parsed.node) if isinstance(scope, SCOPES)
                       and scope is not parsed.node for n in gast.walk(scope)
                       if isinstance(n, gast.Name)} | \
            {name for n in gast.walk(parsed.node) if isinstance(n, (gast.Global, gast.Nonlocal))
             for name in n.names}

    def block(self, stmts, outer=()):
        """Rewrite the starred targets of ``stmts``; ``outer``: (the statements
        before it, the compound statement holding the block) of each block around
        it in its function, innermost last."""
        for k, s in enumerate(stmts):
            around = outer + ((stmts[:k], s),)
            if isinstance(s, gast.Assign) and len(s.targets) == 1 and _has_star(s.targets):
                value = self.known(s.value, around)
                if value is not None:
                    split = self.split(s.targets[0], value, s)
                    if split is not None:
                        s.targets[0], s.value = split
                        _locate(s.value, s)
            elif isinstance(s, gast.For) and _has_star([s.target]) and _display(s.iter) and \
                    all(_display(item) for item in s.iter.elts):
                splits = [self.split(s.target, item, s) for item in s.iter.elts]
                if splits and all(p is not None for p in splits):
                    s.target = splits[0][0]
                    s.iter.elts = [value for _, value in splits]
                    _locate(s.iter, s)
            for body in statement_blocks(s, into_defs=True):
                self.block(body, () if isinstance(s, SCOPES) else around)

    def known(self, value, around):
        """``value`` as a display of its items, where its length is known when
        compiling; else None.  ``around``: (statements before, statement) of the
        unpacking and of each compound statement holding it, outermost first."""
        if _display(value):
            return value
        if not isinstance(value, gast.Name) or value.id in self.closed:
            return None
        if value.id in self.given:
            return _items_of(value.id, self.given[value.id])
        for depth in range(len(around) - 1, -1, -1):
            before, holder = around[depth]
            if depth < len(around) - 1 and _changes(holder, value.id, value):
                return None  # (a loop may change it on an earlier trip)
            for s in reversed(before):
                if isinstance(s, gast.Assign) and len(s.targets) == 1 and \
                        isinstance(s.targets[0], gast.Name) and s.targets[0].id == value.id:
                    if _display(s.value) and not _mentions(s.value, value.id):
                        return _items_of(value.id, len(s.value.elts), type(s.value))
                    return None
                if _changes(s, value.id, value):
                    return None
        return None

    def split(self, target, value, s):
        """(the target without its stars, the value it unpacks) for a display
        ``value``, or None where a nested star's value is no display."""
        if not isinstance(target, (gast.Tuple, gast.List)):
            return target, value
        stars = [k for k, e in enumerate(target.elts) if isinstance(e, gast.Starred)]
        items = list(value.elts)
        elts = list(target.elts)
        if stars:
            k, after = stars[0], len(elts) - stars[0] - 1
            if len(items) < len(elts) - 1:
                raise self.parsed.located(
                    TransformError, f"not enough values to unpack (expected at least "
                    f"{len(elts) - 1}, got {len(items)})", s, construct="starred assignment")
            middle = gast.List(elts=items[k:len(items) - after], ctx=gast.Load())
            items = items[:k] + [gast.copy_location(middle, value)] + items[len(items) - after:]
            elts = elts[:k] + [elts[k].value] + elts[k + 1:]
        elif len(items) != len(elts):
            return None
        pairs = []
        for t, v in zip(elts, items):
            if _has_star([t]):
                if not _display(v):
                    return None
                pair = self.split(t, v, s)
                if pair is None:
                    return None
                t, v = pair
            pairs.append((t, v))
        return (gast.Tuple(elts=[t for t, _ in pairs], ctx=gast.Store()),
                gast.copy_location(gast.Tuple(elts=[v for _, v in pairs], ctx=gast.Load()),
                                   value))


def _locate(node, where):
    """Every node of ``node`` without a place placed at the statement ``where``."""
    for n in gast.walk(node):
        if getattr(n, "lineno", None) is None and hasattr(n, "_attributes") and \
                "lineno" in n._attributes:
            gast.copy_location(n, where)


def _changes(node, name, value):
    """May ``node`` change what ``name`` holds or how long it is: does it mention
    ``name`` (other than ``value``) anywhere but in an item read ``name[k]`` or an
    item store ``name[k] = v`` (no slice)?"""
    fine = {id(value)}
    for n in gast.walk(node):
        if isinstance(n, gast.Subscript) and isinstance(n.value, gast.Name) and \
                n.value.id == name and (isinstance(n.ctx, gast.Load) or isinstance(
                    n.ctx, gast.Store) and not isinstance(n.slice, gast.Slice)):
            fine.add(id(n.value))
    return any(isinstance(n, gast.Name) and n.id == name and id(n) not in fine
               for n in gast.walk(node))


def _mentions(node, name):
    return any(isinstance(n, gast.Name) and n.id == name for n in gast.walk(node))


def _items_of(name, length, kind=gast.Tuple):
    """``(name[0], name[1], ...)``: the items of ``name``, read from it."""
    return kind(elts=[gast.Subscript(
        value=gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None),
        slice=gast.Constant(value=k, kind=None), ctx=gast.Load()) for k in range(length)],
        ctx=gast.Load())
