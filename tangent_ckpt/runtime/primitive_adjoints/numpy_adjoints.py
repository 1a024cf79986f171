"""Helpers that inlined adjoint expressions call (``rt.unbroadcast`` ...).

Each is a small NumPy function with no knowledge of the compiler.  They accept
the "symbolic zero" ``0.0`` that generated code uses for an adjoint that has
received no contribution yet (a Python ``0.0`` stands for zeros of any shape).

Conventions the generated code relies on:

- A helper never mutates its arguments, except ``accumulate_at``, which adds
  into the buffer ``acc`` that it is given (and returns).
- A returned adjoint may be ``g`` itself, a view of ``g`` or a read-only
  broadcast view (``repeat_to_match``): treat adjoint contributions as
  immutable.  ``as_gradient`` turns whatever reaches the user into a fresh,
  writeable array.
- The dtype follows NumPy: float32 in, float32 out.  Python float constants are
  "weak" under NEP 50, so ``g * 2.0`` keeps float32.
"""

import sys

import numpy as np

from tangent_ckpt.errors import TangentCkptError
from tangent_ckpt.runtime.backends import as_array, copy_array, in_library_of, is_array, \
    is_foreign_array, refuse, to_host

__all__ = [
    # broadcasting and buffers
    "is_zero", "Parts", "unbroadcast", "ShapeOf", "shape_of", "broadcast_shape", "matmul_shape", "as_gradient", "output_adjoint", "zeros_like", "private_adjoint", "reshape_like",
    # arithmetic and elementwise
    "where_nonzero", "power_adjoint_base", "power_adjoint_exponent", "select_adjoint",
    "clip_adjoint", "clip_adjoint_bound", "cast_result", "through_cast", "in_place_result",
    # linear algebra
    "matmul_adjoint_x1", "matmul_adjoint_x2", "dot_adjoint_a", "dot_adjoint_b",
    "ProductSum", "accumulate_matmul_adjoint_x2", "settled", "transposed",
    "outer_adjoint_a", "outer_adjoint_b",
    # reductions
    "repeat_to_match", "mean_adjoint", "prod_adjoint", "extremum_adjoint",
    "cumsum_adjoint", "running_extremum_adjoint", "running_extremum_tangent",
    "others_product", "others_products", "reduceat_adjoint",
    # shape and joining
    "transpose_adjoint", "concatenate_adjoint", "stack_adjoint",
    "hstack_adjoint", "vstack_adjoint",
    # indexing and subscript assignment
    "is_basic_index", "getitem_adjoint", "accumulate_at",
    "setitem_adjoint_value", "setitem_adjoint_array", "overwritten", "stand_in", "returned",
    "truncates_stores", "stored_tangent",
]


# --- broadcasting and buffers -------------------------------------------------

def is_zero(g):
    """True for the symbolic zero: a plain Python ``0.0`` (or ``0``, or the ``0j``
    that the symbolic zero times a complex constant gives), not an array."""
    return type(g) in (float, int, complex) and g == 0


class Parts(tuple):
    """The adjoint of a tuple result (``w, v = np.linalg.eigh(a)``): one entry
    per element, the symbolic zero where none arrived.  Adding two adds them
    entry by entry (a plain tuple ``+`` would concatenate)."""

    __slots__ = ()

    def __add__(self, other):
        if is_zero(other):
            return self
        return Parts(a if is_zero(b) else b if is_zero(a) else a + b
                     for a, b in zip(self, other))

    __radd__ = __add__


class ShapeOf:
    """What a tape keeps of an array the reverse sweep needs only the shape of."""

    __slots__ = ("shape",)

    def __init__(self, shape):
        self.shape = shape

    def __repr__(self):
        return f"ShapeOf({self.shape})"


_SHAPED = (np.ndarray, ShapeOf)  # what unbroadcast reads a shape from directly


_SHAPES = {}  # shape -> its one ShapeOf: a tape of n steps holds n references, not n objects


def shape_of(x):
    """A tape entry for ``x`` when only its shape is read back (``unbroadcast``)."""
    if type(x) is float:   # a running sum: `cost = cost + ...`
        return _SCALAR_SHAPE
    shape = x.shape if type(x) is np.ndarray or isinstance(x, np.generic) else np.shape(x)
    kept = _SHAPES.get(shape)
    if kept is None:
        kept = ShapeOf(shape)
        if len(_SHAPES) < 1024:
            _SHAPES[shape] = kept
    return kept


_SCALAR_SHAPE = ShapeOf(())


def _shape(x):
    return x.shape if type(x) is ShapeOf or type(x) is np.ndarray else np.shape(x)


def broadcast_shape(*operands):
    """The shape of an elementwise operation on ``operands`` (arrays, numbers or
    :class:`ShapeOf`), without computing it: what an adjoint step keeps of a
    value its reverse sweep reads only for the shape."""
    shapes = [_shape(x) for x in operands]
    if all(shape == shapes[0] for shape in shapes):
        return ShapeOf(shapes[0])   # np.broadcast_shapes is Python code: microseconds
    return ShapeOf(np.broadcast_shapes(*shapes))


def matmul_shape(a, b):
    """The shape of ``a @ b`` from the shapes of ``a`` and ``b`` (see broadcast_shape)."""
    sa, sb = _shape(a), _shape(b)
    if len(sa) == 2 and len(sb) == 2 and sa[1] == sb[0]:
        return ShapeOf((sa[0], sb[1]))             # the common case, without broadcasting
    if not sa or not sb:
        raise ValueError("matmul: input operand does not have enough dimensions")
    inner_a = sa[-1]
    inner_b = sb[-2] if len(sb) > 1 else sb[0]
    if inner_a != inner_b:
        raise ValueError(f"matmul: mismatch in its core dimension ({sa} @ {sb})")
    rows = sa[-2:-1]   # () for a vector
    cols = sb[-1:] if len(sb) > 1 else ()
    batch = np.broadcast_shapes(sa[:-2], sb[:-2])
    return ShapeOf(tuple(batch) + tuple(rows) + tuple(cols))


