"""Desugar: a list, tuple or dict of objects the function makes, one name per object.

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

A list made empty (or by a display of such items) and filled by appends, each
a statement of the same block (``layers = []``, ``layers.append(Dense(W1, b1))``,
...), nothing reading it before the last, is the same row (the display's items
first): each append binds its object's name.  A loop after it in the block
whose body appends constructions to it (``for k in range(3): layers.append(
Dense(W * k, b))``, over a display, ``enumerate`` or ``zip`` of them, a list
the call gives) is first written as its trips, as ``static_loops.py`` writes
them (:func:`~.static_loops.unrolled_loop`; a ``range`` of numbers written out
as the display of its numbers), where the list then is such a row (else the
loop stays).  A list
comprehension of objects over a range of a number, a display of names
and numbers (``[Adam(p) for p in (W, b)]``) or a list or tuple the call gives
that the function only reads (``[Dense(W) for W in Ws]``, as ``Dense(Ws[0])``,
...) is the list of its items written
out first; a list comprehension over the list (or a generator of it given to
a builtin that takes every item, ``sum(np.sum(p.a) for p in pairs)``,
``max(p.x[0] for p in parts)``), the list of its items written out.
``first, act = Dense(W1, b1), Tanh()`` is split the same way, into one binding
per object, where no item reads a name the statement binds.  Each object is
then made by ``name = Cls(...)``, which ``inline_functions.py`` (run after this
pass) inlines and ``scalar_objects.py`` writes as one name per attribute.

A dict display of distinct constant keys (strings or ints), ``opts = {"W":
Adam(W), "b": Adam(b)}``, read by those keys (``opts["W"]``), ``len`` and the
loops and comprehensions over its keys (``for k in opts``, ``opts.keys()``,
``reversed(opts)``, ``opts.values()``, ``opts.items()``, or a display of its
keys, ``for k in ("W", "b")``, whose body reads ``opts[k]``), is the same row in
the dict's order: ``opts_W = Adam(W)``, each trip binding the key first
(``k = "W"``) where it is read; a constant it holds (``"lr": 0.1``) is read as
itself.  An item that names an object the function makes once (``opt = Adam(W)``
then ``keep = [opt]``, see :func:`_alias`) is that object wherever the
container is read: it is read as ``opt``, which is then names like any other.

That is the same program exactly when: every item is a construction
``Cls(...)`` of a class whose objects desugar makes (no ``*`` spread), or such
an object's name, or a dict's constant, the container's
name is bound by that statement alone and read only in the forms above (a
subscript by a number in range or a key it has, or by the index of a loop over
it that the loop's body does not rebind), a loop over it has no ``else``, no ``break``
or ``continue`` and no ``def``, ``lambda`` or comprehension in its body, does
not rebind its variables, and its object variable is read nowhere but in its
body (or in the body of another loop binding it) or, where the loop is its one
binding, in the statements after the loop in its block: there Python reads
the last item (the loop has a trip and no ``break``), and so does the rewrite
(``for o in opts: ...`` then ``return loss * o.lr`` reads ``opts_1_lr``); read
outside the loop's block (``if c: for layer in layers: ...`` then ``layer.b``)
only as data attributes of the last item, made by a construction, that nothing
may change after the loop, the loop's block binds those fields after the loop
(``layer_b = layers_1.b``) and the reads are those names -- unbound where the
block did not run, as ``layer`` is in Python (:func:`_fields_read_later`).  A
comprehension that binds the loop's variable again (``sum(np.sum(p.pos) for p
in parts)`` after ``for p in parts:``) binds its own, in its own scope: neither
a binding nor a read of the loop's (:func:`_comprehensions_own`).  Any
other container stays as it is, for the lowering, which binds a loop's object
variable in the compiler as it unrolls the loop: where that variable is read
outside the loop's block, the block binds ``layer_bound = True`` after the loop
and the reading statement asserts it first, so that the generated code raises
Python's ``UnboundLocalError`` where the block did not run; a read of a
variable that loops on different paths bind is refused
(:func:`_guard_reads_outside`).
"""

import copy

import gast

from tangent_ckpt.compiler.desugar.inline_functions import copied
from tangent_ckpt.compiler.desugar.local_bindings import (
    COMPREHENSIONS, SCOPES, builtins_meant, local_names,
)
from tangent_ckpt.compiler.desugar.view_facts import resolve_dotted
from tangent_ckpt.compiler.desugar.view_shape import (
    ReplacedNodes, fresh_name, located, name_node, names_taken, statement_blocks,
    statement_lists, store_node,
)
from tangent_ckpt.errors import UnsupportedSyntaxError
from tangent_ckpt.compiler.frontend.parse import class_attribute
from tangent_ckpt.compiler.desugar import records
from tangent_ckpt.compiler.desugar.scalar_objects import replaceable_class
from tangent_ckpt.compiler.desugar.static_loops import only_read, unrolled_loop

#: the loops a list of objects may be unrolled in (by what their ``iter`` calls)
_LOOP_CALLS = ("reversed", "enumerate")


