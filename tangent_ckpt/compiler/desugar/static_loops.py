"""Desugar: a ``for`` loop over items known when compiling (a tuple or list
display in its header, a container the call gives), unrolled.

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
of constants (``[f(k) for k in range(3)]``), or over any row below (``[f(w) for w
in ws]``, ``ws`` a display), are unrolled the same way: outer loops first, so
that an inner ``range(i)`` is one of constants in each copy; each ``if`` of the
comprehension's own conditions is the path that runs where each copy decides it
(``if k != 1``, ``if i != j`` once the variables are folded: :func:`_decided`),
and an inner loop's condition stays on the inner loop's copies.  A range's bound
may be an int constant, ``len`` of a given container or a local display, ``+ -
* // %`` of such, or a local bound once to one before the loop (``n = 4;
range(n - 1)``, ``L = len(ps) // 2``: :func:`_bound_once_before`). So
is a loop over a list, tuple or dict the call gives (the compiled function is
specialised to its structure, ``passes.given_containers``) where the function
only reads it (:func:`~.fixed_structures.only_read`: never bound again, written
into, or handed on): ``for W, b in params`` as ``W, b = params[0]``, ... in its
copies; ``for k, v in p.items()`` with ``k`` each key and ``v = p["W"]``; ``p``,
``p.keys()``, ``p.values()``, ``enumerate`` and ``zip`` of them; a container nested
in it, by a path of constants or by a name the last statement before the loop binds
to one (``for W, b in params[0]``; ``layer = params[0]`` in a copy of ``for layer in
params``; ``enc, dec = params``) where every name that may hold such a nested
container is only read (:func:`~.fixed_structures.nested_kept`): ``W, b =
params[0][1]``; and ``for l in range(len(params))`` whose body indexes such a
container with ``l`` (at most ``MOST_UNROLLED_COPIES`` copies). A local every
binding of which is a display of one structure, whose items the function reads
and stores but whose structure it never changes, is such a container too
(:func:`~.fixed_structures.fixed_structures`: an optimiser's ``for k in params:
params[k] -= lr * grads[k]``, ``for i in range(len(ws)): ws[i] -= g[i]``), where
the loop's body does not bind its name again and its items are used as arrays
(not a list of objects). So is a loop over a name bound once, in the function's
own block or in a nested block that holds every read of it after the binding
(``for t in range(n): ws = (a, b); for w in ws``), to such a display (``ws =
[a, b]``, ``names = ("enc", "dec")``, ``d = {"W": W, "b": b}`` with ``d.items()``)
and only read, its items that are expressions or names a later statement of its
block binds again first bound to names of their own where the display runs (``ws_0
= a * 1.0``; :func:`_local_displays`). A list built by appends in straight code
(``ws = []``, then ``ws.append(e)`` statements of the same block with nothing else
between mentioning ``ws``) and then only read is first written as that display (``ws =
[a, h, ws_2]`` after the last append; an item that might differ where the
display is, ``ws_0 = a * 2.0`` where it was appended, a tuple's items one by one:
:func:`_appends_as_display`).  Such appends may be the copies of a loop unrolled
here (``for W, b in params: new.append((W * 0.5, b))``): the displays are looked
for again after each round that unrolled a loop, and the loops over them unrolled.

An item of a display in the header that is an expression of names and constants
(``a.T``, ``-x``, ``2 * x``) or any other expression but one binding a name or
making a function (a call, a subscript: ``enumerate([np.sin(a), b])``,
``(ws[0], ws[1])``) is evaluated before the loop into a name (``item = a.T``),
in the display's order, as Python makes the display first (random draws in
their order; a later write into ``ws[1]`` leaves the item of before); where
such an item is a call or subscript, only if the body uses the loop's variables
as arrays (:func:`~.fixed_structures.used_as_arrays`: a display of objects
stays the lowering's).  ``continue`` and
``break`` of the loop (in its body or its ``if`` blocks) end the copy as Python
runs it: the rest of the block after an ``if`` that may leave goes into both of
its branches (as the lowering writes the rest of a trip), and ``break`` sets a
flag (``stop = True``) that the later copies test (``if not stop:``); a loop
variable read after a loop that may break is bound in each copy, not folded.

That is the same program exactly when the display's items are names and
constants (tuples of them, expressions in a header's display), or the
``enumerate`` (with a constant start) or ``zip`` of such displays, given
containers, strings and ranges of constants (the builtins meant); the body's
``break`` and ``continue`` are in ``if`` blocks only (not in a ``with`` or
``try``), changes no item's name in place (``b += v`` may rebind a number or
write into an array), calls none of the loop's variables, holds no ``def``,
``lambda``, class, comprehension, ``return`` (``loop_exits.py`` made it a
``break``), ``yield``, ``global`` or ``nonlocal``, and holds no condition of a
comprehension's loop that a copy does not decide (``comprehension_loops.py``: a
condition known only at run time there is the lowering's to judge); the loop has
no ``else``.  Any other
loop stays, for the lowering (``lower/container_loops.py``); a name that is an
item of a display in its header (``for w in [Dense(W, b), b]``, ``enumerate([a,
b])``) and that its body or its target binds again by name is read there from a
name bound just before the loop (``b_item = b``: :func:`_held_header_items`), so
the lowering's copies see the object the display held, as here; so is a
container the loop's header reads (``for w in ws``, ``d.items()``,
``enumerate(ws)``, ``ws[1:]``, ``list(ws)``) that its body binds again (``ws =
[w * 2.0, w]``: ``ws_iter = ws`` before the loop, :func:`_held_iterables`), as
Python evaluates the header once and its iterator holds what it gave; and a copy
the header makes of a list or tuple whose items the body writes (``for w in
ws[:2]: ws[1] = ...``, ``list(ws)``, ``tuple(ws)``) is made before the loop
(``ws_iter = ws[:2]``), so the copies visit the items of before the loop.
A constant slice of a given list only read or of a local display only read
(``for w in ws[1:]``) is a row like the list itself (:meth:`_Unrolling._sliced`).
"""

import copy

import gast

from tangent_ckpt.compiler.desugar.constant_flags import (
    bound_names, decided_truth, folded_value,
)
from tangent_ckpt.compiler.desugar.fixed_structures import (
    changes_its_variables, known_structures, only_read, used_as_arrays,
)
from tangent_ckpt.compiler.desugar.liveness import NameLiveness, read_names
from tangent_ckpt.compiler.desugar.local_bindings import (
    COMPREHENSIONS, SCOPES, builtins_meant, names_seen_outside, root_name,
)
from tangent_ckpt.compiler.desugar.view_shape import (
    fresh_name, located, name_node, names_taken, statement_blocks, statement_lists, store_node,
)

