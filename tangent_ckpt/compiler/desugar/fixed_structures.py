"""Desugar facts: the containers of one function whose structure is known when
compiling and kept as it is, for ``static_loops.py`` to unroll the loops over them.

Three kinds (:func:`known_structures` gives them, as a :class:`Structures`):

- a list, tuple or dict the call gives (``passes.given_containers``: the compiled
  function is specialised to its structure) that the function only reads
  (:func:`only_read`: never bound again, written into, or handed on);
- of those, the ones whose nested containers are kept as the call gave them
  (:func:`nested_kept`: every name that may be bound to one, ``layer =
  params[0]``, ``enc, dec = params``, ``for layer in params``, only read), so
  that a path into it (``params[0][1]``) holds what the call gave;
- a local every binding of which is a display of one structure, whose items the
  function reads and stores but whose structure it never changes
  (:func:`fixed_structures`: an optimiser's ``for k in params: params[k] -= lr *
  grads[k]``), its items used as arrays (not a list of objects).

Structures are written as ``container_args.structure_of`` writes them:
``("list", [leaf, ...])``, ``("dict", [key, ...], [leaf, ...])``.  Nothing here
changes the function.
"""

import gast
import numpy as np

from tangent_ckpt.compiler.desugar.local_bindings import names_seen_outside, root_name


class Structures:
    """The containers of known structure of one function: ``shapes`` {name:
    structure} of the given containers only read and of the locals of
    :func:`fixed_structures`; ``fixed``, the names of those locals; ``nested``,
    the given containers whose nested containers are kept (:func:`nested_kept`)."""

    def __init__(self, shapes, fixed, nested):
        self.shapes, self.fixed, self.nested = shapes, fixed, nested


def known_structures(fnode, meant, structures=None):
    """The :class:`Structures` of ``fnode`` (``meant``: the builtins its names
    surely mean; ``structures``: {parameter: structure} of the lists, tuples and
    dicts the call gives).  The right side of ``enc, dec = params`` reads
    ``params`` whole, as a loop over it would."""
    unpacked = {id(n.value) for n in gast.walk(fnode)  # enc, dec = params: its items
                if isinstance(n, gast.Assign) and len(n.targets) == 1 and
                isinstance(n.targets[0], (gast.Tuple, gast.List)) and
                all(isinstance(t, gast.Name) for t in n.targets[0].elts) and
                isinstance(n.value, gast.Name)}
    shapes = {name: structure for name, structure in (structures or {}).items()
              if only_read(fnode, name, meant, also=unpacked)}
    fixed = fixed_structures(fnode, meant)
    nested = {name for name, structure in shapes.items()
              if nested_kept(fnode, name, structure, meant)}
    return Structures({**fixed, **shapes}, set(fixed), nested)


def _iterated(loop, meant, keywords):
    """The ids of what the header of ``loop`` reads only to iterate: the
    iterable, the dict of ``d.items()`` / ``values()`` / ``keys()``, the
    arguments of ``enumerate`` / ``zip`` (given keywords too, where
    ``keywords``)."""
    it = loop.iter
    found = set()
    if isinstance(it, gast.Call) and not it.args and not it.keywords and \
            isinstance(it.func, gast.Attribute) and it.func.attr in ("items", "values", "keys"):
        it = it.func.value
    elif isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and \
            it.func.id in ("enumerate", "zip") and it.func.id in meant and \
            (keywords or not it.keywords):
        found.update(id(a) for a in it.args)
    found.add(id(it))
    return found