def split_object_lists(parsed, structures=None):
    """Rewrite, in place, each list, tuple or dict of objects of ``parsed.node``
    that is nothing but its items, and each tuple assignment of constructions (see
    the module's docstring); whether a container was.  ``structures``: {parameter:
    structure} of the lists, tuples and dicts the call gives
    (:func:`~.passes.given_containers`), which a loop filling a list may visit."""
    fnode = parsed.node
    local = local_names(fnode)
    taken = names_taken(fnode) | set(parsed.globals) | set(parsed.closure)
    _split_tuple_bindings(parsed, fnode, local)
    meant = builtins_meant(("enumerate", "zip", "len"), fnode, parsed.resolve)
    iterated = [id(n.iter) for n in gast.walk(fnode) if isinstance(n, gast.comprehension)]
    given = {name: structure for name, structure in (structures or {}).items()
             if structure[0] in ("list", "tuple") and
             only_read(fnode, name, meant, also=iterated)}
    split = False
    for block, stmt in [(b, s) for b in statement_lists(fnode) for s in b]:
        trial, row = None, _appended(fnode, block, stmt, parsed, local)
        if row is None:  # layers = []; for k in range(3): layers.append(Dense(...))
            trial, row = _appended_in_loops(parsed, fnode, block, stmt, local, structures)
        row = row or _object_row(fnode, block, stmt, parsed, local, given)
        if row is None or _bindings(fnode, row.name) != 1:
            continue
        trial = trial or copied(parsed, fnode)
        if _split(parsed, trial, row, taken, local, given):
            fnode.body = trial.body
            taken |= names_taken(fnode)  # (the names a loop's display was bound to)
            split = True
        else:
            _guard_reads_outside(parsed, fnode, row, taken)
    return split


class _Row:
    """What a container of objects holds: its ``name``, the ``kinds`` of its
    items in order (``"made"``: a construction ``Cls(...)``, bound to a new
    name; ``"alias"``: the name of an object made once (:func:`_alias`), read
    as that name; ``"constant"``: a constant a dict holds, read as itself), its
    ``keys`` (the constants of a dict display; None for a list or tuple) and
    whether it is filled by ``appends``."""

    def __init__(self, name, kinds, keys=None, appends=False):
        self.name, self.kinds, self.keys, self.appends = name, kinds, keys, appends


def _made(call, parsed, local):
    """Is ``call`` a construction ``Cls(...)`` of a class desugar writes as names?"""
    if not isinstance(call, gast.Call) or any(isinstance(a, gast.Starred) for a in call.args) \
            or any(k.arg is None for k in call.keywords):
        return False
    cls = resolve_dotted(call.func, parsed.resolve, local)
    return replaceable_class(cls) or records.record_class(cls)


def _object_row(fnode, block, stmt, parsed, local, given):
    """The :class:`_Row` of ``stmt``, ``name = [Cls(...), ...]`` (or a tuple, or
    ``name = [Cls(...) for v in range(2)]``, see :func:`_comprehended`; an item
    may also be the name of an object made once, :func:`_alias`) or ``name =
    {"a": Cls(...), ...}`` (distinct keys, each a string or an int; a value may
    also be a constant), else None."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and
            isinstance(stmt.targets[0], gast.Name)):
        return None
    value, keys = stmt.value, None
    if isinstance(value, gast.Dict):
        keys = [_key(k) for k in value.keys]
        if any(k is None for k in keys) or len(set(keys)) != len(keys):
            return None
    items = _items_of(value, parsed, local, given)
    if not items:
        return None
    kinds = []
    for item in items:
        if _made(item, parsed, local):
            kinds.append("made")
        elif _alias(fnode, block, stmt, item, parsed, local):
            kinds.append("alias")
        elif keys is not None and isinstance(item, gast.Constant):
            kinds.append("constant")
        else:
            return None
    if "constant" in kinds and set(kinds) == {"constant"}:
        return None
    return _Row(stmt.targets[0].id, kinds, [k[1] for k in keys] if keys else None)


def _items_of(value, parsed, local, given):
    """The item expressions of a display (a dict's values) or of a comprehension
    written out, else None."""
    if isinstance(value, (gast.List, gast.Tuple)):
        return value.elts
    if isinstance(value, gast.Dict):
        return value.values
    return _comprehended(value, parsed, local, given)


def _key(node):
    """``(type, value)`` of a dict key ``node`` that is a string or an int
    constant (not a bool: ``True == 1``), else None."""
    if node is None:
        return None  # (a ``**`` spread)
    if isinstance(node, gast.Constant) and type(node.value) is str:
        return str, node.value
    k = _number(node)
    return None if k is None else (int, k)


def _alias(fnode, block, stmt, item, parsed, local):
    """Is ``item`` (in the container ``stmt`` makes, a statement of ``block``) the
    name of an object that is surely the one the name holds wherever the
    container is read?  That is: the name is bound once in ``fnode``, by
    ``name = Cls(...)`` (a class desugar writes as names), and either that binding
    is a statement of the function's body before the one holding ``stmt`` (it
    runs once), or it is a statement of ``block`` before ``stmt`` with nothing
    between that jumps, in a function with no ``try`` (each run of the binding
    is followed by one of ``stmt``)."""
    if not isinstance(item, gast.Name) or _bindings(fnode, item.id) != 1:
        return False
    for where in statement_lists(fnode):
        for k, bound in enumerate(where):
            if isinstance(bound, gast.Assign) and len(bound.targets) == 1 and \
                    isinstance(bound.targets[0], gast.Name) and \
                    bound.targets[0].id == item.id:
                break
        else:
            continue
        if not _made(bound.value, parsed, local):
            return False
        if where is fnode.body:
            later = where[k + 1:]
            return any(n is stmt for s in later for n in gast.walk(s))
        if where is not block or stmt not in where[k + 1:]:
            return False
        between = where[k + 1:where.index(stmt)]
        return not any(isinstance(n, gast.Try) for n in gast.walk(fnode)) and \
            not any(isinstance(n, _JUMPS) for s in between for n in gast.walk(s))
    return False


#: statements after which the next statement of the block may not run
_JUMPS = (gast.Break, gast.Continue, gast.Return, gast.Raise)


def _comprehended(node, parsed, local, given):
    """The items ``[Cls(k) for k in range(2)]`` makes, written out (``[Cls(0),
    Cls(1)]``), where its one ``for`` has no ``if``, runs over ``range`` of a
    number or over a tuple or list display of names and numbers (or of tuples
    of them, unpacked into names) or over a list or tuple the call gives that
    the function only reads (``given``: its structure; ``[Dense(W) for W in
    Ws]`` as ``[Dense(Ws[0]), Dense(Ws[1])]``), and its item reads its variables
    only (no nested function, comprehension or ``:=``); else None."""
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
    elif isinstance(it, gast.Name) and it.id in given:  # a list the call gives, only read
        values = [_given_item(_subscript(it.id, k), item, loop.target)
                  for k, item in enumerate(given[it.id][1])]
    else:
        return None
    out = []
    for value in values:
        bound = _unpacked(loop.target, value)
        if bound is None:
            return None
        out.append(_Bound(bound).visit(copied(parsed, node.elt)))
    return out


def _subscript(node, k):
    """``node[k]`` (``node``: a name, or an expression node)."""
    value = name_node(node) if isinstance(node, str) else node
    return gast.Subscript(value=value, slice=gast.Constant(value=k, kind=None),
                          ctx=gast.Load())


def _given_item(node, structure, target):
    """What a comprehension's ``target`` is bound to from ``node``, an item (of
    ``structure``) of a list or tuple the call gives: ``node`` itself, or where
    ``target`` unpacks a list or tuple of its length, the tuple of its items
    (``(params[0][0], params[0][1])``), unpacked in turn."""
    if isinstance(target, gast.Tuple) and structure != "leaf" and \
            structure[0] in ("list", "tuple") and len(structure[1]) == len(target.elts):
        return gast.Tuple(elts=[_given_item(_subscript(copy.deepcopy(node), j), s, t)
                                for j, (s, t) in enumerate(zip(structure[1], target.elts))],
                          ctx=gast.Load())
    return node


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
    """The :class:`_Row` where ``stmt`` is ``name = []`` (or a list display of
    such items, ``name = [Cls(...)]``) and the statements after it
    in ``block`` append constructions (or names of objects made once,
    :func:`_alias`) to it (``name.append(Cls(...))``), each a statement of its
    own, nothing else reading ``name`` before the last (and nothing else in
    ``fnode`` appending to it); else None."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and
            isinstance(stmt.targets[0], gast.Name) and _listed(stmt, stmt.targets[0].id)):
        return None
    name = stmt.targets[0].id
    after = block[block.index(stmt) + 1:]
    kinds, last = [], -1
    for item in stmt.value.elts:
        if _made(item, parsed, local):
            kinds.append("made")
        elif _alias(fnode, block, stmt, item, parsed, local):
            kinds.append("alias")
        else:
            return None
    shown = len(kinds)
    for k, s in enumerate(after):
        call = _append(s, name)
        if call is not None:
            if _made(call, parsed, local):
                kinds.append("made")
            elif _alias(fnode, block, s, call, parsed, local):
                kinds.append("alias")
            else:
                return None
            last = k
    reads = [n for s in after[:last + 1] for n in gast.walk(s)
             if isinstance(n, gast.Name) and n.id == name]
    everywhere = [n for n in gast.walk(fnode) if isinstance(n, gast.Attribute) and
                  isinstance(n.value, gast.Name) and n.value.id == name]
    if len(kinds) == shown or len(reads) != len(kinds) - shown or \
            len([n for n in everywhere if n.attr == "append"]) != len(kinds) - shown:
        return None  # (read between the appends, or appended to elsewhere)
    return _Row(name, kinds, appends=True)