_CONSTANTS = (int, float, complex, str, bool, type(None))
# what a body unrolled here may not hold (see the module's docstring)
_OPAQUE = SCOPES + (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp,
                    gast.Return, gast.Yield, gast.YieldFrom, gast.Global, gast.Nonlocal)
_LOOPS = (gast.For, gast.While)
#: the most copies of a loop whose counter indexes a container unrolled (``for t in
#: range(1000): ps[t % 2]`` stays a loop: the lowering's to judge)
MOST_UNROLLED_COPIES = 256
# the nodes that open a scope of their own (:func:`_walk_own_scope` stops there)
_SCOPED = SCOPES + COMPREHENSIONS
# the nodes of a display's item evaluated before the loop (:class:`_Expression`)
# what an item of a header's display held before the loop may not hold
_NOT_HELD = SCOPES + COMPREHENSIONS + (gast.Starred, gast.NamedExpr, gast.Yield,
                                       gast.YieldFrom, gast.Await)
_OF_NAMES = (gast.Attribute, gast.BinOp, gast.UnaryOp, gast.Name, gast.Constant, gast.Load,
             gast.operator, gast.unaryop)


class _Constant:
    """An item that is a constant of the display (``value``)."""

    def __init__(self, value):
        self.value = value


class _Expression:
    """An item of the display that is an expression of names and constants
    (``a.T``, ``-x``, ``2 * x``; in a loop's header any expression, ``np.sin(a)``,
    ``ws[0]``: :func:`_display` of a header): evaluated before the loop, as Python
    makes the display, into a name the copies read."""

    def __init__(self, node):
        self.node = node
        self.name = None  # the name it is bound to (:meth:`_Unrolling.statements`)
        # only names, constants, attributes and operators (else a call, a subscript)
        self.of_names = all(isinstance(n, _OF_NAMES) for n in gast.walk(node))


def unroll_static_loops(parsed, structures=None):
    """Rewrite every such loop of ``parsed.node`` (nested blocks too), in place:
    outer loops first, each copy looked at again (an inner ``range(i)`` is one of
    constants once the outer copy folded ``i``).  ``structures``: {parameter:
    ``container_args.structure_of``} of the lists, tuples and dicts the call gives
    (:func:`~.passes.given_containers`)."""
    fnode = parsed.node
    meant = builtins_meant(("enumerate", "zip", "range", "len", "reversed"), fnode,
                           parsed.resolve)
    known = known_structures(fnode, meant, structures)
    context = _Context(parsed, meant, names_taken(fnode), known.shapes)
    context.fixed, context.given = known.fixed, set(structures or ())
    context.nested = known.nested
    context.displays = _local_displays(fnode, meant, context.taken)
    _block(context, fnode.body)
    while context.unrolled:  # the copies may hold the appends of a list a later
        context.unrolled = False  # loop reads (``for W, b in params: new.append(...)``)
        more = _local_displays(fnode, meant, context.taken, set(context.displays))
        if not more:
            break
        context.displays.update(more)
        _block(context, fnode.body)


class _Context:
    """What every loop of one function is judged with: the function, the
    builtins its names surely mean, the names taken, the parameters read only
    -> their structures."""

    def __init__(self, parsed, meant, taken, shapes):
        self.parsed, self.meant, self.taken, self.shapes = parsed, meant, taken, shapes
        self.displays = {}  # name -> the display it holds (:func:`_local_displays`)
        self.unrolled = False  # has :func:`_block` unrolled a loop since this was reset?
        self.outside = None  # :func:`_declared_outside`
        self.fixed = set()  # the locals of fixed_structures.py's (in ``shapes``)
        self.given = set()  # the parameters the call gives a list, tuple or dict
        self.nested = set()  # those of ``shapes`` whose nested containers are kept
        self.containers = None  # :func:`_containers`


def _block(context, stmts):
    k = 0
    while k < len(stmts):
        unrolled = _Unrolling(context, stmts[k], stmts[:k]).statements()
        if unrolled is not None:
            if not unrolled and len(stmts) == 1:  # a block of one loop of no trip
                unrolled = [located(gast.Pass(), stmts[k])]
            stmts[k:k + 1] = unrolled  # and the copies are looked at in turn
            context.unrolled = True
            continue
        if isinstance(stmts[k], gast.For):  # a loop left as it is: its display's items
            held = _held_iterables(context, stmts[k]) + _held_header_items(context, stmts[k])
            stmts[k:k] = held
            k += len(held)
        for block in statement_blocks(stmts[k]):
            _block(context, block)
        k += 1


def _held_header_items(context, loop):
    """The statements ``b_item = b`` holding each name that is an item of a
    display in the header of ``loop`` (a loop left as it is, for the lowering:
    ``for w in (np.tanh(a), b)``, ``enumerate([a, b])``, ``list((a, b))``) and
    that its body or its own target binds again by name (``b = b * 2.0``, ``for
    a in (np.tanh(b), a)``), never changing it in place; the display reads
    ``b_item`` instead (in place).  Python makes the display before the loop, so a
    later item is the object ``b`` named then, not what the body bound to ``b``
    since: the name bound just before the header is that object (an alias, not a
    copy).  Only a local name is held (none declared ``global`` or ``nonlocal``):
    nothing the header evaluates before the item can bind it again."""
    rebound = {n.id for n in gast.walk(loop.target) if isinstance(n, gast.Name)}
    changed = set()
    for st in loop.body:
        for n in _walk_own_scope(st):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                rebound.add(n.id)
            elif isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name):
                changed.add(n.target.id)
            elif isinstance(n, (gast.Assign, gast.AugAssign)):
                for t in (n.targets if isinstance(n, gast.Assign) else [n.target]):
                    if isinstance(t, (gast.Subscript, gast.Attribute)):
                        changed.add(root_name(t))
    rebound -= changed | _declared_outside(context)
    if not rebound:
        return []
    held, out = {}, []
    for display in _walk_own_scope(loop.iter):
        if isinstance(display, (gast.List, gast.Tuple, gast.Set)):
            slots = [(display.elts, k) for k in range(len(display.elts))]
        elif isinstance(display, gast.Dict):
            slots = [(display.values, k) for k in range(len(display.values))]
        else:
            continue
        for elts, k in slots:
            item = elts[k]
            spread = isinstance(item, gast.Starred)
            name = item.value if spread else item
            if not (isinstance(name, gast.Name) and name.id in rebound):
                continue
            kept = _held(name, "item", held, out, context, loop)
            if spread:
                item.value = kept
            else:
                elts[k] = kept
    return out


