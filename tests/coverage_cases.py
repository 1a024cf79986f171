"""The gradient cases of tests/test_grad_coverage.py: NumPy calls as users write
them, over shapes from 0-d to 3-d, broadcasting pairs, axis/keepdims and ties.

A case is ``Case(body, args)``: ``body`` is the function's body (its last line
is returned), ``args`` maps each parameter to ``(shape, kind)``: ``kind`` is a
registry domain (``"real"``, ``"positive"`` ...) or a matrix kind (``"spd"``:
symmetric positive definite, ``"square"``: well conditioned, ``"ties"``: pairs of
equal values).  Element-wise and reduction cases are derived from the registry
(each rule's ``domain=``); the rest are listed by hand, one group per section.
"""

import builtins
import math
from dataclasses import dataclass, field

import numpy as np

from tangent_ckpt.adjoints import numpy_rules, registry
from tangent_ckpt.adjoints.numpy_versions import VERSIONS, numpy_function
from tangent_ckpt.adjoints.rule_text import parse_signature
from tangent_ckpt.runtime.keyed import dict_get, dict_set
from tangent_ckpt.runtime.primitive_adjoints.extreme_positions import item_at
from tangent_ckpt.runtime.primitive_adjoints.array_adjoints import diagonal_values
from tangent_ckpt.runtime.primitive_adjoints.numpy_adjoints import (cast_result, in_place_result,
                                                                   stored_tangent, through_cast)
from tangent_ckpt.runtime.rows import append_row, repeat_row, rows_holding

try:
    import scipy.special  # noqa: F401
    HAVE_SCIPY = True
except ImportError:
    HAVE_SCIPY = False


@dataclass
class Case:
    body: str
    args: dict
    wrt: tuple = None
    tol: float = 1e-5
    eps: float = None   # the finite-difference step, where the default's is too small
    covers: tuple = field(default=())   # the rules it exercises (for the coverage check)
    min_numpy: str = None   # the first NumPy release whose semantics the case needs

    @property
    def id(self):
        shapes = ",".join("x".join(map(str, s)) or "0d" for s, _ in self.args.values())
        return f"{self.body.splitlines()[-1][:60]}[{shapes}]"


def spelled(rule):
    """How the user writes the function: ``np.sin``, ``abs``, ``scipy.special.erf``."""
    if rule.fn is builtins.abs:
        return "abs"
    return rule.name


def _signature_is(rule, text):
    return rule.params == parse_signature(text)


def elementwise_rules():
    """The element-wise rules: one- and two-argument rules of the element-wise sections."""
    unary, binary = [], []
    sections = [fns for title, fns in numpy_rules.SECTIONS.items()
                if title in ("Arithmetic", "Elementwise functions") or title.startswith("scipy")]
    for rule in map(registry.lookup, [fn for fns in sections for fn in fns]):
        if rule.constant or rule.vjp is not None:
            continue
        if _signature_is(rule, numpy_rules.UNARY) and rule.fn is not np.negative:
            unary.append(rule)
        elif _signature_is(rule, numpy_rules.BINARY) and rule.fn is not np.matmul:
            binary.append(rule)
    return unary, binary


UNARY_SHAPES = [(), (3,), (2, 3), (2, 1, 3)]
BROADCAST_PAIRS = [((), (3,)), ((3,), ()), ((3,), (3,)), ((2, 3), (3,)), ((2, 1), (1, 3)),
                   ((2, 1, 3), (4, 1))]


def unary_cases():
    rules, _ = elementwise_rules()
    return [Case(f"{spelled(r)}(x)", {"x": (s, r.domain)}, covers=(r.fn,))
            for r in rules for s in UNARY_SHAPES]


def binary_cases():
    _, rules = elementwise_rules()
    cases = []
    for r in rules:
        for s1, s2 in BROADCAST_PAIRS:
            first = "positive" if r.fn in (np.power, np.float_power) else "real"
            cases.append(Case(f"{spelled(r)}(x, y)", {"x": (s1, first), "y": (s2, r.domain)},
                              covers=(r.fn,)))
    cases += [Case("x % y", {"x": (s1, "real"), "y": (s2, "nonzero")}, covers=(np.remainder,))
              for s1, s2 in BROADCAST_PAIRS]
    return cases


AXES = [((3,), [None, 0, -1]), ((2, 3), [None, 0, 1, (0, 1)]),
        ((2, 3, 2), [None, 1, -1, (0, 2)])]


