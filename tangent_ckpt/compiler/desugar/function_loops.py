"""Desugar: a ``for`` loop over a tuple or list of functions, unrolled.

``for act in (np.tanh, np.sin, squash): x = act(x)`` runs its body once per
function, ``act`` each in turn.  Which function a call of ``act`` means is then
known when compiling only for one trip at a time, so the loop becomes its body
once per function, with the function's own name in place of ``act``::

    for act in (np.tanh, squash):      ->      x = np.tanh(x)
        x = act(x)                             x = squash(x)

and the inliner (run after this pass) writes ``squash``'s body where it is
called.  That is the same program exactly when every item is a name (or a
dotted name of a module) that surely denotes a function when compiling (a
function of the user's, a NumPy function, a builtin), none is a local of the
function, the body rebinds neither ``act`` nor an item, does not leave the loop
early, and holds no ``def`` or ``lambda`` (a closure would read ``act`` when it
runs: the last function, not its trip's).  After the loop ``act`` names the
last function, as in Python, when it is read later.

The same holds for ``for k, act in enumerate(<functions>)`` (``k`` each trip's
number, from ``start`` if given), and for a module-level list or tuple of
functions the loop reads by its name, ``for phi in BASIS:`` (basis functions, a
layer's activations): its items, each named where the function's module names
it (``sq``, ``np.tanh``), are the display; a lambda, or a function the module
names no more, leaves the loop as written.  The gradient is compiled again when
the list's items change (``parse.note_items``).

``zip`` of such functions with other lists is written out the same way
(``for W, b, act in zip(Ws, bs, ACTS)``, per-layer activations): each trip binds
the other targets as Python does (``W = A`` from a display's item, evaluated
before the loop where the body could rebind what it reads) or reads ``Ws[k]``
where ``W`` is read (a list or tuple the call gives, of known length, or a local
bound once to a display, that the function only reads by item, ``len`` or
``zip``: the item it holds in that trip); ``zip`` stops at the shortest, and a
constant ``range`` may be zipped too.  ``enumerate`` of such a ``zip`` likewise.

A local list of lambdas (``fs = [lambda t: t, lambda t: t ** 2]``, or ``[lambda
t, k=k: t ** k for k in range(3)]``) read only by such loops and comprehensions
has each lambda bound to a name of its own first (``fs_0 = lambda t: t``; a
default that is not a constant bound before it, where Python evaluates it; a
comprehension's variable read in a lambda's body is its last value, as the
closure reads it).  A list comprehension over functions, or a generator
expression given alone to ``sum``, ``list`` or ``tuple`` (``sum(f(x) for f in
fs)``), is the display of its element per function.  Any other loop stays.
"""

import copy
import types

import gast
import numpy as np

from tangent_ckpt.adjoints import registry
from tangent_ckpt.compiler.desugar.function_names import module_attribute
from tangent_ckpt.compiler.desugar.local_bindings import (SCOPES, builtins_meant, local_names,
                                                          parameter_names)
from tangent_ckpt.compiler.desugar.view_facts import resolve_dotted
from tangent_ckpt.compiler.desugar.view_shape import (fresh_name, located, name_node,
                                                      names_taken, statement_lists, store_node)
from tangent_ckpt.compiler.frontend.parse import note_items

_FUNCTIONS = (types.FunctionType, types.BuiltinFunctionType, np.ufunc)