def _held(name, suffix, held, out, context, loop):
    """A read of the name holding ``name`` before ``loop`` (``ws_iter``, made
    once, its binding appended to ``out``), in ``name``'s place."""
    if name.id not in held:
        held[name.id] = fresh_name(f"{name.id}_{suffix}", context.taken)
        out.append(located(gast.Assign(targets=[store_node(held[name.id])],
                                       value=name_node(name.id), type_comment=None), loop))
    return gast.copy_location(name_node(held[name.id]), name)


def _held_iterables(context, loop):
    """The statements ``ws_iter = ws`` holding each name that the header of
    ``loop`` (a loop left as it is, for the lowering) reads -- ``for w in ws``,
    ``d.items()``, ``enumerate(ws)``, ``zip(ws, gs)``, ``reversed(ws)``, and any
    expression of it Python evaluates once before the first trip: ``ws[1:]``,
    ``list(ws)``, ``enumerate(ws[1:])``, ``list(d.items())`` -- and that its body or its own target binds again by name
    (``ws = [w * 2.0, w]``), never changing it in place (``y += v``, ``y[0] = v``:
    the lowering judges such a loop as written); the header reads ``ws_iter``
    instead (in place).  A copy the header makes (``for w in ws[:2]``,
    ``enumerate(ws[1:])``, ``list(ws)``) of a list whose items the body writes
    (``ws[1] = w * 2.0``) is a new list Python makes once, before the loop
    (``ws_iter = ws[:2]``, :class:`_HeldNames`).
    Python's iterator holds the object the header named, whatever the body binds
    to the name since: the name bound just before the loop is that object (an
    alias).  Only a local name is held (none declared ``global`` or
    ``nonlocal``)."""
    rebound = {n.id for n in gast.walk(loop.target) if isinstance(n, gast.Name)}
    changed, items_written = set(), set()
    for st in loop.body:
        for n in _walk_own_scope(st):
            if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del)):
                rebound.add(n.id)
            if isinstance(n, gast.AugAssign):
                changed.add(root_name(n.target))
                if isinstance(n.target, gast.Name):  # ws += [v]: extended in place
                    items_written.add(n.target.id)
            elif isinstance(n, (gast.Subscript, gast.Attribute)) and \
                    isinstance(n.ctx, (gast.Store, gast.Del)):
                changed.add(root_name(n))
                if isinstance(n, gast.Subscript) and isinstance(n.value, gast.Name):
                    items_written.add(n.value.id)  # ws[1] = v, ws[k] += v, del ws[0]
    outside = _declared_outside(context)
    rebound -= changed | outside
    rebound &= _containers(context)
    copied = (items_written - outside) & _containers(context)
    held, out = {}, []
    if any(isinstance(n, gast.NamedExpr) for n in _walk_own_scope(loop.iter)):
        return out  # (the header binds a name itself)
    copies = builtins_meant(("list", "tuple"), context.parsed.node, context.parsed.resolve) \
        if copied else set()
    loop.iter = _HeldNames(rebound, held, out, context, loop, copied, copies).visit(loop.iter)
    return out


class _HeldNames(gast.NodeTransformer):
    """Each read of a name of ``rebound`` in a loop's header, outside the scopes
    nested in it (``ws[1:]``, ``list(ws)``, ``enumerate(ws)``, ``d.items()``),
    made a read of the name holding it (:func:`_held`); and each copy the header
    makes of a container of ``copied`` (one whose items the body writes: ``ws[1]
    = v``) -- a slice ``ws[:2]``, ``list(ws)`` or ``tuple(ws)`` (``copies``: those
    of the two meaning the builtin) -- made before the loop (``ws_iter = ws[:2]``)
    and read from that name: the copy holds the items of before the loop, where the
    lowering's copies of the loop read the container's items as the body wrote them."""

    def __init__(self, rebound, held, out, context, loop, copied=frozenset(), copies=()):
        self.rebound, self.held, self.out = rebound, held, out
        self.context, self.loop = context, loop
        self.copied, self.copies = copied, copies

    def visit_Name(self, node):
        if isinstance(node.ctx, gast.Load) and node.id in self.rebound:
            return _held(node, "iter", self.held, self.out, self.context, self.loop)
        return node

    def visit_Subscript(self, node):
        if isinstance(node.slice, gast.Slice) and self._copied(node.value):
            return self._hold_copy(node, node.value.id)
        return self.generic_visit(node)

    def visit_Call(self, node):
        if isinstance(node.func, gast.Name) and node.func.id in self.copies and \
                len(node.args) == 1 and not node.keywords and self._copied(node.args[0]) \
                and node.args[0].id not in _dicts(self.context):
            return self._hold_copy(node, node.args[0].id)  # (list(d): keys, unchanged)
        return self.generic_visit(node)

    def _copied(self, node):
        return isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) and \
            node.id in self.copied

    def _hold_copy(self, node, name):
        held = fresh_name(f"{name}_iter", self.context.taken)
        self.out.append(located(gast.Assign(targets=[store_node(held)], value=node,
                                            type_comment=None), self.loop))
        return gast.copy_location(name_node(held), node)

    def generic_visit(self, node):
        if isinstance(node, _SCOPED):
            return node
        return super().generic_visit(node)


def _containers(context):
    """The names bound to a list, tuple or dict display somewhere in the function
    (``ws = [a, b]``, ``hs = []``) or given one by the call (``structures``; the
    lowering unrolls a loop over such a container, reading its items), cached on
    ``context``."""
    if context.containers is None:
        context.containers = set(context.given) | {
            t.id for n in gast.walk(context.parsed.node) if isinstance(n, gast.Assign)
            and isinstance(n.value, (gast.List, gast.Tuple, gast.Dict))
            for t in n.targets if isinstance(t, gast.Name)}
    return context.containers


def _dicts(context):
    """The names bound to a dict display somewhere in the function, or given a
    dict by the call."""
    return {t.id for n in gast.walk(context.parsed.node) if isinstance(n, gast.Assign)
            and isinstance(n.value, gast.Dict) for t in n.targets if isinstance(t, gast.Name)} | \
        {name for name in context.given
         if isinstance(context.shapes.get(name), tuple) and context.shapes[name][:1] == ("dict",)}


