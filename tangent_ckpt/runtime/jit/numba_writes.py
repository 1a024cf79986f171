"""``rt.assign_at(x, index, value)``: ``x[index] = value`` as the numba backend writes it.

Numba compiles ``u[1:-1] = v`` to its general broadcasting loop, about three
times slower than a plain loop over the elements; the numba backend
(``compiler/backend/numba_code.py``) writes such a store as ``rt.assign_at(u,
slice(1, -1), v)``, whose Numba twin (``numba_twins.py``) copies element by
element when the view and ``value`` are 1-D of one length and do not overlap in
memory.  Called from Python (a function that runs with NumPy) it is the store
itself.
"""

__all__ = ["assign_at"]


def assign_at(x, index, value):
    """``x[index] = value``."""
    x[index] = value
