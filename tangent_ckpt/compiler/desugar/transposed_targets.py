"""Desugar: a write through the transpose of a local, ``D.T[:] -= x`` (``D.T[i] =
v``), as the write through a name bound to it, ``D_T = D.T; D_T[:] -= x``.

Python evaluates the target's object ``D.T`` once and writes into it with
``__setitem__`` (after ``__getitem__`` and the in-place operator for ``-=``): the
same as binding it to a fresh name first and writing through that name.  For an
array, ``D.T`` is a view of ``D``, which ``views.py`` (after this pass) then
follows like any view a name holds: the write changes ``D``, and the gradient
follows it.  It was refused as "assignment into a nested subscript" (a Gaussian
process covariance built by ``D[:] = x; D.T[:] -= x.T``).

Only ``.T`` of a local name that surely holds a NumPy array
(:class:`~.view_facts.ArrayFacts`: an object's ``T`` attribute, a temperature
field, stays the lowering's), and nothing the value evaluates can rebind it (an
assignment's value is evaluated before its target, and is kept free of ``:=``);
anything else is left as written.
"""

import gast

from tangent_ckpt.compiler.desugar.local_bindings import LocalBindings
from tangent_ckpt.compiler.desugar.view_shape import (
    fresh_name, located, name_node, names_taken, statement_lists, store_node,
)


def name_transposed_targets(parsed, bindings=None):
    """Rewrite, in place, each write through ``X.T[...]`` of a local array ``X`` in
    ``parsed.node`` as the module's docstring says; ``bindings``: the function's
    :class:`LocalBindings` (read here when needed and not given)."""
    fnode = parsed.node
    taken = None
    for block in statement_lists(fnode):
        k = 0
        while k < len(block):
            stmt = block[k]
            target = _transposed_target(stmt)
            if target is None:
                k += 1
                continue
            bindings = bindings or LocalBindings(fnode, parsed.resolve)
            if bindings.facts().array(target.value.value.id) is None:
                k += 1
                continue
            taken = names_taken(fnode) if taken is None else taken
            name = fresh_name(f"{target.value.value.id}_T", taken)
            bound = located(gast.Assign(targets=[store_node(name)], value=target.value,
                                        type_comment=None), stmt)
            target.value = gast.copy_location(name_node(name), target.value)
            block[k:k] = [bound]
            k += 2


def _transposed_target(stmt):
    """The target ``X.T[...]`` of an assignment (one target) or an augmented
    assignment, ``X`` a name, or None."""
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1:
        target = stmt.targets[0]
        if any(isinstance(n, gast.NamedExpr) for n in gast.walk(stmt.value)):
            return None
    elif isinstance(stmt, gast.AugAssign):
        target = stmt.target
    else:
        return None
    if isinstance(target, gast.Subscript) and isinstance(target.value, gast.Attribute) and \
            target.value.attr == "T" and isinstance(target.value.value, gast.Name):
        return target
    return None
