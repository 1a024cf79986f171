"""Adjoint helpers of statistics, building and reshaping, and the element-wise
functions whose adjoint is more than one expression.

Like every helper they accept the symbolic zero ``0.0`` for ``g`` and return it,
and never mutate their arguments.
"""

import numpy as np

from tangent_ckpt.runtime.backends import as_array, in_library_of, like_of
from tangent_ckpt.errors import TangentCkptError
from tangent_ckpt.runtime.primitive_adjoints.last_axis import along_last, from_last
from tangent_ckpt.runtime.primitive_adjoints.numpy_adjoints import (
    _axes, _keep, _weak_like, concatenate_adjoint, is_zero, reshape_like, unbroadcast,
    where_nonzero,
)

__all__ = [
    # element-wise
    "sinc_adjoint", "fmod_adjoint_divisor",
    # statistics
    "var_adjoint", "std_adjoint", "average_adjoint", "average_adjoint_weights",
    "cumprod_adjoint", "diff_adjoint", "gradient_adjoint", "nanmean_adjoint",
    "trapezoid_adjoint", "cov_adjoint", "polyval_adjoint_p", "polyder_adjoint", "quantile_weights",
    # building and reshaping
    "repeat_adjoint", "tile_adjoint", "pad_adjoint", "split_adjoint", "meshgrid_adjoint",
    "append_adjoint",
    "column_stack_adjoint", "rollaxis_adjoint", "sort_adjoint", "partition_adjoint",
    "select_adjoint_choice", "linspace_adjoint", "arange_adjoint_start", "arange_adjoint_step", "row_join",
    "column_join", "row_join_adjoint", "column_join_adjoint", "sum_all", "diagonal_index",
    "diagonal_values", "diagonal_values_adjoint",
]


# --- element-wise ------------------------------------------------------------------

def sinc_adjoint(g, x, ans):
    """Adjoint of ``np.sinc`` (``sin(pi x) / (pi x)``): ``(cos(pi x) - sinc(x)) / x``,
    0 at ``x = 0``."""
    if is_zero(g):
        return g
    x = as_array(x)
    safe = np.where(x == 0, 1, x)
    return g * np.where(x == 0, 0.0, (np.cos(np.pi * x) - ans) / safe)


def fmod_adjoint_divisor(g, x1, x2):
    """Adjoint of the divisor in ``np.fmod(x1, x2)``: ``-g * trunc(x1 / x2)``."""
    if is_zero(g):
        return g
    return unbroadcast(where_nonzero(g, -g * np.trunc(np.divide(x1, x2))), x2)   # x2 = 0: inf


def sum_all(g, x):
    """The adjoint of a scalar that was spread over ``g`` (``np.full(shape, x)``)."""
    if is_zero(g):
        return g
    return unbroadcast(g, x) if np.ndim(x) else np.sum(g)


# --- statistics --------------------------------------------------------------------

def _count(x, axis):
    shape = np.shape(x)
    n = 1
    for a in _axes(axis, len(shape)):
        n *= shape[a]
    return n


def var_adjoint(g, a, axis=None, ddof=0, keepdims=False):
    """Adjoint of ``np.var(a, axis, ddof)``: ``2 (a - mean) / (N - ddof) * g``."""
    if is_zero(g):
        return g
    a = as_array(a)
    g = _keep(_weak_like(g, a), a, axis, keepdims)
    centered = a - np.mean(a, axis=_axes(axis, a.ndim), keepdims=True)
    return g * centered * (2.0 / (_count(a, axis) - ddof))


def std_adjoint(g, a, ans, axis=None, ddof=0, keepdims=False):
    """Adjoint of ``np.std``: ``(a - mean) / ((N - ddof) std) * g``, 0 where std is 0."""
    if is_zero(g):
        return g
    a = as_array(a)
    ans = _keep(ans, a, axis, keepdims)
    g = _keep(_weak_like(g, a), a, axis, keepdims) / np.where(ans == 0, np.inf, 2 * ans)
    return var_adjoint(g, a, axis, ddof, True)


def _weights(a, weights, axis):
    """``weights`` shaped to broadcast against ``a`` (NumPy allows 1-D along ``axis``)."""
    w = as_array(weights)
    if w.shape == np.shape(a) or axis is None:
        return w
    shape = [1] * np.ndim(a)
    shape[_axes(axis, np.ndim(a))[0]] = w.size
    return np.reshape(w, shape)


