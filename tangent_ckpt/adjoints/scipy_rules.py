"""Adjoint rules of ``scipy.special``, registered only where SciPy is installed
(``pip install scipy``, or ``pip install -e .[scipy]`` in the checkout); the core never needs SciPy."""

from scipy import special

from tangent_ckpt.adjoints.numpy_rules import NOTES, UNARY, BINARY, section
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

NOTES.update({
    special.logsumexp: "axis and keepdims; `b=` and `return_sign=` are refused",
    special.xlogy: "d/dx1 = log(x2) also at x1 = 0",
    special.polygamma: "of `x`; the order `n` is an integer constant",
    special.softmax: "needs `ans`; axis an int, a tuple or None (all entries)",
    special.log_softmax: "needs `ans`; axis an int, a tuple or None (all entries)",
})
