"""Desugar: ``np.random.shuffle(a)`` on a NumPy array as the write it is,
``a[...] = np.random.permutation(a)``.

``shuffle`` permutes an array in place along its first axis; ``permutation`` of
the array returns that permutation of a copy, drawing the same numbers from the
same generator (NumPy's legacy state, a ``RandomState`` or a ``Generator``), so
the generator is left as ``shuffle`` leaves it.  Written as a subscript write,
the view lowering, the fence and the checkpointed loops' replay of draws follow
it like any other (an SGD loop shuffling its index array each epoch was refused
as a call "for its effect").

Only a statement ``G.shuffle(a)`` with one argument, where ``G`` is known when
compiling to be NumPy's ``np.random`` or a generator object (a module global or
a closure's, or a name the function binds only to ``np.random.default_rng(...)``
or ``np.random.RandomState(...)``) and ``a`` surely holds an array
(:class:`~.view_facts.ArrayFacts`: a list is shuffled as a list, which this is
not).  Anything else is left as written.
"""

import gast
import numpy as np

from tangent_ckpt.compiler.desugar.local_bindings import LocalBindings
from tangent_ckpt.compiler.desugar.view_shape import (
    copy_node, located, method_statement, statement_lists,
)
from tangent_ckpt.runtime.random_state import is_generator

_MAKERS = (np.random.default_rng, np.random.RandomState, np.random.Generator)


def rewrite_shuffle_calls(parsed, bindings=None):
    """Rewrite, in ``parsed.node``, every ``G.shuffle(a)`` statement on an array as
    ``a[...] = G.permutation(a)``; returns the function's :class:`LocalBindings`
    when it read them (a subscript write binds no name: they still hold)."""
    calls = [(block, k) for block in statement_lists(parsed.node)
             for k in range(len(block)) if method_statement(block[k], "shuffle") is not None]
    if not calls:
        return bindings
    bindings = bindings or LocalBindings(parsed.node, parsed.resolve)
    for block, k in calls:
        stmt = block[k]
        owner, array = method_statement(stmt, "shuffle")
        if not isinstance(array, gast.Name) or bindings.facts().array(array.id) is None or \
                not _draws_like_numpy(owner, bindings):
            continue
        target = gast.Subscript(value=copy_node(array), slice=gast.Constant(
            value=Ellipsis, kind=None), ctx=gast.Store())
        permutation = gast.Call(func=gast.Attribute(value=copy_node(owner), attr="permutation",
                                                    ctx=gast.Load()),
                                args=[copy_node(array)], keywords=[])
        block[k] = located(gast.Assign(targets=[target], value=permutation, type_comment=None),
                           stmt)
    return bindings


def _draws_like_numpy(owner, bindings):
    """Is ``owner`` surely ``np.random`` or a NumPy generator?"""
    known = bindings.resolve(owner)
    if known is np.random or is_generator(known):
        return True
    if not isinstance(owner, gast.Name) or owner.id not in bindings.values:
        return False
    values = bindings.values[owner.id]
    return bool(values) and all(
        isinstance(v, gast.Call) and bindings.resolve(v.func) in _MAKERS for v in values)

