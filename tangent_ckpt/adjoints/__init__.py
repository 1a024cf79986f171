"""Adjoint rules: the registry and the NumPy table (loaded on import)."""

from tangent_ckpt.adjoints import registry  # noqa: F401
from tangent_ckpt.adjoints import numpy_rules  # noqa: F401

try:  # scipy.special rules, only where SciPy is installed
    import scipy.special  # noqa: F401
except ImportError:  # pragma: no cover - SciPy is an optional extra
    pass
else:
    from tangent_ckpt.adjoints import scipy_rules  # noqa: F401
