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
from tangent_ckpt.adjoints.registry import is_numpy_function
from tangent_ckpt.compiler.memory_sharing import (
    COPY_FLAG_FUNCTIONS, UNKNOWN_VALUE, new_by_default, returns_new,
)


def _makes_new_array(expr):
    if not isinstance(expr, ir.Prim) or "out" in expr.kwargs:
        return False
    fn = expr.fn
    if any(fn is f for f in COPY_FLAG_FUNCTIONS):   # np.array(x): new; np.array(x, copy=False): maybe not
        return new_by_default(fn, len(expr.args), {
            k: v.value if isinstance(v, ir.Const) else UNKNOWN_VALUE
            for k, v in expr.kwargs.items()})
    return returns_new(fn) and is_numpy_function(fn)


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