def unbroadcast(g, x):
    """Sum ``g`` down to the shape of ``x``: the adjoint of broadcasting ``x``.

    ``x`` may be an array, a NumPy scalar, a Python number or a :class:`ShapeOf`.
    A scalar ``g`` (the symbolic zero) is returned unchanged, and so is a ``g``
    that already has ``x``'s shape (no copy).
    """
    # attribute access first: np.shape's Python wrapper costs a microsecond per
    # call, and this runs several times per step of every loop
    if type(g) is float:
        return g   # a Python number never widens a shape
    gshape = g.shape if type(g) is np.ndarray or isinstance(g, np.generic) else np.shape(g)
    if not gshape:  # a number's adjoint: x's shape only where x is an array of one element
        if type(x) not in _SHAPED or not x.shape or any(n != 1 for n in x.shape):
            return g
        return np.reshape(g, x.shape)
    shape = x.shape if type(x) is ShapeOf or type(x) is np.ndarray else np.shape(x)
    if gshape == shape:
        return g
    if 0 in shape:
        # x holds no element, so its adjoint holds none: the empty list a loop appends
        # to (rt.empty_rows, shape (0,)) meets the adjoint of its rows, shape (0, k)
        return np.zeros(shape, dtype=getattr(g, "dtype", np.float64))
    extra = len(gshape) - len(shape)
    if extra > 0:
        axis = 0 if extra == 1 else tuple(range(extra))
        # the method, not np.sum: its Python wrapper costs microseconds per step
        g = g.sum(axis=axis) if type(g) is np.ndarray else np.sum(g, axis=axis)
        gshape = gshape[extra:]
    elif extra < 0:
        if not all(n == 1 for n in shape[:-extra]):
            return g  # (no shape of g's broadcasts to x's: left as it is)
        # x has leading axes of length 1 that g lacks: x[t] = v with v of shape
        # (1, k) stored into a row of shape (k,) (NumPy drops them)
        g = np.reshape(g, (1,) * -extra + gshape)
        gshape = g.shape
    if 1 in shape:
        axes = tuple(i for i, (n, m) in enumerate(zip(shape, gshape)) if n == 1 and m != 1)
        if axes:
            g = np.sum(g, axis=axes, keepdims=True)
    return g


def as_gradient(g, x):
    """The adjoint ``g`` as a gradient for ``x``: same shape and a float dtype.

    Turns the symbolic zero into ``zeros_like(x)``, broadcasts scalars and
    copies read-only views, so the user always receives a fresh writeable array
    (a Python float for a Python-number ``x``).  A real ``x`` receives the real
    part of a complex ``g`` (see ``complex_adjoints``).
    """
    if np.iscomplexobj(g) and not np.iscomplexobj(x):
        g = np.real(g)
    if is_foreign_array(x) or (is_foreign_array(g) and isinstance(x, np.ndarray)):
        return _foreign_gradient(g, x)
    if np.ndim(x) == 0 and not isinstance(x, np.ndarray):
        return float(np.sum(g)) if np.ndim(g) else float(g)
    dtype = x.dtype if np.issubdtype(as_array(x).dtype, np.inexact) else np.float64
    g = np.asarray(g, dtype=dtype)
    if g.shape != np.shape(x):
        g = np.broadcast_to(unbroadcast(g, x), np.shape(x)).copy()
    elif not g.flags.writeable:
        g = g.copy()
    return g


def _foreign_gradient(g, x):
    """``as_gradient`` where ``x`` or ``g`` is an array of another library (CuPy,
    Dask): an array of that library (the computation's: a NumPy argument that
    met CuPy arrays gets a CuPy gradient), of ``x``'s shape and float dtype."""
    dtype = _buffer_dtype(x)
    g = in_library_of(g, x if is_foreign_array(x) else g, dtype)
    if g.shape != x.shape:
        return np.broadcast_to(unbroadcast(g, x), x.shape).copy()
    return g if g.dtype == dtype else g.astype(dtype)


def output_adjoint(g, ans):
    """The adjoint of a gradient's output ``ans`` as an array of its shape.  A
    scalar ``g`` given for an array output (the default 1.0) asks for the
    gradient of ``sum(g * ans)``: every element's adjoint is ``g``.  The rules
    take ``g`` of their output's shape (a scalar is the symbolic zero, or a
    Python number's adjoint), so it is spread here, once, before the reverse
    sweep.  A ``g`` of the output's shape is returned as given."""
    shape = ans.shape if type(ans) is np.ndarray else np.shape(ans)
    if type(g) is not float and np.shape(g) == shape or not shape:
        return g
    if np.ndim(g):  # another shape: the caller names both (OutputAdjointError)
        return g
    dtype = np.result_type(g, ans)
    # full_like: an array of the output's library (NumPy, CuPy, Dask)
    return np.full_like(ans, g, dtype=dtype if dtype.kind in "fc" else np.float64)


def zeros_like(x):
    """A fresh float adjoint buffer shaped like ``x`` (a pytree of arrays and floats)."""
    if isinstance(x, (tuple, list)):
        return type(x)(zeros_like(v) for v in x)
    if isinstance(x, dict):
        return {k: zeros_like(v) for k, v in x.items()}
    if is_foreign_array(x):   # a CuPy or Dask array: a buffer of its own library
        return np.zeros_like(x, dtype=_buffer_dtype(x))
    if isinstance(x, (np.ndarray, np.generic)):
        # a NumPy scalar (np.sum(a), a[0]) gets a 0-d buffer, not the symbolic zero:
        # that zero flowed back unchanged (e.g. through getitem_adjoint) and a
        # zero-trip loop returned 0.0 as the gradient of an array (tests/test_fuzz.py)
        return np.zeros(np.shape(x), dtype=_buffer_dtype(x))
    return 0.0


def _buffer_dtype(x):
    return x.dtype if np.issubdtype(x.dtype, np.inexact) else np.float64


def _refs_when_alone():
    """What ``sys.getrefcount(g)`` says inside a helper called with an array that
    only one local name of the caller holds (3 on CPython 3.11: the name, the
    parameter, getrefcount's argument; an interpreter that borrows references
    for calls says less).  Measured once, in the generated code's call pattern."""
    def helper(g, x):
        return sys.getrefcount(g)

    def caller():
        b = np.zeros(1)
        b = helper(b, None)
        return b
    return min(caller(), 3)


