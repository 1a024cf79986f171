"""Numba-compilable twins of the ``rt.*`` helpers that loop steps call.

Each twin is a ``numba.extending.overload`` of the runtime's own function
(``rt.unbroadcast``, ...): inside a function compiled with
``backend="numba"`` the call ``rt.unbroadcast(g, x)`` runs the twin, outside
it runs NumPy's helper unchanged, so the generated text is the same for both
backends and a function that falls back to NumPy needs no rewriting.  A twin
computes the same value as its namesake in
:mod:`tangent_ckpt.runtime.primitive_adjoints.numpy_adjoints` for the cases common simulation
code meets (arrays of up to two dimensions, basic slices, scalar exponents,
2-D products); the case is chosen from the argument *types* when a step is
compiled, and a case outside those raises a typing error, so the backend runs
that function with NumPy instead (and says so once).

Shapes stand in for values the reverse sweep reads only for their shape
(``rt.shape_of``, ``rt.broadcast_shape``): here they are plain tuples of
ints, ``()`` for a number.

Importing this module needs Numba; only the numba backend imports it.
"""

import numba
import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload
from numba.np import numpy_support

from tangent_ckpt import runtime as rt
from tangent_ckpt.runtime.jit.numba_passes import fused_source
from tangent_ckpt.runtime.jit.numba_sweep import LayoutChanged

#: the rt helpers given a compiled twin here
TWINS = ("unbroadcast", "shape_of", "broadcast_shape", "matmul_shape", "zeros_like",
         "getitem_adjoint", "accumulate_at", "setitem_adjoint_value", "setitem_adjoint_array",
         "repeat_to_match", "where_nonzero", "power_adjoint_base", "matmul_adjoint_x1", "matmul_adjoint_x2",
         "accumulate_matmul_adjoint_x2", "as_gradient", "store_snapshot", "restore_snapshot", "assign_at",
         "in_place_result")


def _twin(name):
    """Register the decorated typing function as the compiled case of ``rt.<name>``
    (the Python function is unchanged: outside compiled code it is NumPy's)."""
    return overload(getattr(rt, name))


# ----------------------------------------------------------------- type tests

def _is_number(t):
    return isinstance(t, (types.Number, types.Boolean))


def _is_shape(t):
    return isinstance(t, types.BaseTuple) and all(isinstance(e, types.Integer) for e in t)


def _ndim(t):
    """The number of dimensions ``t`` stands for, or None when it is not a value/shape."""
    if isinstance(t, types.Array):
        return t.ndim
    if _is_number(t):
        return 0
    if _is_shape(t):
        return len(t)
    return None


def _refuse(name, *args):
    raise TypingError(f"rt.{name} has no compiled case for ({', '.join(map(str, args))})")


# ----------------------------------------------------------------- shapes

@_twin("shape_of")
def _shape_of(x):
    if isinstance(x, types.Array):
        return lambda x: x.shape
    if _is_number(x):
        return lambda x: ()
    if _is_shape(x):
        return lambda x: x
    _refuse("shape_of", x)


@_twin("broadcast_shape")
def _broadcast_shape(a, b):
    if _ndim(a) is None or _ndim(b) is None:
        _refuse("broadcast_shape", a, b)
    return lambda a, b: np.broadcast_shapes(rt.shape_of(a), rt.shape_of(b))


@_twin("matmul_shape")
def _matmul_shape(a, b):
    if _ndim(a) == 2 and _ndim(b) == 2:
        def impl(a, b):
            sa, sb = rt.shape_of(a), rt.shape_of(b)
            if sa[1] != sb[0]:
                raise ValueError("matmul: mismatch in its core dimension")
            return (sa[0], sb[1])
        return impl
    _refuse("matmul_shape", a, b)


# ----------------------------------------------------------------- unbroadcast

@_twin("unbroadcast")
def _unbroadcast(g, x):
    nx = _ndim(x)
    if _is_number(g):
        return lambda g, x: g                       # the symbolic zero, or a scalar adjoint
    if not isinstance(g, types.Array) or nx is None:
        _refuse("unbroadcast", g, x)
    if nx == 0:
        return lambda g, x: np.sum(g)
    if g.ndim == nx == 1:
        def impl(g, x):
            shape = rt.shape_of(x)
            if shape[0] == 1 and g.shape[0] != 1:
                return np.full(1, np.sum(g))
            return g
        return impl
    if g.ndim == 2 and nx == 1:
        def impl(g, x):
            s = g.sum(axis=0)
            if rt.shape_of(x)[0] == 1 and s.shape[0] != 1:
                return np.full(1, np.sum(s))
            return s
        return impl
    if g.ndim == nx == 2:
        def impl(g, x):
            shape = rt.shape_of(x)
            rows = shape[0] == 1 and g.shape[0] != 1
            cols = shape[1] == 1 and g.shape[1] != 1
            if not rows and not cols:
                return g
            out = g
            if rows:
                out = _sum_rows(out)
            if cols:
                out = _sum_cols(out)
            return out
        return impl
    _refuse("unbroadcast", g, x)


