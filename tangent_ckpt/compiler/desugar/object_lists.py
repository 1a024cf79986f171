"""Desugar: a list or tuple of objects the function makes, one name per object.

``layers = [Dense(W1, b1), Tanh(), Dense(W2, b2)]`` whose items are only read
(``layers[1]``, ``len(layers)``, ``for layer in layers``, ``reversed(layers)``,
``enumerate(layers)``, ``for i in range(len(layers))``, ``[f(l) for l in
layers]``) is a fixed row of objects: each becomes a name bound where the list
is made, and each loop over the list its body once per object, with the
object's name in place of the loop's variable (the index, where the loop has
one, bound to its number first)::

    layers = [Dense(W1, b1), Tanh()]      ->      layers_0 = Dense(W1, b1)
    for layer in layers:                          layers_1 = Tanh()
        h = layer.forward(h)                      h = layers_0.forward(h)
                                                  h = layers_1.forward(h)

A list made empty and filled by appends, each a statement of the same block
(``layers = []``, ``layers.append(Dense(W1, b1))``, ...), nothing reading it
before the last, is the same row: each append binds its object's name.  A list
comprehension of objects over a range of a number or a display of names
and numbers (``[Adam(p) for p in (W, b)]``) is the list of its items written
out first; a list comprehension over the list (or a generator of it summed,
``sum(np.sum(p.a) for p in pairs)``), the list of its items written out.
``first, act = Dense(W1, b1), Tanh()`` is split the same way, into one binding
per object, where no item reads a name the statement binds.  Each object is
then made by ``name = Cls(...)``, which ``inline_functions.py`` (run after this
pass) inlines and ``scalar_objects.py`` writes as one name per attribute.

That is the same program exactly when: every item is a construction
``Cls(...)`` of a class whose objects desugar makes (no ``*`` spread), the list's
name is bound by that statement alone and read only in the forms above (a
subscript by a number in range, or by the index of a loop over the list that
the loop's body does not rebind), a loop over it has no ``else``, no ``break``
or ``continue`` and no ``def``, ``lambda`` or comprehension in its body, does
not rebind its variables, and its object variable is read nowhere but in its
body (or in the body of another loop binding it).  Any other list stays as it
is, for the lowering.
"""

import copy

import gast

from tangent_ckpt.compiler.desugar.inline_functions import copied
from tangent_ckpt.compiler.desugar.local_bindings import (
    COMPREHENSIONS, SCOPES, builtins_meant, local_names,
)
from tangent_ckpt.compiler.desugar.view_facts import resolve_dotted
from tangent_ckpt.compiler.desugar.view_shape import (
    fresh_name, located, name_node, names_taken, statement_lists, store_node,
)
from tangent_ckpt.compiler.desugar import records
from tangent_ckpt.compiler.desugar.scalar_objects import replaceable_class

#: the loops a list of objects may be unrolled in (by what their ``iter`` calls)
_LOOP_CALLS = ("reversed", "enumerate")


def split_object_lists(parsed):
    """Rewrite, in place, each list or tuple of objects of ``parsed.node`` that is
    nothing but its items, and each tuple assignment of constructions (see the
    module's docstring); whether a list was."""
    fnode = parsed.node
    local = local_names(fnode)
    taken = names_taken(fnode) | set(parsed.globals) | set(parsed.closure)
    _split_tuple_bindings(parsed, fnode, local)
    split = False
    for block, stmt in [(b, s) for b in statement_lists(fnode) for s in b]:
        made = _object_list(stmt, parsed, local) or \
            _appended(fnode, block, stmt, parsed, local)
        if made is None or _bindings(fnode, made[0]) != 1:
            continue
        trial = copied(parsed, fnode)
        items = _split(parsed, trial, made[0], len(made[1]), taken, local,
                       appends=_empty_list(stmt, made[0]))
        if items is not None:
            fnode.body = trial.body
            split = True
    return split


def _made(call, parsed, local):
    """Is ``call`` a construction ``Cls(...)`` of a class desugar writes as names?"""
    if not isinstance(call, gast.Call) or any(isinstance(a, gast.Starred) for a in call.args) \
            or any(k.arg is None for k in call.keywords):
        return False
    cls = resolve_dotted(call.func, parsed.resolve, local)
    return replaceable_class(cls) or records.record_class(cls)


