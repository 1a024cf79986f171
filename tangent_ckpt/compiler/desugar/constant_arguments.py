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
used at all).
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
    names = {name for name, value in constants.items()
             if isinstance(value, str) and name not in rebound and name not in seen_outside}
    if not names:
        return set()
    ReplacedNodes({id(node): _constant(constants[node.id], node)
                   for node in own_scope_nodes(fnode, comprehensions=False)
                   if _read_of(node, names)}).visit(fnode)
    return names


def _read_of(node, names):
    return isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) and node.id in names


def _constant(value, where):
    return gast.copy_location(gast.Constant(value=value, kind=None), where)