def _sum_rows(g):
    """``g.sum(axis=0, keepdims=True)`` for a 2-D ``g``."""


@overload(_sum_rows)
def _sum_rows_impl(g):
    def impl(g):
        out = np.zeros((1, g.shape[1]), dtype=g.dtype)
        for i in range(g.shape[0]):
            out[0, :] += g[i, :]
        return out
    return impl


def _sum_cols(g):
    """``g.sum(axis=1, keepdims=True)`` for a 2-D ``g``."""


@overload(_sum_cols)
def _sum_cols_impl(g):
    def impl(g):
        out = np.zeros((g.shape[0], 1), dtype=g.dtype)
        for i in range(g.shape[0]):
            out[i, 0] = np.sum(g[i, :])
        return out
    return impl


# ----------------------------------------------------------------- buffers

@_twin("zeros_like")
def _zeros_like(x):
    if isinstance(x, types.Array):
        dtype = x.dtype if isinstance(x.dtype, types.Float) else types.float64
        return lambda x: np.zeros(x.shape, dtype=dtype)
    if _is_number(x):
        return lambda x: 0.0
    _refuse("zeros_like", x)


@_twin("as_gradient")
def _as_gradient(g, x):
    if isinstance(x, types.Array):
        if _is_number(g):
            return lambda g, x: np.full(x.shape, g, dtype=np.float64)
        return lambda g, x: np.broadcast_to(rt.unbroadcast(g, x), x.shape).copy()
    if _is_number(x):
        if isinstance(g, types.Array):
            return lambda g, x: float(np.sum(g))
        return lambda g, x: float(g)
    _refuse("as_gradient", g, x)


@_twin("in_place_result")
def _in_place_result(result, target):
    if not isinstance(target, types.Array):
        return lambda result, target: result  # a number: `a op= b` makes a new one
    if not (isinstance(result, types.Array) and result.ndim == target.ndim):
        _refuse("in_place_result", result, target)
    same = result.dtype == target.dtype
    if not same and not np.can_cast(numpy_support.as_dtype(result.dtype),
                                    numpy_support.as_dtype(target.dtype), casting="same_kind"):
        _refuse("in_place_result", result, target)  # NumPy's error, raised by NumPy
    dtype = target.dtype

    def kept(result, target):
        if result.shape != target.shape:
            raise ValueError("non-broadcastable output operand (an in-place operator "
                             "writes into its target's memory)")
        return result if same else result.astype(dtype)
    return kept


def _basic(index):
    """True for an index type Numba reads as a basic index (ints and slices)."""
    parts = index.types if isinstance(index, types.BaseTuple) else (index,)
    return all(isinstance(p, (types.Integer, types.SliceType)) for p in parts)


def _selects_element(x, index):
    """True when ``x[index]`` is one element (an int per dimension), not a view."""
    parts = index.types if isinstance(index, types.BaseTuple) else (index,)
    return sum(isinstance(p, types.Integer) for p in parts) >= x.ndim


def _add_at(x, index):
    """``out[index] += g`` in place: through a view for a slice (Numba's
    ``out[index] += g`` reads the slice, adds into a new array and writes it back:
    ten times slower), on the element itself for an element."""
    if _selects_element(x, index):
        def element(out, index, g):
            out[index] += g
        return element

    def through_view(out, index, g):
        view = out[index]
        view += g
    return through_view


def _add_into(out, index, g):
    """``out[index] += g`` (compiled by :func:`_add_at`)."""


@overload(_add_into)
def _add_into_impl(out, index, g):
    return _add_at(out, index)


@_twin("getitem_adjoint")
def _getitem_adjoint(g, x, index):
    if isinstance(x, types.Array) and _basic(index) and \
            (isinstance(g, types.Array) or _is_number(g)):
        def impl(g, x, index):
            out = np.zeros(x.shape, dtype=np.float64)
            _add_into(out, index, g)
            return out
        return impl
    _refuse("getitem_adjoint", g, x, index)


