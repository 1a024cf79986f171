"""Desugar: the default of a nested ``def``'s (or an assigned ``lambda``'s)
parameter evaluated where the ``def`` runs, as Python does.

    s = 2.0 * x                      s = 2.0 * x
    def g(v, k=s):          ->       g_k = s
        return k * v                 def g(v, k=g_k):
    s = 5.0 * x                          return k * v
    g(x)                             s = 5.0 * x
                                     g(x)

A default is evaluated once, when the ``def`` statement (or the ``lambda``)
runs; the rest of the compiler reads a default where the function is called,
which is the same only while nothing rebinds the names it reads.  A default
that reads a local name of the enclosing function is therefore bound first to a
name of its own, which nothing rebinds (``g(x)`` gave 4.75 for 4.0 before).
Defaults reading only constants and names from outside the function are left
as written: nothing in the function can rebind those.
"""

import gast

from tangent_ckpt.compiler.desugar.view_shape import (
    fresh_name, name_node, names_taken, statement_blocks, store_node,
)


def bind_def_defaults(fnode):
    """Rewrite, in place, the nested ``def`` statements and ``name = lambda ...``
    assignments of ``fnode`` whose defaults read ``fnode``'s local names."""
    _Defaults(fnode).block(fnode.body)


class _Defaults:
    def __init__(self, fnode):
        self.taken = names_taken(fnode)
        self.locals = {n.id for n in gast.walk(fnode) if isinstance(n, gast.Name) and
                       isinstance(n.ctx, (gast.Store, gast.Del, gast.Param))}

    def block(self, stmts):
        i = 0
        while i < len(stmts):
            stmt = stmts[i]
            for block in statement_blocks(stmt, into_defs=True):  # defs in defs too
                self.block(block)
            bindings = self.bound_first(stmt)
            stmts[i:i] = bindings
            i += len(bindings) + 1

    def bound_first(self, stmt):
        """The statements binding ``stmt``'s defaults that read local names."""
        if isinstance(stmt, (gast.FunctionDef, gast.AsyncFunctionDef)):
            name, args = stmt.name, stmt.args
        elif isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.Lambda):
            name, args = stmt.targets[0].id, stmt.value.args
        else:
            return []
        params = args.posonlyargs + args.args
        pairs = list(zip(params[len(params) - len(args.defaults):], args.defaults))
        pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
        out = []
        for param, default in pairs:
            if not any(isinstance(n, gast.Name) and n.id in self.locals
                       for n in gast.walk(default)):
                continue
            bound = fresh_name(f"{name}_{param.id}", self.taken)
            out.append(gast.copy_location(gast.Assign(targets=[store_node(bound)],
                                                      value=default, type_comment=None),
                                          stmt))
            replacement = gast.copy_location(name_node(bound), default)
            if default in args.defaults:
                args.defaults[args.defaults.index(default)] = replacement
            else:
                args.kw_defaults[args.kw_defaults.index(default)] = replacement
        return out