def fixed_structures(fnode, meant):
    """{name: structure} (as ``container_args.structure_of`` writes it: ``("list",
    [leaf, ...])``, ``("dict", [key, ...], [leaf, ...])``) of the locals every
    binding of which is a list, tuple or dict display of one structure (the
    same length; the same distinct ``str``/``int`` constant keys), whose items
    the function reads and stores but whose structure it never changes: every
    other mention an item read (``ps[i]``, ``ps[i][0]``), an item stored
    (``ps[i] = v``, ``ps[i] -= g``, ``ps[i][0] = v``; not a slice; in a dict, a
    key of the display or the key variable of a loop over the dict's keys,
    bound nowhere else), ``len(ps)`` or a loop's iterable (``ps``,
    ``d.items()``, ``d.values()``, ``d.keys()``, given to ``enumerate`` or
    ``zip``).  A loop over such a name is unrolled as one over a container the
    call gives (``d["w"]`` read in each copy, where Python's iterator reads it),
    where its body does not bind the name again (:meth:`_Unrolling.statements`):
    an optimiser's ``for key in params: params[key] -= lr * grads[key]``, ``for
    i in range(len(ws)): ws[i] -= 0.1 * gs[i]``."""
    outside = names_seen_outside(fnode)
    bindings, out = {}, {}
    for n in gast.walk(fnode):
        if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del)):
            bindings.setdefault(n.id, []).append(n)
    assigned = {}
    for n in gast.walk(fnode):
        if isinstance(n, gast.Assign) and len(n.targets) == 1 and \
                isinstance(n.targets[0], gast.Name):
            assigned[id(n.targets[0])] = n.value
    loops = [n for n in gast.walk(fnode) if isinstance(n, gast.For)]
    for name, stores in bindings.items():
        if name in outside:
            continue
        structure = None
        for target in stores:
            value = assigned.get(id(target))
            this = _display_structure(value)
            if this is None or structure is not None and this != structure:
                structure = None
                break
            structure = this
        if structure is None:
            continue
        keys = set(structure[1]) if structure[0] == "dict" else None
        key_names = set() if keys is None else {
            t.id for loop in loops for t in [_key_target(loop, name, meant)]
            if t is not None and len(bindings.get(t.id, ())) == 1}
        variables = {n.id for loop in loops if _iterates(loop, name)
                     for n in gast.walk(loop.target) if isinstance(n, gast.Name)}
        if any(changes_its_variables(loop) for loop in loops if _iterates(loop, name)):
            continue  # for w in ws: w -= g -- the lowering's refusal names the form
        if _structure_kept(fnode, name, meant, {id(t) for t in stores}, keys, key_names) and \
                used_as_arrays(fnode, variables, name):
            out[name] = structure
    return out


def _iterates(loop, name):
    """Does ``loop``'s header iterate ``name`` (``ws``, ``d.items()``,
    ``enumerate(ws)``, ``zip(ws, gs)``)?"""
    return any(isinstance(n, gast.Name) and n.id == name for n in gast.walk(loop.iter))


def used_as_arrays(node, variables, name=None):
    """Is every name in ``variables`` (loop variables) and every item of
    ``name`` (``name[i]``; None: none) used in ``node`` as an array or number
    could be: never called, and asked only for what an array has (``.T``,
    ``.shape``, ``.copy()``: ``np.ndarray``'s attributes)?  (A list of objects,
    ``layers = [Dense(W, b), ...]``, stays the lowering's, which binds a loop's
    variable to each object.)"""
    def item(n):
        return isinstance(n, gast.Name) and n.id in variables or \
            name is not None and isinstance(n, gast.Subscript) and root_name(n) == name
    for n in gast.walk(node):
        if isinstance(n, gast.Call) and item(n.func):
            return False
        if isinstance(n, gast.Attribute) and item(n.value) and not hasattr(np.ndarray, n.attr):
            return False
    return True


def _display_structure(value):
    """The structure of a list, tuple or dict display (``structure_of``'s form,
    leaves only), or None."""
    if isinstance(value, (gast.List, gast.Tuple)) and \
            not any(isinstance(e, gast.Starred) for e in value.elts):
        return ("list" if isinstance(value, gast.List) else "tuple", ("leaf",) * len(value.elts))
    if isinstance(value, gast.Dict) and value.keys and all(
            isinstance(k, gast.Constant) and type(k.value) in (str, int) for k in value.keys):
        keys = tuple(k.value for k in value.keys)
        if len(set(keys)) == len(keys):
            return ("dict", keys, ("leaf",) * len(keys))
    return None


def _key_target(loop, name, meant):
    """The name ``loop`` binds to each key of the dict ``name`` (``for k in d``,
    ``d.keys()``, ``for k, v in d.items()``), or None."""
    it, target = loop.iter, loop.target
    method = None
    if isinstance(it, gast.Call) and not it.args and not it.keywords and \
            isinstance(it.func, gast.Attribute):
        it, method = it.func.value, it.func.attr
    if not (isinstance(it, gast.Name) and it.id == name):
        return None
    if method in (None, "keys") and isinstance(target, gast.Name):
        return target
    if method == "items" and isinstance(target, (gast.Tuple, gast.List)) and \
            len(target.elts) == 2 and isinstance(target.elts[0], gast.Name):
        return target.elts[0]
    return None