def _object_list(stmt, parsed, local):
    """``(name, constructions)`` where ``stmt`` is ``name = [Cls(...), ...]`` (or a
    tuple), or ``name = [Cls(...) for v in range(2)]`` (see :func:`_comprehended`),
    else None."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and
            isinstance(stmt.targets[0], gast.Name)):
        return None
    value = stmt.value
    items = value.elts if isinstance(value, (gast.List, gast.Tuple)) else \
        _comprehended(value, parsed, local)
    if not items or not all(_made(e, parsed, local) for e in items):
        return None
    return stmt.targets[0].id, items


def _comprehended(node, parsed, local):
    """The items ``[Cls(k) for k in range(2)]`` makes, written out (``[Cls(0),
    Cls(1)]``), where its one ``for`` has no ``if``, runs over ``range`` of a
    number or over a tuple or list display of names and numbers (or of tuples
    of them, unpacked into names), and its item reads its variables only
    (no nested function, comprehension or ``:=``); else None."""
    if not (isinstance(node, gast.ListComp) and len(node.generators) == 1):
        return None
    loop = node.generators[0]
    if loop.ifs or loop.is_async or any(
            isinstance(n, SCOPES + COMPREHENSIONS + (gast.NamedExpr,))
            for n in gast.walk(node.elt)):
        return None
    it = loop.iter
    if isinstance(it, gast.Call) and _builtin(it.func, "range", parsed) and \
            len(it.args) == 1 and not it.keywords and _number(it.args[0]) is not None:
        values = [gast.Constant(value=k, kind=None) for k in range(_number(it.args[0]))]
    elif isinstance(it, (gast.Tuple, gast.List)) and \
            all(_plain_item(e) for e in it.elts):
        values = it.elts
    else:
        return None
    out = []
    for value in values:
        bound = _unpacked(loop.target, value)
        if bound is None:
            return None
        out.append(_Bound(bound).visit(copied(parsed, node.elt)))
    return out


def _plain_item(node):
    """A name, a number or a tuple of them (read as written, each time)."""
    if isinstance(node, gast.Tuple):
        return all(_plain_item(e) for e in node.elts)
    return isinstance(node, gast.Name) or \
        isinstance(node, gast.Constant) and isinstance(node.value, (int, float))


def _unpacked(target, value):
    """{variable: expression} the comprehension's ``target`` binds to ``value``."""
    if isinstance(target, gast.Name):
        return {target.id: value}
    if isinstance(target, gast.Tuple) and isinstance(value, gast.Tuple) and \
            len(target.elts) == len(value.elts):
        bound = {}
        for t, v in zip(target.elts, value.elts):
            inner = _unpacked(t, v)
            if inner is None:
                return None
            bound.update(inner)
        return bound
    return None


class _Bound(gast.NodeTransformer):
    """An expression with each read of a variable of ``bound`` its value."""

    def __init__(self, bound):
        self.bound = bound

    def visit_Name(self, node):
        if node.id in self.bound and isinstance(node.ctx, gast.Load):
            return gast.copy_location(copy.deepcopy(self.bound[node.id]), node)
        return node