def unroll_function_loops(parsed, fnode=None, structures=None):
    """Rewrite every such loop of ``fnode`` (by default ``parsed.node``; a
    helper's template, ``parsed`` its module's; nested blocks too), in place.
    ``structures``: {parameter: structure} of the lists and tuples the call gives
    (``passes.given_containers``; their lengths), where known.  Returns whether
    a loop was written out (its calls may then be inlined)."""
    fnode = fnode if fnode is not None else parsed.node
    local = local_names(fnode)
    taken = names_taken(fnode)
    _name_lambdas(fnode, parsed, taken)
    local = _Local(local, _local_functions(fnode))
    displays = _function_displays(fnode, parsed, local)
    _Comprehensions(parsed, fnode, local, displays).visit(fnode)
    written = False
    for block in statement_lists(fnode):
        k = 0
        while k < len(block):
            unrolled = _unrolled(block[k], parsed, local, fnode, displays, structures, taken)
            if unrolled is None:
                k += 1
                continue
            block[k:k + 1] = unrolled
            k += len(unrolled)
            written = True
    if displays:  # (each read was a loop's: the binding is read no more)
        unread = {id(stmt) for name, stmt in displays.items()
                  if not any(isinstance(n, gast.Name) and n.id == name
                             for n in gast.walk(fnode) if n is not stmt.targets[0])}
        fnode.body = [stmt for stmt in fnode.body if id(stmt) not in unread]
    return written


def _function_displays(fnode, parsed, local):
    """{name: its binding} of the locals bound once, by a statement of the
    function's top level, to a display of functions (``acts = [np.tanh, sq]``),
    and read only as the iterable of a later loop (``for act in acts``,
    ``enumerate(acts)``): such a loop is the loop over the display."""
    loops_over = set()
    for node in gast.walk(fnode):
        if isinstance(node, gast.For):
            enumerated = _enumerated(node)
            iterable = enumerated[3] if enumerated else node.iter
            if isinstance(iterable, gast.Call) and isinstance(iterable.func, gast.Name) and \
                    iterable.func.id == "zip":
                loops_over.update(id(a) for a in iterable.args if isinstance(a, gast.Name))
            elif isinstance(iterable, gast.Name):
                loops_over.add(id(iterable))
        elif isinstance(node, gast.comprehension) and isinstance(node.iter, gast.Name):
            loops_over.add(id(node.iter))   # sum(f(x) for f in fs)
    found = {}
    for position, stmt in enumerate(fnode.body):
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and
                isinstance(stmt.targets[0], gast.Name) and
                isinstance(stmt.value, (gast.Tuple, gast.List)) and stmt.value.elts and
                all(_function(e, parsed.resolve, local) for e in stmt.value.elts)):
            continue
        name = stmt.targets[0].id
        uses = [n for n in gast.walk(fnode) if isinstance(n, gast.Name) and n.id == name and
                n is not stmt.targets[0]]
        later = {id(n) for later_stmt in fnode.body[position + 1:]
                 for n in gast.walk(later_stmt)}
        if uses and all(isinstance(n.ctx, gast.Load) and id(n) in loops_over and
                        id(n) in later for n in uses):
            found[name] = stmt
    return found


def _function(node, resolve, local):
    """Whether ``node`` (an item of the loop) surely denotes a function (a local
    :func:`_name_lambdas` bound to a lambda too)."""
    if isinstance(node, gast.Name) and node.id in local.lambdas:
        return True
    if not isinstance(node, (gast.Name, gast.Attribute)):
        return False
    obj = resolve_dotted(node, resolve, local)
    return obj is not None and (isinstance(obj, _FUNCTIONS) or registry.lookup(obj) is not None)


