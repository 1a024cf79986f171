"""Adjoint helpers of ``scipy.special`` (loaded only where SciPy is installed)."""

import numpy as np
from scipy import special

from tangent_ckpt.runtime.backends import as_array
from tangent_ckpt.runtime.primitive_adjoints.numpy_adjoints import _keep, _weak_like, is_zero

__all__ = ["digamma_adjoint", "gammaln_adjoint", "logsumexp_adjoint", "softmax_adjoint",
           "log_softmax_adjoint", "digamma", "polygamma"]

# the functions themselves, for tangent rules (``t * digamma(x)``): each has a rule
digamma = special.digamma
polygamma = special.polygamma


def gammaln_adjoint(g, x):
    """Adjoint of ``gammaln``: ``g * digamma(x)``."""
    return g if is_zero(g) else g * special.digamma(x)


def digamma_adjoint(g, x):
    """Adjoint of ``digamma``: ``g * polygamma(1, x)``."""
    return g if is_zero(g) else g * special.polygamma(1, x)


def logsumexp_adjoint(g, a, ans, axis=None, keepdims=False):
    """Adjoint of ``logsumexp(a, axis)``: ``g * exp(a - ans)`` (the softmax)."""
    if is_zero(g):
        return g
    a = as_array(a)
    g = _keep(_weak_like(g, a), a, axis, keepdims)
    return g * np.exp(a - _keep(ans, a, axis, keepdims))


def softmax_adjoint(g, ans, axis=None):
    """Adjoint of ``softmax(x, axis)``: ``ans * (g - sum(g * ans))`` over ``axis``."""
    if is_zero(g):
        return g
    g = np.broadcast_to(g, np.shape(ans))
    return ans * (g - np.sum(g * ans, axis=axis, keepdims=True))


def log_softmax_adjoint(g, ans, axis=None):
    """Adjoint of ``log_softmax(x, axis)``: ``g - exp(ans) * sum(g)`` over ``axis``."""
    if is_zero(g):
        return g
    g = np.broadcast_to(g, np.shape(ans))
    return g - np.exp(ans) * np.sum(g, axis=axis, keepdims=True)