def _appended_in_loops(parsed, fnode, block, stmt, local, structures):
    """``(trial, row)`` where ``stmt`` is ``name = []`` (or a list display) and
    statements after it in ``block`` are loops filling it (:func:`_fills`) that
    ``static_loops.py`` unrolls (a ``range`` of numbers written out too, as the
    display of its numbers; ``structures``: of the containers the call gives):
    ``trial``, a copy of ``fnode`` with each such loop written as its trips (each
    binding the loop's variables first, as Python runs them), and the
    :class:`_Row` :func:`_appended` finds there; ``(None, None)`` otherwise."""
    if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name) and
            _listed(stmt, stmt.targets[0].id)) or parsed.node is not fnode:
        return None, None
    name = stmt.targets[0].id
    where = next(((j, b.index(stmt)) for j, b in enumerate(statement_lists(fnode))
                  if any(s is stmt for s in b)), None)
    if where is None:
        return None, None
    unrolled = {}
    for k in range(where[1] + 1, len(block)):
        loop = block[k]
        if not _fills(loop, name, parsed, local):
            continue
        it = loop.iter
        numbers = _numbers(it, parsed)
        if numbers is not None:  # for k in range(3): as for k in (0, 1, 2)
            loop.iter = gast.copy_location(gast.Tuple(elts=[
                gast.Constant(value=n, kind=None) for n in numbers], ctx=gast.Load()), it)
        try:
            out = unrolled_loop(parsed, loop, structures)
        finally:
            loop.iter = it
        if out:
            unrolled[k] = out
    if not unrolled:
        return None, None
    trial = copied(parsed, fnode)
    tblock = list(statement_lists(trial))[where[0]]
    for k in sorted(unrolled, reverse=True):
        tblock[k:k + 1] = [copied(parsed, st) for st in unrolled[k]]
    row = _appended(trial, tblock, tblock[where[1]], parsed, local)
    return (trial, row) if row is not None else (None, None)


def _fills(loop, name, parsed, local):
    """Is ``loop`` a ``for`` loop (no ``else``) whose body appends a construction
    to ``name`` (``name.append(Cls(...))``, a statement of the body), with no
    jump out of a trip (``break``, ``continue``, ``return``, ``yield``), nested
    function, ``global`` or ``nonlocal``?"""
    return isinstance(loop, gast.For) and not loop.orelse and any(
        _append(s, name) is not None and _made(_append(s, name), parsed, local)
        for s in loop.body) and not any(
        isinstance(n, SCOPES + _JUMPS + (gast.Yield, gast.YieldFrom, gast.Global,
                                         gast.Nonlocal))
        for s in loop.body for n in gast.walk(s))


