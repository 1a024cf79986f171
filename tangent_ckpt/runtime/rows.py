"""Lists built at run time (``hs.append(h)`` in a loop, a comprehension over
``range(n)``), held as the array of their rows -- what ``np.stack(hs)`` would
give.  ``append_row`` is functional (the array it is given never changes), so a
loop carries the list like any array and a checkpoint's snapshot holds it.

n appends cost O(n) in all: the rows live at the front of a buffer with room to
grow (doubled when full), and ``append_row(rows, item)`` returns a longer view
of the same buffer.  The buffer remembers its longest view
(``_filled``); the next row is written in place only after it, or over a row that
already holds the same bits (a checkpointed step run again from a snapshot
appends what it appended the first time).  Any other append (to an older,
shorter version whose next row a longer version still shows) copies the rows
into a new buffer.  So no view ever sees one of its rows change: older versions
on a tape and snapshots kept by reference stay valid without copies.
"""

import threading
import weakref

import numpy as np

from tangent_ckpt.errors import TangentCkptError
from tangent_ckpt.runtime.backends import as_array, is_foreign_array
from tangent_ckpt.runtime.primitive_adjoints.numpy_adjoints import is_zero

__all__ = ["empty_rows", "append_row", "append_row_adjoint_rows", "append_row_adjoint_item",
           "repeat_row", "repeat_row_adjoint", "rows_holding", "rows_holding_adjoint"]

#: id(buffer) -> [weak reference to the buffer, rows the longest view of it shows,
#: weak reference to that view, the buffer's strides and address] (see ``_entry``)
_filled = {}
#: the same for the adjoint buffers append_row_adjoint_rows made
_private = {}
_lock = threading.Lock()
_FIRST_CAPACITY = 8


def empty_rows():
    """``[]``: no rows yet (the first ``append_row`` sets the row shape)."""
    return np.zeros((0,))


def append_row(rows, item):
    """``rows`` with ``item`` as one more row (``hs.append(h)``): a new value,
    ``rows`` itself unchanged; amortised O(size of item)."""
    item, rows = as_array(item), as_array(rows)
    if is_foreign_array(item) or is_foreign_array(rows):   # CuPy, Dask: no shared buffer
        return item[None] if rows.shape == (0,) else np.concatenate([rows, item[None]])
    if rows.shape == (0,):
        return _grown(item[None], item.dtype, 1)
    buffer = rows.base
    entry = _filled.get(id(buffer))
    if entry is not None and item.dtype == rows.dtype and item.shape == rows.shape[1:]:
        with _lock:
            if entry[0]() is buffer:
                k = len(rows)
                longest = entry[2]() is rows or (k == entry[1] and _is_front(rows, entry))
                if longest:  # no view shows the next row: it is free
                    if k < len(buffer):
                        buffer[k] = item
                        return _tip(entry, buffer[:k + 1])
                elif k < entry[1] and _is_front(rows, entry) and \
                        buffer[k].tobytes() == item.tobytes():
                    return buffer[:k + 1]  # the row a longer version already holds
    if rows.shape[1:] != item.shape:
        return np.concatenate([rows, item[None]])  # NumPy's error, as before
    return _grown(rows, np.result_type(rows.dtype, item.dtype), len(rows), item)


def _tip(entry, view):
    """``view`` is now the longest view of its buffer."""
    entry[1] = len(view)
    entry[2] = weakref.ref(view)
    return view


def _grown(rows, dtype, k, item=None):
    """A new buffer with room to grow holding the ``k`` rows of ``rows`` (and
    ``item`` after them): its front, the longest view of it."""
    count = k + (item is not None)
    buffer = np.empty((max(_FIRST_CAPACITY, 2 * count),) + rows.shape[1:], dtype=dtype)
    buffer[:k] = rows[:k]
    if item is not None:
        buffer[k] = item
    with _lock:
        entry = _entry(_filled, buffer)
        return _tip(entry, buffer[:count])


def _entry(registry, buffer):
    """A new entry of ``registry`` for ``buffer``: [weak reference to it, rows of
    its longest view, weak reference to that view, its strides, its address]."""
    key = id(buffer)

    def forget(ref):
        with _lock:
            if registry.get(key, (None,))[0] is ref:
                del registry[key]

    entry = [weakref.ref(buffer, forget), 0, None, buffer.strides,
             buffer.__array_interface__["data"][0]]
    registry[key] = entry
    return entry


def _is_front(rows, entry):
    """Is ``rows`` a view of the first rows of the entry's buffer (not ``hs[1:]``)?"""
    return rows.strides == entry[3] and rows.__array_interface__["data"][0] == entry[4]


def append_row_adjoint_rows(g):
    """The adjoint of the rows before an append: ``g`` without its last row, in
    an array that no other value refers to (the compiler adds the adjoints of
    reads such as ``hs[-1]`` into it in place, ``rt.accumulate_at``).

    ``g`` is copied once, into a buffer of this function's own; a front view of
    such a buffer (what the previous call returned, in a reverse sweep over the
    appends) is shortened without a copy, so n reversed appends cost O(n)."""
    if is_zero(g):
        return g
    g = as_array(g)
    if is_foreign_array(g):
        return g[:-1].copy()
    buffer = g.base
    with _lock:
        entry = _private.get(id(buffer))
        if entry is not None and entry[0]() is buffer and g.ndim == buffer.ndim and \
                (entry[2]() is g or _is_front(g, entry)):
            return _tip(entry, g[:-1])
        buffer = np.array(g, order="C")
        return _tip(_entry(_private, buffer), buffer[:-1])


def append_row_adjoint_item(g):
    return g if is_zero(g) else g[-1]


def repeat_row(item, times):
    """``[item] * times``: ``times`` rows equal to ``item``."""
    return np.repeat(as_array(item)[None], times, axis=0)


def repeat_row_adjoint(g, item):
    return g if is_zero(g) else np.sum(g, axis=0).reshape(np.shape(item))


def rows_holding(rows, item):
    """``rows`` in a dtype that holds ``item`` too, before ``hs[t] = item`` writes
    it as a row: a list stores the object itself (``[0] * n`` filled with floats
    holds floats; the int rows would truncate them), so the rows take the dtype
    NumPy gives both (``rows`` itself where it already holds it).  An item of
    another shape than the rows' (an array into a list of numbers, a number into
    a list of arrays) is refused: one array cannot hold it, and NumPy would
    broadcast a number over the row."""
    rows = as_array(rows)
    shape = np.shape(item)
    if shape != rows.shape[1:]:
        raise TangentCkptError(
            f"an item of shape {shape} written into a list whose items have shape "
            f"{rows.shape[1:]}: the gradient holds a list built at run time as one array of "
            f"its rows, which needs items of one shape (make the list with items of the "
            f"shape it will hold, np.zeros((n,) + shape) or [np.zeros(shape)] * n, or "
            f"append the items instead)")
    dtype = np.result_type(rows.dtype, np.asarray(item).dtype)
    return rows if dtype == rows.dtype else rows.astype(dtype)


def rows_holding_adjoint(g, rows):
    """The adjoint of the rows before :func:`rows_holding`: ``g``, real where the
    rows were real (a complex item made them complex)."""
    if is_zero(g) or np.iscomplexobj(rows) or not np.iscomplexobj(g):
        return g
    return np.real(g)