_REFS_WHEN_ALONE = _refs_when_alone()


def private_adjoint(g, x):
    """A private, writable copy of the adjoint ``g``, shaped like ``x``.

    Generated code calls this before a loop whose body accumulates into ``g`` in
    place (``bW += ...``), so that no other adjoint sharing ``g``'s array sees
    the updates.  A scalar ``x`` gives a Python float (immutable: ``+=`` rebinds).
    """
    if not is_array(x):
        return float(np.sum(g)) if np.ndim(g) else float(g)
    # nothing but the caller's one name holds g (see _refs_when_alone), it owns its
    # memory and has the buffer's shape and type: it is private already, and a copy
    # would hold a second array of x's size (a trajectory's adjoint)
    if type(g) is np.ndarray and sys.getrefcount(g) <= _REFS_WHEN_ALONE and \
            g.base is None and g.flags.writeable and g.shape == x.shape and \
            g.dtype == _buffer_dtype(x):
        return g
    out = zeros_like(x)
    out += unbroadcast(g, x)
    return out


def reshape_like(g, x, order="C"):
    """``g`` reshaped to ``x``'s shape: the adjoint of every reshape-like primitive
    (``reshape``, ``ravel``, ``expand_dims``, ``squeeze``, ``np.array(ndmin=)``).

    Returns ``g`` itself when the shapes already agree or ``g`` is the symbolic zero.
    """
    shape = np.shape(x)
    if is_zero(g) or np.shape(g) == shape:
        return g
    return np.reshape(g, shape, order="C" if order in ("K", None) else order)


def truncates(dtype):
    """True when a cast to ``dtype`` keeps only integers or truth values: the
    result is piecewise constant in its input, with derivative 0."""
    return np.dtype(dtype).kind in "biu"


def cast_result(x, dtype):
    """``x``, the result of a call given ``dtype=`` at run time: its value
    unchanged; the derivative passes through only where ``dtype`` keeps a
    continuum of values (see ``through_cast``)."""
    return x


def in_place_result(result, target):
    """What ``target op= value`` leaves in ``target``, given ``result``, the value
    of ``target op value``.  On a NumPy array the operator writes into the
    array's own memory, so the result keeps its shape and dtype: NumPy raises
    where the result broadcasts to another shape or casts only unsafely
    (``same_kind``: an int array ``+= 0.5``), and a float32 array stays float32.
    On anything else (numbers, NumPy scalars) it is ``result``, a new object."""
    if type(target) is not np.ndarray:
        return result
    if type(result) is np.ndarray and result.dtype is target.dtype and \
            result.shape == target.shape:
        return result  # the common case, first: 0.2 us
    shape = np.shape(result)
    if shape != target.shape:
        raise ValueError(f"non-broadcastable output operand with shape {target.shape} "
                         f"doesn't match the broadcast shape {shape} (an in-place operator "
                         "writes into its target's memory)")
    dtype = np.result_type(result)
    if dtype == target.dtype and type(result) is np.ndarray:
        return result
    if not np.can_cast(dtype, target.dtype, casting="same_kind"):
        raise TypeError(f"Cannot cast an in-place operator's output from {dtype!r} to "
                        f"{target.dtype!r} with casting rule 'same_kind'")
    return np.asarray(result, dtype=target.dtype)


def through_cast(g, dtype):
    """The adjoint (or tangent) ``g`` of a result cast to ``dtype``: ``g``
    itself for a complex dtype, its real part for a real floating one (the cast
    keeps the real part of a complex value), zero for an integer or bool one
    (a truncation is piecewise constant)."""
    if dtype is None:
        return g
    if not truncates(dtype):
        return g.real if np.iscomplexobj(g) and np.dtype(dtype).kind == "f" else g
    if type(g) in (float, int, complex):
        return 0.0
    return np.zeros(np.shape(g), dtype=np.result_type(g, 0.0))


def _weak_like(g, x):
    """A Python-number ``g`` as a 0-d array of ``x``'s float dtype (so a seed
    ``1.0`` does not turn a float32 adjoint into float64)."""
    if isinstance(g, (int, float)) and isinstance(x, np.ndarray) and x.dtype.kind == "f":
        return np.asarray(g, dtype=x.dtype)
    if isinstance(g, (int, float)) and is_foreign_array(x) and x.dtype.kind == "f":
        return x.dtype.type(g)   # a NumPy scalar: every array library takes one
    return g