def _numbers(it, parsed):
    """The numbers of ``range(...)`` of numbers written out (a trip at least;
    the builtin), else None."""
    if isinstance(it, gast.Call) and _builtin(it.func, "range", parsed) and \
            1 <= len(it.args) <= 3 and not it.keywords and \
            all(_number(a) is not None for a in it.args) and _number(it.args[-1]) != 0:
        return list(range(*[_number(a) for a in it.args])) or None
    return None


def _listed(stmt, name):
    """Is ``stmt`` ``name = [...]``, a list display (no ``*`` spread)?"""
    return isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
        isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id == name and \
        isinstance(stmt.value, gast.List) and \
        not any(isinstance(e, gast.Starred) for e in stmt.value.elts)


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


def _bindings(fnode, name, own=frozenset()):
    """How many times ``fnode`` binds or deletes ``name`` (a nested scope naming
    it at all counts as many), not counting the nodes ``own`` (ids: a
    comprehension's own variable, :func:`_comprehensions_own`)."""
    count = 0
    for node in gast.walk(fnode):
        if node is not fnode and isinstance(node, SCOPES) and any(
                isinstance(n, gast.Name) and n.id == name for n in gast.walk(node)):
            return 2
        if isinstance(node, gast.Name) and node.id == name and \
                not isinstance(node.ctx, gast.Load) and id(node) not in own:
            count += 1
    return count


def _comprehensions_own(fnode, name):
    """The ids of the nodes under ``fnode`` where ``name`` is a comprehension's
    own variable, not the function's: in a comprehension one of whose ``for``
    binds it (``sum(np.sum(p.pos) for p in parts)`` after ``for p in parts:``),
    that ``for``'s target and everything evaluated after it -- its conditions,
    the later ``for``s and the item.  The first ``for``'s iterable, and what
    comes before the binding ``for``, are read in the function's scope (or
    raise in Python), and stay the function's."""
    own = set()
    for node in gast.walk(fnode):
        if not isinstance(node, COMPREHENSIONS):
            continue
        gens = node.generators
        first = next((k for k, g in enumerate(gens) if any(
            isinstance(n, gast.Name) and n.id == name for n in gast.walk(g.target))), None)
        if first is None:
            continue
        parts = [gens[first].target] + gens[first].ifs + \
            [part for g in gens[first + 1:] for part in [g.target, g.iter] + g.ifs] + \
            ([node.key, node.value] if isinstance(node, gast.DictComp) else [node.elt])
        own |= {id(n) for part in parts for n in gast.walk(part)}
    return own


#: builtins that take every item of a generator given to them, in order, so the
#: generator may be the list of its items (``any``/``all`` stop early: not these)
_EAGER = ("sum", "max", "min", "sorted", "list", "tuple")


def _builtin(node, name, parsed):
    """Is ``node`` the name of the builtin ``name`` (not a local or a global)?"""
    return isinstance(node, gast.Name) and node.id == name and \
        bool(builtins_meant((name,), parsed.node, parsed.resolve))


def _split(parsed, fnode, row, taken, local, given):
    """Rewrite ``fnode`` (a copy) with the container ``row`` as one name (or
    constant) per item; False (``fnode`` then half written) where a use of it is
    none of the forms the module's docstring lists."""
    name = row.name
    items = []
    for k, kind in enumerate(row.kinds):
        key = row.keys[k] if row.keys is not None else k
        stem = f"{name}_{key}" if str(key).isidentifier() or type(key) is int and key >= 0 \
            else f"{name}_{k}"
        items.append(fresh_name(stem, set(taken)) if kind == "made" else None)
    values = []  # the items read as written (filled in before any loop is unrolled)
    for block in statement_lists(fnode):
        for s in block:
            if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and \
                    s.targets[0].id == name:  # (the one binding of name)
                values += s.value.elts if row.appends else \
                    _items_of(s.value, parsed, local, given)
            elif row.appends and _append(s, name) is not None:
                values.append(_append(s, name))
    for j, value in enumerate(values):
        if row.kinds[j] != "made":
            items[j] = value  # (an object's name, or a constant)
    made_by = list(values)  # (each item's construction, for a made one)
    indices = set()
    appended = 0
    for block in statement_lists(fnode):
        k = 0
        while k < len(block):
            stmt = block[k]
            if isinstance(stmt, gast.Assign) and \
                    isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id == name:
                # (the one binding of name; a list appended to after: its display)
                values = stmt.value.elts if row.appends else \
                    _items_of(stmt.value, parsed, local, given)
                appended = len(values)
                made = []
                for j, value in enumerate(values):
                    if row.kinds[j] == "made":
                        made.append(located(gast.Assign(targets=[store_node(items[j])],
                                                        value=None, type_comment=None), stmt))
                        made[-1].value = value  # (the constructions keep their own places)
                block[k:k + 1] = made
                k += len(made)
                continue
            if row.appends and _append(stmt, name) is not None:  # layers.append(Dense(W, b))
                if row.kinds[appended] == "made":
                    made = located(gast.Assign(targets=[store_node(items[appended])],
                                               value=None, type_comment=None), stmt)
                    made.value = _append(stmt, name)
                    block[k] = made
                    k += 1
                else:
                    del block[k]
                appended += 1
                continue
            unrolled = _unrolled(parsed, fnode, stmt, row, items, indices,
                                 lambda k: _class_made(made_by[k], parsed, local), taken)
            if unrolled is False:
                return False
            if unrolled is None:
                k += 1
                continue
            block[k:k + 1] = unrolled  # (its copies are visited next: nested loops)
    if not _Items(parsed, row, items).rewrite(fnode):
        return False
    _drop_unread_indices(fnode, indices)
    spelled = parsed.spellings.get(name, name)
    for k, item in enumerate(items):
        if row.kinds[k] == "made":
            taken.add(item)
            key = row.keys[k] if row.keys is not None else k
            parsed.spellings[item] = f"{spelled}[{key!r}]"
    return True


