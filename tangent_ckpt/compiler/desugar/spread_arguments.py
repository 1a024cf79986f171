"""Desugar: ``g(*(a, b))`` and ``g(**{"k": v})`` -- a spread of a display -- as
the plain arguments they are, ``g(a, b, k=v)``.

Python evaluates a call's positional arguments (a spread one's items too) left
to right, then its keywords; a display spread in place is those items in that
order, so writing them out changes nothing.  The same holds for a name bound
once, at the top level of the function's body, to a tuple display (or to a
list or dict display that nothing but a spread reads) whose items are
constants or names nothing rebinds (a parameter the function never assigns, a
name of its module, a name bound once before, at the top level): its spreads
after the binding are its items::

    pair = (x, y)                 ->   product(x, y)
    product(*pair)

(the binding goes where nothing reads the name any more: it computes nothing).
The inliner then writes the function's body where it is called (a call with a
spread it leaves to the lowering).  A dict display spread must have constant
string keys, none repeated and none the call names otherwise (Python refuses
those); any other spread (``*x`` of an array, ``*x.shape``, the ``**kwargs``
of a function the lowering inlines) is left for the lowering.
"""

import gast

from tangent_ckpt.compiler.desugar.view_shape import copy_node


def write_spread_arguments(fnode):
    """Rewrite, in ``fnode`` (in place), every spread of a display as its items.
    Returns whether any was rewritten."""
    if not any(isinstance(n, gast.Starred) or isinstance(n, gast.keyword) and n.arg is None
               for n in gast.walk(fnode)):
        return False
    displays, bindings = _bound_displays(fnode)
    rewritten = False
    for node in gast.walk(fnode):
        if isinstance(node, gast.Call):
            rewritten = _spread_call(node, displays) or rewritten
    if rewritten and bindings:  # a binding nothing reads now: its items are names
        read = {n.id for n in gast.walk(fnode)
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}
        fnode.body[:] = [s for s in fnode.body
                         if not (id(s) in bindings and s.targets[0].id not in read)] or \
            [gast.Pass()]
    return rewritten


def _spread_call(call, displays):
    """Write ``call``'s spreads of displays as items, in place; whether any was."""
    args, changed = [], False
    for a in call.args:
        display = _items(a.value, displays, (gast.Tuple, gast.List)) \
            if isinstance(a, gast.Starred) else None
        items = display.elts if display is not None else None
        if items is None or any(isinstance(i, gast.Starred) for i in items):
            args.append(a)
            continue
        args.extend(items)
        changed = True
    named = [k.arg for k in call.keywords if k.arg is not None]
    spread = [_items(k.value, displays, (gast.Dict,)) for k in call.keywords if k.arg is None]
    keys = [key.value for d in spread if d is not None for key in d.keys
            if isinstance(key, gast.Constant)]
    keywords = []
    for k in call.keywords:
        d = _items(k.value, displays, (gast.Dict,)) if k.arg is None else None
        if d is None or not all(isinstance(key, gast.Constant) and isinstance(key.value, str)
                                for key in d.keys) or \
                len(set(keys)) != len(keys) or set(keys) & set(named):
            keywords.append(k)
            continue
        keywords.extend(gast.copy_location(gast.keyword(arg=key.value, value=value), k)
                        for key, value in zip(d.keys, d.values))
        changed = True
    if changed:
        call.args, call.keywords = args, keywords
    return changed


def _items(node, displays, kinds):
    """The display ``node`` is (itself, or a copy of the one a name stands for),
    where it is one of ``kinds``; else None."""
    if isinstance(node, kinds):
        return node
    if isinstance(node, gast.Name) and id(node) in displays:
        display = displays[id(node)]
        if not isinstance(display, kinds):
            return None
        display = copy_node(display)
        for n in gast.walk(display):  # read where the spread is
            gast.copy_location(n, node)
        return display
    return None


def _bound_displays(fnode):
    """({id of a name read in a spread: the display it surely stands for}, the
    ids of the statements binding those names)."""
    counts, declared = {}, set()
    for n in gast.walk(fnode):
        if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load):
            counts[n.id] = counts.get(n.id, 0) + 1
        elif isinstance(n, (gast.FunctionDef, gast.ClassDef)) and n is not fnode:
            counts[n.name] = counts.get(n.name, 0) + 1
        elif isinstance(n, (gast.Global, gast.Nonlocal)):
            declared |= set(n.names)
        elif isinstance(n, (gast.Import, gast.ImportFrom)):
            declared |= {(a.asname or a.name).split(".")[0] for a in n.names}
    own = {a.id for a in fnode.args.posonlyargs + fnode.args.args + fnode.args.kwonlyargs}

    def fixed(item, k):
        """Does ``item`` (of the display bound by ``fnode.body[k]``) hold the same
        object wherever the name bound to the display is read after it?"""
        if isinstance(item, gast.Constant):
            return True
        if isinstance(item, gast.Starred):
            return fixed(item.value, k)
        times = counts.get(item.id, 0) if isinstance(item, gast.Name) else None
        if times is None or item.id in declared:
            return False
        return times == 0 or times == 1 and (item.id in own or any(
            isinstance(s, gast.Assign) and any(isinstance(t, gast.Name) and t.id == item.id
                                               for t in s.targets)
            for s in fnode.body[:k]))  # bound once, before, at the top level

    found, bindings = {}, set()
    for k, stmt in enumerate(fnode.body):
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and
                isinstance(stmt.targets[0], gast.Name) and
                isinstance(stmt.value, (gast.Tuple, gast.List, gast.Dict))):
            continue
        name, display = stmt.targets[0].id, stmt.value
        values = display.values if isinstance(display, gast.Dict) else display.elts
        if counts.get(name) != 1 or name in declared or \
                not all(fixed(v, k) for v in values) or \
                isinstance(display, gast.Dict) and not all(
                    isinstance(key, gast.Constant) for key in display.keys):
            continue
        spreads, other = _reads(fnode, k, name)
        if other is None or other and not isinstance(display, gast.Tuple):
            continue  # read before, or a list or dict that something else reads
        found.update((id(n), display) for n in spreads)
        bindings.add(id(stmt))
    return found, bindings


def _reads(fnode, k, name):
    """(the reads of ``name`` spread in a call after ``fnode.body[k]``, how many
    others there are), or (None, None) where one comes before."""
    spread = set()
    for n in gast.walk(fnode):
        if isinstance(n, gast.Starred) and isinstance(n.value, gast.Name):
            spread.add(id(n.value))
        elif isinstance(n, gast.keyword) and n.arg is None and isinstance(n.value, gast.Name):
            spread.add(id(n.value))
    for s in fnode.body[:k + 1]:
        if any(isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load)
               for n in gast.walk(s)):
            return None, None
    reads = [n for s in fnode.body[k + 1:] for n in gast.walk(s)
             if isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load)]
    spreads = [n for n in reads if id(n) in spread]
    return spreads, len(reads) - len(spreads)