def _unrolled(s, parsed, local, fnode, displays, structures, taken):
    if not isinstance(s, gast.For) or s.orelse:
        return None
    counter, start, target, iterable = None, 0, s.target, s.iter
    enumerated = _enumerated(s)
    if enumerated is not None:
        counter, start, target, iterable = enumerated
    columns = _columns(target, iterable, parsed, local, fnode, displays, structures)
    if columns is None:
        return None
    functions = [(t.id, items) for t, items, _ in columns if isinstance(t, gast.Name) and
                 all(isinstance(e, (gast.Name, gast.Attribute)) for e in items) and
                 _items_are_functions(items, parsed, local)]
    if not functions:
        return None
    function_vars = {var for var, _ in functions}
    bound_here = function_vars | ({counter} if counter else set())
    roots = {_root(e) for _, items in functions for e in items}
    body_bound = set()
    for node in (n for st in s.body for n in gast.walk(st)):
        if isinstance(node, SCOPES + (gast.Break, gast.Continue, gast.Global, gast.Nonlocal,
                                      gast.Yield, gast.YieldFrom, gast.NamedExpr)):
            return None
        if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load):
            if node.id in bound_here or node.id in roots:
                return None
            body_bound.add(node.id)
    trips = min(len(items) for _, items, _ in columns)
    if not trips:
        return None
    targets_bound = {n.id for t, _, _ in columns for n in gast.walk(t) if isinstance(n, gast.Name)}
    out, values = [], []
    for t, items, quiet in columns:
        if isinstance(t, gast.Name) and t.id in function_vars:
            continue
        if quiet and isinstance(t, gast.Name) and t.id not in body_bound:
            functions.append((t.id, items))  # layers[0] read where layer is: an object's too
            continue
        held = []
        for item in items:   # (every item of a display: zip stops later than Python makes them)
            if quiet or isinstance(item, gast.Constant) or isinstance(item, gast.Name) and \
                    (item.id not in body_bound | targets_bound or len(held) >= trips):
                held.append(item)  # (read in its trip: the same value)
                continue
            name = fresh_name("zip_item", taken)   # evaluated before the loop, as Python does
            out.append(located(gast.Assign(targets=[store_node(name)], value=item,
                                           type_comment=None), s))
            held.append(name_node(name))
        values.append((t, held))
    for trip in range(trips):
        number = start + trip
        for t, held in values:  # the target bound as Python binds it, each trip
            out.append(located(gast.Assign(targets=[_stored(t)], value=copy.deepcopy(held[trip]),
                                           type_comment=None), s))
        for st in s.body:
            for var, items in functions:
                st = _replaced(st, var, items[trip])
            out.append(_replaced(st, counter, gast.Constant(value=number, kind=None))
                       if counter else st)
    after = [(var, items[trips - 1]) for var, items in functions]
    if counter:
        after.append((counter, gast.Constant(value=start + trips - 1, kind=None)))
    for name, value in after:
        if _read_after(fnode, s, name):
            out.append(located(gast.Assign(
                targets=[gast.Name(id=name, ctx=gast.Store(), annotation=None,
                                   type_comment=None)],
                value=copy.deepcopy(value), type_comment=None), s))
    return out


def _columns(target, iterable, parsed, local, fnode, displays, structures):
    """[(target, items, quiet)]: what a loop over ``iterable`` binds to ``target``
    each trip -- one column, or one per argument of ``zip(...)`` -- and whether
    each item gives the same value read in its trip as before the loop (else a
    display's item, which Python evaluates before the loop); None where one is
    not known."""
    if isinstance(iterable, gast.Call) and isinstance(iterable.func, gast.Name) and \
            iterable.func.id == "zip" and not iterable.keywords and iterable.args and \
            isinstance(target, (gast.Tuple, gast.List)) and \
            len(target.elts) == len(iterable.args) and \
            not any(isinstance(a, gast.Starred) for a in iterable.args) and \
            builtins_meant({"zip"}, fnode, parsed.resolve):
        columns = []
        for t, arg in zip(target.elts, iterable.args):
            column = _column(arg, parsed, local, fnode, displays, structures)
            if column is None or isinstance(t, gast.Starred):
                return None
            columns.append((t,) + column)
        return columns
    if not isinstance(target, gast.Name):
        return None
    if isinstance(iterable, gast.Name) and iterable.id in displays:
        iterable = displays[iterable.id].value
    items = _items(iterable, parsed, local)
    return [(target, items, True)] if items else None


