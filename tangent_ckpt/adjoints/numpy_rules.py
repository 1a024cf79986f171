"""Adjoint rules of NumPy primitives, one row per primitive.

Python operators map onto these rules: ``a + b`` is ``np.add``, ``a - b``
``np.subtract``, ``a * b`` ``np.multiply``, ``a / b`` ``np.divide``, ``a ** b``
``np.power``, ``a @ b`` ``np.matmul``, ``-a`` ``np.negative``, ``abs(a)`` the
builtin ``abs`` (same rule as ``np.abs``), ``a[i]`` ``operator.getitem``.
See :mod:`tangent_ckpt.adjoints.registry` for the expression language, and
``docs/supported_ops.md`` (rendered from this file by ``ops_table``).

Conventions:
- ``g = 0.0`` (the symbolic zero) is accepted by every rule that calls a
  helper; those return it unchanged.
- ``out=`` appears in signatures only so positional arguments bind as in NumPy;
  the compiler must reject a call that passes ``out``.
- Non-differentiable points take a documented subgradient (``NOTES`` below).
"""

import builtins
import contextlib
import operator

import numpy as np

from tangent_ckpt.adjoints.registry import defadjoint, defconstant, registered_functions

SECTIONS = {}  # title -> functions registered under it, in order (for the docs table)


@contextlib.contextmanager
def section(title):
    """Group the rows registered inside the block under ``title`` in the docs."""
    before = set(map(id, registered_functions()))
    yield
    SECTIONS[title] = [fn for fn in registered_functions() if id(fn) not in before]


UNARY = "x, /"
BINARY = "x1, x2, /"
REDUCE = "a, axis=None, dtype=None, out=None, keepdims=False, initial=None"
EXTREMUM = "a, axis=None, out=None, keepdims=False, initial=None"

with section("Arithmetic"):
    defadjoint(np.add, BINARY,
               x1="unbroadcast(g, x1)",
               x2="unbroadcast(g, x2)")
    defadjoint(np.subtract, BINARY,
               x1="unbroadcast(g, x1)",
               x2="unbroadcast(-g, x2)")
    defadjoint(np.multiply, BINARY,
               x1="unbroadcast(g * x2, x1)",
               x2="unbroadcast(g * x1, x2)")
    defadjoint(np.divide, BINARY,                       # np.true_divide is np.divide
               x1="unbroadcast(g / x2, x1)",
               x2="unbroadcast(-g * ans / x2, x2)")
    defadjoint(np.power, BINARY,
               x1="unbroadcast(power_adjoint_base(g, x1, x2), x1)",
               x2="unbroadcast(power_adjoint_exponent(g, ans, x1), x2)")
    defadjoint(np.negative, UNARY, x="-g")
    defadjoint(np.square, UNARY, x="g * (2 * x)")
    defadjoint(np.reciprocal, UNARY, x="-g * ans * ans")
    defadjoint(np.maximum, BINARY,
               x1="unbroadcast(select_adjoint(g, x1, ans, x2), x1)",
               x2="unbroadcast(select_adjoint(g, x2, ans, x1), x2)")
    defadjoint(np.minimum, BINARY,
               x1="unbroadcast(select_adjoint(g, x1, ans, x2), x1)",
               x2="unbroadcast(select_adjoint(g, x2, ans, x1), x2)")
    defadjoint(np.where, "condition, x=None, y=None, /",
               x="unbroadcast(np.where(condition, g, 0.0), x)",
               y="unbroadcast(np.where(condition, 0.0, g), y)")
    defadjoint(np.clip, "a, a_min=None, a_max=None, out=None, *, min=None, max=None",
               a="clip_adjoint(g, a, a_min, a_max, min, max)",
               a_min="clip_adjoint_bound(g, a, a_min, False)",
               a_max="clip_adjoint_bound(g, a, a_max, True)",
               min="clip_adjoint_bound(g, a, min, False)",
               max="clip_adjoint_bound(g, a, max, True)")

