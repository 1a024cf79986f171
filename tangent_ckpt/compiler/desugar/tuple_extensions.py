"""Desugar: ``t += (x,)`` on a name surely holding a tuple, as ``t = t + (x,)``.

A tuple has no in-place ``+=``: Python makes a new tuple and binds the name to
it, and any other name holding the old tuple keeps it::

    t = ()                   t = ()
    u = t              ->    u = t
    t += (x,)                t = t + (x,)      # u is still ()

Written as ``+=``, the rest of the compiler takes the statement for a write that
may change the object in place (it would for a list, an array or a dict), so an
alias of the tuple was followed as possibly changed, and refused with a wrong
reason ("a different length ... on the two paths of this if").

A name surely holds a tuple when it is a local of the function alone (not a
parameter, not ``global``/``nonlocal``, not mentioned by a nested scope) and
every statement binding it is ``t = (...)`` (a tuple display), ``t = t + e``
or ``t += e``: by induction over the run, each value it holds is a tuple (or
the concatenation raised, as it raises written either way).
"""

import gast

from tangent_ckpt.compiler.desugar.local_bindings import local_names, names_seen_outside
from tangent_ckpt.compiler.desugar.view_shape import block_holding


def write_tuple_extensions(fnode):
    """Rewrite, in ``fnode`` (nested blocks too), each ``t += e`` on a name
    surely holding a tuple as ``t = t + e``, in place."""
    augmented = [n for n in gast.walk(fnode) if isinstance(n, gast.AugAssign) and
                 isinstance(n.op, gast.Add) and isinstance(n.target, gast.Name)]
    if not augmented:
        return
    candidates = {s.target.id for s in augmented} & \
        (set(local_names(fnode)) - names_seen_outside(fnode))
    binders = {}
    for node in gast.walk(fnode):
        if isinstance(node, gast.Name) and node.id in candidates and \
                not isinstance(node.ctx, gast.Load):
            binders.setdefault(node.id, []).append(node)
    tuples = set()
    for name in candidates:
        statements = _binding_statements(fnode, name)
        if statements is not None and len(statements) == len(binders.get(name, ())) and \
                all(_keeps_a_tuple(s, name) for s in statements):
            tuples.add(name)
    for s in augmented:
        if s.target.id in tuples:
            value = gast.BinOp(left=gast.Name(id=s.target.id, ctx=gast.Load(), annotation=None,
                                              type_comment=None),
                               op=gast.Add(), right=s.value)
            block, k = block_holding(fnode, s)
            block[k] = gast.copy_location(gast.Assign(
                targets=[s.target], value=gast.copy_location(value, s), type_comment=None), s)


def _binding_statements(fnode, name):
    """The assignments binding ``name`` as their whole target (``t = ...``, ``t
    += ...``); None where another statement binds it (a loop target, a tuple
    target, ``del``, ``with ... as``, an import, ...), counted by the caller."""
    found = []
    for node in gast.walk(fnode):
        if isinstance(node, gast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], gast.Name) and node.targets[0].id == name:
            found.append(node)
        elif isinstance(node, (gast.AugAssign, gast.AnnAssign)) and \
                isinstance(node.target, gast.Name) and node.target.id == name:
            found.append(node)
    return found


def _keeps_a_tuple(s, name):
    if isinstance(s, gast.AugAssign):
        return isinstance(s.op, gast.Add)
    if isinstance(s, gast.AnnAssign):
        return s.value is not None and isinstance(s.value, gast.Tuple)
    value = s.value
    if isinstance(value, gast.Tuple):   # (a starred item too: (*xs, y) is a tuple)
        return True
    return isinstance(value, gast.BinOp) and isinstance(value.op, gast.Add) and \
        isinstance(value.left, gast.Name) and value.left.id == name
