"""Adjoint helpers of ``scipy.special`` (loaded only where SciPy is installed)."""

import numpy as np
from scipy import special

from tangent_ckpt.runtime.numpy_adjoints import _keep, _weak_like, is_zero

__all__ = ["digamma_adjoint", "gammaln_adjoint", "logsumexp_adjoint", "digamma", "polygamma"]

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
    a = np.asarray(a)
    g = _keep(_weak_like(g, a), a, axis, keepdims)
    return g * np.exp(a - _keep(ans, a, axis, keepdims))