def reduction_cases():
    cases = []
    calls = [("np.sum", "real"), ("np.mean", "real"), ("np.prod", "nonzero"),
             ("np.max", "real"), ("np.min", "real"), ("np.amax", "real"),
             ("np.var", "real"), ("np.std", "real"), ("np.var", "real", ", ddof=1"),
             ("np.average", "real"), ("np.linalg.norm", "nonzero"), ("np.nanmax", "real"),
             ("np.nanmin", "real"), ("np.ptp", "real"), ("np.linalg.vector_norm", "nonzero")]
    for name, kind, *extra in calls:
        extra = extra[0] if extra else ""
        for shape, axes in AXES:
            for axis in axes:
                for keepdims in (False, True):
                    if name == "np.average" and keepdims and axis is None:
                        continue
                    if name == "np.linalg.norm" and axis is None and len(shape) > 2:
                        continue
                    cases.append(Case(f"{name}(x, axis={axis!r}, keepdims={keepdims}{extra})",
                                      {"x": (shape, kind)}))
    for shape, axes in AXES:                                  # ties: pairs of equal values
        for axis in axes:
            for name in ("np.max", "np.min"):
                cases.append(Case(f"{name}(x, axis={axis!r})", {"x": (shape, "ties")}))
    if HAVE_SCIPY:
        cases += [Case(f"scipy.special.logsumexp(x, axis={axis!r}, keepdims={keepdims})",
                       {"x": (shape, "real")})
                  for shape, axes in AXES for axis in axes for keepdims in (False, True)]
        cases += [Case(f"scipy.special.polygamma({n}, x)", {"x": ((2, 3), "positive")})
                  for n in (1, 2)]
        cases += [Case(f"scipy.special.{f}(x, axis={axis!r})", {"x": (shape, "real")})
                  for f in ("softmax", "log_softmax") for shape, axes in AXES for axis in axes]
        # every mode and boundary; a kernel larger than the image (SciPy swaps them in 'valid')
        cases += [Case(f"scipy.signal.convolve2d(x, y, {mode!r}, {boundary!r}, z)",
                       {"x": (image, "real"), "y": (kernel, "real"), "z": ((), "real")})
                  for mode in ("full", "same", "valid") for boundary in ("fill", "wrap", "symm")
                  for image, kernel in (((4, 5), (2, 3)), ((2, 3), (3, 4)))]
        cases += [Case(f"scipy.spatial.distance_matrix(x, y, {p})",
                       {"x": ((4, 3), "real"), "y": ((2, 3), "real")})
                  for p in (1, 2, 3, "np.inf")]
    cases += [Case(f"np.{f}(x, axis={a})", {"x": (s, "positive")})
              for f in ("cumsum", "cumprod") for s, a in [((4,), 0), ((2, 3), 1), ((2, 3), 0),
                                                          ((2, 3, 2), -1), ((2, 3), None)]]
    cases += [Case("np.cumprod(x * (x > 1.0), axis=0)", {"x": ((4, 2), "positive")})]  # zeros
    # a ufunc's accumulate along one axis (the default 0, positional, keyword, negative)
    cases += [Case(f"np.{u}.accumulate(x{a})", {"x": (s, "real")})
              for u in ("add", "multiply", "maximum", "minimum")
              for s, a in [((5,), ""), ((2, 3), ", 1"), ((3, 2), ", axis=0"), ((2, 3, 2), ", -1")]]
    cases += [Case("np.multiply.accumulate(x * (x > 1.0), 1)", {"x": ((2, 4), "positive")})]
    # the running extremum's tangent, a rule of its own (tc.hvp differentiates it)
    cases += [Case("rt.running_extremum_tangent(x, y, np.maximum.accumulate(y, 1), 1)",
                   {"x": ((2, 4), "real"), "y": ((2, 4), "real")}, wrt=(0,))]
    cases += [Case(f"G = np.meshgrid({args})\nG[0] * G[1] ** 2 + G[-1]",
                   {"x": (sx, "real"), "y": (sy, "real")})
              for args, sx, sy in [("x, y", (4,), (3,)), ("x, y, indexing='ij'", (4,), (3,)),
                                   ("x, y, x", (2,), (3,)), ("x, y", (2, 2), ()),
                                   ("x * 1.0, y, copy=True, sparse=False", (3,), (2,))]]
    cases += [Case(f"np.add.reduceat(x, {i}{a})", {"x": (s, "real")})
              for s, i, a in [((5,), [0, 2, 3], ""), ((2, 6), [0, 3, 1, 4], ", axis=1"),
                              ((4, 2), "np.array([2, 0])", ""), ((3, 5), [4], ", -1")]]
    cases += [Case(f"np.{f}(x{q}, axis={axis!r}, keepdims={keepdims})", {"x": (shape, "real")})
              for f, q in (("median", ""), ("quantile", ", 0.3"), ("percentile", ", 80.0"))
              for shape, axes in AXES for axis in axes for keepdims in (False, True)]
    cases += [Case(f"np.cov(x{kw})", {"x": (s, "real")})
              for s, kw in [((3, 5), ""), ((5, 2), ", rowvar=False"), ((6,), ""),
                            ((2, 4), ", bias=True"), ((4,), ", rowvar=False")]]
    cases += [Case(f"np.cumulative_sum(x{kw})", {"x": (s, "real")})
              for s, kw in [((4,), ""), ((2, 3), ", axis=1"), ((2, 3, 2), ", axis=0")]]
    cases += [Case(f"np.{f}(np.where(c[:3, :4] > 0.0, np.nan, x){kw})", {"x": ((3, 4), "real")})
              for f in ("nanmax", "nanmin") for kw in ("", ", axis=0")]   # NaN entries get 0
    cases += [Case(f"np.prod(x * (x > 1.0){kw})", {"x": ((4, 3), "positive")})  # zeros
              for kw in ("", ", axis=0", ", axis=1, keepdims=True")]
    cases += [Case(f"np.average(x, axis={a}, weights=w)", {"x": (s, "real"), "w": (ws, "positive")})
              for s, a, ws in [((3,), None, (3,)), ((2, 3), 1, (3,)), ((2, 3), 0, (2,)),
                               ((2, 3), None, (2, 3)), ((2, 3, 2), 1, (3,))]]
    cases += [Case(f"np.diff(x{kw})", {"x": (s, "real")})
              for s, kw in [((5,), ""), ((5,), ", n=2"), ((3, 4), ", axis=0"),
                            ((3, 4), ", n=2, axis=1"), ((2, 3, 4), ""),
                            ((5,), ", prepend=1.0"), ((4,), ", append=np.zeros(2)")]]
    cases += [Case(f"np.gradient(x{kw})", {"x": (s, "real")})
              for s, kw in [((5,), ""), ((5,), ", 0.5"), ((6,), ", edge_order=2"),
                            ((3, 4), ", axis=1"), ((4, 3), ", 2.0, axis=0")]]
    ords = [None, 1, 2, 3, 4, 0.5, np.inf, -np.inf, -1]
    cases += [Case(f"np.linalg.norm(x, ord={o!r})".replace("inf", "np.inf"),
                   {"x": ((5,), "nonzero")}) for o in ords]
    mords = [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]
    cases += [Case(f"np.linalg.norm(x, ord={o!r})".replace("inf", "np.inf"),
                   {"x": ((3, 4), "real")}) for o in mords]
    cases += [Case(f"np.linalg.norm(x, ord={o!r}, axis=(1, 2), keepdims=True)".replace(
        "inf", "np.inf"), {"x": ((2, 3, 3), "real")}) for o in ("nuc", 2, 1, np.inf)]
    cases += [Case(f"np.linalg.norm(x, ord={o!r}, axis=0)".replace("inf", "np.inf"),
                   {"x": ((4, 3), "nonzero")}) for o in (1, 3, np.inf)]
    if HAVE_SCIPY:  # NumPy's norm under SciPy's name, check_finite too
        cases += [Case(f"scipy.linalg.norm(x, {o!r}{kw})".replace("inf", "np.inf"),
                       {"x": (shape, "nonzero")})
                  for shape, o, kw in [((5,), None, ""), ((3, 4), None, ", axis=1"),
                                       ((5,), 1, ", axis=0"), ((3, 4), "fro", ""),
                                       ((3, 4), "nuc", ", axis=(0, 1)"),
                                       ((3, 4), np.inf, ", axis=(0, 1), check_finite=False"),
                                       ((3, 4), 2, ", axis=(0, 1), keepdims=True")]]
    return cases


