"""Helpers that inlined adjoint expressions call (``rt.unbroadcast`` ...).

Each is a small NumPy function with no knowledge of the compiler.  They accept
the "symbolic zero" ``0.0`` that generated code uses for an adjoint that has
received no contribution yet.
"""

import numpy as np


def unbroadcast(g, x):
    """Sum ``g`` down to the shape of ``x``: the adjoint of broadcasting ``x``.

    ``x`` may be an array, a NumPy scalar or a Python number.  A scalar ``g``
    (the symbolic zero) is returned unchanged.
    """
    shape = np.shape(x)
    gshape = np.shape(g)
    if gshape == shape or not gshape:
        return g
    extra = len(gshape) - len(shape)
    if extra > 0:
        g = np.sum(g, axis=tuple(range(extra)))
    axes = tuple(i for i, (n, m) in enumerate(zip(shape, np.shape(g))) if n == 1 and m != 1)
    if axes:
        g = np.sum(g, axis=axes, keepdims=True)
    return g


def as_gradient(g, x):
    """The adjoint ``g`` as a gradient for ``x``: same shape and a float dtype.

    Turns the symbolic zero into ``zeros_like(x)`` and broadcasts scalars.
    """
    if np.ndim(x) == 0 and not isinstance(x, np.ndarray):
        return float(np.sum(g)) if np.ndim(g) else float(g)
    dtype = x.dtype if np.issubdtype(np.asarray(x).dtype, np.inexact) else np.float64
    g = np.asarray(g, dtype=dtype)
    if g.shape != np.shape(x):
        g = np.broadcast_to(unbroadcast(g, x), np.shape(x)).copy()
    return g


def zeros_like(x):
    """A fresh float adjoint buffer shaped like ``x`` (a pytree of arrays and floats)."""
    if isinstance(x, (tuple, list)):
        return type(x)(zeros_like(v) for v in x)
    if isinstance(x, dict):
        return {k: zeros_like(v) for k, v in x.items()}
    if isinstance(x, np.ndarray):
        dtype = x.dtype if np.issubdtype(x.dtype, np.inexact) else np.float64
        return np.zeros(x.shape, dtype=dtype)
    return 0.0


def matmul_adjoint_x1(g, x1, x2):
    """Adjoint of ``x1`` in ``x1 @ x2`` (1-D operands promoted as NumPy does)."""
    x1, x2 = np.asarray(x1), np.asarray(x2)
    if x2.ndim == 1:
        g = np.expand_dims(g, -1)
        x2 = x2[np.newaxis, :]  # (1, k): g (..., n, 1) @ x2 (1, k)
        result = g @ x2
    else:
        result = g @ np.swapaxes(x2, -1, -2)
    return unbroadcast(result, x1)


def matmul_adjoint_x2(g, x1, x2):
    """Adjoint of ``x2`` in ``x1 @ x2``."""
    x1, x2 = np.asarray(x1), np.asarray(x2)
    if x1.ndim == 1:
        result = np.multiply.outer(x1, g) if x2.ndim == 2 else x1[:, None] * np.expand_dims(g, -2)
    elif x2.ndim == 1:
        result = np.swapaxes(x1, -1, -2) @ np.expand_dims(g, -1)
        result = result[..., 0]
    else:
        result = np.swapaxes(x1, -1, -2) @ g
    return unbroadcast(result, x2)


def repeat_to_match(g, x, axis=None, keepdims=False):
    """Adjoint of a sum-like reduction of ``x`` over ``axis``: spread ``g`` back."""
    shape = np.shape(x)
    if axis is not None and not keepdims:
        axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
        axes = tuple(a % len(shape) for a in axes)
        g = np.expand_dims(g, axes)
    return np.broadcast_to(g, shape)


def getitem_adjoint(g, x, index):
    """Adjoint of ``x[index]``: ``g`` scattered into zeros shaped like ``x``."""
    out = zeros_like(np.asarray(x))
    np.add.at(out, index, g)
    return out