@_twin("accumulate_at")
def _accumulate_at(acc, x, index, g):
    if not (isinstance(x, types.Array) and _basic(index)):
        _refuse("accumulate_at", acc, x, index, g)
    if _is_number(acc):
        def fresh(acc, x, index, g):
            out = np.zeros(x.shape, dtype=np.float64)
            _add_into(out, index, g)
            return out
        return fresh
    if isinstance(acc, types.Array):
        def impl(acc, x, index, g):
            _add_into(acc, index, g)
            return acc
        return impl
    _refuse("accumulate_at", acc, x, index, g)


@_twin("setitem_adjoint_value")
def _setitem_adjoint_value(g, index, value, target=None):
    if isinstance(target, types.Array) and isinstance(target.dtype, (types.Integer,
                                                                      types.Boolean)):
        # an integer target truncates the value it stores: no derivative
        if _is_number(value):
            return lambda g, index, value, target=None: 0.0
        if _is_shape(value):
            return lambda g, index, value, target=None: np.zeros(value)
        if isinstance(value, types.Array):
            return lambda g, index, value, target=None: np.zeros(value.shape)
    elif isinstance(g, types.Array) and _basic(index):
        if _selects_element(g, index):   # a number: nothing to share
            return lambda g, index, value, target=None: rt.unbroadcast(g[index], value)
        # a copy, never a view, as in NumPy's version: the caller then zeroes
        # g[index], in place when it owns g (bu[1:-1] = 0.0)
        return lambda g, index, value, target=None: rt.unbroadcast(g[index].copy(), value)
    _refuse("setitem_adjoint_value", g, index, value, target)


@_twin("setitem_adjoint_array")
def _setitem_adjoint_array(g, index):
    if isinstance(g, types.Array) and _basic(index):
        if _selects_element(g, index):
            def element(g, index):
                out = g.copy()
                out[index] = 0.0
                return out
            return element

        def through_view(g, index):
            out = g.copy()
            out[index].fill(0.0)
            return out
        return through_view
    _refuse("setitem_adjoint_array", g, index)


@_twin("repeat_to_match")
def _repeat_to_match(g, x, axis=None, keepdims=False):
    no_axis = axis is None or isinstance(axis, (types.NoneType, types.Omitted))
    if _is_number(g) and isinstance(x, types.Array) and no_axis:
        return lambda g, x, axis=None, keepdims=False: np.full(x.shape, g, dtype=np.float64)
    _refuse("repeat_to_match", g, x, axis, keepdims)


# ----------------------------------------------------------------- elementwise

@_twin("power_adjoint_base")
def _power_adjoint_base(g, x1, x2):
    if _is_number(x2) and not isinstance(x2, types.Boolean):
        def impl(g, x1, x2):
            if x2 == 0:
                return 0 * g * x1
            if x2 == 1:
                return g * (x1 * 0 + 1)
            if x2 == 2:
                return g * (2 * x1)
            return g * x2 * x1 ** (x2 - 1)
        return impl
    _refuse("power_adjoint_base", g, x1, x2)


@_twin("where_nonzero")
def _where_nonzero(g, product):
    if _is_number(g) and _is_number(product):
        def impl(g, product):
            if g == 0 and product != product:
                return 0.0 * g
            return product
        return impl
    if isinstance(product, types.Array) and _is_number(g):
        def impl(g, product):
            if g != 0 or not np.isnan(np.sum(product)):
                return product
            return np.zeros_like(product)    # g * anything, g = 0
        return impl
    if isinstance(product, types.Array) and isinstance(g, types.Array) and \
            g.ndim == product.ndim:
        def impl(g, product):
            if not np.isnan(np.sum(product)):
                return product
            out = product.copy()
            zero = np.broadcast_to(g, out.shape) == 0
            for k in np.ndindex(out.shape):
                if zero[k] and np.isnan(out[k]):
                    out[k] = 0.0
            return out
        return impl
    _refuse("where_nonzero", g, product)


# ----------------------------------------------------------------- products

@_twin("matmul_adjoint_x1")
def _matmul_adjoint_x1(g, x1, x2, x2_t=None):
    if isinstance(g, types.Array) and g.ndim == 2 and _ndim(x2) == 2:
        if x2_t is None or isinstance(x2_t, (types.NoneType, types.Omitted)):
            return lambda g, x1, x2, x2_t=None: g @ np.ascontiguousarray(x2.T)
        return lambda g, x1, x2, x2_t=None: g @ x2_t
    _refuse("matmul_adjoint_x1", g, x1, x2)


