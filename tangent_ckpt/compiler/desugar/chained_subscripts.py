"""Desugar: a write through a chain of subscripts of an array, ``U[i][j] = v``,
as the one subscript write it is, ``U[i, j] = v``.

For a NumPy array ``U``, ``U[i]`` with ``i`` integers (fewer than ``U`` has
dimensions) is a view: writing into it writes into ``U``, exactly where
``U[i, j]`` is, when ``j`` is basic indexing (integers, slices, ``...``,
``None``).  An index array or a list, ``U[[0, 2]][1] = v``, makes a copy, and
the write is lost; so does one in ``j`` (``U[1][:, k]`` with ``k`` an array is
not ``U[1, :, k]``: NumPy moves the dimensions of separated index arrays
first).  So the chain is joined only where every index is proven basic: an
integer constant, a ``range`` counter, a name bound only to integers (``a =
int(r * N)``, ``len(xs)``; :meth:`~.local_bindings.LocalBindings.integer_names`),
a module-level ``int``, ``+ - * // %`` of those, a slice,
``...`` or ``None`` (the last only in the final subscript), and ``U`` is surely
an array of known dimensions (:class:`~.view_facts.ArrayFacts`).  ``X[...] =
v`` of a view ``X = U[k]`` (basic ``k``: ``U[1:3].fill(v)``, ``fill_calls.py``)
is ``U[k] = v``.

What is not joined is left as written: the lowering refuses a nested write
into an array it cannot join, and treats lists of arrays as it always has.
"""

import gast

from tangent_ckpt.compiler.desugar.local_bindings import LocalBindings, integer_valued


def join_chained_subscripts(parsed, bindings=None):
    """Rewrite, in ``parsed.node``, every store into a chain of subscripts of an
    array that is one subscript write into it (``U[1][t + 1] = v``, ``U[x][0] +=
    v``) as that write; ``bindings``: the function's :class:`LocalBindings`
    (read here when not given)."""
    targets = [t for t in _store_targets(parsed.node)
               if isinstance(t, gast.Subscript) and isinstance(t.value, gast.Subscript)]
    if not targets:
        return
    bindings = bindings or LocalBindings(parsed.node, parsed.resolve)
    integers = bindings.integer_names()
    for target in targets:
        joined = joined_subscript(target, bindings.facts(), integers, bindings.resolve)
        if joined is not None:
            target.value, target.slice = joined


def joined_subscript(target, facts, integers, resolve=None):
    """(array name node, index) of the one subscript the chain ``target`` writes
    through, or None when it is not surely one."""
    chain, base = [], target
    while isinstance(base, gast.Subscript):
        chain.append(base.slice)
        base = base.value
    chain.reverse()
    if not isinstance(base, gast.Name):
        return None
    array = facts.array(base.id)
    if array is None or array.ndim is None:
        return None
    *prefix, last = chain
    kinds = [_basic_parts(index, integers, resolve) for index in chain]
    if any(k is None for k in kinds):
        return None
    integers = sum(k[0] for k in kinds[:-1])
    if all(not k[1] for k in kinds[:-1]) and integers < array.ndim:
        parts = [p for index in chain for p in _parts(index)]
        return base, _tuple(parts, last)
    if len(prefix) == 1 and _lone_ellipsis(last) and \
            (kinds[0][1] or kinds[0][0] < array.ndim):
        return base, prefix[0]  # U[1:3][...] = v writes U[1:3]
    return None


def _parts(index):
    return list(index.elts) if isinstance(index, gast.Tuple) else [index]


def _tuple(parts, where):
    index = gast.Tuple(elts=parts, ctx=gast.Load()) if len(parts) > 1 else parts[0]
    return gast.copy_location(index, where)


def _lone_ellipsis(index):
    return isinstance(index, gast.Constant) and index.value is Ellipsis


def _basic_parts(index, integer_names, resolve):
    """(how many integers, whether a slice, ``...`` or None) when every position
    of ``index`` is proven basic, else None."""
    integers, other = 0, False
    for part in _parts(index):
        if integer_valued(part, integer_names, resolve):
            integers += 1
        elif isinstance(part, gast.Slice) or \
                isinstance(part, gast.Constant) and (part.value is Ellipsis or part.value is None):
            other = True
        else:
            return None
    return integers, other


def _store_targets(fnode):
    """Every subscript a statement of ``fnode`` stores into (assignment targets,
    tuples of them, augmented targets), outside nested functions."""
    found = []

    def targets_of(t):
        if isinstance(t, (gast.Tuple, gast.List)):
            for e in t.elts:
                targets_of(e)
        elif isinstance(t, gast.Subscript):
            found.append(t)

    stack = list(fnode.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef,
                             gast.Lambda)):
            continue
        if isinstance(node, gast.Assign):
            for t in node.targets:
                targets_of(t)
        elif isinstance(node, (gast.AugAssign, gast.AnnAssign)):
            targets_of(node.target)
        stack.extend(gast.iter_child_nodes(node))
    return found