def _structure_kept(fnode, name, meant, own, keys, key_names):
    """Is every mention of ``name`` but its bindings (ids ``own``) one of
    :func:`fixed_structures`' (``keys``: a dict's keys, else None;
    ``key_names``: its loops' key variables)?"""
    allowed = set()
    for n in gast.walk(fnode):
        if isinstance(n, gast.Subscript) and isinstance(n.value, gast.Name) and \
                n.value.id == name:
            if isinstance(n.ctx, gast.Del) or isinstance(n.slice, gast.Slice):
                return False
            if isinstance(n.ctx, gast.Store) and keys is not None and not (
                    isinstance(n.slice, gast.Constant) and n.slice.value in keys or
                    isinstance(n.slice, gast.Name) and n.slice.id in key_names):
                return False
            allowed.add(id(n.value))
        elif isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and \
                n.func.id == "len" and "len" in meant and len(n.args) == 1 and \
                not n.keywords:
            allowed.add(id(n.args[0]))
        elif isinstance(n, gast.For):
            allowed |= _iterated(n, meant, keywords=False)
    return all(id(n) in allowed or id(n) in own for n in gast.walk(fnode)
               if isinstance(n, gast.Name) and n.id == name)


def changes_its_variables(loop):
    """Does the body of ``loop`` change what a loop variable holds in place (``w -=
    g``, ``w[0] = v``, ``w.fill(0)``)?  (An item of the list it visits: the
    lowering's refusal names the form that does it, ``ws[k] -= g``.)"""
    names = {n.id for n in gast.walk(loop.target) if isinstance(n, gast.Name)}
    for st in loop.body:
        for n in gast.walk(st):
            if isinstance(n, gast.AugAssign) and root_name(n.target) in names:
                return True
            if isinstance(n, (gast.Subscript, gast.Attribute)) and \
                    isinstance(n.ctx, (gast.Store, gast.Del)) and root_name(n) in names:
                return True
            if isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and \
                    root_name(n.func.value) in names:
                return True
    return False


def only_read(fnode, name, meant, binding=None, also=(), bindings=frozenset()):
    """Is the parameter ``name`` only read, never bound, changed or handed on:
    every mention (but ``binding``, the statement's target that binds it) an
    item read (``P[k]``, ``P["W"]``), ``len(P)``, a loop's iterable (``P``,
    ``P.items()``, ``P.values()``, ``P.keys()``, given to ``enumerate`` or
    ``zip``) or one of the nodes ``also`` (their ids: the right side of ``a,
    *rest = P``, read whole)?  Then what it holds is what the call gave, from
    the first statement to the last."""
    allowed = set(also)
    for n in gast.walk(fnode):
        if isinstance(n, gast.Subscript) and isinstance(n.ctx, gast.Load):
            allowed.add(id(n.value))
        elif isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and \
                n.func.id == "len" and "len" in meant and len(n.args) == 1:
            allowed.add(id(n.args[0]))
        elif isinstance(n, gast.For):
            allowed |= _iterated(n, meant, keywords=True)
    mentions = [n for n in gast.walk(fnode) if isinstance(n, gast.Name) and n.id == name and
                n is not binding and id(n) not in bindings]
    if not all(isinstance(n.ctx, (gast.Load, gast.Param)) and
               (isinstance(n.ctx, gast.Param) or id(n) in allowed) for n in mentions):
        return False
    # nothing written into what it holds: P[0][1] = v, P[0].append(v), del P[0]
    for n in gast.walk(fnode):
        if isinstance(n, (gast.Subscript, gast.Attribute)) and \
                isinstance(n.ctx, (gast.Store, gast.Del)) and root_name(n) == name:
            return False
        if isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and \
                root_name(n.func.value) == name and isinstance(n.func.value, gast.Subscript):
            return False
    return True


