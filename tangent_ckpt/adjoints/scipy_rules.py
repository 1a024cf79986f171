"""Adjoint rules of ``scipy.special``, ``scipy.signal.convolve2d``,
``scipy.spatial.distance_matrix`` and ``scipy.linalg.solve`` / ``norm``, registered only where SciPy is installed
(``pip install scipy``, or ``pip install -e .[scipy]`` in the checkout); the core never needs SciPy."""

import numpy as np
from scipy import linalg, signal, spatial, special

from tangent_ckpt.adjoints.numpy_rules import (
    BINARY, NOTES, SOLVE_TANGENT_A, UNARY, norm_tangent, section,
)
from tangent_ckpt.adjoints.registry import defadjoint

with section("scipy.special (where SciPy is installed)"):
    defadjoint(special.erf, UNARY, name="scipy.special.erf",
               x="g * 1.1283791670955126 * np.exp(-x * x)",
               tangent="t * 1.1283791670955126 * np.exp(-x * x)")          # 2 / sqrt(pi)
    defadjoint(special.erfc, UNARY, name="scipy.special.erfc",
               x="-g * 1.1283791670955126 * np.exp(-x * x)",
               tangent="-t * 1.1283791670955126 * np.exp(-x * x)")
    defadjoint(special.gammaln, UNARY, name="scipy.special.gammaln", domain="positive",
               x="gammaln_adjoint(g, x)", tangent="t * digamma(x)")
    defadjoint(special.digamma, UNARY, name="scipy.special.digamma", domain="positive",
               x="digamma_adjoint(g, x)", tangent="t * polygamma(1, x)")
    defadjoint(special.polygamma, "n, x", name="scipy.special.polygamma", domain="positive",
               x="g * polygamma(n + 1, x)", tangent="t * polygamma(n + 1, x)")
    defadjoint(special.expit, UNARY, name="scipy.special.expit",
               x="g * ans * (1.0 - ans)", tangent="t * ans * (1.0 - ans)")
    defadjoint(special.xlogy, BINARY, name="scipy.special.xlogy", domain="positive",
               x1="unbroadcast(g * np.log(x2), x1)",
               x2="unbroadcast(g * x1 / x2, x2)",
               tangent={"x1": "t * np.log(x2)", "x2": "t * x1 / x2"})
    defadjoint(special.logsumexp, "a, axis=None, b=None, keepdims=False, return_sign=False",
               name="scipy.special.logsumexp",
               only={"b": (None,), "return_sign": (False,)},
               a="logsumexp_adjoint(g, a, ans, axis, keepdims)",
               tangent="np.reshape(np.sum(along_last(t, axis) * np.exp(along_last(a, axis) - "
                       "np.reshape(ans, np.shape(along_last(a, axis)[..., :1]))), axis=-1), "
                       "np.shape(ans))")
    defadjoint(special.softmax, "x, axis=None", name="scipy.special.softmax",
               x="softmax_adjoint(g, ans, axis)",
               tangent="ans * (t - np.sum(t * ans, axis=axis, keepdims=True))")
    defadjoint(special.log_softmax, "x, axis=None", name="scipy.special.log_softmax",
               x="log_softmax_adjoint(g, ans, axis)",
               tangent="t - np.sum(np.exp(ans) * t, axis=axis, keepdims=True)")


def distance_tangent(points):
    """``distance_matrix``'s tangent along the tangent of ``x`` or ``y``
    (``points``), for the call's ``p``: the norm's along the differences."""
    moved = "t[:, None, :]" if points == "x" else "-t[None, :, :]"
    difference = "(x[:, None, :] - y[None, :, :])"
    safe = "np.where(ans == 0.0, 1.0, ans)"

    def choose(p=2, **_):
        if p == 2:
            return f"np.sum({difference} * {moved}, axis=-1) / {safe}"
        if p == np.inf:
            hit = f"(np.abs({difference}) == ans[..., None])"
            return (f"np.sum(np.where({hit}, np.sign({difference}) * {moved}, 0.0), axis=-1) / "
                    f"np.sum({hit}, axis=-1)")
        if isinstance(p, (int, float)) and p >= 1:
            return (f"np.sum(np.sign({difference}) * (np.abs({difference}) / {safe}[..., None]) "
                    f"** (p - 1.0) * {moved}, axis=-1)")
        return None
    return choose