with section("Elementwise functions"):
    defadjoint(np.sqrt, UNARY, x="g * 0.5 / ans")
    defadjoint(np.exp, UNARY, x="g * ans")
    defadjoint(np.expm1, UNARY, x="g * (ans + 1.0)")
    defadjoint(np.exp2, UNARY, x="g * ans * 0.6931471805599453")        # log(2)
    defadjoint(np.log, UNARY, x="g / x")
    defadjoint(np.log1p, UNARY, x="g / (1.0 + x)")
    defadjoint(np.log2, UNARY, x="g / (x * 0.6931471805599453)")        # log(2)
    defadjoint(np.log10, UNARY, x="g / (x * 2.302585092994046)")        # log(10)
    defadjoint(np.sin, UNARY, x="g * np.cos(x)")
    defadjoint(np.cos, UNARY, x="-g * np.sin(x)")
    defadjoint(np.tan, UNARY, x="g * (1.0 + ans * ans)")
    defadjoint(np.arcsin, UNARY, x="g / np.sqrt(1.0 - x * x)")
    defadjoint(np.arccos, UNARY, x="-g / np.sqrt(1.0 - x * x)")
    defadjoint(np.arctan, UNARY, x="g / (1.0 + x * x)")
    defadjoint(np.sinh, UNARY, x="g * np.cosh(x)")
    defadjoint(np.cosh, UNARY, x="g * np.sinh(x)")
    defadjoint(np.tanh, UNARY, x="g * (1.0 - ans * ans)")
    defadjoint(np.absolute, UNARY, x="g * np.sign(x)")      # np.abs is np.absolute
    defadjoint(builtins.abs, UNARY, name="abs", x="g * np.sign(x)")

with section("Linear algebra"):
    defadjoint(np.matmul, BINARY,
               x1="matmul_adjoint_x1(g, x1, x2)",
               x2="matmul_adjoint_x2(g, x1, x2)")
    defadjoint(np.dot, "a, b, out=None",
               a="dot_adjoint_a(g, a, b)",
               b="dot_adjoint_b(g, a, b)")
    defadjoint(np.outer, "a, b, out=None",
               a="outer_adjoint_a(g, a, b)",
               b="outer_adjoint_b(g, a, b)")
    defadjoint(np.linalg.norm, "x, ord=None, axis=None, keepdims=False", name="np.linalg.norm",
               x="norm_adjoint(g, x, ans, ord, axis, keepdims)")

with section("Reductions"):
    defadjoint(np.sum, REDUCE, a="repeat_to_match(g, a, axis, keepdims)")
    defadjoint(np.mean, "a, axis=None, dtype=None, out=None, keepdims=False",
               a="mean_adjoint(g, a, axis, keepdims)")
    defadjoint(np.prod, REDUCE, a="prod_adjoint(g, a, ans, axis, keepdims)")
    defadjoint(np.max, EXTREMUM, a="extremum_adjoint(g, a, ans, axis, keepdims)")
    defadjoint(np.min, EXTREMUM, a="extremum_adjoint(g, a, ans, axis, keepdims)")
    defadjoint(np.amax, EXTREMUM, a="extremum_adjoint(g, a, ans, axis, keepdims)")
    defadjoint(np.amin, EXTREMUM, a="extremum_adjoint(g, a, ans, axis, keepdims)")
    defadjoint(np.cumsum, "a, axis=None, dtype=None, out=None",
               a="cumsum_adjoint(g, a, axis)")

with section("Shape"):
    defadjoint(np.reshape, "a, /, shape, order='C', *, copy=None",
               a="reshape_like(g, a, order)")
    defadjoint(np.ravel, "a, order='C'", a="reshape_like(g, a, order)")
    defadjoint(np.transpose, "a, axes=None", a="transpose_adjoint(g, axes)")
    defadjoint(np.swapaxes, "a, axis1, axis2", a="np.swapaxes(g, axis1, axis2)")
    defadjoint(np.moveaxis, "a, source, destination", a="np.moveaxis(g, destination, source)")
    defadjoint(np.expand_dims, "a, axis", a="reshape_like(g, a)")
    defadjoint(np.squeeze, "a, axis=None", a="reshape_like(g, a)")
    defadjoint(np.broadcast_to, "array, shape, subok=False", array="unbroadcast(g, array)")
    defadjoint(np.flip, "m, axis=None", m="np.flip(g, axis)")
    defadjoint(np.roll, "a, shift, axis=None",
               a="np.roll(g, np.negative(shift), axis)")
    defadjoint(np.copy, "a, order='K', subok=False", a="g")
    defadjoint(np.asarray, "a, dtype=None, order=None, *, device=None, copy=None, like=None",
               a="g")
    defadjoint(builtins.float, "x=0.0, /", name="float", x="reshape_like(g, x)")
    defadjoint(np.array, "object, dtype=None, *, copy=True, order='K', subok=False, ndmin=0, "
                         "ndmax=0, like=None",
               object="reshape_like(g, object)")