@_twin("matmul_adjoint_x2")
def _matmul_adjoint_x2(g, x1, x2):
    if isinstance(g, types.Array) and g.ndim == 2 and _ndim(x1) == 2:
        return lambda g, x1, x2: np.ascontiguousarray(x1.T) @ g
    _refuse("matmul_adjoint_x2", g, x1, x2)


@_twin("accumulate_matmul_adjoint_x2")
def _accumulate_matmul_adjoint_x2(acc, g, x1, x2):
    if isinstance(acc, types.Array) and isinstance(g, types.Array) and g.ndim == 2 \
            and _ndim(x1) == 2:
        def impl(acc, g, x1, x2):
            acc += np.ascontiguousarray(x1.T) @ g
            return acc
        return impl
    _refuse("accumulate_matmul_adjoint_x2", acc, g, x1, x2)


# ----------------------------------------------------------------- NumPy gaps

@overload(np.roll)
def _roll_with_axis(a, shift, axis):
    """``np.roll(a, shift, None)``, which the adjoint of np.roll writes; Numba's own
    np.roll takes no axis."""
    if isinstance(axis, types.NoneType):
        return lambda a, shift, axis: np.roll(a, shift)
    _refuse("np.roll", a, shift, axis)


# ----------------------------------------------------------------- snapshot buffers

def _unrolled(params, lines, **names):
    """A function of ``params`` whose body is ``lines`` (reading ``names``): a
    tuple of buffers or operands is heterogeneous, so each gets its own statement."""
    namespace = dict(names, np=np)
    exec(f"def impl({params}):\n" + "".join(f"    {line}\n" for line in lines), namespace)
    return namespace["impl"]


def _buffers_of(buffers):
    if isinstance(buffers, types.BaseTuple) and len(buffers) and \
            all(isinstance(b, types.Array) for b in buffers):
        return len(buffers)
    return None


@_twin("store_snapshot")
def _store_snapshot(buffers, slot, state):
    count = _buffers_of(buffers)
    if count is None:
        _refuse("store_snapshot", buffers, slot, state)
    leaves = tuple(state) if isinstance(state, types.BaseTuple) else (state,)
    if len(leaves) != count or not all(_fits_buffer(x, b) for x, b in zip(leaves, buffers)):
        _refuse("store_snapshot", buffers, slot, state)  # run by NumPy: LayoutChanged
    spelled = [f"state[{i}]" for i in range(count)] if isinstance(state, types.BaseTuple) \
        else ["state"]
    lines = []
    for i, (x, leaf) in enumerate(zip(leaves, spelled)):
        if isinstance(x, types.Array):  # a shape of the same rank may still differ
            lines += [f"if {leaf}.shape != buffers[{i}][slot].shape:",
                      "    raise LayoutChanged('a step changed the shape of the state')"]
        lines.append(f"buffers[{i}][slot] = {leaf}")
    return _unrolled("buffers, slot, state", lines, LayoutChanged=LayoutChanged)


def _fits_buffer(x, buffer):
    """Does a leaf of type ``x`` go into a row of ``buffer`` unchanged (float64, as
    many dimensions as a row)?"""
    if isinstance(x, types.Array):
        return x.dtype == types.float64 and x.ndim == buffer.ndim - 1
    return x in (types.float64,) and buffer.ndim == 1


@_twin("restore_snapshot")
def _restore_snapshot(buffers, slot, like):
    count = _buffers_of(buffers)
    if count is None:
        _refuse("restore_snapshot", buffers, slot, like)
    leaves = [f"buffers[{i}][slot].copy()" if b.ndim > 1 else f"buffers[{i}][slot]"
              for i, b in enumerate(buffers)]
    if isinstance(like, types.BaseTuple):
        return _unrolled("buffers, slot, like", [f"return ({', '.join(leaves)},)"])
    return _unrolled("buffers, slot, like", [f"return {leaves[0]}"])


# ----------------------------------------------------------------- elementwise kernels

