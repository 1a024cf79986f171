"""Lists built at run time (``hs.append(h)`` in a loop, a comprehension over
``range(n)``), held as the array of their rows -- what ``np.stack(hs)`` would
give.  ``append_row`` is functional (a new array), so a loop carries the list
like any array and a checkpoint's snapshot holds it."""

import numpy as np

from tangent_ckpt.runtime.numpy_adjoints import is_zero

__all__ = ["empty_rows", "append_row", "append_row_adjoint_rows", "append_row_adjoint_item",
           "repeat_row", "repeat_row_adjoint"]


def empty_rows():
    """``[]``: no rows yet (the first ``append_row`` sets the row shape)."""
    return np.zeros((0,))


def append_row(rows, item):
    """``rows`` with ``item`` as one more row (``hs.append(h)``)."""
    item = np.asarray(item)
    if np.shape(rows) == (0,):
        return item[None].copy()
    return np.concatenate([rows, item[None]])


def append_row_adjoint_rows(g):
    return g if is_zero(g) else g[:-1]


def append_row_adjoint_item(g):
    return g if is_zero(g) else g[-1]


def repeat_row(item, times):
    """``[item] * times``: ``times`` rows equal to ``item``."""
    return np.repeat(np.asarray(item)[None], times, axis=0)


def repeat_row_adjoint(g, item):
    return g if is_zero(g) else np.sum(g, axis=0).reshape(np.shape(item))
