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
last function, as in Python, when it is read later.  Any other loop stays.
"""

import copy
import types

import gast
import numpy as np

from tangent_ckpt.adjoints import registry
from tangent_ckpt.compiler.desugar.local_bindings import SCOPES, local_names
from tangent_ckpt.compiler.desugar.view_facts import resolve_dotted
from tangent_ckpt.compiler.desugar.view_shape import located, statement_lists

_FUNCTIONS = (types.FunctionType, types.BuiltinFunctionType, np.ufunc)


def unroll_function_loops(parsed):
    """Rewrite every such loop of ``parsed.node`` (nested blocks too), in place."""
    fnode = parsed.node
    local = local_names(fnode)
    for block in statement_lists(fnode):
        k = 0
        while k < len(block):
            unrolled = _unrolled(block[k], parsed.resolve, local, fnode)
            if unrolled is None:
                k += 1
                continue
            block[k:k + 1] = unrolled
            k += len(unrolled)


def _function(node, resolve, local):
    """Whether ``node`` (an item of the loop) surely denotes a function."""
    if not isinstance(node, (gast.Name, gast.Attribute)):
        return False
    obj = resolve_dotted(node, resolve, local)
    return obj is not None and (isinstance(obj, _FUNCTIONS) or registry.lookup(obj) is not None)


def _unrolled(s, resolve, local, fnode):
    if not (isinstance(s, gast.For) and isinstance(s.target, gast.Name) and
            isinstance(s.iter, (gast.Tuple, gast.List)) and s.iter.elts and not s.orelse and
            all(_function(e, resolve, local) for e in s.iter.elts)):
        return None
    var = s.target.id
    roots = {_root(e) for e in s.iter.elts}
    for node in (n for st in s.body for n in gast.walk(st)):
        if isinstance(node, SCOPES + (gast.Break, gast.Continue, gast.Global, gast.Nonlocal,
                                      gast.Yield, gast.YieldFrom, gast.NamedExpr)):
            return None
        if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load) and \
                (node.id == var or node.id in roots):
            return None
    out = []
    for item in s.iter.elts:
        for st in s.body:
            out.append(_replaced(st, var, item))
    if _read_after(fnode, s, var):
        out.append(located(gast.Assign(
            targets=[gast.Name(id=var, ctx=gast.Store(), annotation=None, type_comment=None)],
            value=copy.deepcopy(s.iter.elts[-1]), type_comment=None), s))
    return out


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
