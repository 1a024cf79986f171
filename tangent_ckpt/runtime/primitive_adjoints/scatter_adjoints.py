"""Unbuffered scatter updates (``np.add.at(a, indices, b)``, ``np.subtract.at``,
``np.multiply.at``, ``np.divide.at``) as the functional primitives the compiler
differentiates.

``np.add.at`` writes into ``a`` in place and applies a repeated index once per
occurrence (``a[[0, 0]] += 1`` adds 1 once, ``np.add.at(a, [0, 0], 1)`` twice).
The compiler writes the call as ``a = rt.add_at(a, indices, b)`` (into a view,
``x[:, 0] = rt.add_at(x[:, 0], indices, b)``): the primitive returns the new
value and never changes ``a``, so that the in-place write is one assignment
like any other (views, the aliasing fence, tapes and checkpoints follow it).  NumPy does the work (and raises its own
errors): the result is what ``np.add.at`` leaves in a copy of ``a``, in ``a``'s
dtype (NumPy casts ``b`` to it, unsafely).

The derivative is linear: ``a``'s adjoint is the result's, ``b``'s is the
result's adjoint gathered at ``indices`` (once per occurrence) and summed
down to ``b``'s shape; none where the result's dtype is an integer or bool
one (the cast truncates).

``np.multiply.at`` multiplies an element once per occurrence of its index: the
result is ``a[p]`` times the product ``P[p]`` of the values at ``p`` (1 where
none).  ``a``'s adjoint is ``g * P``; a value's is ``g[p] * a[p]`` times the
product of the OTHER values at ``p``, formed from products before and after it
in the occurrences of ``p`` (never by dividing by the value: it may be zero).
``np.divide.at`` divides once per occurrence: ``a``'s adjoint is ``g / P``, a
value ``v``'s ``-g[p] * ans[p] / v`` (where ``v`` is 0 the result itself is not
finite).
"""

import numpy as np

from tangent_ckpt.runtime.primitive_adjoints.numpy_adjoints import is_zero, truncates

__all__ = ["add_at", "subtract_at", "multiply_at", "divide_at", "gathered_at", "scattered_at",
           "multiplied_at", "divided_at", "factor_adjoint_at", "factor_tangent_at",
           "divisor_adjoint_at", "divisor_tangent_at", "factor_tangent_adjoint_at",
           "divisor_tangent_adjoint_at"]


def _applied(ufunc, a, indices, b):
    if isinstance(a, np.ndarray) and not a.flags.writeable:
        raise ValueError("assignment destination is read-only")   # as NumPy's at
    out = a.copy() if isinstance(a, np.ndarray) else a   # not an array: NumPy's error
    ufunc.at(out, indices, b)
    return out


def add_at(a, indices, b):
    """``a`` after ``np.add.at(a, indices, b)``, as a new array (``a`` unchanged)."""
    return _applied(np.add, a, indices, b)


def subtract_at(a, indices, b):
    """``a`` after ``np.subtract.at(a, indices, b)``, as a new array (``a`` unchanged)."""
    return _applied(np.subtract, a, indices, b)


def multiply_at(a, indices, b):
    """``a`` after ``np.multiply.at(a, indices, b)``, as a new array (``a`` unchanged)."""
    return _applied(np.multiply, a, indices, b)


def divide_at(a, indices, b):
    """``a`` after ``np.divide.at(a, indices, b)``, as a new array (``a`` unchanged)."""
    return _applied(np.divide, a, indices, b)


def gathered_at(g, like, indices):
    """``g[indices]``, the adjoint of the values scattered into ``like`` (the
    result) before it is summed down to their shape: every occurrence of a
    repeated index reads ``g`` again.  A copy, never a view of ``g``; the
    symbolic zero where ``like``'s dtype truncates."""
    if is_zero(g) or truncates(np.result_type(like)):
        return 0.0
    picked = g[indices]
    return picked.copy() if np.may_share_memory(picked, g) else picked


def scattered_at(t, like, indices):
    """The tangent of ``like`` (the result) that the values' tangent ``t``
    makes: ``t`` added at ``indices`` (once per occurrence) into zeros shaped
    like ``like``; zero where ``like``'s dtype truncates."""
    dtype = np.result_type(like)
    if is_zero(t) or truncates(dtype):
        return 0.0
    out = np.zeros(np.shape(like), dtype=np.result_type(dtype, t))
    np.add.at(out, indices, t)
    return out


def _occurrences(a, indices, b):
    """The updates ``ufunc.at(a, indices, b)`` applies: the flat position in
    ``a`` and the value of each (one per element of ``a[indices]``, a repeated
    index once per occurrence), and the shape of ``a[indices]``."""
    positions = np.arange(np.size(a)).reshape(np.shape(a))[indices]
    shape = np.shape(positions)
    return np.ravel(positions), np.ravel(np.broadcast_to(b, shape)), shape


def _flat(g, like):
    """The adjoint ``g`` of a result shaped like ``like``, flat."""
    return np.ravel(np.broadcast_to(g, np.shape(like)))


def _products(a, indices, b):
    """The product of the values ``np.multiply.at(a, indices, b)`` multiplies
    each element of ``a`` by (1 where its index does not occur)."""
    out = np.ones(np.shape(a), dtype=np.result_type(a, 1.0))   # as the update: in a's dtype
    np.multiply.at(out, indices, b)
    return out