def _column(arg, parsed, local, fnode, displays, structures):
    """(items, quiet): the items ``zip`` takes from ``arg`` -- functions (a
    display, a local display of them, a module-level list), a display's items
    (not quiet), a constant ``range``, or ``ws[k]`` of a list or tuple of known
    length that nothing writes into (given by the call, or bound once to a
    display) -- or None."""
    if isinstance(arg, gast.Name) and arg.id in displays:
        arg = displays[arg.id].value
    items = _items(arg, parsed, local)
    if items:
        return items, True
    if isinstance(arg, (gast.Tuple, gast.List)):
        if any(isinstance(e, gast.Starred) for e in arg.elts):
            return None
        return list(arg.elts), False
    if isinstance(arg, gast.Call):
        constants = _constant_items(arg, parsed, fnode)   # range(1, 4)
        return (constants, True) if constants else None
    if isinstance(arg, gast.Name):
        length = _read_only_length(arg.id, fnode, structures)
        if length is not None:
            return [gast.Subscript(value=name_node(arg.id), slice=gast.Constant(value=k, kind=None),
                                   ctx=gast.Load()) for k in range(length)], True
    return None


def _read_only_length(name, fnode, structures):
    """The length of the list or tuple ``name`` holds, where the function only
    reads it -- by item, ``len`` or as ``zip``'s argument -- and it is a
    parameter the call gives (its structure in ``structures``) never bound
    again, or a local bound once, by a statement of the function's top level, to
    a display with no starred item; else None."""
    mentions = [n for n in gast.walk(fnode) if isinstance(n, gast.Name) and n.id == name]
    parents = {}
    for node in gast.walk(fnode):
        for child in gast.iter_child_nodes(node):
            parents[id(child)] = node
    binders = [n for n in mentions if not isinstance(n.ctx, (gast.Load, gast.Param))]
    length = None
    if name in parameter_names(fnode):
        structure = (structures or {}).get(name)
        if binders or not (isinstance(structure, tuple) and structure[0] in ("list", "tuple")):
            return None
        length = len(structure[-1])
    else:
        bindings = [stmt for stmt in fnode.body if isinstance(stmt, gast.Assign) and
                    len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name) and
                    stmt.targets[0].id == name]
        if len(binders) != 1 or len(bindings) != 1 or bindings[0].targets[0] is not binders[0] \
                or not isinstance(bindings[0].value, (gast.List, gast.Tuple)) or \
                any(isinstance(e, gast.Starred) for e in bindings[0].value.elts):
            return None
        length = len(bindings[0].value.elts)
    for n in mentions:
        if not isinstance(n.ctx, gast.Load):
            continue
        parent = parents.get(id(n))
        if isinstance(parent, gast.Subscript) and parent.value is n and \
                isinstance(parent.ctx, gast.Load):
            continue
        if isinstance(parent, gast.Call) and n in parent.args and \
                isinstance(parent.func, gast.Name) and parent.func.id in ("len", "zip"):
            continue
        return None
    return length


def _items_are_functions(items, parsed, local):
    return all(_function(e, parsed.resolve, local) for e in items)


def _stored(target):
    """A copy of the loop's target ``target`` as an assignment's target."""
    target = copy.deepcopy(target)
    for n in gast.walk(target):
        if hasattr(n, "ctx") and isinstance(n, (gast.Name, gast.Tuple, gast.List)):
            n.ctx = gast.Store()
    return target


def _enumerated(s):
    """(counter, start, target, iterable) of ``for k, f in enumerate(xs)`` (or
    ``enumerate(xs, start)`` with a constant ``start``), else None."""
    call, target = s.iter, s.target
    if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Name) and
            call.func.id == "enumerate" and isinstance(target, gast.Tuple) and
            len(target.elts) == 2 and isinstance(target.elts[0], gast.Name) and
            call.args and not isinstance(call.args[0], gast.Starred)):
        return None
    starts = call.args[1:] + [k.value for k in call.keywords if k.arg == "start"]
    if len(call.args) + len(call.keywords) > 2 or \
            any(k.arg != "start" for k in call.keywords) or \
            starts and not (isinstance(starts[0], gast.Constant) and type(starts[0].value) is int):
        return None
    return target.elts[0].id, starts[0].value if starts else 0, target.elts[1], call.args[0]