def nested_kept(fnode, name, structure, meant):
    """Are the containers nested in the given container ``name`` (of
    ``structure``) kept as the call gave them: every name that may be bound to
    one of them (``layer = params[0]``, ``enc, dec = params``, ``for layer in
    params``, and so on from those) only read, as :func:`only_read` says, but
    for its bindings?  Then a path into it (``params[0]``) holds what the call
    gave."""
    kinds = {name: {structure}}  # name -> the structures it may hold (None: unknown)
    grown = True
    while grown:
        grown = False
        for n in gast.walk(fnode):
            if isinstance(n, gast.Assign) and isinstance(n.value, (gast.Name, gast.Subscript)) \
                    and root_name(n.value) in kinds:
                held = _held_by(n.value, kinds)
                pairs = [(t, held) for t in n.targets]
            elif isinstance(n, gast.For) and _mentioned_whole(n.iter, kinds):
                it, items, method = n.iter, {None}, None
                if isinstance(it, gast.Call) and not it.args and not it.keywords and \
                        isinstance(it.func, gast.Attribute) and \
                        it.func.attr in ("values", "items"):
                    it, method = it.func.value, it.func.attr
                if isinstance(it, (gast.Name, gast.Subscript)) and root_name(it) in kinds:
                    items = _items_of(_held_by(it, kinds))
                pairs = [(n.target, items)]
                if method == "items" and isinstance(n.target, (gast.Tuple, gast.List)) and \
                        len(n.target.elts) == 2:  # for key, value in p.items()
                    pairs = [(n.target.elts[0], {"leaf"}), (n.target.elts[1], items)]
            else:
                continue
            for target, held in pairs:
                for t, sub in _unpacked(target, held):
                    if not sub <= kinds.get(t, set()):
                        kinds[t] = kinds.get(t, set()) | sub
                        grown = True
    return all(_only_read_but_bindings(fnode, alias, meant) for alias, held in kinds.items()
               if alias != name and held != {"leaf"})


def _mentioned_whole(node, names):
    """Does ``node`` mention one of ``names`` other than as ``len(name)``?"""
    measured = {id(n.args[0]) for n in gast.walk(node) if isinstance(n, gast.Call) and
                isinstance(n.func, gast.Name) and n.func.id == "len" and len(n.args) == 1}
    return any(isinstance(m, gast.Name) and m.id in names and id(m) not in measured
               for m in gast.walk(node))


def _held_by(path, kinds):
    """The structures ``path`` (a name of ``kinds``, subscripts of it) may hold."""
    if isinstance(path, gast.Name):
        return set(kinds[path.id])
    held = _held_by(path.value, kinds)
    if isinstance(path.slice, gast.Constant):
        out = set()
        for st in held:
            if st is None or st == "leaf" or st[0] not in ("list", "tuple", "dict"):
                return {None}
            keys = list(st[1] if st[0] == "dict" else range(len(st[1])))
            subs = st[2] if st[0] == "dict" else st[1]
            if path.slice.value not in keys:
                return {None}
            out.add(subs[keys.index(path.slice.value)])
        return out
    return _items_of(held)


def _items_of(held):
    """The structures the items of containers of structures ``held`` may hold."""
    out = set()
    for st in held:
        if st is None or st == "leaf" or st[0] not in ("list", "tuple", "dict"):
            return {None}
        out.update(st[2] if st[0] == "dict" else st[1])
    return out or {None}


def _unpacked(target, held):
    """(name, structures) for each name ``target`` binds from a value of
    structures ``held``."""
    if isinstance(target, gast.Name):
        return [(target.id, held)]
    if isinstance(target, (gast.Tuple, gast.List)) and \
            not any(isinstance(t, gast.Starred) for t in target.elts):
        width = len(target.elts)
        if all(st is not None and st != "leaf" and st[0] in ("list", "tuple") and
               len(st[1]) == width for st in held):
            return [pair for k, t in enumerate(target.elts)
                    for pair in _unpacked(t, {st[1][k] for st in held})]
    return [(t.id, {None}) for t in gast.walk(target) if isinstance(t, gast.Name)]


def _only_read_but_bindings(fnode, name, meant):
    """:func:`only_read` of ``name``, its bindings by assignments and loops (whole
    names, not into it) aside."""
    bindings = {id(t) for n in gast.walk(fnode) if isinstance(n, (gast.Assign, gast.For))
                for target in (n.targets if isinstance(n, gast.Assign) else [n.target])
                for t in gast.walk(target) if isinstance(t, gast.Name) and t.id == name and
                (target is t or isinstance(target, (gast.Tuple, gast.List)))}
    return only_read(fnode, name, meant, also=(), bindings=bindings)