def linalg_cases():
    sq = {"a": ((3, 3), "square")}
    batch = {"a": ((2, 3, 3), "square")}
    spd = {"a": ((3, 3), "spd")}
    bspd = {"a": ((2, 3, 3), "spd")}
    cases = [
        Case("np.linalg.solve(a, b)", {"a": ((3, 3), "square"), "b": ((3,), "real")}),
        Case("np.linalg.solve(a, b)", {"a": ((3, 3), "square"), "b": ((3, 2), "real")}),
        Case("np.linalg.solve(a, b)", {"a": ((2, 3, 3), "square"), "b": ((2, 3, 2), "real")}),
        Case("np.linalg.solve(a, b)", {"a": ((2, 3, 3), "square"), "b": ((3,), "real")},
             min_numpy="2.0.0"),   # a 1-D b is a vector for a stack of matrices since 2.0
        *([Case("scipy.linalg.solve(a, b)", {"a": ((3, 3), "square"), "b": ((3,), "real")}),
           Case("scipy.linalg.solve(a, b, check_finite=False, assume_a='gen')",
                {"a": ((3, 3), "square"), "b": ((3, 2), "real")})] if HAVE_SCIPY else []),
        Case("np.linalg.inv(a)", sq), Case("np.linalg.inv(a)", batch),
        Case("np.linalg.det(a)", sq), Case("np.linalg.det(a)", batch),
        Case("sign, logdet = np.linalg.slogdet(a)\nlogdet * sign", sq),
        Case("np.linalg.slogdet(a)[1]", batch),
        Case("np.linalg.cholesky(a)", spd), Case("np.linalg.cholesky(a)", bspd),
        Case("np.linalg.cholesky(a, upper=True)", spd, min_numpy="2.0.0"),   # upper= is new in 2.0
        Case("w, v = np.linalg.eigh(a)\nw * 1.5 + np.sum(v * v * c[:3, :3], axis=0)", spd),
        Case("w, v = np.linalg.eigh(a)\nnp.sum(v * v * c[:3, :3], axis=-2) + w", bspd),
        Case("np.linalg.eigh(a)[0]", spd), Case("np.linalg.eigvalsh(a)", bspd),
        Case("np.linalg.eigh(a, UPLO='U')[0]", spd),
        Case("np.linalg.svd(a, compute_uv=False)", {"a": ((4, 3), "real")}),
        Case("np.linalg.svd(a, compute_uv=False)", {"a": ((2, 3, 4), "real")}),
        Case("u, s, vh = np.linalg.svd(a, full_matrices=False)\n"
             "np.sum(u * u * c[:4, :3]) + np.sum(s) + np.sum(np.abs(vh[0]))",
             {"a": ((4, 3), "real")}),
        Case("u, s, vh = np.linalg.svd(a, full_matrices=False)\n"
             "np.sum((u @ vh) * c[:3, :4]) + np.sum(s ** 2)", {"a": ((3, 4), "real")}),
        Case("u, s, vh = np.linalg.svd(a)\nnp.sum(s) + np.sum((u @ vh) * c[:3, :3])",
             {"a": ((3, 3), "real")}),
        Case("u, s, vh = np.linalg.svd(a)\nnp.sum(s * s)", {"a": ((4, 3), "real")}),
        Case("np.linalg.pinv(a)", {"a": ((4, 3), "real")}),
        Case("np.linalg.pinv(a)", {"a": ((2, 4), "real")}),
        Case("q, r = np.linalg.qr(a)\nnp.sum(q * c[:4, :3]) + np.sum(r * c[:3, :3])",
             {"a": ((4, 3), "real")}),
        Case("q, r = np.linalg.qr(a)\nnp.sum(r * r) + np.sum(q[..., 0] * 2.0)",
             {"a": ((2, 3, 3), "square")}),
        Case("np.linalg.matrix_power(a, 3)", sq), Case("np.linalg.matrix_power(a, 0)", sq),
        Case("np.trace(a)", sq), Case("np.trace(a, offset=1)", {"a": ((3, 4), "real")}),
        Case("np.trace(a, axis1=1, axis2=2)", {"a": ((2, 3, 3), "real")}),
        Case("a.trace()", sq),
        Case("np.diag(a)", sq), Case("np.diag(a, 1)", {"a": ((3, 4), "real")}),
        Case("np.diag(v)", {"v": ((3,), "real")}), Case("np.diag(v, -1)", {"v": ((3,), "real")}),
        Case("np.diagonal(a)", sq), Case("np.diagonal(a, -1, 1, 2)", {"a": ((2, 3, 3), "real")}),
        Case("a.diagonal(1)", {"a": ((3, 4), "real")}),
        Case("np.tril(a)", sq), Case("np.triu(a, 1)", sq), Case("np.tril(a, -1)", batch),
        Case("np.kron(a, b)", {"a": ((2, 2), "real"), "b": ((3, 2), "real")}),
        Case("np.kron(a, b)", {"a": ((3,), "real"), "b": ((2, 2), "real")}),
        Case("np.inner(a, b)", {"a": ((3,), "real"), "b": ((3,), "real")}),
        Case("np.inner(a, b)", {"a": ((2, 3), "real"), "b": ((4, 3), "real")}),
        Case("np.inner(a, b)", {"a": ((2, 2, 3), "real"), "b": ((3,), "real")}),
        Case("np.cross(a, b)", {"a": ((3,), "real"), "b": ((3,), "real")}),
        Case("np.cross(a, b)", {"a": ((4, 3), "real"), "b": ((3,), "real")}),
        Case("np.tensordot(a, b)", {"a": ((2, 3, 4), "real"), "b": ((3, 4, 2), "real")}),
        Case("np.tensordot(a, b, 1)", {"a": ((2, 3), "real"), "b": ((3, 4), "real")}),
        Case("np.tensordot(a, b, 0)", {"a": ((2,), "real"), "b": ((3,), "real")}),
        Case("np.tensordot(a, b, axes=([0, 2], [2, 0]))",
             {"a": ((2, 3, 4), "real"), "b": ((4, 5, 2), "real")}),
        Case("np.tensordot(a, b, axes=(1, 0))", {"a": ((2, 3), "real"), "b": ((3, 2), "real")}),
        Case("np.outer(a, b)", {"a": ((3,), "real"), "b": ((2, 2), "real")}),
        Case("np.dot(a, b)", {"a": ((2, 3, 4), "real"), "b": ((4, 2), "real")}),
        Case("a @ b", {"a": ((2, 1, 3, 4), "real"), "b": ((3, 4, 2), "real")}),
    ]
    for spec, shapes in [
            ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]),
            ("ii->i", [(3, 3)]), ("ii", [(3, 3)]), ("ij->", [(2, 3)]), ("ij->i", [(2, 3)]),
            ("ij->ji", [(2, 3)]), ("i,i->", [(3,), (3,)]), ("i,j->ij", [(2,), (3,)]),
            ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]), ("...ij,...jk->...ik", [(2, 2, 3), (3, 2)]),
            ("...i,...i", [(2, 3), (3,)]), ("ij,ij->ij", [(2, 3), (2, 3)]),
            ("i,i,i->", [(3,), (3,), (3,)]), ("iij->j", [(2, 2, 3)]), ("ij,kj->ikj", [(2, 3), (4, 3)]),
            ("...,...->...", [(2, 3), (1, 3)]), ("ij...,jk...->ik...", [(2, 3, 2), (3, 1, 2)]),
            ("i->", [(4,)]), ("abc->cab", [(2, 3, 2)])]:
        names = "abc"[:len(shapes)]
        cases.append(Case(f"np.einsum({spec!r}, {', '.join(names)})",
                          {n: (s, "real") for n, s in zip(names, shapes)}))
    return cases


