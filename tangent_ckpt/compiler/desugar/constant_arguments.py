"""Desugar: a string argument the gradient is compiled for, read as the constant
it is.

    def advect(u, n, limiter="vanleer"):          (called with limiter="minmod")
        lm = LIMITERS[limiter]              ->    lm = LIMITERS["minmod"]
        if limiter == "superbee": ...       ->    if "minmod" == "superbee": ...

A string cannot be differentiated, and code that chooses a function by one (a
flux limiter, an activation, an integrator named by the caller) cannot be
lowered while the choice is a value of the run.  Where the gradient is refused
so, the API compiles it again for the strings the call gives, keyed by their
values (``api.GradientFunction``, as for numbers), and this pass reads each
such parameter as its constant; ``constant_flags.py`` then keeps the branch that
runs and ``function_names.py`` resolves the function chosen.

Only a parameter the function never binds again (no assignment, ``for`` or
``with`` target, ``del``, ``global``/``nonlocal``) is read so, and only in the
function's own scope: a nested function, lambda, class or comprehension that
mentions the name keeps every read of it as written (the constant is then not
used at all).  One exception, common in code that names its options: a
parameter bound again only by assignments in the function's own straight code
(its top-level statements) from a string it folds -- ``name = name.lower()``,
``mode = mode.strip().casefold()``, ``key = prefix + "_" + name`` -- takes each
such value in turn: a read sees the value of the last of those statements
before its own, and the statements themselves go (nothing reads them).
"""

import gast

from tangent_ckpt.compiler.desugar.local_bindings import (COMPREHENSIONS, SCOPES,
                                                         names_in_nested_scopes,
                                                         own_scope_nodes)
from tangent_ckpt.compiler.desugar.view_shape import ReplacedNodes


def read_constant_arguments(parsed, constants):
    """Rewrite, in ``parsed.node``, each read of a parameter named in
    ``constants`` ({parameter: str value}) as that constant, where the module's
    docstring allows; returns the names rewritten."""
    fnode = parsed.node
    if not constants:
        return set()
    seen_outside = names_in_nested_scopes(fnode, SCOPES + COMPREHENSIONS)
    rebound = set()
    for node in own_scope_nodes(fnode, comprehensions=False):
        if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load):
            rebound.add(node.id)
        elif isinstance(node, (gast.Global, gast.Nonlocal)):
            rebound |= set(node.names)
    strings = {name for name, value in constants.items()
               if isinstance(value, str) and name not in seen_outside}
    names = strings - rebound
    refolded = _refolded_strings(fnode, constants, strings & rebound, seen_outside)
    if not names and not refolded:
        return set()
    replaced = {}
    refolded_names = {name for name, _ in refolded.values()}
    value = {name: constants[name] for name in names | refolded_names}
    own = {id(node) for node in own_scope_nodes(fnode, comprehensions=False)}
    for stmt in fnode.body:
        for node in gast.walk(stmt):
            if id(node) in own and _read_of(node, set(value)):
                replaced[id(node)] = _constant(value[node.id], node)
        if id(stmt) in refolded:
            name, new = refolded[id(stmt)]
            value[name] = new
            replaced[id(stmt)] = []  # (the binding: nothing reads it now)
    ReplacedNodes(replaced).visit(fnode)
    return names | refolded_names


#: the methods of ``str`` that give a string from a string and constants, and
#: nothing else (no lookup of the run's state)
_STRING_METHODS = frozenset({
    "lower", "upper", "casefold", "strip", "lstrip", "rstrip", "title", "capitalize",
    "replace", "removeprefix", "removesuffix", "swapcase",
})


def _refolded_strings(fnode, constants, names, seen_outside):
    """{id(statement): (name, value)}: for each of ``names`` (string parameters
    the function binds again) whose every binding is a top-level ``name = <a
    string folded from constants>``, those statements with the value each gives;
    a name bound any other way is left out (its reads stay values of the run)."""
    bindings = {}
    for node in own_scope_nodes(fnode, comprehensions=False):
        if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load) \
                and node.id in names:
            bindings.setdefault(node.id, []).append(node)
        elif isinstance(node, (gast.Global, gast.Nonlocal)):
            names = names - set(node.names)
    top = {id(stmt.targets[0]): stmt for stmt in fnode.body
           if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
           and isinstance(stmt.targets[0], gast.Name)}
    names = {n for n in names if n not in seen_outside
             and all(id(target) in top for target in bindings.get(n, ()))}
    value = {n: constants[n] for n in names}
    folded = {}
    for stmt in fnode.body:
        if isinstance(stmt, gast.Assign) and id(stmt.targets[0]) in top \
                and stmt.targets[0].id in value:
            name = stmt.targets[0].id
            new = _folded_string(stmt.value, value)
            if not isinstance(new, str):
                value.pop(name)  # (a value of the run: every statement of it kept)
                continue
            folded[id(stmt)] = (name, new)
            value[name] = new
    return {key: item for key, item in folded.items() if item[0] in value}


def _folded_string(node, value):
    """The string ``node`` gives, read with ``value`` ({name: string}); None
    where it is not a string folded from constants by ``_STRING_METHODS`` and
    ``+``."""
    if isinstance(node, gast.Constant):
        return node.value if isinstance(node.value, (str, int)) else None
    if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
        return value.get(node.id)
    if isinstance(node, gast.BinOp) and isinstance(node.op, gast.Add):
        left, right = _folded_string(node.left, value), _folded_string(node.right, value)
        return left + right if isinstance(left, str) and isinstance(right, str) else None
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) \
            and node.func.attr in _STRING_METHODS and not node.keywords:
        receiver = _folded_string(node.func.value, value)
        args = [_folded_string(a, value) for a in node.args]
        if isinstance(receiver, str) and all(a is not None for a in args):
            try:
                result = getattr(receiver, node.func.attr)(*args)
            except (TypeError, ValueError):
                return None
            return result if isinstance(result, str) else None
    return None


def _read_of(node, names):
    return isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) and node.id in names


def _constant(value, where):
    return gast.copy_location(gast.Constant(value=value, kind=None), where)