def _appended(fnode, block, stmt, parsed, local):
    """``(name, constructions)`` where ``stmt`` is ``name = []`` and the statements
    after it in ``block`` append constructions to it (``name.append(Cls(...))``),
    each a statement of its own, nothing else reading ``name`` before the last
    (and nothing else in ``fnode`` appending to it); else None."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and
            isinstance(stmt.targets[0], gast.Name) and _empty_list(stmt, stmt.targets[0].id)):
        return None
    name = stmt.targets[0].id
    after = block[block.index(stmt) + 1:]
    made, last = [], -1
    for k, s in enumerate(after):
        call = _append(s, name)
        if call is not None:
            if not _made(call, parsed, local):
                return None
            made.append(call)
            last = k
    reads = [n for s in after[:last + 1] for n in gast.walk(s)
             if isinstance(n, gast.Name) and n.id == name]
    everywhere = [n for n in gast.walk(fnode) if isinstance(n, gast.Attribute) and
                  isinstance(n.value, gast.Name) and n.value.id == name]
    if not made or len(reads) != len(made) or \
            len([n for n in everywhere if n.attr == "append"]) != len(made):
        return None  # (read between the appends, or appended to elsewhere)
    return name, made


def _empty_list(stmt, name):
    """Is ``stmt`` ``name = []``?"""
    return isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
        isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id == name and \
        isinstance(stmt.value, gast.List) and not stmt.value.elts


def _append(stmt, name):
    """The one argument of ``stmt``, ``name.append(arg)``, else None."""
    if not (isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call)):
        return None
    call = stmt.value
    if isinstance(call.func, gast.Attribute) and call.func.attr == "append" and \
            isinstance(call.func.value, gast.Name) and call.func.value.id == name and \
            len(call.args) == 1 and not call.keywords:
        return call.args[0]
    return None


def _bindings(fnode, name):
    """How many times ``fnode`` binds or deletes ``name`` (a nested scope naming
    it at all counts as many)."""
    count = 0
    for node in gast.walk(fnode):
        if node is not fnode and isinstance(node, SCOPES) and any(
                isinstance(n, gast.Name) and n.id == name for n in gast.walk(node)):
            return 2
        if isinstance(node, gast.Name) and node.id == name and \
                not isinstance(node.ctx, gast.Load):
            count += 1
    return count


def _builtin(node, name, parsed):
    """Is ``node`` the name of the builtin ``name`` (not a local or a global)?"""
    return isinstance(node, gast.Name) and node.id == name and \
        bool(builtins_meant((name,), parsed.node, parsed.resolve))


def _split(parsed, fnode, name, size, taken, local, appends=False):
    """Rewrite ``fnode`` (a copy) with the list ``name`` of ``size`` objects as
    ``size`` names; None (``fnode`` then half written) where a use of the list is
    none of the forms the module's docstring lists.  ``appends``: the list is
    made ``name = []`` and filled by ``name.append(Cls(...))`` statements."""
    items = [fresh_name(f"{name}_{k}", set(taken)) for k in range(size)]
    indices = set()
    appended = 0
    for block in statement_lists(fnode):
        k = 0
        while k < len(block):
            stmt = block[k]
            found = _object_list(stmt, parsed, local)
            if found is not None and found[0] == name:
                made = [located(gast.Assign(targets=[store_node(item)], value=None,
                                            type_comment=None), stmt) for item in items]
                for value, where in zip(found[1], made):
                    where.value = value  # (the constructions keep their own places)
                block[k:k + 1] = made
                k += len(made)
                continue
            if appends and _empty_list(stmt, name):  # layers = [] before its appends
                del block[k]
                continue
            if appends and _append(stmt, name) is not None:  # layers.append(Dense(W, b))
                made = located(gast.Assign(targets=[store_node(items[appended])], value=None,
                                           type_comment=None), stmt)
                made.value = _append(stmt, name)
                block[k] = made
                appended += 1
                k += 1
                continue
            unrolled = _unrolled(parsed, fnode, stmt, name, items, indices)
            if unrolled is False:
                return None
            if unrolled is None:
                k += 1
                continue
            block[k:k + 1] = unrolled  # (its copies are visited next: nested loops)
    if not _Items(parsed, name, items).rewrite(fnode):
        return None
    _drop_unread_indices(fnode, indices)
    for item in items:
        taken.add(item)
        parsed.spellings[item] = f"{parsed.spellings.get(name, name)}[{items.index(item)}]"
    return items


def _loop_over(stmt, name, parsed):
    """``(order, index, variable)`` of a loop ``stmt`` over the list ``name``:
    the items' positions in the order it visits them, the name bound to each
    position (or None) and the name bound to each object (or None); None for any
    other statement, False for a loop over the list this pass cannot unroll."""
    if not isinstance(stmt, gast.For):
        return None
    it, target = stmt.iter, stmt.target
    if isinstance(it, gast.Name) and it.id == name:
        kind, ok = "items", isinstance(target, gast.Name)
    elif isinstance(it, gast.Call) and len(it.args) == 1 and not it.keywords and \
            isinstance(it.args[0], gast.Name) and it.args[0].id == name and \
            any(_builtin(it.func, f, parsed) for f in _LOOP_CALLS):
        kind = it.func.id
        ok = isinstance(target, gast.Name) if kind == "reversed" else \
            isinstance(target, gast.Tuple) and len(target.elts) == 2 and \
            all(isinstance(e, gast.Name) for e in target.elts)
    elif isinstance(it, gast.Call) and _builtin(it.func, "range", parsed) and \
            len(it.args) == 1 and not it.keywords and isinstance(it.args[0], gast.Call) and \
            _builtin(it.args[0].func, "len", parsed) and len(it.args[0].args) == 1 and \
            isinstance(it.args[0].args[0], gast.Name) and it.args[0].args[0].id == name:
        kind, ok = "range", isinstance(target, gast.Name)
    else:
        return None
    if not ok or stmt.orelse:
        return False
    if kind == "items":
        return "forward", None, target.id
    if kind == "reversed":
        return "backward", None, target.id
    if kind == "enumerate":
        return "forward", target.elts[0].id, target.elts[1].id
    return "forward", target.id, None


def _unrolled(parsed, fnode, stmt, name, items, indices):
    """The statements a loop ``stmt`` over the list ``name`` unrolls to, None
    where ``stmt`` is no such loop, False where it is one this pass cannot
    unroll (``indices``: the ids of the bindings of its index it adds)."""
    loop = _loop_over(stmt, name, parsed)
    if not loop:
        return loop
    order, index, var = loop
    bound = {index, var} - {None}
    for node in (n for st in stmt.body for n in gast.walk(st)):
        if isinstance(node, SCOPES + COMPREHENSIONS + (
                gast.Break, gast.Continue, gast.Global, gast.Nonlocal, gast.Yield,
                gast.YieldFrom, gast.NamedExpr)):
            return False
        if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load) and \
                node.id in bound:
            return False
    if var is not None and _read_elsewhere(fnode, stmt, var):
        return False
    positions = list(range(len(items)))
    if order == "backward":
        positions.reverse()
    out = []
    for k in positions:
        if index is not None:
            out.append(located(gast.Assign(targets=[store_node(index)],
                                           value=gast.Constant(value=k, kind=None),
                                           type_comment=None), stmt))
            indices.add(id(out[-1]))
        for st in stmt.body:
            out.append(_Trip(name, index, var, k, items[k]).visit(copied(parsed, st)))
    return out


def _drop_unread_indices(fnode, indices):
    """Remove the bindings ``indices`` (their ids) of unrolled loops' indices that
    nothing reads."""
    read = {n.id for n in gast.walk(fnode) if isinstance(n, gast.Name)
            and isinstance(n.ctx, gast.Load)}
    for block in statement_lists(fnode):
        block[:] = [s for s in block if id(s) not in indices or s.targets[0].id in read]


def _read_elsewhere(fnode, loop, var):
    """Is ``var`` read in ``fnode`` outside ``loop``'s body, other than in the body
    of another loop binding it (which reads its own binding)?"""
    inside = set()
    for node in gast.walk(fnode):
        if isinstance(node, gast.For) and (node is loop or any(
                isinstance(n, gast.Name) and n.id == var for n in gast.walk(node.target))):
            inside |= {id(n) for st in node.body for n in gast.walk(st)}
    return any(isinstance(n, gast.Name) and n.id == var and isinstance(n.ctx, gast.Load)
               and id(n) not in inside for n in gast.walk(fnode))


class _Trip(gast.NodeTransformer):
    """One trip's copy of a loop's body: the object variable ``var`` read as the
    item's name ``item``, ``name[index]`` as ``item`` too."""

    def __init__(self, name, index, var, k, item):
        self.name, self.index, self.var, self.k, self.item = name, index, var, k, item

    def visit_Name(self, node):
        if node.id == self.var and isinstance(node.ctx, gast.Load):
            return gast.copy_location(name_node(self.item), node)
        return node

    def visit_Subscript(self, node):
        if isinstance(node.value, gast.Name) and node.value.id == self.name and \
                isinstance(node.slice, gast.Name) and node.slice.id == self.index and \
                isinstance(node.ctx, gast.Load) and self.index is not None:
            return gast.copy_location(name_node(self.item), node)
        return self.generic_visit(node)


