"""``rt.require_array``: the run-time check of a parameter the view lowering
follows as a NumPy array though the compiler cannot see its type
(``compiler/desugar/array_roots.py``).  For an array, ``u = U[1:-1]`` is a
view and ``U[0] = U[1]`` copies a row, and the gradient follows both as NumPy
runs them; for a list or another container they mean something else, which
the gradient was not compiled for: it stops, naming the parameter and the
user's line, before it computes anything."""

import numpy as np

from tangent_ckpt.errors import TangentCkptError


def require_array(value, name, view, of=None, line=None):
    """Refuse ``value``, given for the parameter ``name``, unless it is a NumPy
    array: the user's ``line`` takes ``view`` as a view of ``of`` (``name``
    itself, or a copy of it), which is a view only of an array."""
    if isinstance(value, np.ndarray):
        return
    kind = type(value).__name__
    where = f" at line {line}" if line is not None else ""
    of = name if of is None else of
    array = f"'{of}'" if of == name else f"'{of}' (a copy of '{name}')"
    raise TangentCkptError(
        f"'{name}' is given a {kind}, not a NumPy array: the gradient follows '{view}'"
        f"{where} as a view of {array} and the writes through it as NumPy runs them for "
        f"an array; for a {kind} the same code means something else, which this gradient "
        f"does not compute (call it with a NumPy array for '{name}')")