def _items(iterable, parsed, local):
    """The functions a loop over ``iterable`` visits, as names (or dotted names)
    that denote them when compiling: a display's items, or a module-level list or
    tuple's, each named as the function's module names it; None if any is not."""
    if isinstance(iterable, (gast.Tuple, gast.List)):
        if iterable.elts and all(_function(e, parsed.resolve, local) for e in iterable.elts):
            return list(iterable.elts)
        return None
    if not isinstance(iterable, gast.Name) or iterable.id in local:
        return None
    table = parsed.resolve(iterable.id)
    if type(table) not in (list, tuple) or not table:
        return None
    items = []
    for fn in table:
        if isinstance(fn, types.FunctionType) and fn.__name__ not in local and \
                parsed.resolve(fn.__name__) is fn:
            items.append(name_node(fn.__name__))
        elif isinstance(fn, _FUNCTIONS) and not isinstance(fn, types.FunctionType):
            spelled = module_attribute(parsed, fn, local, ())
            if spelled is None:
                return None
            items.append(spelled)
        else:
            return None  # (a lambda, a function the module names otherwise)
    note_items(table, iterable.id)
    return items


def _root(node):
    while isinstance(node, gast.Attribute):
        node = node.value
    return node.id


def _replaced(stmt, var, item):
    """``stmt`` (a copy) with each read of ``var`` the expression ``item``."""
    stmt = copy.deepcopy(stmt)

    class Replace(gast.NodeTransformer):
        def visit_Name(self, node):
            if node.id == var and isinstance(node.ctx, gast.Load):
                return gast.copy_location(copy.deepcopy(item), node)
            return node
    return Replace().visit(stmt)


def _read_after(fnode, loop, var):
    """Is ``var`` read anywhere in ``fnode`` outside ``loop``'s body?"""
    inside = {id(n) for st in loop.body for n in gast.walk(st)}
    return any(isinstance(n, gast.Name) and n.id == var and isinstance(n.ctx, gast.Load) and
               id(n) not in inside for n in gast.walk(fnode))


def _local_functions(fnode):
    """The locals bound once, by a statement of the function's top level, to a
    lambda or by a ``def`` (``h = lambda t: ...``; those :func:`_name_lambdas`
    bound), not ``global``/``nonlocal``, and read only in later statements of
    the top level: each read names that one function (a loop over them then
    calls it by its name, which inlining writes out)."""
    binders = {}
    for node in gast.walk(fnode):
        if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Del)):
            binders[node.id] = binders.get(node.id, 0) + 1
        elif isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)) and \
                node is not fnode:
            binders[node.name] = binders.get(node.name, 0) + 1
        elif isinstance(node, (gast.Global, gast.Nonlocal)):
            for name in node.names:
                binders[name] = binders.get(name, 0) + 2
    found = {}
    for position, stmt in enumerate(fnode.body):
        if isinstance(stmt, gast.FunctionDef) and not stmt.decorator_list:
            found[stmt.name] = position
        elif isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.Lambda):
            found[stmt.targets[0].id] = position
    found = {name: k for name, k in found.items() if binders.get(name) == 1}
    for position, stmt in enumerate(fnode.body):
        for n in gast.walk(stmt):
            if isinstance(n, gast.Name) and n.id in found and isinstance(n.ctx, gast.Load) and \
                    position <= found[n.id]:
                del found[n.id]   # (read before it is bound, or in its own body)
    return set(found)


class _Local(frozenset):
    """The function's local names, with ``lambdas``: those bound once to a
    function of its own (:func:`_local_functions`: functions known when
    compiling)."""

    def __new__(cls, names, lambdas):
        return super().__new__(cls, names)

    def __init__(self, names, lambdas):
        super().__init__()
        self.lambdas = frozenset(lambdas)


