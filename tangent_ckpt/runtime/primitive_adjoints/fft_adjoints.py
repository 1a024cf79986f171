"""Adjoints of ``np.fft``: the discrete Fourier transforms and the shifts.

Adjoints of complex values follow :mod:`tangent_ckpt.runtime.primitive_adjoints.complex_adjoints`
(``dL/du - i dL/dv`` for ``z = u + iv``).  Under that convention the adjoint of
a linear map is its plain transpose, and the DFT matrix is symmetric, so the
adjoint of ``fft`` is ``fft`` again (with the same ``norm``), and the adjoint of
``ifft`` is ``ifft``.  What changes the length along an axis -- ``n=``/``s=``
(zero padding or truncation of the input) and the half spectrum of ``rfft`` --
becomes its transpose: truncation or zero padding of the adjoint.

``irfft`` reads only the first ``n // 2 + 1`` entries of its input, the
imaginary part of the first (and, for even ``n``, the last) of them not at all,
and counts every other entry twice (it stands for itself and its conjugate
mirror); its adjoint is the conjugated ``rfft`` of ``g`` weighted so.
"""

import numpy as np

from tangent_ckpt.runtime.backends import as_array, like_of
from tangent_ckpt.runtime.primitive_adjoints.complex_adjoints import real_gradient, real_part
from tangent_ckpt.runtime.primitive_adjoints.numpy_adjoints import is_zero

__all__ = ["fft_adjoint", "fftn_adjoint", "rfft_adjoint", "irfft_adjoint",
           "rfftn_adjoint", "irfftn_adjoint"]

#: the norm of the forward transform that scales like a given inverse one
_DUAL_NORM = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def _fit(a, length, axis):
    """``a`` cut or zero-padded to ``length`` along ``axis`` (the transpose of
    padding or cutting the other way)."""
    have = a.shape[axis]
    if have > length:
        index = [slice(None)] * a.ndim
        index[axis] = slice(0, length)
        return a[tuple(index)]
    if have < length:
        widths = [(0, 0)] * a.ndim
        widths[axis] = (0, length - have)
        return np.pad(a, widths)
    return a


def _axes(ndim, s, axes):
    """The axes ``fftn(x, s, axes)`` transforms (NumPy's reading of ``None``)."""
    if axes is None:
        axes = range(ndim) if s is None else range(ndim - len(s), ndim)
    return [axis % ndim for axis in axes]


def fft_adjoint(g, x, n, axis, norm, inverse=False):
    """Adjoint of ``np.fft.fft(x, n, axis, norm)`` (``ifft`` with ``inverse``)."""
    if is_zero(g):
        return 0.0  # the symbolic zero, real (a 0j would not add into a real buffer)
    transform = np.fft.ifft if inverse else np.fft.fft
    x = as_array(x)
    bx = _fit(transform(g, axis=axis, norm=norm), x.shape[axis], axis % x.ndim)
    return real_gradient(bx, x)


def fftn_adjoint(g, x, s, axes, norm, inverse=False):
    """Adjoint of ``np.fft.fftn(x, s, axes, norm)`` (also ``fft2``; ``ifftn`` and
    ``ifft2`` with ``inverse``)."""
    if is_zero(g):
        return 0.0  # the symbolic zero, real (a 0j would not add into a real buffer)
    transform = np.fft.ifftn if inverse else np.fft.fftn
    x = as_array(x)
    axes = _axes(x.ndim, s, axes)
    bx = transform(g, axes=axes, norm=norm)
    for axis in axes:
        bx = _fit(bx, x.shape[axis], axis)
    return real_gradient(bx, x)


def rfft_adjoint(g, x, n, axis, norm):
    """Adjoint of ``np.fft.rfft(x, n, axis, norm)`` for real ``x``: the half
    spectrum padded back to ``n`` entries, transformed, real part."""
    if is_zero(g):
        return 0.0  # the symbolic zero, real (a 0j would not add into a real buffer)
    x = as_array(x)
    axis = axis % x.ndim
    n = x.shape[axis] if n is None else n
    full = np.fft.fft(_fit(g, n, axis), axis=axis, norm=norm)
    return _fit(full.real, x.shape[axis], axis)


def irfft_adjoint(g, x, n, axis, norm):
    """Adjoint of ``np.fft.irfft(x, n, axis, norm)``: ``conj(rfft(g))`` with the
    entries that stand for a conjugate pair counted twice."""
    if is_zero(g):
        return 0.0  # the symbolic zero, real (a 0j would not add into a real buffer)
    x = as_array(x)
    axis = axis % x.ndim
    n = 2 * (x.shape[axis] - 1) if n is None else n
    half = np.conj(np.fft.rfft(real_part(g), n, axis=axis, norm=_DUAL_NORM[norm]))
    twice = np.zeros(n // 2 + 1, like=like_of(g, x)) + 2.0  # (np.full(like=) hands CuPy a device=)
    twice[0] = 1.0
    if n % 2 == 0:
        twice[-1] = 1.0
    shape = [1] * half.ndim
    shape[axis] = n // 2 + 1
    bx = _fit(half * twice.reshape(shape), x.shape[axis], axis)
    return real_gradient(bx, x)


def rfftn_adjoint(g, x, s, axes, norm):
    """Adjoint of ``np.fft.rfftn(x, s, axes, norm)`` (also ``rfft2``): a full
    transform along all but the last axis, ``rfft``'s adjoint along the last."""
    if is_zero(g):
        return 0.0  # the symbolic zero, real (a 0j would not add into a real buffer)
    x = as_array(x)
    axes = _axes(x.ndim, s, axes)
    if len(axes) > 1:
        g = np.fft.fftn(g, axes=axes[:-1], norm=norm)
    last = axes[-1]
    n = x.shape[last] if s is None else s[-1]
    bx = _fit(np.fft.fft(_fit(g, n, last), axis=last, norm=norm).real, x.shape[last], last)
    for axis in axes[:-1]:
        bx = _fit(bx, x.shape[axis], axis)
    return bx


def irfftn_adjoint(g, x, s, axes, norm):
    """Adjoint of ``np.fft.irfftn(x, s, axes, norm)`` (also ``irfft2``):
    ``irfft``'s adjoint along the last axis, an inverse transform along the others."""
    if is_zero(g):
        return 0.0  # the symbolic zero, real (a 0j would not add into a real buffer)
    x = as_array(x)
    axes = _axes(x.ndim, s, axes)
    last = axes[-1]
    n = None if s is None else s[-1]
    fitted = x
    if s is not None:                      # the other axes are cut or padded first
        for axis, length in zip(axes[:-1], s[:-1]):
            fitted = _fit(fitted, length, axis)
    bx = irfft_adjoint(g, fitted, n, last, norm)
    if len(axes) > 1:
        bx = np.fft.ifftn(bx, axes=axes[:-1], norm=norm)
    for axis in axes[:-1]:
        bx = _fit(bx, x.shape[axis], axis)
    return real_gradient(bx, x)