def _walk_own_scope(node):
    """The nodes of ``node`` outside the functions, lambdas, classes and
    comprehensions nested in it."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(c for c in gast.iter_child_nodes(n) if not isinstance(c, _SCOPED))


def _declared_outside(context):
    """The names declared ``global`` or ``nonlocal`` anywhere in the function (a
    call may bind them again), cached on ``context``."""
    if context.outside is None:
        context.outside = {name for n in gast.walk(context.parsed.node)
                           if isinstance(n, (gast.Global, gast.Nonlocal)) for name in n.names}
    return context.outside


def _local_displays(fnode, meant, taken, known=frozenset()):
    """{name: display} of the names bound once, by a statement of the function's
    own block (``ws = [a, b]``, ``names = ("enc", "dec")``, ``d = {"W": W, "b":
    b}``) or of a nested block that holds every read of it after that statement
    (:func:`_read_after`), to a list, tuple or dict display of names and constants (tuples of
    them, expressions of them; a dict's keys constants), then only read
    (:func:`only_read`) and iterated by a loop: a loop over the name is then a
    loop over its display.  An item that is an expression (``a * 1.0``), or a
    name a later statement of its block binds again, is first bound to a name of
    its own where the display runs (``ws_0 = a * 1.0``; in place, in ``fnode``), so the
    items are the objects the display made, as in Python."""
    params = {a.id for a in fnode.args.posonlyargs + fnode.args.args + fnode.args.kwonlyargs}
    params |= {a.id for a in (fnode.args.vararg, fnode.args.kwarg) if a is not None}
    loops = [loop for loop in gast.walk(fnode) if isinstance(loop, gast.For)]
    iterated = {n.id for loop in loops for n in gast.walk(loop.iter) if isinstance(n, gast.Name)}
    iterated -= {n.id for loop in loops if changes_its_variables(loop)
                 for n in gast.walk(loop.iter) if isinstance(n, gast.Name)}
    counters = {n.id for loop in loops for n in gast.walk(loop.target) if isinstance(n, gast.Name)}
    out = {}
    for block in list(statement_lists(fnode)):
        k = 0
        while k < len(block):
            st, k = block[k], k + 1
            if not (isinstance(st, gast.Assign) and len(st.targets) == 1 and
                    isinstance(st.targets[0], gast.Name) and st.targets[0].id in iterated and
                    st.targets[0].id not in params and st.targets[0].id not in known and
                    isinstance(st.value, (gast.List, gast.Tuple, gast.Dict))):
                continue
            name, value = st.targets[0].id, st.value
            if isinstance(value, gast.List) and not value.elts:  # ws = []; ws.append(a); ...
                if _appends_as_display(fnode, block, k - 1, meant, taken):
                    k = next(j for j, b in enumerate(block) if b is st)  # looked at again
                continue
            if isinstance(value, gast.Dict):
                if not value.keys or not all(isinstance(c, gast.Constant) and
                                             type(c.value) in (str, int) for c in value.keys) or \
                        len({c.value for c in value.keys}) != len(value.keys):
                    continue
                elts = value.values
            else:
                elts = value.elts
            rest = block[k:]
            if _display(gast.Tuple(elts=elts, ctx=gast.Load())) is None or \
                    not only_read(fnode, name, meant, st.targets[0]) or \
                    block is not fnode.body and not _read_after(fnode, name, st, rest):
                continue
            later = {n.id for after in rest for n in gast.walk(after)
                     if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)}
            if block is not fnode.body:  # an outer loop unrolled here may fold its
                later |= counters  # variable in the display's copy: held there, read here
            held = []
            _hold_items(elts, name, later, taken, held)
            block[k - 1:k - 1] = [located(gast.Assign(targets=[store_node(item_name)], value=item,
                                                      type_comment=None), st)
                                  for item_name, item in held]
            k += len(held)
            out[name] = value
    return out


def _appends_as_display(fnode, block, at, meant, taken):
    """Rewrite (in place) ``ws = []`` (``block[at]``) and the statements
    ``ws.append(e)`` that follow it in its block, where nothing else between
    mentions ``ws`` and it is only read after the last one, as ``ws_0 = e`` per
    append and ``ws = [ws_0, ws_1, ...]`` after the last: the same list of the
    same objects (each ``e`` evaluated where it was appended), which
    :func:`_local_displays` then takes as a display.  False (nothing changed)
    where the statements are not of that form."""
    st = block[at]
    name = st.targets[0].id
    appends, last = [], None
    for j in range(at + 1, len(block)):
        after = block[j]
        if not any(isinstance(n, gast.Name) and n.id == name for n in gast.walk(after)):
            continue
        call = after.value if isinstance(after, gast.Expr) else None
        if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and
                call.func.attr == "append" and isinstance(call.func.value, gast.Name) and
                call.func.value.id == name and len(call.args) == 1 and not call.keywords and
                not isinstance(call.args[0], gast.Starred) and
                not any(isinstance(n, gast.Name) and n.id == name
                        for n in gast.walk(call.args[0]))):
            break
        appends.append(j)
        last = j
    if not appends:
        return False
    heads = [id(block[j].value.func.value) for j in appends]
    if not only_read(fnode, name, meant, st.targets[0], also=heads) or \
            block is not fnode.body and not _read_after(fnode, name, st, block[at + 1:]):
        return False
    movable = [_movable(block[j].value.args[0],
                        [block[i] for i in range(j + 1, last + 1) if i not in appends],
                        [block[i].value.args[0] for i in appends if i > j]) for j in appends]
    items, replaced = [], {}
    for j, moved in zip(appends, movable):
        box = [block[j].value.args[0]]
        if not moved:  # held where it is appended, a tuple's items one by one
            held = []  # (``ws_0_0 = W * 0.5``, ``ws_0_1 = b``)
            _hold_items(box, name, None, taken, held, len(items))
            replaced[j] = [located(gast.Assign(targets=[store_node(item)], value=value,
                                               type_comment=None), block[j])
                           for item, value in held]
        items.append(box[0])  # else read where the display is, as a display written there
    st.value = gast.List(elts=items, ctx=gast.Load())
    block.insert(last + 1, st)
    for j in reversed(appends):
        block[j:j + 1] = replaced.get(j, [])
    del block[at]
    return True


def _movable(e, between, appended):
    """May the appended item ``e`` be evaluated after the statements ``between``
    and the later appends' items ``appended`` instead (in a display after them)?
    Where it is a display's item (:func:`_display`: names, constants, tuples and
    calls-free expressions of them) none of whose names a statement between binds
    again -- and, for an expression that makes a new value (``a * 2.0``), where no
    statement comes between (one might write in place into what it reads, also
    through another name) and every later item is such an item."""
    if _display(gast.Tuple(elts=[e], ctx=gast.Load())) is None:
        return False
    names = {n.id for n in gast.walk(e) if isinstance(n, gast.Name)}
    stored = {n.id for st in between for n in gast.walk(st)
              if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)}
    if names & stored:
        return False
    if all(isinstance(n, (gast.Name, gast.Constant, gast.Tuple, gast.Load))
           for n in gast.walk(e)):
        return True  # the same objects wherever the display reads them
    return not between and all(
        _display(gast.Tuple(elts=[a], ctx=gast.Load())) is not None for a in appended)


def _read_after(fnode, name, binding, rest):
    """Is every mention of ``name`` in ``fnode`` but the statement ``binding`` one
    in the statements ``rest`` that follow it in its block?  (A display bound in a
    nested block, ``for t in range(n): ws = (a, b); for w in ws: ...``: each read
    then sees the display of the same pass through the block.)"""
    after = {id(n) for st in rest for n in gast.walk(st)}
    own = {id(n) for n in gast.walk(binding)}
    return all(id(n) in after or id(n) in own for n in gast.walk(fnode)
               if isinstance(n, gast.Name) and n.id == name)


def _hold_items(elts, stem, later, taken, held, first=0):
    """Replace (in place) each item of ``elts`` that is an expression, or a name in
    ``later`` (every name where ``later`` is None), by a fresh name ``stem_k``
    (``stem_k_j`` in a nested tuple; ``k`` counted from ``first``); ``held`` gets
    the (name, item) bindings, in Python's order."""
    for k, e in enumerate(elts):
        if isinstance(e, gast.Tuple):
            _hold_items(e.elts, f"{stem}_{first + k}", later, taken, held)
        elif _constant_item(e) is None and (
                not isinstance(e, gast.Name) or later is None or e.id in later):
            item_name = fresh_name(f"{stem}_{first + k}", taken)
            held.append((item_name, e))
            elts[k] = gast.copy_location(name_node(item_name), e)


