"""Adjoints where a complex value meets a real one: ``np.real``, ``np.imag``,
``np.conj`` and ``abs`` of complex arrays, and the gradient a real input receives.

The convention (autograd's and JAX's): the adjoint of a complex value
``z = u + iv`` under a real loss ``L`` is ``dL/du - i dL/dv``.  With it every
rule of a holomorphic function stays what it is for real numbers (``g * x2``
for ``x1 * x2``, ``g * ans`` for ``np.exp``), so only the functions that are
not holomorphic need rules of their own, written here.

A real value that meets a complex one (``r * k`` with real ``r`` and complex
``k``) receives a complex adjoint; only its real part is ``dL/dr``.  The
imaginary part is harmless while it flows back through real coefficients, and
it is dropped where it would mix with a complex one: when it reaches a
function of a complex value with a real result (the rules below and
``np.fft.irfft``), and when it reaches the user (``real_gradient``).
"""

import numpy as np

from tangent_ckpt.runtime.backends import is_array
from tangent_ckpt.runtime.primitive_adjoints.numpy_adjoints import is_zero

__all__ = ["real_part", "real_gradient", "real_adjoint", "imag_adjoint", "conj_adjoint",
           "abs_adjoint"]


def real_part(g):
    """``g`` without the imaginary part a real value's adjoint may carry."""
    return g.real if np.iscomplexobj(g) else g


def real_gradient(g, x):
    """The adjoint ``g`` as the gradient of ``x``: its real part when ``x`` is real."""
    if np.iscomplexobj(g) and not np.iscomplexobj(x):
        return np.real(g).copy() if is_array(g) else np.real(g)
    return g


def real_adjoint(g, val):
    """Adjoint of ``np.real(val)``: ``Re g`` (``val`` real: ``g``)."""
    return real_part(g)


def imag_adjoint(g, val):
    """Adjoint of ``np.imag(val)``: ``-i Re g`` for complex ``val``; 0 for real ``val``
    (its imaginary part is the constant 0)."""
    if np.iscomplexobj(val):
        return -1j * real_part(g)
    return 0.0 * real_part(g)


def conj_adjoint(g, x):
    """Adjoint of ``np.conj(x)``: ``conj(g)`` (``x`` real: ``g``)."""
    return np.conj(g) if np.iscomplexobj(x) else g


#: NumPy 2 made np.sign of a complex number its phase x / |x|; NumPy 1.x gives the
#: sign of its real part (of the imaginary part where that is 0)
_SIGN_IS_PHASE = np.lib.NumpyVersion(np.__version__) >= "2.0.0"


def phase(x):
    """``x / |x|`` of a complex array, 0 at 0, on every NumPy."""
    if _SIGN_IS_PHASE:
        return np.sign(x)
    magnitude = np.abs(x)
    return np.where(magnitude > 0, x / np.where(magnitude > 0, magnitude, 1.0), 0)


def abs_adjoint(g, x):
    """Adjoint of ``abs(x)``: ``g sign(x)`` for real ``x``, ``Re(g) conj(x) / |x|``
    for complex ``x`` (0 at 0 in both cases)."""
    if is_zero(g):
        return g
    if np.iscomplexobj(x):
        return real_part(g) * np.conj(phase(x))
    return g * np.sign(x)