def vecdot_cases():
    return [Case(f"np.vecdot(x, y{kw})", {"x": (s1, "real"), "y": (s2, "real")})
            for s1, s2, kw in [((3,), (3,), ""), ((2, 3), (3,), ""), ((2, 1, 3), (4, 3), ""),
                               ((3, 2), (3, 2), ", axis=0"), ((2, 3), (2, 3), ", axis=-2")]]


def signal_cases():
    """np.convolve / np.correlate in every mode and both length orders; np.interp
    inside, between and outside its knots."""
    lengths = [(5, 3), (3, 5), (4, 4), (6, 2), (2, 5), (1, 3)]
    cases = [Case(f"np.{f}(a, v, mode={mode!r})", {"a": ((m,), "real"), "v": ((n,), "real")})
             for f in ("convolve", "correlate") for mode in ("full", "same", "valid")
             for m, n in lengths]
    cases += [Case("np.convolve(a, v)", {"a": ((), "real"), "v": ((3,), "real")})]
    cases += [Case(f"np.interp(x, np.array([-2.1, -0.7, 0.4, 1.3, 2.6]){sl}, fp)",
                   {"x": (s, "real"), "fp": ((5,), "real")})
              for s in [(), (4,), (2, 3)] for sl in ("", " * 0.5")]
    cases += [Case("np.polyval(p, x)", {"p": ((n,), "real"), "x": (s, "real")})
              for n, s in [(1, (3,)), (3, ()), (4, (2, 3))]]
    cases += [Case("np.polyder(p) * 1.5", {"p": ((n,), "real")}) for n in (1, 2, 4)]
    cases += [Case("rt.interp_slope(x, np.array([-2.1, -0.7, 0.4, 1.3]), fp) * x",
                   {"x": ((3,), "real"), "fp": ((4,), "real")})]
    # singular rules' guard, in the tangent code tc.hvp differentiates
    cases += [Case("rt.where_nonzero(x, np.sin(y) * x) + rt.where_nonzero(np.array([0.0, "
                   "1.0, 2.0]), y)", {"x": ((3,), "real"), "y": ((3,), "real")})]
    return cases