class _Items(gast.NodeTransformer):
    """``name[k]`` (a number in range) as the item's name, ``len(name)`` as the
    number of items; :meth:`rewrite` says whether no other read of ``name`` is
    left."""

    def __init__(self, parsed, name, items):
        self.parsed, self.name, self.items = parsed, name, items

    def rewrite(self, fnode):
        self.visit(fnode)
        return not any(isinstance(n, gast.Name) and n.id == self.name
                       for n in gast.walk(fnode))

    def visit_Subscript(self, node):
        k = _number(node.slice)
        if isinstance(node.value, gast.Name) and node.value.id == self.name and \
                isinstance(node.ctx, gast.Load) and k is not None and \
                -len(self.items) <= k < len(self.items):
            return gast.copy_location(name_node(self.items[k]), node)
        return self.generic_visit(node)

    def visit_Call(self, node):
        if _builtin(node.func, "len", self.parsed) and len(node.args) == 1 and \
                not node.keywords and isinstance(node.args[0], gast.Name) and \
                node.args[0].id == self.name:
            return gast.copy_location(gast.Constant(value=len(self.items), kind=None), node)
        if _builtin(node.func, "sum", self.parsed) and len(node.args) == 1 and \
                not node.keywords and isinstance(node.args[0], gast.GeneratorExp):
            items = self.written_out(node.args[0])  # (sum takes every item: no laziness)
            if items is not None:
                node.args[0] = gast.copy_location(items, node.args[0])
        return self.generic_visit(node)

    def visit_ListComp(self, node):
        items = self.written_out(node)
        return gast.copy_location(items, node) if items is not None else \
            self.generic_visit(node)

    def written_out(self, node):
        """``[f(p) for p in name]`` (or the generator's items) as the list display
        ``[f(name_0), f(name_1)]``, where its one ``for`` binds a name, has no
        ``if`` and its item holds no nested function, comprehension or ``:=``;
        else None."""
        if len(node.generators) != 1:
            return None
        loop = node.generators[0]
        if loop.ifs or loop.is_async or not isinstance(loop.target, gast.Name) or \
                not (isinstance(loop.iter, gast.Name) and loop.iter.id == self.name) or \
                any(isinstance(n, SCOPES + COMPREHENSIONS + (gast.NamedExpr,))
                    for n in gast.walk(node.elt)):
            return None
        elts = [self.visit(_Bound({loop.target.id: name_node(item)}).visit(
            copied(self.parsed, node.elt))) for item in self.items]
        return gast.List(elts=elts, ctx=gast.Load())