with section("scipy.signal and scipy.spatial (where SciPy is installed)"):
    defadjoint(signal.convolve2d, "in1, in2, mode='full', boundary='fill', fillvalue=0",
               name="scipy.signal.convolve2d", view=False,
               in1="convolve2d_in1_adjoint(g, in1, in2, mode, boundary)",
               in2="convolve2d_in2_adjoint(g, in1, in2, mode, boundary, fillvalue)",
               fillvalue="convolve2d_fillvalue_adjoint(g, in1, in2, mode, boundary)",
               tangent={"in1": "convolve2d(t, in2, mode, boundary, 0)",
                        "in2": "convolve2d(in1, t, mode, boundary, fillvalue)",
                        "fillvalue": "t * convolve2d(np.zeros_like(in1), in2, mode, boundary, 1)"})
    defadjoint(spatial.distance_matrix, "x, y, p=2, threshold=1000000",
               name="scipy.spatial.distance_matrix", view=False,
               x="distance_matrix_x_adjoint(g, x, y, ans, p)",
               y="distance_matrix_y_adjoint(g, x, y, ans, p)",
               tangent={"x": distance_tangent("x"), "y": distance_tangent("y")})

with section("scipy.linalg (where SciPy is installed)"):
    # for a general matrix (assume_a None or 'gen') SciPy's solve is NumPy's: b is a
    # vector only where it is 1-D, a stack of matrices broadcasts
    defadjoint(linalg.solve, "a, b, lower=False, overwrite_a=False, overwrite_b=False, "
               "check_finite=True, assume_a=None, transposed=False",
               name="scipy.linalg.solve", view=False,
               only={"overwrite_a": (False,), "overwrite_b": (False,),
                     "assume_a": (None, "gen", "general"), "transposed": (False,)},
               a="solve_adjoint_a(g, a, b, ans)", b="solve_adjoint_b(g, a, b)",
               tangent={"a": SOLVE_TANGENT_A, "b": "np.linalg.solve(a, t)"})
    # NumPy's norm plus check_finite (its rule names the array x: pass it by position)
    defadjoint(linalg.norm, "x, /, ord=None, axis=None, keepdims=False, check_finite=True",
               name="scipy.linalg.norm", view=False, reduces=True, domain="nonzero",
               x="norm_adjoint(g, x, ans, ord, axis, keepdims)", tangent=norm_tangent)

NOTES.update({
    linalg.solve: "a general matrix (`assume_a` None or 'gen'); `overwrite_a`, "
                  "`overwrite_b`, `transposed` and the other `assume_a` are refused",
    linalg.norm: "as np.linalg.norm: every ord of vectors and matrices; 0 at the zero vector",
    signal.convolve2d: "every mode ('full', 'same', 'valid') and boundary ('fill' with any "
                       "`fillvalue`, 'wrap', 'symm'); real inputs",
    spatial.distance_matrix: "any `p` >= 1 and inf; a distance of 0 passes 0 (a subgradient; "
                             "`distance_matrix(x, x)`'s diagonal is exactly 0)",
    special.logsumexp: "axis and keepdims; `b=` and `return_sign=` are refused",
    special.xlogy: "d/dx1 = log(x2) also at x1 = 0",
    special.polygamma: "of `x`; the order `n` is an integer constant",
    special.softmax: "needs `ans`; axis an int, a tuple or None (all entries)",
    special.log_softmax: "needs `ans`; axis an int, a tuple or None (all entries)",
})