def _name_lambdas(fnode, parsed, taken):
    """Each statement of the function's top level binding a local, once, to a
    list or tuple display of lambdas, or a comprehension making one per item of
    a constant ``range`` or display of constants (``fs = [lambda t, k=k: t ** k
    for k in range(3)]``), read only as the iterable of loops and comprehensions
    (``for f in fs``, ``sum(f(x) for f in fs)``): each lambda bound to a name of
    its own first, in the display's order (``fs_0 = lambda t: t``), the display
    made of those names (functions, :func:`_local_functions`, the loops over it
    are written out for).  A comprehension's lambda reads its variable as Python's
    closure does when it runs: the last item (a default ``k=k`` takes each
    trip's)."""
    loops_over = {id(n.iter) for n in gast.walk(fnode)
                  if isinstance(n, (gast.For, gast.comprehension))}
    for n in gast.walk(fnode):
        if isinstance(n, gast.For) and isinstance(n.iter, gast.Call) and \
                isinstance(n.iter.func, gast.Name) and n.iter.func.id in ("enumerate", "zip"):
            loops_over.update(id(a) for a in n.iter.args)
    body = fnode.body
    k = 0
    while k < len(body):
        stmt = body[k]
        k += 1
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and
                isinstance(stmt.targets[0], gast.Name)):
            continue
        lambdas = _lambda_display(stmt.value, parsed, fnode)
        if not lambdas:
            continue  # (most statements: the walk below only for a display of lambdas)
        name = stmt.targets[0].id
        uses = [n for n in gast.walk(fnode) if isinstance(n, gast.Name) and n.id == name and
                n is not stmt.targets[0]]
        if not uses or \
                not all(isinstance(n.ctx, gast.Load) and id(n) in loops_over for n in uses):
            continue
        names = [fresh_name(f"{name}_{j}", taken) for j in range(len(lambdas))]
        bound = []
        for n, lam in zip(names, lambdas):
            bound.extend(_defaults_bound(lam, n, taken, stmt))
            bound.append(located(gast.Assign(targets=[store_node(n)], value=lam,
                                             type_comment=None), stmt))
        stmt.value = located(type(stmt.value)(elts=[name_node(n) for n in names],
                                              ctx=gast.Load()), stmt) \
            if isinstance(stmt.value, (gast.List, gast.Tuple)) else \
            located(gast.List(elts=[name_node(n) for n in names], ctx=gast.Load()), stmt)
        body[k - 1:k - 1] = bound
        k += len(bound)


def _defaults_bound(lam, name, taken, stmt):
    """``fs_0_s = scale`` for each default of ``lam`` that is not a constant, in
    Python's order, the default then reading that name: evaluated where the
    lambda is made, as Python does (the rest of the compiler reads a default
    where the function is called)."""
    bound = []
    positional = lam.args.posonlyargs + lam.args.args
    pairs = list(zip(positional[len(positional) - len(lam.args.defaults):],
                     range(len(lam.args.defaults))))
    for arg, j in pairs:
        if not isinstance(lam.args.defaults[j], gast.Constant):
            held = fresh_name(f"{name}_{arg.id}", taken)
            bound.append(located(gast.Assign(targets=[store_node(held)],
                                             value=lam.args.defaults[j], type_comment=None), stmt))
            lam.args.defaults[j] = name_node(held)
    for arg, j in zip(lam.args.kwonlyargs, range(len(lam.args.kw_defaults))):
        default = lam.args.kw_defaults[j]
        if default is not None and not isinstance(default, gast.Constant):
            held = fresh_name(f"{name}_{arg.id}", taken)
            bound.append(located(gast.Assign(targets=[store_node(held)], value=default,
                                             type_comment=None), stmt))
            lam.args.kw_defaults[j] = name_node(held)
    return bound


def _lambda_display(value, parsed, fnode):
    """The lambdas a list or tuple display, or a comprehension over constants,
    makes (see :func:`_name_lambdas`), copies; else None."""
    if isinstance(value, (gast.List, gast.Tuple)):
        if value.elts and all(isinstance(e, gast.Lambda) and _plain_lambda(e) for e in value.elts):
            return [copy.deepcopy(e) for e in value.elts]
        return None
    if not (isinstance(value, gast.ListComp) and len(value.generators) == 1 and
            isinstance(value.elt, gast.Lambda) and _plain_lambda(value.elt)):
        return None
    gen = value.generators[0]
    if gen.ifs or gen.is_async or not isinstance(gen.target, gast.Name):
        return None
    constants = _constant_items(gen.iter, parsed, fnode)
    if not constants:
        return None
    var, last = gen.target.id, constants[-1]
    made = []
    for item in constants:
        lam = copy.deepcopy(value.elt)
        lam.args.defaults = [_replaced(d, var, item) for d in lam.args.defaults]
        lam.args.kw_defaults = [None if d is None else _replaced(d, var, item)
                                for d in lam.args.kw_defaults]
        params = {a.id for a in lam.args.posonlyargs + lam.args.args + lam.args.kwonlyargs}
        if var not in params:  # (read when it runs: the comprehension's last value)
            lam.body = _replaced(lam.body, var, last)
        made.append(lam)
    return made