def shape_cases():
    r = "real"
    return [
        Case("np.repeat(x, 2)", {"x": ((2, 3), r)}),
        Case("np.repeat(x, 3, axis=1)", {"x": ((2, 3), r)}),
        Case("np.repeat(x, [1, 0, 2], axis=0)", {"x": ((3, 2), r)}),
        Case("x.repeat(2, axis=-1)", {"x": ((2, 2, 2), r)}),
        Case("np.tile(x, 2)", {"x": ((3,), r)}), Case("np.tile(x, (2, 1))", {"x": ((2, 3), r)}),
        Case("np.tile(x, (2, 1, 2))", {"x": ((2, 3), r)}),
        Case("np.pad(x, 2)", {"x": ((3,), r)}),
        Case("np.pad(x, ((1, 0), (2, 1)), mode='edge')", {"x": ((2, 3), r)}),
        Case("np.pad(x, 2, mode='reflect')", {"x": ((4,), r)}),
        Case("np.pad(x, 1, mode='symmetric')", {"x": ((2, 3), r)}),
        Case("np.pad(x, (2, 3), mode='wrap')", {"x": ((3,), r)}),
        Case("np.pad(x, 1, constant_values=2.0)", {"x": ((2, 2, 2), r)}),
        Case("a, b = np.split(x, 2)\na * b", {"x": ((4,), r)}),
        Case("a, b, c = np.split(x, [1, 3], axis=1)\nnp.sum(a) + np.sum(b * b) + np.sum(c * 3.0)",
             {"x": ((2, 4), r)}),
        Case("a, b = np.array_split(x, 2)\nnp.sum(a * 2.0) + np.sum(b ** 2)", {"x": ((5,), r)}),
        Case("a, b = np.hsplit(x, 2)\na - b * 2.0", {"x": ((3, 4), r)}),
        Case("a, b = np.vsplit(x, 2)\na * b", {"x": ((4, 3), r)}),
        Case("a, b = np.dsplit(x, 2)\na * b", {"x": ((2, 2, 4), r)}),
        Case("parts = np.split(x, 3)\nparts[1] * 2.0", {"x": ((6,), r)}),
        Case("X, Y = np.meshgrid(x, y)\nnp.sin(X * Y) + X ** 2", {"x": ((3,), r), "y": ((2,), r)}),
        Case("X, Y, Z = np.meshgrid(x, y, y * 2.0, indexing='ij')\nX * Y - Z",
             {"x": ((2,), r), "y": ((2, 1), r)}),
        Case("X, Y = np.meshgrid(x, y, sparse=True)\nX * Y + X", {"x": ((3,), r), "y": ((2,), r)}),
        Case("np.append(x, y)", {"x": ((2, 2), r), "y": ((3,), r)}),
        Case("np.append(x, y, axis=0)", {"x": ((2, 3), r), "y": ((1, 3), r)}),
        Case("np.column_stack((x, y))", {"x": ((3,), r), "y": ((3, 2), r)}),
        Case("np.column_stack([x, x * y])", {"x": ((3,), r), "y": ((3,), r)}),
        Case("np.row_stack((x, y))", {"x": ((3,), r), "y": ((2, 3), r)}),
        Case("np.vstack(x)", {"x": ((3, 2), r)}), Case("np.hstack(x)", {"x": ((3, 2), r)}),
        Case("np.vstack(x)", {"x": ((2, 3, 2), r)}), Case("np.stack(x, axis=1)", {"x": ((3, 2), r)}),
        Case("np.concatenate(x)", {"x": ((2, 3, 2), r)}),
        Case("np.column_stack(x)", {"x": ((2, 3), r)}),
        Case("np.atleast_1d(x)", {"x": ((), r)}), Case("np.atleast_2d(x)", {"x": ((3,), r)}),
        Case("np.atleast_3d(x)", {"x": ((2, 3), r)}),
        Case("np.rollaxis(x, 2)", {"x": ((2, 3, 4), r)}),
        Case("np.rollaxis(x, 0, 3)", {"x": ((2, 3, 4), r)}),
        Case("np.rollaxis(x, 1, 0)", {"x": ((2, 3, 4), r)}),
        Case("np.flip(x)", {"x": ((2, 3), r)}), Case("np.flip(x, (0, 2))", {"x": ((2, 3, 2), r)}),
        Case("np.flipud(x)", {"x": ((3, 2), r)}), Case("np.fliplr(x)", {"x": ((3, 2), r)}),
        Case("np.rot90(x)", {"x": ((2, 3), r)}), Case("np.rot90(x, 3)", {"x": ((2, 3), r)}),
        Case("np.rot90(x, 2, axes=(1, 2))", {"x": ((2, 3, 2), r)}),
        Case("np.sort(x)", {"x": ((5,), r)}), Case("np.sort(x, axis=0)", {"x": ((3, 4), r)}),
        Case("np.sort(x, axis=None)", {"x": ((2, 3), r)}),
        Case("np.partition(x, 2)", {"x": ((6,), r)}),
        Case("np.take_along_axis(x, np.argsort(y, axis=1), axis=1)",
             {"x": ((2, 3), r), "y": ((2, 3), r)}),
        Case("np.take_along_axis(x, np.array([[0, 0], [1, 0]]), axis=0)", {"x": ((2, 2), r)}),
        Case("np.take_along_axis(x, np.array([2, 0, 2]), axis=None)", {"x": ((3,), r)}),
        Case("np.take(x, np.array([0, 2, 2, -1]))", {"x": ((2, 3), r)}),
        Case("np.take(x, np.array([[0, 1], [2, 2]]), axis=1)", {"x": ((2, 3), r)}),
        Case("np.take(x, np.array([4, -5]), axis=0, mode='wrap')", {"x": ((3, 2), r)}),
        Case("np.take(x, np.array([7, -1]), mode='clip')", {"x": ((2, 3), r)}),
        Case("x.take(np.array([1, 1]), axis=0)", {"x": ((2, 3), r)}),
        Case("np.bincount(np.array([2, 0, 2, 3]), x)", {"x": ((4,), r)}),
        Case("np.bincount(np.array([1, 1, 0]), weights=x, minlength=5)", {"x": ((3,), r)}),
        Case("np.compress(np.array([True, False, True]), x, axis=1)", {"x": ((2, 3), r)}),
        Case("np.compress(np.array([False, True]), x)", {"x": ((2, 3), r)}),
        Case("np.extract(y > 0, x)", {"x": ((2, 3), r), "y": ((2, 3), r)}),
        Case("np.choose(np.array([[0, 1, 2], [2, 0, 1]]), [x, y, z])",
             {"x": ((2, 3), r), "y": ((3,), r), "z": ((), r)}),
        Case("np.choose(np.array([0, 3, 1]), x, mode='wrap')", {"x": ((3, 3), r)}),
        Case("rt.from_last(rt.along_last(x, (0, 2)) * y, x, (0, 2))",
             {"x": ((2, 3, 2), r), "y": ((3, 4), r)}),
        Case("rt.weights_like(w, x, 1) * x", {"w": ((3,), r), "x": ((2, 3), r)}),
        Case("rt.weights_like(w, x) * x", {"w": ((2, 3), r), "x": ((2, 3), r)}),
        Case("np.partition(x, 1, axis=0)", {"x": ((4, 3), r)}),
        Case("np.select([x > 0.5, x < -0.5], [x * 2.0, y], default=z)",
             {"x": ((2, 3), r), "y": ((3,), r), "z": ((), r)}),
        Case("np.select([x > 0.0], [np.sin(x)])", {"x": ((4,), r)}),
        Case("np.r_[x, y]", {"x": ((3,), r), "y": ((2,), r)}),
        Case("np.r_[x, 1.0, y * 2.0]", {"x": ((3,), r), "y": ((), r)}),
        Case("np.r_[x, y]", {"x": ((2, 3), r), "y": ((1, 3), r)}),
        Case("np.c_[x, y]", {"x": ((3,), r), "y": ((3,), r)}),
        # lists built at run time and dicts written at run-time keys (tests/test_containers.py)
        Case("np.stack([np.sin(v) * y for v in x]) + sum(v * y for v in x)",
             {"x": ((2, 3), r), "y": ((3,), r)}, covers=(append_row,)),
        Case("hs = [x] * len(y)\nhs[1] = x * y\nnp.stack(hs)", {"x": ((3,), r), "y": ((3,), r)},
             covers=(repeat_row, rows_holding)),
        Case("hs = [0] * len(y)\nhs[1] = np.sum(x * y)\nhs[0] = 2.0 * hs[1]\nsum(hs) * x",
             {"x": ((3,), r), "y": ((3,), r)}, covers=(rows_holding,)),
        Case("d = {0: x}\nd[len(x)] = np.sin(x) * y\nd[0] + d[len(x)] * d[0]",
             {"x": ((3,), r), "y": ((), r)}, covers=(dict_set, dict_get)),
        # np.add.at / np.subtract.at: unbuffered, a repeated index adds once per occurrence
        # (tests/test_effect_calls.py); into a copy of x (x is the user's), a view, broadcast
        Case("a = x * 1.0\nnp.add.at(a, [0, 2, 0, 0], y)\na * x",
             {"x": ((3,), r), "y": ((4,), r)}),
        Case("a = x * y\nnp.subtract.at(a[:, 1], np.array([1, 1, 0]), z)\na ** 2",
             {"x": ((2, 3), r), "y": ((3,), r), "z": ((), r)}),
        Case("a = np.zeros((3, 2))\nnp.add.at(a, (np.array([2, 2, 0]), np.array([1, 1, 0])), "
             "x * y)\nnp.subtract.at(a, x > 0.0, y[0])\na * y[1]",
             {"x": ((3,), r), "y": ((3,), r)}),
        Case("rt.scattered_at(x * y, np.zeros(4), [1, 3, 1])", {"x": ((3,), r), "y": ((), r)}),
        # np.multiply.at / np.divide.at: a repeated index multiplies (divides) once per occurrence
        Case("a = x * 1.0\nnp.multiply.at(a, [0, 2, 0, 0], y)\na * x",
             {"x": ((3,), r), "y": ((4,), r)}),
        Case("a = x * y\nnp.multiply.at(a[:, 1], np.array([1, 1, 0]), z)\na ** 2",
             {"x": ((2, 3), r), "y": ((3,), r), "z": ((), r)}),
        Case("a = x * 1.0\nnp.divide.at(a, (np.array([1, 1]), np.array([2, 2])), y * y + 1.0)\n"
             "a * x", {"x": ((2, 3), r), "y": ((2,), r)}),
        Case("rt.multiplied_at(x * 2.0, np.zeros(4), [1, 3, 1], y)",
             {"x": ((4,), r), "y": ((3,), r)}),
        Case("rt.factor_tangent_at(y, x, [1, 3, 1], y * 2.0)", {"x": ((4,), r), "y": ((3,), r)}),
        Case("rt.divided_at(x, np.zeros(4), [1, 3, 1], y * y + 1.0)",
             {"x": ((4,), r), "y": ((3,), r)}),
        Case("rt.divisor_tangent_at(y, x, [1, 3, 1], y * y + 1.0)",
             {"x": ((4,), r), "y": ((3,), r)}),
        # forward mode's tangents of those (what tc.hvp differentiates)
        Case("t = rt.dict_set_tangent_value(x, 0) + rt.dict_set_tangent_value(x * y, 1)\n"
             "rt.dict_get_tangent(rt.dict_set_tangent_dict(t, 0), 1, x) * "
             "rt.dict_get_tangent(t, 0, x)", {"x": ((3,), r), "y": ((3,), r)}),
        Case("np.c_[x, y]", {"x": ((3, 2), r), "y": ((3,), r)}),
        Case("np.linspace(a, b, 5)", {"a": ((), r), "b": ((), r)}),
        Case("np.linspace(a, b, 4, endpoint=False)", {"a": ((), r), "b": ((), r)}),
        Case("np.linspace(a, b, 3)", {"a": ((2,), r), "b": ((2,), r)}),
        Case("np.linspace(a, b, 3, axis=1)", {"a": ((2,), r), "b": ((), r)}),
        Case("np.arange(a, 4.0, 0.5)", {"a": ((), "positive")}),
        Case("np.full((2, 3), a)", {"a": ((), r)}),
        Case("np.full((2, 3), a)", {"a": ((3,), r)}),
        Case("np.full_like(x, a)", {"x": ((2, 2), r), "a": ((), r)}),
        Case("np.stack([[x, y], [y, x]])", {"x": ((2,), r), "y": ((2,), r)}),
        Case("np.array([[x, y], [y * 2.0, x]])", {"x": ((), r), "y": ((), r)}),
        Case("np.array([x, y])", {"x": ((3,), r), "y": ((3,), r)}),
        Case("x.var(axis=0)", {"x": ((3, 2), r)}), Case("x.std()", {"x": ((3, 2), r)}),
        Case("x.cumprod()", {"x": ((2, 3), "positive")}),
        Case("np.real(x) + np.imag(x) + np.conj(x)", {"x": ((3,), r)}),
        Case("x.conj()", {"x": ((3,), r)}),
        Case("sum([x, y, x * y])", {"x": ((2, 3), r), "y": ((3,), r)}),
        Case("sum(x) * y", {"x": ((4, 3), r), "y": ((3,), r)}),
        Case("np.sum([x, y], axis=0) + np.mean([y, x * x])", {"x": ((3,), r), "y": ((3,), r)}),
        Case("np.sin([x, y * 2.0])", {"x": ((2,), r), "y": ((2,), r)}),
        Case("x[[0, 2]] * 2.0 + x[[1, 1]]", {"x": ((4, 3), r)}),
        Case("x[1, 1:, [0, 2]] ** 2", {"x": ((2, 3, 3), r)}),
        Case("z = x * 1.0\nz[[0, 2]] = y * 2.0\nz[1, [0, 2]] = y[:2] ** 2\nz * z",
             {"x": ((3, 3), r), "y": ((3,), r)}),
        Case("np.nan_to_num(np.log(x))", {"x": ((2, 3), "positive")}),
        Case("np.nansum(np.where(x > 1.5, np.nan, x), axis=0)", {"x": ((3, 2), "positive")}),
        Case("np.nanmean(np.where(x > 1.5, np.nan, x))", {"x": ((4,), "positive")}),
        Case("np.nanmean(x, axis=1, keepdims=True)", {"x": ((2, 3), r)}),
        Case("np.trapezoid(y)", {"y": ((5,), r)}),
        Case("np.trapezoid(y, dx=0.3, axis=0)", {"y": ((4, 2), r)}),
        Case("np.trapezoid(y, x=np.array([0.0, 0.5, 2.0]))", {"y": ((2, 3), r)}),
        Case("np.trapz(y, dx=0.5)", {"y": ((2, 3), r)}),
        Case("np.vdot(a, b)", {"a": ((2, 3), r), "b": ((3, 2), r)}),
        Case("np.matrix_transpose(a)", {"a": ((2, 3, 4), r)}),
        # a dtype known only at run time: rt.cast_result, its adjoint rt.through_cast
        Case("np.asarray(x * 2.0, dtype=y.dtype) * y + np.asarray(x, dtype=(y > 9.0).dtype)",
             {"x": ((3,), r), "y": ((3,), r)}, covers=(cast_result, through_cast)),
        Case("np.nan_to_num(x, posinf=5.0)", {"x": ((3,), r)}),
        # NumPy's float types as casts (float32: finite differences see its rounding)
        Case("np.float64(x[0]) * y + np.float64(x * y) + np.longdouble(x) * y",
             {"x": ((3,), r), "y": ((3,), r)}),
        # (a step float32's rounding cannot swamp: with 1e-6 the quotient was off by up
        # to 10%, and the case passed or failed by the random inputs)
        Case("np.float32(x) * y", {"x": ((3,), r), "y": ((3,), r)}, tol=1e-3, eps=1e-3),
        # an in-place operator on an array keeps its dtype and shape (rt.in_place_result)
        Case("z = x * 1.0\nz += y * x\nz *= y\nz", {"x": ((3,), r), "y": ((3,), r)},
             covers=(in_place_result,)),
        # np.fill_diagonal's values repeated to the diagonal's length (rt.diagonal_values)
        Case("A = np.outer(x, x)\nnp.fill_diagonal(A, y * 2.0)\nA", {"x": ((3,), r), "y": ((2,), r)},
             covers=(diagonal_values,)),
        # forward mode's tangent of a write into an array of unknown dtype: the value's
        # into a float array (y), none into an integer one
        Case("rt.stored_tangent(x * y, y) + rt.stored_tangent(x, np.arange(3))",
             {"x": ((3,), r), "y": ((3,), r)}, covers=(stored_tangent,)),
    ]