class _Unrolling:
    """The statements replacing one loop ``s``, if it is such a loop."""

    def __init__(self, context, s, before=()):
        self.s, self.parsed, self.meant = s, context.parsed, context.meant
        self.before = before  # the statements before ``s`` in its block
        self.taken, self.shapes = context.taken, context.shapes
        self.displays, self.fixed = context.displays, context.fixed
        self.nested = context.nested

    def statements(self):
        """The loop's copies (after the items held before it), or None."""
        s = self.s
        if not isinstance(s, gast.For) or s.orelse or not self._plain_body():
            return None
        rows = self._rows(s.iter)
        if rows == [] and self._range(s.iter) is not None:
            return []  # for j in range(0): no trip
        if not rows:
            return None
        targets = _target_names(s.target)
        if targets is None:
            return None
        stored = _stored(s.body)
        items = [_leaf for row in rows for _leaf in _leaves(row)]
        if any(isinstance(i, _Expression) and not i.of_names for i in items) and \
                not used_as_arrays(s, targets):
            return None  # (Dense(W, b) in the header: objects, the lowering's)
        if any(isinstance(n, gast.Name) and n.id in stored[1]
               for i in items if isinstance(i, (gast.Name, _Expression))
               for n in gast.walk(i if isinstance(i, gast.Name) else i.node)):
            return None  # b += v: a number rebound or an array written, not known here
        if any(isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and
               n.func.id in targets for st in s.body for n in gast.walk(st)):
            return None  # a call of the loop's variable: function_loops.py's, or the lowering's
        if any(isinstance(i, gast.Subscript) and root_name(i) in self.fixed and
               root_name(i) in stored[0] | targets for i in items):
            return None  # ps = [...] in the body: Python's iterator holds the old list
        # the items whose names the loop binds again: held before it
        rebound = stored[0] | targets
        held, before = {}, []
        for item in items:
            if isinstance(item, _Expression) and self._kept_item(item.node):
                continue  # ws[0] of a container the loop only reads: read in each copy
            if isinstance(item, _Expression):
                item.name = fresh_name("item", self.taken)
                before.append(located(gast.Assign(targets=[store_node(item.name)],
                                                  value=item.node, type_comment=None), s))
                continue
            if isinstance(item, gast.Name) and item.id in rebound and item.id not in held:
                held[item.id] = fresh_name(f"{item.id}_item", self.taken)
                before.append(located(gast.Assign(targets=[store_node(held[item.id])],
                                                  value=name_node(item.id), type_comment=None),
                                      s))
        folded = {name for name in targets if name not in stored[0] | stored[1]}
        breaks = any(isinstance(n, gast.Break) for st in s.body for n in _walk_exits(st))
        if breaks:  # which item a variable holds after the loop is known at run time:
            folded = {name for name in folded  # bound in each copy, not folded
                      if id(s) not in NameLiveness(self.parsed.node, name, read_names).after}
        stop = fresh_name("stop", self.taken) if breaks else None
        if stop is not None:  # stop = False: no copy left the loop yet
            before.append(located(gast.Assign(targets=[store_node(stop)],
                                              value=_constant_node(False), type_comment=None), s))
        out = list(before)
        last = {}
        for k, row in enumerate(rows):
            constants = {}
            bindings = []
            if not self._bind(s.target, row, folded, held, constants, bindings):
                return None
            last = constants  # (what the last copy folds: an earlier one may differ)
            body = _decided([self._copy(st, constants) for st in s.body],
                            self.parsed.comprehension_conditions, s)
            if body is None:
                return None  # a condition of this comprehension known only at run time
            if not body and s in self.parsed.comprehension_loops:
                bindings = []  # (a comprehension's variables are its own: read nowhere else)
            copied = bindings + (self._ended(body, stop) if body else [])
            if stop is not None and k:  # a later copy runs only if no copy broke
                copied = [located(gast.If(test=gast.UnaryOp(op=gast.Not(),
                                                            operand=name_node(stop)),
                                          body=copied, orelse=[]), s)]
            out.extend(copied)
        for name in sorted(last):
            if id(s) in NameLiveness(self.parsed.node, name, read_names).after:
                out.append(located(gast.Assign(targets=[store_node(name)],
                                               value=_constant_node(last[name]),
                                               type_comment=None), s))
        return out

    def _plain_body(self):
        """Does the body hold nothing that stops the unrolling (the module's
        docstring)?  (A comprehension's condition is of this loop, decided in
        each copy by :func:`_decided`, or of a loop in its body, whose copies
        keep it.)"""
        conditions = self.parsed.comprehension_conditions
        if not _exits_in_ifs(self.s.body):
            return False
        loops = {id(n) for st in self.s.body for n in gast.walk(st) if isinstance(n, gast.For)}
        loops.add(id(self.s))
        for st in self.s.body:
            for n in gast.walk(st):
                if isinstance(n, _OPAQUE) or \
                        n in conditions and id(conditions.get(n)) not in loops:
                    return False
        return True

    def _rows(self, it):
        """The items of each trip: a list of rows, each a display's item (a node)
        or a tuple of them (``enumerate``, ``zip``); None where ``it`` is no such
        row."""
        if isinstance(it, (gast.Tuple, gast.List)):
            return _display(it, header=True)
        if self.s in self.parsed.comprehension_loops:  # [f(k) for k in range(3)]
            rows = self._range(it)
            if rows is not None:
                return rows
        if self._indexes_a_given_container():  # params[l], ws[l] of a local display
            rows = self._range(it)
            if rows is not None and len(rows) <= MOST_UNROLLED_COPIES:
                return rows
        given = self._given(it)
        if given is not None:
            return given
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
            items = self._column(it.args[0]) or _display(it.args[0], header=True)
            if not items:
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
        return self._range(node) or self._given(node) or _display(node)

    def _given(self, node):
        """The items of a loop over a parameter the call gives a list, tuple or
        dict (only read: :func:`only_read`): ``P[0]``, ``P[1]``, ... of a list or
        tuple; the keys of a dict (``P``, ``P.keys()``), its items
        (``P.items()``: key and ``P[key]``), its values; of a slice of constants
        (``P[:2]``, ``ws[1:]``) of a list or tuple never written into (a display
        or one the call gives: :meth:`_sliced`), the items it holds; else None."""
        method = None
        if isinstance(node, gast.Subscript) and isinstance(node.slice, gast.Slice):
            return self._sliced(node)
        if isinstance(node, gast.Call) and not node.args and not node.keywords and \
                isinstance(node.func, gast.Attribute):
            node, method = node.func.value, node.func.attr
        if isinstance(node, gast.Name) and node.id in self.displays:
            return _of_display(self.displays[node.id], method)
        if isinstance(node, gast.Name) and node.id in self.shapes:
            structure, node = self.shapes[node.id], name_node(node.id)
        else:  # params[0], or layer = params[0] before the loop
            node = self._aliased(node)
            structure = None if node is None else self._structure_at(node)
            if structure is None:
                return None
        kind = structure[0]
        if kind in ("list", "tuple") and method is None:
            return [_item(node, k) for k in range(len(structure[1]))]
        if kind != "dict" or not all(type(key) in (str, int) for key in structure[1]):
            return None
        keys = structure[1]
        if method in (None, "keys"):
            return [_Constant(key) for key in keys]
        if method == "values":
            return [_item(node, key) for key in keys]
        if method == "items":
            return [(_Constant(key), _item(node, key)) for key in keys]
        return None

    def _sliced(self, node):
        """The items of ``P[a:b:c]`` (constants or none) where ``P`` is a local
        display only read or a list or tuple the call gives and the function only
        reads (never written into, so the items the slice copied when the loop
        began are those ``P`` holds in each copy), or a list or tuple of
        :func:`~.fixed_structures.fixed_structures` (``ws[k]`` as a header's item,
        bound before the copies where the body writes into ``P``: the slice holds
        the items of before, as in Python); else None."""
        whole = node.value
        if not (isinstance(whole, gast.Name) and (
                whole.id in self.displays or whole.id in self.shapes and
                self.shapes[whole.id][0] in ("list", "tuple"))):
            return None
        if isinstance(self.displays.get(whole.id), gast.Dict):
            return None
        bounds = []
        for part in (node.slice.lower, node.slice.upper, node.slice.step):
            constant = None if part is None else _constant_item(part)
            if part is not None and (constant is None or type(constant.value) is not int):
                return None
            bounds.append(None if part is None else constant.value)
        if bounds[2] == 0:
            return None  # (raises in Python)
        items = self._given(whole)
        if items is not None and whole.id in self.fixed and whole.id not in self.displays:
            items = [_Expression(item) for item in items]  # (held unless only read)
        return None if items is None else items[slice(*bounds)]

    def _structure_at(self, path):
        """The structure of ``path`` (``P[0]["enc"]``: constant keys into a
        container the call gives, only read), or None."""
        keys = []
        while isinstance(path, gast.Subscript) and isinstance(path.slice, gast.Constant):
            keys.append(path.slice.value)
            path = path.value
        if not keys or not isinstance(path, gast.Name) or path.id not in self.nested:
            return None
        structure = self.shapes[path.id]
        for key in reversed(keys):
            if structure == "leaf" or structure[0] not in ("list", "tuple", "dict"):
                return None
            if structure[0] == "dict":
                if key not in structure[1]:
                    return None
                structure = structure[2][structure[1].index(key)]
            elif type(key) is int and 0 <= key < len(structure[1]):
                structure = structure[1][key]
            else:
                return None
        return structure if structure != "leaf" else None

    def _aliased(self, node):
        """``node`` itself where it is a path into a given container
        (:meth:`_structure_at`); for a name, the path the last statement before
        the loop binding it binds it to (``layer = params[0]``, ``enc, dec =
        params``: ``params[0]``); else None.  (Every name so bound is only read:
        :func:`~.fixed_structures.nested_kept`.)"""
        if isinstance(node, gast.Subscript):
            return node
        if not isinstance(node, gast.Name):
            return None
        for st in reversed(self.before):
            if not any(isinstance(n, gast.Name) and n.id == node.id and
                       not isinstance(n.ctx, gast.Load) for n in gast.walk(st)):
                continue
            if not (isinstance(st, gast.Assign) and len(st.targets) == 1):
                return None
            target, whole = st.targets[0], self._whole(st.value)
            if whole is None or whole == "leaf":
                return None
            if isinstance(target, gast.Name) and target.id == node.id:
                return st.value
            ids = [t.id for t in getattr(target, "elts", ()) if isinstance(t, gast.Name)]
            if isinstance(target, (gast.Tuple, gast.List)) and len(ids) == len(target.elts) and \
                    whole[0] in ("list", "tuple") and len(whole[1]) == len(ids) and \
                    ids.count(node.id) == 1:
                return _item(st.value, ids.index(node.id))
            return None
        return None

    def _whole(self, path):
        """The structure of ``path`` or of the given container it names (where
        its nested containers are kept: :func:`~.fixed_structures.nested_kept`)."""
        root = root_name(path)
        if root not in self.nested:
            return None
        if isinstance(path, gast.Name):
            return self.shapes[path.id]
        return self._structure_at(path)

    def _range(self, node):
        """The items of ``range(...)`` of constants and lengths of the given
        containers (``range(len(params))``; the builtins), else None."""
        if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and
                node.func.id == "range" and "range" in self.meant and not node.keywords and
                1 <= len(node.args) <= 3):
            return None
        bounds = [self._integer(a) for a in node.args]
        if any(b is None for b in bounds):
            return None
        return [_Constant(k) for k in range(*bounds)]

    def _integer(self, node, at=None):
        """An int constant, ``len(P)`` of a given container ``P`` or of a local
        display, ``+ - * // %`` of such ints (``constant_flags``'
        :func:`~.constant_flags.folded_value`), or a name bound once to one
        before the loop (:func:`_bound_once_before`: ``n = 4``, ``L = len(p) //
        2``); else None."""
        if isinstance(node, gast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, gast.BinOp):
            left, right = self._integer(node.left, at), self._integer(node.right, at)
            if left is None or right is None:
                return None
            value = folded_value(gast.BinOp(left=_constant_node(left), op=node.op,
                                            right=_constant_node(right)), {})
            return value if type(value) is int else None
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
            value = _bound_once_before(self.parsed.node, node.id, at or self.s)
            return None if value is None else self._integer(value, value)
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and \
                node.func.id == "len" and "len" in self.meant and len(node.args) == 1 and \
                not node.keywords and isinstance(node.args[0], gast.Name) and \
                node.args[0].id in self.shapes:
            return len(self.shapes[node.args[0].id][1])
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and \
                node.func.id == "len" and "len" in self.meant and len(node.args) == 1 and \
                not node.keywords and isinstance(node.args[0], gast.Name) and \
                node.args[0].id in self.displays:
            return len(_of_display(self.displays[node.args[0].id], "keys" if isinstance(
                self.displays[node.args[0].id], gast.Dict) else None))
        return None

    def _indexes_a_given_container(self):
        """Does the body index a given container with the loop's counter
        (``params[l]``)?  (A range loop that does not stays a loop.)"""
        target = self.s.target
        return isinstance(target, gast.Name) and any(
            isinstance(n, gast.Subscript) and isinstance(n.value, gast.Name) and
            (n.value.id in self.shapes or n.value.id in self.displays) and
            any(isinstance(m, gast.Name) and m.id == target.id for m in gast.walk(n.slice))
            for st in self.s.body for n in gast.walk(st))

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
        if isinstance(item, (gast.Name, gast.Subscript)):  # W, b = params[0]
            out.append(located(gast.Assign(targets=[_copy_target(target)],
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
        if isinstance(item, _Expression):
            return copy.deepcopy(item.node) if item.name is None else name_node(item.name)
        if isinstance(item, gast.Name):
            return name_node(held.get(item.id, item.id))
        if isinstance(item, gast.Subscript):
            return copy.deepcopy(item)
        return gast.Tuple(elts=[self._value(i, held) for i in item.elts], ctx=gast.Load())

    def _kept_item(self, node):
        """Is the header's item ``node`` an item at a path of constants
        (``ws[0]``, ``p["enc"][1]``) of a container of known structure
        (:func:`~.fixed_structures.known_structures`: never handed on or bound
        to another name) that the loop's body only reads items of -- so that it
        holds, in each copy, what it held when the display was made?"""
        path = node
        while isinstance(path, gast.Subscript) and isinstance(path.slice, gast.Constant):
            path = path.value
        if not (isinstance(path, gast.Name) and path is not node and path.id in self.shapes):
            return False
        name = path.id
        reads = {id(n.value) for st in self.s.body for n in gast.walk(st)
                 if isinstance(n, gast.Subscript) and isinstance(n.ctx, gast.Load)}
        return all(id(n) in reads for st in self.s.body for n in gast.walk(st)
                   if isinstance(n, gast.Name) and n.id == name) and \
            not any(isinstance(n, (gast.Subscript, gast.Attribute)) and
                    not isinstance(n.ctx, gast.Load) and root_name(n) == name
                    for st in self.s.body for n in gast.walk(st))

    def _ended(self, stmts, stop):
        """The statements ``stmts`` of one copy without its ``continue`` and
        ``break`` (the loop's own, in ``if`` blocks only: :func:`_exits_in_ifs`),
        as Python runs them: the rest of a block after an exit is dropped, the rest
        after an ``if`` that may exit goes into both of its branches (as the
        lowering writes the rest of a trip after such an ``if``), and ``break``
        sets ``stop`` first (the later copies run under ``if not stop:``)."""
        out = []
        for k, st in enumerate(stmts):
            if isinstance(st, gast.Continue):
                break
            if isinstance(st, gast.Break):
                out.append(located(gast.Assign(targets=[store_node(stop)],
                                               value=_constant_node(True), type_comment=None),
                                   st))
                break
            if isinstance(st, gast.If) and any(
                    isinstance(n, (gast.Break, gast.Continue)) for n in _walk_exits(st)):
                rest = stmts[k + 1:]
                st.body = self._ended(st.body + [self._copy(r, {}) for r in rest], stop)
                st.orelse = self._ended(st.orelse + rest, stop) if st.orelse or rest else []
                out.append(st)
                break
            out.append(st)
        return out or [located(gast.Pass(), stmts[0] if stmts else self.s)]

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
        for n in gast.walk(st):  # a comprehension's condition: of the copy of its loop
            loop = p.comprehension_conditions.get(n)  # (this loop's own: decided per copy)
            if loop is not None and id(n) in memo:
                p.comprehension_conditions[memo[id(n)]] = memo.get(id(loop), loop)
        if constants:
            out = _Folding(constants).visit(out)
        return out


class _Folding(gast.NodeTransformer):
    """Each read of a name of ``constants`` ({name: value}) as its constant."""

    def __init__(self, constants):
        self.constants = constants

    def visit_Name(self, node):
        if node.id in self.constants and isinstance(node.ctx, gast.Load):
            return gast.copy_location(_constant_node(self.constants[node.id]), node)
        return node


def _of_display(display, method):
    """The items of a loop over a name bound to ``display`` (:func:`_local_displays`):
    the display's items, a dict's keys, values or (key, value) items."""
    if not isinstance(display, gast.Dict):
        return _display(display) if method is None else None
    keys = [_Constant(c.value) for c in display.keys]
    values = _display(gast.Tuple(elts=display.values, ctx=gast.Load()))
    if method in (None, "keys"):
        return keys
    if method == "values":
        return values
    if method == "items":
        return list(zip(keys, values))
    return None


def _constant_item(e):
    """The :class:`_Constant` a display's item ``e`` is (``"enc"``, ``2``, ``-1``), or None."""
    if isinstance(e, gast.Constant) and type(e.value) in _CONSTANTS:
        return _Constant(e.value)
    if isinstance(e, gast.UnaryOp) and isinstance(e.op, gast.USub) and \
            isinstance(e.operand, gast.Constant) and type(e.operand.value) in (int, float):
        return _Constant(-e.operand.value)
    return None


def _bound_once_before(fnode, name, at):
    """The value of ``name = value``, a statement of the function's own block
    before the one holding ``at``, where no other statement binds ``name``
    (:func:`~.constant_flags.bound_names`: an assignment, a loop, ``del``, an
    import, a nested scope's own names too) and it is neither a parameter nor
    ``global``/``nonlocal`` nor mentioned by a nested scope -- what ``name``
    holds at ``at`` -- else None."""
    if name in names_seen_outside(fnode):
        return None
    binding = None
    for st in fnode.body:
        if any(n is at for n in gast.walk(st)):
            if binding is None or name in bound_names(st):
                return None
            return binding.value if not any(
                name in bound_names(later) for later in fnode.body[fnode.body.index(st):]) \
                else None
        if name in bound_names(st):
            if binding is not None or not (
                    isinstance(st, gast.Assign) and len(st.targets) == 1 and
                    isinstance(st.targets[0], gast.Name) and st.targets[0].id == name):
                return None
            binding = st
    return None


def _decided(stmts, conditions, loop):
    """The statements ``stmts`` of one copy of ``loop`` with each ``if`` of its
    comprehension's conditions (``conditions``: ``if`` -> its loop) as the path
    that runs -- its body, or nothing -- where its test, the loop's variables
    folded, reads constants alone (``if 1 != 1:``; ``constant_flags``'
    :func:`~.constant_flags.decided_truth`: it calls nothing, so dropping it is
    exact); None where one is known only at run time."""
    out = []
    for st in stmts:
        if not (isinstance(st, gast.If) and conditions.get(st) is loop):
            out.append(st)
            continue
        truth = decided_truth(st.test)
        if truth is None:
            return None
        if truth:
            kept = _decided(st.body, conditions, loop)
            if kept is None:
                return None
            out.extend(kept)
    return out


def _display(node, header=False):
    """The items of a tuple or list display of names and constants (tuple
    displays of them too), an attribute or arithmetic of names an
    :class:`_Expression`; else None.  ``header``: a display in a loop's header,
    any other expression (a call, a subscript: ``for k, w in
    enumerate([np.sin(a), b, c @ a])``) an :class:`_Expression` too -- Python
    makes the display once, before the loop, item after item, as the names bound
    before the copies are, in the order of the items -- but for one that binds a
    name, makes a function or is a starred item (``:=``, ``lambda``, a
    comprehension, ``*rest``, ``yield``, ``await``)."""
    if not isinstance(node, (gast.Tuple, gast.List)) or not node.elts:
        return None
    items = []
    for e in node.elts:
        if _constant_item(e) is not None:
            items.append(_constant_item(e))
        elif isinstance(e, gast.Name):
            items.append(e)
        elif isinstance(e, gast.Tuple) and e.elts:
            inner = _display(e, header)
            if inner is None:
                return None
            items.append(gast.Tuple(elts=inner, ctx=gast.Load()))
        elif _held_item(e) if header else _item_of_names(e):
            items.append(_Expression(e))
        else:
            return None
    return items


def _item_of_names(e):
    """An attribute or arithmetic of names and constants (``a.T``, ``-b``)."""
    return isinstance(e, (gast.Attribute, gast.BinOp, gast.UnaryOp)) and \
        all(isinstance(n, _OF_NAMES) for n in gast.walk(e))


def _held_item(e):
    """An item a header's display may hold in a name bound before the loop."""
    return not any(isinstance(n, _NOT_HELD) for n in gast.walk(e))


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


def _exits_in_ifs(stmts):
    """Is every ``break`` and ``continue`` of the loop whose body is ``stmts`` a
    statement of the body or of its ``if`` blocks (nested), none inside a
    ``with``, ``try`` or ``match``?"""
    for st in stmts:
        if isinstance(st, gast.If):
            if not (_exits_in_ifs(st.body) and _exits_in_ifs(st.orelse)):
                return False
        elif not isinstance(st, (gast.Break, gast.Continue)) and any(
                isinstance(n, (gast.Break, gast.Continue)) for n in _walk_exits(st)):
            return False
    return True


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


def _item(name, key):
    """``name[key]``, read (``name``: a name, or a node copied)."""
    value = name_node(name) if isinstance(name, str) else copy.deepcopy(name)
    return gast.Subscript(value=value, slice=_constant_node(key), ctx=gast.Load())


def _copy_target(target):
    target = copy.deepcopy(target)
    for n in gast.walk(target):
        if isinstance(n, gast.Name):
            n.ctx = gast.Store()
    return target


def _constant_node(value):
    return gast.Constant(value=value, kind=None)


def unrolled_loop(parsed, loop, structures=None):
    """The statements ``loop`` (a statement of ``parsed.node``) unrolls to, judged
    as :func:`unroll_static_loops` judges it (``structures``: of the containers
    the call gives), else None; ``parsed.node`` is left as it is.  For
    ``object_lists.py``, which unrolls a loop filling a list of objects before
    the objects are inlined."""
    fnode = parsed.node
    meant = builtins_meant(("enumerate", "zip", "range", "len", "reversed"), fnode,
                           parsed.resolve)
    shapes = {name: structure for name, structure in (structures or {}).items()
              if only_read(fnode, name, meant)}
    return _Unrolling(_Context(parsed, meant, names_taken(fnode), shapes), loop).statements()