def _plain_lambda(lam):
    """A lambda with no ``*args``/``**kwargs`` and no scope, ``:=`` or ``yield``
    inside (its reads of names are then plain reads)."""
    return lam.args.vararg is None and lam.args.kwarg is None and \
        not any(isinstance(n, SCOPES + (gast.NamedExpr, gast.Yield, gast.YieldFrom))
                for part in [lam.body] + lam.args.defaults + [d for d in lam.args.kw_defaults if d]
                for n in gast.walk(part))


def _constant_items(iterable, parsed, fnode):
    """The items of ``range`` of int constants, or of a display of number and
    string constants, as constants; else None."""
    if isinstance(iterable, gast.Call) and isinstance(iterable.func, gast.Name) and \
            iterable.func.id == "range" and not iterable.keywords and iterable.args and \
            all(isinstance(a, gast.Constant) and type(a.value) is int for a in iterable.args) and \
            builtins_meant({"range"}, fnode, parsed.resolve):
        return [gast.Constant(value=k, kind=None)
                for k in range(*[a.value for a in iterable.args])]
    if isinstance(iterable, (gast.List, gast.Tuple)) and iterable.elts and \
            all(isinstance(e, gast.Constant) and type(e.value) in (int, float, str)
                for e in iterable.elts):
        return [copy.deepcopy(e) for e in iterable.elts]
    return None


_CONSUMERS = ("sum", "list", "tuple")


class _Comprehensions(gast.NodeTransformer):
    """Each list comprehension, and generator expression given alone to ``sum``,
    ``list`` or ``tuple``, over functions (``sum(f(x) for f in fs)``), as the
    display of its element once per function, in order (Python calls them in
    that order, and the consumer takes them all at once)."""

    def __init__(self, parsed, fnode, local, displays):
        self.parsed, self.fnode, self.local, self.displays = parsed, fnode, local, displays

    def visit_ListComp(self, node):
        self.generic_visit(node)
        return _expanded(node, gast.List, self.parsed, self.local, self.displays) or node

    def visit_Call(self, node):
        self.generic_visit(node)
        if len(node.args) == 1 and isinstance(node.args[0], gast.GeneratorExp) and \
                not node.keywords and isinstance(node.func, gast.Name) and \
                node.func.id in _CONSUMERS and \
                builtins_meant({node.func.id}, self.fnode, self.parsed.resolve):
            expanded = _expanded(node.args[0], gast.Tuple, self.parsed, self.local,
                                 self.displays)
            if expanded is not None:
                node.args = [expanded]
        return node


def _expanded(child, make, parsed, local, displays):
    """``child`` (a comprehension) as the display ``make`` of its element once per
    function its one generator visits, or None."""
    if len(child.generators) != 1:
        return None
    gen = child.generators[0]
    if gen.ifs or gen.is_async or not isinstance(gen.target, gast.Name) or \
            any(isinstance(n, SCOPES + (gast.NamedExpr, gast.Yield, gast.YieldFrom))
                for n in gast.walk(child.elt)):
        return None
    iterable = gen.iter
    if isinstance(iterable, gast.Name) and iterable.id in displays:
        iterable = displays[iterable.id].value
    items = _items(iterable, parsed, local)
    if not items:
        return None
    elts = [_replaced(child.elt, gen.target.id, item) for item in items]
    return gast.copy_location(make(elts=elts, ctx=gast.Load()), child)
