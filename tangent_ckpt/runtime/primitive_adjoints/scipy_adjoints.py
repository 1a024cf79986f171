"""Adjoint helpers of ``scipy.signal.convolve2d`` and ``scipy.spatial.distance_matrix``
(loaded only where SciPy is installed).

``convolve2d(in1, in2, mode, boundary, fillvalue)`` is the 'full' convolution of
``in1`` padded by ``in2.shape - 1`` on each side (with ``fillvalue``, periodically
for 'wrap', mirrored with the edge repeated for 'symm') with ``in2``, cut to the
mode's window ('same': centred, the size of ``in1``; 'valid': no padded entry
read, so the boundary plays no part).  Its adjoint goes back through each step:
the window's adjoint placed in the full output, a convolution with the flipped
kernel for the padded input, folded back onto ``in1`` (a padded entry adds to the
entry it copies; the fill entries' sum is ``fillvalue``'s adjoint), and a valid
convolution of the flipped padded input with it for ``in2``.

``distance_matrix(x, y, p)`` is ``np.linalg.norm(x[:, None] - y[None], p, axis=-1)``:
its adjoint is the norm's (a distance of 0 passes 0, a subgradient; ``x`` given
twice gets exactly 0 from the diagonal), summed over the other set of points.
"""

import numpy as np
from scipy import signal

from tangent_ckpt.runtime.primitive_adjoints.linalg_adjoints import norm_adjoint
from tangent_ckpt.runtime.primitive_adjoints.numpy_adjoints import is_zero

__all__ = ["convolve2d", "convolve2d_in1_adjoint", "convolve2d_in2_adjoint",
           "convolve2d_fillvalue_adjoint", "distance_matrix_x_adjoint",
           "distance_matrix_y_adjoint"]

# the function itself, for its tangent rules (``convolve2d(t, in2, ...)``): it has a rule
convolve2d = signal.convolve2d

# SciPy's spellings of the boundaries, and the np.pad mode that pads the same way
_BOUNDARIES = {"fill": "fill", "pad": "fill", "wrap": "wrap", "circular": "wrap",
               "symm": "symm", "symmetric": "symm"}
_PAD_MODES = {"wrap": "wrap", "symm": "symmetric"}


def _window(shape1, shape2, mode):
    """Where the mode's output lies in the 'full' output."""
    if mode == "full":
        return tuple(slice(0, a + b - 1) for a, b in zip(shape1, shape2))
    if mode == "same":
        return tuple(slice((b - 1) // 2, (b - 1) // 2 + a) for a, b in zip(shape1, shape2))
    if mode == "valid":   # SciPy swaps the inputs where in2 is the larger
        return tuple(slice(min(a, b) - 1, max(a, b)) for a, b in zip(shape1, shape2))
    raise ValueError(f"convolve2d: unknown mode {mode!r}")


def _boundary(mode, boundary):
    """The padding that matters: none in 'valid' mode (zeros, never read)."""
    if boundary not in _BOUNDARIES:
        raise ValueError(f"convolve2d: unknown boundary {boundary!r}")
    return "fill" if mode == "valid" else _BOUNDARIES[boundary]


def _widths(in2):
    return [(k - 1, k - 1) for k in np.shape(in2)]


def _padded(in1, in2, mode, boundary, fillvalue):
    boundary = _boundary(mode, boundary)
    if boundary == "fill":
        return np.pad(in1, _widths(in2), mode="constant",
                      constant_values=fillvalue if mode != "valid" else 0)
    return np.pad(in1, _widths(in2), mode=_PAD_MODES[boundary])


def _full_adjoint(g, in1, in2, mode):
    """The adjoint of the 'full' output: ``g`` in the mode's window, 0 elsewhere."""
    shape1, shape2 = np.shape(in1), np.shape(in2)
    out = np.zeros(tuple(a + b - 1 for a, b in zip(shape1, shape2)),
                   dtype=np.result_type(g, in1, in2, 1.0))
    out[_window(shape1, shape2, mode)] = g
    return out


def _padded_adjoint(g, in1, in2, mode):
    """The adjoint of the padded ``in1``."""
    return signal.convolve2d(_full_adjoint(g, in1, in2, mode), np.asarray(in2)[::-1, ::-1],
                             "full")


def _sources(in1, in2, mode, boundary):
    """For each entry of the padded ``in1``, the flat index of the entry of
    ``in1`` it holds, -1 for a fill entry."""
    index = np.arange(np.size(in1)).reshape(np.shape(in1))
    boundary = _boundary(mode, boundary)
    if boundary == "fill":
        return np.pad(index, _widths(in2), mode="constant", constant_values=-1)
    return np.pad(index, _widths(in2), mode=_PAD_MODES[boundary])


def convolve2d_in1_adjoint(g, in1, in2, mode="full", boundary="fill"):
    """The adjoint of ``in1``: the padded input's, each padded entry folded back
    onto the entry of ``in1`` it copies."""
    if is_zero(g):
        return g
    padded = _padded_adjoint(g, in1, in2, mode)
    sources = _sources(in1, in2, mode, boundary)
    held = sources >= 0
    out = np.zeros(np.size(in1), dtype=padded.dtype)
    np.add.at(out, sources[held], padded[held])
    return out.reshape(np.shape(in1))


def convolve2d_in2_adjoint(g, in1, in2, mode="full", boundary="fill", fillvalue=0):
    """The adjoint of the kernel ``in2``: the flipped padded input convolved
    ('valid') with the adjoint of the full output."""
    if is_zero(g):
        return g
    padded = _padded(in1, in2, mode, boundary, fillvalue)
    return signal.convolve2d(padded[::-1, ::-1], _full_adjoint(g, in1, in2, mode), "valid")


def convolve2d_fillvalue_adjoint(g, in1, in2, mode="full", boundary="fill"):
    """The adjoint of ``fillvalue``: the padded input's adjoint summed over the
    fill entries (0 where nothing is filled: 'wrap', 'symm', 'valid')."""
    if is_zero(g) or _boundary(mode, boundary) != "fill" or mode == "valid":
        return 0.0
    padded = _padded_adjoint(g, in1, in2, mode)
    return np.sum(padded[_sources(in1, in2, mode, boundary) < 0])


def _difference_adjoint(g, x, y, ans, p):
    """The adjoint of ``x[:, None] - y[None]`` that the norms along its last axis pass."""
    x, y = np.asarray(x), np.asarray(y)
    return norm_adjoint(g, x[:, None, :] - y[None, :, :], ans, p, -1)


def distance_matrix_x_adjoint(g, x, y, ans, p=2):
    """The adjoint of the points ``x`` of ``distance_matrix(x, y, p)``."""
    if is_zero(g):
        return g
    return np.sum(_difference_adjoint(g, x, y, ans, p), axis=1)


def distance_matrix_y_adjoint(g, x, y, ans, p=2):
    """The adjoint of the points ``y`` of ``distance_matrix(x, y, p)``."""
    if is_zero(g):
        return g
    return -np.sum(_difference_adjoint(g, x, y, ans, p), axis=0)
