"""Forward mode over NumPy coverage: every case of coverage_cases.py compiled by
``tc.jvp`` against central finite differences in random directions; a case
using a rule without a tangent is refused with an error naming the rule."""

import numpy as np
import pytest

import tangent_ckpt as tc
from tangent_ckpt.adjoints import registry
from coverage_cases import all_cases
from test_grad_coverage import arguments, straight

EPS = 1e-6
CASES = all_cases()

#: rules whose tangent is not written yet: forward mode refuses them (tested below)
WITHOUT_TANGENT = {r.fn for r in registry.all_rules() if not r.has_tangent()}


def _refused_for_its_arguments(case):
    """np.linalg.norm with an ord but no axis (a vector or a matrix norm by x.ndim,
    which the compiler does not know) and np.linalg.svd with full_matrices (the
    vectors past min(m, n) have no unique tangent): forward mode refuses them."""
    norm = "np.linalg.norm(x, ord=" in case.body and "axis=" not in case.body and \
        "ord=None" not in case.body and "ord='fro'" not in case.body
    return norm or "np.linalg.svd(a)" in case.body


def _uses_missing(case):
    methods = [m for m, fn in registry.methods().items() if fn in WITHOUT_TANGENT]
    return _refused_for_its_arguments(case) or any(r.fn in WITHOUT_TANGENT and (f"{r.name}(" in case.body or r.fn in case.covers)
               for r in registry.all_rules()) or any(f".{m}(" in case.body for m in methods)


@pytest.mark.parametrize("k", range(len(CASES)), ids=[c.id for c in CASES])
def test_tangent_matches_finite_differences(k):
    case = CASES[k]
    f = straight(case, k)
    args = arguments(case, k)
    wrt = tuple(range(len(args)))
    jvp = tc.jvp(f, wrt=wrt)
    if _uses_missing(case):
        with pytest.raises(tc.UnsupportedFunctionError, match="no tangent rule"):
            jvp.compile()
        return
    rng = np.random.default_rng(k)
    before = [np.copy(a) for a in args]
    for _ in range(2):
        dirs = [rng.standard_normal(np.shape(a)) if np.ndim(a) else float(rng.standard_normal())
                for a in args]
        value, tangent = jvp(*args, tuple(dirs))  # wrt is a tuple: so are the tangents

        def moved(t):
            return np.asarray(f(*[a + t * d for a, d in zip(args, dirs)]), dtype=float)
        step = case.eps or EPS
        numeric = (moved(step) - moved(-step)) / (2 * step)
        np.testing.assert_allclose(np.asarray(value, dtype=float), moved(0.0), rtol=1e-12,
                                   atol=1e-12)
        assert np.shape(tangent) == np.shape(numeric)
        np.testing.assert_allclose(tangent, numeric, rtol=case.tol,
                                   atol=case.tol * (1 + np.max(np.abs(numeric), initial=0)))
    for a, b in zip(args, before):
        np.testing.assert_array_equal(a, b)