def average_adjoint(g, a, axis=None, weights=None, keepdims=False):
    """Adjoint of ``a`` in ``np.average(a, axis, weights)``: ``g * w / sum(w)``."""
    if is_zero(g):
        return g
    a = as_array(a)
    g = _keep(_weak_like(g, a), a, axis, keepdims)
    if weights is None:
        return np.broadcast_to(g / _count(a, axis), a.shape)
    w = _weights(a, weights, axis)
    total = np.sum(np.broadcast_to(w, a.shape), axis=_axes(axis, a.ndim), keepdims=True)
    return g * w / total


def average_adjoint_weights(g, a, ans, axis=None, weights=None, keepdims=False):
    """Adjoint of ``weights`` in ``np.average``: ``g * (a - avg) / sum(w)``,
    summed to the weights' shape."""
    if is_zero(g):
        return g
    a = as_array(a)
    g = _keep(_weak_like(g, a), a, axis, keepdims)
    ans = _keep(ans, a, axis, keepdims)
    w = _weights(a, weights, axis)
    total = np.sum(np.broadcast_to(w, a.shape), axis=_axes(axis, a.ndim), keepdims=True)
    return np.reshape(unbroadcast(g * (a - ans) / total, w), np.shape(weights))


def nanmean_adjoint(g, a, axis=None, keepdims=False):
    """Adjoint of ``np.nanmean``: ``g`` over the count of non-NaN entries, 0 at NaNs."""
    if is_zero(g):
        return g
    a = as_array(a)
    g = _keep(_weak_like(g, a), a, axis, keepdims)
    valid = ~np.isnan(a)
    count = np.sum(valid, axis=_axes(axis, a.ndim), keepdims=True)
    return np.where(valid, g / np.maximum(count, 1), 0.0)


def trapezoid_adjoint(g, y, x=None, dx=1.0, axis=-1):
    """Adjoint of ``y`` in ``np.trapezoid(y, x, dx, axis)``: each sample's weight
    is half the width of the intervals beside it."""
    if is_zero(g):
        return g
    y = as_array(y)
    axis = axis % y.ndim
    n = y.shape[axis]
    if x is None:
        widths = np.zeros(max(n - 1, 0), like=like_of(y)) + float(dx)  # (not np.full: see fft)
    else:
        widths = np.diff(as_array(x, dtype=float), axis=-1 if np.ndim(x) == 1 else axis)
    if np.ndim(widths) > 1:
        widths = np.moveaxis(widths, axis, -1)
    weights = np.zeros(np.shape(widths)[:-1] + (n,), like=like_of(y, widths))
    weights[..., 1:] += 0.5 * widths
    weights[..., :-1] += 0.5 * widths
    return np.moveaxis(in_library_of(g, weights)[..., None] * weights, -1, axis)


def cov_adjoint(g, m, rowvar=True, bias=False):
    """Adjoint of ``np.cov(m, rowvar=rowvar, bias=bias)``: with ``Xc`` the
    variables (rows) centred over the observations, ``(G + G^T) Xc / (N - 1 + bias)``
    (centering needs no term: the rows of the result already sum to zero)."""
    if is_zero(g):
        return g
    m = as_array(m)
    flip = not rowvar and m.ndim == 2
    X = np.atleast_2d(m.T if flip else m)
    Xc = X - np.mean(X, axis=1, keepdims=True)
    G = np.reshape(in_library_of(g, X), (X.shape[0], X.shape[0]))
    bX = (G + G.T) @ Xc / (X.shape[1] - 1 + bias)
    return np.reshape(bX.T if flip else bX, m.shape)


def quantile_weights(a, q, axis=None):
    """The weight each entry of ``a`` has in ``np.quantile(a, q, axis)`` (method
    'linear', one ``q``): ``1 - f`` on the ``lo``-th smallest entry along the
    reduced axes and ``f`` on the next, where ``q (n - 1) = lo + f``; ties take
    the stable sort order.  An array of ``a``'s shape, piecewise constant in ``a``."""
    if np.ndim(q) != 0:
        raise TangentCkptError("the adjoint of np.quantile / np.percentile is written for one q "
                         f"(got q of shape {np.shape(q)}): call it once per q")
    a = as_array(a)
    last = along_last(a, axis)
    n = last.shape[-1]
    lo = min(int(np.floor(float(q) * (n - 1))), n - 1)
    hi = min(lo + 1, n - 1)
    f = float(q) * (n - 1) - lo
    order = np.argsort(last, axis=-1, kind="stable")
    weights = np.zeros(last.shape, like=like_of(last))
    np.put_along_axis(weights, order[..., hi:hi + 1], f, axis=-1)
    low = np.zeros(last.shape, like=like_of(last))
    np.put_along_axis(low, order[..., lo:lo + 1], 1.0 - f, axis=-1)
    return from_last(weights + low, a, axis)