def _number(node):
    """The int ``node`` writes (``2``, ``-1``), else None."""
    if isinstance(node, gast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        k = _number(node.operand)
        return None if k is None else -k
    return None


def _split_tuple_bindings(parsed, fnode, local):
    """``a, b = Cls(...), Other(...)`` as ``a = Cls(...)`` then ``b = Other(...)``,
    where the targets are distinct plain names none of the values reads (nor a
    nested function of ``fnode``: it might run in a value), and one value at
    least is a construction of a class desugar writes as names."""
    nested = {n.id for node in gast.walk(fnode) if node is not fnode and
              isinstance(node, SCOPES) for n in gast.walk(node) if isinstance(n, gast.Name)}
    for block in statement_lists(fnode):
        k = 0
        while k < len(block):
            stmt = block[k]
            k += 1
            if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and
                    isinstance(stmt.targets[0], (gast.Tuple, gast.List)) and
                    isinstance(stmt.value, (gast.Tuple, gast.List))):
                continue
            targets, values = stmt.targets[0].elts, stmt.value.elts
            if len(targets) != len(values) or \
                    not all(isinstance(t, gast.Name) for t in targets) or \
                    any(isinstance(v, gast.Starred) for v in values) or \
                    not any(_made(v, parsed, local) for v in values):
                continue
            names = [t.id for t in targets]
            read = {n.id for v in values for n in gast.walk(v) if isinstance(n, gast.Name)}
            if len(set(names)) != len(names) or set(names) & (read | nested):
                continue
            split = [located(gast.Assign(targets=[store_node(t)], value=None,
                                         type_comment=None), stmt) for t in names]
            for one, value in zip(split, values):
                one.value = value
            block[k - 1:k] = split
            k += len(split) - 1
