"""Adjoint rules: the registry and the NumPy table (loaded on import)."""

from tangent_ckpt.adjoints import registry  # noqa: F401
from tangent_ckpt.adjoints import numpy_rules  # noqa: F401
