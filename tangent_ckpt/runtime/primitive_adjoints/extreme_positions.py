"""Python's ``max(values)`` and ``min(values)`` of one iterable, as generated code
differentiates them: the position of the item Python returns (``rt.max_position``,
``rt.min_position``), then that item (``values[k]``), whose adjoint is the
adjoint of an index.  ``sorted(values)`` of items known when compiling likewise:
the positions in Python's order (``rt.sorted_order``), then each item
(``rt.item_at``), whose adjoint goes to the item it is.

Python walks the items in order and keeps the first one that no later item beats
(``item > best`` for max, ``item < best`` for min); with NaN items a comparison
is false, so a NaN first item is kept and a later NaN never replaces another.
"""

import operator

import numpy as np


def max_position(values):
    """The position of the item ``max(values)`` returns."""
    return _position(values, operator.gt, "max")


def min_position(values):
    """The position of the item ``min(values)`` returns."""
    return _position(values, operator.lt, "min")


def _position(values, beats, name):
    count = len(values)
    if count == 0:
        raise ValueError(f"{name}() iterable argument is empty")
    if isinstance(values, np.ndarray) and values.ndim == 1 and \
            (np.issubdtype(values.dtype, np.integer) or
             np.issubdtype(values.dtype, np.floating) or values.dtype == np.bool_):
        if values.dtype.kind == "f":
            if np.isnan(values[0]):
                return 0  # nothing beats a NaN first item
            worst = -np.inf if name == "max" else np.inf
            values = np.where(np.isnan(values), worst, values)  # a NaN never replaces
        # the first of the greatest (least): the item Python keeps
        return int(np.argmax(values) if name == "max" else np.argmin(values))
    best = 0
    for k in range(1, count):
        if beats(values[k], values[best]):  # rows of a 2-D array: ambiguous, as in Python
            best = k
    return best


def sorted_order(values, reverse=False):
    """The positions of ``values``' items in the order ``sorted(values,
    reverse=reverse)`` returns them: Python's own sort of the positions keyed by
    the items, which makes the same comparisons and keeps equal items in order
    (so a NaN stays where ``sorted`` leaves it)."""
    return sorted(range(len(values)), key=values.__getitem__, reverse=reverse)


def item_at(order, k, *items):
    """Item ``k`` of the sorted list: ``items[order[k]]``."""
    return items[order[k]]


def item_at_adjoint(g, order, k, i):
    """The adjoint of ``items[i]`` in :func:`item_at`: ``g`` for the item taken,
    zero for the others."""
    return g if order[k] == i else 0.0 * g