def _axes(axis, ndim):
    """``axis`` (None, int or tuple) as a sorted tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    if np.ndim(axis) == 0:
        axis = (axis,)
    return tuple(sorted(int(a) % ndim for a in axis)) if ndim else ()


def _keep(g, x, axis, keepdims):
    """``g`` of a reduction of ``x`` over ``axis``, with the reduced axes restored as 1s."""
    if keepdims or is_zero(g):
        return g
    axes = _axes(axis, np.ndim(x))
    if not axes:
        return g
    if is_foreign_array(x) and not is_foreign_array(g):
        g = in_library_of(g, x)  # (a seed 1.0 expanded by NumPy is a NumPy array)
    return np.expand_dims(g, axes)


# --- arithmetic and elementwise ------------------------------------------------

def where_nonzero(g, product):
    """``product``, a derivative times ``g`` (``g * 0.5 / ans``), with 0 where ``g``
    is 0: an adjoint (or tangent) that is structurally zero stays zero through a
    derivative that is infinite or NaN there, as ``sqrt`` at 0 under a mask
    (``0 * inf`` would be NaN, where finite differences give 0).

    Where ``g`` is 0 and the derivative finite, ``product`` is already 0; so
    ``product`` is returned unchanged unless it holds a NaN (one sum, no
    temporary): the cost of the guard off singular points.  Where ``g`` is not
    0 an infinite or NaN derivative is kept: a real singularity stays one."""
    if is_zero(g):
        return g
    if isinstance(product, np.ndarray):
        if not np.isnan(np.add.reduce(product, None)):
            return product
    elif isinstance(product, (float, complex, np.generic)):
        if product == product:
            return product
    return np.where(g == 0, 0.0, product)


def power_adjoint_base(g, x1, x2):
    """Adjoint of the base in ``x1 ** x2``: ``g * x2 * x1 ** (x2 - 1)``.

    Exact for negative and zero bases with an integer-valued exponent (``x**2``
    at ``x = -3`` or ``0``), and never ``0 * inf = nan`` where ``x2 == 0``
    (the derivative of ``x ** 0`` is 0).  Cheap paths for constant exponents 1 and 2.
    """
    if is_zero(g):
        return g
    if type(x2) is int or type(x2) is float or \
            (np.ndim(x2) == 0 and not is_array(x2)):
        if x2 == 0:
            return 0 * g
        if x2 == 1:
            return g
        if x2 == 2:
            twice = 2 * x1  # then times g in place: one array of x's size, not two
            if isinstance(twice, np.ndarray) and np.shape(g) == twice.shape and \
                    np.result_type(g, twice) == twice.dtype:
                return np.multiply(twice, g, out=twice)
            return g * twice
        return where_nonzero(g, g * x2 * x1 ** (x2 - 1))   # x1 = 0, x2 < 1: inf
    return where_nonzero(g, g * x2 * x1 ** np.where(x2 != 0, x2 - 1, 1))


def power_adjoint_exponent(g, ans, x1):
    """Adjoint of the exponent in ``x1 ** x2``: ``g * ans * log(x1)``, taking the
    log only where ``x1 > 0`` (0 elsewhere: at ``x1 = 0`` the one-sided derivative
    is 0, and a negative base has no real derivative in the exponent)."""
    if is_zero(g):
        return g
    return where_nonzero(g, g * ans * np.log(np.where(x1 > 0, x1, 1)))   # ans = 0 ** -1: inf


def select_adjoint(g, x, ans, other):
    """Adjoint of ``x`` in ``maximum(x, other)`` / ``minimum(x, other)``.

    ``g`` flows to the argument that was selected (``x == ans``); on a tie
    (``x == other``) it is split evenly, half to each argument (as autograd does).
    """
    if is_zero(g):
        return g
    won = x == ans
    tie = won & (x == other)
    # np.where, not g * won: an infinite g (sqrt of the 0 a max selected) is 0 for
    # the argument not selected, where the function is constant in it
    if np.any(tie):
        return np.where(tie, 0.5 * g, np.where(won, g, 0.0))
    return np.where(won, g, 0.0)


def _clip_bounds(a_min, a_max, min, max):
    lo = a_min if a_min is not None else min
    hi = a_max if a_max is not None else max
    return lo, hi


def clip_adjoint(g, a, a_min=None, a_max=None, min=None, max=None):
    """Adjoint of ``a`` in ``np.clip(a, a_min, a_max)`` (or ``min=``/``max=``).

    ``g`` passes where ``lo <= a <= hi`` (inclusive: at the bounds themselves
    the gradient goes to ``a``) and is 0 where a bound is active.  Assumes
    ``lo <= hi`` as NumPy's documentation does.
    """
    if is_zero(g):
        return g
    lo, hi = _clip_bounds(a_min, a_max, min, max)
    inside = True
    if lo is not None:
        inside = a >= lo
    if hi is not None:
        inside = inside & (a <= hi)
    return unbroadcast(np.where(inside, g, 0.0), a)  # (an infinite g too, as select_adjoint)


def clip_adjoint_bound(g, a, bound, upper):
    """Adjoint of a bound of ``np.clip``: ``g`` where the bound is active
    (``a < bound`` for the lower, ``a > bound`` for the upper one)."""
    if is_zero(g) or bound is None:
        return 0.0
    active = (a > bound) if upper else (a < bound)
    return unbroadcast(np.where(active, g, 0.0), bound)


# --- linear algebra ------------------------------------------------------------

def transposed(x):
    """``x.T`` as a row-ordered copy for a 2-D array (None otherwise): made once
    before a loop whose steps all multiply by ``x.T`` (see matmul_adjoint_x1)."""
    if type(x) is np.ndarray and x.ndim == 2:
        return np.ascontiguousarray(x.T)
    return None


def matmul_adjoint_x1(g, x1, x2, x2_t=None):
    """Adjoint of ``x1`` in ``x1 @ x2``: ``g @ x2.T``, with NumPy's 1-D promotion
    and broadcasting of batch dimensions (summed back with ``unbroadcast``).
    ``x2_t``: ``transposed(x2)`` when the caller has it (faster than the view)."""
    if is_zero(g):
        return g
    if type(x1) is np.ndarray and type(x2) is np.ndarray and x1.ndim == 2:
        if x2.ndim == 2:
            return g @ (x2.T if x2_t is None else x2_t)  # the common case, no promotion
        if x2.ndim == 1:
            return g[:, None] * x2                   # matrix times vector: an outer product
    x2 = as_array(x2)
    if x2.ndim == 1:
        if np.ndim(x1) == 1:
            return g * x2                            # inner product: g is a scalar
        return unbroadcast(np.expand_dims(g, -1) * x2, x1)   # (..., n, 1) * (k,)
    if np.ndim(x1) == 1:                             # g: (..., m) -> (..., k)
        return unbroadcast((x2 @ np.expand_dims(g, -1))[..., 0], x1)
    return unbroadcast(g @ np.swapaxes(x2, -1, -2), x1)


def matmul_adjoint_x2(g, x1, x2):
    """Adjoint of ``x2`` in ``x1 @ x2``: ``x1.T @ g``, as ``matmul_adjoint_x1``."""
    if is_zero(g):
        return g
    if type(x1) is np.ndarray and type(x2) is np.ndarray and x1.ndim == 2:
        if x2.ndim == 2:
            return x1.T @ g
        if x2.ndim == 1:
            return g @ x1                            # matrix times vector
    x1 = as_array(x1)
    if x1.ndim == 1:
        if np.ndim(x2) == 1:
            return g * x1
        return unbroadcast(x1[:, None] * np.expand_dims(g, -2), x2)   # (k, 1) * (..., 1, m)
    if np.ndim(x2) == 1:                             # g: (..., n) -> (..., k)
        return unbroadcast((np.expand_dims(g, -2) @ x1)[..., 0, :], x2)
    return unbroadcast(np.swapaxes(x1, -1, -2) @ g, x2)


class ProductSum:
    """The adjoint of a matrix ``W`` that a loop reads as ``a @ W``, summed over
    the steps: ``dense + sum_k a_k.T @ g_k``.

    Each step's ``a_k.T @ g_k`` with few rows (an RNN's batch of 32) reads and
    writes all of ``W``'s adjoint for little arithmetic.  Here the rows of
    ``a_k`` and ``g_k`` are gathered in two buffers and multiplied in one
    product of about ``ROWS`` rows when the buffers are full: the same sum, in
    about 15 % less time and with a quarter of the traffic through the
    accumulator.  The buffers hold at most as many bytes as the accumulator.

    ``settled(acc)`` returns the plain array; the driver of a checkpointed loop
    settles its adjoints before returning them.
    """

    ROWS = 128
    __slots__ = ("dense", "_a", "_g", "_fill")

    def __init__(self, dense, a, g, rows):
        self.dense = dense
        dtype = np.result_type(a, g)
        self._a = np.empty((rows, a.shape[1]), dtype)
        self._g = np.empty((rows, g.shape[1]), dtype)
        self._fill = 0

    @classmethod
    def around(cls, dense, a, g):
        """A ProductSum over ``dense`` when gathering rows pays, else None."""
        k, n = dense.shape
        rows = min(cls.ROWS, k * n // (k + n))  # buffers: rows * (k + n) <= k * n
        if a.shape[0] * 2 > rows or dense.dtype != np.result_type(dense, a, g):
            return None
        return cls(dense, a, g, rows - rows % a.shape[0])

    def add(self, a, g):
        """``self += a.T @ g`` (a: (m, k), g: (m, n))."""
        m, fill = a.shape[0], self._fill
        if fill + m > self._a.shape[0]:
            self._flush()
            fill = 0
            if m > self._a.shape[0]:
                self.dense += a.T @ g
                return
        self._a[fill:fill + m] = a
        self._g[fill:fill + m] = g
        self._fill = fill + m

    def _flush(self):
        fill, self._fill = self._fill, 0
        if not fill:
            return
        a, g = self._a[:fill].T, self._g[:fill]
        step = max(1, self.ROWS)  # in row blocks: a temporary of ROWS rows, not all of W
        for i in range(0, a.shape[0], step):
            self.dense[i:i + step] += a[i:i + step] @ g

    def __iadd__(self, other):
        self.dense += other
        return self

    def settle(self):
        self._flush()
        return self.dense


def accumulate_matmul_adjoint_x2(acc, g, x1, x2):
    """``acc += matmul_adjoint_x2(g, x1, x2)`` for the private adjoint ``acc`` of
    a loop invariant ``x2``; 2-D products are gathered in a :class:`ProductSum`
    (which this returns in place of ``acc``; see ``settled``)."""
    if is_zero(g):
        return acc
    if type(g) is np.ndarray and type(x1) is np.ndarray and type(x2) is np.ndarray and \
            g.ndim == x1.ndim == x2.ndim == 2:
        if type(acc) is ProductSum:
            acc.add(x1, g)
            return acc
        if type(acc) is np.ndarray and acc.shape == x2.shape and acc.flags.writeable:
            batched = ProductSum.around(acc, x1, g)
            if batched is not None:
                batched.add(x1, g)
                return batched
    acc += matmul_adjoint_x2(g, x1, x2)
    return acc


def settled(tree):
    """``tree`` with every :class:`ProductSum` replaced by its plain array."""
    if type(tree) is ProductSum:
        return tree.settle()
    if type(tree) in (tuple, list):
        return type(tree)(settled(v) for v in tree)
    return tree


def dot_adjoint_a(g, a, b):
    """Adjoint of ``a`` in ``np.dot(a, b)`` for every case NumPy defines:
    scalars (a product), 1-D and 2-D (as matmul) and N-D ``dot(a, b)[I, J, m] =
    sum_k a[I, k] * b[J, k, m]``."""
    if is_zero(g):
        return g
    na, nb = np.ndim(a), np.ndim(b)
    if na == 0 or nb == 0:
        return unbroadcast(g * b, a)
    if nb == 1:
        return np.expand_dims(g, -1) * b if na > 1 else g * b
    if na == 2 and nb == 2:
        return g @ np.swapaxes(b, -1, -2)
    return np.tensordot(g, np.swapaxes(b, -1, -2), nb - 1)


def dot_adjoint_b(g, a, b):
    """Adjoint of ``b`` in ``np.dot(a, b)`` (see ``dot_adjoint_a``)."""
    if is_zero(g):
        return g
    na, nb = np.ndim(a), np.ndim(b)
    if na == 0 or nb == 0:
        return unbroadcast(g * a, b)
    if nb == 1:
        return g * a if na == 1 else np.tensordot(g, a, na - 1)
    if na == 2 and nb == 2:
        return np.swapaxes(a, -1, -2) @ g
    lead = list(range(na - 1))
    return np.moveaxis(np.tensordot(a, g, axes=(lead, lead)), 0, -2)


def outer_adjoint_a(g, a, b):
    """Adjoint of ``a`` in ``np.outer(a, b)`` (inputs are flattened, as NumPy does)."""
    if is_zero(g):
        return g
    return np.reshape(g @ np.ravel(b), np.shape(a))


def outer_adjoint_b(g, a, b):
    """Adjoint of ``b`` in ``np.outer(a, b)``."""
    if is_zero(g):
        return g
    return np.reshape(np.ravel(a) @ g, np.shape(b))


# --- reductions ----------------------------------------------------------------

_SMALL = 256  # arrays up to this many elements are cheaper to fill than to view


def repeat_to_match(g, x, axis=None, keepdims=False):
    """Adjoint of a sum-like reduction of ``x`` over ``axis``: spread ``g`` back.

    Returns a read-only broadcast view (no copy), or for a full reduction of a
    small array a new filled one.  ``axis`` may be a tuple.
    """
    if axis is None and type(x) is np.ndarray and (keepdims or type(g) is float or
                                                   getattr(g, "ndim", None) == 0):
        if x.size <= _SMALL:   # cheaper than a broadcast view for a few elements
            # np.full(x.shape, _weak_like(g, x)), without np.full's Python wrapper
            if isinstance(g, (int, float)) and x.dtype.kind == "f":
                dtype = x.dtype
            else:
                dtype = g.dtype if isinstance(g, (np.ndarray, np.generic)) else np.result_type(g)
            filled = np.empty(x.shape, dtype)
            if getattr(g, "ndim", 0) == 0:
                filled.fill(g)
            else:
                filled[...] = g   # keepdims: g of shape (1, 1, ...)
            return filled
        g = _weak_like(g, x)   # np.sum(x): no axes to restore
        return np.broadcast_to(g, x.shape)
    g = _keep(_weak_like(g, x), x, axis, keepdims)
    if is_foreign_array(x):   # broadcast in x's library, not as a NumPy view
        g = in_library_of(g, x)
    return np.broadcast_to(g, np.shape(x))


def mean_adjoint(g, x, axis=None, keepdims=False):
    """Adjoint of ``np.mean(x, axis)``: ``g`` divided by the count, spread back."""
    shape = np.shape(x)
    count = 1
    for a in _axes(axis, len(shape)):
        count *= shape[a]
    return repeat_to_match(g / count, x, axis, keepdims)


def prod_adjoint(g, x, ans, axis=None, keepdims=False):
    """Adjoint of ``np.prod(x, axis)``: ``g * ans / x``, correct with zeros.

    For a reduced slice with exactly one zero, the zero's entry receives ``g``
    times the product of the others and the rest 0; with two or more zeros all
    entries are 0.
    """
    if is_zero(g):
        return g
    x = as_array(x)
    g = _keep(_weak_like(g, x), x, axis, keepdims)
    zero = x == 0
    if not zero.any():
        return g * (_keep(ans, x, axis, keepdims) / x)
    axes = _axes(axis, x.ndim)
    nonzero = np.where(zero, 1, x)
    others = np.prod(nonzero, axis=axes, keepdims=True)     # product of the non-zeros
    nzeros = np.sum(zero, axis=axes, keepdims=True)
    return np.where(nzeros == 0, g * others / nonzero,
                    np.where(zero & (nzeros == 1), g * others, 0 * g))


def extremum_adjoint(g, x, ans, axis=None, keepdims=False):
    """Adjoint of ``np.max`` / ``np.min``: ``g`` goes to the entries equal to the
    result; ties share it equally (as autograd does)."""
    if is_zero(g):
        return g
    x = as_array(x)
    g = _keep(_weak_like(g, x), x, axis, keepdims)
    hit = x == _keep(ans, x, axis, keepdims)
    dtype = np.result_type(g, x) if np.result_type(g, x).kind == "f" else np.float64
    count = np.sum(hit, axis=_axes(axis, x.ndim), keepdims=True, dtype=dtype)
    return hit * (g / count)


def cumsum_adjoint(g, x, axis=None):
    """Adjoint of ``np.cumsum(x, axis)``: the reversed cumulative sum of ``g``
    (over the flattened array when ``axis`` is None)."""
    if is_zero(g):
        return g
    if axis is None:
        return np.reshape(np.cumsum(g[::-1])[::-1], np.shape(x))
    return np.flip(np.cumsum(np.flip(g, axis), axis), axis)


def _running_choices(a, ans, axis):
    """For ``ans = np.maximum.accumulate(a, axis)`` (or ``minimum``), moved to axis
    0: where step ``i`` took ``a[i]`` and where it kept ``ans[i - 1]``, a tie taking
    half of each (as :func:`select_adjoint` splits ``np.maximum``'s)."""
    a, ans = np.moveaxis(as_array(a), axis, 0), np.moveaxis(as_array(ans), axis, 0)
    took = a[1:] == ans[1:]
    kept = ans[:-1] == ans[1:]
    tie = took & kept
    return np.where(tie, 0.5, np.where(took, 1.0, 0.0)), \
        np.where(tie, 0.5, np.where(took, 0.0, 1.0))


def running_extremum_adjoint(g, a, ans, axis=0):
    """Adjoint of ``np.maximum.accumulate(a, axis)`` / ``np.minimum.accumulate``:
    ``ans[0] = a[0]``, ``ans[i] = maximum(ans[i - 1], a[i])``, so what reaches
    ``ans[i]`` goes to ``a[i]`` where the step took it and on to ``ans[i - 1]``
    where it kept that (half to each on a tie), from the last step back."""
    if is_zero(g):
        return g
    took, kept = _running_choices(a, ans, axis)
    g = np.moveaxis(np.asarray(g), axis, 0)
    out = np.empty(np.shape(g), dtype=np.result_type(g, 0.0))
    carried = g[-1]
    for i in range(len(g) - 1, 0, -1):
        # np.where, not products: an infinite g is 0 where the step did not take it
        out[i] = np.where(took[i - 1] == 0.0, 0.0, took[i - 1] * carried)
        carried = g[i - 1] + np.where(kept[i - 1] == 0.0, 0.0, kept[i - 1] * carried)
    out[0] = carried
    return np.moveaxis(out, 0, axis)


def running_extremum_tangent(t, a, ans, axis=0):
    """Tangent of ``np.maximum.accumulate(a, axis)`` / ``np.minimum.accumulate``:
    each step's tangent is ``a[i]``'s where it took ``a[i]``, the previous
    step's where it kept that (their mean on a tie)."""
    took, kept = _running_choices(a, ans, axis)
    t = np.moveaxis(np.asarray(t), axis, 0)
    out = np.empty(np.shape(t), dtype=np.result_type(t, 0.0))
    out[0] = t[0]
    for i in range(1, len(t)):
        out[i] = took[i - 1] * t[i] + kept[i - 1] * out[i - 1]
    return np.moveaxis(out, 0, axis)


def reduceat_adjoint(g, a, indices, axis=0):
    """Adjoint of ``np.add.reduceat(a, indices, axis)``: output ``j`` sums ``a``
    from ``indices[j]`` up to ``indices[j + 1]`` (the end for the last), or is
    ``a[indices[j]]`` alone where the next index is not larger; each item of a
    segment gets that output's ``g``."""
    if is_zero(g):
        return g
    a = as_array(a)
    g = np.moveaxis(np.asarray(g), axis, 0)
    out = np.zeros((a.shape[axis],) + g.shape[1:], dtype=np.result_type(g, a, 0.0))
    indices = np.asarray(indices).ravel()
    for j, start in enumerate(indices):
        stop = indices[j + 1] if j + 1 < len(indices) else a.shape[axis]
        if stop > start:
            out[start:stop] += g[j]
        else:
            out[start] += g[j]
    return np.moveaxis(out, 0, axis)


def others_product(g, items, i):
    """Adjoint of item ``i`` of ``math.prod(items)``: ``g`` times every other
    item (no division: exact where an item is 0), summed to the item's shape."""
    if is_zero(g):
        return g
    out = g
    for j, item in enumerate(items):
        if j != i:
            out = out * item
    return unbroadcast(out, items[i])


def others_products(g, rows):
    """Adjoint of ``math.prod(rows)`` of an array: each row's :func:`others_product`."""
    if is_zero(g):
        return g
    rows = as_array(rows)
    return np.stack([others_product(g, rows, k) for k in range(len(rows))]) if len(rows) \
        else np.zeros_like(rows, dtype=np.result_type(rows, 0.0))


# --- shape and joining -----------------------------------------------------------

def transpose_adjoint(g, axes=None):
    """Adjoint of ``np.transpose(x, axes)``: transpose back with the inverse permutation."""
    if axes is None or is_zero(g):
        return np.transpose(g)
    n = np.ndim(g)
    return np.transpose(g, np.argsort([a % n for a in axes]))


def _split(g, shapes, axis, i):
    """The slice of ``g`` along ``axis`` that came from the ``i``-th joined piece."""
    start = sum(s[axis] for s in shapes[:i])
    index = [slice(None)] * np.ndim(g)
    index[axis] = slice(start, start + shapes[i][axis])
    return g[tuple(index)]


def concatenate_adjoint(g, arrays, axis, i):
    """Adjoint of element ``i`` of ``np.concatenate(arrays, axis)``: its slice of
    ``g`` (a view).  ``axis=None`` joins the flattened arrays."""
    if is_zero(g):
        return g
    if axis is None:
        sizes = [(int(np.size(a)),) for a in arrays]
        return np.reshape(_split(g, sizes, 0, i), np.shape(arrays[i]))
    shapes = [np.shape(a) for a in arrays]
    return _split(g, shapes, axis % np.ndim(g), i)


def stack_adjoint(g, axis, i):
    """Adjoint of element ``i`` of ``np.stack(arrays, axis)``: ``g``'s ``i``-th
    slice along the new axis (a view)."""
    if is_zero(g):
        return g
    return np.moveaxis(g, axis, 0)[i]


def hstack_adjoint(g, tup, i):
    """Adjoint of element ``i`` of ``np.hstack(tup)``: concatenation along axis 1
    (axis 0 for 1-D pieces) of the ``atleast_1d`` pieces."""
    if is_zero(g):
        return g
    shapes = [np.shape(np.atleast_1d(t)) for t in tup]
    axis = 0 if len(shapes[0]) == 1 else 1
    return reshape_like(_split(g, shapes, axis, i), tup[i])


def vstack_adjoint(g, tup, i):
    """Adjoint of element ``i`` of ``np.vstack(tup)``: concatenation along axis 0
    of the ``atleast_2d`` pieces (a 1-D piece is one row)."""
    if is_zero(g):
        return g
    shapes = [np.shape(np.atleast_2d(t)) for t in tup]
    return reshape_like(_split(g, shapes, 0, i), tup[i])


# --- indexing and subscript assignment -------------------------------------------

_BASIC = (int, np.integer, slice, type(Ellipsis), type(None))


def is_basic_index(index):
    """True when ``x[index]`` is basic indexing (ints, slices, ``...``, ``None``):
    a view with no repeated element, so ``out[index] += g`` accumulates exactly."""
    if isinstance(index, tuple):
        return all(isinstance(k, _BASIC) and not isinstance(k, bool) for k in index)
    return isinstance(index, _BASIC) and not isinstance(index, bool)


def _is_mask(index):
    """A boolean-array index: advanced, but it selects each element at most once."""
    return is_array(index) and index.dtype == bool


def getitem_adjoint(g, x, index):
    """Adjoint of ``x[index]``: ``g`` scattered into zeros shaped like ``x``.

    Repeated integer indices accumulate (``np.add.at``).  ``x`` may also be a
    tuple or list indexed by an int (the other elements get the symbolic zero).
    """
    if is_zero(g):
        return g
    if isinstance(x, dict):  # lowered as rt.dict_get, with its own adjoint, when followed
        raise TangentCkptError(f"a dict read at key {index!r} where the gradient expected an "
                               "array (the compiler did not follow how the dict was built)")
    if isinstance(x, (tuple, list)) and isinstance(index, (int, np.integer)):
        n = len(x)
        return Parts(g if j == index % n else 0.0 for j in range(n))
    return accumulate_at(0.0, x, index, g)


def accumulate_at(acc, x, index, g):
    """Add ``g`` into ``acc[index]`` in place and return ``acc``: the adjoint of
    reading ``x[index]``, accumulated into ``x``'s adjoint buffer ``acc``.

    O(size of ``g``) per call, so reads such as ``price[t]`` inside a long loop
    cost O(1) per step.  When ``acc`` is the symbolic zero a fresh buffer
    ``zeros_like(x)`` is allocated; a read-only ``acc`` (a broadcast view) is
    copied first.  Otherwise ``acc`` itself is mutated: the caller must own it
    (not share it with another adjoint variable).  ``g`` equal to the symbolic
    zero leaves ``acc`` unchanged.  Basic and boolean-mask indices use
    ``acc[index] += g``; integer-array indices use ``np.add.at`` so repeated
    indices accumulate.
    """
    if type(acc) is np.ndarray and type(index) is slice and acc.flags.writeable:
        acc[index] += g   # the common case first: one slice of an array buffer
        return acc
    if is_zero(g):
        return acc
    if type(acc) is ProductSum:
        acc.dense = accumulate_at(acc.dense, x, index, g)
        return acc
    if type(acc) is list:   # a loop over a list of arrays (zip(np.array_split(X, k), ...))
        acc[index] = g if is_zero(acc[index]) else acc[index] + g
        return acc
    if is_zero(acc):
        acc = zeros_like(as_array(x))
    elif not getattr(getattr(acc, "flags", None), "writeable", True):
        acc = acc.copy()
    if is_basic_index(index) or _is_mask(index):
        acc[index] += g
    elif is_foreign_array(acc) and not hasattr(type(acc), "scatter_add"):
        try:
            np.add.at(acc, index, g)
        except (TypeError, NotImplementedError) as exc:
            refuse("the adjoint of reading x[index] with an integer-array index "
                   "(np.add.at)", acc, "write the index as a slice or a boolean mask",
                   cause=exc)
    else:
        np.add.at(acc, index, g)
    return acc


def setitem_adjoint_value(g, index, value, target=None):
    """Adjoint of ``value`` in ``x[index] = value``: a copy of ``g[index]`` summed
    down to ``value``'s shape (``value`` may be broadcast, e.g. a scalar).

    ``target``: ``x`` itself, given when the compiler could not prove it holds
    floats (compiler/analyze/inexact_arrays.py), or ``value`` may be complex.  An
    integer or boolean ``x`` stores ``value`` truncated, a step function of it:
    its adjoint is zero.  A real ``x`` stores the real part of a complex
    ``value``: its adjoint is the real part of ``g[index]``.

    A copy, never a view of ``g``: the caller then zeroes ``g[index]``, in place
    for an array written in place (``bS[t] = 0.0``).  An integer-array index
    that names one element twice (``x[[0, 0]] = v``, also in ``x[[0, 0]] += v``)
    is refused: NumPy does not specify which of the values the element keeps.
    """
    if target is not None and truncates_stores(target):
        shape = _shape(value)
        return np.zeros(shape) if shape else 0.0
    if is_zero(g):
        return g
    if target is not None and np.iscomplexobj(g) and np.iscomplexobj(value) and \
            not np.iscomplexobj(target):
        g = g.real
    if type(index) is slice and type(g) is np.ndarray:   # the common case: nothing repeats
        return unbroadcast(g[index].copy(), value)
    if _repeats_an_element(np.shape(g), index):
        raise TangentCkptError(
            f"a subscript write names an element more than once (index {index!r}): NumPy "
            "does not specify which value it keeps, so its gradient is not defined; "
            "make the indices unique (np.unique), or write one element at a time in a loop")
    return unbroadcast(copy_array(g[index]), value)


def truncates_stores(target):
    """Does a subscript write into ``target`` truncate a float it stores (an
    integer or boolean array: ``np.zeros_like(np.arange(4))``)?  A list or an
    object array keeps the value as it is."""
    dtype = getattr(target, "dtype", None)
    return isinstance(dtype, np.dtype) and truncates(dtype)


def stored_tangent(t, target):
    """The tangent of ``x[index] = value`` written into ``x``'s tangent: the
    value's tangent ``t``, or zero when ``x`` truncates what it stores."""
    return 0.0 if truncates_stores(target) else t


def stand_in(x):
    """What the gradient keeps through its reverse sweep of an array that sweep
    reads only for its shape and dtype (the operand of ``np.sum``): a read-only
    broadcast of one zero, which holds no memory; ``x`` itself when it is small
    or not an array."""
    if type(x) is np.ndarray and x.size > _SMALL:
        return np.broadcast_to(_zero_of(x.dtype), x.shape)
    return x


def returned(x):
    """``x`` as the gradient function returns it (the value of ``value_and_grad``,
    an aux): a copy of an array, whose memory the reverse sweep may write into
    as it puts back what the function's in-place writes overwrote."""
    return x.copy() if hasattr(x, "__array__") and hasattr(x, "copy") and \
        not isinstance(x, np.generic) else x


def overwritten(region):
    """What an in-place write ``S[t] = v`` keeps of the elements it overwrites
    (``region`` is ``S[t]``), for the reverse sweep to put back: a copy, or just
    a zero of the array's type when they are all +0.0 (a fresh ``np.zeros``
    row, the usual case of a trajectory filled one row per step), which puts
    back the same bytes."""
    if not isinstance(region, np.ndarray):
        if is_foreign_array(region):
            return region.copy()   # a CuPy view: copied on the device, no scan from the host
        return region  # one element: a NumPy scalar, immutable
    if region.size and region.item(0) != 0:
        return region.copy()   # surely not all zero: no scan (.any() reads every element)
    if region.dtype.kind in "biufc" and not region.any() and not _negative_zeros(region):
        return _zero_of(region.dtype)
    return np.array(region, copy=True)


_ZEROS = {}


def _zero_of(dtype):
    zero = _ZEROS.get(dtype)
    if zero is None:
        zero = _ZEROS[dtype] = dtype.type(0)
    return zero


def _negative_zeros(region):
    if region.dtype.kind == "c":
        return bool(np.signbit(region.real).any() or np.signbit(region.imag).any())
    return region.dtype.kind == "f" and bool(np.signbit(region).any())


def _repeats_an_element(shape, index):
    """True when the advanced index ``index`` selects some element twice."""
    if is_basic_index(index) or _is_mask(index):
        return False
    if isinstance(index, (list, np.ndarray)) and np.ndim(index) == 1 and shape and \
            np.issubdtype(np.asarray(to_host(index)).dtype, np.integer):
        rows = np.asarray(to_host(index)) % shape[0]
        return np.unique(rows).size != rows.size
    if is_foreign_array(index):
        index = to_host(index)
    positions = np.arange(int(np.prod(shape))).reshape(shape)[index]
    return np.unique(positions).size != np.size(positions)


def setitem_adjoint_array(g, index):
    """Adjoint of ``x`` (before the write) in ``x[index] = value``: ``g`` with
    zeros at ``index``, as a new array (``g`` is not mutated)."""
    if is_zero(g):
        return g
    out = copy_array(g)
    out[index] = 0
    return out
