"""Adjoint helpers of NumPy's 1-D signal functions: ``np.convolve``,
``np.correlate`` (real input) and ``np.interp``.

A convolution in any mode is a window of the full one (``mode="full"``); its
adjoint places ``g`` back in that window and correlates it with the other
factor.  ``np.interp`` is linear in ``fp`` (each output mixes the two knots
around it) and piecewise linear in ``x``.  Like every helper they accept the
symbolic zero ``0.0`` for ``g`` and return it, and never mutate their arguments.
"""

import numpy as np

from tangent_ckpt.runtime.backends import as_array, like_of
from tangent_ckpt.runtime.primitive_adjoints.numpy_adjoints import is_zero

__all__ = ["convolve_adjoint", "correlate_adjoint_a", "correlate_adjoint_v",
           "interp_adjoint_x", "interp_adjoint_fp", "interp_slope", "interp_slope_adjoint_fp"]


def _window_start(m, n, mode, short_first):
    """Where the output of mode ``mode`` starts in the full result (length m + n - 1).
    NumPy centres ``same`` on the full result; for a correlation whose first
    argument is the shorter one it computes the swapped correlation reversed,
    which rounds the other way (``short_first``)."""
    short = min(m, n)
    if mode == "full":
        return 0
    if mode == "valid":
        return short - 1
    half = (short - 1) // 2
    return short - 1 - half if short_first else half


def _in_full(g, m, n, mode, short_first=False):
    g = np.ravel(g)
    full = np.zeros(m + n - 1, dtype=np.result_type(g, float), like=like_of(g))
    start = _window_start(m, n, mode, short_first)
    full[start:start + g.size] = g
    return full


def convolve_adjoint(g, x, other, mode="full"):
    """Adjoint of ``np.convolve(x, other, mode)`` (or of ``(other, x)``: convolution
    commutes) for ``x``: ``g`` in the full result, correlated with ``other``."""
    if is_zero(g):
        return g
    full = _in_full(g, np.size(x), np.size(other), mode)
    return np.reshape(np.correlate(full, np.ravel(other), "valid"), np.shape(x))


def correlate_adjoint_a(g, a, v, mode="valid"):
    """Adjoint of ``np.correlate(a, v, mode)`` (real) for ``a``: the correlation
    is the convolution of ``a`` with ``v`` reversed."""
    if is_zero(g):
        return g
    m, n = np.size(a), np.size(v)
    full = _in_full(g, m, n, mode, short_first=m < n)
    return np.reshape(np.correlate(full, np.ravel(v)[::-1], "valid"), np.shape(a))


def correlate_adjoint_v(g, a, v, mode="valid"):
    """Adjoint of ``np.correlate(a, v, mode)`` (real) for ``v``."""
    if is_zero(g):
        return g
    m, n = np.size(a), np.size(v)
    full = _in_full(g, m, n, mode, short_first=m < n)
    return np.reshape(np.correlate(full, np.ravel(a), "valid")[::-1], np.shape(v))


def _interval(x, xp):
    """The knot interval ``[xp[i], xp[i + 1]]`` each ``x`` falls in (the first or
    last one outside ``xp``'s range; the one on the right at an inner knot)."""
    return np.clip(np.searchsorted(xp, x, side="right") - 1, 0, max(len(xp) - 2, 0))


def interp_slope(x, xp, fp):
    """The slope of ``np.interp(x, xp, fp)`` in ``x``: the interval's, 0 outside
    ``[xp[0], xp[-1]]`` (where the result is the constant end value)."""
    x, xp, fp = as_array(x, dtype=float), as_array(xp, dtype=float), as_array(fp)
    if len(xp) < 2:
        return np.zeros_like(x)
    i = _interval(x, xp)
    slope = (fp[i + 1] - fp[i]) / (xp[i + 1] - xp[i])
    return np.where((x >= xp[0]) & (x <= xp[-1]), slope, 0.0)


def interp_adjoint_x(g, x, xp, fp):
    """Adjoint of ``np.interp(x, xp, fp)`` for ``x``."""
    if is_zero(g):
        return g
    return g * interp_slope(x, xp, fp)


def _to_knots(g, x, xp, fp, left_weight, right_weight, one_knot=1.0):
    """``fp``'s adjoint when each output's ``g`` goes to the two knots of its
    interval with the weights ``left_weight(x, xp, i)`` and ``right_weight``
    (with a single knot, ``one_knot`` of it to that knot)."""
    x, xp = as_array(x, dtype=float), as_array(xp, dtype=float)
    g = np.broadcast_to(g, x.shape)
    out = np.zeros(np.shape(fp), dtype=np.result_type(g, fp, float), like=like_of(g, fp))
    if len(xp) < 2:
        out[0] = one_knot * np.sum(g)
        return out
    i = _interval(x, xp)
    np.add.at(out, i, g * left_weight(x, xp, i))
    np.add.at(out, i + 1, g * right_weight(x, xp, i))
    return out


def _fraction(x, xp, i):
    """Where ``x`` lies in its interval, 0 at the left knot, 1 at the right
    (clipped: outside ``xp``'s range the end knot takes it all)."""
    return np.clip((x - xp[i]) / (xp[i + 1] - xp[i]), 0.0, 1.0)


def _inverse_width(x, xp, i):
    """``1 / (xp[i + 1] - xp[i])`` inside ``xp``'s range, 0 outside."""
    return np.where((x >= xp[0]) & (x <= xp[-1]), 1.0 / (xp[i + 1] - xp[i]), 0.0)


def interp_adjoint_fp(g, x, xp, fp):
    """Adjoint of ``np.interp(x, xp, fp)`` for ``fp``: each output's ``g`` split
    between the two knots of its interval by the interpolation weights (all of it
    to the end knot outside ``xp``'s range)."""
    if is_zero(g):
        return g
    return _to_knots(g, x, xp, fp, lambda x, xp, i: 1.0 - _fraction(x, xp, i), _fraction)


def interp_slope_adjoint_fp(g, x, xp, fp):
    """Adjoint of :func:`interp_slope` for ``fp`` (the tangent of ``np.interp``
    differentiated again): ``+-g / (xp[i + 1] - xp[i])`` at the interval's knots,
    inside ``xp``'s range only."""
    if is_zero(g):
        return g
    return _to_knots(g, x, xp, fp, lambda x, xp, i: -_inverse_width(x, xp, i), _inverse_width,
                     one_knot=0.0)