with section("Joining (sequence parameters: `i` is the element index)"):
    defadjoint(np.concatenate, "arrays, /, axis=0, out=None, *, dtype=None, casting='same_kind'",
               sequence=("arrays",),
               arrays="concatenate_adjoint(g, arrays, axis, i)")
    defadjoint(np.stack, "arrays, axis=0, out=None, *, dtype=None, casting='same_kind'",
               sequence=("arrays",),
               arrays="stack_adjoint(g, axis, i)")
    defadjoint(np.hstack, "tup, *, dtype=None, casting='same_kind'", sequence=("tup",),
               tup="hstack_adjoint(g, tup, i)")
    defadjoint(np.vstack, "tup, *, dtype=None, casting='same_kind'", sequence=("tup",),
               tup="vstack_adjoint(g, tup, i)")

with section("Indexing"):
    defadjoint(operator.getitem, "a, index, /", name="getitem",
               a="getitem_adjoint(g, a, index)")

with section("Constants (no derivative)"):
    for _fn in (np.zeros, np.ones, np.empty, np.zeros_like, np.ones_like, np.empty_like,
                np.full, np.full_like, np.arange, np.linspace, np.eye, np.identity,
                np.shape, np.ndim, np.size, builtins.len,
                np.argmax, np.argmin, np.argsort, np.nonzero,
                np.sign, np.floor, np.ceil, np.round, np.around, np.rint, np.trunc,
                np.floor_divide, np.isnan, np.isinf, np.isfinite,
                np.equal, np.not_equal, np.less, np.less_equal, np.greater,
                np.greater_equal, np.logical_and, np.logical_or, np.logical_not,
                np.any, np.all, np.count_nonzero):
        defconstant(_fn, "*args, **kwargs")

# What the table cannot say: subgradients, tie-breaking, limits.
NOTES = {
    np.divide: "needs `ans`",
    np.power: "needs `ans`; base: exact for negative/zero bases with integer exponents, "
              "0 where the exponent is 0; exponent: log only where base > 0 (else 0)",
    np.reciprocal: "needs `ans`",
    np.maximum: "needs `ans`; ties split `g` half/half",
    np.minimum: "needs `ans`; ties split `g` half/half",
    np.where: "no adjoint for `condition`",
    np.clip: "`g` passes where a_min <= a <= a_max (inclusive); bounds get `g` where "
             "active; assumes a_min <= a_max",
    np.sqrt: "needs `ans`; inf at 0",
    np.exp: "needs `ans`",
    np.expm1: "needs `ans`",
    np.exp2: "needs `ans`",
    np.tan: "needs `ans`",
    np.tanh: "needs `ans`",
    np.absolute: "subgradient 0 at 0",
    builtins.abs: "subgradient 0 at 0",
    np.linalg.norm: "needs `ans`; ord None/'fro'/2 (vector) only; 0 at the zero vector",
    np.sum: "read-only broadcast view of `g`; `where=` unsupported",
    np.mean: "read-only broadcast view; axis may be a tuple",
    np.prod: "needs `ans`; exact with zeros (one zero: the product of the others)",
    np.max: "needs `ans`; ties share `g` equally",
    np.min: "needs `ans`; ties share `g` equally",
    np.amax: "needs `ans`; ties share `g` equally",
    np.amin: "needs `ans`; ties share `g` equally",
    np.cumsum: "axis=None flattens",
    np.concatenate: "sequence parameter `arrays`; slices are views of `g`",
    np.stack: "sequence parameter `arrays`; slices are views of `g`",
    np.hstack: "sequence parameter `tup`",
    np.vstack: "sequence parameter `tup`",
    np.asarray: "identity (dtype conversions are not differentiated)",
    np.array: "identity up to `ndmin`; for a list of arrays use np.stack",
    builtins.float: "of a number or 0-d array",
    operator.getitem: "repeated integer indices accumulate (np.add.at); "
                      "in loops prefer `accumulate_at`",
}
