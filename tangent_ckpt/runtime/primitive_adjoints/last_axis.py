"""Reshapes that bring the axes a reduction runs over to one last axis, and back.

Tangent rules of reductions (``np.prod``, ``np.cumprod``, ``logsumexp``) are
written once for a last axis; these two linear maps adapt them to ``axis=None``,
an int or a tuple.  Both have adjoint and tangent rules of their own (the
other one, and themselves), so the tangent code can be differentiated again.
"""

import numpy as np

from tangent_ckpt.runtime.backends import as_array, like_of

__all__ = ["along_last", "from_last", "take_along_axis_adjoint", "weights_like",
           "weights_like_adjoint"]


def _axes(axis, ndim):
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return tuple(int(ax) % ndim for ax in axes)


def along_last(a, axis=None):
    """``a`` with the axes ``axis`` (None: all) merged into one last axis,
    the other axes first in their order (a new array, never a view of ``a``)."""
    a = as_array(a)
    if axis is None:
        return np.reshape(a, (-1,)).copy()
    axes = _axes(axis, a.ndim)
    moved = np.moveaxis(a, axes, tuple(range(a.ndim - len(axes), a.ndim)))
    return np.reshape(moved, moved.shape[:a.ndim - len(axes)] + (-1,)).copy()


def from_last(x, like, axis=None):
    """The inverse of :func:`along_last`: ``x`` back in the shape of ``like``
    (a new array)."""
    like_shape = np.shape(like)
    if axis is None:
        return np.reshape(x, like_shape).copy()
    ndim = len(like_shape)
    axes = _axes(axis, ndim)
    kept = [n for k, n in enumerate(like_shape) if k not in axes]
    moved = np.reshape(x, tuple(kept) + tuple(like_shape[k] for k in axes))
    return np.moveaxis(moved, tuple(range(ndim - len(axes), ndim)), axes).copy()


def take_along_axis_adjoint(g, arr, indices, axis=-1):
    """Adjoint of ``np.take_along_axis(arr, indices, axis)``: ``g`` added back
    where each element was taken from (repeated indices accumulate)."""
    arr = as_array(arr)
    out = np.zeros(arr.shape, dtype=np.result_type(g, float), like=like_of(g, arr))
    if axis is None:
        flat = np.zeros(arr.size, dtype=out.dtype, like=like_of(out))
        np.add.at(flat, as_array(indices), g)
        return np.reshape(flat, arr.shape)
    g = np.broadcast_to(g, np.broadcast_shapes(np.shape(g), np.shape(indices)))
    grids = list(np.indices(g.shape, sparse=True))
    grids[int(axis) % arr.ndim] = np.broadcast_to(indices, g.shape)
    np.add.at(out, tuple(grids), g)
    return out


def weights_like(weights, a, axis=None):
    """``np.average``'s weights as an array of ``a``'s shape (NumPy allows them
    1-D along ``axis``); a new array."""
    w = as_array(weights)
    if w.shape != np.shape(a) and axis is not None:
        shape = [1] * np.ndim(a)
        shape[_axes(axis, np.ndim(a))[0]] = w.size
        w = np.reshape(w, shape)
    return np.array(np.broadcast_to(w, np.shape(a)))


def weights_like_adjoint(g, weights, axis=None):
    """Adjoint of :func:`weights_like`: ``g`` summed back to the weights' shape."""
    if np.shape(g) == np.shape(weights):
        return g
    kept = _axes(axis, np.ndim(g))[0]
    others = tuple(k for k in range(np.ndim(g)) if k != kept)
    return np.reshape(np.sum(g, axis=others), np.shape(weights))