def polyder_adjoint(g, p):
    """Adjoint of ``np.polyder(p)``: the derivative's coefficient ``k * p_k`` sends
    ``k * g`` back to ``p_k``; the constant term gets nothing."""
    if is_zero(g):
        return g
    n = len(p)
    if n == 1:
        return np.zeros(1, like=like_of(g))
    return np.append(as_array(g, dtype=float) * np.arange(n - 1, 0, -1, like=like_of(g)), 0.0)


def polyval_adjoint_p(g, p, x):
    """Adjoint of the coefficients in ``np.polyval(p, x)``: ``sum(g * x ** k)``
    for the coefficient of ``x ** k`` (highest power first)."""
    if is_zero(g):
        return g
    powers = np.arange(len(p) - 1, -1, -1)
    x = as_array(x, dtype=float)
    g = np.broadcast_to(g, np.broadcast_shapes(np.shape(g), x.shape))
    return np.array([np.sum(g * x ** k) for k in powers])


def cumprod_adjoint(g, a, ans, axis=None):
    """Adjoint of ``np.cumprod(a, axis)``: ``rev_cumsum(g * ans) / a``, and an
    exact sum of products along slices that hold a zero."""
    if is_zero(g):
        return g
    a = as_array(a)
    if axis is None:
        return np.reshape(cumprod_adjoint(np.ravel(g), np.ravel(a), np.ravel(ans), 0), a.shape)
    axis = axis % a.ndim
    if not np.any(a == 0):
        rev = np.flip(np.cumsum(np.flip(g * ans, axis), axis), axis)
        return rev / a
    # out[k] = sum_{j >= k} g[j] * prod_{i <= j, i != k} a[i]
    am = np.moveaxis(a, axis, -1)
    gm = np.moveaxis(as_array(g), axis, -1)
    n = am.shape[-1]
    out = np.zeros(am.shape, dtype=np.result_type(am, gm, float), like=like_of(am, gm))
    for k in range(n):
        others = am.copy()
        others[..., k] = 1
        partial = np.cumprod(others, axis=-1)
        out[..., k] = np.sum((gm * partial)[..., k:], axis=-1)
    return np.moveaxis(out, -1, axis)


def diff_adjoint(g, a, n=1, axis=-1, prepend=None, append=None):
    """Adjoint of ``a`` in ``np.diff(a, n, axis, prepend, append)``: each
    difference gives back ``-g`` to its left and ``g`` to its right element."""
    if is_zero(g):
        return g
    g = as_array(g)
    axis = axis % g.ndim
    for _ in range(n):
        pad = [(0, 0)] * g.ndim
        pad[axis] = (1, 0)
        right = np.pad(g, pad)
        pad[axis] = (0, 1)
        g = right - np.pad(g, pad)
    lead = 0 if prepend is None else np.shape(np.broadcast_to(prepend, _side(a, axis, prepend)))[axis]
    index = [slice(None)] * g.ndim
    index[axis] = slice(lead, lead + np.shape(a)[axis])
    return g[tuple(index)]


def _side(a, axis, value):
    """The shape NumPy gives a ``prepend``/``append`` value of ``np.diff``."""
    shape = list(np.shape(a))
    shape[axis] = np.shape(value)[axis] if np.ndim(value) else 1
    return tuple(shape)