def _item_node(item):
    """A read of an item: its name (a string), or a copy of its expression."""
    return name_node(item) if isinstance(item, str) else copy.deepcopy(item)


def _loop_over(stmt, row, parsed):
    """``(positions, index, variable)`` of a loop ``stmt`` over the container
    ``row``: the items' positions in the order it visits them, the name bound
    to each position (a list's) or key (a dict's), or None, and the name bound
    to each object (or None); None for any other statement, False for a loop
    over the container this pass cannot unroll."""
    if not isinstance(stmt, gast.For):
        return None
    name, it, target = row.name, stmt.iter, stmt.target
    if row.keys is not None:
        return _loop_over_dict(stmt, row, parsed)
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
    forward = list(range(len(row.kinds)))
    if kind == "items":
        return forward, None, target.id
    if kind == "reversed":
        return forward[::-1], None, target.id
    if kind == "enumerate":
        return forward, target.elts[0].id, target.elts[1].id
    return forward, target.id, None


def _loop_over_dict(stmt, row, parsed):
    """:func:`_loop_over` for a dict: ``for k in d`` (or ``d.keys()``,
    ``reversed(d)``), ``for v in d.values()``, ``for k, v in d.items()``, and a
    loop over a display of its keys (``for k in ("a", "b")``) whose body reads
    ``d[k]``."""
    name, it, target = row.name, stmt.iter, stmt.target
    forward = list(range(len(row.kinds)))
    method = it.func.attr if isinstance(it, gast.Call) and not it.args and \
        not it.keywords and isinstance(it.func, gast.Attribute) and \
        isinstance(it.func.value, gast.Name) and it.func.value.id == name else None
    if isinstance(it, gast.Name) and it.id == name or method == "keys":
        found = forward, target, None
    elif method == "values":
        found = forward, None, target
    elif method == "items":
        if not (isinstance(target, gast.Tuple) and len(target.elts) == 2):
            return False
        found = forward, target.elts[0], target.elts[1]
    elif isinstance(it, gast.Call) and _builtin(it.func, "reversed", parsed) and \
            len(it.args) == 1 and not it.keywords and \
            isinstance(it.args[0], gast.Name) and it.args[0].id == name:
        found = forward[::-1], target, None
    elif isinstance(it, (gast.Tuple, gast.List)) and isinstance(target, gast.Name) and \
            any(isinstance(n, gast.Subscript) and isinstance(n.value, gast.Name) and
                n.value.id == name and isinstance(n.slice, gast.Name) and
                n.slice.id == target.id for st in stmt.body for n in gast.walk(st)):
        keys = [_key(e) for e in it.elts]
        if any(k is None or k[1] not in row.keys or
               type(k[1]) is not type(row.keys[row.keys.index(k[1])]) for k in keys):
            return False
        found = [row.keys.index(k[1]) for k in keys], target, None
    elif any(isinstance(n, gast.Name) and n.id == name for n in gast.walk(it)):
        return False
    else:
        return None
    positions, index, var = found
    if stmt.orelse or not all(v is None or isinstance(v, gast.Name) for v in (index, var)):
        return False
    return positions, index and index.id, var and var.id


def _unrolled(parsed, fnode, stmt, row, items, indices, class_of, taken):
    """The statements a loop ``stmt`` over the container ``row`` unrolls to, None
    where ``stmt`` is no such loop, False where it is one this pass cannot
    unroll (``indices``: the ids of the bindings of its index it adds;
    ``class_of(k)``: the class of the ``k``-th item, made by a construction, or
    None; ``taken``: the names in use)."""
    loop = _loop_over(stmt, row, parsed)
    if not loop:
        return loop
    positions, index, var = loop
    bound = {index, var} - {None}
    for node in (n for st in stmt.body for n in gast.walk(st)):
        if isinstance(node, SCOPES + COMPREHENSIONS + (
                gast.Break, gast.Continue, gast.Global, gast.Nonlocal, gast.Yield,
                gast.YieldFrom, gast.NamedExpr)):
            return False
        if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load) and \
                node.id in bound:
            return False
    kept = []  # [(attribute, name)] bound after the loop, read outside its block
    if var is not None and _read_elsewhere(fnode, stmt, var):
        after = _read_after(fnode, stmt, var)
        last = items[positions[-1]]  # (no break: the loop ends on its last item)
        if after is not None:
            for st in after:
                _Trip(None, None, var, last, _comprehensions_own(fnode, var)).visit(st)
        else:
            kept = _fields_read_later(parsed, fnode, stmt, row, var, positions and
                                      row.kinds[positions[-1]] == "made" and
                                      class_of(positions[-1]), taken)
            if kept is None:
                return False
    out = []
    for k in positions:
        if index is not None:
            key = row.keys[k] if row.keys is not None else k
            out.append(located(gast.Assign(targets=[store_node(index)],
                                           value=gast.Constant(value=key, kind=None),
                                           type_comment=None), stmt))
            indices.add(id(out[-1]))
        for st in stmt.body:
            out.append(_Trip(row.name, index, var, items[k]).visit(copied(parsed, st)))
    out += [located(gast.Assign(targets=[store_node(new)], value=gast.Attribute(
            value=name_node(last), attr=attr, ctx=gast.Load()), type_comment=None), stmt)
            for attr, new in kept]
    return out


