"""Adjoint rules of NumPy primitives, one row per primitive.

Python operators map onto these rules: ``a + b`` is ``np.add``, ``a @ b`` is
``np.matmul``, ``-a`` is ``np.negative``, ``a[i]`` is ``operator.getitem``.
See :mod:`tangent_ckpt.adjoints.registry` for the expression language.
"""

import operator

import numpy as np

from tangent_ckpt.adjoints.registry import defadjoint, defconstant

# --- arithmetic -------------------------------------------------------------
defadjoint(np.add, "x1, x2",
           x1="unbroadcast(g, x1)",
           x2="unbroadcast(g, x2)")
defadjoint(np.subtract, "x1, x2",
           x1="unbroadcast(g, x1)",
           x2="unbroadcast(-g, x2)")
defadjoint(np.multiply, "x1, x2",
           x1="unbroadcast(g * x2, x1)",
           x2="unbroadcast(g * x1, x2)")
defadjoint(np.divide, "x1, x2",
           x1="unbroadcast(g / x2, x1)",
           x2="unbroadcast(-g * ans / x2, x2)")
defadjoint(np.negative, "x", x="-g")
defadjoint(np.matmul, "x1, x2",
           x1="matmul_adjoint_x1(g, x1, x2)",
           x2="matmul_adjoint_x2(g, x1, x2)")

# --- elementwise functions ---------------------------------------------------
defadjoint(np.tanh, "x", x="g * (1.0 - ans * ans)")
defadjoint(np.exp, "x", x="g * ans")

# --- reductions --------------------------------------------------------------
defadjoint(np.sum, "a, axis=None, dtype=None, out=None, keepdims=False",
           a="repeat_to_match(g, a, axis, keepdims)")

# --- indexing ----------------------------------------------------------------
defadjoint(operator.getitem, "a, index", name="getitem",
           a="getitem_adjoint(g, a, index)")

# --- constants ---------------------------------------------------------------
for _fn in (np.zeros, np.ones, np.zeros_like, np.ones_like, np.full, np.arange,
            np.shape, np.ndim, np.size, len):
    defconstant(_fn)