def gradient_adjoint(g, f, varargs=(), axis=None, edge_order=1):
    """Adjoint of ``np.gradient(f, *varargs, axis=, edge_order=)``.  Along one
    axis (1-D ``f`` or one ``axis``): the transpose of the linear map NumPy
    applies along that axis (built by applying it to the identity).  Along
    several (``f`` of 2 or more dimensions without ``axis``, or a tuple of
    axes) the result is a tuple of one derivative per axis, and ``g`` one
    adjoint per axis (a symbolic zero for a derivative nobody read): the sum
    of each axis' transpose applied to its own.  ``varargs`` is NumPy's: no
    spacing, one for every axis, or one per axis."""
    if is_zero(g):
        return g
    f = as_array(f)
    if axis is None and f.ndim == 1 or axis is not None and not np.ndim(axis):
        return _gradient_adjoint_along(g, f, varargs, 0 if axis is None else axis, edge_order)
    axes = range(f.ndim) if axis is None else axis
    total = 0.0
    for k, (ax, part) in enumerate(zip(axes, g)):
        if is_zero(part):
            continue
        spacing = varargs if len(varargs) <= 1 else (varargs[k],)
        total = total + _gradient_adjoint_along(np.broadcast_to(part, f.shape), f, spacing,
                                                ax, edge_order)
    return total


def _gradient_adjoint_along(g, f, varargs, axis, edge_order):
    n = f.shape[axis]
    matrix = np.gradient(np.eye(n), *varargs, axis=0, edge_order=edge_order)
    gm = np.moveaxis(as_array(g), axis, -1)
    return np.moveaxis(gm @ in_library_of(matrix, gm), -1, axis)


# --- building and reshaping --------------------------------------------------------

def repeat_adjoint(g, a, repeats, axis=None):
    """Adjoint of ``np.repeat(a, repeats, axis)``: each element's copies summed."""
    if is_zero(g):
        return g
    a = as_array(a)
    if axis is None:
        flat = np.ravel(a)
        return np.reshape(repeat_adjoint(g, flat, repeats, 0), a.shape)
    axis = axis % a.ndim
    g = np.asarray(g)
    counts = np.broadcast_to(repeats, (a.shape[axis],))
    starts = (np.cumsum(counts) - counts).astype(np.intp)
    copied = counts > 0  # reduceat sums from one start to the next: empty groups left out
    if np.all(copied) and a.shape[axis]:
        return np.add.reduceat(g, starts, axis=axis)
    summed = np.zeros(a.shape, dtype=np.result_type(g, float))
    if np.any(copied):
        index = [slice(None)] * a.ndim
        index[axis] = copied
        summed[tuple(index)] = np.add.reduceat(g, starts[copied], axis=axis)
    return summed


def tile_adjoint(g, a, reps):
    """Adjoint of ``np.tile(a, reps)``: the tiles of ``g`` summed."""
    if is_zero(g):
        return g
    a = as_array(a)
    reps = tuple(np.atleast_1d(reps))
    nd = max(a.ndim, len(reps))
    shape = (1,) * (nd - a.ndim) + a.shape
    reps = (1,) * (nd - len(reps)) + reps
    tiles = np.reshape(g, [n for pair in zip(reps, shape) for n in pair])
    return np.reshape(np.sum(tiles, axis=tuple(range(0, 2 * nd, 2))), a.shape)


def pad_adjoint(g, array, pad_width, mode="constant", kwargs=None):
    """Adjoint of ``np.pad(array, pad_width, mode)``: every element of ``g`` goes
    back to the element it copies (``constant`` pads copy nothing).  Works for
    every mode that copies elements: constant, edge, reflect, symmetric, wrap."""
    if is_zero(g):
        return g
    array = as_array(array)
    kwargs = {k: v for k, v in (kwargs or {}).items() if k in ("reflect_type",)}
    if kwargs.get("reflect_type", "even") != "even":
        raise ValueError("adjoint of np.pad: reflect_type='odd' is not supported")
    if mode not in ("constant", "edge", "reflect", "symmetric", "wrap", "empty"):
        raise ValueError(f"adjoint of np.pad: mode {mode!r} is not supported")
    source = np.arange(array.size).reshape(array.shape)
    if mode in ("constant", "empty"):
        index = np.pad(source, pad_width, mode="constant", constant_values=-1)
    else:
        index = np.pad(source, pad_width, mode=mode)
    keep = index >= 0
    out = np.zeros(array.size, dtype=np.result_type(g, float), like=like_of(g, array))
    np.add.at(out, index[keep], as_array(g)[keep])
    return out.reshape(array.shape)


