"""Desugar: starred unpacking ``a, *rest, z = xs`` of a list or tuple whose
length is known when compiling, written as the plain unpacking Python does::

    a, *rest, z = [x0, x1, x2, x3]   ->   a, rest, z = x0, [x1, x2], x3
    h, *rest = pair                  ->   h, rest = pair[0], [pair[1], pair[2]]
    for p, *q in [(a, b, c), ...]:   ->   for p, q in [(a, [b, c]), ...]:

The starred target is bound to a new list of its share of the items, as in
Python, and the right side is read whole before any target is bound
(``p, *q = q, p`` reads ``q`` first).  The length is known (``known_items.py``)
where the value is

- a list or tuple display (no ``*`` in it; nested targets take their share of
  nested displays), also each item of a display a ``for`` loop walks;
- a name bound to such a display before, maybe grown by appends, that
  nothing between changes (``_pair_result = (a, b, c)``, what inlining a
  helper that returns a tuple leaves);
- a list or tuple the call gives that the function only reads.

Too few values for the targets is Python's ValueError, refused when
compiling; a starred target whose value has any other length (an array, a
list built in a loop, a list held under a name bound elsewhere) is refused,
naming its line: the length is known only when the code runs.
"""

import gast

from tangent_ckpt.compiler.desugar.known_items import KnownItems, display, statements
from tangent_ckpt.compiler.desugar.view_shape import located
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
    reads = {id(s.value) for s in gast.walk(fnode)
             if isinstance(s, gast.Assign) and _has_star(s.targets)}
    known = KnownItems(parsed, structures, reads)
    for s, around in statements(fnode.body):
        if isinstance(s, gast.Assign) and len(s.targets) == 1 and _has_star(s.targets):
            items = known.items(s.value, around)
            split = None if items is None else \
                _split(parsed, s.targets[0], gast.Tuple(elts=items, ctx=gast.Load()), s)
            if split is not None:
                s.targets[0], s.value = split
                located(s.value, s)
        elif isinstance(s, gast.For) and _has_star([s.target]) and display(s.iter) and \
                all(display(item) for item in s.iter.elts):
            splits = [_split(parsed, s.target, item, s) for item in s.iter.elts]
            if splits and all(p is not None for p in splits):
                s.target = splits[0][0]
                s.iter.elts = [value for _, value in splits]
                located(s.iter, s)
    for n in gast.walk(fnode):  # what is left: no length known when compiling
        if isinstance(n, gast.Starred) and isinstance(n.ctx, gast.Store):
            raise parsed.located(
                UnsupportedSyntaxError, "starred assignment of a value whose length is known "
                "only when the code runs (an array, a list built in a loop), or of a list "
                "or tuple not written out where it is unpacked", n,
                construct="starred assignment",
                hint="index it instead: a, rest = x[0], x[1:]")


def _has_star(targets):
    return any(isinstance(n, gast.Starred) for t in targets for n in gast.walk(t))


def _split(parsed, target, value, s):
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
            raise parsed.located(
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
            if not display(v):
                return None
            pair = _split(parsed, t, v, s)
            if pair is None:
                return None
            t, v = pair
        pairs.append((t, v))
    return (gast.Tuple(elts=[t for t, _ in pairs], ctx=gast.Store()),
            gast.copy_location(gast.Tuple(elts=[v for _, v in pairs], ctx=gast.Load()), value))