def _products_of_the_others(positions, values, tangents=None):
    """For each occurrence, the product of the values of the other occurrences
    of its position: the product of those before it times those after it (in
    a stable order of the positions), made one rank within the position at a
    time, with no division.  With ``tangents`` (one per occurrence), also that
    product's derivative along them (the product rule, carried alongside)."""
    order = np.argsort(positions, kind="stable")
    sorted_positions, v = positions[order], values[order]
    dv = None if tangents is None else tangents[order]
    m = len(order)
    step = np.arange(m)
    new = np.ones(m, dtype=bool)
    new[1:] = sorted_positions[1:] != sorted_positions[:-1]
    last = np.ones(m, dtype=bool)
    last[:-1] = new[1:]
    rank = step - np.maximum.accumulate(np.where(new, step, 0))
    rank_from_end = np.minimum.accumulate(np.where(last, step, m)[::-1])[::-1] - step
    dtype = v.dtype if dv is None else np.result_type(v, dv)
    before, after = np.ones(m, dtype=dtype), np.ones(m, dtype=dtype)
    d_before, d_after = np.zeros(m, dtype=dtype), np.zeros(m, dtype=dtype)
    for k in range(1, int(rank.max(initial=0)) + 1):
        for product, derivative, ranks, near in ((before, d_before, rank, -1),
                                                 (after, d_after, rank_from_end, 1)):
            at = np.flatnonzero(ranks == k)
            if dv is not None:
                derivative[at] = derivative[at + near] * v[at + near] + \
                    product[at + near] * dv[at + near]
            product[at] = product[at + near] * v[at + near]
    others, d_others = np.empty_like(before), np.empty_like(before)
    others[order] = before * after
    d_others[order] = d_before * after + before * d_after
    return others if tangents is None else (others, d_others)


def multiplied_at(g, a, indices, b):
    """``g`` times the product each element of ``np.multiply.at(a, indices, b)``
    was multiplied by: the adjoint (and tangent) of ``a``."""
    if is_zero(g) or truncates(np.result_type(a)):
        return 0.0
    return g * _products(a, indices, b)


def divided_at(g, a, indices, b):
    """``g`` divided by the product each element of ``np.divide.at(a, indices,
    b)`` was divided by: the adjoint (and tangent) of ``a``."""
    if is_zero(g) or truncates(np.result_type(a)):
        return 0.0
    return g / _products(a, indices, b)


def factor_adjoint_at(g, a, indices, b):
    """The adjoint of each value ``np.multiply.at(a, indices, b)`` multiplies by,
    shaped like ``a[indices]`` (summed down to ``b``'s shape by the rule):
    ``g[p] * a[p]`` times the product of the other values at ``p``."""
    if is_zero(g) or truncates(np.result_type(a)):
        return 0.0
    positions, values, shape = _occurrences(a, indices, b)
    others = _products_of_the_others(positions, values)
    return (_flat(g, a)[positions] * np.ravel(a)[positions] * others).reshape(shape)


def factor_tangent_at(t, a, indices, b):
    """The tangent of ``np.multiply.at(a, indices, b)`` that the values' tangent
    ``t`` makes: ``a[p]`` times the other values at ``p`` times ``t``, added at
    ``p`` once per occurrence."""
    if is_zero(t) or truncates(np.result_type(a)):
        return 0.0
    positions, values, shape = _occurrences(a, indices, b)
    others = _products_of_the_others(positions, values)
    moved = np.ravel(a)[positions] * others * np.ravel(np.broadcast_to(t, shape))
    out = np.zeros(np.size(a), dtype=np.result_type(a, moved))
    np.add.at(out, positions, moved)
    return out.reshape(np.shape(a))


def divisor_adjoint_at(g, ans, indices, b):
    """The adjoint of each value ``ans = np.divide.at(a, indices, b)`` divides
    by, shaped like ``a[indices]``: ``-g[p] * ans[p] / v``."""
    if is_zero(g) or truncates(np.result_type(ans)):
        return 0.0
    positions, values, shape = _occurrences(ans, indices, b)
    return (-_flat(g, ans)[positions] * np.ravel(ans)[positions] / values).reshape(shape)


def divisor_tangent_at(t, ans, indices, b):
    """The tangent of ``ans = np.divide.at(a, indices, b)`` that the values'
    tangent ``t`` makes: ``-ans[p] * t / v``, added at ``p`` once per occurrence."""
    if is_zero(t) or truncates(np.result_type(ans)):
        return 0.0
    positions, values, shape = _occurrences(ans, indices, b)
    moved = -np.ravel(ans)[positions] * np.ravel(np.broadcast_to(t, shape)) / values
    out = np.zeros(np.size(ans), dtype=np.result_type(ans, moved))
    np.add.at(out, positions, moved)
    return out.reshape(np.shape(ans))


def factor_tangent_adjoint_at(g, t, a, indices, b):
    """The adjoint of each value in ``factor_tangent_at(t, a, indices, b)``
    (second derivatives, ``tc.hvp``), shaped like ``a[indices]``: ``g[p] * a[p]``
    times the derivative along ``t`` of the product of the other values at ``p``."""
    if is_zero(g) or is_zero(t) or truncates(np.result_type(a)):
        return 0.0
    positions, values, shape = _occurrences(a, indices, b)
    _, d_others = _products_of_the_others(positions, values,
                                          np.ravel(np.broadcast_to(t, shape)))
    return (_flat(g, a)[positions] * np.ravel(a)[positions] * d_others).reshape(shape)


def divisor_tangent_adjoint_at(g, t, quotient, indices, b):
    """The adjoint of each value in ``divisor_tangent_at(t, quotient, indices,
    b)`` (second derivatives, ``tc.hvp``): ``g[p] * quotient[p] * t / v**2``."""
    if is_zero(g) or is_zero(t) or truncates(np.result_type(quotient)):
        return 0.0
    positions, values, shape = _occurrences(quotient, indices, b)
    moved = _flat(g, quotient)[positions] * np.ravel(quotient)[positions] * \
        np.ravel(np.broadcast_to(t, shape)) / (values * values)
    return moved.reshape(shape)
