"""Desugar: a string (or ``None``) argument the gradient is compiled for, read
as the constant it is.

    def advect(u, n, limiter="vanleer"):          (called with limiter="minmod")
        lm = LIMITERS[limiter]              ->    lm = LIMITERS["minmod"]
        if limiter == "superbee": ...       ->    if "minmod" == "superbee": ...

A string cannot be differentiated, and code that chooses a function by one (a
flux limiter, an activation, an integrator named by the caller) cannot be
lowered while the choice is a value of the run.  Where the gradient is refused
so, the API compiles it again for the strings (and ``None`` values) the call gives,
keyed by their values (``api.GradientFunction``, as for numbers), and this pass
reads each such parameter as its constant; ``constant_flags.py`` then keeps the
branch that runs and ``function_names.py`` resolves the function chosen.

The function's straight code (its top-level statements, and the branch that
runs of an ``if`` there whose test these constants decide) is followed
statement by statement, as it runs: a read sees the value the parameter has
there.  Options are often normalised first, and those statements are followed
too -- ``name = name.lower()``, ``key = prefix + "_" + name`` (``str`` methods
that give a string from constants, and ``+``), ``if method is None: method =
"rk4"`` -- and then go (nothing reads them).  A parameter bound any other way
(in a loop, in a branch not decided, to a value of the run, by ``global`` /
``nonlocal``) keeps every read as written, and so does one that a nested
function, lambda, class or comprehension mentions (the constant is then not
used at all).
"""

import gast

from tangent_ckpt.compiler.desugar.constant_flags import UNKNOWN as _UNKNOWN, bound_names, folded_value
from tangent_ckpt.compiler.desugar.local_bindings import (COMPREHENSIONS, SCOPES,
                                                         names_in_nested_scopes,
                                                         own_scope_walk)
from tangent_ckpt.compiler.desugar.view_shape import ReplacedNodes


def read_constant_arguments(parsed, constants):
    """Rewrite, in ``parsed.node``, each read of a parameter named in
    ``constants`` ({parameter: str or None}) as its constant, where the module's
    docstring allows; returns the names rewritten."""
    fnode = parsed.node
    if not constants:
        return set()
    seen_outside = names_in_nested_scopes(fnode, SCOPES + COMPREHENSIONS)
    names = {name for name, value in constants.items()
             if (isinstance(value, str) or value is None) and name not in seen_outside}
    while names:  # a name bound where it cannot be followed is left out, and all again
        straight = _StraightCode(constants, names)
        body = straight.run(fnode.body)
        if not straight.lost:
            break
        names -= straight.lost
    if not names:
        return set()
    fnode.body = [ReplacedNodes(straight.reads).visit(stmt) for stmt in body]
    return names


class _StraightCode:
    """The function's straight code followed with the parameters ``names`` as
    their constants: ``run`` gives its statements with each binding it follows
    dropped and each ``if`` it decides replaced by the branch that runs;
    ``reads`` ({id(read): constant}) are the reads to replace; ``lost``, the
    names bound where they cannot be followed."""

    def __init__(self, constants, names):
        self.value = {name: constants[name] for name in names}
        self.reads = {}
        self.lost = set()
        self.ended = False  # a return or raise of the straight code met

    def run(self, stmts):
        body = []
        for stmt in stmts:
            if isinstance(stmt, gast.If):
                test = folded_value(stmt.test, self.value)
                if test is not _UNKNOWN:  # the branch that runs, followed in turn
                    body.extend(self.run(stmt.body if test else stmt.orelse))
                    if self.ended:
                        return body
                    continue
            if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
                    isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id in self.value:
                new = folded_value(stmt.value, self.value)
                if isinstance(new, str) or new is None:
                    self._read_in(stmt.value)
                    self.value[stmt.targets[0].id] = new
                    continue  # (the binding: nothing reads it now)
            self.lost |= bound_names(stmt) & set(self.value)
            self._read_in(stmt)
            body.append(stmt)
            if isinstance(stmt, (gast.Return, gast.Raise)):
                self.ended = True  # (what follows never runs)
                return body
        return body

    def _read_in(self, node):
        for n in own_scope_walk(node, comprehensions=False):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id in self.value:
                self.reads[id(n)] = gast.copy_location(
                    gast.Constant(value=self.value[n.id], kind=None), n)

