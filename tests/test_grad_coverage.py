"""NumPy coverage: every case of coverage_cases.py, compiled by ``tc.grad`` as a
user's function, against central finite differences in random directions
(with a random output weight), and the same calls inside a checkpointed loop
against the plain gradient and finite differences."""

import linecache
import math
import random

import numpy as np
import pytest

import tangent_ckpt as tc
from tangent_ckpt.adjoints import registry
from coverage_cases import all_cases, draw
from test_grad_numpy import BINARY, UNARY

EPS = 1e-6
CASES = all_cases()
CONSTANTS = {"c": np.random.default_rng(7).standard_normal((4, 4)), "rt": tc.runtime}


def compile_source(name, source):
    """A function from ``source`` that ``inspect`` can read back (as a user's would be)."""
    filename = f"<coverage {name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"np": np, "math": math, "random": random, **CONSTANTS}
    try:
        import scipy.special  # noqa: F401
        namespace["scipy"] = scipy
    except ImportError:
        pass
    exec(compile(source, filename, "exec"), namespace)
    return namespace[name]


def straight(case, k):
    params = ", ".join(case.args)
    *lines, last = case.body.splitlines()
    body = "".join(f"    {line}\n" for line in lines)
    return compile_source(f"case{k}", f"def case{k}({params}):\n{body}    return {last}\n")


def looped(case, k, out_shape):
    """The case's calls in the body of a loop whose state they update."""
    params = ", ".join(case.args)
    *lines, last = case.body.splitlines()
    body = "".join(f"        {line}\n" for line in lines)
    source = (f"def loop{k}({params}, n):\n"
              f"    s = np.zeros({tuple(out_shape)!r})\n"
              f"    for t in range(n):\n{body}"
              f"        s = 0.5 * s + np.sin(s) * 0.1 + {last}\n"
              f"    return s\n")
    return compile_source(f"loop{k}", source)


def arguments(case, seed):
    rng = np.random.default_rng(seed)
    return [draw(rng, shape, kind) for shape, kind in case.args.values()]


def directional_check(f, df, args, wrt, rng, extra=(), tol=1e-5, eps=None):
    """``<grad, d>`` against ``(phi(eps) - phi(-eps)) / 2 eps`` for random ``d``,
    ``phi(t) = sum(seed * f(args + t d))``."""
    out = np.asarray(f(*args, *extra), dtype=float)
    seed = rng.standard_normal(out.shape)
    grads = df(*args, *extra, seed if out.shape else float(seed))
    for _ in range(2):
        dirs = [rng.standard_normal(np.shape(args[k])) for k in wrt]

        def phi(t):
            moved = list(args)
            for k, d in zip(wrt, dirs):
                moved[k] = moved[k] + t * d if np.ndim(d) else moved[k] + t * float(d)
            return float(np.sum(seed * np.asarray(f(*moved, *extra), dtype=float)))

        step = eps or EPS
        numeric = (phi(step) - phi(-step)) / (2 * step)
        analytic = sum(float(np.sum(np.asarray(g) * d)) for g, d in zip(grads, dirs))
        assert abs(analytic - numeric) <= tol * (1 + abs(numeric)), (analytic, numeric)
        for k, g in zip(wrt, grads):
            assert np.shape(g) == np.shape(args[k])
    return grads


@pytest.mark.parametrize("k", range(len(CASES)), ids=[c.id for c in CASES])
def test_gradient_matches_finite_differences(k):
    case = CASES[k]
    f = straight(case, k)
    args = arguments(case, k)
    wrt = tuple(range(len(args)))
    before = [np.copy(a) for a in args]
    directional_check(f, tc.grad(f, wrt=wrt), args, wrt, np.random.default_rng(k), tol=case.tol,
                      eps=case.eps)
    for a, b in zip(args, before):
        np.testing.assert_array_equal(a, b)           # never mutates the user's arrays


LOOP_CASES = list(range(0, len(CASES), 3))


@pytest.mark.parametrize("k", LOOP_CASES, ids=[CASES[k].id for k in LOOP_CASES])
def test_checkpointed_loop_matches_plain_gradient(k):
    case = CASES[k]
    args = arguments(case, k)
    out_shape = np.shape(straight(case, k)(*args))
    f = looped(case, k, out_shape)
    wrt = tuple(range(len(args)))
    n = 5
    plain = directional_check(f, tc.grad(f, wrt=wrt), args, wrt, np.random.default_rng(k),
                              extra=(n,), tol=case.tol, eps=case.eps)
    ckpt = directional_check(f, tc.grad_with_checkpointing(f, wrt=wrt, snapshots=2), args,
                             wrt, np.random.default_rng(k), extra=(n,), tol=case.tol,
                             eps=case.eps)
    for a, b in zip(plain, ckpt):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_there_are_at_least_600_gradient_cases():
    assert len(CASES) >= 600


def test_every_differentiable_numpy_rule_has_a_case():
    """Each rule is exercised here or by a program of test_grad_numpy."""
    used = " ".join(c.body for c in CASES)
    covered = {id(fn) for c in CASES for fn in c.covers} | set(map(id, [*BINARY, *UNARY]))
    methods = {m for m in registry.methods() if f".{m}(" in used}
    missing = [r.name for r in registry.all_rules()
               if not r.constant and r.vjp is None and id(r.fn) not in covered
               and f"{r.name}(" not in used and r.name + "[" not in used
               and not any(registry.methods()[m] is r.fn for m in methods)]
    assert not missing, missing


DEFAULT_SEED_CASES = list(range(0, len(CASES), 4))


@pytest.mark.parametrize("k", DEFAULT_SEED_CASES)
def test_default_output_adjoint_gives_the_gradient_of_the_sum(k):
    """No output adjoint given, an array output: the gradient of its sum, as with
    an adjoint of ones (before rt.output_adjoint, 596 of these cases crashed or
    were silently wrong: np.convolve, a scalar added to a vector, np.stack ...)."""
    case = CASES[k]
    f = straight(case, k)
    args = arguments(case, k)
    out = np.asarray(f(*args))
    if not np.issubdtype(out.dtype, np.floating):
        return
    wrt = tuple(range(len(args)))
    df = tc.grad(f, wrt=wrt)
    default, ones = df(*args), df(*args, np.ones(out.shape))
    for a, b in zip(default, ones):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
