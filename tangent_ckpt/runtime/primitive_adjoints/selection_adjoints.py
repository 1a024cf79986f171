"""Adjoints of the NumPy functions that pick elements out of an array:
``np.take``, ``np.compress`` / ``np.extract`` and ``np.choose``.

Each picked element's adjoint goes back to the place it was read from; an
element read twice (``np.take(a, [0, 0])``) gets both, one never read gets 0.
Like every helper they accept the symbolic zero ``0.0`` for ``g`` and return it,
and never mutate their arguments.
"""

import numpy as np

from tangent_ckpt.runtime.backends import as_array, like_of
from tangent_ckpt.runtime.primitive_adjoints.numpy_adjoints import is_zero, unbroadcast

__all__ = ["take_adjoint", "compress_adjoint", "choose_adjoint", "choose_adjoint_all"]


def _picked(indices, n, mode):
    """``indices`` into a length ``n`` as ``mode`` reads them: ``'wrap'`` wraps,
    ``'clip'`` clips (a negative index is the first), ``'raise'`` keeps them
    (NumPy already raised for one out of range; a negative one counts from the end)."""
    indices = np.asarray(indices)
    if mode == "wrap":
        return indices % n
    if mode == "clip":
        return np.clip(indices, 0, n - 1)
    return indices


def take_adjoint(g, a, indices, axis=None, mode="raise"):
    """Adjoint of ``np.take(a, indices, axis, mode=mode)``: ``g`` added back at
    the positions it was taken from (of the flattened ``a`` when ``axis`` is None)."""
    if is_zero(g):
        return g
    a = as_array(a)
    out = np.zeros(a.shape, dtype=np.result_type(g, float), like=like_of(g, a))
    if axis is None:
        flat = np.reshape(out, -1)
        np.add.at(flat, _picked(indices, a.size, mode), g)
        return np.reshape(flat, a.shape)
    axis = int(axis) % a.ndim
    indices = _picked(indices, a.shape[axis], mode)
    k = indices.ndim
    g = np.broadcast_to(g, a.shape[:axis] + indices.shape + a.shape[axis + 1:])
    # the taken axes first, as np.add.at indexes the first axis of the target
    np.add.at(np.moveaxis(out, axis, 0), indices,
              np.moveaxis(g, list(range(axis, axis + k)), list(range(k))))
    return out


def compress_adjoint(g, condition, a, axis=None):
    """Adjoint of ``np.compress(condition, a, axis)``: ``g`` put back where the
    condition holds (a condition shorter than the axis leaves the rest 0)."""
    if is_zero(g):
        return g
    a = as_array(a)
    kept = np.nonzero(np.asarray(condition, dtype=bool).ravel())[0]
    out = np.zeros(a.shape, dtype=np.result_type(g, float), like=like_of(g, a))
    if axis is None:
        flat = np.reshape(out, -1)
        flat[kept] = g
        return np.reshape(flat, a.shape)
    place = [slice(None)] * a.ndim
    place[int(axis) % a.ndim] = kept
    out[tuple(place)] = g
    return out


def choose_adjoint(g, a, choices, i, mode="raise"):
    """Adjoint of choice ``i`` of ``np.choose(a, choices, mode=mode)``: ``g``
    where ``a`` (as ``mode`` reads it) picks choice ``i``, summed down to its shape."""
    if is_zero(g):
        return g
    picked = _picked(a, len(choices), mode)
    return unbroadcast(np.where(picked == i, g, 0.0), choices[i])


def choose_adjoint_all(g, a, choices, mode="raise"):
    """Adjoint of ``np.choose(a, choices)`` where ``choices`` is one array (its
    rows the choices): the rows' adjoints, in ``choices``' shape."""
    if is_zero(g):
        return g
    choices = as_array(choices)
    return np.stack([choose_adjoint(g, a, choices, i, mode) for i in range(len(choices))])