def _fields_read_later(parsed, fnode, loop, row, var, cls, taken):
    """``[(attr, name)]``: where ``var``, the object variable of ``loop`` (its one
    binding), is read outside the loop's block (``if c: for layer in layers:
    ...`` then ``layer.b``) only as data attributes of the last item (of the
    class ``cls``, made by a construction) and nothing may change that item
    after the loop (no use of the container ``row.name`` but the loop's own
    that may run after it), the names the loop's block binds to those
    attributes after the loop, each such read rewritten as its name; else
    None.  Where the loop did not run, the name is unbound at the read, and
    Python's ``UnboundLocalError`` is raised there as for ``var``."""
    own = _comprehensions_own(fnode, var)
    if not cls or _bindings(fnode, var, own) != 1:
        return None
    body = {id(n) for st in loop.body + [loop.target] for n in gast.walk(st)} | own
    targets = {id(n) for node in gast.walk(fnode) for t in _targets(node)
               for n in gast.walk(t)}
    reads = []
    for node in gast.walk(fnode):
        if isinstance(node, gast.Attribute) and isinstance(node.value, gast.Name) and \
                node.value.id == var and id(node) not in body:
            raw = class_attribute(cls, node.attr, None)
            if not isinstance(node.ctx, gast.Load) or id(node) in targets or \
                    node.attr.startswith("__") or callable(raw) or \
                    hasattr(type(raw), "__get__"):
                return None  # a store, a method, a property: not a field read
            reads.append(node)
    if len(reads) != sum(isinstance(n, gast.Name) and n.id == var and id(n) not in body
                         for n in gast.walk(fnode)):
        return None  # var read as itself (handed on, called)
    # the container's other uses all run before the loop, and never again after it
    order = [n for n in _in_order(fnode)]
    at = next(k for k, n in enumerate(order) if n is loop)
    around = [n for n in order[:at] if isinstance(n, (gast.For, gast.While)) and
              any(m is loop for m in gast.walk(n))]
    own = {id(n) for n in gast.walk(loop)}
    for k, node in enumerate(order):
        if isinstance(node, gast.Name) and node.id == row.name and id(node) not in own:
            if k > at or any(node in set(gast.walk(outer)) for outer in around):
                return None
    names = {}
    for node in reads:
        if node.attr not in names:
            names[node.attr] = fresh_name(f"{var}_{node.attr}", set(taken) | names_taken(fnode))
            taken.add(names[node.attr])
            parsed.spellings[names[node.attr]] = f"{var}.{node.attr}"
    replaced = {id(n): gast.copy_location(name_node(names[n.attr]), n) for n in reads}
    ReplacedNodes(replaced).visit(fnode)
    return sorted(names.items())


def _targets(node):
    """The targets a statement binds (or stores into)."""
    if isinstance(node, gast.Assign):
        return node.targets
    if isinstance(node, (gast.AugAssign, gast.AnnAssign, gast.For)):
        return [node.target]
    if isinstance(node, gast.withitem) and node.optional_vars is not None:
        return [node.optional_vars]
    return []


def _guard_reads_outside(parsed, fnode, row, taken):
    """For the container ``row`` left to the lowering (which binds a loop's
    object variable to the item as it unrolls the loop, in the compiler, not in
    the generated code): where that variable is read outside the loop's block
    (``if c: for layer in layers: ...`` then ``return layer.forward(x)``),
    the loop's block binds a flag after it (``layer_bound = True``, spelled
    ``layer``) and each statement reading the variable there asserts the flag
    first (``assert layer_bound``): where the block did not run, the flag is
    unbound, and the generated code raises Python's ``UnboundLocalError`` at
    that statement, as Python does at the read of ``layer``.  A read the
    statement may not evaluate (a conditional expression's branch, the right
    of ``and``/``or``, a comprehension, a lambda, a ``while`` test) is
    refused, naming its line."""
    for block in list(statement_lists(fnode)):
        for loop in [s for s in block if isinstance(s, gast.For)]:
            found = _loop_over(loop, row, parsed)
            if not found or found[2] is None:
                continue
            var = found[2]
            if _bindings(fnode, var, _comprehensions_own(fnode, var)) != 1:
                _refuse_rebound_read_outside(parsed, fnode, loop, var)
                continue
            if not _read_elsewhere(fnode, loop, var) or _read_after(fnode, loop, var) is not None:
                continue  # (read only in its body, or after it in its block: bound there)
            at = [id(s) for s in block].index(id(loop))
            following = block[at + 1] if at + 1 < len(block) else None
            if isinstance(following, gast.Assign) and \
                    isinstance(following.targets[0], gast.Name) and \
                    parsed.spellings.get(following.targets[0].id) == var:
                continue  # (guarded by the pass's first run)
            flag = fresh_name(f"{var}_bound", set(taken) | names_taken(fnode))
            taken.add(flag)
            parsed.spellings[flag] = var
            parsed.checked_loop_variables.add(var)
            block.insert(at + 1, located(gast.Assign(
                targets=[store_node(flag)], value=gast.Constant(value=True, kind=None),
                type_comment=None), loop))
            _assert_before_reads(parsed, fnode, var, flag)


