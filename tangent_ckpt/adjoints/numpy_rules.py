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
- ``methods=`` names the array methods that mean the function, ``domain=``
  where the tests draw its inputs from, ``piecewise=`` the parameters the
  output is locally constant in, ``only=`` the values a parameter may take
  (a call with another value is refused at compile time).
"""

import builtins
import contextlib
import math
import operator
import random

import numpy as np

from tangent_ckpt.adjoints.numpy_versions import available, numpy_function
from tangent_ckpt.adjoints.registry import (defadjoint, defconstant, defmethod, defprimitive,
                                            defpure, lookup, registered_functions)
from tangent_ckpt.runtime.primitive_adjoints.array_adjoints import (column_join, diagonal_values,
                                                                   quantile_weights, row_join)
from tangent_ckpt.runtime.keyed import (
    dict_get, dict_get_tangent, dict_set, dict_set_tangent_dict, dict_set_tangent_value,
)
from tangent_ckpt.runtime.primitive_adjoints.extreme_positions import (
    item_at, max_position, min_position, sorted_order,
)
from tangent_ckpt.runtime.primitive_adjoints.last_axis import along_last, from_last, weights_like
from tangent_ckpt.runtime.primitive_adjoints.numpy_adjoints import running_extremum_tangent
from tangent_ckpt.runtime.primitive_adjoints.numpy_adjoints import (cast_result, in_place_result, stored_tangent,
                                                                   through_cast, where_nonzero)
from tangent_ckpt.runtime import random_state
from tangent_ckpt.runtime.rows import append_row, repeat_row, rows_holding
from tangent_ckpt.runtime.primitive_adjoints.scatter_adjoints import (
    add_at, divide_at, divided_at, divisor_tangent_at, factor_tangent_at, multiplied_at,
    multiply_at, scattered_at, subtract_at)
from tangent_ckpt.runtime.primitive_adjoints.signal_adjoints import interp_slope

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
VARIANCE = ("a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, "
            "mean=None, correction=None")
PLAIN_VARIANCE = {"where": (True,), "mean": (None,), "correction": (None,)}
LOG2, LOG10 = "0.6931471805599453", "2.302585092994046"
# tangents: a tie of np.maximum & co. splits t half/half; a clip bound moves the
# output where it is the output and a is not
SELECT_TANGENT = {"x1": "t * np.where(x1 == x2, 0.5, np.where(x1 == ans, 1.0, 0.0))",
                  "x2": "t * np.where(x1 == x2, 0.5, np.where(x2 == ans, 1.0, 0.0))"}
# -solve(a, t @ x), x a column where NumPy took b for a vector (b 1-D)
SOLVE_TANGENT_A = ("np.reshape(-np.linalg.solve(a, t @ np.reshape(ans, np.concatenate(("
                   "np.shape(ans), np.ones(np.maximum(2 - np.ndim(b), 0), dtype=int))))), "
                   "np.shape(ans))")
# products of the other elements along the last axis of m (no division: exact with zeros)
# np.cov: the variables as rows (a 2-D m with rowvar=False transposed), centred;
# d cov = (dXc Xc^T + Xc dXc^T) / (N - 1 + bias)
_COV_X, _COV_T = ("np.swapaxes(np.atleast_2d(" + v + "), 0, (1 - rowvar) * (np.ndim(m) - 1))"
                  for v in ("m", "t"))
_COV_XC, _COV_TC = (f"({v} - np.mean({v}, axis=1, keepdims=True))" for v in (_COV_X, _COV_T))
COV_TANGENT = (f"np.reshape(({_COV_TC} @ np.swapaxes({_COV_XC}, 0, 1) + {_COV_XC} @ "
               f"np.swapaxes({_COV_TC}, 0, 1)) / (np.shape({_COV_X})[1] - 1 + bias), np.shape(ans))")


def extremum_tangent(ref):
    """The tangent of a max or min (``ref``, ``"np.max"``): the mean of ``t`` over
    the entries that attain it."""
    return (f"np.sum(np.where(a == {ref}(a, axis=axis, keepdims=True), t, 0.0), axis=axis, "
            f"keepdims=keepdims) / np.sum(a == {ref}(a, axis=axis, keepdims=True), axis=axis, "
            "keepdims=keepdims)")


def _others(m):
    one = f"np.ones_like({m}[..., :1])"
    left = f"np.cumprod(np.concatenate(({one}, {m}[..., :-1]), axis=-1), axis=-1)"
    right = (f"np.flip(np.cumprod(np.concatenate(({one}, np.flip({m}, -1)[..., :-1]), axis=-1), "
             "axis=-1), -1)")
    return f"{left} * {right}"


_A, _T = "along_last(a, axis)", "along_last(t, axis)"
PROD_TANGENT = f"np.reshape(np.sum({_T} * {_others(_A)}, axis=-1), np.shape(ans))"
# d cumprod_i = sum over k <= i of t_k * prod_{j < k} a_j * prod_{k < j <= i} a_j: the last
# factor is row k of a cumprod over a matrix holding a_j right of the diagonal, 1 elsewhere
_OUTER = f"np.ones_like({_A}[..., :, None] * {_A}[..., None, :])"
CUMPROD_TANGENT = (
    f"from_last(np.sum(np.triu(({_T} * np.cumprod(np.concatenate((np.ones_like({_A}[..., :1]), "
    f"{_A}[..., :-1]), axis=-1), axis=-1))[..., :, None] * np.cumprod(np.where("
    f"np.triu({_OUTER}, 1) > 0.5, {_A}[..., None, :], 1.0), axis=-1)), axis=-2), ans, axis)")
# np.linalg.norm: the Euclidean / Frobenius tangent on any axes; the other ords where the
# call says which axes (vector or matrix norm would otherwise depend on x.ndim)
NORM_EUCLID = "np.sum(x * t, axis=axis, keepdims=keepdims) / np.where(ans == 0.0, 1.0, ans)"
_NORM_K = "np.linalg.norm(x, ord, axis, True)"
_XM, _TM = "np.moveaxis(x, axis, (-2, -1))", "np.moveaxis(t, axis, (-2, -1))"
_SVD = f"np.linalg.svd({_XM}, full_matrices=False)"
_SINGULAR = {"nuc": f"{_SVD}[0] @ {_SVD}[2]",
             2: f"{_SVD}[0][..., :, :1] @ {_SVD}[2][..., :1, :]",
             -2: f"{_SVD}[0][..., :, -1:] @ {_SVD}[2][..., -1:, :]"}


def norm_tangent(ord=None, axis=None, keepdims=False, **_):
    """``np.linalg.norm``'s tangent for the call's ``ord`` and ``axis``."""
    if ord is None or (ord == "fro" and (axis is None or np.ndim(axis) == 1)):
        return NORM_EUCLID
    vector = isinstance(axis, int) or (isinstance(axis, tuple) and len(axis) == 1)
    if vector and ord == 0:
        return "0.0 * ans"
    if vector and ord in (np.inf, -np.inf):
        hit = f"np.abs(x) == {_NORM_K}"
        return (f"np.sum(np.where({hit}, np.sign(x) * t, 0.0), axis=axis, keepdims=keepdims) / "
                f"np.sum({hit}, axis=axis, keepdims=keepdims)")
    if vector and isinstance(ord, (int, float)):
        return (f"np.sum(np.sign(x) * (np.abs(x) / np.where({_NORM_K} == 0.0, 1.0, {_NORM_K})) "
                f"** (ord - 1.0) * t, axis=axis, keepdims=keepdims)")
    if not (isinstance(axis, tuple) and len(axis) == 2):
        return None
    if ord in _SINGULAR:
        return f"np.reshape(np.sum(({_SINGULAR[ord]}) * {_TM}, axis=(-2, -1)), np.shape(ans))"
    if ord in (1, -1, np.inf, -np.inf):
        summed = -2 if ord in (1, -1) else -1      # column sums or row sums of |x|
        sums = f"np.sum(np.abs({_XM}), axis={summed}, keepdims=True)"
        pick = "np.max" if ord > 0 else "np.min"
        hit = f"{sums} == {pick}({sums}, axis=(-2, -1), keepdims=True)"
        return (f"np.reshape(np.sum(np.where({hit}, np.sign({_XM}) * {_TM}, 0.0), "
                f"axis=(-2, -1)) / np.sum({hit}, axis=(-2, -1)), np.shape(ans))")
    return None


norm_tangent.hint = ("pass ord and axis as constants: axis= an int for a vector norm, "
                     "a pair for a matrix norm")
# eigh and cholesky read one triangle of a: the tangent they see is that triangle's,
# mirrored ("L" for cholesky's upper=False)
def _triangle_read(uplo):
    if uplo == "L":
        return "(np.tril(t) + np.swapaxes(np.tril(t, -1), -1, -2))"
    if uplo == "U":
        return "(np.triu(t) + np.swapaxes(np.triu(t, 1), -1, -2))"
    return None


def _vectors_sandwich(uplo):
    """V^T t V with V the eigenvectors of a."""
    read = _triangle_read(uplo)
    vectors = "np.linalg.eigh(a, UPLO)[1]"
    return read and f"np.swapaxes({vectors}, -1, -2) @ {read} @ {vectors}"


def eigvalsh_tangent(UPLO="L", **_):
    """The eigenvalues move by the diagonal of V^T t V."""
    sandwich = _vectors_sandwich(UPLO)
    return sandwich and f"np.diagonal({sandwich}, 0, -2, -1)"


def eigh_tangent(UPLO="L", **_):
    """(diagonal of M, V (F * M)) with M = V^T t V and F_ij = 1 / (w_j - w_i) off the
    diagonal, 0 on it (distinct eigenvalues)."""
    read = _triangle_read(UPLO)
    if read is None:
        return None
    sandwich = f"np.swapaxes(ans[1], -1, -2) @ {read} @ ans[1]"
    eye = "np.identity(np.shape(a)[-1], like=ans[1])"
    gaps = f"np.where({eye} > 0.5, 1.0, ans[0][..., None, :] - ans[0][..., :, None])"
    return (f"(np.diagonal({sandwich}, 0, -2, -1), "
            f"ans[1] @ (np.where({eye} > 0.5, 0.0, 1.0 / {gaps}) * ({sandwich})))")


def cholesky_tangent(upper=False, **_):
    """L (lower triangle of X, its diagonal halved), X = L^-1 t L^-T (t as read)."""
    if upper not in (False, True):
        return None
    lower = "np.swapaxes(ans, -1, -2)" if upper else "ans"
    read = _triangle_read("U" if upper else "L")
    x = f"np.linalg.solve({lower}, np.swapaxes(np.linalg.solve({lower}, {read}), -1, -2))"
    half = f"np.tril({x}) - 0.5 * {x} * np.identity(np.shape(a)[-1], like=ans)"
    out = f"{lower} @ ({half})"
    return f"np.swapaxes({out}, -1, -2)" if upper else out


def matrix_power_tangent(n=None, **_):
    """sum over k of a^k t a^(n-1-k), for a constant n >= 0."""
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        return None
    if n == 0:
        return "0.0 * ans"
    return " + ".join(f"np.linalg.matrix_power(a, {k}) @ t @ np.linalg.matrix_power(a, {n - 1 - k})"
                      for k in range(n))


for _choose in (eigvalsh_tangent, eigh_tangent, cholesky_tangent, matrix_power_tangent):
    _choose.hint = "pass the argument as a constant"
# pinv where the rank is locally constant (Golub & Pereyra): with P = pinv(a),
# -P t P + P P^T t^T (1 - a P) + (1 - P a) t^T P^T P
_TT, _PT = "np.swapaxes(t, -1, -2)", "np.swapaxes(ans, -1, -2)"
PINV_TANGENT = (f"-(ans @ t @ ans) + ans @ {_PT} @ {_TT} @ "
                f"(np.identity(np.shape(a)[-2], like=ans) - a @ ans) + "
                f"(np.identity(np.shape(a)[-1], like=ans) - ans @ a) @ {_TT} @ {_PT} @ ans")
# reduced qr, m >= n: X = Q^T t R^-1, W = X - (its strictly lower part minus that part's
# transpose), upper triangular; dR = W R, dQ = t R^-1 - Q W
_T_RINV = ("np.swapaxes(np.linalg.solve(np.swapaxes(ans[1], -1, -2), np.swapaxes(t, -1, -2)), "
           "-1, -2)")
_QX = f"np.swapaxes(ans[0], -1, -2) @ {_T_RINV}"
_QW = f"(np.triu({_QX}) + np.swapaxes(np.tril({_QX}, -1), -1, -2))"
QR_TANGENT = f"({_T_RINV} - ans[0] @ {_QW}, {_QW} @ ans[1])"
# svd, reduced (Townsend): P = U^T t V, F_ij = 1 / (s_j^2 - s_i^2) off the diagonal;
# dU = U (F * (P S + S P^T)) + (t V - U P) / s, dV likewise with t^T, ds = diag(P)
_V = "np.swapaxes(ans[2], -1, -2)"
_P = f"(np.swapaxes(ans[0], -1, -2) @ t @ {_V})"
_PT = f"np.swapaxes({_P}, -1, -2)"
_EYE_K = "np.identity(np.shape(ans[1])[-1], like=ans[1])"
_F = (f"np.where({_EYE_K} > 0.5, 0.0, 1.0 / np.where({_EYE_K} > 0.5, 1.0, "
      "ans[1][..., None, :] ** 2 - ans[1][..., :, None] ** 2))")
_ROW, _COL = "ans[1][..., None, :]", "ans[1][..., :, None]"
_DU = f"ans[0] @ ({_F} * ({_P} * {_ROW} + {_COL} * {_PT})) + (t @ {_V} - ans[0] @ {_P}) / {_ROW}"
_DV = (f"{_V} @ ({_F} * ({_COL} * {_P} + {_PT} * {_ROW})) + "
       f"(np.swapaxes(t, -1, -2) @ ans[0] - {_V} @ {_PT}) / {_ROW}")
_UV = "np.linalg.svd(a, full_matrices=False)"


def svd_tangent(full_matrices=True, compute_uv=True, **_):
    """The singular values: diag(U^T t V); the reduced factors as above.  With
    full_matrices the vectors past min(m, n) have no unique tangent: refused."""
    if compute_uv is False:
        return f"np.sum({_UV}[0] * (t @ np.swapaxes({_UV}[2], -1, -2)), axis=-2)"
    if compute_uv is True and full_matrices is False:
        return f"({_DU}, np.diagonal({_P}, 0, -2, -1), np.swapaxes({_DV}, -1, -2))"
    return None


svd_tangent.hint = "pass full_matrices=False (or compute_uv=False) as a constant"
# sum(t * (a - average)) / sum(weights) over the axis, the weights as big as a
AVERAGE_TANGENT_WEIGHTS = (
    "np.sum(weights_like(t, a, axis) * (a - np.average(a, axis=axis, weights=weights, "
    "keepdims=True)), axis=axis, keepdims=keepdims) / np.sum(weights_like(weights, a, axis), "
    "axis=axis, keepdims=keepdims)")
CLIP_BOUND_TANGENT = {b: f"np.where(np.logical_and(ans != a, ans == {b}), t, 0.0)"
                      for b in ("a_min", "a_max", "min", "max")}

def unless_nonzero(*params):
    """``singular=`` of a rule whose derivative is finite wherever one of
    ``params`` is not 0 (a division by ``x2``): a call passing a non-zero
    number for one of them needs no guard (``x / 2.0``)."""
    def singular(**known):
        return not any(type(known.get(p)) in (int, float) and known[p] != 0 for p in params)
    return singular


def power_singular(x2=None, **_):
    """``singular=`` of ``x1 ** x2``: regular for a constant exponent that is a
    whole number >= 0 (``x ** 2``: finite at 0 and for negative bases)."""
    return not (type(x2) in (int, float) and x2 >= 0 and x2 == int(x2))


with section("Arithmetic"):
    defadjoint(np.add, BINARY, linear="joint",
               x1="unbroadcast(g, x1)",
               x2="unbroadcast(g, x2)", complex_input=True)
    defadjoint(np.subtract, BINARY, linear="joint",
               x1="unbroadcast(g, x1)",
               x2="unbroadcast(-g, x2)", complex_input=True)
    defadjoint(np.multiply, BINARY, linear=True,
               x1="unbroadcast(g * x2, x1)",
               x2="unbroadcast(g * x1, x2)", complex_input=True)
    defadjoint(np.divide, BINARY, domain="nonzero",      # np.true_divide is np.divide
               singular=unless_nonzero("x2"),
               x1="unbroadcast(g / x2, x1)",
               x2="unbroadcast(-g * ans / x2, x2)",
               tangent={"x1": "t / x2", "x2": "-t * ans / x2"}, complex_input=True)
    defadjoint(np.power, BINARY, fusable=True, domain="positive", singular=power_singular,
               x1="unbroadcast(power_adjoint_base(g, x1, x2), x1)",
               x2="unbroadcast(power_adjoint_exponent(g, ans, x1), x2)",
               tangent={"x1": "t * x2 * np.power(x1, x2 - 1)",
                        "x2": "t * ans * np.log(np.where(x1 > 0, x1, 1.0))"}, complex_input=True)
    defadjoint(np.float_power, BINARY, domain="positive", singular=power_singular,
               x1="unbroadcast(power_adjoint_base(g, x1, x2), x1)",
               x2="unbroadcast(power_adjoint_exponent(g, ans, x1), x2)",
               tangent={"x1": "t * x2 * np.float_power(x1, x2 - 1)",
                        "x2": "t * ans * np.log(np.where(x1 > 0, x1, 1.0))"})
    defadjoint(np.remainder, BINARY, domain="nonzero",    # np.mod and `%`
               singular=unless_nonzero("x2"),
               x1="unbroadcast(g, x1)",
               x2="unbroadcast(-g * np.floor_divide(x1, x2), x2)",
               tangent={"x1": "t * np.ones_like(ans)", "x2": "-t * np.floor_divide(x1, x2)"})
    defadjoint(np.fmod, BINARY, domain="nonzero",
               x1="unbroadcast(g, x1)",
               x2="fmod_adjoint_divisor(g, x1, x2)",
               tangent={"x1": "t * np.ones_like(ans)", "x2": "-t * np.trunc(x1 / x2)"})
    defadjoint(np.negative, UNARY, fusable=True, x="-g", linear="joint", complex_input=True)
    defadjoint(np.positive, UNARY, x="g", linear="joint", complex_input=True)
    defadjoint(np.square, UNARY, fusable=True, x="g * (2 * x)", tangent="t * (2 * x)",
               complex_input=True)
    defadjoint(np.reciprocal, UNARY, fusable=True, domain="nonzero", singular=True, x="-g * ans * ans",
               tangent="-t * ans * ans", complex_input=True)
    defadjoint(np.maximum, BINARY, fusable=True,
               x1="unbroadcast(select_adjoint(g, x1, ans, x2), x1)",
               x2="unbroadcast(select_adjoint(g, x2, ans, x1), x2)",
               tangent=SELECT_TANGENT)
    defadjoint(np.minimum, BINARY, fusable=True,
               x1="unbroadcast(select_adjoint(g, x1, ans, x2), x1)",
               x2="unbroadcast(select_adjoint(g, x2, ans, x1), x2)",
               tangent=SELECT_TANGENT)
    defadjoint(np.fmax, BINARY,
               x1="unbroadcast(select_adjoint(g, x1, ans, x2), x1)",
               x2="unbroadcast(select_adjoint(g, x2, ans, x1), x2)",
               tangent=SELECT_TANGENT)
    defadjoint(np.fmin, BINARY,
               x1="unbroadcast(select_adjoint(g, x1, ans, x2), x1)",
               x2="unbroadcast(select_adjoint(g, x2, ans, x1), x2)",
               tangent=SELECT_TANGENT)
    defadjoint(np.where, "condition, x=None, y=None, /", view=False, piecewise=("condition",),
               advanced_index=True,
               linear="joint",
               x="unbroadcast(np.where(condition, g, 0.0), x)",
               y="unbroadcast(np.where(condition, 0.0, g), y)", complex_input=True)
    defadjoint(np.clip, "a, a_min=None, a_max=None, out=None, *, min=None, max=None", view=False,
               returns="array or scalar", methods="clip",
               a="clip_adjoint(g, a, a_min, a_max, min, max)",
               a_min="clip_adjoint_bound(g, a, a_min, False)",
               a_max="clip_adjoint_bound(g, a, a_max, True)",
               min="clip_adjoint_bound(g, a, min, False)",
               max="clip_adjoint_bound(g, a, max, True)",
               tangent={"a": "np.where(ans == a, t, 0.0)", **CLIP_BOUND_TANGENT})

with section("Elementwise functions"):
    # singular rules' guard, in tangent code that tc.hvp differentiates: the output
    # is the product but where a NaN was replaced by 0 (factor 0 there)
    defadjoint(where_nonzero, "factor, product", name="rt.where_nonzero",
               piecewise=("factor",), linear=("product",),
               product="np.where(ans == product, g, 0.0)")
    defadjoint(np.sqrt, UNARY, fusable=True, domain="positive", singular=True, x="g * 0.5 / ans", tangent="t * 0.5 / ans",
               complex_input=True)
    defadjoint(np.cbrt, UNARY, fusable=True, domain="nonzero", singular=True, x="g / (3.0 * ans * ans)", tangent="t / (3.0 * ans * ans)")
    defadjoint(np.exp, UNARY, fusable=True, x="g * ans", tangent="t * ans", complex_input=True)
    defadjoint(np.expm1, UNARY, fusable=True, x="g * (ans + 1.0)", tangent="t * (ans + 1.0)",
               complex_input=True)
    defadjoint(np.exp2, UNARY, x=f"g * ans * {LOG2}", tangent=f"t * ans * {LOG2}",
               complex_input=True)
    defadjoint(np.log, UNARY, fusable=True, domain="positive", singular=True, x="g / x", tangent="t / x",
               complex_input=True)
    defadjoint(np.log1p, UNARY, fusable=True, domain="positive", singular=True, x="g / (1.0 + x)", tangent="t / (1.0 + x)",
               complex_input=True)
    defadjoint(np.log2, UNARY, fusable=True, domain="positive", singular=True, x=f"g / (x * {LOG2})", tangent=f"t / (x * {LOG2})",
               complex_input=True)
    defadjoint(np.log10, UNARY, fusable=True, domain="positive", singular=True, x=f"g / (x * {LOG10})", tangent=f"t / (x * {LOG10})",
               complex_input=True)
    defadjoint(np.logaddexp, BINARY,
               x1="unbroadcast(g * np.exp(x1 - ans), x1)",
               x2="unbroadcast(g * np.exp(x2 - ans), x2)",
               tangent={"x1": "t * np.exp(x1 - ans)", "x2": "t * np.exp(x2 - ans)"})
    defadjoint(np.logaddexp2, BINARY,
               x1="unbroadcast(g * np.exp2(x1 - ans), x1)",
               x2="unbroadcast(g * np.exp2(x2 - ans), x2)",
               tangent={"x1": "t * np.exp2(x1 - ans)", "x2": "t * np.exp2(x2 - ans)"})
    defadjoint(np.sin, UNARY, fusable=True, x="g * np.cos(x)", tangent="t * np.cos(x)",
               complex_input=True)
    defadjoint(np.cos, UNARY, fusable=True, x="-g * np.sin(x)", tangent="-t * np.sin(x)",
               complex_input=True)
    defadjoint(np.tan, UNARY, fusable=True, domain="unit", x="g * (1.0 + ans * ans)", tangent="t * (1.0 + ans * ans)",
               complex_input=True)
    defadjoint(np.arcsin, UNARY, fusable=True, domain="unit", singular=True, x="g / np.sqrt(1.0 - x * x)", tangent="t / np.sqrt(1.0 - x * x)")
    defadjoint(np.arccos, UNARY, fusable=True, domain="unit", singular=True, x="-g / np.sqrt(1.0 - x * x)", tangent="-t / np.sqrt(1.0 - x * x)")
    defadjoint(np.arctan, UNARY, fusable=True, x="g / (1.0 + x * x)", tangent="t / (1.0 + x * x)")
    defadjoint(np.arctan2, BINARY, fusable=True, domain="nonzero", singular=unless_nonzero("x1", "x2"),
               x1="unbroadcast(g * x2 / (x1 * x1 + x2 * x2), x1)",
               x2="unbroadcast(-g * x1 / (x1 * x1 + x2 * x2), x2)",
               tangent={"x1": "t * x2 / (x1 * x1 + x2 * x2)",
                        "x2": "-t * x1 / (x1 * x1 + x2 * x2)"})
    defadjoint(np.hypot, BINARY, domain="nonzero", singular=unless_nonzero("x1", "x2"),
               fusable=True,
               x1="unbroadcast(g * x1 / ans, x1)",
               x2="unbroadcast(g * x2 / ans, x2)",
               tangent={"x1": "t * x1 / ans", "x2": "t * x2 / ans"})
    defadjoint(np.sinh, UNARY, fusable=True, x="g * np.cosh(x)", tangent="t * np.cosh(x)",
               complex_input=True)
    defadjoint(np.cosh, UNARY, fusable=True, x="g * np.sinh(x)", tangent="t * np.sinh(x)",
               complex_input=True)
    defadjoint(np.tanh, UNARY, fusable=True, x="g * (1.0 - ans * ans)", tangent="t * (1.0 - ans * ans)",
               complex_input=True)
    defadjoint(np.arcsinh, UNARY, fusable=True, x="g / np.sqrt(x * x + 1.0)", tangent="t / np.sqrt(x * x + 1.0)")
    defadjoint(np.arccosh, UNARY, domain="above_one", singular=True, x="g / np.sqrt(x * x - 1.0)", tangent="t / np.sqrt(x * x - 1.0)")
    defadjoint(np.arctanh, UNARY, fusable=True, domain="unit", singular=True, x="g / (1.0 - x * x)", tangent="t / (1.0 - x * x)")
    for _fn in (np.deg2rad, np.radians):
        defadjoint(_fn, UNARY, x="g * 0.017453292519943295", linear="joint")            # pi / 180
    for _fn in (np.rad2deg, np.degrees):
        defadjoint(_fn, UNARY, x="g * 57.29577951308232", linear="joint")               # 180 / pi
    # abs of a complex z: d|z| = Re(conj(z) dz) / |z|; of a real x: sign(x) dx (0 at 0)
    defadjoint(np.absolute, UNARY, fusable=True, domain="nonzero", x="abs_adjoint(g, x)",  # np.abs too
               complex_result=False,
               tangent="np.real(np.conj(x) * t) / np.where(ans == 0, 1.0, ans)", complex_input=True)
    defadjoint(np.fabs, UNARY, fusable=True, domain="nonzero", x="g * np.sign(x)",
               complex_result=False,
               tangent="t * np.sign(x)")
    defadjoint(builtins.abs, UNARY, name="abs", view=False, domain="nonzero", x="abs_adjoint(g, x)",
               complex_result=False,
               tangent="np.real(np.conj(x) * t) / np.where(ans == 0, 1.0, ans)", complex_input=True)
    defadjoint(np.heaviside, BINARY, piecewise=("x1",),
               x2="unbroadcast(g * (x1 == 0), x2)", tangent={"x2": "t * (x1 == 0)"})
    # |x1| with x2's sign: sign(x1) times x2's sign bit (0 at x1 = 0, as abs); x2 only
    # chooses the sign
    defadjoint(np.copysign, BINARY, piecewise=("x2",),
               x1="unbroadcast(g * np.sign(x1) * np.copysign(1.0, x2), x1)",
               tangent={"x1": "t * np.sign(x1) * np.copysign(1.0, x2)"})
    defadjoint(np.sinc, UNARY, view=False, x="sinc_adjoint(g, x, ans)",
               tangent="t * np.where(x == 0, 0.0, (np.cos(3.141592653589793 * x) - ans)"
                       " / np.where(x == 0, 1.0, x))")
    defadjoint(np.nan_to_num, "x, copy=True, nan=0.0, posinf=None, neginf=None", view="x", new_unless="copy",
               x="g * np.isfinite(x)", tangent="t * np.isfinite(x)")
    defadjoint(np.real, "val", view="val", attributes="real", complex_result=False,
               val="real_adjoint(g, val)", linear="joint", complex_input=True)
    defadjoint(np.imag, "val", view="val", attributes="imag", complex_result=False,
               val="imag_adjoint(g, val)", linear="joint", complex_input=True)
    defadjoint(np.conjugate, UNARY, methods="conj conjugate",       # np.conj too
               returns="array or scalar",
               method_views={"conj": "x", "conjugate": "x"},   # x.conj() of a real x is x
               x="conj_adjoint(g, x)", linear="joint", complex_input=True)

with section("Linear algebra"):
    defadjoint(np.matmul, BINARY, linear=True,
               x1="matmul_adjoint_x1(g, x1, x2)",
               x2="matmul_adjoint_x2(g, x1, x2)", complex_input=True)
    defadjoint(np.dot, "a, b, out=None", view=False, methods="dot", linear=True,
               returns="array or scalar",
               a="dot_adjoint_a(g, a, b)",
               b="dot_adjoint_b(g, a, b)", complex_input=True)
    defadjoint(np.outer, "a, b, out=None", view=False, returns="array or scalar", linear=True,
               a="outer_adjoint_a(g, a, b)",
               b="outer_adjoint_b(g, a, b)", complex_input=True)
    defadjoint(np.vdot, "a, b, /", view=False, linear=True,
               a="np.reshape(g * np.ravel(b), np.shape(a))",
               b="np.reshape(g * np.ravel(a), np.shape(b))")
    defadjoint(numpy_function("matrix_transpose"), "x, /", view="x", x="np.matrix_transpose(g)", linear=True,
               complex_input=True)
    defadjoint(np.inner, "a, b, /", view=False, returns="array or scalar", linear=True,
               a="inner_adjoint_a(g, a, b)",
               b="inner_adjoint_b(g, a, b)", complex_input=True)
    defadjoint(np.kron, "a, b", view=False, returns="array or scalar", linear=True,
               a="kron_adjoint(g, a, b, True)",
               b="kron_adjoint(g, a, b, False)", complex_input=True)
    defadjoint(np.cross, "a, b, axisa=-1, axisb=-1, axisc=-1, axis=None", view=False, linear=True,
               returns="array or scalar",
               only={"axisa": (-1,), "axisb": (-1,), "axisc": (-1,), "axis": (None, -1)},
               a="unbroadcast(np.cross(b, g), a)",
               b="unbroadcast(np.cross(g, a), b)", complex_input=True)
    defadjoint(np.tensordot, "a, b, axes=2", view=False, returns="array or scalar", linear=True,
               a="tensordot_adjoint(g, a, b, axes, True)",
               b="tensordot_adjoint(g, a, b, axes, False)", complex_input=True)
    defadjoint(np.einsum, "subscripts, /, *operands, out=None, optimize=False", view="operands", linear=True,
               sequence=("operands",),
               operands="einsum_adjoint(g, subscripts, operands, i)", complex_input=True)
    defadjoint(np.trace, "a, offset=0, axis1=0, axis2=1, dtype=None, out=None", view=False, methods="trace",
               returns="array or scalar",
               a="trace_adjoint(g, a, offset, axis1, axis2)", linear=True, complex_input=True)
    defadjoint(np.diagonal, "a, offset=0, axis1=0, axis2=1", view="a", methods="diagonal",
               a="diagonal_adjoint(g, a, offset, axis1, axis2)", linear=True, complex_input=True)
    defadjoint(np.diag, "v, k=0", view="v", v="diag_adjoint(g, v, k)", linear=True,
               complex_input=True)
    defadjoint(np.tril, "m, k=0", view=False, m="np.tril(g, k)", linear=True, complex_input=True)
    defadjoint(np.triu, "m, k=0", view=False, m="np.triu(g, k)", linear=True, complex_input=True)
    defadjoint(np.linalg.solve, "a, b", view=False, name="np.linalg.solve",
               a="solve_adjoint_a(g, a, b, ans)",
               b="solve_adjoint_b(g, a, b)",
               tangent={"a": SOLVE_TANGENT_A, "b": "np.linalg.solve(a, t)"})
    defadjoint(np.linalg.inv, "a", view=False, name="np.linalg.inv", a="inv_adjoint(g, ans)",
               tangent="-(ans @ t @ ans)")
    defadjoint(np.linalg.det, "a", view=False, name="np.linalg.det", a="det_adjoint(g, a, ans)",
               tangent="ans * np.trace(np.linalg.solve(a, t), axis1=-2, axis2=-1)")
    defadjoint(np.linalg.slogdet, "a", view=False, name="np.linalg.slogdet", a="slogdet_adjoint(g, a)",
               tangent="(0.0 * ans[0], np.trace(np.linalg.solve(a, t), axis1=-2, axis2=-1))")
    defadjoint(np.linalg.cholesky, "a, /, *, upper=False", view=False, name="np.linalg.cholesky",
               a="cholesky_adjoint(g, ans, upper)", tangent=cholesky_tangent)
    defadjoint(np.linalg.eigh, "a, UPLO='L'", view=False, name="np.linalg.eigh",
               a="eigh_adjoint(g, ans, UPLO)", tangent=eigh_tangent)
    defadjoint(np.linalg.eigvalsh, "a, UPLO='L'", view=False, name="np.linalg.eigvalsh",
               a="eigh_adjoint(Parts((g, 0.0)), np.linalg.eigh(a, UPLO), UPLO)",
               tangent=eigvalsh_tangent)
    defadjoint(np.linalg.svd, "a, full_matrices=True, compute_uv=True, hermitian=False", view=False,
               name="np.linalg.svd", only={"hermitian": (False,)},
               a="svd_adjoint(g, a, ans, full_matrices, compute_uv)", tangent=svd_tangent)
    defadjoint(np.linalg.pinv, "a, rcond=None, hermitian=False, *, rtol=None", view=False,
               name="np.linalg.pinv", only={"hermitian": (False,)},
               a="pinv_adjoint(g, a, ans)", tangent=PINV_TANGENT)
    defadjoint(np.linalg.qr, "a, mode='reduced'", view=False, name="np.linalg.qr",
               only={"mode": ("reduced",)}, a="qr_adjoint(g, a, ans)", tangent=QR_TANGENT)
    defadjoint(np.linalg.matrix_power, "a, n", view=False, name="np.linalg.matrix_power",
               a="matrix_power_adjoint(g, a, n)", tangent=matrix_power_tangent)
    defadjoint(numpy_function("linalg.vector_norm"), "x, /, *, axis=None, keepdims=False, ord=2", view=False,
               name="np.linalg.vector_norm", domain="nonzero", only={"ord": (2,)},
               x="vector_norm_adjoint(g, x, ans, axis, keepdims)", tangent=NORM_EUCLID)
    defadjoint(numpy_function("vecdot"), "x1, x2, /, *, axis=None",
               x1="unbroadcast(vecdot_adjoint(g, x2, axis), x1)",
               x2="unbroadcast(vecdot_adjoint(g, x1, axis), x2)", linear=True)
    defadjoint(np.linalg.norm, "x, ord=None, axis=None, keepdims=False", view=False, reduces=True, name="np.linalg.norm",
               domain="nonzero", x="norm_adjoint(g, x, ans, ord, axis, keepdims)",
               tangent=norm_tangent)

with section("Reductions and statistics"):
    defadjoint(np.sum, REDUCE, view=False, reduces=True, methods="sum", a="repeat_to_match(g, a, axis, keepdims)",
               returns="array or scalar",
               linear=True, complex_input=True)
    defadjoint(np.mean, "a, axis=None, dtype=None, out=None, keepdims=False", view=False,
               returns="array or scalar",
               reduces=True, methods="mean",
               a="mean_adjoint(g, a, axis, keepdims)", linear=True, complex_input=True)
    defadjoint(np.nansum, REDUCE, view=False, reduces=True, only={"initial": (None,)},
               a="np.where(np.isnan(a), 0.0, repeat_to_match(g, a, axis, keepdims))",
               tangent="np.sum(np.where(np.isnan(a), 0.0, t), axis=axis, keepdims=keepdims)")
    defadjoint(np.nanmean, "a, axis=None, dtype=None, out=None, keepdims=False", view=False, reduces=True,
               a="nanmean_adjoint(g, a, axis, keepdims)",
               tangent="np.sum(np.where(np.isnan(a), 0.0, t), axis=axis, keepdims=keepdims) / "
                       "np.sum(np.logical_not(np.isnan(a)), axis=axis, keepdims=keepdims)")
    for _fn in available("trapezoid", "trapz"):
        defadjoint(_fn, "y, x=None, dx=1.0, axis=-1", view=False,
                   y="trapezoid_adjoint(g, y, x, dx, axis)", linear=True)
    defadjoint(np.average, "a, axis=None, weights=None, returned=False, *, keepdims=False", view=False, reduces=True,
               only={"returned": (False,)},
               a="average_adjoint(g, a, axis, weights, keepdims)",
               weights="average_adjoint_weights(g, a, ans, axis, weights, keepdims)",
               tangent={"a": "np.average(t, axis=axis, weights=weights, keepdims=keepdims)",
                        "weights": AVERAGE_TANGENT_WEIGHTS})
    defadjoint(np.var, VARIANCE, methods="var", only=PLAIN_VARIANCE, view=False, reduces=True,
               returns="array or scalar",
               a="var_adjoint(g, a, axis, ddof, keepdims)",
               tangent="2.0 * np.sum((a - np.mean(a, axis=axis, keepdims=True)) * t, axis=axis, "
                       "keepdims=keepdims) / (np.size(a) / np.size(ans) - ddof)")
    defadjoint(np.std, VARIANCE, view=False, reduces=True, methods="std", only=PLAIN_VARIANCE,
               returns="array or scalar",
               a="std_adjoint(g, a, ans, axis, ddof, keepdims)",
               tangent="np.sum((a - np.mean(a, axis=axis, keepdims=True)) * t, axis=axis, "
                       "keepdims=keepdims) / ((np.size(a) / np.size(ans) - ddof) * ans)")
    defadjoint(np.cov, "m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, "
                       "aweights=None, *, dtype=None", view=False,
               only={"y": (None,), "ddof": (None,), "fweights": (None,), "aweights": (None,)},
               m="cov_adjoint(g, m, rowvar, bias)", tangent=COV_TANGENT)
    for _fn, _q in ((np.quantile, "q"), (np.percentile, "q / 100.0")):
        defadjoint(_fn, "a, q, axis=None, out=None, overwrite_input=False, method='linear', "
                        "keepdims=False, *, weights=None, interpolation=None", view=False,
                   only={"method": ("linear",), "weights": (None,), "interpolation": (None,)},
                   a=f"quantile_weights(a, {_q}, axis) * repeat_to_match(g, a, axis, keepdims)",
                   tangent=f"np.sum(quantile_weights(a, {_q}, axis) * t, axis=axis, "
                           "keepdims=keepdims)")
    defadjoint(np.median, "a, axis=None, out=None, overwrite_input=False, keepdims=False", view=False, reduces=True,
               a="quantile_weights(a, 0.5, axis) * repeat_to_match(g, a, axis, keepdims)",
               tangent="np.sum(quantile_weights(a, 0.5, axis) * t, axis=axis, keepdims=keepdims)")
    defadjoint(np.prod, REDUCE, view=False, reduces=True, methods="prod", only={"initial": (None,)},
               returns="array or scalar",
               a="prod_adjoint(g, a, ans, axis, keepdims)", tangent=PROD_TANGENT)
    for _fn, _method, _ref in ((np.max, "max", "np.max"), (np.min, "min", "np.min"),
                               (np.amax, "", "np.max"), (np.amin, "", "np.min")):
        defadjoint(_fn, EXTREMUM, view=False, reduces=True, methods=_method, only={"initial": (None,)},
                   returns="array or scalar",
                   a="extremum_adjoint(g, a, ans, axis, keepdims)",
                   tangent=extremum_tangent(_ref))
    for _fn, _ref in ((np.nanmax, "np.nanmax"), (np.nanmin, "np.nanmin")):
        defadjoint(_fn, EXTREMUM + ", where=True", view=False, reduces=True, only={"initial": (None,), "where": (True,)},
                   a="extremum_adjoint(g, a, ans, axis, keepdims)",
                   tangent=extremum_tangent(_ref))
    defadjoint(np.ptp, "a, axis=None, out=None, keepdims=False", view=False, reduces=True,
               a="extremum_adjoint(g, a, np.max(a, axis=axis, keepdims=keepdims), axis, keepdims)"
                 " - extremum_adjoint(g, a, np.min(a, axis=axis, keepdims=keepdims), axis, "
                 "keepdims)",
               tangent=f"({extremum_tangent('np.max')}) - ({extremum_tangent('np.min')})")
    defadjoint(np.cumsum, "a, axis=None, dtype=None, out=None", view=False, methods="cumsum",
               returns="array or scalar",
               a="cumsum_adjoint(g, a, axis)", linear=True, complex_input=True)
    defadjoint(numpy_function("cumulative_sum"),
               "x, /, *, axis=None, dtype=None, out=None, include_initial=False", view=False,
               only={"include_initial": (False,)}, x="cumsum_adjoint(g, x, axis)", linear=True)
    defadjoint(np.cumprod, "a, axis=None, dtype=None, out=None", view=False, methods="cumprod",
               returns="array or scalar",
               a="cumprod_adjoint(g, a, ans, axis)", tangent=CUMPROD_TANGENT)
    # a ufunc's accumulate along one axis (axis=None, which numpy refuses, raises as there):
    # np.add's is np.cumsum's, np.multiply's np.cumprod's, np.maximum's and np.minimum's a
    # running extremum, each step's maximum(ans[i - 1], a[i])
    ACCUMULATE = "a, /, axis=0, dtype=None, out=None"
    defadjoint(np.add.accumulate, ACCUMULATE, name="np.add.accumulate", view=False,
               a="cumsum_adjoint(g, a, axis)", linear=True, complex_input=True)
    defadjoint(np.multiply.accumulate, ACCUMULATE, name="np.multiply.accumulate", view=False,
               a="cumprod_adjoint(g, a, ans, axis)", tangent=CUMPROD_TANGENT)
    for _ufunc in (np.maximum, np.minimum):
        defadjoint(_ufunc.accumulate, ACCUMULATE, name=f"np.{_ufunc.__name__}.accumulate",
                   view=False, a="running_extremum_adjoint(g, a, ans, axis)",
                   tangent="running_extremum_tangent(t, a, ans, axis)")
    # that tangent, linear in t (tc.hvp differentiates it): its adjoint is the transpose
    defadjoint(running_extremum_tangent, "t, a, ans, axis=0",
               name="rt.running_extremum_tangent", view=False, piecewise=("a", "ans"),
               t="running_extremum_adjoint(g, a, ans, axis)", linear=("t",))
    # np.add.reduceat: the sums of the segments indices[j]:indices[j + 1] along one axis
    defadjoint(np.add.reduceat, "a, indices, /, axis=0, dtype=None, out=None",
               name="np.add.reduceat", view=False, piecewise=("indices",),
               a="reduceat_adjoint(g, a, indices, axis)", linear=("a",))
    defadjoint(np.diff, "a, n=1, axis=-1, prepend=None, append=None", view="a", new_unless="n",
               a="diff_adjoint(g, a, n, axis, prepend, append)",
               linear=("a", "prepend", "append"), complex_input=True)
    defadjoint(np.gradient, "f, *varargs, axis=None, edge_order=1", view=False,
               f="gradient_adjoint(g, f, varargs, axis, edge_order)", linear=True)

with section("Shape"):
    defadjoint(np.reshape, "a, /, shape, order='C', *, copy=None", view="a", varargs_methods="reshape",
               returns="array or scalar", a="reshape_like(g, a, order)", linear=True, complex_input=True)
    defadjoint(np.ravel, "a, order='C'", view="a", methods="ravel flatten", returns="array or scalar",
               method_views={"flatten": False}, a="reshape_like(g, a, order)", linear=True,
               complex_input=True)
    defadjoint(np.transpose, "a, axes=None", view="a", varargs_methods="transpose",
               returns="array or scalar",
               a="transpose_adjoint(g, axes)", linear=True, complex_input=True)
    defadjoint(np.swapaxes, "a, axis1, axis2", view="a", methods="swapaxes",
               a="np.swapaxes(g, axis1, axis2)", linear=True, complex_input=True)
    defadjoint(np.moveaxis, "a, source, destination", view="a", a="np.moveaxis(g, destination, source)", linear=True,
               complex_input=True)
    defadjoint(np.rollaxis, "a, axis, start=0", view="a", a="rollaxis_adjoint(g, a, axis, start)", linear=True,
               complex_input=True)
    defadjoint(np.expand_dims, "a, axis", view="a", a="reshape_like(g, a)", linear=True,
               complex_input=True)
    defadjoint(np.squeeze, "a, axis=None", view="a", methods="squeeze", a="reshape_like(g, a)", linear=True,
               returns="array or scalar", complex_input=True)
    for _fn in (np.atleast_1d, np.atleast_2d, np.atleast_3d):
        defadjoint(_fn, "ary, /", view="ary", ary="reshape_like(g, ary)", linear=True,
                   complex_input=True)
    defadjoint(np.broadcast_to, "array, shape, subok=False", view="array", array="unbroadcast(g, array)", linear=True,
               complex_input=True)
    defadjoint(np.flip, "m, axis=None", view="m", keeps_shape=True, m="np.flip(g, axis)", linear=True,
               complex_input=True)
    defadjoint(np.flipud, "m", view="m", m="np.flipud(g)", linear=True, complex_input=True)
    defadjoint(np.fliplr, "m", view="m", m="np.fliplr(g)", linear=True, complex_input=True)
    defadjoint(np.rot90, "m, k=1, axes=(0, 1)", view="m", m="np.rot90(g, -k, axes)", linear=True,
               complex_input=True)
    defadjoint(np.roll, "a, shift, axis=None", view=False, keeps_shape=True,
               returns="array or scalar",
               a="np.roll(g, np.negative(shift), axis)", linear=True, complex_input=True)
    defadjoint(np.repeat, "a, repeats, axis=None", view=False, methods="repeat",
               returns="array or scalar",
               a="repeat_adjoint(g, a, repeats, axis)", linear=True, complex_input=True)
    defadjoint(np.tile, "A, reps", view=False, returns="array or scalar",
               A="tile_adjoint(g, A, reps)", linear=True, complex_input=True)
    defadjoint(np.pad, "array, pad_width, mode='constant', *, constant_values=0, "
                       "end_values=0, reflect_type='even', stat_length=None", view=False,
               only={"mode": ("constant", "edge", "reflect", "symmetric", "wrap"),
                     "reflect_type": ("even",)},
               array="pad_adjoint(g, array, pad_width, mode)",
               tangent="np.pad(t, pad_width, mode)")
    defadjoint(np.sort, "a, axis=-1, kind=None, order=None, *, stable=None", view=False,
               only={"order": (None,)}, a="sort_adjoint(g, a, axis, kind)",
               tangent="np.take_along_axis(t, np.argsort(a, axis=axis, kind='stable'), axis=axis)")
    defadjoint(np.partition, "a, kth, axis=-1, kind='introselect', order=None", view=False,
               only={"order": (None,)}, a="partition_adjoint(g, a, kth, axis, kind)",
               tangent="np.take_along_axis(t, np.argpartition(a, kth, axis=axis, kind=kind), "
                       "axis=axis)")
    defadjoint(np.take_along_axis, "arr, indices, axis=-1", view=False, linear=True,
               arr="take_along_axis_adjoint(g, arr, indices, axis)")
    defadjoint(np.take, "a, indices, axis=None, out=None, mode='raise'", view=False,
               methods="take", piecewise=("indices",), only={"out": (None,)},
               a="take_adjoint(g, a, indices, axis, mode)", linear=True, complex_input=True)
    # np.bincount(x, w, n): out[k] = sum of w where x == k, so w's adjoint is g read
    # back at x (x is integers: no derivative, and locally constant)
    defadjoint(np.bincount, "x, /, weights=None, minlength=0", view=False, returns="array",
               piecewise=("x",), weights="np.take(g, x)", linear=True)
    defadjoint(np.compress, "condition, a, axis=None, out=None", view=False,
               piecewise=("condition",), only={"out": (None,)},
               a="compress_adjoint(g, condition, a, axis)", linear=True, complex_input=True)
    defadjoint(np.extract, "condition, arr", view=False, piecewise=("condition",),
               arr="compress_adjoint(g, np.ravel(condition), arr)", linear=True,
               complex_input=True)
    defadjoint(np.choose, "a, choices, out=None, mode='raise'", view=False,
               sequence=("choices",), piecewise=("a",), only={"out": (None,)},
               choices=("choose_adjoint(g, a, choices, i, mode)",
                        "choose_adjoint_all(g, a, choices, mode)"),
               linear="joint", complex_input=True)
    defadjoint(along_last, "a, axis=None", name="rt.along_last", linear=True,
               a="from_last(g, a, axis)")
    defadjoint(from_last, "x, like, axis=None", name="rt.from_last", piecewise=("like",),
               linear=True, x="along_last(g, axis)")
    defadjoint(weights_like, "weights, a, axis=None", name="rt.weights_like", linear=True,
               piecewise=("a",), weights="weights_like_adjoint(g, weights, axis)")
    defadjoint(np.copy, "a, order='K', subok=False", view=False, keeps_shape=True, methods="copy",
               returns="array", ndim="like",
               a="g", linear="joint", complex_input=True)
    defadjoint(np.asarray, "a, dtype=None, order=None, *, device=None, copy=None, like=None", view="a",
               a="g", linear="joint", complex_input=True)
    defadjoint(builtins.float, "x=0.0, /", name="float", view=False, x="reshape_like(g, x)",
               linear="joint")
    # np.float64(x), np.float32(s): a float scalar, or an array of x's values in that
    # dtype (x itself when it has it already)
    # (named as spelled: np.longdouble's __name__ is float128 on some NumPy releases)
    for _type, _name in ((np.float64, "float64"), (np.float32, "float32"),
                         (np.longdouble, "longdouble")):
        defadjoint(_type, "x=0.0, /", name=f"np.{_name}", view="x",
                   x="reshape_like(g, x)", linear="joint")
    defadjoint(np.array, "object, dtype=None, *, copy=True, order='K', subok=False, ndmin=0, "
                         "ndmax=0, like=None", view="object", new_unless="copy",
               returns="array", ndim="like",
               object="reshape_like(g, object)", linear="joint", complex_input=True)
    # a dtype= given at run time (np.asarray(x, dtype=dt)): the result passes the
    # derivative on only where dt is not an integer or bool dtype
    # (a real floating dt keeps the real part of a complex x: through_cast takes the
    # real part of its adjoint and tangent)
    defadjoint(cast_result, "x, dtype", name="rt.cast_result", x="through_cast(g, dtype)",
               tangent="through_cast(t, dtype)", complex_input=True)
    defadjoint(through_cast, "x, dtype", name="rt.through_cast", x="through_cast(g, dtype)",
               linear=True, complex_input=True)
    # `a op= b` on an array keeps a's dtype and shape (or raises): a's value reaches
    # the result through `a op b`; a itself only gives the dtype
    defadjoint(in_place_result, "result, target", name="rt.in_place_result", view="result",
               piecewise=("target",), result="g", tangent="t", complex_input=True)
    # a subscript write's tangent into an array of unknown dtype (inexact_arrays.py)
    defadjoint(stored_tangent, "t, target", name="rt.stored_tangent", view="t",
               piecewise=("target",), t="stored_tangent(g, target)", linear=("t",))

with section("Joining and splitting (sequence parameters: `i` is the element index)"):
    defadjoint(np.concatenate, "arrays, /, axis=0, out=None, *, dtype=None, casting='same_kind'", view=False,
               returns="array",
               sequence=("arrays",),
               arrays="concatenate_adjoint(g, arrays, axis, i)", linear="joint", complex_input=True)
    defadjoint(np.stack, "arrays, axis=0, out=None, *, dtype=None, casting='same_kind'", view=False,
               returns="array",
               sequence=("arrays",),
               arrays=("stack_adjoint(g, axis, i)", "np.moveaxis(g, axis, 0)"), linear="joint",
               complex_input=True)
    for _fn in (np.vstack, *available("row_stack")):
        defadjoint(_fn, "tup, *, dtype=None, casting='same_kind'", view=False, sequence=("tup",),
                   returns="array",
                   tup="vstack_adjoint(g, tup, i)", linear="joint", complex_input=True)
    defadjoint(np.hstack, "tup, *, dtype=None, casting='same_kind'", view=False, sequence=("tup",),
               returns="array",
               tup="hstack_adjoint(g, tup, i)", linear="joint", complex_input=True)
    defadjoint(np.column_stack, "tup", view=False, sequence=("tup",),
               tup="column_stack_adjoint(g, tup, i)", linear="joint", complex_input=True)
    defadjoint(np.append, "arr, values, axis=None", view=False,
               arr="append_adjoint(g, arr, values, axis, True)",
               values="append_adjoint(g, arr, values, axis, False)", linear="joint",
               complex_input=True)
    defadjoint(row_join, "*items", name="np.r_", sequence=("items",),
               items="row_join_adjoint(g, items, i)", linear="joint")
    defadjoint(column_join, "*items", name="np.c_", sequence=("items",),
               items="column_join_adjoint(g, items, i)", linear="joint")
    # the array only gives the diagonal's length
    # sorted(xs) of items known when compiling: item k of the sorted list, at the
    # position rt.sorted_order found (desugar/extreme_items.py)
    defconstant(sorted_order, "values, reverse=False", name="rt.sorted_order", view=False)
    # max(u) of an array: u[rt.max_position(u)], the item Python's max returns
    # (desugar/extreme_items.py)
    defconstant(max_position, "values", name="rt.max_position", view=False)
    defconstant(min_position, "values", name="rt.min_position", view=False)
    defadjoint(item_at, "order, k, *items", name="rt.item_at", view=False,
               sequence=("items",), piecewise=("order", "k"), linear=("items",),
               items="item_at_adjoint(g, order, k, i)")
    defadjoint(diagonal_values, "val, a", name="rt.diagonal_values", view="val",
               piecewise=("a",), val="diagonal_values_adjoint(g, val, a)",
               tangent="diagonal_values(t, a)")
    defadjoint(append_row, "rows, item", name="list.append",
               rows="append_row_adjoint_rows(g)", item="append_row_adjoint_item(g)",
               linear="joint", complex_input=True)
    defadjoint(repeat_row, "item, times", name="[item] * n", item="repeat_row_adjoint(g, item)",
               linear=("item",), complex_input=True)
    # the item only sets the dtype: the output is locally constant in it
    defadjoint(rows_holding, "rows, item", name="hs[t] = item", piecewise=("item",),
               rows="rows_holding_adjoint(g, rows)", view="rows", keeps_shape=True,
               linear=("rows",), complex_input=True)
    # a dict's tangent holds the tangents of its keys that have one (a missing key
    # is a zero, as in its adjoint): the two contributions add key by key
    defadjoint(dict_set, "d, key, value", name="d[key] = value",
               d="dict_set_adjoint_dict(g, key)", value="dict_set_adjoint_value(g, key)",
               tangent={"d": "dict_set_tangent_dict(t, key)",
                        "value": "dict_set_tangent_value(t, key)"})
    defadjoint(dict_get, "d, key", name="d[key]", d="dict_get_adjoint(g, ans, key)",
               tangent="dict_get_tangent(t, key, ans)")
    # the tangent code's own helpers, linear in the tangents (tc.hvp differentiates them)
    defadjoint(dict_set_tangent_dict, "t, key", name="rt.dict_set_tangent_dict",
               t="dict_set_adjoint_dict(g, key)", linear=True)
    defadjoint(dict_set_tangent_value, "t, key", name="rt.dict_set_tangent_value",
               t="dict_set_adjoint_value(g, key)", linear=True)
    defadjoint(dict_get_tangent, "t, key, like", name="rt.dict_get_tangent",
               t="dict_get_adjoint(g, ans, key)", piecewise=("like",), linear=("t",))
    defadjoint(builtins.sum, "iterable, /, start=0", name="sum", view=False, sequence=("iterable",),
               iterable=("unbroadcast(g, iterable[i])",
                         "np.broadcast_to(g, np.shape(iterable))"),
               start="unbroadcast(g, start)", linear="joint", complex_input=True)
    defadjoint(np.select, "condlist, choicelist, default=0", view=False, sequence=("choicelist",),
               piecewise=("condlist",),
               choicelist="select_adjoint_choice(g, condlist, choicelist, i)",
               default="unbroadcast(select_adjoint_choice(g, condlist, choicelist, "
                       "len(condlist)), default)", linear="joint", complex_input=True)
    defadjoint(np.split, "ary, indices_or_sections, axis=0", view="ary",
               ary="split_adjoint(g, ary, indices_or_sections, axis)", linear="joint",
               complex_input=True)
    defadjoint(np.array_split, "ary, indices_or_sections, axis=0", view="ary",
               ary="split_adjoint(g, ary, indices_or_sections, axis)", linear="joint",
               complex_input=True)
    defadjoint(np.vsplit, "ary, indices_or_sections", view="ary",
               ary="split_adjoint(g, ary, indices_or_sections, 0)", linear="joint",
               complex_input=True)
    defadjoint(np.hsplit, "ary, indices_or_sections", view="ary",
               ary="split_adjoint(g, ary, indices_or_sections, 1 if np.ndim(ary) > 1 else 0)", linear="joint",
               complex_input=True)
    defadjoint(np.dsplit, "ary, indices_or_sections", view="ary",
               ary="split_adjoint(g, ary, indices_or_sections, 2)", linear="joint",
               complex_input=True)
    # (its facts row: a view unless it copies; copy=False is refused)
    defadjoint(np.meshgrid, "*xi, copy=True, sparse=False, indexing='xy'", view=True,
               new_unless="copy", sequence=("xi",), only={"copy": (True,)},
               xi="meshgrid_adjoint(g, xi, i, sparse, indexing)", linear="joint",
               complex_input=True)

with section("Building arrays"):
    defadjoint(np.linspace, "start, stop, num=50, endpoint=True, retstep=False, dtype=None, "
                            "axis=0, *, device=None", view=False, returns="array", ndim=1,
               only={"retstep": (False,)},
               start="linspace_adjoint(g, start, stop, num, endpoint, axis)",
               stop="linspace_adjoint(g, start, stop, num, endpoint, axis, True)", linear="joint")
    defadjoint(np.arange, "start_or_stop, /, stop=None, step=1, *, dtype=None, device=None, "
                          "like=None", view=False, returns="array", ndim=1, advanced_index=True,
               piecewise=("stop",),
               start_or_stop="arange_adjoint_start(g, start_or_stop, stop)",
               step="arange_adjoint_step(g)",
               tangent={"start_or_stop": "t * np.ones_like(ans) * (stop is not None)",
                        "step": "t * np.arange(np.size(ans))"})
    defadjoint(np.full, "shape, fill_value, dtype=None, order='C', *, device=None, like=None", view=False,
               returns="array", ndim="shape",
               fill_value="sum_all(g, fill_value)", linear="joint")
    defadjoint(np.full_like, "a, fill_value, dtype=None, order='K', subok=True, shape=None, *, "
                             "device=None", view=False, returns="array", ndim="like",
               piecewise=("a",), fill_value="sum_all(g, fill_value)", linear="joint")

with section("Indexing"):
    defadjoint(operator.getitem, "a, index, /", name="getitem", complex_input=True,
               a="getitem_adjoint(g, a, index)", linear="joint")
    # np.add.at(a, indices, b) is the write a = rt.add_at(a, indices, b)
    # (lower/effect_calls.py): every occurrence of a repeated index adds once
    for _fn, _sign in ((add_at, ""), (subtract_at, "-")):
        defadjoint(_fn, "a, indices, b, /", name=f"np.{_fn.__name__.replace('_', '.')}",
                   view=False, keeps_shape=True, piecewise=("indices",), a="g",
                   b=f"{_sign}unbroadcast(gathered_at(g, ans, indices), b)",
                   tangent={"a": "t", "b": f"{_sign}scattered_at(t, ans, indices)"})
    # np.multiply.at / np.divide.at: a repeated index multiplies (divides) once per
    # occurrence; a value's adjoint is the product of the others, formed without division
    defadjoint(multiply_at, "a, indices, b, /", name="np.multiply.at", view=False,
               keeps_shape=True, piecewise=("indices",), a="multiplied_at(g, a, indices, b)",
               b="unbroadcast(factor_adjoint_at(g, a, indices, b), b)",
               tangent={"a": "multiplied_at(t, a, indices, b)",
                        "b": "factor_tangent_at(t, a, indices, b)"})
    defadjoint(divide_at, "a, indices, b, /", name="np.divide.at", view=False,
               keeps_shape=True, piecewise=("indices",), a="divided_at(g, a, indices, b)",
               b="unbroadcast(divisor_adjoint_at(g, ans, indices, b), b)",
               tangent={"a": "divided_at(t, a, indices, b)",
                        "b": "divisor_tangent_at(t, ans, indices, b)"})
    # their helpers in forward mode's tangents (what tc.hvp differentiates)
    defadjoint(multiplied_at, "t, a, indices, b", name="rt.multiplied_at", view=False,
               piecewise=("a", "indices"), t="multiplied_at(g, a, indices, b)",
               b="unbroadcast(factor_adjoint_at(g, t, indices, b), b)")
    defadjoint(factor_tangent_at, "t, a, indices, b", name="rt.factor_tangent_at",
               view=False, piecewise=("indices",),
               t="unbroadcast(factor_adjoint_at(g, a, indices, b), t)",
               a="g * factor_tangent_at(t, np.ones_like(a), indices, b)",
               b="unbroadcast(factor_tangent_adjoint_at(g, t, a, indices, b), b)")
    defadjoint(divided_at, "t, a, indices, b", name="rt.divided_at", view=False,
               piecewise=("a", "indices"), t="divided_at(g, a, indices, b)",
               b="unbroadcast(divisor_adjoint_at(g, ans, indices, b), b)")
    defadjoint(divisor_tangent_at, "t, quotient, indices, b", name="rt.divisor_tangent_at",
               view=False, piecewise=("indices",),
               t="unbroadcast(divisor_adjoint_at(g, quotient, indices, b), t)",
               quotient="g * divisor_tangent_at(t, np.ones_like(quotient), indices, b)",
               b="unbroadcast(divisor_tangent_adjoint_at(g, t, quotient, indices, b), b)")
    defadjoint(scattered_at, "t, like, indices", name="rt.scattered_at", view=False,
               piecewise=("like", "indices"),
               t="unbroadcast(gathered_at(g, like, indices), t)", linear=("t",))

with section("Constants (no derivative)"):
    for _fn, _ndim in ((np.zeros, "shape"), (np.ones, "shape"), (np.empty, "shape"),
                       (np.zeros_like, "like"), (np.ones_like, "like"), (np.empty_like, "like"),
                       (np.eye, 2), (np.identity, 2)):
        defconstant(_fn, "*args, **kwargs", view=False, returns="array", ndim=_ndim,
                    result_dtype="like" if _ndim == "like" else "float64")
    for _fn in (np.shape, np.ndim, np.size, builtins.len):
        defconstant(_fn, "*args, **kwargs", view=False)
    defconstant(np.sign, "*args, **kwargs", view=False, fusable=True)
    # masks (advanced_index: x[np.isnan(x)] is a copy)
    _MASKS = (np.isnan, np.isinf, np.isfinite, np.signbit, np.equal, np.not_equal, np.less,
              np.less_equal, np.greater, np.greater_equal, np.logical_and, np.logical_or,
              np.logical_not, np.logical_xor, np.isclose)
    for _fn in (np.floor, np.ceil, np.rint, np.trunc,
                np.fix, np.floor_divide, np.isnan, np.isinf, np.isfinite, np.signbit,
                np.equal, np.not_equal, np.less, np.less_equal, np.greater,
                np.greater_equal, np.logical_and, np.logical_or, np.logical_not,
                np.logical_xor, np.count_nonzero, np.argpartition, np.searchsorted,
                np.digitize, np.isclose, np.allclose, np.array_equal):
        defconstant(_fn, "*args, **kwargs", view=False, advanced_index=_fn in _MASKS)
    for _fn, _method in ((np.argmax, "argmax"), (np.argmin, "argmin"), (np.any, "any"),
                         (np.all, "all")):
        defconstant(_fn, "*args, **kwargs", methods=_method, view=False)
    for _fn, _method in ((np.round, "round"), (np.around, "")):
        defconstant(_fn, "*args, **kwargs", methods=_method, view=False,
                    returns="array or scalar")
    defconstant(np.argsort, "*args, **kwargs", methods="argsort", view=False,
                advanced_index=True)   # at least 1-d, even for a 0-d array
    defconstant(quantile_weights, "a, q, axis=None", name="rt.quantile_weights")
    defconstant(np.nonzero, "*args, **kwargs", methods="nonzero", view=False, advanced_index=True)

with section("Signals (1-D)"):
    defadjoint(np.polyval, "p, x", view=False, p="polyval_adjoint_p(g, p, x)",
               x="g * np.polyval(np.polyder(p), x)",
               tangent={"p": "np.polyval(t, x)", "x": "t * np.polyval(np.polyder(p), x)"})
    defadjoint(np.polyder, "p, m=1", view="p", new_unless="m", only={"m": (1,)}, p="polyder_adjoint(g, p)",
               linear=True)
    defadjoint(np.convolve, "a, v, mode='full'", view=False, a="convolve_adjoint(g, a, v, mode)",
               returns="array or scalar",
               v="convolve_adjoint(g, v, a, mode)", linear=True)
    defadjoint(np.correlate, "a, v, mode='valid'", view=False, a="correlate_adjoint_a(g, a, v, mode)",
               v="correlate_adjoint_v(g, a, v, mode)", linear=True)
    defadjoint(np.interp, "x, xp, fp, left=None, right=None, period=None", view=False,
               returns="array or scalar",
               only={"left": (None,), "right": (None,), "period": (None,)},
               x="interp_adjoint_x(g, x, xp, fp)", fp="interp_adjoint_fp(g, x, xp, fp)",
               tangent={"x": "t * interp_slope(x, xp, fp)", "fp": "np.interp(x, xp, t)"})
    defadjoint(interp_slope, "x, xp, fp", name="rt.interp_slope", piecewise=("x",),
               linear=True, fp="interp_slope_adjoint_fp(g, x, xp, fp)")

FFT = "a, n=None, axis=-1, norm=None, out=None"
FFTN = "a, s=None, axes=None, norm=None, out=None"
FFT2 = "a, s=None, axes=(-2, -1), norm=None, out=None"
with section("Fourier transforms (complex values: the adjoint of u + iv is dL/du - i dL/dv)"):
    defadjoint(np.fft.fft, FFT, view=False, complex_result=True, name="np.fft.fft", linear=True,
               a="fft_adjoint(g, a, n, axis, norm)", complex_input=True)
    defadjoint(np.fft.ifft, FFT, view=False, complex_result=True, name="np.fft.ifft", linear=True,
               a="fft_adjoint(g, a, n, axis, norm, True)", complex_input=True)
    defadjoint(np.fft.rfft, FFT, view=False, complex_result=True, name="np.fft.rfft", linear=True,
               a="rfft_adjoint(g, a, n, axis, norm)", complex_input=True)
    defadjoint(np.fft.irfft, FFT, view=False, name="np.fft.irfft", linear=True,
               complex_result=False,
               a="irfft_adjoint(g, a, n, axis, norm)", complex_input=True)
    defadjoint(np.fft.fft2, FFT2, view=False, complex_result=True, name="np.fft.fft2", linear=True,
               a="fftn_adjoint(g, a, s, axes, norm)", complex_input=True)
    defadjoint(np.fft.ifft2, FFT2, view=False, name="np.fft.ifft2", linear=True,
               complex_result=True,
               a="fftn_adjoint(g, a, s, axes, norm, True)", complex_input=True)
    defadjoint(np.fft.fftn, FFTN, view=False, complex_result=True, name="np.fft.fftn", linear=True,
               a="fftn_adjoint(g, a, s, axes, norm)", complex_input=True)
    defadjoint(np.fft.ifftn, FFTN, view=False, name="np.fft.ifftn", linear=True,
               complex_result=True,
               a="fftn_adjoint(g, a, s, axes, norm, True)", complex_input=True)
    defadjoint(np.fft.rfft2, FFT2, view=False, complex_result=True, name="np.fft.rfft2", linear=True,
               a="rfftn_adjoint(g, a, s, axes, norm)", complex_input=True)
    defadjoint(np.fft.irfft2, FFT2, view=False, name="np.fft.irfft2", linear=True,
               complex_result=False,
               a="irfftn_adjoint(g, a, s, axes, norm)", complex_input=True)
    defadjoint(np.fft.rfftn, FFTN, view=False, complex_result=True, name="np.fft.rfftn", linear=True,
               a="rfftn_adjoint(g, a, s, axes, norm)", complex_input=True)
    defadjoint(np.fft.irfftn, FFTN, view=False, name="np.fft.irfftn", linear=True,
               complex_result=False,
               a="irfftn_adjoint(g, a, s, axes, norm)", complex_input=True)
    defadjoint(np.fft.fftshift, "x, axes=None", view=False, name="np.fft.fftshift", linear=True,
               x="np.fft.ifftshift(g, axes)", complex_input=True)
    defadjoint(np.fft.ifftshift, "x, axes=None", view=False, name="np.fft.ifftshift", linear=True,
               x="np.fft.fftshift(g, axes)", complex_input=True)
    defconstant(np.fft.fftfreq, "n, d=1.0, device=None", name="np.fft.fftfreq", view=False)
    defconstant(np.fft.rfftfreq, "n, d=1.0, device=None", name="np.fft.rfftfreq", view=False)

# Python's math module: on a float each function is its NumPy twin, and so is its rule
# (ODE right-hand sides written with math.exp, as in Hodgkin-Huxley scripts).
MATH_TWINS = ((math.exp, np.exp), (math.expm1, np.expm1), (math.log1p, np.log1p),
              (math.log2, np.log2), (math.log10, np.log10), (math.sqrt, np.sqrt),
              (math.sin, np.sin), (math.cos, np.cos), (math.tan, np.tan), (math.asin, np.arcsin),
              (math.acos, np.arccos), (math.atan, np.arctan), (math.sinh, np.sinh),
              (math.cosh, np.cosh), (math.tanh, np.tanh), (math.asinh, np.arcsinh),
              (math.acosh, np.arccosh), (math.atanh, np.arctanh), (math.fabs, np.fabs),
              (math.degrees, np.degrees), (math.radians, np.radians),
              (math.atan2, np.arctan2), (math.pow, np.power), (math.hypot, np.hypot),
              (math.fmod, np.fmod), (math.exp2, np.exp2), (math.cbrt, np.cbrt),
              (math.copysign, np.copysign))
with section("Python's math module, max, min and pow (floats; the rule of the NumPy function named)"):
    for _fn, _twin in MATH_TWINS:
        _rule = lookup(_twin)
        defadjoint(_fn, UNARY if len(_rule.params) == 1 else BINARY, name=f"math.{_fn.__name__}",
                   domain=_rule.domain, tangent=_rule.tangents or None, linear=_rule.linear,
                   singular=_rule.singular, piecewise=_rule.piecewise, **_rule.templates)
    defadjoint(math.log, "x, base=None, /", name="math.log", domain="positive",
               only={"base": (None,)}, singular=True, x="g / x", tangent="t / x")
    # d erf(x) = 2 / sqrt(pi) exp(-x^2) dx, and erfc = 1 - erf
    defadjoint(math.erf, UNARY, name="math.erf", x="g * 2.0 / np.sqrt(np.pi) * np.exp(-x * x)",
               tangent="t * 2.0 / np.sqrt(np.pi) * np.exp(-x * x)")
    defadjoint(math.erfc, UNARY, name="math.erfc",
               x="-g * 2.0 / np.sqrt(np.pi) * np.exp(-x * x)",
               tangent="-t * 2.0 / np.sqrt(np.pi) * np.exp(-x * x)")
    # math.fsum adds exactly, then rounds once: each item's derivative is 1, as in sum
    defadjoint(math.fsum, "seq, /", name="math.fsum", view=False, sequence=("seq",),
               seq=("np.broadcast_to(g, np.shape(seq[i]))", "np.broadcast_to(g, np.shape(seq))"),
               linear="joint")
    # math.prod: each item's derivative is start times the product of the others (exact
    # where an item is 0); of an array, its rows are the items
    defadjoint(math.prod, "iterable, /, *, start=1", name="math.prod", view=False,
               sequence=("iterable",), only={"start": (1,)},
               iterable=("others_product(g, iterable, i)", "others_products(g, iterable)"))
    for _fn, _twin in ((builtins.max, np.maximum), (builtins.min, np.minimum)):   # of two numbers
        _rule = lookup(_twin)
        defadjoint(_fn, BINARY, name=_fn.__name__, tangent=_rule.tangents, **_rule.templates)
    _rule = lookup(np.power)  # pow(a, b) is a ** b (no third, modulus, argument)
    defadjoint(builtins.pow, BINARY, name="pow", domain=_rule.domain, singular=_rule.singular,
               tangent=_rule.tangents, **_rule.templates)

# rng.normal(loc, scale) draws z and returns loc + scale * z, so with the draw replayed
# d/dloc = 1 and d/dscale = z = (ans - loc) / scale; likewise each location-scale family,
# uniform (low + (high - low) * u), exponential (scale * e), lognormal (exp(mean + sigma z))
_LOCATION_SCALE = dict(loc="unbroadcast(g, loc)",
                       scale="unbroadcast(g * (ans - loc) / scale, scale)",
                       tangent={"loc": "t + 0.0 * ans", "scale": "t * (ans - loc) / scale"})
DRAW_RULES = {
    **{family: ("loc=0.0, scale=1.0, size=None", _LOCATION_SCALE)
       for family in ("normal", "laplace", "logistic", "gumbel")},
    "uniform": ("low=0.0, high=1.0, size=None", dict(
        low="unbroadcast(g * (high - ans) / (high - low), low)",
        high="unbroadcast(g * (ans - low) / (high - low), high)",
        tangent={"low": "t * (high - ans) / (high - low)",
                 "high": "t * (ans - low) / (high - low)"})),
    "exponential": ("scale=1.0, size=None", dict(
        scale="unbroadcast(g * ans / scale, scale)", tangent="t * ans / scale")),
    "lognormal": ("mean=0.0, sigma=1.0, size=None", dict(
        mean="unbroadcast(g * ans, mean)",
        sigma="unbroadcast(g * ans * (np.log(ans) - mean) / sigma, sigma)",
        tangent={"mean": "t * ans", "sigma": "t * ans * (np.log(ans) - mean) / sigma"})),
}
with section("Random draws (the numbers drawn kept: the pathwise derivative in the parameters)"):
    # rng.normal(...) of a generator object is spelled normal(rng, ...) in generated
    # code; np.random.normal(...) draws from NumPy's global state.  A draw changes
    # its generator: never pure, so never dropped as dead
    for _draw, (_signature, _templates) in DRAW_RULES.items():
        defadjoint(random_state.DRAWS[_draw], "generator, " + _signature, name=f"rng.{_draw}",
                   view=False, pure=False, domain="positive", **_templates)
        defadjoint(getattr(np.random, _draw), _signature, name=f"np.random.{_draw}",
                   view=False, pure=False, domain="positive", **_templates)
    # rng.choice(n, size, p=w): indices drawn by inverting the cumulative sum of `p` at
    # uniform draws -- locally constant in `p` (a particle filter's resampling); `a` an
    # array would be a gather of its items, which no rule here follows (refused)
    defadjoint(random_state.DRAWS["choice"],
               "generator, a, size=None, replace=True, p=None, axis=0, shuffle=True",
               name="rng.choice", view=False, pure=False, piecewise=("p",))
    defadjoint(np.random.choice, "a, size=None, replace=True, p=None",
               name="np.random.choice", view=False, pure=False, piecewise=("p",))
    # the standard library's (random.gauss draws from the module's hidden Random)
    for _fn in (random.gauss, random.normalvariate):
        defadjoint(_fn, "mu=0.0, sigma=1.0", name=f"random.{_fn.__name__}", view=False,
                   pure=False, domain="positive", mu="g", sigma="g * (ans - mu) / sigma",
                   tangent={"mu": "t", "sigma": "t * (ans - mu) / sigma"})
    defadjoint(random.uniform, "a, b", name="random.uniform", view=False, pure=False,
               domain="positive", a="g * (b - ans) / (b - a)", b="g * (ans - a) / (b - a)",
               tangent={"a": "t * (b - ans) / (b - a)", "b": "t * (ans - a) / (b - a)"})
    defadjoint(random.expovariate, "lambd=1.0", name="random.expovariate", view=False,
               pure=False, domain="positive", lambd="-g * ans / lambd",
               tangent="-t * ans / lambd")
    defadjoint(random.lognormvariate, "mu, sigma", name="random.lognormvariate", view=False,
               pure=False, domain="positive", mu="g * ans",
               sigma="g * ans * (np.log(ans) - mu) / sigma",
               tangent={"mu": "t * ans", "sigma": "t * ans * (np.log(ans) - mu) / sigma"})

# pure, but not rules: x.astype(float) is refused
defmethod("astype", view=False, pure=True, returns="array or scalar")
defpure("item")

# Facts-only rows: functions and methods without a rule (a differentiated call is
# refused) whose memory the compiler must know: the aliasing fence follows a view
# and a write through it (docs/inplace.md).  A NumPy function with no row at all
# is treated as a possible view.
for _fn in (np.asanyarray, np.ascontiguousarray, np.asfortranarray, np.asarray_chkfinite,
            np.require, np.real_if_close, np.trim_zeros, np.broadcast_arrays, np.asmatrix,
            np.lib.stride_tricks.as_strided, np.lib.stride_tricks.sliding_window_view,
            getattr(np, "unstack", None), getattr(np, "permute_dims", None),   # NumPy 2.x
            getattr(np.linalg, "matrix_transpose", None)):
    defprimitive(_fn, view=True)
for _fn in (np.logspace, np.geomspace):
    defprimitive(_fn, view=False, returns="array", ndim=1)
for _fn in (np.isneginf, np.isposinf, np.flatnonzero, np.argwhere, np.ix_, np.isin):
    defprimitive(_fn, view=False, advanced_index=True)    # masks and index arrays
defprimitive(np.angle, view=False, complex_result=False)
defprimitive(np.ndarray, view="buffer", new_unless="buffer")   # np.ndarray(shape): new
for _fn, _written in ((np.copyto, "dst"), (np.put, "a"), (np.place, "arr"),
                      (np.putmask, "a"), (np.fill_diagonal, "a"),
                      (np.put_along_axis, "arr"), (np.random.shuffle, "x")):
    defprimitive(_fn, view=False, writes=_written)
# Python's builtins whose result is a new object holding no reference to the arguments
for _fn in (int, bool, round, range, isinstance, str, print, type, complex, repr, hash, id,
            divmod, pow):
    defprimitive(_fn, view=False)
# array methods that are not rules: x.view() shares x's memory, x.take(i) is new,
# x.fill(0) writes into x (the lowering refuses it); random generators' draws are new
defmethod("view", "__array__", "newbyteorder", view=True)
defmethod("tolist", "searchsorted", "take", "compress", "ptp", "count", "index", view=False)
defmethod("standard_normal", "normal", "uniform", "integers", "random", "randn", "rand",
          "randint", "choice", "permutation", "exponential", "poisson", "binomial", "beta",
          "gamma", "lognormal", "multivariate_normal", view=False, pure=False)
defmethod("sort", "fill", "resize", "put", "itemset", "partition", "setfield", "byteswap",
          "setflags", "__iadd__", writes=True)

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
    where_nonzero: "singular rules' guard (`singular=`): `product`, but 0 where it is NaN and "
                   "`factor` is 0",
    np.exp: "needs `ans`",
    np.float_power: "as np.power",
    np.heaviside: "no adjoint for `x1`; `x2` (the value at 0) where x1 == 0",
    np.copysign: "sign(x1) times the sign of x2 (0 at x1 = 0); no adjoint for `x2`",
    numpy_function("vecdot"): "real input",
    numpy_function("linalg.vector_norm"): "ord 2; any axes; 0 at the zero vector",
    np.nanmax: "NaN entries get 0; ties share `g` equally",
    np.nanmin: "NaN entries get 0; ties share `g` equally",
    np.ptp: "the max's and the min's adjoints (ties share)",
    numpy_function("cumulative_sum"): "`include_initial=True` is refused",
    np.convolve: "every mode; real input",
    np.polyval: "`p` a 1-D array; `x` any shape",
    np.polyder: "`p` a 1-D array, first derivative only (`m=1`)",
    np.quantile: "method 'linear' and one `q` (an array `q` is refused when the gradient runs); "
                 "the two order statistics around q take (1 - f, f); ties: the stable sort order",
    np.percentile: "as np.quantile (q in percent)",
    np.median: "as np.quantile with q = 0.5: an even count shares `g` between the middle two",
    np.cov: "`m` only (`y`, `ddof`, `fweights`, `aweights` refused); rowvar and bias",
    np.correlate: "every mode; real input",
    np.interp: "`x` and `fp` (`xp` constant); at an inner knot the slope of the interval on "
               "its right, 0 outside [xp[0], xp[-1]]; `left`, `right`, `period` refused",
    builtins.max: "of two numbers (as np.maximum: ties split `g` half/half); of one array "
                  "(`max(u)`): the item Python returns, `u[k]` (desugar/extreme_items.py); of a "
                  "list or more arguments: the pairs max(max(a, b), c); `key=`, `default=`: refused",
    builtins.min: "of two numbers (as np.minimum: ties split `g` half/half); of one array "
                  "(`min(u)`): the item Python returns, `u[k]` (desugar/extreme_items.py); of a "
                  "list or more arguments: the pairs min(min(a, b), c); `key=`, `default=`: refused",
    math.prod: "`start=` other than 1 is refused",
    builtins.pow: "as np.power (`a ** b`); the three-argument `pow(a, b, mod)` is refused",
    math.log: "natural logarithm; `math.log(x, base)` is refused (write math.log(x) / math.log(base))",
    np.expm1: "needs `ans`",
    np.exp2: "needs `ans`",
    np.tan: "needs `ans`",
    np.tanh: "needs `ans`",
    np.absolute: "subgradient 0 at 0; complex input: conj(x) / |x|",
    builtins.abs: "subgradient 0 at 0; complex input: conj(x) / |x|",
    np.linalg.norm: "needs `ans`; every ord of vectors and matrices; 0 at the zero vector",
    np.sum: "read-only broadcast view of `g`; `where=` unsupported",
    np.remainder: "also the `%` operator; d/dx2 = -floor(x1 / x2)",
    np.fmod: "d/dx2 = -trunc(x1 / x2)",
    np.fmax: "ties split `g` half/half",
    np.fmin: "ties split `g` half/half",
    np.sinc: "0 at x = 0",
    np.nan_to_num: "0 where x is not finite",
    np.real: "real or complex input",
    np.imag: "real input: the result is 0",
    np.conjugate: "real or complex input",
    np.cross: "3-vectors along the last axis",
    np.einsum: "any subscripts: implicit or explicit output, `...`, repeated indices",
    np.tensordot: "axes an int or a pair of sequences",
    np.linalg.solve: "batched; `b` a vector or a stack of matrices",
    np.linalg.det: "inf for a singular matrix",
    np.linalg.slogdet: "the sign carries no derivative",
    np.linalg.cholesky: "reads one triangle of `a` (as NumPy does)",
    np.linalg.eigh: "distinct eigenvalues; reads one triangle of `a`",
    np.linalg.eigvalsh: "distinct eigenvalues",
    np.linalg.svd: "distinct non-zero singular values; with full_matrices the vectors past "
                   "min(m, n) must not be read (refused at run time)",
    np.linalg.pinv: "where the rank is locally constant",
    np.linalg.qr: "m >= n",
    np.linalg.matrix_power: "n >= 0",
    np.average: "`weights` may be 1-D along `axis`",
    np.cumprod: "exact with zeros",
    np.take_along_axis: "repeated indices accumulate",
    interp_slope: "tangent rules' helper: the slope of np.interp in x (second order)",
    along_last: "tangent rules' helper: the reduced axes merged into one last axis",
    from_last: "tangent rules' helper: the inverse of `along_last`",
    weights_like: "tangent rules' helper: `np.average`'s weights broadcast to `a`",
    np.nansum: "0 at NaN entries",
    np.nanmean: "0 at NaN entries; the count excludes them",
    np.vdot: "real input",
    np.gradient: "any axes (several: a tuple of derivatives, unpack or index it); any spacing and edge_order",
    np.sort: "ties: the stable order",
    np.pad: "modes that copy elements",
    np.linspace: "linear in `start` and `stop`",
    np.arange: "`start` and `step` (the length does not vary)",
    np.select: "`default` and every choice",
    builtins.sum: "of a list of arrays (broadcast like `+`) or of an array's rows",
    np.split: "the pieces are a tuple: unpack or index it",
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
    np.column_stack: "sequence parameter `tup`",
    row_join: "`np.r_[a, b, ...]` of arrays and numbers (no slices or string directives)",
    column_join: "`np.c_[a, b, ...]` of arrays and numbers",
    diagonal_values: "`np.fill_diagonal(a, val)`'s values: `val` repeated or cut to the "
                     "diagonal's length, as NumPy writes them",
    append_row: "`hs.append(h)` on a list built in a loop, held as its rows "
                "(docs/python_support.md)",
    repeat_row: "`[h0] * n` with a run-time `n`, written row by row",
    rows_holding: "before `hs[t] = h` on such a list: its rows in a dtype that holds `h` "
                  "(`[0] * n` filled with floats)",
    dict_set: "`hs[t] = h` on a dict written at run-time keys (docs/python_support.md)",
    dict_get: "`hs[t]` on a dict written at run-time keys",
    dict_set_tangent_dict: "forward mode's tangent of `d[key] = value` (what `tc.hvp` "
                           "differentiates)",
    dict_set_tangent_value: "forward mode's tangent of `d[key] = value`",
    dict_get_tangent: "forward mode's tangent of `d[key]`",
    np.asarray: "identity; a cast to an integer or bool dtype has derivative 0 (any rule's "
                "`dtype=`: decided at compile time, else at run time by `rt.cast_result`)",
    cast_result: "a result given `dtype=` at run time: derivative 0 where it truncates",
    through_cast: "the adjoint and tangent of `rt.cast_result`",
    in_place_result: "`a op= b` on an array: the result in `a`'s dtype and shape, or NumPy's "
                     "error (an int array `+= 0.5`, a result of another shape)",
    stored_tangent: "forward mode's tangent of a subscript write into an array of unknown "
                    "dtype: zero into an integer or bool array (docs/inplace.md)",
    np.array: "identity up to `ndmin`; a (nested) list of arrays becomes np.stack",
    builtins.float: "of a number or 0-d array",
    np.fft.fft: "`n` pads or cuts the input; every `norm`",
    np.fft.ifft: "`n` pads or cuts the input; every `norm`",
    np.fft.rfft: "real input",
    np.fft.irfft: "reads the first n // 2 + 1 entries; the imaginary parts of the first "
                  "(and, n even, the last) are ignored",
    np.fft.fftn: "`s` pads or cuts the input along `axes`",
    np.fft.ifftn: "`s` pads or cuts the input along `axes`",
    np.fft.rfftn: "real input; the half spectrum along the last of `axes`",
    np.fft.irfftn: "the half spectrum along the last of `axes`",
    add_at: "`np.add.at(a, indices, b)`, the write `a = rt.add_at(a, indices, b)`: "
            "every occurrence of a repeated index adds; into an integer or bool `a` "
            "`b` has no derivative (docs/inplace.md)",
    subtract_at: "`np.subtract.at(a, indices, b)`: as np.add.at",
    multiply_at: "`np.multiply.at(a, indices, b)`: every occurrence of a repeated index "
                 "multiplies; a value's adjoint is the product of the others (zeros "
                 "included)",
    divide_at: "`np.divide.at(a, indices, b)`: every occurrence of a repeated index divides",
    multiplied_at: "forward mode's tangent of np.multiply.at's array (what `tc.hvp` "
                   "differentiates)",
    factor_tangent_at: "forward mode's tangent of np.multiply.at's values",
    divided_at: "forward mode's tangent of np.divide.at's array",
    divisor_tangent_at: "forward mode's tangent of np.divide.at's values",
    scattered_at: "forward mode's tangent of np.add.at's values (what `tc.hvp` "
                  "differentiates)",
    operator.getitem: "repeated integer indices accumulate (np.add.at); "
                      "in loops prefer `accumulate_at`",
}
for _fn in available("trapezoid", "trapz"):
    NOTES[_fn] = "`y` only (sample points `x` or `dx` constant); y of any shape along `axis`"
NOTES.pop(None, None)   # the rows of functions the running NumPy lacks (numpy_versions)