def split_adjoint(g, ary, indices_or_sections, axis=0):
    """Adjoint of ``np.split``/``array_split``/``hsplit``/``vsplit``/``dsplit``:
    the pieces' adjoints joined back (a zero piece for a piece nobody read)."""
    if is_zero(g):
        return g
    ary = as_array(ary)
    pieces = np.array_split(ary, indices_or_sections, axis=axis)
    parts = [np.zeros(p.shape, dtype=np.result_type(p, float), like=like_of(p)) if is_zero(part)
             else np.broadcast_to(part, p.shape) for p, part in zip(pieces, g)]
    return np.concatenate(parts, axis=axis)


def meshgrid_adjoint(g, xi, i, sparse=False, indexing="xy"):
    """Adjoint of input ``i`` of ``np.meshgrid(*xi, sparse=, indexing=)``: output
    ``i`` holds ``ravel(xi[i])`` along one axis (axis ``i``; with ``indexing='xy'``
    and two inputs or more, the first two swapped), repeated along the others, so
    its adjoint sums over the others (a zero part for an output nobody read)."""
    if is_zero(g):
        return g
    x = as_array(xi[i])
    part = g[i]
    if is_zero(part):
        return np.zeros(x.shape, dtype=np.result_type(x, float), like=like_of(x))
    n = len(xi)
    sizes = [np.size(v) for v in xi]
    axis = i
    if indexing == "xy" and n > 1:
        sizes[0], sizes[1] = sizes[1], sizes[0]
        axis = {0: 1, 1: 0}.get(i, i)
    shape = tuple(s if a == axis or not sparse else 1 for a, s in enumerate(sizes))
    part = np.broadcast_to(part, shape)
    others = tuple(a for a in range(n) if a != axis)
    return np.reshape(np.sum(part, axis=others), x.shape)


def append_adjoint(g, arr, values, axis, first):
    """Adjoint of ``arr`` (``first``) or ``values`` in ``np.append(arr, values, axis)``."""
    if is_zero(g):
        return g
    pieces = (arr, values)
    if axis is None:
        return concatenate_adjoint(g, [np.ravel(p) for p in pieces], 0, 0 if first else 1) \
            .reshape(np.shape(pieces[0 if first else 1]))
    return concatenate_adjoint(g, pieces, axis, 0 if first else 1)


def column_stack_adjoint(g, tup, i):
    """Adjoint of element ``i`` of ``np.column_stack(tup)``: its columns of ``g``."""
    if is_zero(g):
        return g
    columns = [np.reshape(t, (-1, 1)) if np.ndim(t) < 2 else t for t in tup]
    return reshape_like(concatenate_adjoint(g, columns, 1, i), tup[i])


def rollaxis_adjoint(g, a, axis, start=0):
    """Adjoint of ``np.rollaxis(a, axis, start)``: the axes moved back."""
    if is_zero(g):
        return g
    n = np.ndim(a)
    moved = np.rollaxis(np.empty(tuple(range(2, n + 2))), axis, start).shape
    permutation = [m - 2 for m in moved]    # result axis k is a's axis permutation[k]
    return np.transpose(g, np.argsort(permutation))


def _scatter_along(g, order, axis, shape):
    out = np.zeros(shape, dtype=np.result_type(g, float), like=like_of(g))
    np.put_along_axis(out, order, g, axis=axis)
    return out


def sort_adjoint(g, a, axis=-1, kind=None):
    """Adjoint of ``np.sort(a, axis)``: ``g`` sent back to where each element came from."""
    if is_zero(g):
        return g
    a = as_array(a)
    if axis is None:
        return np.reshape(sort_adjoint(g, np.ravel(a), 0, kind), a.shape)
    return _scatter_along(g, np.argsort(a, axis=axis, kind="stable"), axis, a.shape)


def partition_adjoint(g, a, kth, axis=-1, kind="introselect"):
    """Adjoint of ``np.partition(a, kth, axis)``, through ``np.argpartition``
    (same algorithm, so the same arrangement)."""
    if is_zero(g):
        return g
    a = as_array(a)
    if axis is None:
        return np.reshape(partition_adjoint(g, np.ravel(a), kth, 0, kind), a.shape)
    return _scatter_along(g, np.argpartition(a, kth, axis=axis, kind=kind), axis, a.shape)


def select_adjoint_choice(g, condlist, choicelist, i):
    """Adjoint of choice ``i`` (``i = len(choicelist)``: the default) in
    ``np.select``: ``g`` where that choice was the first whose condition holds."""
    if is_zero(g):
        return g
    taken = np.zeros(np.shape(g), dtype=bool, like=like_of(g))
    for k, cond in enumerate(condlist):
        mine = as_array(cond) & ~taken
        if k == i:
            return unbroadcast(np.where(mine, g, 0.0), choicelist[i])
        taken = taken | mine
    return np.where(taken, 0.0, g)


