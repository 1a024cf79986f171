"""Desugar: ``np.add.outer(a, b)`` (a binary ufunc's ``outer`` method) as the
broadcast it is, ``np.add(np.reshape(a, np.shape(a) + (1,) * np.ndim(b)), b)``.

``ufunc.outer(a, b)`` applies the ufunc to every pair of an element of ``a`` and
one of ``b``: its result has shape ``a.shape + b.shape``, element
``[i..., j...] = ufunc(a[i...], b[j...])``.  ``a`` reshaped to ``a.shape`` followed
by one axis of length 1 per axis of ``b`` broadcasts against ``b`` to exactly
that, with the same ufunc on the same numbers (so the same values, bit for bit,
and the same dtype); the ufunc's own adjoint rule then differentiates it (a
ufunc's ``outer`` is a new bound method at each access, which no rule could be
keyed by: it was refused as "no adjoint rule for outer", pmocz's n-body
``np.add.outer(-x, x)``).

Only a call with two positional arguments and no keywords (``out=``, ``dtype=``,
``where=`` keep the call, which the lowering refuses), on a ufunc spelled through
the NumPy module (``np.add.outer``), whose arguments are names, constants, or
``-`` of one: each is read twice (its shape, its values), which has no effect.  Anything
else is left as written.
"""

import gast
import numpy as np

from tangent_ckpt.compiler.desugar.local_bindings import local_names
from tangent_ckpt.compiler.desugar.view_facts import resolve_dotted
from tangent_ckpt.compiler.desugar.view_shape import copy_node, located


def write_outer_calls(parsed, fnode=None):
    """Rewrite, in ``fnode`` (default ``parsed.node``), each ``np.<ufunc>.outer(a, b)``
    of a two-argument ufunc as the broadcast of ``a`` reshaped against ``b``."""
    fnode = parsed.node if fnode is None else fnode
    calls = [n for n in gast.walk(fnode) if isinstance(n, gast.Call) and
             isinstance(n.func, gast.Attribute) and n.func.attr == "outer"]
    if not calls:
        return
    local = local_names(fnode)
    found = {id(c) for c in calls if _ufunc_outer(c, parsed.resolve, local)}
    if found:
        _Broadcast(found).visit(fnode)


def _ufunc_outer(call, resolve, local):
    ufunc_node = call.func.value  # np.add
    if len(call.args) != 2 or call.keywords or \
            not all(_read_twice_alike(a) for a in call.args) or \
            not (isinstance(ufunc_node, gast.Attribute) and
                 isinstance(ufunc_node.value, gast.Name)) or \
            resolve_dotted(ufunc_node.value, resolve, local) is not np:
        return False
    ufunc = resolve_dotted(ufunc_node, resolve, local)
    return isinstance(ufunc, np.ufunc) and ufunc.nin == 2 and ufunc.nout == 1


def _read_twice_alike(node):
    """A name, a constant, or ``-`` of one: reading it twice has no effect."""
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        node = node.operand
    return isinstance(node, (gast.Name, gast.Constant))


def _negated(node):
    """``x`` of ``-x`` (of the same shape), else ``node``."""
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        return node.operand
    return node


class _Broadcast(gast.NodeTransformer):
    def __init__(self, found):
        self.found = found

    def visit_Call(self, node):
        self.generic_visit(node)
        if id(node) not in self.found:
            return node
        ufunc, (a, b) = node.func.value, node.args
        numpy = ufunc.value.id

        def call(name, *args):
            return gast.Call(func=gast.Attribute(value=gast.Name(id=numpy, ctx=gast.Load(),
                                                                 annotation=None,
                                                                 type_comment=None),
                                                 attr=name, ctx=gast.Load()),
                             args=list(args), keywords=[])

        ones = gast.BinOp(left=gast.Tuple(elts=[gast.Constant(value=1, kind=None)],
                                          ctx=gast.Load()),
                          op=gast.Mult(), right=call("ndim", copy_node(_negated(b))))
        shape = gast.BinOp(left=call("shape", copy_node(_negated(a))), op=gast.Add(),
                           right=ones)
        made = gast.Call(func=copy_node(ufunc),
                         args=[call("reshape", copy_node(a), shape), b], keywords=[])
        return located(made, node)
