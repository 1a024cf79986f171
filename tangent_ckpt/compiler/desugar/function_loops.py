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
the list's items change (``parse.note_items``).  Any other loop stays.
"""

import copy
import types

import gast
import numpy as np

from tangent_ckpt.adjoints import registry
from tangent_ckpt.compiler.desugar.function_names import module_attribute
from tangent_ckpt.compiler.desugar.local_bindings import SCOPES, local_names
from tangent_ckpt.compiler.desugar.view_facts import resolve_dotted
from tangent_ckpt.compiler.desugar.view_shape import located, name_node, statement_lists
from tangent_ckpt.compiler.frontend.parse import note_items

_FUNCTIONS = (types.FunctionType, types.BuiltinFunctionType, np.ufunc)


def unroll_function_loops(parsed, fnode=None):
    """Rewrite every such loop of ``fnode`` (by default ``parsed.node``; a
    helper's template, ``parsed`` its module's; nested blocks too), in place."""
    fnode = fnode if fnode is not None else parsed.node
    local = local_names(fnode)
    displays = _function_displays(fnode, parsed, local)
    for block in statement_lists(fnode):
        k = 0
        while k < len(block):
            unrolled = _unrolled(block[k], parsed, local, fnode, displays)
            if unrolled is None:
                k += 1
                continue
            block[k:k + 1] = unrolled
            k += len(unrolled)
    if displays:  # (each read was a loop's: the binding is read no more)
        unread = {id(stmt) for name, stmt in displays.items()
                  if not any(isinstance(n, gast.Name) and n.id == name
                             for n in gast.walk(fnode) if n is not stmt.targets[0])}
        fnode.body = [stmt for stmt in fnode.body if id(stmt) not in unread]


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
            if isinstance(iterable, gast.Name):
                loops_over.add(id(iterable))
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
    """Whether ``node`` (an item of the loop) surely denotes a function."""
    if not isinstance(node, (gast.Name, gast.Attribute)):
        return False
    obj = resolve_dotted(node, resolve, local)
    return obj is not None and (isinstance(obj, _FUNCTIONS) or registry.lookup(obj) is not None)


def _unrolled(s, parsed, local, fnode, displays):
    if not isinstance(s, gast.For) or s.orelse:
        return None
    counter, start, target, iterable = None, 0, s.target, s.iter
    enumerated = _enumerated(s)
    if enumerated is not None:
        counter, start, target, iterable = enumerated
    if not isinstance(target, gast.Name):
        return None
    if isinstance(iterable, gast.Name) and iterable.id in displays:
        iterable = displays[iterable.id].value
    items = _items(iterable, parsed, local)
    if not items:
        return None
    var = target.id
    bound_here = {var} | ({counter} if counter else set())
    roots = {_root(e) for e in items}
    for node in (n for st in s.body for n in gast.walk(st)):
        if isinstance(node, SCOPES + (gast.Break, gast.Continue, gast.Global, gast.Nonlocal,
                                      gast.Yield, gast.YieldFrom, gast.NamedExpr)):
            return None
        if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load) and \
                (node.id in bound_here or node.id in roots):
            return None
    out = []
    for number, item in enumerate(items, start):
        for st in s.body:
            st = _replaced(st, var, item)
            out.append(_replaced(st, counter, gast.Constant(value=number, kind=None))
                       if counter else st)
    after = [(var, items[-1])]
    if counter:
        after.append((counter, gast.Constant(value=start + len(items) - 1, kind=None)))
    for name, value in after:
        if _read_after(fnode, s, name):
            out.append(located(gast.Assign(
                targets=[gast.Name(id=name, ctx=gast.Store(), annotation=None,
                                   type_comment=None)],
                value=copy.deepcopy(value), type_comment=None), s))
    return out


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