def fft_cases():
    """np.fft with complex intermediates and a real result: every transform with
    ``n``/``s`` padding and cutting, ``axis``/``axes`` and each ``norm``, and the
    functions of complex values with real results (real, imag, abs, conj)."""
    r = "real"
    k3 = "np.exp(-0.3j * np.arange(4))"
    return [
        Case("np.abs(np.fft.fft(x)) ** 2", {"x": ((5,), r)}),
        Case("np.real(np.fft.ifft(np.fft.fft(x) * (0.3 + 1.1j)))", {"x": ((4,), r)}),
        Case("np.imag(np.fft.fft(x, n=7, norm='ortho'))", {"x": ((5,), r)}),
        Case("np.real(np.fft.fft(x, 3, axis=0, norm='forward'))", {"x": ((5, 2), r)}),
        Case("np.abs(np.fft.ifft(x * (1.0 - 0.4j), norm='ortho'))", {"x": ((2, 4), r)}),
        Case("np.real(np.fft.ifft(x, n=6, axis=0) * np.conj(np.fft.fft(y, axis=0)))",
             {"x": ((4, 3), r), "y": ((6, 3), r)}),
        Case("np.real(np.fft.ifft(np.fft.fft(x, axis=-2), n=3, axis=-2, norm='forward'))",
             {"x": ((2, 4, 2), r)}),
        Case("np.abs(np.fft.rfft(x)) ** 2", {"x": ((6,), r)}),
        Case("np.abs(np.fft.rfft(x, n=4, norm='forward') + 1.0)", {"x": ((7,), r)}),
        Case(f"np.fft.irfft(np.fft.rfft(x) * {k3})", {"x": ((6,), r)}),
        Case(f"np.fft.irfft(np.fft.rfft(x) * {k3})", {"x": ((7,), r)}),
        Case("np.fft.irfft(np.fft.rfft(x, n=8, axis=0, norm='ortho') * 1.5, n=7, axis=0, "
             "norm='ortho')", {"x": ((5, 2), r)}),
        Case("np.fft.irfft(np.fft.fft(x) * (0.5 + 0.2j))", {"x": ((5,), r)}),
        Case("np.fft.irfft(np.fft.fft(x)[:3] + 1j * np.fft.fft(y)[:3], n=5, norm='forward')",
             {"x": ((4,), r), "y": ((4,), r)}),
        Case("np.abs(np.fft.fft2(x)) ** 2", {"x": ((3, 4), r)}),
        Case("np.real(np.fft.ifft2(np.fft.fft2(x, s=(4, 5)) * (1.0 + 2.0j), norm='ortho'))",
             {"x": ((3, 4), r)}),
        Case("np.real(np.fft.fftn(x, axes=(0, 2), norm='ortho')) + np.imag(np.fft.ifftn(x))",
             {"x": ((2, 3, 2), r)}),
        Case("np.abs(np.fft.fftn(x, s=(2, 5), axes=(1, 0)))", {"x": ((3, 4), r)}),
        Case("np.real(np.fft.ifftn(np.fft.fftn(x) * np.conj(np.fft.fftn(y)), s=(2, 2), "
             "axes=(0, 1)))",
             {"x": ((3, 3), r), "y": ((3, 3), r)}),
        Case("np.fft.fftshift(x)", {"x": ((5,), r)}),
        Case("np.fft.ifftshift(x, axes=1)", {"x": ((3, 4), r)}),
        Case("np.imag(np.fft.ifftshift(np.fft.fftshift(x * (1.0 + 1.0j), axes=(0,))))",
             {"x": ((3, 4), r)}),
        Case("np.fft.irfft2(np.fft.rfft2(x) * (1.0 + 0.1j))", {"x": ((4, 6), r)}),
        Case("np.abs(np.fft.rfftn(x, axes=(0, 2)))", {"x": ((3, 2, 4), r)}),
        Case("np.abs(np.fft.rfft2(x, s=(2, 5), norm='ortho'))", {"x": ((3, 4), r)}),
        Case("np.fft.irfftn(np.fft.fftn(x)[:, :3] * 0.5j + 1.0, s=(4, 5), axes=(0, 1))",
             {"x": ((4, 5), r)}),
        Case("np.fft.irfftn(np.fft.rfftn(x) * (2.0 - 1.0j), s=(3, 3, 4), axes=(0, 1, 2), "
             "norm='forward')",
             {"x": ((2, 3, 4), r)}),
        Case("np.real(x * (1.0 + 2.0j)) * np.imag(np.conj(x * (0.5 - 1.0j) + y))",
             {"x": ((3,), r), "y": ((3,), r)}),
        Case("abs(x * (1.0 + 1.0j) + y) + np.abs(np.conj(y - 2.0j * x))",
             {"x": ((3,), "nonzero"), "y": ((3,), "nonzero")}),
        Case("np.real(np.abs(np.fft.fft(x)) * np.exp(1j * y))",
             {"x": ((4,), r), "y": ((4,), r)}),
        Case("np.real(np.fft.ifft(np.fft.fft(x) * np.exp(-0.1 * np.fft.fftfreq(4) ** 2)))",
             {"x": ((3, 4), r)}),
    ]