def _refuse_rebound_read_outside(parsed, fnode, loop, var):
    """Refuse ``var``, the object variable of ``loop`` and bound elsewhere too
    (``if c: for layer in layers: ...`` ``else: for layer in layers[::-1]:
    ...``), read outside the bodies of the loops binding it, unless every
    binding is a ``for`` of one block and every such read follows the last of
    them in that block (where Python reads what the last loop bound, as the
    lowering does): the lowering binds the variable as it unrolls each loop, in
    the compiler, so a read after loops on different paths would read the
    item of the last loop it unrolled whichever path ran."""
    if not _read_elsewhere(fnode, loop, var):
        return
    own = _comprehensions_own(fnode, var)
    loops = [n for n in gast.walk(fnode) if isinstance(n, gast.For) and any(
        isinstance(t, gast.Name) and t.id == var for t in gast.walk(n.target))]
    blocks = [b for b in statement_lists(fnode) if any(s is loops[0] for s in b)]
    if _bindings(fnode, var, own) == len(loops) and blocks and \
            all(any(s is n for s in blocks[0]) for n in loops):
        block = blocks[0]
        last = max([id(s) for s in block].index(id(n)) for n in loops)
        after = {id(n) for st in block[last + 1:] for n in gast.walk(st)}
        inside = {id(n) for lp in loops for st in lp.body for n in gast.walk(st)}
        if all(id(n) in after or id(n) in inside or id(n) in own for n in gast.walk(fnode)
               if isinstance(n, gast.Name) and n.id == var and isinstance(n.ctx, gast.Load)):
            return
    raise parsed.error(
        UnsupportedSyntaxError, f"'{var}', the variable of loops over a list of objects "
        "that may run on different paths, read outside them", loop,
        construct=f"{var} read after its loops",
        hint=f"read what you need of '{var}' in the block that runs its loop "
             f"(y = {var}.forward(x) there), or index the list after the loops")


def _assert_before_reads(parsed, fnode, var, flag):
    """``assert flag`` before each statement of ``fnode`` that reads ``var``
    outside the bodies of the loops binding it (see :func:`_guard_reads_outside`); a
    comprehension's own variable of that name is none of its reads."""
    inside = set(_comprehensions_own(fnode, var))
    for node in gast.walk(fnode):
        if isinstance(node, gast.For) and any(
                isinstance(n, gast.Name) and n.id == var for n in gast.walk(node.target)):
            inside |= {id(n) for st in node.body for n in gast.walk(st)}
    for block in list(statement_lists(fnode)):
        k = 0
        while k < len(block):
            stmt = block[k]
            own = _own_expressions(stmt)
            reads = [n for e in own for n in _evaluated(e) if isinstance(n, gast.Name) and
                     n.id == var and isinstance(n.ctx, gast.Load) and id(n) not in inside]
            lazy = [n for e in own for n in gast.walk(e) if isinstance(n, gast.Name) and
                    n.id == var and isinstance(n.ctx, gast.Load) and id(n) not in inside]
            if len(lazy) != len(reads) or (reads and isinstance(stmt, gast.While)):
                raise parsed.error(
                    UnsupportedSyntaxError, f"'{var}', the variable of a loop over a list "
                    "of objects, read where the loop may not have run, in a part of the "
                    "statement that may not run", stmt, construct=f"{var} read after its loop",
                    hint=f"bind the object to a name before the loop, or read '{var}' in a "
                         "statement of its own")
            if reads:
                block.insert(k, located(gast.Assert(test=name_node(flag), msg=None), stmt))
                k += 1
            k += 1


def _own_expressions(stmt):
    """The expressions of ``stmt`` itself (not of the statements in its bodies)."""
    blocks = set(id(b) for b in statement_blocks(stmt))
    out = []
    for field, value in gast.iter_fields(stmt):
        if isinstance(value, list) and id(value) in blocks or field == "handlers":
            continue
        for v in (value if isinstance(value, list) else [value]):
            if isinstance(v, gast.AST):
                out.append(v)
    return out


def _evaluated(node):
    """The nodes of ``node`` surely evaluated whenever it is (not a conditional
    expression's branches, the operands of ``and``/``or`` after the first, a
    comprehension's or lambda's body)."""
    yield node
    if isinstance(node, gast.IfExp):
        yield from _evaluated(node.test)
        return
    if isinstance(node, gast.BoolOp):
        yield from _evaluated(node.values[0])
        return
    if isinstance(node, COMPREHENSIONS + SCOPES):
        return
    for child in gast.iter_child_nodes(node):
        yield from _evaluated(child)


def _in_order(node):
    """``node`` and the nodes under it, in the order the source writes them."""
    yield node
    for child in gast.iter_child_nodes(node):
        yield from _in_order(child)


def _class_made(value, parsed, local):
    """The class a construction ``Cls(...)`` makes (None for anything else)."""
    if not isinstance(value, gast.Call):
        return None
    cls = resolve_dotted(value.func, parsed.resolve, local)
    return cls if isinstance(cls, type) else None


def _drop_unread_indices(fnode, indices):
    """Remove the bindings ``indices`` (their ids) of unrolled loops' indices that
    nothing reads."""
    read = {n.id for n in gast.walk(fnode) if isinstance(n, gast.Name)
            and isinstance(n.ctx, gast.Load)}
    for block in statement_lists(fnode):
        block[:] = [s for s in block if id(s) not in indices or s.targets[0].id in read]


def _read_after(fnode, loop, var):
    """The statements after ``loop`` in its block, where every read of ``var``
    outside ``loop``'s body is in them and ``loop`` is the one binding of ``var``
    in ``fnode``: each such read runs after the loop ran, and reads the item its
    last trip bound; else None."""
    own = _comprehensions_own(fnode, var)
    if _bindings(fnode, var, own) != 1:
        return None
    block = next(b for b in statement_lists(fnode) if any(s is loop for s in b))
    after = block[[id(s) for s in block].index(id(loop)) + 1:]
    inside = {id(n) for st in loop.body + after for n in gast.walk(st)} | own
    if any(isinstance(n, gast.Name) and n.id == var and isinstance(n.ctx, gast.Load)
           and id(n) not in inside for n in gast.walk(fnode)):
        return None
    return after


