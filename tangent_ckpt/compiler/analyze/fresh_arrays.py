"""Which arrays the differentiated function owns: every assignment of the name
makes a new NumPy array (``np.zeros``, arithmetic, ufuncs, ``x.copy()``).

A subscript write into such an array can go in place: no caller's array, global
or argument is behind it, and the aliasing fence (``aliasing.py``) has already
refused writes through a name that shares memory with another one read later.
The transform then keeps only the elements a write overwrites (``S[t] = ...``
keeps the old ``S[t]``), and puts them back in the reverse sweep, so every name
and view the reverse sweep reads finds the array as it was at that point.
Arrays not proved owned (arguments, views, aliases, results of user functions)
keep value semantics: copied before each write.
"""

import numpy as np

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler.memory_sharing import VIEW_FUNCTIONS


def _makes_new_array(expr):
    if not isinstance(expr, ir.Prim) or "out" in expr.kwargs:
        return False
    fn = expr.fn
    if isinstance(fn, np.ufunc):
        return True
    if fn is np.array:
        return "copy" not in expr.kwargs
    if any(fn is v for v in VIEW_FUNCTIONS):
        return False
    return (getattr(fn, "__module__", None) or "").startswith("numpy")


def owned_arrays(function):
    """Names of ``function`` (an ``ir.Function``) whose every assignment makes a
    new NumPy array, so subscript writes into them may go in place."""
    made, other = set(), set(function.params)
    for stmt in ir.walk(function.body):
        if isinstance(stmt, ir.Assign):
            (made if _makes_new_array(stmt.expr) else other).add(stmt.target)
        elif isinstance(stmt, ir.For):
            other.add(stmt.target)
    return made - other