def math_cases():
    """Python's math module on floats (the rows of numpy_rules.MATH_TWINS and math.log)."""
    cases = [Case(f"math.{fn.__name__}(x)", {"x": ((), registry.lookup(fn).domain)}, covers=(fn,))
             for fn, twin in numpy_rules.MATH_TWINS if len(registry.lookup(fn).params) == 1]
    cases += [Case(f"math.{fn.__name__}(x, y)", {"x": ((), "positive"), "y": ((), "nonzero")},
                   covers=(fn,))
              for fn, twin in numpy_rules.MATH_TWINS if len(registry.lookup(fn).params) == 2]
    cases += [Case(f"{f}(x, y) * {f}(2.0 * y, x)", {"x": ((), "real"), "y": ((), "real")},
                   covers=(getattr(builtins, f),)) for f in ("max", "min")]
    cases += [Case("pow(x, y) + pow(y, 3) * pow(x, 2.5)", {"x": ((), "positive"), "y": ((), "real")},
                   covers=(builtins.pow,))]
    cases += [Case("math.erf(x) + math.erfc(2.0 * x)", {"x": ((), "real")},
                   covers=(math.erf, math.erfc))]
    # math.fsum and math.prod of a list (numbers, arrays that broadcast) and of an
    # array's rows
    cases += [Case("math.fsum([x, x * y, 3.0])", {"x": ((), "real"), "y": ((), "real")}),
              Case("math.fsum(x)", {"x": ((4,), "real")}),
              Case("math.prod([x, x * y, 3.0])", {"x": ((), "real"), "y": ((), "real")}),
              Case("math.prod([x, y, x * 0.0 + 0.5])", {"x": ((3,), "real"), "y": ((2, 1), "real")}),
              Case("math.prod(x)", {"x": ((4,), "real")}),
              Case("math.prod(x)", {"x": ((3, 2), "real")}),
              Case("math.prod(x * (x > 0.0))", {"x": ((4,), "real")})]
    # sorted() of values known when compiling: each item read at its sorted position
    cases += [Case("o = sorted([x, y * 2.0, 0.5])\no[0] * o[1] + o[2] ** 2",
                   {"x": ((), "real"), "y": ((), "real")}, covers=(item_at,)),
              Case("o = sorted((x, y, x * y), reverse=True)\no[0] + 2.0 * o[1] * o[2]",
                   {"x": ((), "real"), "y": ((), "real")}, covers=(item_at,))]
    return cases + [Case("math.log(x) * math.exp(-x * x)", {"x": ((), "positive")})]