def _read_elsewhere(fnode, loop, var):
    """Is ``var`` read in ``fnode`` outside ``loop``'s body, other than in the body
    of another loop binding it (which reads its own binding)?"""
    inside = _comprehensions_own(fnode, var)
    for node in gast.walk(fnode):
        if isinstance(node, gast.For) and (node is loop or any(
                isinstance(n, gast.Name) and n.id == var for n in gast.walk(node.target))):
            inside |= {id(n) for st in node.body for n in gast.walk(st)}
    return any(isinstance(n, gast.Name) and n.id == var and isinstance(n.ctx, gast.Load)
               and id(n) not in inside for n in gast.walk(fnode))


class _Trip(gast.NodeTransformer):
    """One trip's copy of a loop's body: the object variable ``var`` read as the
    item ``item``, ``name[index]`` as ``item`` too."""

    def __init__(self, name, index, var, item, own=frozenset()):
        self.name, self.index, self.var, self.item = name, index, var, item
        self.own = own  # ids of the nodes where ``var`` is a comprehension's own

    def visit_Name(self, node):
        if node.id == self.var and isinstance(node.ctx, gast.Load) and \
                id(node) not in self.own:
            return gast.copy_location(_item_node(self.item), node)
        return node

    def visit_Subscript(self, node):
        if isinstance(node.value, gast.Name) and node.value.id == self.name and \
                isinstance(node.slice, gast.Name) and node.slice.id == self.index and \
                isinstance(node.ctx, gast.Load) and self.index is not None:
            return gast.copy_location(_item_node(self.item), node)
        return self.generic_visit(node)


class _Items(gast.NodeTransformer):
    """``name[k]`` (a number in range, or a dict's key) as the item,
    ``len(name)`` as the number of items; :meth:`rewrite` says whether no other
    read of ``name`` is left."""

    def __init__(self, parsed, row, items):
        self.parsed, self.row, self.name, self.items = parsed, row, row.name, items

    def rewrite(self, fnode):
        self.visit(fnode)
        return not any(isinstance(n, gast.Name) and n.id == self.name
                       for n in gast.walk(fnode))

    def position(self, index):
        """The position ``name[index]`` reads, else None."""
        if self.row.keys is None:
            k = _number(index)
            return k if k is not None and -len(self.items) <= k < len(self.items) else None
        key = _key(index)
        for k, known in enumerate(self.row.keys):
            if key == (type(known), known):
                return k
        return None

    def visit_Subscript(self, node):
        if isinstance(node.value, gast.Name) and node.value.id == self.name and \
                isinstance(node.ctx, gast.Load):
            k = self.position(node.slice)
            if k is not None:
                return gast.copy_location(_item_node(self.items[k]), node)
        return self.generic_visit(node)

    def visit_Call(self, node):
        if _builtin(node.func, "len", self.parsed) and len(node.args) == 1 and \
                not node.keywords and isinstance(node.args[0], gast.Name) and \
                node.args[0].id == self.name:
            return gast.copy_location(gast.Constant(value=len(self.items), kind=None), node)
        if any(_builtin(node.func, f, self.parsed) for f in _EAGER) and \
                len(node.args) == 1 and isinstance(node.args[0], gast.GeneratorExp):
            items = self.written_out(node.args[0])  # (it takes every item: no laziness)
            if items is not None:
                node.args[0] = gast.copy_location(items, node.args[0])
        return self.generic_visit(node)

    def visit_ListComp(self, node):
        items = self.written_out(node)
        return gast.copy_location(items, node) if items is not None else \
            self.generic_visit(node)

    def written_out(self, node):
        """``[f(p) for p in name]`` (or the generator's items; ``reversed(name)``;
        over a dict, ``for k in d``, ``d.values()``, ``for k, v in d.items()``) as
        the list display
        ``[f(name_0), f(name_1)]``, where its one ``for`` binds names, has no
        ``if`` and its item holds no nested function, comprehension or ``:=``;
        else None."""
        if len(node.generators) != 1:
            return None
        loop = node.generators[0]
        if loop.ifs or loop.is_async or \
                any(isinstance(n, SCOPES + COMPREHENSIONS + (gast.NamedExpr,))
                    for n in gast.walk(node.elt)):
            return None
        read = self.comprehended(loop)
        if read is None:
            return None
        elts = [self.visit(_Bound(bound).visit(copied(self.parsed, node.elt)))
                for bound in read]
        return gast.List(elts=elts, ctx=gast.Load())

    def comprehended(self, loop):
        """{variable: expression} a comprehension's ``loop`` over the container
        binds, one per trip, else None."""
        it, target = loop.iter, loop.target
        backward = isinstance(it, gast.Call) and _builtin(it.func, "reversed", self.parsed) \
            and len(it.args) == 1 and not it.keywords
        read = self.forward(gast.comprehension(target=target, iter=it.args[0], ifs=[],
                                               is_async=0) if backward else loop)
        return read[::-1] if backward and read is not None else read

    def forward(self, loop):
        """:meth:`comprehended` of a loop over the container in its order."""
        it, target = loop.iter, loop.target
        whole = isinstance(it, gast.Name) and it.id == self.name
        method = it.func.attr if isinstance(it, gast.Call) and not it.args and \
            not it.keywords and isinstance(it.func, gast.Attribute) and \
            isinstance(it.func.value, gast.Name) and it.func.value.id == self.name and \
            self.row.keys is not None else None
        keys = [gast.Constant(value=k, kind=None) for k in self.row.keys or ()]
        objects = [_item_node(item) for item in self.items]
        if isinstance(target, gast.Name) and (whole or method == "keys"):
            values = objects if self.row.keys is None else keys
            return [{target.id: v} for v in values]
        if isinstance(target, gast.Name) and method == "values":
            return [{target.id: v} for v in objects]
        if method == "items" and isinstance(target, gast.Tuple) and \
                len(target.elts) == 2 and all(isinstance(e, gast.Name) for e in target.elts):
            return [{target.elts[0].id: k, target.elts[1].id: v}
                    for k, v in zip(keys, objects)]
        return None


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
