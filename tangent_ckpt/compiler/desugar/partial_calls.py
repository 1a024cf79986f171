"""Desugar: a ``functools.partial`` bound once, each of its calls written as a
call of its function.

``p = functools.partial(f, a, k=v)`` makes an object that, called as ``p(x)``,
calls ``f(a, x, k=v)`` with the objects ``a`` and ``v`` were when ``partial``
ran (a keyword the call passes replaces the bound one).  So where ``p`` is
bound once, at the top level of the function's body, and every later read of
``p`` is a call of it, the binding becomes the evaluation of what it binds and
each call the call of ``f``::

    s = 2.0 * x                               s = 2.0 * x
    h = functools.partial(scale_by, s, k=c)   s_2 = s
    s = 5.0 * x                          ->   s = 5.0 * x
    y = h(x)                                  y = scale_by(s_2, x, k=c)

A bound argument is written where ``partial`` ran into a fresh name, unless it
is a constant or a name nothing rebinds after ``partial`` ran (a parameter the
function never assigns, a name of its module, a local bound once before it):
then it is itself.  ``f`` is such a name too (or a dotted name of a module,
``np.tanh``).  The inliner then writes ``f``'s body where it is called.

A partial of a ``lambda`` or of an object's method names it where ``partial``
ran (``p_fn = lambda a, b: ...``, ``p_fn = model.step``; each call ``p_fn(a,
x)``), which the inliner (and ``function_names.py``) then write out.

Left as it is, for the lowering, which refuses it naming the line: a partial
bound in a branch or a loop, more than once, handed on as a value where the
inliner does not write the call it is handed to (in a comprehension), of
another partial or a computed function, with ``*`` or ``**`` in its arguments,
called with ``**`` (which may repeat a bound keyword), or read before it is
bound.  (A partial handed to a helper the inliner writes out, ``fixed_point(p,
x)``, or returned by a factory it writes out, is rewritten after that round.)
"""

import functools

import gast

from tangent_ckpt.compiler.desugar.view_facts import resolve_dotted
from tangent_ckpt.compiler.desugar.view_shape import (
    copy_node, fresh_name, located, name_node, names_taken, store_node,
)


def bind_partials(fnode, resolve):
    """Rewrite, in ``fnode`` (in place), every partial bound once as above.
    ``resolve``: a name of the function's module -> its object.  Returns whether
    any was rewritten."""
    rewritten = False
    k = 0
    while k < len(fnode.body):
        written = _written(fnode, k, resolve)
        if written is None:
            k += 1
            continue
        fnode.body[k:k + 1] = written
        k += len(written)
        rewritten = True
    if not fnode.body:
        fnode.body.append(gast.Pass())
    return rewritten


def _bindings(fnode):
    """{name: how many times ``fnode``'s tree binds it} (its parameters, nested
    functions' parameters, ``def``, ``class``, ``import``, comprehension
    variables, ``del``), and the names some scope declares global or nonlocal."""
    counts, declared = {}, set()
    for n in gast.walk(fnode):
        if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load):
            counts[n.id] = counts.get(n.id, 0) + 1
        elif isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)) and \
                n is not fnode:
            counts[n.name] = counts.get(n.name, 0) + 1
        elif isinstance(n, (gast.Import, gast.ImportFrom)):
            for a in n.names:
                name = (a.asname or a.name).split(".")[0]
                counts[name] = counts.get(name, 0) + 1
        elif isinstance(n, (gast.Global, gast.Nonlocal)):
            declared |= set(n.names)
    return counts, declared


def _written(fnode, k, resolve):
    """The statements ``fnode.body[k]`` and the calls after it become, where it
    binds a partial as the module's docstring says (the calls are rewritten in
    place); None where it is left as it is."""
    stmt = fnode.body[k]
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and
            isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.Call)):
        return None
    call, name = stmt.value, stmt.targets[0].id
    counts, declared = _bindings(fnode)
    own = {a.id for a in fnode.args.posonlyargs + fnode.args.args + fnode.args.kwonlyargs}

    def fixed(node):
        """Does name ``node`` denote the same object wherever the partial's calls
        read it as where ``partial`` ran?"""
        if not isinstance(node, gast.Name) or node.id in declared:
            return False
        times = counts.get(node.id, 0)
        if times == 0:
            return True
        if times == 1 and node.id in own:
            return True
        return times == 1 and any(_binds_plainly(s, node.id) for s in fnode.body[:k])

    local = set(counts)
    if not call.args or call.keywords and any(kw.arg is None for kw in call.keywords) or \
            any(isinstance(a, gast.Starred) for a in call.args) or \
            resolve_dotted(call.func, resolve, local) is not functools.partial or \
            counts.get(name, 0) != 1 or name in declared:
        return None
    function = call.args[0]
    if not (fixed(function) or isinstance(function, gast.Attribute) and
            resolve_dotted(function, resolve, local) is not None and
            fixed(_root(function)) or isinstance(function, (gast.Lambda, gast.Attribute))):
        return None
    calls = _calls_of(fnode, k, name)
    if calls is None:
        return None
    taken = names_taken(fnode)
    evaluated, args, keywords = [], [], []
    if isinstance(function, (gast.Lambda, gast.Attribute)) and \
            resolve_dotted(function, resolve, local) is None:  # evaluated where partial ran
        function = _bound(function, fixed, f"{name}_fn", taken, evaluated, stmt)
    for a in call.args[1:]:
        args.append(_bound(a, fixed, a.id if isinstance(a, gast.Name) else name,
                           taken, evaluated, stmt))
    for kw in call.keywords:
        keywords.append((kw.arg, _bound(kw.value, fixed, kw.arg, taken, evaluated, stmt)))
    for c in calls:
        passed = {kw.arg for kw in c.keywords}
        c.func = gast.copy_location(copy_node(function), c.func)
        c.args = [gast.copy_location(copy_node(a), c) for a in args] + c.args
        c.keywords = [gast.copy_location(gast.keyword(arg=arg, value=copy_node(value)), c)
                      for arg, value in keywords if arg not in passed] + c.keywords
    return evaluated


def _bound(node, fixed, stem, taken, evaluated, stmt):
    """What a call of the partial passes for the bound argument ``node``: itself
    (a constant, a name fixed since), else a fresh name it is evaluated into now."""
    if isinstance(node, gast.Constant) or fixed(node):
        return node
    fresh = fresh_name(stem, taken)
    evaluated.append(located(gast.Assign(targets=[store_node(fresh)], value=node,
                                         type_comment=None), stmt))
    return name_node(fresh)


def _calls_of(fnode, k, name):
    """The calls ``name(...)`` after ``fnode.body[k]``, where every read of ``name``
    in the function is one of them (none before, none in that statement, none
    with ``**``); else None."""
    calls, funcs = [], set()
    for s in fnode.body[k + 1:]:
        for n in gast.walk(s):
            if isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and \
                    n.func.id == name and all(kw.arg is not None for kw in n.keywords):
                calls.append(n)
                funcs.add(id(n.func))
    for s in fnode.body:
        for n in gast.walk(s):
            if isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load) \
                    and id(n) not in funcs:
                return None
    return calls


def _binds_plainly(stmt, name):
    """Does top-level ``stmt`` bind ``name`` (``name = ...``, ``def name``)?"""
    if isinstance(stmt, gast.FunctionDef):
        return stmt.name == name
    return isinstance(stmt, gast.Assign) and any(
        isinstance(t, gast.Name) and t.id == name for t in stmt.targets)


def _root(node):
    while isinstance(node, gast.Attribute):
        node = node.value
    return node

