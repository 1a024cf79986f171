"""Shared test helper: compare a gradient with central finite differences.

    from gradcheck import check_grad, numeric_grad
    check_grad(f, (x, W), wrt=(0, 1))          # compiles tc.grad(f, wrt) and checks it

- ``numeric_grad(f, args, wrt, seed=None)``: central differences in float64 of
  ``sum(seed * f(*args))`` (``seed`` defaults to ones) for each ``wrt`` position;
  floats and arrays are both fine.  Returns a tuple in ``wrt`` order.
- ``check_grad(f, args, wrt=(0,), seed=None, df=None, rtol=1e-6, atol=1e-8)``:
  calls the gradient (``df``, or ``tc.grad(f, wrt)``), checks that no argument
  was mutated, and compares each gradient (shape and values) with
  ``numeric_grad``.  Returns the gradients as a tuple in ``wrt`` order.
"""

import copy

import numpy as np

import tangent_ckpt as tc
from autograd_oracle import autograd_gradient

EPS = 1e-6


def _as64(value):
    if isinstance(value, np.ndarray) and np.issubdtype(value.dtype, np.floating):
        return value.astype(np.float64)
    if isinstance(value, (float, np.floating)):
        return float(value)
    return value


def _objective(f, args, seed):
    out = np.asarray(f(*args), dtype=np.float64)
    weight = np.ones_like(out) if seed is None else np.asarray(seed, dtype=np.float64)
    return float(np.sum(weight * out))


def numeric_grad(f, args, wrt=(0,), seed=None, eps=EPS):
    """Central finite differences of ``sum(seed * f(*args))`` in float64."""
    args = [_as64(copy.deepcopy(a)) for a in args]
    grads = []
    for k in wrt:
        x = args[k]
        if isinstance(x, float):
            hi = _objective(f, args[:k] + [x + eps] + args[k + 1:], seed)
            lo = _objective(f, args[:k] + [x - eps] + args[k + 1:], seed)
            grads.append((hi - lo) / (2 * eps))
            continue
        g = np.zeros_like(x)
        for i in np.ndindex(x.shape):
            xp, xm = x.copy(), x.copy()
            xp[i] += eps
            xm[i] -= eps
            g[i] = (_objective(f, args[:k] + [xp] + args[k + 1:], seed)
                    - _objective(f, args[:k] + [xm] + args[k + 1:], seed)) / (2 * eps)
        grads.append(g)
    return tuple(grads)


def assert_unchanged(before, after):
    """The gradient must never mutate the user's arguments."""
    for k, (b, a) in enumerate(zip(before, after)):
        if isinstance(b, np.ndarray):
            assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True), \
                f"argument {k} was mutated"
        else:
            assert a == b or (a != a and b != b), f"argument {k} was mutated"


def check_grad(f, args, wrt=(0,), seed=None, df=None, rtol=1e-6, atol=1e-8):
    """Check ``tc.grad(f, wrt)`` (or ``df``) against central differences."""
    wrt = tuple(wrt)
    df = df or tc.grad(f, wrt=wrt)
    before = copy.deepcopy(list(args))
    extra = () if seed is None else (seed,)
    got = df(*args, *extra)
    assert_unchanged(before, list(args))
    got = (got,) if len(wrt) == 1 else tuple(got)
    assert len(got) == len(wrt)
    expected = numeric_grad(f, before, wrt, seed)
    for k, g, e in zip(wrt, got, expected):
        assert np.shape(g) == np.shape(e), \
            f"gradient for argument {k} has shape {np.shape(g)}, expected {np.shape(e)}"
        np.testing.assert_allclose(np.asarray(g, dtype=np.float64), e, rtol=rtol, atol=atol,
                                   err_msg=f"gradient for argument {k}\n{df.source}")
    return got


def check_grad_and_autograd(f, args, wrt=(0,), **options):
    """``check_grad`` of ``tc.grad(f, wrt, **options)``, then autograd's gradient to
    1e-10 where autograd runs ``f`` (tests/autograd_oracle.py).  Returns the
    gradient function (to look at its source)."""
    df = tc.grad(f, wrt=tuple(wrt), **options)
    got = check_grad(f, args, wrt=wrt, df=df)
    oracle = autograd_gradient(f, args, tuple(wrt))
    if oracle is not None:
        for g, o in zip(got, oracle):
            np.testing.assert_allclose(g, o, rtol=1e-10, atol=1e-12)
    return df