def in_this_numpy(case):
    """False for a case that calls a function the running NumPy lacks (numpy_versions)."""
    if case.min_numpy and np.lib.NumpyVersion(np.__version__) < case.min_numpy:
        return False
    return not any(f"np.{name}(" in case.body and numpy_function(name) is None
                   for name in VERSIONS)


def draw_cases():
    """Each draw whose parameters are differentiated (numpy_rules.DRAW_RULES), from a
    generator made in the body and from NumPy's global state seeded there: the
    same numbers on every call, so finite differences see the same draws."""
    parameters = {"uniform": "x, x + y", "exponential": "y", "lognormal": "x * 0.3, y"}
    cases = []
    for family in numpy_rules.DRAW_RULES:
        given = parameters.get(family, "x, y")
        args = {"x": ((3,), "real"), "y": ((), "positive")}
        if family == "exponential":
            args = {"y": ((3,), "positive")}
        cases += [Case(f"rng = np.random.default_rng(3)\nrng.{family}({given}, size=(2, 3))",
                       args),
                  Case(f"np.random.seed(3)\nnp.random.{family}({given})", args)]
    # indices drawn with probabilities `p`: locally constant in `p` (a particle
    # filter's resampling), the gradient flows through what they index
    args = {"x": ((3,), "real"), "y": ((3,), "positive")}
    cases += [Case("rng = np.random.default_rng(3)\n"
                   "x[rng.choice(3, size=5, p=y / np.sum(y))] * y[0]", args),
              Case("np.random.seed(3)\nx[np.random.choice(3, 5, p=y / np.sum(y))] * y[0]", args)]
    # the standard library's draws, of floats
    cases += [Case(f"random.seed(3)\n{call}", {"x": ((), "real"), "y": ((), "positive")})
              for call in ("random.gauss(x, y)", "random.normalvariate(x, y)",
                           "random.uniform(x, x + y)", "random.expovariate(y) + x",
                           "random.lognormvariate(x * 0.3, y)")]
    return cases


def all_cases():
    cases = (unary_cases() + binary_cases() + reduction_cases() + linalg_cases()
             + shape_cases() + fft_cases() + math_cases() + vecdot_cases() + signal_cases()
             + draw_cases())
    return [case for case in cases if in_this_numpy(case)]


def draw(rng, shape, kind):
    """An argument of ``shape`` drawn as ``kind`` says (a float for shape ``()``)."""
    if kind == "spd":
        m = rng.standard_normal(shape)
        x = m @ np.swapaxes(m, -1, -2) + shape[-1] * np.eye(shape[-1])
    elif kind == "square":
        x = rng.standard_normal(shape) + 3.0 * np.eye(shape[-1])
    elif kind == "ties":                       # values in pairs: max/min have 2-way ties
        half = rng.permutation(np.arange(int(np.prod(shape))) // 2).astype(float)
        x = np.reshape(half * 0.37 - 1.0, shape)
    else:
        low, high, sign = registry.DOMAINS[kind]
        x = rng.uniform(low, high, size=shape)
        if sign == "both":
            x = x * rng.choice([-1.0, 1.0], size=shape)
    return float(x) if shape == () else x
