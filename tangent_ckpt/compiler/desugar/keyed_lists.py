"""Desugar: a dict of constant keys whose items the code changes through their
own methods (a log of lists), as one name per key.

    log = {"loss": [], "err": []}          log_loss = []
                                           log_err = []
    for t in range(n):                     for t in range(n):
        log["loss"].append(l)       ->         log_loss.append(l)
    return log["loss"][-1]                 return log_loss[-1]

Training and solver loops keep their histories so (POT's ``log['err']``,
``history['loss']``).  The lowering holds a dict's items as values, and a method
that changes an item in place (``.append``) is no value it can follow: it
refused such a write.  As names, the items are lists the function holds under
one name each, which ``list_methods.py`` and the lowering follow like any other.

Rewritten only where the dict is nothing but its items: a local (not a
parameter, ``global``/``nonlocal``, nor mentioned by a nested function, lambda
or class), bound by exactly one statement ``d = {k: v, ...}`` whose keys are
distinct ``str`` or ``int`` constants, and every other mention ``d[k]`` of one
of those keys -- read, stored (``d[k] = v``, ``d[k] += v``: the name rebound, as
the item is), never deleted, handed on, iterated, measured or asked for its
truth -- with at least one ``d[k].method(...)``.  Python's dict then maps each
key, all along, to the object last stored at it, which is what its name holds;
the values are evaluated in the display's order, each bound to its name.  Any
other dict is left as written, for the lowering (its items as values)."""

import gast

from tangent_ckpt.compiler.desugar.local_bindings import names_seen_outside
from tangent_ckpt.compiler.desugar.view_shape import (ReplacedNodes, fresh_name, located,
                                                      names_taken, store_node)


def split_keyed_lists(parsed):
    """Rewrite, in ``parsed.node``, each dict of constant keys as above."""
    fnode = parsed.node
    parents = {}
    for node in gast.walk(fnode):
        for child in gast.iter_child_nodes(node):
            parents[child] = node
    bindings = _display_bindings(fnode, parents)
    if not bindings:
        return
    excluded = names_seen_outside(fnode)
    taken = None
    for name, statement in sorted(bindings.items()):
        if name in excluded:
            continue
        keys = [k.value for k in statement.value.keys]
        uses = _item_uses(fnode, name, statement, set(keys), parents)
        if uses is None or not any(_method_called(u, parents) for u in uses):
            continue
        taken = names_taken(fnode) if taken is None else taken
        names = {key: fresh_name(f"{name}_{key}" if isinstance(key, str) and key.isidentifier()
                                 else f"{name}_item", taken) for key in keys}
        for key, new in names.items():
            parsed.spellings[new] = f"{parsed.spellings.get(name, name)}[{key!r}]"
        ReplacedNodes({id(use): gast.copy_location(
            gast.Name(id=names[use.slice.value], ctx=use.ctx, annotation=None,
                      type_comment=None), use) for use in uses}).visit(fnode)
        block = _block_of(statement, parents)
        at = block.index(statement)
        block[at:at + 1] = [located(gast.Assign(targets=[store_node(names[k.value])], value=v,
                                                type_comment=None), statement)
                            for k, v in zip(statement.value.keys, statement.value.values)]


def _display_bindings(fnode, parents):
    """{name: the one statement binding it}: names whose only binding is a plain
    ``name = {k: v, ...}`` of distinct str/int constant keys, in a statement list."""
    stores, displays = {}, {}
    for node in gast.walk(fnode):
        if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Del)):
            stores[node.id] = stores.get(node.id, 0) + 1
        if isinstance(node, gast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], gast.Name) and isinstance(node.value, gast.Dict):
            keys = node.value.keys
            if keys and all(isinstance(k, gast.Constant) and type(k.value) in (str, int)
                            for k in keys) and len({k.value for k in keys}) == len(keys) and \
                    _block_of(node, parents) is not None:
                displays[node.targets[0].id] = node
    return {name: s for name, s in displays.items() if stores.get(name) == 1}


def _item_uses(fnode, name, statement, keys, parents):
    """The ``name[k]`` nodes of every mention of ``name`` but its binding, or None
    where one mention is anything else (or deletes an item)."""
    uses = []
    for node in gast.walk(fnode):
        if not (isinstance(node, gast.Name) and node.id == name) or \
                node is statement.targets[0]:
            continue
        parent = parents.get(node)
        if not (isinstance(parent, gast.Subscript) and parent.value is node and
                isinstance(parent.slice, gast.Constant) and
                type(parent.slice.value) in (str, int) and parent.slice.value in keys and
                not isinstance(parent.ctx, gast.Del)):
            return None
        uses.append(parent)
    return uses


def _method_called(use, parents):
    """Is ``use`` (``d[k]``) the object of a method call, ``d[k].append(v)``?"""
    parent = parents.get(use)
    return isinstance(parent, gast.Attribute) and parent.value is use and \
        isinstance(parents.get(parent), gast.Call) and parents[parent].func is parent


def _block_of(statement, parents):
    """The statement list holding ``statement``, or None."""
    parent = parents.get(statement)
    for _, value in gast.iter_fields(parent) if parent is not None else ():
        if isinstance(value, list) and any(v is statement for v in value):
            return value
    return None
