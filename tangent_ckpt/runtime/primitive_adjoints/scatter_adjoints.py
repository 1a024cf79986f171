"""Unbuffered scatter-adds (``np.add.at(a, indices, b)``, ``np.subtract.at``)
as the functional primitives the compiler differentiates.

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
"""

import numpy as np

from tangent_ckpt.runtime.primitive_adjoints.numpy_adjoints import is_zero, truncates

__all__ = ["add_at", "subtract_at", "gathered_at", "scattered_at"]


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