def linspace_adjoint(g, start, stop, num=50, endpoint=True, axis=0, at_stop=False):
    """Adjoint of ``start`` (or ``stop``, ``at_stop``) in ``np.linspace``: the
    samples are ``start + t (stop - start)`` with ``t = k / (num - 1)`` (``/ num``
    without the endpoint), so the weights are ``1 - t`` and ``t``."""
    if is_zero(g):
        return g
    div = (num - 1) if endpoint else num
    t = np.arange(num) / div if div > 0 else np.zeros(num)
    if endpoint and num == 1:
        t = np.zeros(1)
    gm = np.moveaxis(as_array(g), axis, 0)
    t = in_library_of(t, gm)
    weight = t if at_stop else 1 - t
    summed = np.tensordot(weight, gm, axes=(0, 0))
    target = stop if at_stop else start
    return unbroadcast(summed, target) if np.ndim(target) else float(np.sum(summed))


def arange_adjoint_start(g, start_or_stop, stop):
    """Adjoint of the first argument of ``np.arange``: every sample moves with the
    start (``sum(g)``); a lone argument is the stop, which only sets the length."""
    if is_zero(g) or stop is None:
        return 0.0
    return float(np.sum(g))


def arange_adjoint_step(g):
    """Adjoint of ``step`` in ``np.arange(start, stop, step)``: ``sum_k k g[k]``."""
    if is_zero(g):
        return g
    return float(np.sum(np.arange(len(g)) * g))


def row_join(*items):
    """``np.r_[items]`` for items that are arrays or numbers (no slices or
    directives): what ``np.r_`` means in a differentiated function."""
    return np.r_[items]


def column_join(*items):
    """``np.c_[items]`` for items that are arrays or numbers."""
    return np.c_[items]


def _join_pieces(items, column):
    if column:
        return [np.reshape(t, (-1, 1)) if np.ndim(t) < 2 else as_array(t) for t in items]
    return [np.atleast_1d(t) for t in items]


def row_join_adjoint(g, items, i):
    """Adjoint of item ``i`` of ``np.r_[items]`` (joined along axis 0)."""
    if is_zero(g):
        return g
    return reshape_like(concatenate_adjoint(g, _join_pieces(items, False), 0, i), items[i])


def column_join_adjoint(g, items, i):
    """Adjoint of item ``i`` of ``np.c_[items]`` (joined along the last axis)."""
    if is_zero(g):
        return g
    return reshape_like(concatenate_adjoint(g, _join_pieces(items, True), -1, i), items[i])


def diagonal_values(val, a):
    """The values ``np.fill_diagonal(a, val)`` writes on ``a``'s diagonal: ``val``
    itself when it is a number or one value per entry, else its values in order,
    repeated or cut to the diagonal's length (NumPy writes through ``a.flat``)."""
    n = min(np.shape(a))
    if np.ndim(val) == 0 or np.shape(val) == (n,):
        return val
    return np.resize(np.ravel(val), n)


def diagonal_values_adjoint(g, val, a):
    """The adjoint of :func:`diagonal_values`: each value of ``val`` receives the
    adjoints of the entries it was written on."""
    n = min(np.shape(a))
    if np.ndim(val) == 0 or np.shape(val) == (n,):
        return g
    out = np.zeros(np.size(val), dtype=np.result_type(g, 0.0))
    np.add.at(out, np.arange(n) % np.size(val), g)
    return np.reshape(out, np.shape(val))


def diagonal_index(a):
    """The index of ``np.fill_diagonal(a, v)`` without wrapping, as a subscript:
    ``a[diagonal_index(a)] = v`` writes ``a[i, i, ..., i]`` for
    ``i < min(a.shape)``.  Like NumPy, refuses an array of less than two
    dimensions, or of more with unequal lengths."""
    a = as_array(a)
    if a.ndim < 2 or (a.ndim > 2 and len(set(a.shape)) != 1):
        raise TangentCkptError(f"np.fill_diagonal: array of shape {a.shape} (it needs two "
                               "dimensions, or more of equal length)")
    return (np.arange(min(a.shape)),) * a.ndim