def elementwise_loop(kernel, scalar):
    """Compile calls of ``kernel`` (an expression of its parameters) as one loop
    over the elements that calls ``scalar`` (the expression compiled for one
    element): 1-D arrays of one length, or of length 1 (broadcast), and numbers.
    Other operands (2-D arrays) get ``scalar`` on the whole arrays, which is
    Numba's own array expression.  The same operations on each element in the
    same order: the values are NumPy's."""

    @overload(kernel)
    def _loop(*ops):
        ops = tuple(types.unliteral(t) for t in ops)
        arrays = [i for i, t in enumerate(ops) if isinstance(t, types.Array)]
        if not arrays or any(ops[i].ndim != 1 for i in arrays):
            return _unrolled("*ops", ["return scalar(*ops)"], scalar=scalar)
        elements = tuple(t.dtype if isinstance(t, types.Array) else t for t in ops)
        scalar.compile(elements)
        result = [s.return_type for s in scalar.nopython_signatures if s.args == elements][0]
        dtype = numpy_support.as_dtype(result).type
        lines = ["n = 1"]
        for i in arrays:
            lines += [f"l{i} = ops[{i}].shape[0]",
                      f"if l{i} != 1:",
                      f"    if n != 1 and l{i} != n:",
                      "        raise ValueError('operands could not be broadcast together')",
                      f"    n = l{i}"]
        lines.append("out = np.empty(n, dtype=DTYPE)")
        same = " and ".join(f"l{i} == n" for i in arrays)
        direct = ", ".join(f"ops[{i}][k]" if i in arrays else f"ops[{i}]"
                           for i in range(len(ops)))
        spread = ", ".join(f"ops[{i}][k if l{i} != 1 else 0]" if i in arrays else f"ops[{i}]"
                           for i in range(len(ops)))
        lines += [f"if {same}:",
                  "    for k in range(n):",
                  f"        out[k] = scalar({direct})",
                  "else:",
                  "    for k in range(n):",
                  f"        out[k] = scalar({spread})",
                  "return out"]
        return _unrolled("*ops", lines, scalar=scalar, DTYPE=dtype)


# ----------------------------------------------------------------- stores

@_twin("assign_at")
def _assign_at(x, index, value):
    if not (isinstance(x, types.Array) and _basic(index)):
        _refuse("assign_at", x, index, value)
    parts = index.types if isinstance(index, types.BaseTuple) else (index,)
    view_ndim = x.ndim - sum(isinstance(p, types.Integer) for p in parts)
    if view_ndim == 1 and isinstance(value, types.Array) and value.ndim == 1:
        def impl(x, index, value):
            view = x[index]
            n = value.shape[0]
            start, end = value.ctypes.data, value.ctypes.data + value.nbytes
            first, last = view.ctypes.data, view.ctypes.data + view.nbytes
            if view.shape[0] == n and (end <= first or last <= start):
                for i in range(n):
                    view[i] = value[i]
            else:
                x[index] = value
        return impl

    def generic(x, index, value):
        x[index] = value
    return generic


# ----------------------------------------------------------------- fused passes

def _pass_kind(t):
    """What a fused pass knows of an argument of type ``t`` (numba_passes.fused_source)."""
    t = types.unliteral(t)
    if isinstance(t, types.Array):
        return "array" if t.ndim == 1 and t.dtype == types.float64 else None
    if isinstance(t, (types.Integer, types.Float)):
        return "scalar"
    if isinstance(t, types.BaseTuple) and len(t) <= 1 and \
            all(isinstance(e, types.Integer) for e in t):
        return ("shape", len(t))
    return None


@numba.njit(cache=True)
def disjoint(a, b):
    """True when the 1-D arrays ``a`` and ``b`` share no byte of memory."""
    if a.size == 0 or b.size == 0:
        return True
    da, db = (a.shape[0] - 1) * a.strides[0], (b.shape[0] - 1) * b.strides[0]
    a0, a1 = a.ctypes.data + min(0, da), a.ctypes.data + max(0, da) + a.itemsize
    b0, b1 = b.ctypes.data + min(0, db), b.ctypes.data + max(0, db) + b.itemsize
    return a1 <= b0 or b1 <= a0


def fused_loops(kernel, description, unfused):
    """Compile calls of ``kernel`` (statements described by ``description``,
    runtime/jit/numba_passes.py) as the few loops :func:`fused_source` writes for
    the argument types, or as ``unfused`` (the statements compiled as they are)
    when those types cannot be fused or a run-time check fails."""

    @overload(kernel, jit_options={"error_model": "numpy"})
    def _passes(*args):
        text = fused_source(description, tuple(_pass_kind(t) for t in args))
        if text is None:
            return _unrolled("*args", ["return unfused(*args)"], unfused=unfused)
        namespace = {"np": np, "unfused": unfused, "disjoint": disjoint}
        exec(compile(text, f"<fused pass of {kernel.__name__}>", "exec"), namespace)
        return namespace["impl"]
